"""Parse only what the rules will look at, in large files.

A big module (torch/_inductor has files of 200 KB and more) usually has its hazards in a
few functions. The skeleton keeps every line of module-level code (imports, constants,
gate definitions) and every ``def``/``class`` block that holds an anchor, and replaces
the other blocks with ``pass`` and empty lines. Line numbers and the bytes of every kept
line are unchanged, so positions from the skeleton's AST are positions in the original.
Blocks holding a gate word are kept too (a file's own gate helpers). A block end misread
inside a multi-line string is caught by triple-quote parity, and the caller falls back to
the whole file if the skeleton still does not parse.
"""
from __future__ import annotations

import bisect
import re
from functools import lru_cache

from ..project.python import GATE_WORDS

MIN_SIZE = 48_000


@lru_cache(maxsize=32)
def _block_start(indent: int) -> re.Pattern[bytes]:
    """A def/class/decorator line at exactly ``indent``."""
    return re.compile(rb"^[ \t]{%d}(?:async[ \t]+def\b|def\b|class\b|@)" % indent, re.MULTILINE)


@lru_cache(maxsize=32)
def _code_at_most(indent: int) -> re.Pattern[bytes]:
    """A code line (not blank, comment or closing bracket) indented at most ``indent``."""
    return re.compile(rb"^[ \t]{0,%d}(?=[^ \t\r\n#)\]}])" % indent, re.MULTILINE)


# Blocks kept without an anchor: they may define the file's own gate helpers, which rules
# read beyond their anchors (found by the words the project model looks for).
_CONTEXT = re.compile(b"|".join(re.escape(word) for word in GATE_WORDS))
_HEADER = re.compile(rb"[ \t]*(?:async[ \t]+def\b|def\b|class\b)")
_BODY_LINE = re.compile(rb"^([ \t]*)[^ \t\r\n#]", re.MULTILINE)


def skeleton(source: bytes, anchors: list[int], min_size: int = MIN_SIZE) -> bytes | None:
    """The reduced source, or None when reducing is not worth it (or not safe)."""
    if len(source) < min_size or source.count(b"\r") != source.count(b"\r\n"):
        return None  # small, or old-Mac line ends the line counting below would miss
    dropped: list[tuple[int, int, int]] = []  # (start byte, end byte, indent)
    _reduce(source, sorted(anchors), dropped, 0, len(source), 0)
    if not dropped:
        return None
    out = []
    cursor = 0
    for start, end, indent in sorted(dropped):
        out.append(source[cursor:start])
        newlines = source.count(b"\n", start, end)
        out.append(b" " * indent + b"pass" + b"\n" * newlines)
        cursor = end
    out.append(source[cursor:])
    return b"".join(out)


def _reduce(source: bytes, anchors: list[int], dropped: list, lo: int, hi: int, indent: int) -> None:
    """Drop the blocks at ``indent`` in source[lo:hi] holding no anchor; recurse into the rest."""
    pos = lo
    starts = _block_start(indent)
    while True:
        match = starts.search(source, pos, hi)
        if match is None:
            return
        start = match.start()
        end = _block_end(source, start, hi, indent)
        if end is None or end <= start:
            return  # unclear structure: keep everything from here
        k = bisect.bisect_left(anchors, start)
        if k == len(anchors) or anchors[k] >= end:
            if _CONTEXT.search(source, start, end) is None:
                dropped.append((start, end, indent))
        else:
            body = _body_indent(source, start, end, indent)
            if body is not None:
                header_end = source.find(b"\n", start, end) + 1
                _reduce(source, anchors, dropped, header_end, end, body)
        pos = end


def _block_end(source: bytes, start: int, hi: int, indent: int) -> int | None:
    """Byte just past the block (decorators, header, body) starting at ``start``: before the
    next code line at ``indent`` or less that leaves no triple-quoted string open."""
    header = start
    while True:  # skip decorators to the def/class line
        if _HEADER.match(source, header):
            break
        nl = source.find(b"\n", header, hi)
        if nl == -1:
            return None
        header = nl + 1
        if header >= hi:
            return None
    search_from = source.find(b"\n", header, hi)
    if search_from == -1:
        return hi
    code = _code_at_most(indent)
    end = hi
    pos = search_from + 1
    while pos < hi:
        match = code.search(source, pos, hi)
        if match is None:
            break
        candidate = match.start()
        if _balanced(source, start, candidate):
            end = candidate
            break
        pos = candidate + 1
    if not _balanced(source, start, end):
        return None
    # Blank and comment lines before the next statement belong to what follows,
    # but the block keeps at least its header line (progress for the caller).
    floor = search_from + 1
    while end > floor:
        line_start = source.rfind(b"\n", start, end - 1) + 1
        stripped = source[line_start:end].strip()
        if stripped and not stripped.startswith(b"#"):
            break
        end = max(line_start, floor)
    return end


def _balanced(source: bytes, start: int, end: int) -> bool:
    """No triple-quoted string left open and no line continuation at ``end``."""
    if source.count(b'"""', start, end) % 2 or source.count(b"'''", start, end) % 2:
        return False
    return not source[start:end].rstrip(b"\r\n").endswith(b"\\")


def _body_indent(source: bytes, start: int, end: int, indent: int) -> int | None:
    for match in _BODY_LINE.finditer(source, source.find(b"\n", start, end) + 1, end):
        width = len(match.group(1))
        if width > indent:
            return width
    return None
