"""Gates written in C++ itself: ``if constexpr (kIsRocm)``, ``if (USE_ROCM)`` and template
specialisations picked by such a constant. The branch (or specialisation) the AMD build
never takes is NVIDIA-only, exactly like the ``#else`` of a ROCm ``#if``.

A condition counts only when it reads a *platform constant*: a macro the AMD and NVIDIA
builds set differently (the ROCm macros, the NVIDIA ones, a project macro derived from
them), or a ``constexpr``/``const`` constant defined from one (its definition sits under
such an ``#if`` or its value reads such a name), in this file or in a project header it
includes. Its AMD value comes from the file's ``#if`` table (through the project model
where there is one); a condition with any other unknown stays unknown, so nothing is
hidden by guesswork. Only the names that conditions read are looked up.
"""
from __future__ import annotations

import os
import re
from functools import cached_property, lru_cache
from typing import Any, Iterator

from ..lazy_re import lazy_compile
from .lexical import word_matches
from .preprocessor import Conditionals, Evaluator

# The file's CppContext (cpp/context.py imports this module: typed loosely to keep one direction).
CppContext = Any

_CONSTANT = lazy_compile(r"(?:^|[{;])[ \t]*(?:(?:static|inline|constexpr|const)\s+)+(?:bool|int|unsigned|auto|size_t|int\w*_t)\s+"
                         r"(\w+)\s*(?:=\s*([^;{}]+?)|\{\s*([^;{}]*?)\s*\})\s*;", re.MULTILINE)
# _CONSTANT after its first byte: `^` after a newline stands as the newline itself, so the scan
# starts with a character class (re then skips ahead fast; 3-4x faster than _CONSTANT.finditer).
_CONSTANT_SCAN = lazy_compile(r"[\n{;]" + _CONSTANT.pattern[len("(?:^|[{;])"):])
_IDENT = lazy_compile(r"[A-Za-z_]\w*")
_QUALIFIER = lazy_compile(r"\b(?:\w+\s*::\s*)+(?=\w)")
_SPECIALISATION = lazy_compile(rb"template\s*<\s*>\s*(?:struct|class)\s+(\w+)\s*<\s*(true|false|0|1)\s*>")
_NOT_NAMES = frozenset({"true", "false", "sizeof", "defined", "static_cast", "const", "constexpr"})
MAX_HEADERS = 24  # included project headers searched for a constant's definition
MAX_HEADER_BYTES = 1 << 20


class ConstantGates:
    """Per line, the C++ gate that keeps the AMD build out of it (or None). Only the ``if``
    statements and specialisations around a line asked about are evaluated: findings are
    few, conditions many."""

    def __init__(self, ctx: CppContext) -> None:
        self.ctx = ctx
        self.values: dict[str, int | None] = {}  # platform constants found so far
        self.platform_names: set[str] = set()
        self.looked_up: set[str] = set()
        self._lines: dict[int, str | None] = {}
        self._nodes: dict[tuple[int, int], str | None] = {}  # (start, end) of a judged node -> why
        # Whether any condition or specialisation argument of the file reads a platform name
        # (read from the text: a file where none does is never parsed for this).
        source = ctx.source
        names = _condition_names(source)
        for m in _SPECIALISATION.finditer(source) if b"template" in source else ():
            for use in re.finditer(r"\b%s\s*<\s*([^<>]+?)\s*>" % re.escape(m.group(1).decode()), self.text):
                names.update(_IDENT.findall(_QUALIFIER.sub("", use.group(1))))
        self._look_up(names - _NOT_NAMES)
        self.active = bool(self.platform_names)

    @cached_property
    def text(self) -> str:
        return self.ctx.source.decode("utf-8", "replace")

    @cached_property
    def definitions(self) -> "_Definitions":
        return constant_definitions(self.text)

    def _may_define_platform_constants(self) -> bool:
        """A constant of this file is a platform constant only where its value or its #if
        stack reads a platform name: without a project model, one of the configured
        platform macros (searched for once), or one found already."""
        ctx = self.ctx
        if self.platform_names or ctx.model is not None:
            return True
        return bool(_platform_words(ctx.settings)(ctx.source))

    def reason(self, line: int) -> str | None:
        """Why the AMD build never runs this 0-based line, or None."""
        if not self.active:
            return None
        if line not in self._lines:
            self._lines[line] = self._reason(line)
        return self._lines[line]

    def _reason(self, line: int) -> str | None:
        ctx = self.ctx
        start = ctx.lines.line_start(line)
        text = ctx.lines.line_text(line)
        start += len(text.encode()) - len(text.lstrip().encode())
        node = ctx.root.named_descendant_for_byte_range(start, start)
        while node is not None:
            parent = node.parent
            if parent is not None and parent.type == "if_statement":
                why = self._branch(parent, node)
                if why is not None:
                    return why
            if node.type in ("struct_specifier", "class_specifier") and parent is not None \
                    and parent.type == "template_declaration":
                why = self._specialisation(parent, node)
                if why is not None:
                    return why
            node = parent
        return None

    def _branch(self, statement, child) -> str | None:
        """Why ``child`` (a branch of ``statement``) is never taken on AMD, or None."""
        key = (statement.start_byte, child.start_byte)
        if key in self._nodes:
            return self._nodes[key]
        self._nodes[key] = None
        condition = statement.child_by_field_name("condition")
        consequence = statement.child_by_field_name("consequence")
        alternative = statement.child_by_field_name("alternative")
        taken = True if child == consequence else (False if child == alternative else None)
        if condition is None or taken is None:
            return None
        text = self.ctx.node_text(condition).strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        value = self._gate_value(text)
        if value is None or bool(value) == taken:
            return None
        why = f"line {statement.start_point[0] + 1}: {self._explain(text, value)}: this branch is not taken"
        self._nodes[key] = why
        return why

    def _specialisation(self, declaration, node) -> str | None:
        """``template <> struct X<false> {...}`` when every use of ``X<...>`` in the file
        passes a platform constant that is true on AMD (and the converse)."""
        key = (declaration.start_byte, node.start_byte)
        if key in self._nodes:
            return self._nodes[key]
        self._nodes[key] = None
        m = _SPECIALISATION.match(self.ctx.source, declaration.start_byte)
        if m is None:
            return None
        name = m.group(1).decode()
        literal = m.group(2).decode() in ("true", "1")
        values = set()
        for use in re.finditer(r"\b%s\s*<\s*([^<>]+?)\s*>" % re.escape(name), self.text):
            if self.text[max(0, use.start() - 40):use.start()].rstrip().endswith(("struct", "class")):
                continue  # a declaration, not a use
            argument = use.group(1)
            if argument in ("true", "false", "0", "1"):
                continue  # explicit picks
            values.add(self._gate_value(argument))
        if not values or None in values or any(bool(v) == literal for v in values):
            return None
        why = f"every use of {name}<...> here picks {'false' if literal else 'true'} on AMD: " \
              f"the {name}<{m.group(2).decode()}> specialisation is not used"
        self._nodes[key] = why
        return why

    def _gate_value(self, condition: str) -> int | None:
        names = set(_IDENT.findall(_QUALIFIER.sub("", condition))) - _NOT_NAMES
        self._look_up(names)
        if not names & self.platform_names:
            return None
        return _evaluate(condition, self.values, self.ctx.pp)

    def _look_up(self, names: set[str]) -> None:
        """Which of ``names`` are platform macros or constants (this file's, then the
        included headers'), each looked up once."""
        ctx = self.ctx
        new = names - self.looked_up
        if not new:
            return
        self.looked_up |= new
        self.platform_names |= {n for n in new if _platform_macro(ctx, n, ctx.path)}
        local = _constants(ctx, self.definitions, ctx.pp, new, self.platform_names) \
            if self._may_define_platform_constants() else {}
        self.values.update(local)
        self.platform_names |= set(local)
        missing = {n for n in new if n not in self.values and ctx.pp.evaluator.is_defined(n) != 1}
        if missing:
            for name, value in _included_constants(ctx, missing).items():
                self.values.setdefault(name, value)
                self.platform_names.add(name)

    def _explain(self, condition: str, value: int) -> str:
        names = sorted(n for n in set(_IDENT.findall(_QUALIFIER.sub("", condition))) if n in self.platform_names)
        return f"`{condition}` is {'true' if value else 'false'} on AMD ({', '.join(names)})"


_IF_OPEN = lazy_compile(rb"if\s*(?:constexpr\s*)?\(")  # a word start (lexical.word_matches)
_DIRECTIVE_BEFORE_IF = lazy_compile(rb"[ \t]*#[ \t]*")
_PAREN = lazy_compile(rb"[()]")
MAX_CONDITION_BYTES = 2000


def _condition_names(source: bytes) -> set[str]:
    """Every name a C++ ``if`` condition of the file reads, to its closing parenthesis (a
    ``#if (...)`` line is the preprocessor's: the #if table judges it, not this)."""
    names: set[str] = set()
    for m in word_matches(_IF_OPEN, source):
        line_start = source.rfind(b"\n", 0, m.start()) + 1
        if _DIRECTIVE_BEFORE_IF.fullmatch(source, line_start, m.start()):
            continue
        limit = min(len(source), m.end() + MAX_CONDITION_BYTES)
        end = source.find(b")", m.end(), limit)
        if end < 0 or source.find(b"(", m.end(), end) >= 0:  # nested parentheses: count them
            depth, end = 1, limit
            for paren in _PAREN.finditer(source, m.end(), limit):
                depth += 1 if paren.group() == b"(" else -1
                if depth == 0:
                    end = paren.start()
                    break
        names.update(_IDENT.findall(_QUALIFIER.sub("", source[m.end():end].decode("utf-8", "replace"))))
    return names


def could_gate(source: bytes) -> bool:
    """Cheap: the file has an ``if`` or an explicit specialisation at all."""
    return next(word_matches(_IF_OPEN, source), None) is not None or (b"template" in source and
                                                      _SPECIALISATION.search(source) is not None)


@lru_cache(maxsize=8)
def _platform_words_for(names: frozenset[str]):
    from ..literals import literal_matcher

    words = sorted(n.encode() for n in names)
    return literal_matcher(words, dfa=True) if words else (lambda _buffer: [])


def _platform_words(settings):
    """buffer -> where the configured platform macros stand (substrings: more files, never fewer)."""
    return _platform_words_for(frozenset(settings.all_rocm_macros) | frozenset(settings.all_nvidia_macros))


def _platform_macro(ctx: CppContext, name: str, path: str) -> bool:
    """A macro the AMD and the NVIDIA build set differently (the project's answer is kept
    per name: files share it)."""
    settings = ctx.settings
    if name in settings.all_rocm_macros or name in settings.all_nvidia_macros:
        return True
    model = ctx.model
    if model is None:
        return False
    memo = model._memo.setdefault("platform-macro", {})
    if name not in memo:
        amd = model.macro(name).state
        nvidia = model.nvidia_macro(name)
        memo[name] = amd is not None and nvidia is not None and amd != nvidia
    return memo[name]


def _macro_value(pp: Conditionals, name: str) -> int | None:
    evaluator = pp.evaluator
    if evaluator.is_defined(name) == 1:
        return evaluator.defined.get(name)
    return None  # undefined in C++ code is an error, not 0: unknown


def _evaluate(expr: str, values: dict[str, int | None], pp: Conditionals) -> int | None:
    def resolve(name: str) -> tuple[bool | None, int | None]:
        value = values[name] if name in values else _macro_value(pp, name)
        return (None, None) if value is None else (True, value)
    return Evaluator({}, set(), resolve).evaluate(_QUALIFIER.sub("", expr))


def constant_definitions(text: str) -> dict[str, list[tuple[int, str]]]:
    """name -> (0-based line, value text) of each ``const``/``constexpr`` scalar defined."""
    out: dict[str, list[tuple[int, str]]] = {}
    if "const" not in text:
        return out
    line, counted = 0, 0  # lines counted up to ``counted`` (matches come in order)
    for m in _constant_matches(text):
        line += text.count("\n", counted, m.start(1))
        counted = m.start(1)
        out.setdefault(m.group(1), []).append((line, (m.group(2) or m.group(3) or "").strip()))
    return out


def _constant_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_CONSTANT.finditer(text)`` (their groups; a match after a line start
    begins at the newline)."""
    first = _CONSTANT.match(text, 0)
    if first is not None:
        yield first
    yield from _CONSTANT_SCAN.finditer(text, first.end() if first is not None else 0)


def _constants(ctx: CppContext, definitions: dict, pp: Conditionals, names: set[str], platform: set[str]) -> dict:
    """Of ``names``, the constants among ``definitions`` (``constant_definitions``) defined
    from a platform name, with their AMD value (None when the definitions the AMD build
    sees disagree or are unknown)."""
    found: dict[str, set] = {}
    dependent: set[str] = set()
    for name in names & definitions.keys():
        for line, expr in definitions[name]:
            if pp.amd[line] is False:
                continue
            stack = " ".join(b.condition for b in pp.branches_at(line))
            readers = set(_IDENT.findall(stack)) | set(_IDENT.findall(expr))
            if any(n in platform or _platform_macro(ctx, n, ctx.path) for n in readers - _NOT_NAMES):
                dependent.add(name)
            value = _evaluate(expr, {}, pp) if pp.amd[line] is True else None
            found.setdefault(name, set()).add(value)
    return {name: (next(iter(found[name])) if len(found[name]) == 1 else None) for name in dependent}


_Definitions = dict[str, list[tuple[int, str]]]
_HEADER_INFO: dict[str, tuple[int, int, list[str], _Definitions]] = {}  # path -> (mtime, size, includes, constants)


def _header_info(path: str) -> tuple[list[str], _Definitions] | None:
    """A header's includes and the constants it defines (cached by stat: headers repeat)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    cached = _HEADER_INFO.get(path)
    if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
        return cached[2], cached[3]
    if st.st_size > MAX_HEADER_BYTES:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    from .preprocessor import directives

    includes = [d[3].strip('<>" \t') for d in directives(data) if d[2] == "include"]
    defined = constant_definitions(data.decode("utf-8", "replace"))
    if len(_HEADER_INFO) > 8192:
        _HEADER_INFO.clear()
    _HEADER_INFO[path] = (st.st_mtime_ns, st.st_size, includes, defined)
    return includes, defined


def _included_constants(ctx: CppContext, names: set[str]) -> dict[str, int | None]:
    """Platform constants among ``names`` defined in the project headers this file
    includes (a ``namespace``'s too: conditions name them qualified), breadth first."""
    settings, model = ctx.settings, ctx.model
    seen = {os.path.abspath(ctx.path)}
    pending: list[tuple[str, list[str]]] = [(ctx.path, [h for line, h in ctx.pp.includes
                                                        if ctx.pp.amd[line] is not False])]
    out: dict[str, int | None] = {}
    searched = 0
    while pending and searched < MAX_HEADERS and names - set(out):
        includer, includes = pending.pop(0)
        for header in includes:
            if searched >= MAX_HEADERS:  # one includer of a thousand op headers counts too
                break
            path = _resolve(model, includer, header)
            if path is None or path in seen:
                continue
            seen.add(path)
            info = _header_info(path)
            if info is None:
                continue
            searched += 1
            pending.append((path, info[0]))
            wanted = names & info[1].keys()
            if not wanted:
                continue
            for name, value in _header_constants(ctx, path, info[1], wanted).items():
                out.setdefault(name, value)
    return out


_NOT_PLATFORM = object()  # a header constant defined from no platform name
# path -> (stat, model, settings' fingerprint, its #if table, name -> value or _NOT_PLATFORM):
# the files that include a header ask of the same constants (settings by value: a worker
# receives each job's settings as a new object).
_HEADER_CONSTANTS: dict[str, tuple[tuple[int, int], Any, Any, Conditionals, dict[str, Any]]] = {}


def _header_constants(ctx: CppContext, path: str, definitions: _Definitions, wanted: set[str]) -> dict[str, int | None]:
    """Of ``wanted`` (names the header defines), the platform constants with their AMD value;
    each header's ``#if`` table is built once per run and each name judged once."""
    stamp = _HEADER_INFO[path][:2]  # _header_info just read it
    settings, model = ctx.settings, ctx.model
    cached = _HEADER_CONSTANTS.get(path)
    if cached is None or cached[0] != stamp or cached[1] is not model or cached[2] != settings.fingerprint:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return {}
        resolve = model.resolver(path, settings) if model is not None else None
        pp = Conditionals(data, settings.all_rocm_macros, settings.all_nvidia_macros, settings.gate_macro, resolve)
        if len(_HEADER_CONSTANTS) > 256:  # each holds a header's #if table: bounded memory
            _HEADER_CONSTANTS.clear()
        cached = _HEADER_CONSTANTS[path] = (stamp, model, settings.fingerprint, pp, {})
    pp, judged = cached[3], cached[4]
    unjudged = wanted - judged.keys()
    if unjudged:
        found = _constants(ctx, definitions, pp, unjudged, set())
        for name in unjudged:
            judged[name] = found.get(name, _NOT_PLATFORM)
    return {name: judged[name] for name in wanted if judged[name] is not _NOT_PLATFORM}


_RESOLVED: dict[tuple[str, str, str], str | None] = {}


def _resolve(model, includer: str, header: str) -> str | None:
    key = (str(model.root) if model is not None else "", os.path.dirname(includer), header)
    if key not in _RESOLVED:
        if len(_RESOLVED) > 65536:
            _RESOLVED.clear()
        _RESOLVED[key] = _resolve_now(model, includer, header)
    return _RESOLVED[key]


def _resolve_now(model, includer: str, header: str) -> str | None:
    path = os.path.normpath(os.path.join(os.path.dirname(includer), header))
    if not os.path.isfile(path) and model is not None:
        rel = model.rel(includer)
        resolved = model.resolve_include(rel, header) if rel is not None else None
        path = os.path.join(str(model.root), resolved) if resolved else path
    return os.path.abspath(path) if os.path.isfile(path) else None
