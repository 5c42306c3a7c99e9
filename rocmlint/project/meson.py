"""meson.build read with meson's own parser (never run): the sources each target (or
``custom_target``) compiles and the ``-D`` arguments the build adds, each under the
condition of its branch, evaluated three-valued for the ROCm build.

``get_option('x')`` is a selector decided by what its branch does, as in CMake
(``cmake.py``): a branch that asks for HIP (``dependency('hip')``, hipcc, ``.hip`` sources,
HIP/ROCm definitions) makes the option true on ROCm, one that does only CUDA work false.
Everything else (``x.found()``, compiler ids, other options) is unknown unless the
configuration's ``build-options`` sets it."""
from __future__ import annotations

import posixpath
import re
from typing import Any

from ..evidence import KIND_BUILD_FILE, Evidence
from .cmake import _names_platform
from .conditions import TRUE, Cond, SourceUse, and3, describe, or3

_SOURCE = re.compile(r"\.(?:cu|cuh|hip|c|cc|cpp|cxx|h|hpp|inc)$")
_HIP = re.compile(r"(?<![a-z])(?:hip(?:cc|blas|blaslt|rand|sparse|cub)?|rocm|roc(?:blas|prim|wmma)|amdgpu)(?![a-z])"
                  r"|\.hip$|__HIP_PLATFORM_AMD__", re.IGNORECASE)
_CUDA = re.compile(r"(?<![a-z])(?:cuda|cudnn|cublas|cudart|nvcc|cutlass)(?![a-z])|\.cu$", re.IGNORECASE)
_DEFINE = re.compile(r"^-D([A-Za-z_]\w*)(?:=(.*))?$")
MAX_DEPTH = 16


class _Facts:
    def __init__(self) -> None:
        self.uses: list[SourceUse] = []
        self.definitions: dict[str, list[tuple[str, Cond, Evidence]]] = {}
        self.generated: dict[str, Evidence] = {}  # configure_file() outputs on the ROCm path


def _strings(node: Any) -> list[str]:
    """Every string literal under a node (what a branch names)."""
    out = []
    stack = [node]
    while stack:
        current = stack.pop()
        name = type(current).__name__
        if name == "StringNode":
            out.append(current.value)
        elif name in ("IdNode",):
            out.append(current.value)
        for value in vars(current).values() if hasattr(current, "__dict__") else ():
            if isinstance(value, list):
                stack.extend(v for v in value if hasattr(v, "__dict__"))
            elif isinstance(value, dict):
                stack.extend(v for v in value.values() if hasattr(v, "__dict__"))
                stack.extend(k for k in value if hasattr(k, "__dict__"))
            elif hasattr(value, "__dict__") and type(value).__name__.endswith("Node"):
                stack.append(value)
    return out


def _platform(block: Any) -> str | None:
    words = _strings(block)
    hip = any(_HIP.search(w) for w in words)
    cuda = any(_CUDA.search(w) for w in words)
    if hip:
        return "hip"
    return "cuda" if cuda else None


class _Reader:
    def __init__(self, texts: dict[str, str], options: dict[str, str]) -> None:
        self.texts = texts
        self.options = options
        self.facts = _Facts()
        self.learned: dict[str, set[bool]] = {}
        self.parsed: dict[str, Any] = {}

    def program(self, rel: str) -> Any:
        if rel not in self.parsed:
            from mesonbuild import mparser

            try:
                self.parsed[rel] = mparser.Parser(self.texts[rel], rel).parse()
            except Exception:  # noqa: BLE001 - meson's parse errors: no facts from this file
                self.parsed[rel] = None
        return self.parsed[rel]

    def run(self) -> _Facts:
        for rel in sorted(self.texts):
            block = self.program(rel)
            if block is not None:
                self._learn(block)
        if "meson.build" in self.texts:
            self._block(self.program("meson.build"), "meson.build", {}, TRUE, 0)
        return self.facts

    def _learn(self, block: Any) -> None:
        for line in getattr(block, "lines", []):
            if type(line).__name__ == "IfClauseNode":
                for branch in line.ifs:
                    platform = _platform(branch.block)
                    option = _selector_of(branch.condition)
                    if platform is not None and option is not None:
                        name, negated = option
                        self.learned.setdefault(name, set()).add((platform == "hip") != negated)
                    self._learn(branch.block)
                if type(line.elseblock).__name__ == "ElseNode":
                    self._learn(line.elseblock.block)

    # --- evaluation ---------------------------------------------------------------------
    def _block(self, block: Any, rel: str, scope: dict, cond: Cond, depth: int) -> None:
        if block is None or depth > MAX_DEPTH:
            return
        for line in block.lines:
            kind = type(line).__name__
            if kind == "IfClauseNode":
                decided: list[bool | None] = []
                for branch in line.ifs:
                    own = self._condition(branch.condition, scope)
                    where = f"{rel}:{branch.lineno}"
                    text = _render(self.texts[rel], branch.condition)
                    if any(v is True for v in decided):
                        value: bool | None = False
                    elif own is False or all(v is False for v in decided):
                        value = own
                    else:
                        value = None
                    decided.append(value)
                    self._block(branch.block, rel, scope, cond.and_(Cond(value, f"if {text}", where)), depth + 1)
                if type(line.elseblock).__name__ == "ElseNode":
                    value = False if any(v is True for v in decided) else (True if all(v is False for v in decided)
                                                                           else None)
                    self._block(line.elseblock.block, rel, scope,
                                cond.and_(Cond(value, "else", f"{rel}:{line.elseblock.lineno}")), depth + 1)
            elif kind in ("AssignmentNode", "PlusAssignmentNode"):
                name = line.var_name.value
                items = self._items(line.value, rel, scope, cond)
                if kind == "AssignmentNode" and cond.value is True:
                    scope[name] = items
                else:
                    scope[name] = scope.get(name, []) + items
            elif kind == "FunctionNode":
                self._call(line, rel, scope, cond, depth)
            elif kind == "ForeachClauseNode":
                self._block(line.block, rel, scope, cond.and_(Cond(None, "foreach", f"{rel}:{line.lineno}")), depth + 1)

    def _call(self, node: Any, rel: str, scope: dict, cond: Cond, depth: int) -> None:
        name = node.func_name.value
        where = f"{rel}:{node.lineno}"
        folder = rel.rpartition("/")[0]
        args = list(node.args.arguments)
        if name == "subdir" and args and type(args[0]).__name__ == "StringNode":
            child = posixpath.join(folder, args[0].value, "meson.build")
            if child in self.texts:
                self._block(self.program(child), child, scope, cond, depth + 1)
            return
        if name in ("add_project_arguments", "add_global_arguments"):
            for text in _strings(node.args):
                m = _DEFINE.match(text)
                if m:
                    self.facts.definitions.setdefault(m.group(1), []).append(
                        (m.group(2) or "", cond, Evidence(f"{name}('{text}') {describe(cond, '`')}", where, KIND_BUILD_FILE)))
            return
        if name == "configure_file" and cond.value is not False:
            for key, value in node.args.kwargs.items():
                if getattr(key, "value", "") == "output" and type(value).__name__ == "StringNode":
                    self.facts.generated.setdefault(value.value, Evidence(
                        f"configure_file(output: '{value.value}') writes it", where, KIND_BUILD_FILE))
            return
        if name in ("files", "get_option", "dependency", "find_program", "message", "error", "include_directories",
                    "configure_file", "declare_dependency", "project", "set_variable"):
            return
        # A target or a custom_target: its sources (positional and input:/sources: values).
        values = args[1:] if name != "custom_target" else []
        for key, value in node.args.kwargs.items():
            if getattr(key, "value", "") in ("sources", "input", "extra_files"):
                values.append(value)
        for value in values:
            for path, item_cond, origin in self._items(value, rel, scope, TRUE):
                effective = cond.and_(item_cond)
                listed = f"; listed at {origin}" if origin and origin != where else ""
                self.facts.uses.append(SourceUse(path, "", effective, Evidence(
                    f"{name}() compiles it {describe(effective, '`')}{listed}", where, KIND_BUILD_FILE)))

    def _items(self, node: Any, rel: str, scope: dict, cond: Cond) -> list[tuple[str, Cond, str]]:
        """(root-relative source path, condition, where listed) of what an expression names."""
        kind = type(node).__name__
        folder = rel.rpartition("/")[0]
        where = f"{rel}:{getattr(node, 'lineno', 0)}"
        if kind == "StringNode":
            text = node.value
            return [(posixpath.normpath(posixpath.join(folder, text)), cond, where)] if _SOURCE.search(text) else []
        if kind == "IdNode":
            return [(p, cond.and_(c), o) for p, c, o in scope.get(node.value, [])]
        if kind == "ArrayNode":
            out: list[tuple[str, Cond, str]] = []
            for element in node.args.arguments:
                out.extend(self._items(element, rel, scope, cond))
            return out
        if kind == "ArithmeticNode" and node.operation == "+":
            return self._items(node.left, rel, scope, cond) + self._items(node.right, rel, scope, cond)
        if kind == "FunctionNode" and node.func_name.value == "files":
            out = []
            for element in node.args.arguments:
                out.extend(self._items(element, rel, scope, cond))
            return out
        if kind == "FunctionNode" and node.func_name.value == "custom_target":
            self._call(node, rel, scope, cond, 0)
        if kind == "MethodNode" and node.name.value == "process":  # generator.process('x.cu')
            out = []
            for element in node.args.arguments:
                out.extend(self._items(element, rel, scope, cond))
            return out
        return []

    def _condition(self, node: Any, scope: dict) -> bool | None:
        kind = type(node).__name__
        if kind == "NotNode":
            inner = self._condition(node.value, scope)
            return None if inner is None else not inner
        if kind == "AndNode":
            return and3(self._condition(node.left, scope), self._condition(node.right, scope))
        if kind == "OrNode":
            return or3(self._condition(node.left, scope), self._condition(node.right, scope))
        if kind == "ParenthesizedNode":
            return self._condition(node.inner, scope)
        if kind == "BooleanNode":
            return bool(node.value)
        option = _option_of(node)
        if option is not None and not option[1]:
            name = option[0]
            if name in self.options:
                return self.options[name].upper() in ("ON", "TRUE", "1", "YES", "ENABLED")
            learned = self.learned.get(name)
            if learned is not None and len(learned) == 1:
                return next(iter(learned))
            if _names_platform(name) == "cuda" and not learned:
                return False
        return None


def _option_of(node: Any) -> tuple[str, bool] | None:
    """(option name, negated) of ``get_option('x')`` / ``not get_option('x')``."""
    negated = False
    if type(node).__name__ == "NotNode":
        node, negated = node.value, True
    if type(node).__name__ == "FunctionNode" and node.func_name.value == "get_option" and node.args.arguments \
            and type(node.args.arguments[0]).__name__ == "StringNode":
        return node.args.arguments[0].value, negated
    return None


def _selector_of(node: Any) -> tuple[str, bool] | None:
    """The one option a branch condition selects on: ``get_option('x')``, or the only option
    of an ``and`` chain whose other parts test what was found (``nvcc.found()``)."""
    if type(node).__name__ != "AndNode":
        return _option_of(node)
    parts, stack = [], [node]
    while stack:
        current = stack.pop()
        if type(current).__name__ == "AndNode":
            stack.extend((current.left, current.right))
        else:
            parts.append(current)
    options = [o for o in map(_option_of, parts) if o is not None]
    return options[0] if len(options) == 1 else None


def _render(text: str, node: Any) -> str:
    lines = text.splitlines()
    line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
    return re.sub(r"^\s*(?:el)?if\s+", "", line).strip()


def read(texts: dict[str, str], options: dict[str, str] | None = None) -> _Facts:
    """Source uses and definitions of a project's meson.build files (path -> text)."""
    return _Reader({r: t for r, t in texts.items() if r.endswith("meson.build")}, dict(options or {})).run()
