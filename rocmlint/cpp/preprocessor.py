"""Preprocessor conditionals read from the text lines, evaluated three-valued for the AMD build.

tree-sitter mangles ``#if`` blocks that split expressions, so gating is computed here from
the lines alone: every ``#if/#ifdef/#ifndef/#elif/#else/#endif`` chain gets, per branch,
whether the AMD build takes it (True / False / None = unknown), whether it picks code by
wave size, and whether it is one of the gate blocks (``#if defined(M)``) a fix may extend.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Conditions naming one of these pick code by wave size: wave-size rules stay quiet inside.
WAVE_SIZE_MACRO = re.compile(
    r"__GFX\d+__|__gfx\w+__|(?i:wave_?front_?size|wave_?size|warp_?size|wave(?:32|64))"
)
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(\w+)(.*)$", re.DOTALL)
_DEFINE = re.compile(r"^(\w+)(?!\()(?:[ \t]+(.*))?$", re.DOTALL)


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
    return m.group(1).decode("ascii", "replace"), m.group(2)


def logical_lines(data: bytes) -> list[tuple[int, int, bytes]]:
    """(first line, last line, text joined over backslash continuations) of each directive,
    skipping lines inside block comments.

    Only lines holding a directive, ``/*`` or ``*/`` can change anything, so only those are
    looked at (a header of thousands of lines has a few dozen)."""
    raw = data.split(b"\n")
    out = []
    in_comment = False
    line_no, pos, done = 0, 0, -1
    for match in _INTERESTING.finditer(data):
        i = line_no = line_no + data.count(b"\n", pos, match.start())
        pos = match.start()
        if i <= done:
            continue
        line = raw[i]
        if not in_comment and _DIRECTIVE.match(line):
            first = i
            text = line.rstrip(b"\r")
            while text.endswith(b"\\") and i + 1 < len(raw):
                i += 1
                text = text[:-1] + b" " + raw[i].rstrip(b"\r")
            out.append((first, i, _strip_comments(text)))
            in_comment = _ends_in_comment(text, False)
        else:
            in_comment = _ends_in_comment(line, in_comment)
        done = i
    return out


# A superset of those lines (any '#'); no anchor, so ``re`` scans fast.
_INTERESTING = re.compile(rb"#|/\*|\*/")


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
    text = re.sub(rb"/\*.*?\*/", b" ", text)
    text = re.sub(rb"/\*.*$", b"", text)
    return re.sub(rb"//.*$", b"", text)


# --- three-valued #if expressions ---------------------------------------------------
_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)|(?P<op>&&|\|\||==|!=|>=|<=|<<|>>|[-+*/%()!<>~&|^?:,]))"
)
_PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
               "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


class _Unparsable(Exception):
    pass


class Evaluator:
    """Evaluates ``#if`` expressions to an int, or None where the AMD build's value is unknown."""

    def __init__(self, defined: dict[str, int], undefined: set[str]) -> None:
        self.defined = dict(defined)
        self.undefined = set(undefined)

    def define(self, name: str, value: int | None) -> None:
        self.undefined.discard(name)
        if value is None:
            self.defined.pop(name, None)
        else:
            self.defined[name] = value

    def undef(self, name: str) -> None:
        self.defined.pop(name, None)
        self.undefined.add(name)

    def is_defined(self, name: str) -> int | None:
        if name in self.defined:
            return 1
        if name in self.undefined:
            return 0
        return None

    def evaluate(self, expr: str) -> int | None:
        tokens: list[tuple[str, int | str]] = []
        pos = 0
        expr = expr.strip()
        while pos < len(expr):
            m = _TOKEN.match(expr, pos)
            if not m or m.end() == pos:
                return None  # strings, chars, anything odd: unknown
            pos = m.end()
            if m.group("num"):
                tokens.append(("num", int(m.group("num"), 0)))
            elif m.group("id"):
                tokens.append(("id", m.group("id")))
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


class Conditionals:
    """Per-line AMD reachability and wave-size awareness of one file."""

    def __init__(self, data: bytes, rocm_macros, nvidia_macros, gate_macro: str) -> None:
        self.line_count = data.count(b"\n") + 1
        self.gate_macro = gate_macro
        self.chains: list[Chain] = []
        self.directive_lines: set[int] = set()
        self.includes: list[tuple[int, str]] = []  # (line, header) of every #include
        self.defines: dict[str, list[tuple[int, str]]] = {}  # name -> (line, value) of object-like #defines
        self.pragma_once: int = -1
        evaluator = Evaluator({m: 1 for m in rocm_macros}, set(nvidia_macros))
        # amd[line] False: NVIDIA-only; wave[line]: inside a wave-size branch; gate_amd[line]:
        # inside the AMD branch of a gate block.
        self._events: list[tuple[int, Chain, int]] = []
        stack: list[Chain] = []
        for first, last, text in logical_lines(data):
            self.directive_lines.update(range(first, last + 1))
            name, remainder = directive_parts(text)
            rest = remainder.decode("utf-8", "replace").strip()
            if name in ("if", "ifdef", "ifndef"):
                if name == "if":
                    value = evaluator.evaluate(rest)
                else:
                    defined = evaluator.is_defined(rest.split()[0]) if rest.split() else None
                    value = defined if (name == "ifdef" or defined is None) else 1 - defined
                chain = Chain(parent=stack[-1] if stack else None,
                              parent_branch=len(stack[-1].branches) - 1 if stack else -1)
                chain.branches.append(Branch(first, name, rest, _truth(value), bool(WAVE_SIZE_MACRO.search(rest))))
                stack.append(chain)
                self.chains.append(chain)
            elif name in ("elif", "else") and stack:
                chain = stack[-1]
                chain.branches[-1].end = first
                earlier = [b.amd for b in chain.branches]
                if any(v is True for v in earlier):
                    value = False
                else:
                    own = True if name == "else" else _truth(evaluator.evaluate(rest))
                    value = own if all(v is False for v in earlier) or own is False else None
                wave = chain.branches[0].wave_size or bool(WAVE_SIZE_MACRO.search(rest))
                chain.branches.append(Branch(first, name, rest, value, wave))
                if wave:
                    for b in chain.branches:
                        b.wave_size = True
            elif name == "endif" and stack:
                chain = stack.pop()
                chain.branches[-1].end = first
                chain.endif = last
            elif name == "define" and rest:
                dm = _DEFINE.match(rest)
                if dm:
                    macro, replacement = dm.group(1), (dm.group(2) or "").strip()
                    self.defines.setdefault(macro, []).append((first, replacement))
                    reach = self._stack_reach(stack)
                    if reach is True:
                        number = evaluator.evaluate(replacement) if replacement else 1
                        evaluator.define(macro, number)
                    elif reach is None and evaluator.is_defined(macro) == 0:
                        evaluator.define(macro, None)
                        evaluator.undefined.discard(macro)
            elif name == "undef" and rest:
                if self._stack_reach(stack) is True:
                    evaluator.undef(rest.split()[0])
            elif name == "include":
                hm = re.match(r'[<"]([^>"]+)[>"]', rest)
                if hm:
                    self.includes.append((first, hm.group(1)))
            elif name == "pragma" and rest.split()[:1] == ["once"]:
                self.pragma_once = first
        for chain in stack:  # unterminated: runs to the end of the file
            chain.branches[-1].end = self.line_count
            chain.endif = self.line_count
        self._compute_lines()

    @staticmethod
    def _stack_reach(stack: list[Chain]) -> bool | None:
        values = [c.branches[-1].amd for c in stack]
        if any(v is False for v in values):
            return False
        return True if all(v is True for v in values) else None

    def _compute_lines(self) -> None:
        n = self.line_count
        self.amd: list[bool | None] = [True] * n
        self.wave = [False] * n
        self.gate_amd = [False] * n
        self.gate_blocks: list[GateBlock] = []
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
    def nvidia_only(self, line: int) -> bool:
        return self.amd[line] is False

    def wave_size_aware(self, line: int) -> bool:
        return self.wave[line]

    def in_gate_amd_branch(self, line: int) -> bool:
        return self.gate_amd[line]

    def block_ending_at(self, line: int) -> GateBlock | None:
        for block in self.gate_blocks:
            if block.endif_line == line:
                return block
        return None

    def block_starting_at(self, line: int) -> GateBlock | None:
        for block in self.gate_blocks:
            if block.if_line == line:
                return block
        return None

    def header_guard(self) -> Chain | None:
        """The ``#ifndef G / #define G ... #endif`` chain wrapping the whole file, if any."""
        if not self.chains:
            return None
        chain = self.chains[0]
        first = chain.branches[0]
        if first.kind == "ifndef" and len(chain.branches) == 1 and chain.parent is None:
            guard = first.condition.split()[0] if first.condition.split() else ""
            if any(line == first.line + 1 for line, _ in self.defines.get(guard, [])):
                return chain
        return None


def _truth(value: int | None) -> bool | None:
    return None if value is None else bool(value)
