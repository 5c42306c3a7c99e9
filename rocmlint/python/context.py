"""What Python rules see of a file: the stdlib ``ast`` tree and helpers around anchors.

Rules look around their anchors (``hits()``) instead of walking whole files: ``node_path``
descends by position from the module to the innermost node at an offset, so nothing is
built per node for the whole file (big files stay fast). Name resolution and scope walks
are computed lazily, only when a rule asks.
"""
from __future__ import annotations

import ast
import bisect
from functools import cached_property
from typing import Protocol, TypeGuard

from ..lazy_re import lazy_compile
from ..literals import word_starts
from ..model import Span
from ..rule import FileContext
from ..evidence import Evidence, Verdict
from .backends import nvidia_only_import
from .flow import called_name, containing_list
from .gates import ROCM_MARK, Fact, GateEvaluator, conditions_on_path, dotted_name
from .nodes import child_nodes, walk
from .platform_sources import platform_selector_variables

_IMPORT_WORD = lazy_compile(rb"import\b")  # a literal first: fast
_NO_POSITION = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# A back end's availability test: false on ROCm, the back end never runs there.
_AVAILABILITY_METHODS = ("is_available", "available", "is_supported")
SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class Located(Protocol):
    """An ast node with its own source position, as ``ast.parse`` fills it in."""

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int


def has_position(node: ast.AST) -> TypeGuard[Located]:
    """The node carries its own source position (expressions, statements, ``arg``, ...)."""
    return getattr(node, "end_lineno", None) is not None and getattr(node, "lineno", None) is not None


class PythonContext(FileContext):
    language = "python"

    def __init__(self, path: str, source: bytes, settings, tree: ast.Module) -> None:
        super().__init__(path, source, settings)
        self.tree = tree
        self._ranges: dict[int, tuple[int, int] | None] = {}
        self._paths: dict[int, list[ast.AST]] = {}
        self._reach: dict[int, tuple[bool, bool]] = {}
        self.cache: dict = {}  # per-file memo for fix helpers (gate plan, ...)

    def release(self) -> None:
        super().release()
        self.cache.clear()

    # Positions ----------------------------------------------------------------------
    def offset_of(self, lineno: int, col_offset: int) -> int:
        """Byte offset of an ast (1-based line, UTF-8 byte column) position."""
        return self.lines.line_starts[lineno - 1] + col_offset

    def span_of(self, node: ast.AST) -> Span:
        start, end = self._range(node) or (0, 0)
        return Span(start, end)

    def node_span(self, node: ast.AST) -> Span:
        """The node's own span (for definitions: from ``def``/``class``, not the decorators).

        Nodes that carry no position (``arguments``, ``comprehension``, ``withitem``,
        ``match_case``, operators) get the extent of what they contain (empty when they
        contain nothing positioned): this never fails, whatever node a rule asks about."""
        if has_position(node):
            return Span(self.offset_of(node.lineno, node.col_offset),
                        self.offset_of(node.end_lineno, node.end_col_offset))
        return self.span_of(node)

    def source_of(self, node: ast.AST) -> str:
        return self.text(self.node_span(node))

    def _range(self, node: ast.AST) -> tuple[int, int] | None:
        key = id(node)
        if key in self._ranges:
            return self._ranges[key]
        if has_position(node):
            start = self.offset_of(node.lineno, node.col_offset)
            end = self.offset_of(node.end_lineno, node.end_col_offset)
            for decorator in getattr(node, "decorator_list", ()):
                start = min(start, self.offset_of(decorator.lineno, decorator.col_offset) - 1)
            result = (start, end)
        elif isinstance(node, _NO_POSITION):
            result = None
        else:  # arguments, comprehension, withitem, match_case: the extent of the children
            ranges = [r for r in map(self._range, child_nodes(node)) if r is not None]
            result = (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else None
        self._ranges[key] = result
        return result

    @cached_property
    def _top_starts(self) -> list[int]:
        return [self._statement_range(stmt)[0] for stmt in self.tree.body]

    def _statement_range(self, stmt: ast.stmt) -> tuple[int, int]:
        bounds = self._range(stmt)
        assert bounds is not None, "ast.parse gives every statement a position"
        return bounds

    def node_path(self, offset: int) -> list[ast.AST]:
        """Nodes from the Module down to the innermost node containing ``offset``."""
        cached = self._paths.get(offset)
        if cached is not None:
            return cached
        path: list[ast.AST] = [self.tree]
        node: ast.AST = self.tree
        # The module level can hold thousands of statements: find the one by bisection.
        index = bisect.bisect_right(self._top_starts, offset) - 1
        if index >= 0:
            top = self.tree.body[index]
            start, end = self._statement_range(top)
            if start <= offset < end:
                path.append(top)
                node = top
            else:
                self._paths[offset] = path
                return path
        while True:
            for child in child_nodes(node):
                bounds = self._range(child)
                if bounds is not None and bounds[0] <= offset < bounds[1]:
                    path.append(child)
                    node = child
                    break
            else:
                break
        self._paths[offset] = path
        return path

    def node_at(self, offset: int) -> ast.AST:
        return self.node_path(offset)[-1]

    def path_to(self, node: ast.AST) -> list[ast.AST]:
        """``node_path`` ending exactly at ``node`` (the node's start locates it)."""
        path = self.node_path(self.span_of(node).start)
        for index, item in enumerate(path):
            if item is node:
                return path[: index + 1]
        return path + [node]

    @staticmethod
    def enclosing(path: list[ast.AST], types) -> ast.AST | None:
        for node in reversed(path[:-1]):
            if isinstance(node, types):
                return node
        return None

    def statement_of(self, path: list[ast.AST]) -> ast.stmt | None:
        for node in reversed(path):
            if isinstance(node, ast.stmt):
                return node
        return None

    def string_at(self, span: Span) -> ast.Constant | None:
        """The string literal containing an anchor (None in comments and code)."""
        node = self.node_at(span.start)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node
        return None

    # Names ----------------------------------------------------------------------------
    @cached_property
    def aliases(self) -> dict[str, str]:
        """Local name -> qualified name for every import in the file (scopes ignored)."""
        result: dict[str, str] = {}
        seen: set[int] = set()
        for m in _IMPORT_WORD.finditer(self.source):
            stmt = self.statement_of(self.node_path(m.start()))
            if id(stmt) in seen:
                continue
            seen.add(id(stmt))
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        result[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        result[top] = top
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    if alias.name != "*":
                        result[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
            elif isinstance(stmt, ast.ImportFrom):  # `from . import utils`: a name, not resolvable
                for alias in stmt.names:
                    if alias.name != "*":
                        result.setdefault(alias.asname or alias.name, alias.asname or alias.name)
        return result

    def qualname(self, node: ast.AST) -> str | None:
        """Dotted name of a Name/Attribute chain with imports resolved (``T.compile`` ->
        ``torch.compile``); unresolved names stay as written."""
        aliases = self.aliases
        return dotted_name(node, lambda name: aliases.get(name, name))

    def module_assignment(self, name: str) -> ast.expr | None:
        """The value of the last simple top-level ``name = value`` (constant resolution)."""
        found = None
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                found = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                found = stmt.value
        return found

    def loads_of(self, name: str, scope: ast.AST) -> list[ast.Name]:
        """Every read of ``name`` in a scope (for the module: the whole file)."""
        key = ("loads", id(scope))
        index = self.cache.get(key)
        if index is None:
            index = {}
            for node in walk(scope):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    index.setdefault(node.id, []).append(node)
            self.cache[key] = index
        return index.get(name, [])

    def scope_of(self, path: list[ast.AST]) -> ast.AST:
        return next((node for node in reversed(path) if isinstance(node, SCOPES)), self.tree)

    # Gates ------------------------------------------------------------------------------
    @cached_property
    def python_model(self):
        """The project's Python part (gate helpers, NVIDIA-only modules), or None."""
        return self.project.part("python") if self.project is not None else None

    def fact(self, name: str, called: bool = True) -> "tuple[Fact, Evidence] | None":
        """What the project (or this file) knows of a module-level name or function: its value
        or return value per platform, or that it skips tests on ROCm; with where it is defined.
        ``called``: the name is called, so a function calling helpers may be judged (one level)."""
        model = self.python_model
        # A module constant bound to a call (`DEVICE_TYPE = _device_type()`) is judged like one.
        judged = called or name.isupper()
        helper = (model.helper(name) if judged else model.helpers.get(name)) if model is not None else None
        if helper is not None:
            return helper.fact, helper.evidence()
        found = self._local_facts.get(name)
        if found is None and self._model_covers:
            found = self._failed_import_facts().get(name)
        return found

    @cached_property
    def _model_covers(self) -> bool:
        """The project model summarised this file (asked often: a path is resolved once)."""
        model = self.python_model
        return model is not None and model.covers(self.path)

    def _failed_import_facts(self) -> "dict[str, tuple[Fact, Evidence]]":
        """Names a module-level `try` binds when its import of a project module the ROCm build
        never has (a CUDA-only component) fails there: what the summaries, which read one file
        each, cannot know."""
        from .gates import failing_import, statement_facts

        known = self.cache.get("failed-import-facts")
        if known is not None:
            return known
        found: dict[str, tuple[Fact, Evidence]] = {}
        self.cache["failed-import-facts"] = found  # (filled below; empty while being computed)
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Try) and failing_import(stmt, None) is None \
                    and failing_import(stmt, self.gates) is not None:
                for name, fact in statement_facts(stmt, self.gates, False):
                    found[name] = (fact, Evidence(fact.describe(name), f"{self.path}:{stmt.lineno}"))
        return found

    def _fact_only(self, name: str, called: bool = True):
        found = self.fact(name, called)
        return found[0] if found is not None else None

    @cached_property
    def _local_facts(self) -> "dict[str, tuple[Fact, Evidence]]":
        """This file's own gate helpers and platform variables (also when no project model is
        built): module-level functions and names judged by what they return or hold."""
        from .gates import assigned_values, platform_dependent, statement_facts
        from .toplevel import MAX_HELPER_BYTES, SKIP_NAME, has_gate_word

        found: dict[str, tuple[Fact, Evidence]] = {}
        model = self.python_model
        if self._model_covers or not has_gate_word(self.source):
            return found  # the project model has this file's helpers already
        candidates = []
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign, ast.If, ast.Try)):
                span = self.span_of(stmt)
                if span.end - span.start <= MAX_HELPER_BYTES:
                    candidates.append(stmt)
        # Two passes: the second knows the first's facts (one level of helper calls).
        for _ in range(2):
            evaluator = GateEvaluator(self.settings.gate_names, self.qualname,
                                      lambda name, called: found[name][0] if name in found else None,
                                      self.resolve_name, assume_gpu=True)
            for stmt in candidates:
                label = getattr(stmt, "name", None) or next(
                    (t.id for t in getattr(stmt, "targets", [getattr(stmt, "target", None)]) if isinstance(t, ast.Name)),
                    "")
                for name, fact in statement_facts(stmt, evaluator, SKIP_NAME.search(label) is not None):
                    found[name] = (fact, Evidence(fact.describe(name), f"{self.path}:{stmt.lineno}"))
            # A name bound by several module-level statements: the module run in order.
            for name in [n for n, (fact, _) in found.items() if fact.kind == "value" and self._bound_twice(n)]:
                fact = Fact("value", assigned_values(self.tree.body, name, evaluator, True),
                            assigned_values(self.tree.body, name, evaluator, False))
                if platform_dependent(fact.rocm, fact.nvidia):
                    found[name] = (fact, Evidence(fact.describe(name), found[name][1].where))
                else:
                    del found[name]
        return found

    def _bound_twice(self, name: str) -> bool:
        return sum(1 for v in self.bindings_of(name, None)) > 1

    def is_skip_helper(self, name: str) -> bool:
        """A decorator that skips tests on ROCm, by its name or by its definition."""
        from .toplevel import SKIP_NAME

        if SKIP_NAME.search(name):
            return True
        found = self.fact(name)
        return found is not None and found[0].kind == "skip"

    def _has_definition(self, name: str) -> bool:
        """A definition of ``name`` is visible (this file's module level or the project's):
        then its name alone decides nothing."""
        model = self.python_model
        if model is not None and name in model.definitions:
            return True
        return any(getattr(stmt, "name", None) == name for stmt in self.tree.body) or bool(
            self.bindings_of(name, None))

    def _settled_definition(self, name: str) -> bool:
        """A visible definition of ``name`` returns one constant (``gates.returns_one_constant``):
        this file's module level, else the project's (memoised per name)."""
        key = ("settled", name)
        if key not in self.cache:
            self.cache[key] = self._read_settled(name)
        return self.cache[key]

    def _read_settled(self, name: str) -> bool:
        from .gates import returns_one_constant

        own = [stmt for stmt in self.tree.body if getattr(stmt, "name", None) == name or (
            isinstance(stmt, (ast.Assign, ast.AnnAssign)) and name in {
                t.id for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                if isinstance(t, ast.Name)})]
        if own:
            return all(returns_one_constant(stmt) for stmt in own)
        model = self.python_model
        return model is not None and model.settled_definition(name)

    def bindings_of(self, name: str, scope: ast.AST | None, imports: bool = False) -> list[ast.expr | None]:
        """The values bound to ``name`` in ``scope`` (a function; None: module level), None for
        bindings whose value is unknown (parameters, loop targets, ``+=``, and with ``imports``
        an import). Found from the name's occurrences in the scope's text, so no tree is walked."""
        key = ("bindings", name, id(scope), imports)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        span = self.span_of(scope) if scope is not None else Span(0, len(self.source))
        found: list[ast.expr | None] = []
        for at in word_starts(self.source, name.encode(), span.start, span.end):
            path = self.node_path(at)
            node = path[-1]
            owner = self.enclosing(path, FUNCTIONS)
            if owner is not scope:
                continue
            if isinstance(node, ast.arg) and node.arg == name:
                found.append(None)
            elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                found.append(_bound_value(path))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found.append(None)
            elif imports and isinstance(node, ast.alias) and (node.asname or node.name.partition(".")[0]) == name:
                found.append(None)  # `from .backends import hip as name`: an import binds it too
        self.cache[key] = found
        return found

    def resolve_name(self, node: ast.Name, scope: ast.AST | None = None) -> ast.expr | None:
        """The value a name is bound to, when its scope (the enclosing function, given or found
        from the name's position; else the module) binds it exactly once (a local gate variable
        such as ``use_cuda = torch.version.cuda is not None and ...``)."""
        if scope is None and getattr(node, "lineno", None) is not None:  # synthetic names have none
            path = self.node_path(self.offset_of(node.lineno, node.col_offset))
            scope = self.enclosing(path + [node], FUNCTIONS) if path and path[-1] is node else None
        values = self.bindings_of(node.id, scope, imports=True) if isinstance(scope, FUNCTIONS) else []
        if not values:
            values = self.bindings_of(node.id, None, imports=True)
        return values[0] if len(values) == 1 else None

    @cached_property
    def gates(self) -> GateEvaluator:
        evaluator = GateEvaluator(self.settings.gate_names, self.qualname, self._fact_only, self.resolve_name,
                                  assume_gpu=True, by_name=True, defined=self._has_definition,
                                  settled=self._settled_definition,
                                  is_module=lambda name: name in self.aliases,
                                  selectors=self._platform_variables(),
                                  nvidia_only_module=self._nvidia_only_module,
                                  nvidia_only_import=self._nvidia_only_import)
        # Module-level names bound to a gate expression are gates too (`_ON_AMD = torch.version.hip is not None`).
        if b"hip" in self.source or b"rocm" in self.source.lower():
            for stmt in self.tree.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and evaluator.is_gate_expression(stmt.value)):
                    evaluator.gate_names.add(stmt.targets[0].id)
        return evaluator

    def _nvidia_only_module(self, name: str) -> str | None:
        """Why the project module ``name`` is bound to (by an import anywhere in this file:
        `from .backends import cuda as cuda_backend`) never runs on ROCm; None when it may."""
        model = self.python_model
        if model is None:
            return None
        if "imports-by-name" not in self.cache:
            found: dict[str, list] = {}
            for node in walk(self.tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    for alias in node.names:
                        found.setdefault(alias.asname or alias.name.partition(".")[0], []).append((node, alias))
            self.cache["imports-by-name"] = found
        files = set()
        for node, alias in self.cache["imports-by-name"].get(name, []):  # (each test may import it again)
            if isinstance(node, ast.Import):
                module, level = alias.name if alias.asname else name, 0
            else:
                module, level = ".".join(filter(None, (node.module, alias.name))), node.level
            files.add(self._imported_verdict(module, level))
        if len(files) != 1 or self._bound_twice(name):
            return None
        rel, verdict = files.pop()
        if verdict is None or not verdict.evidence:
            return None
        return f"`{name}` is `{rel}`, which the ROCm build never runs: {verdict.evidence[0].what}"

    def _nvidia_only_import(self, module: str, level: int) -> bool:
        """The project module an import names (`from lightx2v_kernel.gemm import ...`) is one the
        ROCm build never has (a CUDA-only component)."""
        return self._imported_verdict(module, level)[1] is not None

    def _imported_verdict(self, module: str, level: int) -> "tuple[str | None, Verdict | None]":
        """The project file an import names and the model's NVIDIA-only verdict on it."""
        model = self.python_model
        rel = model.imported_file(self.path, module, level) if model is not None else None
        return rel, (model.module_verdict(model.root / rel) if rel is not None else None)

    def _platform_variables(self) -> dict[str, str]:
        """Environment variables in which the user names the platform (project-wide when the
        project model covers this file)."""
        model = self.python_model
        if model is not None and self._model_covers:
            return model.platform_variables()
        found = platform_selector_variables(self.source, self.tree, self.resolve_name)
        return {variable: f"{self.path}:{line}" for variable, line in found.items()}

    def _conditions(self, offset: int) -> list[tuple[ast.expr, bool]]:
        return conditions_on_path(self.node_path(offset), self.is_skip_helper, self.resolve_name)

    def _reachability(self, offset: int) -> tuple[bool, bool]:
        """(ROCm can reach, NVIDIA can reach) as far as the gates tell."""
        cached = self._reach.get(offset)
        if cached is None:
            rocm = self.module_verdict is None
            nvidia = True
            for condition, wanted in self._conditions(offset):
                on_rocm = self.gates.value(condition, True)
                if on_rocm is not None and on_rocm != wanted:
                    rocm = False
                on_nvidia = self.gates.value(condition, False)
                if on_nvidia is not None and on_nvidia != wanted:
                    nvidia = False
            path = self.node_path(offset)
            if rocm and len(path) > 2 and self._only_called_on_nvidia(path[1]):
                rocm = False
            if rocm and (self._refusing_class(path) is not None or self._nvidia_backend_call(path) is not None
                         or self._refusing_call(path) is not None):
                rocm = False
            cached = self._reach[offset] = (rocm, nvidia)
        return cached

    def _only_called_on_nvidia(self, function: ast.AST) -> bool:
        """A module-level function (or name: `skip_sm100 = unittest.skipIf(...)`) of this file
        that nothing outside it can reach (private, or never imported by name in the project)
        and whose every use here is in code only the NVIDIA build runs (for a function: calls):
        its body or value is NVIDIA-only (the call chain decides)."""
        if isinstance(function, ast.Assign) and len(function.targets) == 1 and isinstance(function.targets[0], ast.Name):
            name, calls_only = function.targets[0].id, False
        elif isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and not function.decorator_list:
            name, calls_only = function.name, True
        else:
            return False
        key = ("nvidia-callers", id(function))
        if key in self.cache:
            return bool(self.cache[key])  # None while being computed (recursion): reachable
        self.cache[key] = None
        result = False
        if name.startswith("_") or (self.python_model is not None and not self.python_model.imported_by_name(name)):
            uses = self._reads_of(name)
            result = bool(uses)
            for use in uses:
                use_path = self.path_to(use)
                call = use_path[-2] if len(use_path) > 1 else None
                if calls_only and not (isinstance(call, ast.Call) and call.func is use):
                    result = False
                    break
                if not self.nvidia_only(self.span_of(use).start):
                    result = False
                    break
        self.cache[key] = result
        return result

    def _nvidia_backend_call(self, path: list[ast.AST]) -> Evidence | None:
        """Inside a function whose body calls, unconditionally, a name that only an import of
        an NVIDIA-only package binds (`if has_fa3: from flash_attn_interface import
        flash_attn_func as fa3` ... `fa3(q, k, v)`): it cannot run where that package does not
        exist."""
        from .backends import NVIDIA_ONLY_IMPORTS

        if "nvidia-backend-names" not in self.cache:  # names this file imports from such packages
            self.cache["nvidia-backend-names"] = {
                name: origin for name, origin in self.aliases.items()
                if any(origin.startswith(root + ".") for root in NVIDIA_ONLY_IMPORTS)}
        backend = self.cache["nvidia-backend-names"]
        if not backend:
            return None
        for function in path[1:-1]:
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            key = ("nvidia-backend-call", id(function))
            if key not in self.cache:
                found = None
                for stmt in function.body:
                    if isinstance(stmt, (ast.If, ast.Try, ast.For, ast.While, ast.With, ast.Match)):
                        break  # from here on the call may be one choice among others
                    for call in walk(stmt):
                        name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else ""
                        origin = backend.get(name, "")
                        if origin and not self.bindings_of(name, None):
                            found = Evidence(f"`{function.name}` calls `{name}`, which only `{origin}` "
                                             "(NVIDIA only) provides", f"{self.path}:{getattr(call, 'lineno', 0)}")
                            break
                    if found is not None:
                        break
                self.cache[key] = found
            if self.cache[key] is not None:
                return self.cache[key]
        return None

    def _refusing_class(self, path: list[ast.AST]) -> Evidence | None:
        """A method of a class whose constructor raises on ROCm (`if torch.version.hip: raise
        NotImplementedError(...)` at the top of `__init__`): no instance exists there, so none
        of its other methods runs."""
        for index, node in enumerate(path[:-2]):
            if not isinstance(node, ast.ClassDef) or not isinstance(path[index + 1], FUNCTIONS):
                continue
            key = ("refusing-class", id(node))
            if key not in self.cache:
                self.cache[key] = self._constructor_refusal(node)
            if self.cache[key] is not None and getattr(path[index + 1], "name", "") not in (
                    "__init__", *_AVAILABILITY_METHODS):
                return self.cache[key]
        return None

    def _unavailable_backend(self, owner: ast.ClassDef) -> Evidence | None:
        """A back end whose availability test is false on ROCm (`is_available()` needs
        `shutil.which("nvcc")`, `CUDA_HOME`, ...): the project never picks it there."""
        from .gates import return_values, truth

        for method in owner.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name in _AVAILABILITY_METHODS:
                self.gates.trail.clear()
                # False on ROCm only: a base class answering False everywhere says nothing.
                if truth(return_values(method, self.gates, True)) is False \
                        and truth(return_values(method, self.gates, False)) is not False:
                    used = next((name for name, _fact, _node in self.gates.trail), "its platform")
                    return Evidence(f"`{owner.name}.{method.name}()` is False on ROCm ({used})",
                                    f"{self.path}:{method.lineno}")
        return None

    def _constructor_refusal(self, owner: ast.ClassDef) -> Evidence | None:
        from .gates import terminates

        unavailable = self._unavailable_backend(owner)
        if unavailable is not None:
            return unavailable
        init = next((s for s in owner.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        refusal = self._refusal(init) if init is not None else None
        if refusal is not None:
            return Evidence(f"`{owner.name}.__init__` raises on ROCm, so no `{owner.name}` exists there",
                            f"{self.path}:{refusal.lineno}")
        return None

    def _refusal(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt | None:
        """The statement that raises on ROCm before the function can return (`if
        torch.version.hip: raise ...`, `if CUDA_HOME is None: raise ...`, `assert not is_hip()`)."""
        from .gates import terminates

        for stmt in function.body:
            refuses = (isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], ast.Raise)
                       and terminates(stmt.body) and self.gates.value(stmt.test, True) is True) or (
                isinstance(stmt, ast.Assert) and self.gates.value(stmt.test, True) is False)
            if refuses:
                return stmt
            if isinstance(stmt, (ast.Return, ast.Raise)) or (
                    not isinstance(stmt, FUNCTIONS + (ast.ClassDef,)) and any(isinstance(n, ast.Return) for n in walk(stmt))):
                break  # past here the function may have returned
        return None

    def _nvidia_only_importorskip(self, value: ast.AST | None) -> str | None:
        """The module of `pytest.importorskip("deep_gemm")` when the ROCm build never has it (an
        NVIDIA-only package, or a project module the model calls NVIDIA-only)."""
        if not (isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Constant)
                and isinstance(value.args[0].value, str)):
            return None
        if called_name(value) != "importorskip":
            return None
        module = value.args[0].value
        return module if nvidia_only_import(module) or self._nvidia_only_import(module, 0) else None

    def _refusing_call(self, path: list[ast.AST]) -> Evidence | None:
        """Code after a statement that calls, unconditionally, a function of this module that
        raises on ROCm before doing anything else (`major, minor = installed_cuda_version()`,
        which raises when `CUDA_HOME` is None), or a helper of another module that the project
        model finds never returns on ROCm: the ROCm build never gets past that call."""
        for parent, child in zip(path, path[1:]):
            block = containing_list(parent, child) if isinstance(child, ast.stmt) else None
            for previous in block or ():
                if previous is child:
                    break
                value = getattr(previous, "value", None) if isinstance(previous, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
                while isinstance(value, (ast.Subscript, ast.Attribute)):
                    value = value.value  # `installed_cuda_version()[0]`
                skipped = self._nvidia_only_importorskip(value)
                if skipped is not None:
                    return Evidence(f"`importorskip(\"{skipped}\")` skips on ROCm, where `{skipped}` never imports",
                                    f"{self.path}:{previous.lineno}")
                if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                    continue
                function = self._module_function(value.func.id)
                if function is None:
                    # a helper of another module that never returns on ROCm (the model's fact)
                    found = self.fact(value.func.id)
                    if found is not None and found[0].kind == "call" and found[0].rocm == frozenset():
                        why = f": {found[0].note}" if found[0].note else ""
                        return Evidence(f"`{value.func.id}()` ({found[1].where}) never returns on ROCm{why}; "
                                        "nothing after its call runs there", f"{self.path}:{previous.lineno}")
                    continue
                key = ("refusing-function", id(function))
                if key not in self.cache:
                    self.cache[key] = None  # (recursion: no refusal)
                    refusal = self._refusal(function)
                    self.cache[key] = None if refusal is None else Evidence(
                        f"`{function.name}()` raises on ROCm, so nothing after its call runs there",
                        f"{self.path}:{refusal.lineno}")
                if self.cache[key] is not None:
                    return self.cache[key]
        return None

    def _module_function(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The one module-level function of this file called ``name``."""
        if "module-functions" not in self.cache:
            found: dict[str, list] = {}
            for stmt in self.tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault(stmt.name, []).append(stmt)
            self.cache["module-functions"] = {n: defs[0] for n, defs in found.items() if len(defs) == 1}
        return self.cache["module-functions"].get(name)

    @cached_property
    def module_verdict(self):
        """The project's verdict on the whole file (an NVIDIA-only module), or None."""
        model = self.python_model
        return model.module_verdict(self.path) if model is not None else None

    def _reads_of(self, name: str) -> list[ast.Name]:
        """Every read of a module-level name, found from its occurrences in the text (no walk)."""
        found = []
        word = name.encode()
        at = self.source.find(word)
        while at != -1:
            node = self.node_at(at)
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                found.append(node)
            at = self.source.find(word, at + len(word))
        return found

    def rocm_blockers(self, offset: int) -> list[Evidence]:
        """Why the ROCm build never runs the code at ``offset`` (empty when it may)."""
        if self.module_verdict is not None:
            return list(self.module_verdict.evidence)
        found = []
        path = self.node_path(offset)
        top = path[1] if len(path) > 2 else None
        for reason in (self._refusing_class(path), self._nvidia_backend_call(path), self._refusing_call(path)):
            if reason is not None:
                found.append(reason)
        if top is not None and self._only_called_on_nvidia(top):
            if isinstance(top, ast.Assign) and isinstance(top.targets[0], ast.Name):
                what = f"`{top.targets[0].id}` is only used where the ROCm build never goes"
            else:
                what = f"`{getattr(top, 'name', '')}` is only called where the ROCm build never goes"
            found.append(Evidence(what, f"{self.path}:{getattr(top, 'lineno', 0)}"))
        for condition, wanted in self._conditions(offset):
            self.gates.trail.clear()
            on_rocm = self.gates.value(condition, True)
            if on_rocm is None or on_rocm == wanted:
                continue
            line = self.lines.position(self.span_of(condition).start)[0]
            if isinstance(condition, ast.Name) and condition.id == ROCM_MARK:
                what = "a test decorator that skips on ROCm"
            else:
                what = f"`{self.source_of(condition)}` is {on_rocm} on ROCm, the code needs {wanted}"
            found.append(Evidence(what, f"{self.path}:{line}"))
            found.extend(self._trail_evidence())
        return found

    def _trail_evidence(self) -> list[Evidence]:
        """Where the platform facts a verdict used come from: a helper or platform variable
        (file:line of its definition) or a name read by the platform it states."""
        found: list[Evidence] = []
        for name, fact in dict.fromkeys((n, f) for n, f, _node in self.gates.trail):
            if fact is None:
                found.append(Evidence(f"`{name}` is read as a test for the platform its name states "
                                      "(no definition of it is visible; weaker evidence)"))
                continue
            known = self.fact(name)
            found.append(known[1] if known is not None else Evidence(fact.describe(name)))
        return list(dict.fromkeys(found))

    def nvidia_only(self, offset: int) -> bool:
        """The ROCm build never runs the code here (NVIDIA-only branch or dead code)."""
        return not self._reachability(offset)[0]

    def rocm_only(self, offset: int) -> bool:
        """Only the ROCm build runs the code here (reporting a ROCm hazard there is pointless)."""
        rocm, nvidia = self._reachability(offset)
        return rocm and not nvidia

    def gated(self, offset: int) -> bool:
        """Some gate already decides who runs this code."""
        rocm, nvidia = self._reachability(offset)
        return not (rocm and nvidia)


def _bound_value(path: list[ast.AST]) -> ast.expr | None:
    """The value a stored name (``path[-1]``) receives, when an assignment gives it plainly:
    ``x = v``, ``x: T = v``, ``(x := v)``, ``a, b = v`` (``v[i]``); None otherwise."""
    name, parent = path[-1], path[-2]
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is not None \
            and (name in getattr(parent, "targets", ()) or getattr(parent, "target", None) is name):
        return parent.value
    if isinstance(parent, ast.Tuple) and len(path) > 2 and isinstance(path[-3], ast.Assign):
        index = next(i for i, element in enumerate(parent.elts) if element is name)
        value = path[-3].value
        if isinstance(value, ast.Tuple) and len(value.elts) == len(parent.elts):
            return value.elts[index]
        return ast.Subscript(value=value, slice=ast.Constant(index), ctx=ast.Load())
    return None
