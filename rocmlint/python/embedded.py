"""CUDA source inside Python strings: the kernels CuPy, torch and PyCUDA compile at run time.

``cupy.RawKernel``/``RawModule``/``ElementwiseKernel``/``ReductionKernel``,
``torch.utils.cpp_extension.load_inline``, torch's jiterator and PyCUDA's ``SourceModule``
take C++/CUDA source as a string and compile it on the machine (hiprtc or hipcc on ROCm).
This module finds the string expressions that reach those arguments (literals, f-strings,
concatenations, names bound once, ``str.format``/``%``/``string.Template`` templates),
assembles each argument's text as the compiler sees it (a loop body or an expression inside
a stand-in kernel), and lints it with the C++ rules (``engine.analyse_buffer``). Findings
and fix edits are mapped back to the Python file's own bytes; an edit is only offered when
it can be written into its literal and read back to exactly the text the C++ fix meant.
"""
from __future__ import annotations

import ast
import bisect
import re
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterator

from ..engine import EMBEDDED_TRIGGERS
from ..model import Edit, Finding, Fix, LineIndex, Span
from .literal_text import (FIELD, Literal, Unit, apply_layer, escape_for_layers, escape_for_token,
                           layer_text, parse_literal, read_literal)

if TYPE_CHECKING:
    from ..config import Settings
    from ..rule import Rule
    from .context import PythonContext

# The prefilter's trigger (kept in the engine, so that files without one never import this).
TRIGGERS = EMBEDDED_TRIGGERS


@dataclass(frozen=True)
class Slot:
    """An argument that carries source: ``unit`` (a translation unit), ``statements`` (a
    loop body the library wraps in its kernel) or ``expression`` (pasted into a macro or
    an expression: reported, never fixed)."""

    keyword: str
    position: int | None  # None: keyword only
    shape: str = "unit"


_CUPY_ELEMENTWISE = (Slot("operation", 2, "statements"), Slot("preamble", 5),
                     Slot("loop_prep", None, "statements"), Slot("after_loop", None, "statements"))
_PYCUDA_ELEMENTWISE = (Slot("operation", 1, "statements"), Slot("preamble", None),
                       Slot("loop_prep", None, "statements"), Slot("after_loop", None, "statements"))
CONSTRUCTORS: dict[tuple[str, str], tuple[Slot, ...]] = {
    ("cupy", "RawKernel"): (Slot("code", 0),),
    ("cupy", "RawModule"): (Slot("code", None),),
    ("cupy", "ElementwiseKernel"): _CUPY_ELEMENTWISE,
    # CuPy pastes the expressions into #define REDUCE(a, b) (...) and the like.
    ("cupy", "ReductionKernel"): (Slot("map_expr", 2, "expression"), Slot("reduce_expr", 3, "expression"),
                                  Slot("post_map_expr", 4, "expression"), Slot("preamble", 9)),
    ("cupy", "compile_with_cache"): (Slot("source", 0),),
    ("torch", "load_inline"): (Slot("cpp_sources", 1), Slot("cuda_sources", 2)),
    ("torch", "_create_jit_fn"): (Slot("code_string", 0),),
    ("torch", "_create_multi_output_jit_fn"): (Slot("code_string", 0),),
    ("pycuda", "SourceModule"): (Slot("source", 0),),
    ("pycuda", "DynamicSourceModule"): (Slot("source", 0),),
    ("pycuda", "ElementwiseKernel"): _PYCUDA_ELEMENTWISE,
    ("pycuda", "ReductionKernel"): (Slot("reduce_expr", 2, "expression"), Slot("map_expr", 3, "expression"),
                                    Slot("preamble", 8)),
}
_NAMES = frozenset(name for _family, name in CONSTRUCTORS)
_TRIGGER = re.compile(rb"\b(?:%s)\b" % b"|".join(sorted(n.encode() for n in _NAMES)))
_FAMILIES = {"cupy": "cupy", "cupyx": "cupy", "torch": "torch", "pycuda": "pycuda"}
# torch's JIT build runs hipify over load_inline's sources before hipcc compiles them.
HIPIFIED = frozenset({("torch", "load_inline")})
# Every run-time compiler declares the fixed-width integer types: hiprtc's runtime header
# typedefs them (without <cstdint>, which hiprtc may not find), hipcc force-includes
# hip_runtime.h. This stand-in first line tells the C++ fixes so: they add no include.
_PRELUDE = "#include <cstdint>\n"
# The stand-in kernel around a snippet (the library's own wrapper is not known here).
_WRAPPERS = {
    "statements": ('extern "C" __global__ void __rocmlint_snippet() {\n', ";\n}\n"),  # `${operation};`
    "expression": ("__device__ void __rocmlint_snippet() {\n(void)(\n", "\n);\n}\n"),
}
_PLACEHOLDER = re.compile(r"__rocmlint_field(\d+)__")
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")
_MAX_DEPTH = 8


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


@dataclass
class Kernel:
    """One argument's source text as the run-time compiler sees it."""

    call: ast.Call
    constructor: str  # qualified name, as resolved
    family: str
    slot: Slot
    text: "KernelText"

    @property
    def hipified(self) -> bool:
        return (self.family, self.constructor.rsplit(".", 1)[-1]) in HIPIFIED

    @property
    def nvidia_only(self) -> bool:
        """Compiled by a package that exists for NVIDIA GPUs only (PyCUDA): the project
        model's list of such imports decides."""
        from ..project.python import NVIDIA_ONLY_IMPORTS

        return any(name == root or name.startswith(root + ".") for root in NVIDIA_ONLY_IMPORTS
                   for name in (self.constructor, self.family))


def has_trigger(buffer: bytes) -> bool:
    return any(trigger in buffer for trigger in TRIGGERS)


# Finding the kernels ---------------------------------------------------------------------------
def find_kernels(ctx: "PythonContext") -> list[Kernel]:
    """Every argument of a run-time kernel constructor whose text is (partly) known."""
    finder = _Finder(ctx)
    kernels: list[Kernel] = []
    seen: set[int] = set()
    # `from torch.utils.cpp_extension import load_inline as build`: calls spell the alias
    renamed = [local for local, qualname in ctx.aliases.items()
               if qualname.rsplit(".", 1)[-1] in _NAMES and local not in _NAMES]
    calls = _TRIGGER if not renamed else re.compile(
        rb"\b(?:%s)\b" % b"|".join(re.escape(n.encode()) for n in sorted(_NAMES | set(renamed))))
    for m in calls.finditer(ctx.source):
        path = ctx.node_path(m.start())
        if len(path) < 2 or not isinstance(path[-2], ast.Call) or path[-2].func is not path[-1]:
            continue
        call = path[-2]
        if id(call) in seen:
            continue
        seen.add(id(call))
        kernels.extend(finder.kernels(call))
    return kernels


class _Finder:
    def __init__(self, ctx: "PythonContext") -> None:
        self.ctx = ctx
        self.literals: dict[int, Literal] = {}

    def kernels(self, call: ast.Call) -> Iterator[Kernel]:
        found = self.constructor(call)
        if found is None:
            return
        family, name, qualname = found
        for slot in CONSTRUCTORS[(family, name)]:
            argument = _argument(call, slot)
            if argument is None:
                continue
            for source in self.sources(argument):
                pieces = self.pieces(source, 0)
                if any(p is not None for p in pieces):
                    anchor = self.ctx.node_span(source).start
                    yield Kernel(call, qualname, family, slot, KernelText(pieces, slot.shape, anchor))

    def constructor(self, call: ast.Call) -> tuple[str, str, str] | None:
        """(family, name, qualified name) of a run-time compiler, resolved through imports.
        A name imported from another package is not one; an unresolved one (a relative
        import, a module held in a variable) is judged by its name."""
        qualname = self.ctx.qualname(call.func)
        if qualname is None:
            return None
        name = qualname.rsplit(".", 1)[-1]
        if name not in _NAMES:
            return None
        family = _FAMILIES.get(qualname.split(".")[0])
        if family is None:
            written = call.func
            while isinstance(written, ast.Attribute):
                written = written.value
            if isinstance(written, ast.Name) and written.id in self.ctx.aliases:
                return None  # imported from a package that is not a known compiler
            family = self.family_of_bare(name)
        return (family, name, qualname) if (family, name) in CONSTRUCTORS else None

    def family_of_bare(self, name: str) -> str:
        families = {family for family, known in CONSTRUCTORS if known == name}
        if len(families) == 1:
            return families.pop()
        imported = {self.ctx.aliases[a].split(".")[0] for a in self.ctx.aliases}
        return "pycuda" if "pycuda" in imported and "cupy" not in imported else "cupy"

    def sources(self, argument: ast.expr) -> list[ast.expr]:
        """load_inline takes a string or a list of them."""
        value: ast.expr | None = argument
        if isinstance(value, ast.Name):
            bound = self.ctx.resolve_name(value)
            if isinstance(bound, (ast.List, ast.Tuple)):
                value = bound
        if isinstance(value, (ast.List, ast.Tuple)):
            return [e for e in value.elts if not isinstance(e, ast.Starred)]
        return [argument]

    def literal(self, node: ast.expr) -> Literal:
        key = id(node)
        found = self.literals.get(key)
        if found is None:
            span = self.ctx.node_span(node)
            read = read_literal(self.ctx.source, span.start, span.end, node)
            assert read is not None, "pieces() keeps str literals only"
            found = self.literals[key] = read
        return found

    def pieces(self, expr: ast.expr | None, depth: int) -> list[Piece | None]:
        """The literals ``expr`` is made of, in order; None for a part not known here."""
        if expr is None or depth > _MAX_DEPTH:
            return [None]
        if isinstance(expr, ast.JoinedStr) or isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return [Piece(expr, self.literal)]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self.pieces(expr.left, depth + 1) + self.pieces(expr.right, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
            return _layered(self.pieces(expr.left, depth + 1), "percent")
        if isinstance(expr, ast.Name):
            return self.pieces(self.ctx.resolve_name(expr), depth + 1)
        if isinstance(expr, ast.IfExp):  # `SRC_HIP if IS_ROCM else SRC`: the text ROCm compiles
            on_rocm = self.ctx.gates.value(expr.test, True)
            if on_rocm is None:
                return [None]
            return self.pieces(expr.body if on_rocm else expr.orelse, depth + 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            return self.method_pieces(expr, expr.func.attr, expr.func.value, depth)
        return [None]

    def method_pieces(self, call: ast.Call, method: str, receiver: ast.expr, depth: int) -> list[Piece | None]:
        if method == "format":
            return _layered(self.pieces(receiver, depth + 1), "format")
        if method == "replace":  # `.replace("TYPE", "float")`: the text as written
            return self.pieces(receiver, depth + 1)
        if method in ("substitute", "safe_substitute"):
            template = self.ctx.resolve_name(receiver) if isinstance(receiver, ast.Name) else receiver
            if isinstance(template, ast.Call) and template.args and \
                    (self.ctx.qualname(template.func) or "").endswith("Template"):
                return _layered(self.pieces(template.args[0], depth + 1), "template")
            return [None]
        if method == "join" and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
            separator = self.pieces(receiver, depth + 1)
            out: list[Piece | None] = []
            for index, element in enumerate(call.args[0].elts):
                out.extend((separator if index else []) + self.pieces(element, depth + 1))
            return out
        return [None]


def _layered(pieces: list[Piece | None], layer: str) -> list[Piece | None]:
    return [None if p is None else Piece(p.node, p.read, p.layers + (layer,)) for p in pieces]


def _argument(call: ast.Call, slot: Slot) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == slot.keyword:
            return keyword.value
    if slot.position is None:
        return None
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if index == slot.position:
            return arg
    return None


# The text and its map --------------------------------------------------------------------------
_PLACEHOLDER_FIELD = re.compile(FIELD)


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


# Linting ---------------------------------------------------------------------------------------
@contextmanager
def _without_project() -> Iterator[None]:
    """A kernel string is no file of the project's C++ build: its analysis asks no model."""
    from ..project import activate, active

    project = active()
    activate(None)
    try:
        yield
    finally:
        activate(project)


def kernel_settings(settings: "Settings") -> "Settings":
    """The same string is compiled for both vendors: fixes always go behind the gate."""
    return settings if settings.gate == "always" else replace(settings, gate="always")


def lint_kernels(ctx: "PythonContext", rules: tuple["Rule", ...],
                 build_fixes: "bool | frozenset" = True) -> list[Finding]:
    """The C++ rules' findings on every kernel string the ROCm build may compile, in the
    Python file's positions (suppressions inside the kernel already applied)."""
    from ..engine import analyse_buffer

    settings = kernel_settings(ctx.settings)
    found: list[Finding] = []
    seen: set[tuple[str, Span]] = set()
    for kernel in find_kernels(ctx):
        if kernel.nvidia_only or ctx.nvidia_only(ctx.span_of(kernel.call).start):
            continue  # only the NVIDIA build runs this call
        with _without_project():
            inner = analyse_buffer(ctx.path + ".cu", kernel.text.data, "cpp", settings, rules,
                                   build_fixes=build_fixes)
        for finding in inner:
            if finding.code.startswith("ROC0") or _renamed_by_hipify(kernel, finding):
                continue
            mapped = _mapped(ctx, kernel, finding)
            key = (mapped.code, mapped.span)
            if key not in seen:
                seen.add(key)
                found.append(mapped)
    return found


def _renamed_by_hipify(kernel: Kernel, finding: Finding) -> bool:
    """load_inline's sources are hipified on ROCm: CUDA headers hipify renames are fine."""
    if not kernel.hipified or finding.code != "ROC303":
        return False
    from ..project.tables import hipify_maps

    header = re.search(r"[<\"]([^>\"]+)[>\"]", finding.source_line)
    return header is not None and hipify_maps(header.group(1)) is not None


def _mapped(ctx: "PythonContext", kernel: Kernel, finding: Finding) -> Finding:
    text = kernel.text
    fix = finding.fix
    if fix is not None:
        fixable = text.shape != "expression"
        edits = [text.python_edit(e, ctx.source) if fixable else None for e in fix.edits]
        written = [e for e in edits if e is not None]
        fix = Fix(tuple(written), fix.title, fix.applicability) if len(written) == len(edits) and written else None
    line = ctx.lines.line_of(ctx.span_of(kernel.call).start) + 1
    origin = f"kernel source compiled at run time by {kernel.constructor} ({kernel.slot.keyword}), {ctx.path}:{line}"
    return Finding(code=finding.code, name=finding.name, path=ctx.path, span=text.python_span(finding.span),
                   message=text.describe(finding.message, ctx.lines), fix=fix, severity=finding.severity,
                   evidence=(origin,) + finding.evidence)


# The NVIDIA-isolation proof ----------------------------------------------------------------------
def fold_kernel_gates(ctx: "PythonContext") -> None:
    """Rewrite, in ``ctx.tree``, each kernel literal's value as the NVIDIA build compiles it
    (``unifdef -U<gate macro>``): a gated fix inside a kernel string leaves the folded
    module unchanged, exactly as the C++ proof leaves a fixed file's NVIDIA view. An
    f-string's fields that survive the folding are written into the text as their
    expressions' dumps (a gate copies a field into both branches)."""
    from ..cpp.unifdef import undefine

    macro = ctx.settings.gate_macro
    done: set[int] = set()
    for kernel in find_kernels(ctx):
        for piece in kernel.text.pieces:
            if piece is None or id(piece.node) in done:
                continue
            node = piece.node
            done.add(id(node))
            fields = [v for v in node.values if not isinstance(v, ast.Constant)] if isinstance(node, ast.JoinedStr) else []
            numbers = iter(range(len(fields)))
            marked = re.sub(FIELD, lambda _m: f"{FIELD}{next(numbers, -1)}{FIELD}", Piece(node, piece.read).text)
            folded = undefine(marked.encode("utf-8", "surrogateescape"), macro).decode("utf-8", "surrogateescape")
            folded = re.sub(f"{FIELD}(\\d+){FIELD}", lambda m: ast.dump(fields[int(m.group(1))]), folded)
            if isinstance(node, ast.JoinedStr):
                node.values = [ast.Constant(folded)]
            elif isinstance(node, ast.Constant):
                node.value = folded


def kernel_texts(ctx: "PythonContext") -> list[bytes]:
    """Each kernel's text, in file order (for counting syntax errors)."""
    return [kernel.text.data for kernel in find_kernels(ctx)]


# rocmlint explain --------------------------------------------------------------------------------
def explain_lines(ctx: "PythonContext", line: int, rules: tuple["Rule", ...]) -> list[str]:
    """What ``rocmlint explain`` says of a Python line (0-based) inside kernel strings: the
    constructor that compiles the text, whether ROCm reaches it, the kernel's #if stack and
    lane groups there, and the C++ rules' verdicts (in Python positions)."""
    from ..cpp import LANGUAGE as CPP
    from ..engine import analyse_buffer
    from ..project.explain import if_stack_lines
    from ..suppress import is_suppressed, suppressed_codes

    start, end = ctx.lines.line_start(line), ctx.lines.line_end(line)
    settings = kernel_settings(ctx.settings)
    out: list[str] = []
    for kernel in find_kernels(ctx):
        text = kernel.text
        offsets = [text.offsets[i] for i, u in enumerate(text.units) if start <= u.start <= end and u.start >= 0]
        if not offsets:
            continue
        call_line = ctx.lines.line_of(ctx.span_of(kernel.call).start) + 1
        out.append(f"kernel source: compiled at run time by {kernel.constructor} ({kernel.slot.keyword}, "
                   f"{ctx.path}:{call_line}); the C++ rules read it")
        if kernel.nvidia_only:
            out.append(f"  not checked: {kernel.family} compiles for NVIDIA GPUs only")
            continue
        if ctx.nvidia_only(ctx.span_of(kernel.call).start):
            out.append("  not checked: the AMD build never runs this call")
            continue
        with _without_project():
            cpp = CPP.make_context(ctx.path + ".cu", text.data, settings)
            kernel_lines = sorted({cpp.lines.line_of(offset) for offset in offsets})
            stack = [item for kline in kernel_lines[:1] for item in if_stack_lines(cpp, kline)]
            amd = not cpp.nvidia_only(offsets[0])
            lanes: list[str] = []
            from ..cpp.lanegroups import lane_groups, needs_lane_model

            if needs_lane_model(cpp):
                lanes = lane_groups(cpp).explain(kernel_lines[0])
            inner = analyse_buffer(ctx.path + ".cu", text.data, "cpp", settings, rules, suppress=False)
        out.append(f"  AMD build compiles this kernel line: {'yes' if amd else 'no'}")
        kernel_path = re.escape(ctx.path + ".cu")
        for item in stack + lanes:
            item = re.sub(kernel_path + r":(\d+)", lambda m: f"line {m.group(1)}", item)
            out.append("  " + text.describe(item, ctx.lines))
        previous = ctx.lines.line_text(line - 1) if line > 0 else ""
        for finding in inner:
            span = text.python_span(finding.span)
            if not start <= span.start <= end:
                continue
            kernel_line = finding.line - 1
            kernel_previous = LineIndex(text.data).line_text(kernel_line - 1) if kernel_line > 0 else ""
            suppressed = is_suppressed(finding.code, suppressed_codes(ctx.lines.line_text(line), previous)
                                       + suppressed_codes(finding.source_line, kernel_previous))
            verdict = "dropped: suppressed by a comment" if suppressed else "REPORTED"
            out.append(f"  {finding.code} {finding.name}: {verdict}: {text.describe(finding.message, ctx.lines)}")
    return out
