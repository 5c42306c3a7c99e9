"""Gates written in C++ itself: ``if constexpr (kIsRocm)``, ``if (USE_ROCM)`` and template
specialisations picked by such a constant. The branch (or specialisation) the AMD build
never takes is NVIDIA-only, exactly like the ``#else`` of a ROCm ``#if``.

A condition counts only when it reads a *platform constant*: a macro the AMD and NVIDIA
builds set differently (the ROCm macros, the NVIDIA ones, a project macro derived from
them), or a ``constexpr``/``const`` constant of this file defined from one (its
definition sits under such an ``#if`` or its value reads such a name). Its AMD value
comes from the file's ``#if`` table (through the project model where there is one); a
condition with any other unknown stays unknown, so nothing is hidden by guesswork.
"""
from __future__ import annotations

import re
from typing import Any

from .preprocessor import Evaluator

# The file's CppContext (cpp/context.py imports this module: typed loosely to keep one direction).
CppContext = Any

_GATE = re.compile(rb"\bif\s*(?:constexpr\s*)?\(")
_CONSTANT = re.compile(r"(?:^|[{;])[ \t]*(?:(?:static|inline|constexpr|const)\s+)+(?:bool|int|unsigned|auto|size_t|int\w*_t)\s+"
                       r"(\w+)\s*(?:=\s*([^;{}]+?)|\{\s*([^;{}]*?)\s*\})\s*;", re.MULTILINE)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_QUALIFIER = re.compile(r"\b(?:\w+\s*::\s*)+(?=\w)")
_SPECIALISATION = re.compile(rb"template\s*<\s*>\s*(?:struct|class)\s+(\w+)\s*<\s*(true|false|0|1)\s*>")


def nvidia_only_lines(ctx: CppContext) -> dict[int, str]:
    """0-based lines only the NVIDIA build compiles or runs, by C++ constant gates, with
    the gate that decides (for ``rocmlint explain``)."""
    source = ctx.source
    if not _GATE.search(source) and b"template" not in source:
        return {}
    gates = _Gates(ctx)
    if not gates.platform_names:
        return {}
    lines: dict[int, str] = {}
    if _GATE.search(source):
        lines.update(gates.dead_branches())
    if b"template" in source:
        lines.update(gates.dead_specialisations())
    return lines


MAX_HEADERS = 24  # included project headers searched for a constant's definition
MAX_HEADER_BYTES = 1 << 20


class _Gates:
    def __init__(self, ctx: CppContext, path: str | None = None, source: bytes | None = None, pp=None,
                 depth: int = 0) -> None:
        """The constants of a file (``ctx``'s own, or a header it includes: ``path``,
        ``source`` and its ``#if`` table ``pp``)."""
        self.ctx = ctx
        self.path = path or ctx.path
        self.source = source if source is not None else ctx.source
        self.pp = pp if pp is not None else ctx.pp
        self.depth = depth
        self.text = self.source.decode("utf-8", "replace")
        pp = self.pp
        settings = ctx.settings
        model = ctx.model
        self.platform_names: set[str] = set()
        for name in set(_IDENT.findall(" ".join(b.condition for c in pp.chains for b in c.branches))) | \
                set(settings.all_rocm_macros) | set(settings.all_nvidia_macros):
            if self._platform_macro(name, model, settings):
                self.platform_names.add(name)
        self.values: dict[str, int | None] = {}
        self._constants()

    def _platform_macro(self, name: str, model, settings) -> bool:
        if name in settings.all_rocm_macros or name in settings.all_nvidia_macros:
            return True
        if model is not None:
            amd = model.macro(name, self.path).state
            nvidia = model.nvidia_macro(name)
            return amd is not None and nvidia is not None and amd != nvidia
        return False

    def _macro(self, name: str) -> int | None:
        evaluator = self.pp.evaluator
        if evaluator.is_defined(name) == 1:
            return evaluator.defined.get(name)
        return None  # undefined in C++ code is an error, not 0: unknown

    def _constants(self) -> None:
        """This file's constants with a platform-dependent value on AMD."""
        found: dict[str, set] = {}
        dependent: set[str] = set()
        pp = self.pp
        for m in _CONSTANT.finditer(self.text):
            line = self.text.count("\n", 0, m.start(1))
            if pp.amd[line] is False:
                continue
            name, expr = m.group(1), (m.group(2) or m.group(3) or "").strip()
            stack = " ".join(b.condition for b in pp.branches_at(line))
            if any(n in self.platform_names for n in _IDENT.findall(stack)) or \
                    any(n in self.platform_names for n in _IDENT.findall(expr)):
                dependent.add(name)
            value = self._evaluate(expr) if pp.amd[line] is True else None
            found.setdefault(name, set()).add(value)
        for name in dependent:
            values = found.get(name, {None})
            self.values[name] = next(iter(values)) if len(values) == 1 else None
        self.platform_names |= dependent
        if self.depth == 0:
            self._included_constants()

    def _included_constants(self) -> None:
        """Platform constants defined in the project headers this file includes (those of a
        ``namespace``/``struct`` too: conditions name them qualified)."""
        import os

        from .preprocessor import Conditionals

        ctx = self.ctx
        settings = ctx.settings
        model = ctx.model
        seen = {os.path.abspath(self.path)}
        pending = [(self.path, self.pp)]
        searched = 0
        while pending and searched < MAX_HEADERS:
            includer, pp = pending.pop(0)
            for line, header in pp.includes:
                if pp.amd[line] is False:
                    continue
                path = os.path.normpath(os.path.join(os.path.dirname(includer), header))
                if not os.path.isfile(path) and model is not None:
                    rel = model.rel(includer)
                    resolved = model.resolve_include(rel, header) if rel is not None else None
                    path = os.path.join(str(model.root), resolved) if resolved else path
                path = os.path.abspath(path)
                if path in seen or not os.path.isfile(path):
                    continue
                seen.add(path)
                try:
                    if os.path.getsize(path) > MAX_HEADER_BYTES:
                        continue
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                searched += 1
                resolve = model.resolver(path, settings) if model is not None else None
                header_pp = Conditionals(data, settings.all_rocm_macros, settings.all_nvidia_macros,
                                         settings.gate_macro, resolve)
                pending.append((path, header_pp))
                if b"const" not in data:
                    continue
                found = _Gates(ctx, path, data, header_pp, self.depth + 1)
                for name, value in found.values.items():
                    if name not in self.values:
                        self.values[name] = value
                        self.platform_names.add(name)

    def _evaluate(self, expr: str) -> int | None:
        expr = _QUALIFIER.sub("", expr)

        def resolve(name: str) -> tuple[bool | None, int | None]:
            if name in self.values:
                value = self.values[name]
                return (None, None) if value is None else (True, value)
            value = self._macro(name)
            return (None, None) if value is None else (True, value)
        return Evaluator({}, set(), resolve).evaluate(expr)

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

    def dead_specialisations(self) -> dict[int, str]:
        """``template <> struct X<false> {...}`` when every use of ``X<...>`` in the file
        passes a platform constant that is true on AMD (and the converse)."""
        ctx = self.ctx
        lines: dict[int, str] = {}
        for m in _SPECIALISATION.finditer(ctx.source):
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
