"""A kernel's text as the run-time compiler sees it, and its map back to the Python file.

The text is made of pieces (string literals, with run-time templates applied), parts known
only at run time, and the stand-in lines rocmlint adds (``_PRELUDE``, a snippet's wrapper).
The character map (``literal_text``) is read only when a finding needs a place or a fix:
``python_span`` places a text span in the Python file, ``python_edit`` writes a C++ fix's
edit into its literal in the literal's own style and reads it back, or refuses.
"""
from __future__ import annotations

import ast
import bisect
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from ..lazy_re import lazy_compile
from ..model import Edit, LineIndex, Span
from .literal_text import (FIELD, Literal, Unit, apply_layer, escape_for_layers, escape_for_token,
                           layer_text, parse_literal, read_literal)

# Every run-time compiler declares the fixed-width integer types: hiprtc's runtime header
# typedefs them (without <cstdint>, which hiprtc may not find), hipcc force-includes
# hip_runtime.h. This stand-in first line tells the C++ fixes so: they add no include.
_PRELUDE = "#include <cstdint>\n"
# The stand-in kernel around a snippet (the library's own wrapper is not known here).
_WRAPPERS = {
    "statements": ('extern "C" __global__ void __rocmlint_snippet() {\n', ";\n}\n"),  # `${operation};`
    "expression": ("__device__ void __rocmlint_snippet() {\n(void)(\n", "\n);\n}\n"),
}
_PLACEHOLDER = lazy_compile(r"__rocmlint_field(\d+)__")
_LINE_REFERENCE = lazy_compile(r"\bline (\d+)\b")


@dataclass
class Piece:
    """A literal as one part of a kernel's text, with the run-time templates applied to it.
    Its value comes from ``ast``; the character map (``literal``) is read only when a
    finding needs a place or a fix."""

    node: ast.expr
    read: Callable[[ast.expr], Literal]
    layers: tuple[str, ...] = ()

    @property
    def literal(self) -> Literal:
        return self.read(self.node)

    @property
    def text(self) -> str:
        """The value after the templates, FIELD where a field is."""
        node = self.node
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else \
            "".join(str(v.value) if isinstance(v, ast.Constant) else FIELD for v in getattr(node, "values", ()))
        for layer in self.layers:
            text = layer_text(text, layer)
        return text



# The text and its map --------------------------------------------------------------------------
_PLACEHOLDER_FIELD = lazy_compile(FIELD)


def _numbered_fields() -> Callable[["re.Match[str]"], str]:
    count = iter(range(1 << 30))
    return lambda _m: f"__rocmlint_field{next(count)}__"


@dataclass
class _PieceRange:
    first: int  # unit indices first..end
    end: int
    piece: Piece
    writable: bool  # exact, and the literal occurs once in this text


@dataclass
class _TextMap:
    units: list[Unit] = field(default_factory=list)
    ranges: list[_PieceRange] = field(default_factory=list)
    fields: dict[str, int] = field(default_factory=dict)  # placeholder -> unit index
    offsets: list[int] = field(default_factory=lambda: [0])  # byte offset of each unit, and the end
    unknown: set[int] = field(default_factory=set)  # units standing for text known only at run time


class KernelText:
    """The source a compiler gets, as bytes (``data``) with a map from each byte to the
    Python bytes that produce it. Fields known only at run time are placeholder names."""

    def __init__(self, pieces: list[Piece | None], shape: str, anchor: int) -> None:
        self.anchor = anchor  # where findings with no place of their own are reported
        self.shape = shape
        self.pieces = pieces
        prefix, suffix = _WRAPPERS.get(shape, ("", ""))
        texts = [_PRELUDE + prefix] + ["\n" if p is None else p.text for p in pieces] + [suffix]
        self.data = _PLACEHOLDER_FIELD.sub(_numbered_fields(), "".join(texts)).encode("utf-8", "surrogateescape")

    @cached_property
    def _map(self) -> "_TextMap":
        """Each piece's characters with their source bytes (read from the literals now)."""
        prefix, suffix = _WRAPPERS.get(self.shape, ("", ""))
        text_map = _TextMap()
        units = text_map.units
        units.extend(Unit(c, -1, -1) for c in _PRELUDE + prefix)
        uses = Counter(id(p.node) for p in self.pieces if p is not None)
        for piece in self.pieces:
            if piece is None:
                text_map.unknown.add(len(units))
                units.append(Unit("\n", -1, -1))  # a part known only at run time
                continue
            literal = piece.literal
            literal_units = literal.units
            for layer in piece.layers:
                literal_units = apply_layer(literal_units, layer)
            first = len(units)
            units.extend(literal_units)
            writable = literal.exact and uses[id(piece.node)] == 1
            text_map.ranges.append(_PieceRange(first, len(units), piece, writable))
        units.extend(Unit(c, -1, -1) for c in suffix)
        encoded = []
        for index, unit in enumerate(units):
            if unit.field:
                name = f"__rocmlint_field{len(text_map.fields)}__"
                text_map.fields[name] = index
                encoded.append(name.encode())
            else:
                encoded.append(unit.text.encode("utf-8", "surrogateescape"))
        if b"".join(encoded) != self.data:  # not expected: then every place is the argument's start
            text_map = _TextMap(units=[Unit(c, self.anchor, self.anchor) for c in self.data.decode(
                "utf-8", "surrogateescape")])
            encoded = [u.text.encode("utf-8", "surrogateescape") for u in text_map.units]
        for chunk in encoded:
            text_map.offsets.append(text_map.offsets[-1] + len(chunk))
        return text_map

    @property
    def units(self) -> list[Unit]:
        return self._map.units

    @property
    def ranges(self) -> list["_PieceRange"]:
        return self._map.ranges

    @property
    def fields(self) -> dict[str, int]:
        return self._map.fields

    @property
    def offsets(self) -> list[int]:
        return self._map.offsets

    @property
    def unknown(self) -> set[int]:
        return self._map.unknown

    def unit_at(self, offset: int) -> int:
        return max(bisect.bisect_right(self.offsets, offset) - 1, 0) if self.units else 0

    def python_span(self, span: Span) -> Span:
        """Where a span of the text is written in the Python file (the argument's start
        when nothing of it is)."""
        if not self.units:
            return Span(self.anchor, self.anchor)
        first = min(self.unit_at(span.start), len(self.units) - 1)
        last = min(self.unit_at(max(span.end - 1, span.start)), len(self.units) - 1)
        covered = self.units[first : last + 1]
        start = next((u.start for u in covered if u.start >= 0), None)
        if start is None:
            return Span(self.anchor, self.anchor)
        end = next(u.end for u in reversed(covered) if u.end >= 0)
        return Span(start, max(start, end))

    def python_offset(self, offset: int) -> int:
        return self.python_span(Span(offset, offset + 1)).start

    def describe(self, message: str, lines: LineIndex) -> str:
        """A C++ rule's message in Python terms: its line numbers and placeholders."""
        kernel_lines = LineIndex(self.data)

        def line(m: "re.Match[str]") -> str:
            number = int(m.group(1))
            if not 1 <= number <= kernel_lines.line_count:
                return m.group()
            offset = kernel_lines.line_start(number - 1)
            return f"line {lines.line_of(self.python_offset(offset)) + 1}"

        message = _LINE_REFERENCE.sub(line, message)
        return _PLACEHOLDER.sub(lambda m: self.field_source(m.group(), lines.data) or m.group(), message)

    def field_source(self, name: str, buffer: bytes) -> str | None:
        index = self.fields.get(name)
        if index is None:
            return None
        unit = self.units[index]
        return buffer[unit.start : unit.end].decode("utf-8", "surrogateescape")

    # Edits ---------------------------------------------------------------------------------
    def python_edit(self, edit: Edit, buffer: bytes) -> Edit | None:
        """The Python edit that makes the text change as ``edit`` changes it; None when the
        change cannot be written into one literal (or reads back differently)."""
        start, end, content = edit.span.start, edit.span.end, edit.content
        if self.data[start:end] == b"\n" and content.endswith("\n\n") and self._at_token_start(start):
            # Lines put before the blank line that opens a triple-quoted kernel go after it:
            # the text differs only in where that blank line is.
            start, content = end, content[:-1]
        written = self._write(start, end, content, buffer)
        if written is None:  # a gate block re-emits neighbour lines, maybe of another literal
            old = self.data[start:end].decode("utf-8", "surrogateescape")
            head = _common_prefix(old, content)
            tail = _common_prefix(old[head:][::-1], content[head:][::-1])
            if head or tail:
                new_start = start + len(old[:head].encode("utf-8", "surrogateescape"))
                new_end = end - len(old[len(old) - tail:].encode("utf-8", "surrogateescape"))
                written = self._write(new_start, new_end, content[head : len(content) - tail], buffer)
        return written

    def _at_token_start(self, offset: int) -> bool:
        index = self.unit_at(offset)
        unit = self.units[index] if index < len(self.units) else None
        piece_range = self._range_of(index)
        if unit is None or unit.token < 0 or piece_range is None:
            return False
        return piece_range.piece.literal.tokens[unit.token].body_start == unit.start

    def _write(self, start: int, end: int, content: str, buffer: bytes) -> Edit | None:
        place = self._place(start, end)
        if place is None:
            return None
        piece_range, first, last, py_start, py_end = place
        if piece_range.first - 1 in self.unknown and first == piece_range.first or \
                piece_range.end in self.unknown and last == piece_range.end - 1:
            return None  # whether a line starts or ends there is known only at run time
        # What the edit keeps of the old text at either end is written as it was.
        middle = self._changed_units(first, last, content)
        if middle is None:
            return None
        mid_first, mid_last, mid_content = middle
        mid_start = self._python_point(piece_range, mid_first, mid_last)
        if mid_start is None:
            return None
        mid_end = self.units[mid_last].end if mid_first <= mid_last else mid_start
        written = self._encode(piece_range, mid_first, mid_last, mid_content, mid_end, buffer)
        if written is None:
            return None
        replacement = (buffer[py_start:mid_start].decode("utf-8", "surrogateescape") + written
                       + buffer[mid_end:py_end].decode("utf-8", "surrogateescape"))
        if not self._reads_back(piece_range, first, last, content, py_start, py_end, replacement, buffer):
            return None
        return Edit(Span(py_start, py_end), replacement)

    def _changed_units(self, first: int, last: int, content: str) -> tuple[int, int, str] | None:
        """The units ``first..last`` an edit really changes, and the text it puts there."""
        old = "".join(self.data[self.offsets[i] : self.offsets[i + 1]].decode("utf-8", "surrogateescape")
                      for i in range(first, last + 1))
        head = _common_prefix(old, content)
        tail = _common_prefix(old[head:][::-1], content[head:][::-1])
        # back to unit boundaries (a placeholder is one unit of many characters)
        mid_first, consumed = first, 0
        while mid_first <= last and consumed + len(self._unit_text(mid_first)) <= head:
            consumed += len(self._unit_text(mid_first))
            mid_first += 1
        head = consumed
        mid_last, consumed = last, 0
        while mid_last >= mid_first and consumed + len(self._unit_text(mid_last)) <= tail:
            consumed += len(self._unit_text(mid_last))
            mid_last -= 1
        tail = consumed
        return mid_first, mid_last, content[head : len(content) - tail]

    def _unit_text(self, index: int) -> str:
        return self.data[self.offsets[index] : self.offsets[index + 1]].decode("utf-8", "surrogateescape")

    def _python_point(self, piece_range: _PieceRange, first: int, last: int) -> int | None:
        """Python offset where units ``first..last`` start; an insertion goes before unit
        ``first``, or after the literal's last unit when it ends there."""
        units = self.units
        if first <= last or (first < piece_range.end and units[first].start >= 0):
            return units[first].start
        return units[first - 1].end if piece_range.first < first and units[first - 1].end >= 0 else None

    def _encode(self, piece_range: _PieceRange, first: int, last: int, content: str, py_end: int,
                buffer: bytes) -> str | None:
        """``content`` written in the literal's own style where units ``first..last`` are."""
        literal = piece_range.piece.literal
        units, tokens = self.units, literal.tokens
        token_index = units[first].token if first < piece_range.end else units[first - 1].token
        end_token = units[last].token if first <= last else token_index
        if token_index < 0 or end_token < 0:
            return None
        token = tokens[token_index]
        if any(t.style != token.style for t in tokens[token_index : end_token + 1]):
            return None
        separators = [buffer[a.end : b.start] for a, b in zip(tokens, tokens[1:])]
        if any(not sep.isspace() for sep in separators[token_index:end_token]):
            return None  # a comment between the tokens would be lost
        # One token per line of text (``"a;\n"`` then ``"b;\n"``): new lines get tokens too.
        line_tokens = (len(tokens) > 1 and len(token.quote) == 1 and separators[0].isspace()
                       and all(t.style == token.style for t in tokens) and _tokens_end_lines(literal))
        written_prefix = buffer[token.start : token.body_start - len(token.quote)].decode()
        token_break = (token.quote + separators[0].decode() + written_prefix + token.quote) if line_tokens else ""
        out = []
        for part in _split_placeholders(content):
            if _PLACEHOLDER.fullmatch(part):
                index = self.fields.get(part)
                if index is None or not piece_range.first <= index < piece_range.end:
                    return None  # a field of another literal
                field_token = units[index].token
                if field_token < 0 or tokens[field_token].style != token.style:
                    return None
                out.append(buffer[units[index].start : units[index].end].decode("utf-8", "surrogateescape"))
                continue
            lines = part.split("\n")
            for number, text in enumerate(lines):
                last_line = number == len(lines) - 1
                chunk = text if last_line else text + "\n"
                if chunk:
                    out.append(escape_for_token(escape_for_layers(chunk, piece_range.piece.layers), token))
                if not last_line and token_break:
                    out.append(token_break)
        written = "".join(out)
        if token_break and written.endswith(token_break) and py_end == tokens[end_token].body_end:
            written = written[: -len(token_break)]  # the token's own closing quote follows
        return written

    def _reads_back(self, piece_range: _PieceRange, first: int, last: int, content: str, py_start: int,
                    py_end: int, replacement: str, buffer: bytes) -> bool:
        """The edited literal parses and holds exactly the text the C++ fix meant."""
        literal = piece_range.piece.literal
        region = (buffer[literal.start : py_start] + replacement.encode("utf-8", "surrogateescape")
                  + buffer[py_end : literal.end])
        node = parse_literal(region)
        reread = read_literal(region, 0, len(region), node) if node is not None else None
        if reread is None or not reread.exact:
            return False
        got = reread.units
        for layer in piece_range.piece.layers:
            got = apply_layer(got, layer)
        units = self.units
        expected = ("".join(u.text for u in units[piece_range.first : first])
                    + _PLACEHOLDER.sub(FIELD, content)
                    + "".join(u.text for u in units[last + 1 : piece_range.end]))
        return "".join(u.text for u in got) == expected

    def _place(self, start: int, end: int) -> tuple[_PieceRange, int, int, int, int] | None:
        """(piece range, first unit, last unit, Python start, Python end) of a text span
        on unit boundaries inside one writable literal; an insertion has last = first - 1."""
        if not self.units or self.offsets[self.unit_at(start)] != start or \
                (end < len(self.data) and self.offsets[self.unit_at(end)] != end):
            return None
        if start == end:
            at = self.unit_at(start) if start < len(self.data) else len(self.units)
            for index, use_end in ((at, False), (at - 1, True)):
                piece_range = self._range_of(index)
                if piece_range is not None and self.units[index].start >= 0:
                    unit = self.units[index]
                    offset = unit.end if use_end else unit.start
                    first = index + 1 if use_end else index
                    return piece_range, first, first - 1, offset, offset
            return None
        first, last = self.unit_at(start), self.unit_at(end - 1)
        piece_range = self._range_of(first)
        if piece_range is None or not (piece_range.first <= last < piece_range.end):
            return None
        return piece_range, first, last, self.units[first].start, self.units[last].end

    def _range_of(self, index: int) -> _PieceRange | None:
        for piece_range in self.ranges:
            if piece_range.first <= index < piece_range.end:
                return piece_range if piece_range.writable else None
        return None


def _split_placeholders(text: str) -> list[str]:
    return [part for part in re.split(r"(__rocmlint_field\d+__)", text) if part]


def _tokens_end_lines(literal: Literal) -> bool:
    """Each token but the last ends its line (one source line per line of the text)."""
    ends: dict[int, str] = {}
    for unit in literal.units:
        ends[unit.token] = unit.text
    return all(ends.get(index) == "\n" for index in range(len(literal.tokens) - 1))


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
