"""Parse only what the rules will look at, in large files.

A big module (torch/_inductor has files of 200 KB and more) usually has its hazards in a
few functions. The skeleton keeps every line of module-level code (imports, constants,
gate definitions) and every ``def``/``class`` block that holds an anchor, and replaces
the other blocks with ``pass`` and blank lines. Line numbers and the bytes of every kept
line are unchanged, so positions from the skeleton's AST are positions in the original.
The caller falls back to the whole file when the skeleton does not parse (a block end
misread inside a multi-line string, say).
"""
from __future__ import annotations

import re

_BLOCK_START = re.compile(rb"(?:async[ \t]+def|def|class)\b|@")
_CONTINUATION = (b")", b"]", b"}")


def _indent_of(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


def _is_code(line: bytes) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(b"#")


def skeleton(source: bytes, anchors: list[int], min_size: int = 48_000) -> bytes | None:
    """The reduced source, or None when reducing is not worth it."""
    if len(source) < min_size:
        return None
    lines = source.splitlines(keepends=True)
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line)
    dropped: list[tuple[int, int, int]] = []  # (first line, end line, indent)
    _reduce(lines, starts, sorted(anchors), dropped, 0, len(lines), indent=0)
    if not dropped:
        return None
    out = list(lines)
    for first, end, indent in dropped:
        for j in range(first, end):
            line = lines[j]
            newline = b"\r\n" if line.endswith(b"\r\n") else (b"\n" if line.endswith(b"\n") else b"")
            out[j] = (b" " * indent + b"pass" if j == first else b"") + newline
    return b"".join(out)


def _reduce(lines, starts, anchors, dropped, lo, hi, indent) -> None:
    """Drop the blocks at ``indent`` in lines[lo:hi] that hold no anchor; recurse into the rest."""
    i = lo
    while i < hi:
        line = lines[i]
        if not _is_code(line) or _indent_of(line) != indent or not _BLOCK_START.match(line, indent):
            i += 1
            continue
        end = _block_end(lines, i, hi, indent)
        if end is None:
            return  # unclear structure: keep everything from here
        end_byte = starts[end - 1] + len(lines[end - 1])
        if not _plausible_block(lines, i, end):
            return  # the end we found may sit inside a string: keep the rest
        if not _any_between(anchors, starts[i], end_byte):
            dropped.append((i, end, indent))
        else:
            body_indent = _body_indent(lines, i, end, indent)
            if body_indent is not None:
                _reduce(lines, starts, anchors, dropped, i + 1, end, body_indent)
        i = end


def _block_end(lines, start, hi, indent) -> int | None:
    """Index just past the block (decorators, header and body) that begins at ``start``.

    A line at the block's indent ends it, unless the block text up to there leaves a
    triple-quoted string open (text at column 0 inside a docstring): then scan on.
    """
    i = start
    # Decorators, then the def/class line itself.
    while i < hi and lines[i].lstrip().startswith(b"@"):
        i += 1
        while i < hi and not _is_code(lines[i]):
            i += 1
    if i >= hi:
        return None
    i += 1
    while i < hi:
        line = lines[i]
        if (_is_code(line) and _indent_of(line) <= indent and not line.lstrip().startswith(_CONTINUATION)
                and _plausible_block(lines, start, i)):
            break
        i += 1
    # Trailing blank and comment lines belong to whatever follows.
    while i - 1 > start and not _is_code(lines[i - 1]):
        i -= 1
    return i


def _plausible_block(lines, start, end) -> bool:
    """Strings open at the block's end would mean we misread where it ends."""
    text = b"".join(lines[start:end])
    if text.count(b'"""') % 2 or text.count(b"\'\'\'") % 2:
        return False
    return not lines[end - 1].rstrip(b"\r\n").endswith(b"\\")


def _body_indent(lines, start, end, indent) -> int | None:
    for j in range(start + 1, end):
        if _is_code(lines[j]) and _indent_of(lines[j]) > indent:
            return _indent_of(lines[j])
    return None


def _any_between(sorted_offsets: list[int], lo: int, hi: int) -> bool:
    import bisect

    k = bisect.bisect_left(sorted_offsets, lo)
    return k < len(sorted_offsets) and sorted_offsets[k] < hi
