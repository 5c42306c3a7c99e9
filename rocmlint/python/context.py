"""What Python rules see of a file: the stdlib ``ast`` tree and helpers around anchors.

Rules look around their anchors (``hits()``) instead of walking whole files: ``node_path``
descends by position from the module to the innermost node at an offset, so nothing is
built per node for the whole file (big files stay fast). Name resolution and scope walks
are computed lazily, only when a rule asks.
"""
from __future__ import annotations

import ast
import bisect
import re
from functools import cached_property
from typing import Protocol, TypeGuard

from ..model import Span
from ..rule import FileContext
from .gates import GateEvaluator, conditions_on_path

_IMPORT_WORD = re.compile(rb"import\b")  # a literal first: fast
_NO_POSITION = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
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

    # Positions ----------------------------------------------------------------------
    def offset_of(self, lineno: int, col_offset: int) -> int:
        """Byte offset of an ast (1-based line, UTF-8 byte column) position."""
        return self.lines.line_starts[lineno - 1] + col_offset

    def span_of(self, node: ast.AST) -> Span:
        start, end = self._range(node) or (0, 0)
        return Span(start, end)

    def node_span(self, node: ast.AST) -> Span:
        """The node's own span (for definitions: from ``def``/``class``, not the decorators)."""
        if not has_position(node):
            raise ValueError(f"ast.{type(node).__name__} carries no source position")
        return Span(self.offset_of(node.lineno, node.col_offset),
                    self.offset_of(node.end_lineno, node.end_col_offset))

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
            ranges = [r for r in map(self._range, ast.iter_child_nodes(node)) if r is not None]
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
            for child in ast.iter_child_nodes(node):
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
        return result

    def qualname(self, node: ast.AST) -> str | None:
        """Dotted name of a Name/Attribute chain with imports resolved (``T.compile`` ->
        ``torch.compile``); unresolved names stay as written."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

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
            for node in ast.walk(scope):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    index.setdefault(node.id, []).append(node)
            self.cache[key] = index
        return index.get(name, [])

    def scope_of(self, path: list[ast.AST]) -> ast.AST:
        return next((node for node in reversed(path) if isinstance(node, SCOPES)), self.tree)

    # Gates ------------------------------------------------------------------------------
    @cached_property
    def gates(self) -> GateEvaluator:
        evaluator = GateEvaluator(self.settings.gate_names, self.qualname)
        # Module-level names bound to a gate expression are gates too (`_ON_AMD = torch.version.hip is not None`).
        if b"hip" in self.source or b"rocm" in self.source.lower():
            for stmt in self.tree.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and evaluator.is_gate_expression(stmt.value)):
                    evaluator.gate_names.add(stmt.targets[0].id)
        return evaluator

    def _reachability(self, offset: int) -> tuple[bool, bool]:
        """(ROCm can reach, NVIDIA can reach) as far as the gates tell."""
        cached = self._reach.get(offset)
        if cached is None:
            rocm = nvidia = True
            for condition, wanted in conditions_on_path(self.node_path(offset)):
                on_rocm = self.gates.value(condition, True)
                if on_rocm is not None and on_rocm != wanted:
                    rocm = False
                on_nvidia = self.gates.value(condition, False)
                if on_nvidia is not None and on_nvidia != wanted:
                    nvidia = False
            cached = self._reach[offset] = (rocm, nvidia)
        return cached

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
