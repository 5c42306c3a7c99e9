"""Parse only what the rules will look at, in large files.

A big module (torch/_inductor has files of 200 KB and more) usually has its hazards in a
few functions. The skeleton keeps every line of module-level code (imports, constants,
gate definitions) and the ``def``/``class`` blocks that decide about an anchor: those that
hold one or a gate word (a file's own gate helpers), those that use a name an anchored
statement binds (readers, callers), and the short functions what is kept calls. Other
blocks become ``pass`` and empty lines. A big module-level data table (``NAME = [`` of
DATA_TABLE_MIN bytes or more; torch's OpInfo database is 660 KB of one statement) keeps
only its entries that hold an anchor. Line numbers and the bytes of every kept line are
unchanged, so positions from the skeleton's AST are positions in the original. A block
end misread inside a multi-line string is caught by triple-quote parity, and the caller
falls back to the whole file if the skeleton still does not parse.
"""
from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import Iterator

from ..lazy_re import lazy_compile
from ..literals import word_uses
from .toplevel import ASSIGN_LINE, DEF_LINE, MAX_HELPER_BYTES, gate_word_positions, module_statement_starts

MIN_SIZE = 12_000
DATA_TABLE_MIN = 16_000


@lru_cache(maxsize=32)
def _block_start(indent: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """A def/class/decorator line at exactly ``indent`` (see ``_next_line``)."""
    return _line_patterns(rb"[ \t]{%d}(?:async[ \t]+def\b|def\b|class\b|@)" % indent)


@lru_cache(maxsize=32)
def _code_at_most(indent: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """A code line (not blank, comment or closing bracket) indented at most ``indent``."""
    return _line_patterns(rb"[ \t]{0,%d}(?=[^ \t\r\n#)\]}])" % indent)


@lru_cache(maxsize=8)
def _entry_start(indent: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """A code line (not a comment or closing bracket) indented exactly ``indent``."""
    return _line_patterns(rb"[ \t]{%d}(?=[^ \t\r\n#)\]}])" % indent)


def _line_patterns(line: bytes) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """``line`` at a known line start, and after a newline: a literal first byte keeps the
    search at memchr speed (a MULTILINE `^` is tried at every byte)."""
    return re.compile(line), re.compile(b"\n" + line)


def _next_line(patterns: tuple[re.Pattern[bytes], re.Pattern[bytes]], source: bytes, pos: int,
               hi: int) -> int | None:
    """The first line starting in source[pos:hi] that matches, as `^` in MULTILINE would."""
    at_start, after_newline = patterns
    if (pos == 0 or source[pos - 1] == 0x0A) and at_start.match(source, pos, hi):
        return pos
    match = after_newline.search(source, pos, hi)  # a newline at pos or later: a line after pos
    return None if match is None else match.start() + 1


def _lines(patterns: tuple[re.Pattern[bytes], re.Pattern[bytes]], source: bytes, pos: int,
           hi: int) -> Iterator[int]:
    """Every line starting in source[pos:hi] that matches."""
    while (found := _next_line(patterns, source, pos, hi)) is not None:
        yield found
        pos = found + 1


# Blocks kept without an anchor: they may define the file's own gate helpers, which rules
# read beyond their anchors (found by the words the project model looks for: gate_word_positions).
_CALLED = lazy_compile(rb"\b(\w+)[ \t]*\(")
# A block's own keyword (the first `def` or `class` line, after any decorators).
_FUNCTION_HEADER = lazy_compile(rb"^[ \t]*(?:async[ \t]+)?(def|class)\b", re.MULTILINE)
_NESTED_DEF_LINE = lazy_compile(rb"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_DEFINED_NAME = lazy_compile(rb"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_HEADER = lazy_compile(rb"[ \t]*(?:async[ \t]+def\b|def\b|class\b)")
_BODY_LINE = lazy_compile(rb"^([ \t]*)[^ \t\r\n#]", re.MULTILINE)
# `name = [`, `name: Type = {`, `a.b = (` at column 0, the bracket ending its first line.
_DATA_TABLE = lazy_compile(rb"^([A-Za-z_][\w.]*(?:[ \t]*:[^=\n]*)?[ \t]*=[ \t]*[\[{(])[ \t]*\r?$",
                           re.MULTILINE)


def skeleton(source: bytes, anchors: list[int], min_size: int = MIN_SIZE) -> bytes | None:
    """The reduced source, or None when reducing is not worth it (or not safe)."""
    if len(source) < min_size or source.count(b"\r") != source.count(b"\r\n"):
        return None  # small, or old-Mac line ends the line counting below would miss
    statements = module_statement_starts(source)
    users = _users_of_anchored_names(source, anchors, statements)
    if users is None:
        return None
    anchors = sorted(anchors + users)
    dropped: list[tuple[int, int, bytes]] = []  # (start byte, end byte, replacement line)
    parents: dict[int, tuple[int, int]] = {}  # a nested block's start -> the kept body around it
    _reduce(source, anchors, dropped, 0, len(source), 0, gate_word_positions(source), parents)
    _reduce_data_tables(source, anchors, dropped, statements)
    if not dropped:
        return None
    reduced = _reduced(source, dropped)
    if _keep_called_helpers(source, dropped, reduced, parents):
        return _reduced(source, dropped) if dropped else None
    return reduced


def _reduce(source: bytes, anchors: list[int], dropped: list, lo: int, hi: int, indent: int,
            gate_words: list[int], parents: dict[int, tuple[int, int]], in_function: bool = False) -> None:
    """Drop the blocks at ``indent`` in source[lo:hi] holding no anchor; recurse into the rest.
    ``parents`` receives, for each block dropped inside a kept function, that function's body
    bounds (``in_function``: source[lo:hi] is a function's body)."""
    pos = lo
    starts = _block_start(indent)
    while True:
        start = _next_line(starts, source, pos, hi)
        if start is None:
            return
        end = _block_end(source, start, hi, indent)
        if end is None or end <= start:
            return  # unclear structure: keep everything from here
        k = bisect.bisect_left(anchors, start)
        if k == len(anchors) or anchors[k] >= end:
            w = bisect.bisect_left(gate_words, start)
            if w == len(gate_words) or gate_words[w] >= end:  # no gate word in the block either
                dropped.append((start, end, b" " * indent + b"pass"))
                if in_function:
                    parents[start] = (lo, hi)
        else:
            body = _body_indent(source, start, end, indent)
            if body is not None:
                header_end = source.find(b"\n", start, end) + 1
                own = _FUNCTION_HEADER.search(source, start, end)  # after any decorators
                function = own is not None and own.group(1) == b"def"
                _reduce(source, anchors, dropped, header_end, end, body, gate_words, parents, function)
        pos = end


def _keep_called_helpers(source: bytes, dropped: list, reduced: bytes, parents: dict[int, tuple[int, int]]) -> bool:
    """Short functions called from what is kept (``reduced``) stay too, one level deep: a
    decorator's or a condition's helper (`skipif(not has_fp8())`) may be a gate. So does a
    short function nested in a kept one that the rest of that body calls: it may be what
    receives an anchored value. Whether any was kept."""
    helpers = {}
    kept: set[int] = set()
    for index, (start, end, replacement) in enumerate(dropped):
        if replacement.lstrip() != b"pass" or end - start > MAX_HELPER_BYTES:
            continue
        if start in parents:  # nested: only its enclosing body can call it
            definition = _NESTED_DEF_LINE.search(source, start, end)
            lo, hi = parents[start]
            if definition is not None and re.search(rb"\b%s[ \t]*\(" % re.escape(definition.group(1)),
                                                   source[lo:start] + source[end:hi]):
                kept.add(index)
        elif replacement == b"pass":
            definition = DEF_LINE.search(source, start, end)
            if definition is not None:
                helpers[definition.group(1)] = index
    if not helpers:
        if kept:
            dropped[:] = [block for index, block in enumerate(dropped) if index not in kept]
        return bool(kept)
    text = reduced
    for _round in range(2):  # the calls in what is kept, then in the helpers kept for them
        called = {helpers[name] for name in _CALLED.findall(text) if name in helpers} - kept
        if not called:
            break
        kept |= called
        text = b"\n".join(source[dropped[index][0]:dropped[index][1]] for index in called)
    dropped[:] = [block for index, block in enumerate(dropped) if index not in kept]
    return bool(kept)


def _reduced(source: bytes, dropped: list) -> bytes:
    """The source with the dropped blocks replaced (line numbers kept)."""
    out = []
    cursor = 0
    for start, end, replacement in sorted(dropped):
        out.append(source[cursor:start])
        out.append(replacement + b"\n" * source.count(b"\n", start, end))
        cursor = end
    out.append(source[cursor:])
    return b"".join(out)


def _users_of_anchored_names(source: bytes, anchors: list[int], statements: list[int]) -> list[int] | None:
    """Where the names that anchored module-level statements bind are used, and then the
    call chain up from there (module-level functions that call them, to the end): the
    readers and callers decide about them (`CONFIGS = [...fp8...]` read only by CPU tests; a
    helper called by a wrapper called only under `if not on_amd():`). None: a chain too long
    to follow."""
    positions: list[int] = []
    seen: set[bytes] = set()
    frontier = {name for anchor in anchors for name in _bound_names(source, statements, anchor)}
    for _round in range(MAX_CHAIN):
        frontier -= seen
        if not frontier:
            return positions
        seen |= frontier
        uses = [start for _index, start in word_uses(sorted(frontier), source)]
        positions += uses
        frontier = {name for name in (_bound_name(source, statements, use, functions_only=True) for use in uses)
                    if name}
    return None


MAX_CHAIN = 8


def _bound_names(source: bytes, statements: list[int], position: int) -> list[bytes]:
    """The names the module-level statement holding ``position`` binds: a def's, a class's,
    an assignment's, or an import's (``from m import f as g`` binds ``g``: calls of ``g``
    decide about the anchor on ``f``)."""
    following = bisect.bisect_right(statements, position)
    imported = _IMPORT.match(source, statements[following - 1])
    if imported is None:
        name = _bound_name(source, statements, position)
        return [name] if name else []
    end = statements[following] if following < len(statements) else len(source)
    names = []
    names_text = _IMPORT_COMMENT.sub(b"", source[imported.end():end])  # `(a,  # why` holds `a` and `b` next
    for item in re.sub(rb"[()\\]", b" ", names_text).split(b","):
        words = item.split()
        if len(words) >= 3 and words[-2] == b"as":
            names.append(words[-1])
        elif words and imported.group(1) is not None:
            names.append(words[0])  # from m import f
        elif words:
            names.append(words[0].split(b".")[0])  # import a.b binds a
    return [n for n in names if _WORD.fullmatch(n)]


_IMPORT = lazy_compile(rb"(from[ \t]+[\w.]+[ \t]+)?import[ \t]+")
_IMPORT_COMMENT = lazy_compile(rb"#[^\n]*")  # an import statement holds no string: every # starts a comment
_WORD = lazy_compile(rb"[A-Za-z_]\w*")


def _bound_name(source: bytes, statements: list[int], position: int, functions_only: bool = False) -> bytes | None:
    """The name the module-level statement holding ``position`` binds (a def, a class, an
    assignment; ``functions_only``: a def), if any."""
    start = statements[bisect.bisect_right(statements, position) - 1]
    while source.startswith(b"@", start):  # decorators: the name is on the def line
        start = source.find(b"\n", start) + 1
        if start == 0:
            return None
    if functions_only:
        bound = DEF_LINE.match(source, start)
    else:
        bound = ASSIGN_LINE.match(source, start) or _DEFINED_NAME.match(source, start)
    return bound.group(1) if bound is not None else None


def _reduce_data_tables(source: bytes, anchors: list[int], dropped: list, statements: list[int]) -> None:
    """Drop the anchorless entries of big module-level data tables (outside dropped blocks)."""
    taken = sorted((start, end) for start, end, _ in dropped)
    code = _code_at_most(0)
    for start, following in zip(statements, statements[1:] + [len(source)]):
        if following - start < DATA_TABLE_MIN:
            continue  # the table, if any, ends before: too small
        match = _DATA_TABLE.match(source, start)
        if match is None:
            continue
        k = bisect.bisect_right(taken, (start, len(source)))
        if k and taken[k - 1][1] > start or not _balanced(source, 0, start):
            continue  # inside a dropped block, or a line of a docstring
        end = _statement_end(source, match.end(), code)
        if end is not None and end - start >= DATA_TABLE_MIN:
            _drop_entries(source, anchors, dropped, match.end(), end)


def _drop_entries(source: bytes, anchors: list[int], dropped: list, lo: int, hi: int) -> None:
    """Entries of the table in source[lo:hi] that hold no anchor. An entry runs from a code
    line at the entries' indent to the next; only whole entries go (starting at the table's
    own bracket depth after a comma, balanced, ending in a comma), so what is left parses
    as the same table with fewer entries. The first and last entries are kept."""
    first = _BODY_LINE.search(source, lo, hi)
    if first is None or not first.group(1):
        return
    starts = list(_lines(_entry_start(len(first.group(1))), source, first.start(), hi))
    depth = [0, 0, 0]  # open minus closed ( [ { since the table's own bracket
    separated = False  # the entries before ended in a comma at the table's depth
    for start, end in zip(starts, starts[1:]):
        nets = _bracket_nets(source, start, end)
        ends_in_comma = _last_code_line(source, start, end).endswith(b",")
        whole = separated and nets == [0, 0, 0] and ends_in_comma
        depth = [d + n for d, n in zip(depth, nets)]
        separated = ends_in_comma and depth == [0, 0, 0]
        k = bisect.bisect_left(anchors, start)
        if whole and (k == len(anchors) or anchors[k] >= end) and _balanced(source, start, end):
            dropped.append((start, end, b""))


_BRACKETS = ((b"(", b")"), (b"[", b"]"), (b"{", b"}"))


def _bracket_nets(source: bytes, start: int, end: int) -> list[int]:
    """Opened minus closed ( [ { in source[start:end], comment lines left out (commented-out
    entries are common in tables, and one stray bracket would hold every later entry)."""
    if source.find(b"#", start, end) < 0:
        text = source[start:end]
    else:
        text = b"\n".join(line for line in source[start:end].split(b"\n") if not line.lstrip().startswith(b"#"))
    return [text.count(opening) - text.count(closing) for opening, closing in _BRACKETS]


def _last_code_line(source: bytes, start: int, end: int) -> bytes:
    """The last line of source[start:end] that is not blank or a comment, stripped."""
    while end > start:
        line_start = source.rfind(b"\n", start, end - 1) + 1
        line = source[max(line_start, start):end].strip()
        if line and not line.startswith(b"#"):
            return line
        end = line_start
    return b""


def _statement_end(source: bytes, pos: int, code) -> int | None:
    """Start of the line after the statement begun before ``pos``: the next column-0 code
    line leaving no triple-quoted string open, or the end of the file; None if unclear."""
    for candidate in _lines(code, source, pos, len(source)):
        if _balanced(source, pos, candidate):
            return candidate
    return len(source) if _balanced(source, pos, len(source)) else None


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
    for candidate in _lines(code, source, pos, hi):
        if _balanced(source, start, candidate):
            end = candidate
            break
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
    while end > start and source[end - 1] in b"\r\n":
        end -= 1
    return not (end > start and source[end - 1] == 0x5C)  # a backslash


def _body_indent(source: bytes, start: int, end: int, indent: int) -> int | None:
    for match in _BODY_LINE.finditer(source, source.find(b"\n", start, end) + 1, end):
        width = len(match.group(1))
        if width > indent:
            return width
    return None
