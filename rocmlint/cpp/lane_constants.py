"""Constant values for the lane-group model: a name's AMD-build value (a macro of this file or the
project, a ``const``), whether a value is 32 or the wave size, loop ranges and shuffle offsets
as numbers, and macros chosen per wave size."""
from __future__ import annotations

import os
import re
from typing import Any, Iterator

from ..lazy_re import lazy_compile
from ..model import Span
from .dataflow import call_arguments, callee_name
from .lane_facts import G32, MAX_INCLUDE_DEPTH, SHUFFLE_KINDS, WAVE
from .lane_includes import included_files
from .lexical import has_word, word_matches


EXITS = lazy_compile(r"\s*(?:return\b[^;]*|continue|break)\s*;?\s*")

WAVE_FORM = {("%", "32"): "% warpSize", ("/", "32"): "/ warpSize", ("&", "31"): "& (warpSize - 1)",
              (">>", "5"): "/ warpSize"}


def literal_form(divisor: str) -> str:
    """``WS`` -> ``32``, ``WS - 1`` -> ``31`` (a constant worth 32 written as a literal)."""
    return "31" if re.fullmatch(r"\w+\s*-\s*1", divisor) else "32"
INDEXED_BY_32 = lazy_compile(r"%\s*32\b|&\s*31\b")
BLOCK_SIZE_TEXT = lazy_compile(r"\(?\s*(?:blockDim\.[xyz]|\w*(?:block_?size|BLOCK_?SIZE|threads_?per_?block|THREADS_?PER_?BLOCK|kBlockSize|BlockSize)\w*)\s*\)?")


def data_named(ctx, node) -> bool:
    """The index is stored in a variable named for data (``row``, ``col``, ``bank``)."""
    from .constant_uses import name_says

    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "init_declarator":
        declarator = parent.child_by_field_name("declarator")
        if declarator is not None:
            name = ctx.node_text(declarator)
            from .dataflow import LANE_NAME, THREAD_NAME

            return len(name) > 1 and name_says(name) == "data" and not LANE_NAME.search(name) and \
                not THREAD_NAME.search(name)
    return False


def constant_value(ctx, name: str, depth: int = 0) -> str | None:
    """The AMD-build value of a name: an object-like macro (this file's or the project's)
    or a ``const``/``constexpr`` variable of this file."""
    if depth > 3 or not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    key = ("constant-value", name)
    if key in ctx.cache:
        return ctx.cache[key]
    value = ctx.macro_value(name)
    if value is None:
        for m in constant_definitions_of(ctx.source, name):
            if ctx.in_code(m.start()) and not ctx.nvidia_only(m.start()):
                value = m.group(1).decode("utf-8", "replace").strip()
                break
    if value is None and depth < MAX_INCLUDE_DEPTH:  # a header of the project: WS in utils.h
        for included in included_files(ctx):
            if has_word(included.data, name.encode()):
                value = constant_value(included.ctx, name, depth + 1)
                if value is not None:
                    break
    if value is not None:
        value = value.strip()
        while value.startswith("(") and value.endswith(")"):
            value = value[1:-1].strip()
        inner = constant_value(ctx, value, depth + 1) if re.fullmatch(r"[A-Za-z_]\w*", value) else None
        value = inner if inner is not None else value
    ctx.cache[key] = value
    return value


def constant_definitions_of(source: bytes, name: str) -> Iterator["re.Match[bytes]"]:
    """``\\b(?:const|constexpr)\\b[^;{}()=]*\\bNAME\\s*[={]...`` matches, in order."""
    return word_matches(re.compile(rb"(?:const|constexpr)\b[^;{}()=]*\b" + re.escape(name.encode()) +
                                   rb"\s*(?:=\s*|\{\s*)([^;{}]+?)\s*[;}]"), source)


def value_size(ctx, text: str) -> str | None:
    """G32 for 32 (literal or a name worth 32, not named for data), WAVE for warpSize or 64."""
    from .constant_uses import name_says

    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if re.fullmatch(r"32[uUlL]*", text):
        return G32
    if text == "warpSize":
        return WAVE
    if not re.fullmatch(r"[A-Za-z_]\w*(?:::\w+)*", text):
        return None  # 64 and other literals: a board, a tile, a plane, not a wave
    name = text.split("::")[-1]
    said = name_says(name)
    if said == "data":
        return None
    if _defined_by_wave_size(ctx, name):
        return WAVE
    value = constant_value(ctx, name)
    if value is None:
        return None
    if "warpSize" in value or re.search(r"(?i)wave_?front_?size|__AMDGCN_WAVEFRONT_SIZE", value):
        return WAVE
    if re.fullmatch(r"32[uUlL]*", value):
        return G32
    if re.fullmatch(r"64[uUlL]*", value) and said == "warp":
        return WAVE
    return None


def value_size_31(ctx, text: str) -> bool:
    """31, or a name worth 31 / ``WS - 1`` with WS worth 32."""
    text = text.strip().strip("()").strip()
    if re.fullmatch(r"31[uUlL]*", text):
        return True
    m = re.fullmatch(r"([A-Za-z_]\w*)\s*-\s*1", text)
    return m is not None and value_size(ctx, m.group(1)) == G32


def _defined_by_wave_size(ctx, name: str) -> bool:
    """A macro this file defines inside a branch that selects on the wave size."""
    lines = [line for line, _ in ctx.pp.defines.get(name, [])]
    return bool(lines) and any(ctx.pp.wave_size_aware(line) for line in lines)


def divisor_size(ctx, operator: str, right) -> str | None:
    text = ctx.node_text(right).strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if operator == "&":
        if re.fullmatch(r"31[uU]?|0x1[fF][uU]?", text):
            return G32
        m = re.fullmatch(r"(\w+)\s*-\s*1", text)
        return value_size(ctx, m.group(1)) if m else None
    if operator == ">>":
        return G32 if text == "5" else None
    return value_size(ctx, text)


def offset_extent(ctx, call, offset) -> tuple[int | None, Any, tuple[Span, str] | None]:
    """How many lanes a width-less xor/down/up shuffle's offsets cover (2 x the largest
    offset), the node that decides it, and the edit moving it to the whole wave."""
    text = ctx.node_text(offset)
    if "warpSize" in text:
        return 64, None, None
    if re.fullmatch(r"\d+", text):
        steps = unrolled_offsets(ctx, call)
        largest = max([int(s) for s in steps if s.isdigit()] + [int(text)])
        if largest != int(text):
            return None, None, None  # one fact per unrolled chain, at its largest step
        return 2 * largest, offset, None
    if offset.type != "identifier":
        return None, None, None
    loop = ctx.ancestor(call, {"for_statement"})
    while loop is not None:
        found = _loop_range(ctx, loop, text)
        if found is not None:
            return found
        loop = ctx.ancestor(loop, {"for_statement"})
    return None, None, None


def _loop_range(ctx, loop, variable: str) -> tuple[int | None, Any, tuple[Span, str] | None] | None:
    init = loop.child_by_field_name("initializer")
    condition = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    if init is None or update is None:
        return None
    start = None
    for node in ctx.descendants(init, {"init_declarator", "assignment_expression"}):
        target = node.child_by_field_name("declarator") or node.child_by_field_name("left")
        value = node.child_by_field_name("value") or node.child_by_field_name("right")
        if target is not None and ctx.node_text(target) == variable and value is not None:
            start = value
    if start is None:
        return None
    update_text = re.sub(r"\s+", "", ctx.node_text(update))
    descending = re.search(re.escape(variable) + r"(?:>>=1|/=2|=" + re.escape(variable) + r"(?:>>1|/2))", update_text)
    ascending = re.search(re.escape(variable) + r"(?:<<=1|\*=2|=" + re.escape(variable) + r"(?:<<1|\*2))", update_text)
    start_text = ctx.node_text(start)
    if descending:
        if "warpSize" in start_text:
            return 64, start, None
        value = _half_value(ctx, start_text)
        if value is None:
            return None, None, None
        edit = (Span(start.start_byte, start.end_byte), "warpSize / 2") if value == 16 else None
        return 2 * value, start, edit
    if ascending and condition is not None:
        bound_text = re.sub(r"\s+", " ", ctx.node_text(condition))
        m = re.fullmatch(re.escape(variable) + r" ?(<=?) ?(.+)", bound_text)
        if m is None:
            return None, None, None
        bound = m.group(2).strip()
        if "warpSize" in bound:
            return 64, None, None
        size = value_size(ctx, bound)
        if m.group(1) == "<" and size == G32:
            right = condition.child_by_field_name("right")
            edit = (Span(right.start_byte, right.end_byte), "warpSize") if right is not None else None
            return 32, right, edit
        if m.group(1) == "<" and size == WAVE:
            return 64, None, None
        if m.group(1) == "<=" and bound == "16":
            right = condition.child_by_field_name("right")
            return 32, right, (Span(right.start_byte, right.end_byte), "warpSize / 2") if right is not None else None
        return None, None, None
    return None


def _half_value(ctx, text: str) -> int | None:
    """16 for ``16``, ``WS / 2``, ``kWarpSize >> 1`` with WS worth 32; the integer otherwise."""
    text = text.strip().strip("()").strip()
    if re.fullmatch(r"\d+", text):
        return int(text)
    m = re.fullmatch(r"(\w+)\s*(?:/\s*2|>>\s*1)", text)
    if m is not None:
        size = value_size(ctx, m.group(1))
        return 16 if size == G32 else 32 if size == WAVE else None
    value = constant_value(ctx, text)
    return int(value) if value is not None and value.isdigit() else None


def exchanged_only(ctx, call, value) -> bool:
    """A shuffle whose result goes into another variable that never flows back into the
    shuffled value (``float other = __shfl_xor(acc, 16); out = f(acc) * other;``): an
    exchange between lanes, not a step of a reduction (``t = ...; acc += t;`` is one)."""
    if value is None:
        return False
    parent = call.parent
    if parent is not None and parent.type == "init_declarator":
        target = parent.child_by_field_name("declarator")
    elif parent is not None and parent.type == "assignment_expression" and \
            ctx.node_text(parent.child_by_field_name("operator")) == "=" and parent.child_by_field_name("right") == call:
        target = parent.child_by_field_name("left")
    else:
        return False
    if target is None:
        return False
    name, shuffled = ctx.node_text(target).strip(), ctx.node_text(value).strip()
    if name == shuffled:
        return False
    block = ctx.ancestor(call, {"compound_statement"})
    for assignment in ctx.descendants(block, {"assignment_expression"}) if block is not None else ():
        left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
        if left is not None and right is not None and ctx.node_text(left).strip() == shuffled and \
                re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", ctx.node_text(right)):
            return False  # folded back into the value: a reduction step through a temporary
    return True


def unrolled_offsets(ctx, call) -> list[str]:
    """Offsets of the width-less shuffles of the same kind in the block around ``call``."""
    name = callee_name(ctx, call)
    kind = SHUFFLE_KINDS.get(name)
    block = ctx.ancestor(call, {"compound_statement", "translation_unit"})
    out = []
    for node in ctx.descendants(block, {"call_expression"}) if block is not None else ():
        other = callee_name(ctx, node)
        if SHUFFLE_KINDS.get(other) != kind:
            continue
        args = call_arguments(node)
        index = 1 if other.endswith("_sync") else 0
        if len(args) == index + 2:
            out.append(ctx.node_text(args[index + 1]))
    return out


# Macros only the device pass defines (or, for the deprecated wavefront-size macro, that
# the host pass reads as 64): a value chosen by them differs between host and device code.
DEVICE_PASS_MACRO = lazy_compile(r"__GFX\d+__|__gfx\w+__|__HIP_DEVICE_COMPILE__|__AMDGCN_WAVEFRONT_SIZE")
_DEVICE_PASS_BYTES = lazy_compile(DEVICE_PASS_MACRO.pattern.encode())


def wave_dependent_macros(ctx) -> dict[str, str]:
    """Object-like macros whose value is chosen by a device-pass macro, in this file or a
    file it includes with quotes: name -> where it is chosen (``file:line``)."""
    key = "wave-dependent-macros"
    found = ctx.cache.get(key)
    if found is None:
        found = dict(_device_chosen_defines(ctx, "")) if _DEVICE_PASS_BYTES.search(ctx.source) else {}
        for included in included_files(ctx):
            if _DEVICE_PASS_BYTES.search(included.data) is None:
                continue
            for name, where in _device_chosen_defines(included.ctx, os.path.basename(included.path)).items():
                found.setdefault(name, where)
        ctx.cache[key] = found
    return found


def _device_chosen_defines(ctx, origin: str) -> dict[str, str]:
    pp = ctx.pp
    out: dict[str, str] = {}
    for chain in pp.chains:
        if not chain.branches or not any(DEVICE_PASS_MACRO.search(b.condition) for b in chain.branches):
            continue
        first, last = chain.branches[0].line, chain.endif
        for name, defs in pp.defines.items():
            values = {value for line, value in defs if first < line < last and not pp.nvidia_only(line)}
            if values and re.search(r"(?i)warp|wave|lane", name):
                out[name] = f"{origin}:{chain.branches[0].line + 1}" if origin else f"line {chain.branches[0].line + 1}"
    return out


def selected_tile_size(ctx, literal) -> bool:
    """``if constexpr (I == 32 && J == 4) return threadIdx.x % 32;``: inside a branch chosen
    by a tile or data dimension equal to this literal, the literal is that dimension."""
    from .constant_uses import names_tile_dimension

    value = re.escape(ctx.node_text(literal))
    node = ctx.ancestor(literal, {"if_statement"})
    while node is not None:
        condition = node.child_by_field_name("condition")
        taken = node.child_by_field_name("consequence")
        if condition is not None and taken is not None and taken.start_byte <= literal.start_byte < taken.end_byte:
            for name in re.findall(r"\b([A-Za-z_]\w*)\s*==\s*" + value + r"\b", ctx.node_text(condition)):
                if names_tile_dimension(name):
                    return True
        node = ctx.ancestor(node, {"if_statement"})
    return False


def is_subscript(node) -> bool:
    """The expression is an array subscript (``a[i % 32]``)."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is not None and parent.type == "subscript_argument_list":
        parent = parent.parent
    return parent is not None and parent.type == "subscript_expression" and \
        parent.child_by_field_name("argument") != node
