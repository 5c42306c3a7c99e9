"""Index ranges of shared arrays at 64 and 32 lanes (ROC211): an extent computed from a 32-lane
count (``[32]``, ``[64]`` as 2 x 32, ``[1024 / 32]``, ``[WARP_SIZE]``) indexed by an
expression that grows with the wave size (``2 * tid - lane + warpSize``, ``__lane_id()``,
``tid / warpSize`` with more waves than slots) is written past its end on every 64-lane GPU.

Interval arithmetic over the index text, at each wave size: ``threadIdx.x`` in [0, 1023]
(narrowed by the guards around the access: ``if (threadIdx.x < warpSize)``, an early
``return``), ``warpSize`` the wave size, ``__lane_id()`` in [0, size - 1], locals assigned
once, loop variables, and constants the project defines. What cannot be bounded is unknown
(None): no finding."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

from ..lazy_re import lazy_compile

if TYPE_CHECKING:
    from .context import CppContext

WAVE_SIZES = (64, 32)
MAX_THREADS = 1024
_DEPTH = 5
_TOKEN = lazy_compile(r"\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*(?:\s*\.\s*[xyz]\b)?(?:\s*\(\s*\))?|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|()<>!~?:])")
_INT_SUFFIX = lazy_compile(r"[uUlL]+$")
_SHARED = lazy_compile(rb"__shared__\s+(?:(?:volatile|const|static)\s+)*[\w:<>, ]+?[\s*&]+(\w+)\s*\[([^\]\n;]+)\]\s*(?:\[[^\]\n]*\]\s*)?;")
_TYPES = r"(?:const\s+)?(?:int|unsigned(?:\s+int)?|auto|uint32_t|int32_t|size_t|long|unsigned\s+long)"

Interval = tuple[int, int]
NameValue = Callable[[str, int, "int | None"], "Interval | None"]  # (name, wave size, thread) -> range


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...] | None:
    """The tokens of an expression, or None where something is not read (casts, calls, [])."""
    found = _TOKEN.findall(text)
    if "".join(t.strip() for t in found) != re.sub(r"\s+", "", text):
        return None
    return tuple(t.strip() for t in found)


@dataclass(frozen=True)
class WaveExtent:
    """A shared array whose index reaches past its extent at 64 lanes and not at 32."""
    name: str
    extent_span: tuple[int, int]  # byte span of the extent expression in the declaration
    extent: dict[int, int]  # wave size -> extent
    index: str  # the index expression, as written
    index_at: int  # its byte offset
    reach: dict[int, Interval]  # wave size -> the index's range
    guards: tuple[str, ...]
    needed: int  # the extent every access of the array needs on a 64-lane wave
    through: str = ""  # the helper parameter the access goes through, or ""


class _Env:
    """What an expression is evaluated with: the wave size, one thread (or None: any), names."""
    __slots__ = ("wave", "thread", "names")

    def __init__(self, wave: int, thread: int | None, names: NameValue) -> None:
        self.wave, self.thread, self.names = wave, thread, names


Compiled = Callable[[_Env], "Interval | None"]


class _Compiler:
    """An expression's text compiled once into a function of an ``_Env`` (evaluated per thread,
    a thousand times an access: parsing once keeps that cheap)."""

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self.tokens, self.pos = tokens, 0

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self) -> str:
        self.pos += 1
        return self.tokens[self.pos - 1]

    def condition(self, level: int = 0) -> Callable[[_Env], "bool | None"]:
        """``||`` binds looser than ``&&``; then ``!``, parentheses and comparisons."""
        if level == 2:
            return self._not()
        word, join = (("||", _or), ("&&", _and))[level]
        left = self.condition(level + 1)
        while self._peek() == word:
            self._take()
            left = join(left, self.condition(level + 1))
        return left

    def _not(self) -> Callable[[_Env], "bool | None"]:
        if self._peek() == "!":
            self._take()
            inner = self._not()
            return lambda env: None if (v := inner(env)) is None else not v
        if self._peek() == "(":  # a parenthesised condition, or an expression compared after it
            start = self.pos
            self._take()
            try:
                inner = self.condition()
                if self._peek() == ")" and (self.pos + 1 == len(self.tokens) or
                                            self.tokens[self.pos + 1] in ("&&", "||", ")")):
                    self._take()
                    return inner
            except (IndexError, ValueError):
                pass
            self.pos = start
        left = self.expression()
        if self._peek() in _COMPARE:
            test = _COMPARE[self._take()]
            right = self.expression()
            return lambda env: _compare(test, left(env), right(env))
        return lambda env: None if (v := left(env)) is None or v[0] != v[1] else v[0] != 0

    def expression(self, level: int = 0) -> Compiled:
        """Binary operators by precedence, loosest first (``_LEVELS``), then unary ones."""
        if level == len(_LEVELS):
            return self._unary()
        left = self.expression(level + 1)
        while self._peek() in _LEVELS[level]:
            op = _LEVELS[level][self._take()]
            left = _binary(op, left, self.expression(level + 1))
        return left

    def _unary(self) -> Compiled:
        token = self._peek()
        if token == "-":
            self._take()
            inner = self._unary()
            return lambda env: None if (v := inner(env)) is None else (-v[1], -v[0])
        if token == "+":
            self._take()
            return self._unary()
        return self._atom()

    def _atom(self) -> Compiled:
        token = self._take()
        if token == "(":
            inner = self.expression()
            if self._take() != ")":
                raise ValueError("unbalanced")
            return inner
        if token[0].isdigit():
            number = int(_INT_SUFFIX.sub("", token), 0)
            return lambda env: (number, number)
        atom = re.sub(r"\s+", "", token)
        if atom == "warpSize":
            return lambda env: (env.wave, env.wave)
        if atom == "__lane_id()":
            return lambda env: (0, env.wave - 1) if env.thread is None else (env.thread % env.wave,) * 2
        if atom == "threadIdx.x":
            return lambda env: (0, MAX_THREADS - 1) if env.thread is None else (env.thread, env.thread)
        if atom == "threadIdx.y":
            return lambda env: (0, MAX_THREADS - 1)
        if atom == "threadIdx.z":
            return lambda env: (0, 63)
        if atom in ("blockDim.x", "blockDim.y"):
            return lambda env: (1, MAX_THREADS)
        if re.fullmatch(r"[A-Za-z_]\w*", atom):
            return lambda env: env.names(atom, env.wave, env.thread)
        return lambda env: None


_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _compare(test: Callable[[int, int], bool], left: Interval | None, right: Interval | None) -> bool | None:
    """A comparison of two ranges: True or False where every pair of values agrees."""
    if left is None or right is None:
        return None
    if test is _COMPARE["=="] or test is _COMPARE["!="]:
        if left[0] == left[1] and right[0] == right[1]:
            return test(left[0], right[0])
        if left[1] < right[0] or right[1] < left[0]:  # disjoint: never equal
            return test is _COMPARE["!="]
        return None
    corners = {test(a, b) for a in left for b in right}  # an ordering: the corners decide
    return corners.pop() if len(corners) == 1 else None


def _or(left, right):
    def run(env):
        a, b = left(env), right(env)
        return True if (a or b) else (None if a is None or b is None else False)
    return run


def _and(left, right):
    def run(env):
        a, b = left(env), right(env)
        return False if (a is False or b is False) else (None if a is None or b is None else True)
    return run


def _binary(op: Callable[[Interval, Interval], "Interval | None"], left: Compiled, right: Compiled) -> Compiled:
    def run(env: _Env) -> Interval | None:
        a, b = left(env), right(env)
        return None if a is None or b is None else op(a, b)
    return run


def _add(a: Interval, b: Interval) -> Interval:
    return (a[0] + b[0], a[1] + b[1])


def _subtract(a: Interval, b: Interval) -> Interval:
    return (a[0] - b[1], a[1] - b[0])


def _multiply(a: Interval, b: Interval) -> Interval:
    corners = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return (min(corners), max(corners))


def _divide(a: Interval, b: Interval) -> Interval | None:
    return (a[0] // b[1], a[1] // b[0]) if b[0] > 0 and a[0] >= 0 else None


def _modulo(a: Interval, b: Interval) -> Interval | None:
    if b[0] <= 0 or a[0] < 0:
        return None
    if a[0] == a[1] and b[0] == b[1]:
        return (a[0] % b[0],) * 2
    return (0, min(a[1], b[1] - 1))


def _and_bits(a: Interval, b: Interval) -> Interval | None:
    if a[0] < 0 or b[0] < 0:
        return None
    if a[0] == a[1] and b[0] == b[1]:
        return (a[0] & b[0],) * 2
    return (0, min(a[1], b[1]))


def _shift_right(a: Interval, b: Interval) -> Interval | None:
    return (a[0] >> b[0], a[1] >> b[0]) if b[0] == b[1] and b[0] >= 0 and a[0] >= 0 else None


def _shift_left(a: Interval, b: Interval) -> Interval | None:
    return (a[0] << b[0], a[1] << b[0]) if b[0] == b[1] and b[0] >= 0 and a[0] >= 0 else None


# C's binary operators rocmlint ranges, loosest binding first
_LEVELS: tuple[dict[str, Callable[[Interval, Interval], "Interval | None"]], ...] = (
    {"&": _and_bits}, {">>": _shift_right, "<<": _shift_left}, {"+": _add, "-": _subtract},
    {"*": _multiply, "/": _divide, "%": _modulo})


@lru_cache(maxsize=8192)
def _compiled(text: str, as_condition: bool):
    """``text`` compiled as an expression or as a condition; None where it is not read whole."""
    tokens = _tokens(text)
    if not tokens:
        return None
    compiler = _Compiler(tokens)
    try:
        found = compiler.condition() if as_condition else compiler.expression()
    except (IndexError, ValueError):
        return None
    return found if compiler.pos == len(tokens) else None


def _run(text: str, as_condition: bool, wave: int, names: NameValue, thread: int | None):
    compiled = _compiled(text, as_condition)
    if compiled is None:
        return None
    try:
        return compiled(_Env(wave, thread, names))
    except (ZeroDivisionError, ValueError, OverflowError):
        return None


def evaluate(text: str, wave: int, names: NameValue, thread: int | None = None) -> Interval | None:
    """The range of an expression's value (None: not known)."""
    return _run(text, False, wave, names, thread)


def holds(text: str, wave: int, names: NameValue, thread: int | None = None) -> bool | None:
    """Whether a condition holds (None: not known)."""
    return _run(text, True, wave, names, thread)


def _matching(text: bytes, start: int) -> int | None:
    """The offset of the ``]`` closing the ``[`` at ``start``."""
    depth = 0
    for i in range(start, min(len(text), start + 400)):
        if text[i] == ord("["):
            depth += 1
        elif text[i] == ord("]"):
            depth -= 1
            if depth == 0:
                return i
    return None


def _guards(ctx: "CppContext", offset: int, function) -> list[str]:
    """The conditions of the ``if`` statements whose body holds ``offset``, and the negated
    conditions of early exits (``if (threadIdx.x >= 32) return;``) before it."""
    node = ctx.root.named_descendant_for_byte_range(offset, offset)
    found = []
    child = node
    parent = node.parent if node is not None else None
    while parent is not None and parent != function:
        if parent.type in ("if_statement", "conditional_expression"):
            condition = parent.child_by_field_name("condition")
            text = ctx.node_text(condition).strip() if condition is not None else ""
            if parent.child_by_field_name("consequence") == child and text:
                found.append(text)
            elif parent.child_by_field_name("alternative") in (child, child.parent) and text:
                found.append(f"!({text})")  # the else branch: where the condition is false
        child, parent = parent, parent.parent
    before = ctx.source[function.start_byte:offset].decode("utf-8", "replace")
    for m in re.finditer(r"\bif\s*\(([^;{}]+?)\)\s*return\b", before):
        found.append(f"!({m.group(1).strip()})")  # an early exit: the code after it runs where it is false
    return found


def _function_of(node):
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node


class _Names:
    """A function's names as values: a local assigned once, or by top-level statements in order
    (``int idx = ...; idx += warpSize;``) up to the access, a loop variable, or a constant."""

    def __init__(self, source: bytes, function, constant: Callable[[str], str | None]) -> None:
        self.start = function.start_byte
        self.body = source[function.start_byte:function.end_byte].decode("utf-8", "replace")
        self.constant = constant
        self.memo: dict[tuple[str, int, int | None, int], Interval | None] = {}
        self._depths: dict[tuple[str, int], int] = {}

    def at(self, offset: int) -> NameValue:
        """Values as they stand at byte ``offset`` of the file."""
        return lambda atom, wave, thread: self._value(atom, wave, thread, offset - self.start, 0)

    def _depth(self, position: int) -> int:
        key = ("depth", position)
        if key not in self._depths:
            text = self.body[:position]
            self._depths[key] = text.count("{") - text.count("}")
        return self._depths[key]

    def _value(self, atom: str, wave: int, thread: int | None, before: int, depth: int) -> Interval | None:
        key = (atom, wave, thread, before)
        if key not in self.memo:
            self.memo[key] = None if depth > _DEPTH else self._compute(atom, wave, thread, before, depth)
        return self.memo[key]

    @lru_cache(maxsize=None)  # noqa: B019 - one _Names per function and run: its cache goes with it
    def _definitions(self, atom: str) -> tuple[list, list, "re.Match[str] | None"]:
        """The declarations, later writes and ``for`` header of a name in the function."""
        word = re.escape(atom)
        declared = list(re.finditer(r"\b" + _TYPES + r"\s+" + word + r"\s*=\s*([^;,]+)[;,]", self.body))
        writes = list(re.finditer(r"(?<![\w.])" + word + r"\s*((?:[-+*/%&|^]|<<|>>)?=)(?!=)\s*([^;]+);|\+\+\s*" +
                                  word + r"\b|\b" + word + r"\s*\+\+", self.body))
        loop = re.search(r"\bfor\s*\(\s*" + _TYPES + r"\s+" + word + r"\s*=\s*([^;]+);\s*" + word +
                         r"\s*(<|<=)\s*([^;]+);", self.body)
        return declared, writes, loop

    def _compute(self, atom: str, wave: int, thread: int | None, before: int, depth: int) -> Interval | None:

        def inner(text: str, at: int) -> Interval | None:
            return evaluate(text, wave, lambda a, w, t: self._value(a, w, t, at, depth + 1), thread)

        declared, writes, loop = self._definitions(atom)
        if len(declared) == 1:
            later = [w for w in writes if w.start() > declared[0].end() - 2]
            if not later:
                return inner(declared[0].group(1), declared[0].start())
            # straight-line updates in the function body only (not in a loop or a branch)
            if all(w.group(1) in ("=", "+=", "-=") and self._depth(w.start()) == 1 for w in later) and \
                    self._depth(declared[0].start()) == 1:
                value = inner(declared[0].group(1), declared[0].start())
                for w in later:
                    if w.start() >= before or value is None:
                        break
                    step = inner(w.group(2), w.start())
                    if step is None:
                        return None
                    value = step if w.group(1) == "=" else (
                        (value[0] + step[0], value[1] + step[1]) if w.group(1) == "+=" else
                        (value[0] - step[1], value[1] - step[0]))
                return value
            return None
        if loop is not None:
            start, end = inner(loop.group(1), loop.start()), inner(loop.group(3), loop.start())
            if start is not None and end is not None:
                return (start[0], end[1] - (1 if loop.group(2) == "<" else 0))
            return None
        text = self.constant(atom)
        if text is not None and text != atom:
            return inner(text, 0)
        return None


Guard = tuple[str, NameValue]  # a condition, and the names it is read with


Access = tuple[str, int, tuple[Guard, ...], NameValue, str]  # index, offset, guards, names, through


def _accesses(ctx: "CppContext", array: bytes, function, skip: tuple[int, int], names: _Names,
              outer: tuple[Guard, ...], through: str = "") -> list[Access]:
    """``array[...]`` in ``function``: (index, offset, guards, names at the access, the helper
    it is reached through or "")."""
    source = ctx.source
    out = []
    for access in re.finditer(rb"\b" + re.escape(array) + rb"\s*\[", source[function.start_byte:function.end_byte]):
        at = function.start_byte + access.end() - 1
        if skip[0] <= at < skip[1] or not ctx.in_code(at):
            continue
        close = _matching(source, at)
        if close is None:
            continue
        values = names.at(at)
        guards = outer + tuple((g, values) for g in _guards(ctx, at, function))
        out.append((source[at + 1:close].decode("utf-8", "replace").strip(), at + 1, guards, values, through))
    return out


def _helper_accesses(ctx: "CppContext", array: bytes, function, names: _Names,
                     constant: Callable[[str], str | None]) -> list[Access]:
    """The array handed to a helper of this file (``warp_scan(v, sdata)``): the helper's
    accesses through that parameter, under the guards around the call."""
    from .dataflow import call_arguments, callee_name, declared_identifier, function_declarator, parameter_declarations
    from .lane_extraction import function_name

    out = []
    definitions = {function_name(ctx, f): f for f in ctx.descendants(ctx.root, {"function_definition"})}
    for call in ctx.descendants(function, {"call_expression"}):
        arguments = call_arguments(call)
        position = next((i for i, a in enumerate(arguments) if ctx.node_text(a).strip() == array.decode()), None)
        helper = definitions.get(callee_name(ctx, call))
        if position is None or helper is None or helper == function:
            continue
        declarator = function_declarator(helper)
        parameters = list(parameter_declarations(declarator)) if declarator is not None else []
        if position >= len(parameters):
            continue
        parameter = declared_identifier(parameters[position].child_by_field_name("declarator"))
        if parameter is None:
            continue
        values = names.at(call.start_byte)
        outer = tuple((g, values) for g in _guards(ctx, call.start_byte, function))
        through = (f"`{ctx.node_text(parameter)}` of `{function_name(ctx, helper)}` (passed at line "
                   f"{ctx.line_of(call.start_byte) + 1})")
        out += _accesses(ctx, ctx.node_text(parameter).encode(), helper, (0, 0), _Names(ctx.source, helper, constant),
                         outer, through)
    return out


_WAVE_WORD = lazy_compile(r"\b(?:warpSize|__lane_id|\w*(?:WARP|WAVE)\w*)\b")
_WORD = lazy_compile(r"[A-Za-z_]\w*")


def _wave_dependent(names: _Names, text: str, depth: int = 0) -> bool:
    """The expression reads the wave size or a lane, directly or through the locals it names."""
    if _WAVE_WORD.search(text):
        return True
    if depth >= _DEPTH:
        return False
    for word in set(_WORD.findall(text)):
        declared, writes, loop = names._definitions(word)
        sources = [d.group(1) for d in declared] + [w.group(2) or "" for w in writes] + \
            ([loop.group(1), loop.group(3)] if loop is not None else [])
        if any(_wave_dependent(names, t, depth + 1) for t in sources):
            return True
    return False


def wave_extents(ctx: "CppContext", constant: Callable[[str], str | None],
                 unjudged: list[tuple[str, int]] | None = None) -> list[WaveExtent]:
    """Every ``__shared__`` array of the file indexed past its extent at 64 lanes, not at 32,
    here or in a helper it is handed to. ``constant(name)``: a name's AMD-build value as text.
    ``unjudged`` receives (array, offset) for an array sized from 32 with a lane index whose
    range could not be bounded: "no findings" does not cover it."""
    found: list[WaveExtent] = []
    source = ctx.source
    for declaration in _SHARED.finditer(source):
        if not ctx.in_code(declaration.start()) or ctx.nvidia_only(declaration.start()):
            continue
        name = declaration.group(1).decode()
        node = ctx.root.named_descendant_for_byte_range(declaration.start(1), declaration.end(1))
        function = _function_of(node)
        if function is None:
            continue
        names = _Names(source, function, constant)
        extents = {}
        for wave in WAVE_SIZES:
            value = evaluate(declaration.group(2).decode(), wave, names.at(declaration.start()), 0)
            if value is None or value[0] != value[1]:
                break
            extents[wave] = value[0]
        if len(extents) != len(WAVE_SIZES):
            continue
        seen = _accesses(ctx, declaration.group(1), function, (declaration.start(), declaration.end()), names, ()) + \
            _helper_accesses(ctx, declaration.group(1), function, names, constant)
        accesses = []
        unbounded = False
        for index, at, guards, values, through in seen:
            reach: dict[int, Interval] = {}
            for wave in WAVE_SIZES:
                found_range = _reach(wave, index, guards, values)
                if found_range is not None:
                    reach[wave] = found_range
            if len(reach) == len(WAVE_SIZES):
                accesses.append((index, at, reach, guards, through))
            elif not unbounded and extents[32] in (32, 64) and _wave_dependent(names, index):
                unbounded = True
        widest = max((r[64][1] for _i, _a, r, _g, _t in accesses), default=-1)
        for index, at, reach, guards, through in accesses:
            if reach[64][1] >= extents[64] and reach[32][1] < extents[32] and reach[64][0] >= 0:
                found.append(WaveExtent(name, (declaration.start(2), declaration.end(2)), extents, index, at, reach,
                                        tuple(g for g, _v in guards), widest + 1, through))
                break
        else:
            if unbounded and unjudged is not None:
                unjudged.append((name, declaration.start()))
    return found


def _reach(wave: int, index: str, guards: tuple[Guard, ...], name_value: NameValue) -> Interval | None:
    """The index's range over the threads of a block (threadIdx.x 0-1023) that pass the guards,
    thread by thread, so that a lane and the thread index it came from stay one value."""
    low = high = None
    for thread in range(MAX_THREADS):
        if any(holds(guard, wave, values, thread) is False for guard, values in guards):
            continue
        value = evaluate(index, wave, name_value, thread)
        if value is None:
            return None
        low = value[0] if low is None else min(low, value[0])
        high = value[1] if high is None else max(high, value[1])
    return None if low is None or high is None else (low, high)
