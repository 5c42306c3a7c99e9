"""Which platform evaluates a Python condition to what: the ROCm-gate logic.

``GateEvaluator.value(expr, rocm)`` answers True / False / None (unknown) for a condition
under one platform. It is used both for reachability (``nvidia_only``) and for folding
the gates away in the NVIDIA view.
"""
from __future__ import annotations

import ast
from typing import Callable, Iterable

# Python values a gate-ish expression takes on one platform.
_NONE = "none"
_SOME = "some"  # a non-None, truthy value (a version string)

HIP_VERSION = "torch.version.hip"
CUDA_VERSION = "torch.version.cuda"


class GateEvaluator:
    def __init__(self, gate_names: Iterable[str], qualname: Callable[[ast.AST], str | None]) -> None:
        self.gate_names = set(gate_names)
        self.qualname = qualname

    def is_gate_reference(self, node: ast.AST) -> bool:
        """``IS_ROCM``, ``utils.IS_ROCM``, ``is_hip()``, ``current_platform.is_rocm()``."""
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            node = node.func
        if isinstance(node, ast.Name):
            return node.id in self.gate_names
        if isinstance(node, ast.Attribute):
            return node.attr in self.gate_names
        return False

    def _raw(self, node: ast.AST, rocm: bool):
        """The Python value (_NONE/_SOME/True/False) of an operand, or None if unknown."""
        if self.is_gate_reference(node):
            return rocm
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = self.qualname(node)
            if name == HIP_VERSION:
                return _SOME if rocm else _NONE
            if name == CUDA_VERSION:
                # None on ROCm; a string on CUDA builds but None on CPU-only builds.
                return _NONE if rocm else None
            return None
        if isinstance(node, ast.Constant):
            if node.value is None:
                return _NONE
            if isinstance(node.value, bool):
                return node.value
            return None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
                and len(node.args) == 2 and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in ("hip", "cuda") and self.qualname(node.args[0]) == "torch.version"):
            return True  # torch.version has both attributes on every build
        if isinstance(node, ast.Call):
            return None
        return self.value(node, rocm)

    def value(self, node: ast.AST, rocm: bool) -> bool | None:
        """Truth value of a condition on ROCm (``rocm=True``) or NVIDIA, None if unknown."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.value(node.operand, rocm)
            return None if inner is None else not inner
        if isinstance(node, ast.BoolOp):
            values = [self.value(v, rocm) for v in node.values]
            absorbing = isinstance(node.op, ast.Or)  # True absorbs `or`, False absorbs `and`
            if absorbing in values:
                return absorbing
            if all(v is not None for v in values):
                return not absorbing
            return None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = node.ops[0]
            if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
                left, right = node.left, node.comparators[0]
                if isinstance(left, ast.Constant) and left.value is None:
                    left, right = right, left
                if isinstance(right, ast.Constant) and right.value is None:
                    raw = self._raw(left, rocm)
                    if raw is None:
                        return None
                    is_none = raw == _NONE
                    return is_none if isinstance(op, (ast.Is, ast.Eq)) else not is_none
            return None
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, rocm)
            if test is None:
                return None
            return self.value(node.body if test else node.orelse, rocm)
        if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Constant)):
            raw = self._raw(node, rocm)
            if raw is None:
                return None
            if raw == _NONE:
                return False
            if raw == _SOME:
                return True
            return bool(raw)
        return None

    def is_gate_expression(self, node: ast.AST) -> bool:
        """True when the expression is exactly "running on ROCm" (True on ROCm, False on NVIDIA)."""
        return self.value(node, True) is True and self.value(node, False) is False


def terminates(body: list[ast.stmt]) -> bool:
    """The block always leaves its enclosing block (return/raise/continue/break last)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers")


def containing_list(parent: ast.AST, child: ast.AST) -> list | None:
    for field in STATEMENT_LISTS:
        block = getattr(parent, field, None)
        if isinstance(block, list):
            for item in block:
                if item is child:
                    return block
    return None


def conditions_on_path(path: list[ast.AST]) -> list[tuple[ast.expr, bool]]:
    """(condition, required truth value) pairs that hold wherever the last node of ``path`` runs."""
    found: list[tuple[ast.expr, bool]] = []
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, (ast.If, ast.While)) and child is not parent.test:
            if any(item is child for item in parent.body):
                found.append((parent.test, True))
            elif isinstance(parent, ast.If) and any(item is child for item in parent.orelse):
                found.append((parent.test, False))
        elif isinstance(parent, ast.IfExp) and child is not parent.test:
            found.append((parent.test, child is parent.body))
        elif isinstance(parent, ast.BoolOp):
            for value in parent.values:
                if value is child:
                    break
                found.append((value, isinstance(parent.op, ast.And)))
        if isinstance(child, ast.stmt):
            block = containing_list(parent, child)
            if block is None:
                continue
            for previous in block:
                if previous is child:
                    break
                # Code after `if gate: return` runs only where the gate is false.
                if isinstance(previous, ast.If):
                    if terminates(previous.body) and not terminates(previous.orelse):
                        found.append((previous.test, False))
                    elif previous.orelse and terminates(previous.orelse) and not terminates(previous.body):
                        found.append((previous.test, True))
    return found
