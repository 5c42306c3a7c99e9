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
from typing import Any

from .preprocessor import Conditionals, Evaluator

# The file's CppContext (cpp/context.py imports this module: typed loosely to keep one direction).
CppContext = Any

_CONDITION = re.compile(rb"\bif\s*(?:constexpr\s*)?\(([^;{}]{1,200}?)\)\s*(?:\{|\n|return\b|[A-Za-z_])")
_CONSTANT = re.compile(r"(?:^|[{;])[ \t]*(?:(?:static|inline|constexpr|const)\s+)+(?:bool|int|unsigned|auto|size_t|int\w*_t)\s+"
                       r"(\w+)\s*(?:=\s*([^;{}]+?)|\{\s*([^;{}]*?)\s*\})\s*;", re.MULTILINE)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_QUALIFIER = re.compile(r"\b(?:\w+\s*::\s*)+(?=\w)")
_SPECIALISATION = re.compile(rb"template\s*<\s*>\s*(?:struct|class)\s+(\w+)\s*<\s*(true|false|0|1)\s*>")
_NOT_NAMES = frozenset({"true", "false", "sizeof", "defined", "static_cast", "const", "constexpr"})
MAX_HEADERS = 24  # included project headers searched for a constant's definition
MAX_HEADER_BYTES = 1 << 20


def nvidia_only_lines(ctx: CppContext) -> dict[int, str]:
    """0-based lines only the NVIDIA build compiles or runs, by C++ constant gates, with
    the gate that decides (for ``rocmlint explain``)."""
    source = ctx.source
    conditions = [m.group(1).decode("utf-8", "replace") for m in _CONDITION.finditer(source)]
    specialisations = list(_SPECIALISATION.finditer(source)) if b"template" in source else []
    names = {n for text in conditions for n in _IDENT.findall(_QUALIFIER.sub("", text))} - _NOT_NAMES
    if specialisations:
        text = source.decode("utf-8", "replace")
        for m in specialisations:
            for use in re.finditer(r"\b%s\s*<\s*([^<>]+?)\s*>" % re.escape(m.group(1).decode()), text):
                names.update(_IDENT.findall(_QUALIFIER.sub("", use.group(1))))
        names -= _NOT_NAMES
    if not names:
        return {}
    gates = _Gates(ctx, names)
    if not gates.platform_names:
        return {}
    lines: dict[int, str] = {}
    if conditions:
        lines.update(gates.dead_branches())
    if specialisations:
        lines.update(gates.dead_specialisations(specialisations))
    return lines


class _Gates:
    def __init__(self, ctx: CppContext, names: set[str]) -> None:
        self.ctx = ctx
        self.names = names  # what the file's conditions read
        self.text = ctx.source.decode("utf-8", "replace")
        self.platform_names: set[str] = {n for n in names if _platform_macro(ctx, n, ctx.path)}
        self.values: dict[str, int | None] = {}
        local = _constants(ctx, self.text, ctx.pp, names, self.platform_names)
        self.values.update(local)
        self.platform_names |= set(local)
        missing = {n for n in names if n not in self.values and ctx.pp.evaluator.is_defined(n) != 1}
        if missing:
            for name, value in _included_constants(ctx, missing).items():
                self.values.setdefault(name, value)
                self.platform_names.add(name)

    def _evaluate(self, expr: str) -> int | None:
        return _evaluate(expr, self.values, self.ctx.pp)

    def _gate_value(self, condition: str) -> int | None:
        names = set(_IDENT.findall(_QUALIFIER.sub("", condition)))
        if not names & self.platform_names:
            return None
        return self._evaluate(condition)

    def _explain(self, condition: str, value: int) -> str:
        names = sorted(n for n in set(_IDENT.findall(_QUALIFIER.sub("", condition))) if n in self.platform_names)
        return f"`{condition}` is {'true' if value else 'false'} on AMD ({', '.join(names)})"

    def dead_branches(self) -> dict[int, str]:
        ctx = self.ctx
        lines: dict[int, str] = {}
        for node in ctx.descendants(ctx.root, ("if_statement",)):
            condition = node.child_by_field_name("condition")
            if condition is None:
                continue
            text = ctx.node_text(condition).strip()
            if text.startswith("(") and text.endswith(")"):
                text = text[1:-1]
            value = self._gate_value(text)
            if value is None:
                continue
            dead = node.child_by_field_name("alternative") if value else node.child_by_field_name("consequence")
            if dead is not None:
                why = f"line {node.start_point[0] + 1}: {self._explain(text, value)}: this branch is not taken"
                lines.update(dict.fromkeys(range(dead.start_point[0], ctx.last_line(dead) + 1), why))
        return lines

    def dead_specialisations(self, specialisations: list) -> dict[int, str]:
        """``template <> struct X<false> {...}`` when every use of ``X<...>`` in the file
        passes a platform constant that is true on AMD (and the converse)."""
        ctx = self.ctx
        lines: dict[int, str] = {}
        for m in specialisations:
            name = m.group(1).decode()
            literal = m.group(2).decode() in ("true", "1")
            uses = [u for u in re.finditer(r"\b%s\s*<\s*([^<>]+?)\s*>" % re.escape(name), self.text)
                    if not self.text[max(0, u.start() - 40):u.start()].rstrip().endswith(("struct", "class"))]
            values = set()
            for use in uses:
                argument = use.group(1)
                if argument in ("true", "false", "0", "1"):
                    continue  # the specialisations themselves, or explicit picks
                values.add(self._gate_value(argument))
            if not values or None in values or any(bool(v) == literal for v in values):
                continue
            node = ctx.root.named_descendant_for_byte_range(m.start(), m.end())
            while node is not None and node.type not in ("struct_specifier", "class_specifier", "template_declaration"):
                node = node.parent
            if node is not None:
                while node.parent is not None and node.parent.type == "template_declaration":
                    node = node.parent
                why = f"every use of {name}<...> here picks {'false' if literal else 'true'} on AMD: " \
                      f"the {name}<{m.group(2).decode()}> specialisation is not used"
                lines.update(dict.fromkeys(range(node.start_point[0], ctx.last_line(node) + 1), why))
        return lines


def _platform_macro(ctx: CppContext, name: str, path: str) -> bool:
    """A macro the AMD and the NVIDIA build set differently."""
    settings = ctx.settings
    if name in settings.all_rocm_macros or name in settings.all_nvidia_macros:
        return True
    model = ctx.model
    if model is not None:
        amd = model.macro(name, path).state
        nvidia = model.nvidia_macro(name)
        return amd is not None and nvidia is not None and amd != nvidia
    return False


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


def _constants(ctx: CppContext, text: str, pp: Conditionals, names: set[str], platform: set[str]) -> dict:
    """Of ``names``, the constants this text defines from a platform name, with their AMD
    value (None when the definitions the AMD build sees disagree or are unknown)."""
    if "const" not in text or not any(n in text for n in names):
        return {}
    found: dict[str, set] = {}
    dependent: set[str] = set()
    for m in _CONSTANT.finditer(text):
        name = m.group(1)
        if name not in names:
            continue
        line = text.count("\n", 0, m.start(1))
        if pp.amd[line] is False:
            continue
        expr = (m.group(2) or m.group(3) or "").strip()
        stack = " ".join(b.condition for b in pp.branches_at(line))
        readers = set(_IDENT.findall(stack)) | set(_IDENT.findall(expr))
        if any(n in platform or _platform_macro(ctx, n, ctx.path) for n in readers - _NOT_NAMES):
            dependent.add(name)
        value = _evaluate(expr, {}, pp) if pp.amd[line] is True else None
        found.setdefault(name, set()).add(value)
    return {name: (next(iter(found[name])) if len(found[name]) == 1 else None) for name in dependent}


_HEADER_INFO: dict[str, tuple[int, int, list[str], frozenset[str]]] = {}  # path -> (mtime, size, includes, constants)


def _header_info(path: str) -> tuple[list[str], frozenset[str]] | None:
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
    defined = frozenset(m.group(1) for m in _CONSTANT.finditer(data.decode("utf-8", "replace"))) \
        if b"const" in data else frozenset()
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
            path = _resolve(model, includer, header)
            if path is None or path in seen:
                continue
            seen.add(path)
            info = _header_info(path)
            if info is None:
                continue
            searched += 1
            pending.append((path, info[0]))
            wanted = names & info[1]
            if not wanted:
                continue
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            resolve = model.resolver(path, settings) if model is not None else None
            pp = Conditionals(data, settings.all_rocm_macros, settings.all_nvidia_macros, settings.gate_macro, resolve)
            for name, value in _constants(ctx, data.decode("utf-8", "replace"), pp, wanted, set()).items():
                out.setdefault(name, value)
    return out


def _resolve(model, includer: str, header: str) -> str | None:
    path = os.path.normpath(os.path.join(os.path.dirname(includer), header))
    if not os.path.isfile(path) and model is not None:
        rel = model.rel(includer)
        resolved = model.resolve_include(rel, header) if rel is not None else None
        path = os.path.join(str(model.root), resolved) if resolved else path
    return os.path.abspath(path) if os.path.isfile(path) else None
