"""Preprocessor conditionals read from the text lines, evaluated three-valued for the AMD build.

tree-sitter mangles ``#if`` blocks that split expressions, so gating is computed here from
the lines alone: every ``#if/#ifdef/#ifndef/#elif/#else/#endif`` chain gets, per branch,
whether the AMD build takes it (True / False / None = unknown), whether it picks code by
wave size, and whether it is one of the gate blocks (``#if defined(M)``) a fix may extend.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from ..lazy_re import lazy_compile
from .platform_names import NVIDIA_TOOLKIT_PREFIXES, value_by_name

# Conditions naming one of these pick code by wave size: wave-size rules stay quiet inside.
WAVE_SIZE_MACRO = lazy_compile(
    r"__GFX\d+__|__gfx\w+__|(?i:wave_?front_?size|wave_?size|warp_?size|wave(?:32|64))"
)
_DIRECTIVE = lazy_compile(rb"^[ \t]*#[ \t]*(\w+)(.*)$", re.DOTALL)
_IDENTIFIER = lazy_compile(r"[A-Za-z_]\w*")
_DEFINE = lazy_compile(r"^(\w+)(?!\()(?:[ \t]+(.*))?$", re.DOTALL)


@dataclass
class Branch:
    line: int  # 0-based line of the directive opening the branch
    kind: str  # if, ifdef, ifndef, elif, else
    condition: str
    amd: bool | None  # does the AMD build take this branch?
    wave_size: bool = False
    end: int = -1  # line of the next directive of the chain (elif/else/endif)


@dataclass
class Chain:
    """One ``#if ... #endif`` group."""

    branches: list[Branch] = field(default_factory=list)
    endif: int = -1
    parent: "Chain | None" = None
    parent_branch: int = -1

    @property
    def start(self) -> int:
        return self.branches[0].line


@dataclass(frozen=True)
class GateBlock:
    """``#if defined(M)`` / [``#else``] / ``#endif`` for the gate macro M (lines, 0-based)."""

    if_line: int
    else_line: int  # -1 when there is no #else
    endif_line: int


def directive_parts(text: bytes) -> tuple[str, bytes]:
    """Name and remainder of a directive from ``logical_lines`` (which yields only directives)."""
    m = _DIRECTIVE.match(text)
    assert m is not None, "logical_lines yields directive lines only"
    raw = m.group(1)
    name = _DIRECTIVE_NAMES.get(raw)
    if name is None:
        name = raw.decode("ascii", "replace")
        if len(_DIRECTIVE_NAMES) < 256:
            _DIRECTIVE_NAMES[raw] = name
    return name, m.group(2)


# One string per directive name (a summary of torch's headers holds 136,000 directives: one
# "include" object each cost 7 MB in the parent, and as many unpickled from the workers)
_DIRECTIVE_NAMES: dict[bytes, str] = {}


@lru_cache(maxsize=1)
def logical_lines(data: bytes) -> tuple[tuple[int, int, bytes], ...]:
    """(first line, last line, text joined over backslash continuations) of each directive,
    skipping lines inside block comments. The last buffer's are kept: the #if table and the
    NVIDIA view of one buffer both read them.

    Only lines holding a directive, ``/*`` or ``*/`` can change anything, so only those are
    looked at (a header of thousands of lines has a few dozen): each is cut out where it
    stands, the buffer is never split into all its lines."""
    out = []
    in_comment = False
    size = len(data)
    find, count, directive = data.find, data.count, _DIRECTIVE.match
    # The next `#`, `/*` and `*/` at or after `pos`, each found by `find` (memchr speed; a regex
    # for the three tries every `*` of the code) and looked for again only once passed.
    next_hash = next_open = next_close = -2
    line_no, pos = 0, 0  # the 0-based number of the line starting at `pos`
    while pos <= size:
        if -1 != next_hash < pos:
            next_hash = find(b"#", pos)
        if -1 != next_open < pos:
            next_open = find(b"/*", pos)
        if -1 != next_close < pos:
            next_close = find(b"*/", pos)
        at = min(next_hash if next_hash >= 0 else size + 1, next_open if next_open >= 0 else size + 1,
                 next_close if next_close >= 0 else size + 1)
        if at > size:
            break
        i = line_no = line_no + count(b"\n", pos, at)
        begin = data.rfind(b"\n", 0, at) + 1
        end = _line_end(data, at, size)
        line = data[begin:end]
        if not in_comment and directive(line):
            first = i
            text = line.rstrip(b"\r")
            while text.endswith(b"\\") and end < size:  # a continuation, and a line after this one
                i += 1
                begin, end = end + 1, _line_end(data, end + 1, size)
                text = text[:-1] + b" " + data[begin:end].rstrip(b"\r")
            out.append((first, i, _strip_comments(text)))
            in_comment = b"/*" in text and _ends_in_comment(text, False)
        else:
            in_comment = _ends_in_comment(line, in_comment)
        line_no, pos = i + 1, end + 1  # the rest of the line can change nothing: the next one
    return tuple(out)


def _line_end(data: bytes, pos: int, size: int) -> int:
    """Offset of the newline ending the line at ``pos`` (``size`` on the last line)."""
    end = data.find(b"\n", pos)
    return size if end < 0 else end


def _ends_in_comment(line: bytes, in_comment: bool) -> bool:
    pos = 0
    while True:
        if in_comment:
            end = line.find(b"*/", pos)
            if end < 0:
                return True
            in_comment, pos = False, end + 2
        else:
            start = line.find(b"/*", pos)
            line_comment = line.find(b"//", pos)
            if start < 0 or (0 <= line_comment < start):
                return False
            in_comment, pos = True, start + 2


def _strip_comments(text: bytes) -> bytes:
    if b"/" not in text:
        return text
    text = _CLOSED_COMMENT.sub(b" ", text)
    text = _OPEN_COMMENT.sub(b"", text)
    return _LINE_COMMENT.sub(b"", text)


# In this order (``//*x*/`` keeps its first slash): closed block comments, an unclosed one, a line comment.
_CLOSED_COMMENT = lazy_compile(rb"/\*.*?\*/")
_OPEN_COMMENT = lazy_compile(rb"/\*.*$")
_LINE_COMMENT = lazy_compile(rb"//.*$")


# --- three-valued #if expressions ---------------------------------------------------
_TOKEN = lazy_compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)|(?P<op>&&|\|\||==|!=|>=|<=|<<|>>|[-+*/%()!<>~&|^?:,]))"
)
# C++'s alternative spellings of operators (<iso646.h> macros in C): operators in #if too
OPERATOR_WORDS = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^", "compl": "~",
                  "not_eq": "!="}
# words of an #if condition that name no macro
NOT_MACROS = frozenset({"defined", "true", "false", *OPERATOR_WORDS})
_PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
               "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def c_integer(text: str) -> int:
    """A C integer literal's value: ``0x1F``, ``017`` (octal), ``42`` (suffixes stripped)."""
    digits = text.rstrip("uUlL")
    if digits[:2] in ("0x", "0X"):
        return int(digits, 16)
    if len(digits) > 1 and digits[0] == "0":
        return int(digits, 8) if all(c in "01234567" for c in digits) else int(digits.lstrip("0") or "0")
    return int(digits)


class _Unparsable(Exception):
    pass


class Evaluator:
    """Evaluates ``#if`` expressions to an int, or None where the AMD build's value is unknown."""

    def __init__(self, defined: "dict[str, int | None]", undefined: set[str],
                 resolve: "Callable[[str], tuple[bool | None, int | None]] | None" = None) -> None:
        self.defined = dict(defined)
        self.undefined = set(undefined)
        self._memo: dict[str, int | None] = {}  # per expression, until a macro changes
        # Asked once per macro not set otherwise: (defined? True/False/None, value).
        self.resolve = resolve
        self._settled: set[str] = set()

    def _settle(self, name: str) -> None:
        if self.resolve is None or name in self._settled:
            return
        self._settled.add(name)
        if name in self.defined or name in self.undefined:
            return
        state, value = self.resolve(name)
        if state is True:
            self.defined[name] = value
        elif state is False:
            self.undefined.add(name)

    def define(self, name: str, value: int | None) -> None:
        """Defined, with its value (None: defined, value not a number we know)."""
        self._memo.clear()
        self._settled.add(name)
        self.undefined.discard(name)
        self.defined[name] = value

    def forget(self, name: str) -> None:
        """Whether ``name`` is defined is no longer known."""
        self._memo.clear()
        self._settled.add(name)
        self.undefined.discard(name)
        self.defined.pop(name, None)

    def undef(self, name: str) -> None:
        self._memo.clear()
        self._settled.add(name)
        self.defined.pop(name, None)
        self.undefined.add(name)

    def is_defined(self, name: str) -> int | None:
        self._settle(name)
        if name in self.defined:
            return 1
        if name in self.undefined:
            return 0
        return None

    def evaluate(self, expr: str) -> int | None:
        """The value of ``expr``; a file repeats its conditions (a fixed file has one
        ``#if defined(<gate>)`` per block), so values are kept until a macro changes."""
        if expr not in self._memo:
            self._memo[expr] = self._evaluate(expr)
        return self._memo[expr]

    def _evaluate(self, expr: str) -> int | None:
        tokens: list[tuple[str, int | str]] = []
        pos = 0
        expr = expr.strip()
        while pos < len(expr):
            m = _TOKEN.match(expr, pos)
            if not m or m.end() == pos:
                return None  # strings, chars, anything odd: unknown
            pos = m.end()
            if m.group("num"):
                tokens.append(("num", c_integer(m.group("num"))))
            elif m.group("id"):
                word = m.group("id")
                tokens.append(("op", OPERATOR_WORDS[word]) if word in OPERATOR_WORDS else ("id", word))
            elif m.group("op"):
                tokens.append(("op", m.group("op")))
        self._tokens, self._pos = tokens, 0
        try:
            value = self._ternary()
            if self._pos != len(tokens):
                return None
            return value
        except (_Unparsable, IndexError, ZeroDivisionError):
            return None

    # recursive descent over self._tokens
    def _peek(self):
        return self._tokens[self._pos] if self._pos < len(self._tokens) else (None, None)

    def _take(self, op: str | None = None):
        tok = self._tokens[self._pos]
        if op is not None and tok != ("op", op):
            raise _Unparsable(op)
        self._pos += 1
        return tok

    def _ternary(self):
        cond = self._binary(1)
        if self._peek() == ("op", "?"):
            self._take()
            a = self._ternary()
            self._take(":")
            b = self._ternary()
            if cond is None:
                return a if a == b else None
            return a if cond else b
        return cond

    def _binary(self, level: int):
        left = self._unary()
        while True:
            kind, op = self._peek()
            prec = _PRECEDENCE.get(op) if kind == "op" else None
            if prec is None or prec < level:
                return left
            self._take()
            right = self._binary(prec + 1)
            left = _apply(op, left, right)

    def _unary(self):
        kind, value = self._peek()
        if kind == "op" and value in ("!", "-", "+", "~"):
            self._take()
            inner = self._unary()
            if inner is None:
                return None
            return {"!": lambda v: int(not v), "-": lambda v: -v, "+": lambda v: v, "~": lambda v: ~v}[value](inner)
        return self._primary()

    def _primary(self):
        kind, value = self._take()
        if kind == "num":
            return value
        if kind == "op" and value == "(":
            inner = self._ternary()
            self._take(")")
            return inner
        if kind == "id":
            if value == "defined":
                if self._peek() == ("op", "("):
                    self._take()
                    _, name = self._take()
                    self._take(")")
                else:
                    _, name = self._take()
                return self.is_defined(name)
            if self._peek() == ("op", "("):  # function-like macro or __has_include: unknown
                depth = 0
                while True:
                    _, tok = self._take()
                    depth += tok == "("
                    depth -= tok == ")"
                    if depth == 0:
                        return None
            if value in ("true", "false"):
                return int(value == "true")
            self._settle(value)
            if value in self.defined:
                return self.defined[value]
            if value in self.undefined:
                return 0  # an undefined identifier is 0 in #if
            return None
        raise _Unparsable(value)


def _apply(op: str, a, b):
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if (a is not None and a != 0) or (b is not None and b != 0):
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None:
        return None
    return {
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b, "==": lambda: int(a == b),
        "!=": lambda: int(a != b), "<": lambda: int(a < b), ">": lambda: int(a > b),
        "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "<<": lambda: a << b,
        ">>": lambda: a >> b, "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
        "/": lambda: int(a / b), "%": lambda: a % b,
    }[op]()


BOTH_WAVE_SIZES = frozenset({32, 64})
_WAVE_COMPARISON = lazy_compile(r"^\(?\s*(\w+)\s*\)?\s*(==|!=|>=|<=|>|<)\s*\(?\s*(\d+)\s*\)?$")
_WAVE64_NAME = lazy_compile(r"__GFX9__|__gfx9\w*__|(?i:wave_?(?:front_?)?(?:size_?)?64)")
_WAVE32_NAME = lazy_compile(r"__GFX1[0-2]__|__gfx1[0-2]\w*__|(?i:wave_?(?:front_?)?(?:size_?)?32)")


def _sizes_selected(kind: str, condition: str) -> frozenset[int] | None:
    """The wave sizes for which a wave-size branch's own condition holds (None: not read)."""
    cond = re.sub(r"\s+", " ", condition.split("//")[0].split("/*")[0]).strip()
    negated = kind == "ifndef"
    if cond.startswith("!"):
        negated, cond = not negated, cond[1:].strip()
    while cond.startswith("(") and cond.endswith(")") and _balanced(cond[1:-1]):
        cond = cond[1:-1].strip()
    sizes: frozenset[int] | None = None
    m = _WAVE_COMPARISON.match(cond)
    if m and WAVE_SIZE_MACRO.search(m.group(1)):
        op, number = m.group(2), int(m.group(3))
        test = {"==": lambda w: w == number, "!=": lambda w: w != number, ">=": lambda w: w >= number,
                "<=": lambda w: w <= number, ">": lambda w: w > number, "<": lambda w: w < number}[op]
        sizes = frozenset(w for w in BOTH_WAVE_SIZES if test(w))
    else:
        name = re.fullmatch(r"(?:defined\s*\(?\s*)?(\w+)\s*\)?", cond)
        if name and _WAVE64_NAME.fullmatch(name.group(1)):
            sizes = frozenset({64})
        elif name and _WAVE32_NAME.fullmatch(name.group(1)):
            sizes = frozenset({32})
    if sizes is None:
        return None
    return BOTH_WAVE_SIZES - sizes if negated else sizes


def gate_polarity(kind: str, condition: str, macro: str) -> bool | None:
    """True for ``#if defined(M)``/``#ifdef M``, False for the negated forms, else None:
    exactly the forms ``unifdef`` resolves for a single macro."""
    cond = re.sub(r"\s+", "", condition)
    if kind == "ifdef":
        return True if cond == macro else None
    if kind == "ifndef":
        return False if cond == macro else None
    while cond.startswith("(") and cond.endswith(")") and _balanced(cond[1:-1]):
        cond = cond[1:-1]
    negated = cond.startswith("!")
    if negated:
        cond = cond[1:]
        while cond.startswith("(") and cond.endswith(")") and _balanced(cond[1:-1]):
            cond = cond[1:-1]
    if cond in (f"defined({macro})", f"defined{macro}"):
        return not negated
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def include_guard(found: list[tuple[int, int, str, str]]) -> str | None:
    """The include-guard macro of a file's directives (``#ifndef G`` / ``#define G`` first,
    ``#endif`` last, closing the ``#ifndef``), or None. Pragmas and includes above the guard
    are common (``#pragma once`` then ``#ifndef _lib_cuh``; hipify's ``#include
    "hip/hip_runtime.h"`` on the first line) and do not unguard the file."""
    skipped = 0
    while skipped < len(found) and found[skipped][2] in ("pragma", "include"):
        skipped += 1
    found = found[skipped:]
    if len(found) >= 3 and found[0][2] == "ifndef" and found[1][2] == "define" and found[-1][2] == "endif":
        name = found[0][3].split()[0] if found[0][3].split() else ""
        if found[1][3].split()[:1] == [name] and _closes_last(found):
            return name
    return None


def _closes_last(found: list[tuple[int, int, str, str]]) -> bool:
    """The ``#if`` opened by the first directive is closed by the last one, not before."""
    depth = 0
    for index, (_first, _last, name, _rest) in enumerate(found):
        if name in ("if", "ifdef", "ifndef"):
            depth += 1
        elif name == "endif":
            depth -= 1
            if depth == 0:
                return index == len(found) - 1
    return False


def directives(data: bytes) -> list[tuple[int, int, str, str]]:
    """(first line, last line, name, rest) of every directive, comments stripped."""
    out = []
    for first, last, text in logical_lines(data):
        name, remainder = directive_parts(text)
        out.append((first, last, name, remainder.decode("utf-8", "replace").strip()))
    return out


def macro_name(rest: str) -> str:
    """The macro a ``#define``/``#undef`` names ("" for a malformed one like ``#define (x)``)."""
    return re.split(r"[\s(]", rest, maxsplit=1)[0]


def define_parts(rest: str) -> tuple[str, str | None, str] | None:
    """(name, parameters or None for an object-like macro, body) of a ``#define``."""
    m = _DEFINE_ANY.match(rest)
    if m is None:
        return None
    return m.group(1), m.group(2), (m.group(3) or "").strip()


_DEFINE_ANY = lazy_compile(r"^(\w+)(?:\(([^)]*)\))?(?:[ \t]+(.*))?$", re.DOTALL)


class ChainWalker:
    """Feeds directives in order: builds the ``#if`` chains, tracks the AMD reach of the
    current position and applies reachable ``#define``/``#undef`` to the evaluator."""

    def __init__(self, evaluator: Evaluator, arch_macro: "Callable[[str], bool] | None" = None) -> None:
        self.evaluator = evaluator
        self.stack: list[Chain] = []
        self.chains: list[Chain] = []
        self.arch_macro = arch_macro  # project macros that select by GPU architecture

    def _wave(self, condition: str) -> bool:
        if WAVE_SIZE_MACRO.search(condition):
            return True
        arch = self.arch_macro
        return arch is not None and any(arch(name) for name in _IDENTIFIER.findall(condition))

    def reach(self) -> bool | None:
        result: bool | None = True
        for chain in self.stack:
            value = chain.branches[-1].amd
            if value is False:
                return False
            if value is None:
                result = None
        return result

    def feed(self, first: int, last: int, name: str, rest: str) -> bool | None:
        """Handles one directive; returns the reach of the position it sits at."""
        evaluator, stack = self.evaluator, self.stack
        if name in ("if", "ifdef", "ifndef"):
            reach = self.reach()
            if name == "if":
                value = evaluator.evaluate(rest)
            else:
                defined = evaluator.is_defined(rest.split()[0]) if rest.split() else None
                value = defined if (name == "ifdef" or defined is None) else 1 - defined
            chain = Chain(parent=stack[-1] if stack else None,
                          parent_branch=len(stack[-1].branches) - 1 if stack else -1)
            chain.branches.append(Branch(first, name, rest, _truth(value), self._wave(rest)))
            stack.append(chain)
            self.chains.append(chain)
            return reach
        if name in ("elif", "else") and stack:
            chain = stack.pop()
            reach = self.reach()
            stack.append(chain)
            chain.branches[-1].end = first
            earlier = [b.amd for b in chain.branches]
            if any(v is True for v in earlier):
                value = False
            else:
                own = True if name == "else" else _truth(evaluator.evaluate(rest))
                value = own if all(v is False for v in earlier) or own is False else None
            wave = chain.branches[0].wave_size or self._wave(rest)
            chain.branches.append(Branch(first, name, rest, value, wave))
            if wave:
                for b in chain.branches:
                    b.wave_size = True
            return reach
        if name == "endif" and stack:
            chain = stack.pop()
            chain.branches[-1].end = first
            chain.endif = last
            return self.reach()
        reach = self.reach()
        if name == "define" and rest:
            parts = define_parts(rest)
            if parts is not None:
                macro, params, body = parts
                if reach is True:
                    evaluator.define(macro, evaluator.evaluate(body) if body and params is None else
                                     (1 if params is None else None))
                elif reach is None and evaluator.is_defined(macro) != 1:
                    evaluator.forget(macro)
        elif name == "undef" and rest:
            if reach is True:
                evaluator.undef(rest.split()[0])
            elif reach is None and evaluator.is_defined(rest.split()[0]) != 0:
                evaluator.forget(rest.split()[0])
        return reach

    def close(self, line_count: int) -> None:
        for chain in self.stack:  # unterminated: runs to the end of the file
            chain.branches[-1].end = line_count
            chain.endif = line_count
        self.stack = []


class Conditionals:
    """Per-line AMD reachability and wave-size awareness of one file.

    ``resolve`` (the project model's AMD value of a macro for this file), when given,
    replaces the rocm/nvidia macro lists. The file's own ``#define``/``#undef`` still win
    from where they stand."""

    def __init__(self, data: bytes, rocm_macros, nvidia_macros, gate_macro: str,
                 resolve: "Callable[[str], tuple[bool | None, int | None]] | None" = None,
                 arch_macro: "Callable[[str], bool] | None" = None) -> None:
        self.line_count = data.count(b"\n") + 1
        self.gate_macro = gate_macro
        self.includes: list[tuple[int, str]] = []  # (line, header) of every #include
        self.defines: dict[str, list[tuple[int, str]]] = {}  # name -> (line, value) of object-like #defines
        self.pragma_once: int = -1
        self.macro_lines: dict[str, list[tuple[int, str]]] = {}  # name -> (line, define|undef)
        found = directives(data)
        defined: dict[str, int | None] = {}
        undefined: set[str] = set()
        self.guard = include_guard(found)
        if resolve is None:  # no project model: a lone file or CUDA code with no HIP build, a port
            defined, undefined = {m: 1 for m in rocm_macros}, set(nvidia_macros)
            undefined |= _defined_only_in_dead_branches(found, defined, undefined)
            resolve = _by_name_in_port
        elif self.guard is not None:  # the file's own guard: undefined where its text is read
            undefined = {self.guard}
        self.evaluator = Evaluator(defined, undefined, resolve)
        walker = ChainWalker(self.evaluator, arch_macro)
        for first, last, name, rest in found:
            walker.feed(first, last, name, rest)
            if name in ("define", "undef") and rest:
                self.macro_lines.setdefault(macro_name(rest), []).append((first, name))
            if name == "define" and rest:
                dm = _DEFINE.match(rest)
                if dm:
                    self.defines.setdefault(dm.group(1), []).append((first, (dm.group(2) or "").strip()))
            elif name == "include":
                hm = re.match(r'[<"]([^>"]+)[>"]', rest)
                if hm:
                    self.includes.append((first, hm.group(1)))
            elif name == "pragma" and rest.split()[:1] == ["once"]:
                self.pragma_once = first
        walker.close(self.line_count)
        self.chains = walker.chains
        self._compute_lines()

    def _compute_lines(self) -> None:
        n = self.line_count
        self.amd: list[bool | None] = [True] * n
        self.wave = [False] * n
        self.gate_amd = [False] * n
        self.gate_blocks: list[GateBlock] = []
        self._block_index: tuple[dict[int, GateBlock], dict[int, GateBlock]] | None = None
        self.depth = [0] * n
        for chain in self.chains:
            for b in range(chain.branches[0].line, min(chain.endif + 1, n)):
                self.depth[b] += 1
            polarity = None
            if len(chain.branches) <= 2 and all(b.kind != "elif" for b in chain.branches):
                first = chain.branches[0]
                polarity = gate_polarity(first.kind, first.condition, self.gate_macro)
            if polarity is True:
                else_line = chain.branches[1].line if len(chain.branches) == 2 else -1
                self.gate_blocks.append(GateBlock(chain.start, else_line, chain.endif))
            for index, branch in enumerate(chain.branches):
                body = range(branch.line + 1, min(branch.end, n))
                amd_gate = polarity is not None and (index == 0) == polarity
                for line in body:
                    if branch.amd is False:
                        self.amd[line] = False
                    elif branch.amd is None and self.amd[line] is True:
                        self.amd[line] = None
                    if branch.wave_size:
                        self.wave[line] = True
                    if amd_gate:
                        self.gate_amd[line] = True

    # queries by 0-based line
    def branches_at(self, line: int) -> list[Branch]:
        """The ``#if`` branches around a line, outermost first."""
        out = []
        for chain in self.chains:
            for branch in chain.branches:
                if branch.line < line < branch.end:
                    out.append(branch)
        return out

    def nvidia_only(self, line: int) -> bool:
        return self.amd[line] is False

    def wave_size_aware(self, line: int) -> bool:
        return self.wave[line]

    def wave_sizes_at(self, line: int) -> frozenset[int]:
        """The AMD wave sizes (of 32 and 64) whose compilation reaches a line, as the
        wave-size chains around it select (``#if WARP_SIZE == 64`` / ``#elif ... == 32`` /
        ``#else #error``): both where no chain decides."""
        sizes = BOTH_WAVE_SIZES
        for chain in self.chains:
            if not chain.branches[0].wave_size or not chain.start < line <= chain.endif:
                continue
            remaining = BOTH_WAVE_SIZES
            for branch in chain.branches:
                own = remaining if branch.kind == "else" else _sizes_selected(branch.kind, branch.condition)
                taken = remaining & own if own is not None else remaining
                if branch.line < line < branch.end:
                    sizes = sizes & taken
                    break
                if own is not None:
                    remaining = remaining - own
        return sizes

    def in_gate_amd_branch(self, line: int) -> bool:
        return self.gate_amd[line]

    def block_ending_at(self, line: int) -> GateBlock | None:
        return self._blocks_by_line()[1].get(line)

    def block_starting_at(self, line: int) -> GateBlock | None:
        return self._blocks_by_line()[0].get(line)

    def _blocks_by_line(self) -> tuple[dict[int, GateBlock], dict[int, GateBlock]]:
        """Gate blocks by their ``#if`` line and by their ``#endif`` line (first wins)."""
        if self._block_index is None:
            starts: dict[int, GateBlock] = {}
            ends: dict[int, GateBlock] = {}
            for block in self.gate_blocks:
                starts.setdefault(block.if_line, block)
                ends.setdefault(block.endif_line, block)
            self._block_index = (starts, ends)
        return self._block_index

    def header_guard(self) -> Chain | None:
        """The ``#ifndef G / #define G ... #endif`` chain wrapping the whole file, if any."""
        if self.guard is None or not self.chains:
            return None
        chain = self.chains[0]
        first = chain.branches[0]
        if first.kind == "ifndef" and len(chain.branches) == 1 and first.condition.split()[:1] == [self.guard]:
            return chain
        return None


def _truth(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def _defined_only_in_dead_branches(found, defined: dict, undefined: set[str]) -> set[str]:
    """Macros this file #defines only in branches the AMD build never takes (and never
    #undefs): undefined on AMD further down the same file too."""
    walker = ChainWalker(Evaluator(defined, undefined))
    reach_of: dict[str, set] = {}
    for first, last, name, rest in found:
        reach = walker.feed(first, last, name, rest)
        if name in ("define", "undef") and rest:
            reach_of.setdefault(macro_name(rest), set()).add(reach if name == "define" else "undef")
    return {m for m, reaches in reach_of.items() if reaches == {False} and m not in defined}


def dead_for_amd(found, rocm_macros, nvidia_macros) -> set[str]:
    """``_defined_only_in_dead_branches`` of a header read alone, under the AMD build's macros."""
    return _defined_only_in_dead_branches(found, {m: 1 for m in rocm_macros}, set(nvidia_macros))


# nvcc's macro; hipify (HIPIFY's and PyTorch's maps) rewrites it to __HIPCC__, which hipcc defines
CUDACC = "__CUDACC__"
CUDACC_IN_PORT = "defined in a port: hipify rewrites __CUDACC__ to __HIPCC__, which hipcc defines"


def _by_name_in_port(name: str) -> tuple[bool | None, int | None]:
    """A macro nothing in the file sets, by the platform its name states (a port's view);
    CUDA/CUTLASS/CuTe architecture macros are never defined by hipcc (a version test such as
    ``CUDA_VERSION >= 11000`` stays undecided: what it guards is porting work)."""
    if name.startswith(NVIDIA_TOOLKIT_PREFIXES):
        return False, None
    if name == CUDACC:
        return True, 1
    value = value_by_name(name, port=True)
    return value, (1 if value else None)


@lru_cache(maxsize=1)
def conditionals(data: bytes, rocm_macros: tuple[str, ...], nvidia_macros: tuple[str, ...],
                 gate_macro: str) -> Conditionals:
    """``Conditionals`` of a buffer, kept for the last one (the fixer's NVIDIA-view proof
    asks for the buffer just analysed)."""
    return Conditionals(data, rocm_macros, nvidia_macros, gate_macro)
