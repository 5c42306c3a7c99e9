"""Gated fixes for C++/CUDA/HIP: the NVIDIA build keeps its exact lines.

Shared files get whole-line blocks::

    #if defined(__HIP_PLATFORM_AMD__)
    <AMD lines>
    #else
    <original lines, unchanged>
    #endif

HIP-only files (and lines already inside such an AMD branch) get the edits directly.
A fix next to an existing gate block extends it instead of stacking a second one; a fix
also re-emits its neighbour lines unchanged so that two hazards on adjacent lines overlap
in one round and merge into one block on the next.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from rocmlint.cpp.markers import WAVE64_MACRO
from rocmlint.model import Applicability, Edit, Fix, Span, apply_edits

if TYPE_CHECKING:
    from rocmlint.cpp.context import CppContext


def build_fix(
    ctx: "CppContext",
    node,
    edits: Sequence[Edit],
    title: str,
    applicability: Applicability,
    *,
    uses_uint64: bool = False,
    wave_variants: tuple[Sequence[Edit], Sequence[Edit]] | None = None,
) -> Fix | None:
    """A fix applying ``edits`` (or, with ``wave_variants``, a ``#if defined(__GFX9__)``
    choice between two edit sets) for the AMD build only. None when the lines cannot be
    gated (inside a multi-line macro). ``__GFX9__`` is defined in the device pass only: a
    choice by it where host code reads the value is display-only."""
    if wave_variants is not None and applicability is not Applicability.DISPLAY_ONLY:
        from rocmlint.cpp.constant_uses import reads_on_host

        if reads_on_host(ctx, node):
            applicability = Applicability.DISPLAY_ONLY
    direct = not ctx.gated or ctx.in_gate_amd_branch(node.start_byte)
    if direct and wave_variants is None:
        first = last = ctx.line_of(node.start_byte)
    else:
        lines = ctx.gate_range(node)
        if lines is None:
            return None
        first, last = lines
    all_edits = list(edits) + [e for variant in (wave_variants or ()) for e in variant]
    for edit in all_edits:
        first = min(first, ctx.line_of(edit.span.start))
        last = max(last, ctx.line_of(max(edit.span.end - 1, edit.span.start)))
    if _in_macro_body(ctx, first, last):
        return None
    start, end = _region(ctx, first, last)
    amd = _amd_text(ctx, start, end, edits, wave_variants)
    direct = direct and all(ctx.pp.in_gate_amd_branch(line) for line in range(first, last + 1)) if ctx.gated else direct
    fix_edits: list[Edit] = []
    include_line = None
    if uses_uint64 and not ctx.has_uint64():
        # In a shared file the include is NVIDIA-invisible too, even for edits inside an AMD branch.
        include_edit, include_line = _cstdint_include(ctx, gated=ctx.gated)
        fix_edits.append(include_edit)
    if direct:
        if wave_variants is None:
            fix_edits.extend(edits)
        else:
            fix_edits.append(Edit(Span(start, end), amd))
        return _checked(ctx, fix_edits, title, applicability)

    fix_edits.append(_gated_block(ctx, first, last, amd, include_line))
    return _checked(ctx, fix_edits, title, applicability)


def build_uses_fix(ctx: "CppContext", uses: Sequence[tuple[Any, Sequence[Edit]]], extra: Sequence[Edit],
                   title: str, applicability: Applicability, *, uses_uint64: bool = False) -> Fix | None:
    """One fix applying ``edits`` at each of several places (``(node, edits)`` pairs) plus
    ``extra`` edits taken as they are: places whose gated statements touch or neighbour
    each other share one block. None when a place cannot be gated."""
    fix_edits = list(extra)
    if uses_uint64 and not ctx.has_uint64():
        fix_edits.append(_cstdint_include(ctx, gated=ctx.gated)[0])
    ranges: list[tuple[int, int, list[Edit]]] = []
    for node, edits in uses:
        if not ctx.gated or ctx.in_gate_amd_branch(node.start_byte):
            fix_edits.extend(edits)
            continue
        lines = ctx.gate_range(node)
        if lines is None:
            return None
        ranges.append((lines[0], lines[1], list(edits)))
    merged: list[tuple[int, int, list[Edit]]] = []
    for first, last, edits in sorted(ranges, key=lambda r: r[0]):
        # a block re-emits its neighbour lines: blocks one line apart would overlap
        if merged and first <= merged[-1][1] + 2:
            prev_first, prev_last, prev_edits = merged[-1]
            merged[-1] = (prev_first, max(prev_last, last), prev_edits + edits)
        else:
            merged.append((first, last, edits))
    for first, last, edits in merged:
        if _in_macro_body(ctx, first, last):
            return None
        start, end = _region(ctx, first, last)
        fix_edits.append(_gated_block(ctx, first, last, _amd_text(ctx, start, end, edits, None), None))
    return _checked(ctx, fix_edits, title, applicability)


def _gated_block(ctx, first: int, last: int, amd: str, include_line: int | None) -> Edit:
    """The edit turning lines ``first..last`` into ``#if <gate> amd #else original #endif``,
    extending a gate block just above or below, else re-emitting the neighbour lines."""
    start, end = _region(ctx, first, last)
    original = _text(ctx, start, end)
    before, after = "", ""
    macro = ctx.settings.gate_macro
    previous = ctx.pp.block_ending_at(first - 1)
    if previous is not None:  # extend the block just above
        amd = _block_part(ctx, previous, amd=True) + amd
        original = _block_part(ctx, previous, amd=False) + original
        start = ctx.lines.line_start(previous.if_line)
    elif first > 0 and include_line not in (first - 1,):
        before = _text(ctx, *_region(ctx, first - 1, first - 1))
        start = ctx.lines.line_start(first - 1)
    following = ctx.pp.block_starting_at(last + 1)
    if following is not None:  # extend the block just below
        amd += _block_part(ctx, following, amd=True)
        original += _block_part(ctx, following, amd=False)
        end = _region(ctx, following.endif_line, following.endif_line)[1]
    elif last + 1 < ctx.lines.line_count and include_line != last + 1 and end < len(ctx.source):
        after_start, after_end = _region(ctx, last + 1, last + 1)
        after = _text(ctx, after_start, after_end)
        end = after_end
    block = f"#if defined({macro})\n{amd}#else\n{original}#endif\n"
    if after and not after.endswith("\n"):
        pass
    elif not original.endswith("\n"):
        # last line of a file without a final newline
        block = f"#if defined({macro})\n{amd}\n#else\n{original}\n#endif"
        return Edit(Span(start, end), before + block + after)
    core_start, core_end = _region(ctx, first, last)
    return GateEdit(Span(start, end), before + block + after, macro=macro, amd=amd, original=original,
                    before=before, after=after, core=Span(core_start, core_end),
                    plain=previous is None and following is None and bool(before) and bool(after))


@dataclass(frozen=True)
class GateEdit(Edit):
    """A gate block edit that knows its parts, so that the blocks of two hazards on
    adjacent lines merge in the round that makes them (instead of clashing there and
    merging in the next round, one more analysis of the whole file)."""

    macro: str = ""
    amd: str = ""
    original: str = ""
    before: str = ""  # neighbour line re-emitted above the block
    after: str = ""  # neighbour line re-emitted below it
    core: Span = Span(0, 0)  # the lines the block replaces
    plain: bool = False  # re-emits both neighbours and extends no existing block

    def merge(self, other: Edit) -> "GateEdit | None":
        """One block for ``self`` and a block starting on the line after it, as the next
        round would make by extending ``self``; None when they are not such a pair."""
        if not isinstance(other, GateEdit) or not (self.plain and other.plain) or other.macro != self.macro:
            return None
        first, second = (self, other) if self.core.start < other.core.start else (other, self)
        if first.core.end != second.core.start:
            return None
        amd, original = first.amd + second.amd, first.original + second.original
        block = f"#if defined({first.macro})\n{amd}#else\n{original}#endif\n"
        return GateEdit(Span(first.span.start, second.span.end), first.before + block + second.after,
                        macro=first.macro, amd=amd, original=original, before=first.before, after=second.after,
                        core=Span(first.core.start, second.core.end), plain=True)


def _checked(ctx, fix_edits, title, applicability) -> Fix | None:
    spans = sorted(e.span for e in fix_edits)
    if any(a.end > b.start for a, b in zip(spans, spans[1:])):
        return None
    return Fix(tuple(fix_edits), title, applicability)


def _in_macro_body(ctx, first: int, last: int) -> bool:
    """Lines continued with a backslash cannot take directives between them."""
    for line in range(max(first - 1, 0), last + 1):
        if ctx.lines.line_text(line).rstrip().endswith("\\"):
            return True
    return False


def _region(ctx, first: int, last: int) -> tuple[int, int]:
    """Byte range of whole lines ``first..last`` including the final newline."""
    start = ctx.lines.line_start(first)
    end = ctx.lines.line_start(last + 1) if last + 1 < ctx.lines.line_count else len(ctx.source)
    return start, end


def _text(ctx, start: int, end: int) -> str:
    return ctx.source[start:end].decode("utf-8", "surrogateescape").replace("\r\n", "\n")


def _relative(edits: Sequence[Edit], start: int) -> list[Edit]:
    return [Edit(Span(e.span.start - start, e.span.end - start), e.content) for e in edits]


def _amd_text(ctx, start, end, edits, wave_variants) -> str:
    chunk = ctx.source[start:end]
    if wave_variants is None:
        text = apply_edits(chunk, _relative(edits, start))
        return text.decode("utf-8", "surrogateescape").replace("\r\n", "\n")
    wave64, wave32 = (apply_edits(chunk, _relative(list(edits) + list(v), start))
                      .decode("utf-8", "surrogateescape").replace("\r\n", "\n") for v in wave_variants)
    if not wave64.endswith("\n"):
        wave64, wave32 = wave64 + "\n", wave32 + "\n"
    return f"#if defined({WAVE64_MACRO})\n{wave64}#else\n{wave32}#endif\n"


def _block_part(ctx, block, amd: bool) -> str:
    if amd:
        first = block.if_line + 1
        last = (block.else_line if block.else_line >= 0 else block.endif_line) - 1
    else:
        if block.else_line < 0:
            return ""
        first, last = block.else_line + 1, block.endif_line - 1
    if last < first:
        return ""
    return _text(ctx, *_region(ctx, first, last))


def _cstdint_include(ctx, gated: bool) -> tuple[Edit, int | None]:
    """An edit adding ``#include <cstdint>`` (behind the gate in shared files), placed after
    the last top-level include, ``#pragma once`` or header-guard ``#define``."""
    text = "#include <cstdint>\n"
    if gated:
        text = f"#if defined({ctx.settings.gate_macro})\n{text}#endif\n"
    candidates = ctx.top_level_includes()
    guard = ctx.pp.header_guard()
    if candidates:
        line = candidates[-1]
    elif ctx.pp.pragma_once >= 0:
        line = ctx.pp.pragma_once
    elif guard is not None:
        line = guard.start + 1
    else:
        line = None
    if line is None:  # top of the file: replace the first line with include + itself
        start, end = _region(ctx, 0, 0)
        return Edit(Span(start, end), text + _text(ctx, start, end)), 0
    start, end = _region(ctx, line, line)
    existing = _text(ctx, start, end)
    if not existing.endswith("\n"):
        existing += "\n"
    # Replacing the anchor line (not inserting at a point) makes two such fixes overlap,
    # so the include is added once.
    return Edit(Span(start, end), existing + text), line
