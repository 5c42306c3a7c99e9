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
from ..lazy_re import lazy_compile
from .cmake import _names_platform
from .conditions import MAX_HIP_BUILD_EVIDENCE, TRUE, Cond, SourceUse, and3, branch_taken, describe, or3
from .templates import template_lines

_SOURCE = lazy_compile(r"\.(?:cu|cuh|hip|c|cc|cpp|cxx|h|hpp|inc)$")
_HIP = lazy_compile(r"(?<![a-z])(?:hip(?:cc|blas|blaslt|rand|sparse|cub)?|rocm|roc(?:blas|prim|wmma)|amdgpu)(?![a-z])"
                    r"|\.hip$|__HIP_PLATFORM_AMD__", re.IGNORECASE)
_CUDA = lazy_compile(r"(?<![a-z])(?:cuda|cudnn|cublas|cudart|nvcc|cutlass)(?![a-z])|\.cu$", re.IGNORECASE)
_DEFINE = lazy_compile(r"^-D([A-Za-z_]\w*)(?:=(.*))?$")
MAX_DEPTH = 16


# What compiles as HIP (a HIP build, design §2e): hipcc/amdclang++ found as a program, HIP's
# language package, .hip sources. Linking the HIP runtime from another compiler is not one.
_HIP_BUILD = lazy_compile(r"(?:^|/)(?:hipcc|amdclang\+\+)$|^hip-lang$|\.hip$|hipify", re.IGNORECASE)


class _Facts:
    def __init__(self) -> None:
        self.uses: list[SourceUse] = []
        self.definitions: dict[str, list[tuple[str, Cond, Evidence]]] = {}
        self.generated: dict[str, Evidence] = {}  # configure_file() outputs on the ROCm path
        # macro -> [(value text or None, cond, evidence)]: what configure_file() writes
        self.template_defines: dict[str, list[tuple[str | None, Cond, Evidence]]] = {}
        self.generated_from: dict[str, str] = {}  # header written -> its template
        self.hip_build: list[Evidence] = []


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
    def __init__(self, texts: dict[str, str], options: dict[str, str], templates: dict[str, str] | None = None,
                 port: bool = False) -> None:
        self.texts = texts
        self.options = options
        self.templates = templates or {}
        self.port = port  # the ROCm build is the CUDA configuration (no HIP build): CUDA branches taken
        self.facts = _Facts()
        self.learned: dict[str, set[bool]] = {}
        self.parsed: dict[str, Any] = {}
        # configuration_data() objects: name -> macro -> [(value text or None, cond, where)]
        self.configurations: dict[str, dict[str, list[tuple[str | None, Cond, str]]]] = {}

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
                if len(self.facts.hip_build) < MAX_HIP_BUILD_EVIDENCE:
                    found = next((w for w in _strings(block) if _HIP_BUILD.search(w)), None)
                    if found is not None:
                        self.facts.hip_build.append(Evidence(f"meson names '{found}'", rel,
                                                             KIND_BUILD_FILE))
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
                        self.learned.setdefault(name, set()).add(branch_taken(platform, self.port) != negated)
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
            elif kind == "AssignmentNode" and type(line.value).__name__ == "FunctionNode" \
                    and line.value.func_name.value == "configuration_data":
                self.configurations[line.var_name.value] = {}
            elif kind == "MethodNode" and type(line.source_object).__name__ == "IdNode" \
                    and line.source_object.value in self.configurations:
                self._configuration_set(line, rel, scope, cond)
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
            keywords: dict[str, Any] = {getattr(key, "value", ""): value for key, value in node.args.kwargs.items()}
            output = _literal(keywords.get("output"), "StringNode")
            if output is not None:
                self.facts.generated.setdefault(output, Evidence(
                    f"configure_file(output: '{output}') writes it", where, KIND_BUILD_FILE))
            configuration = _literal(keywords.get("configuration"), "IdNode")
            if configuration in self.configurations:
                template = _literal(keywords.get("input"), "StringNode")
                path = posixpath.normpath(posixpath.join(folder, template)) if template is not None else None
                self._configure(self.configurations[configuration], path, cond, where)
                if path in self.templates and output is not None:
                    self.facts.generated_from.setdefault(posixpath.normpath(posixpath.join(folder, output)), path)
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

    def _configuration_set(self, node: Any, rel: str, scope: dict, cond: Cond) -> None:
        """``conf.set('X', value)``, ``set10``, ``set_quoted``: what the configuration holds
        under this branch's condition (value None: a value the ROCm build's is not known)."""
        method = node.name.value
        args = list(node.args.arguments)
        if method not in ("set", "set10", "set_quoted") or len(args) < 2 or type(args[0]).__name__ != "StringNode":
            return
        macro, value = args[0].value, args[1]
        kind = type(value).__name__
        where = f"{rel}:{node.lineno}"
        entries = self.configurations[node.source_object.value].setdefault(macro, [])
        if kind == "BooleanNode" or method == "set10" or _option_of(value) is not None:
            truth = bool(value.value) if kind == "BooleanNode" else self._condition(value, scope)
            on = "1" if method == "set10" else ""
            entries.append((on, cond.and_(Cond(truth, f"conf.{method}('{macro}', ...)", where)), where))
            if method == "set10":
                entries.append(("0", cond.and_(Cond(None if truth is None else not truth,
                                                     f"conf.{method}('{macro}', ...)", where)), where))
        elif kind == "NumberNode":
            entries.append((str(value.value), cond, where))
        elif kind == "StringNode":
            entries.append((f'"{value.value}"' if method == "set_quoted" else value.value, cond, where))
        else:
            entries.append((None, cond, where))

    def _configure(self, configuration: dict, template: str | None, cond: Cond, where: str) -> None:
        """The macros a configure_file() writes from a configuration: its ``#mesondefine``
        lines (or, with no input, every entry)."""
        names = list(configuration)
        if template is not None:
            text = self.templates.get(template)
            if text is None:
                return
            names = [t.macro for t in template_lines(text) if t.kind == "mesondefine"]
        for macro in names:
            for value, entry_cond, set_at in configuration.get(macro, ()):
                why = Evidence(f"configure_file() writes {macro} from the configuration set at {set_at} "
                               f"{describe(entry_cond, '`')}", template or where, KIND_BUILD_FILE)
                self.facts.template_defines.setdefault(macro, []).append((value, cond.and_(entry_cond), why))

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
                return self.port
        return None


def _literal(node: Any, kind: str) -> Any:
    """The value of a node of this kind (a string, a name), else None."""
    return node.value if node is not None and type(node).__name__ == kind else None


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


def read(texts: dict[str, str], options: dict[str, str] | None = None, templates: dict[str, str] | None = None,
         port: bool = False) -> _Facts:
    """Source uses and definitions of a project's meson.build files (path -> text), with the
    templates its configure_file() calls read; ``port``: CUDA branches are taken."""
    return _Reader({r: t for r, t in texts.items() if r.endswith("meson.build")}, dict(options or {}), templates,
                   port).run()
