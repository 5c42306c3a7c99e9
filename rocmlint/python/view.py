"""The NVIDIA view of a module: every ROCm gate folded to False.

A correct gated fix only adds code that the NVIDIA build never runs, so folding the gates
(and unwrapping the optional-import guard, and dropping the gate definition) of the fixed
module must give exactly the folded original. Both sides are folded the same way, so gates
that were already there are fine.
"""
from __future__ import annotations

import ast

from .gates import GateEvaluator, catches_import_error



class _NvidiaFolder(ast.NodeTransformer):
    def __init__(self, gates: GateEvaluator) -> None:
        self.gates = gates

    def _known(self, node: ast.expr) -> bool | None:
        return self.gates.value(node, False)

    # Statements -------------------------------------------------------------------
    def visit_If(self, node: ast.If):
        test = self._known(node.test)
        if test is None:
            return self.generic_visit(node)
        kept = node.body if test else node.orelse
        return [self.visit(stmt) for stmt in kept] or None

    def visit_Try(self, node: ast.Try):
        if is_import_guard(node):
            return [self.visit(stmt) for stmt in node.body]
        return self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign):
        if all(isinstance(t, ast.Name) and t.id in self.gates.gate_names for t in node.targets):
            return None  # the gate definition itself
        return self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        names = [a for a in node.names if (a.asname or a.name) not in self.gates.gate_names]
        if not names:
            return None
        node.names = names
        return node

    def generic_visit(self, node):
        node = super().generic_visit(node)
        # Keep statement lists well-formed after folding (an emptied body becomes `pass`).
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and not block and field == "body" and not isinstance(node, ast.Module):
                block.append(ast.Pass())
        return node

    # Expressions ------------------------------------------------------------------
    def visit_IfExp(self, node: ast.IfExp):
        test = self._known(node.test)
        if test is None:
            return self.generic_visit(node)
        return self.visit(node.body if test else node.orelse)

    def _fold_condition(self, node):
        value = self._known(node)
        if value is not None:
            return ast.Constant(value=value)
        return self.generic_visit(node)

    visit_BoolOp = _fold_condition
    visit_UnaryOp = _fold_condition
    visit_Compare = _fold_condition


def is_import_guard(node: ast.Try) -> bool:
    """``try: import x / except ImportError: x = None`` (or ``pass``): an optional import."""
    if node.orelse or node.finalbody or len(node.handlers) != 1:
        return False
    if not node.body or not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body):
        return False
    handler = node.handlers[0]
    if not catches_import_error(handler):
        return False
    bound = {alias.asname or alias.name.split(".")[0] for s in node.body
             if isinstance(s, (ast.Import, ast.ImportFrom)) for alias in s.names}
    for stmt in handler.body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.FunctionDef) and stmt.name in bound:
            continue  # a fallback implementation of an imported function
        if (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                and stmt.value.value is None):
            continue
        return False
    return True


def nvidia_dump(tree: ast.Module, gates: GateEvaluator) -> bytes:
    folded = _NvidiaFolder(gates).visit(tree)
    return ast.dump(folded, include_attributes=False).encode()
