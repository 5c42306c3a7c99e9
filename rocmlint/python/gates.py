"""Which platform evaluates a Python condition to what: the ROCm-gate logic.

``GateEvaluator.value(expr, rocm)`` answers True / False / None (unknown) for a condition
under one platform. It is used both for reachability (``nvidia_only``) and for folding
the gates away in the NVIDIA view.
"""
from __future__ import annotations

import ast
from typing import Callable, Iterable

from .capability import is_capability_call, judge

# Python values a gate-ish expression takes on one platform.
_NONE = "none"
_SOME = "some"  # a non-None, truthy value (a version string)

HIP_VERSION = "torch.version.hip"
CUDA_VERSION = "torch.version.cuda"
GPU_PRESENT = "torch.cuda.is_available"
# The condition a ROCm skip decorator stands for (`@skip_if_rocm`): "running on ROCm".
ROCM_MARK = "__rocm__"
# Calls that leave the block: the test stops, the process ends.
_LEAVING_CALLS = frozenset({"skip", "skipTest", "exit", "_exit", "fail"})
# Decorators that skip a test when their first argument is true (or, for skipUnless, false).
_SKIP_IF = frozenset({"skipIf", "skipif", "skipCUDAIf", "skipGPUIf", "skip_if"})
_SKIP_UNLESS = frozenset({"skipUnless"})

HelperKind = Callable[[str], "str | None"]


def dotted_name(node: ast.AST, rename: Callable[[str], str] = lambda name: name) -> str | None:
    """``a.b.c`` of a Name/Attribute chain (``rename`` maps the first name: import aliases)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(rename(node.id))
    return ".".join(reversed(parts))
NameResolver = Callable[[ast.Name], "ast.expr | None"]


class GateEvaluator:
    """Three-valued truth of conditions per platform. ``helpers`` names the project's gate
    helpers ("rocm" / "nvidia" kinds, from the project model); ``resolve`` gives the value
    a local name was bound to (``use_cuda = torch.version.cuda and ...``). Reachability
    assumes a GPU is present (``assume_gpu``); NVIDIA views fold only platform tests."""

    def __init__(self, gate_names: Iterable[str], qualname: Callable[[ast.AST], str | None],
                 helpers: HelperKind | None = None, resolve: NameResolver | None = None,
                 assume_gpu: bool = False) -> None:
        self.gate_names = set(gate_names) | {ROCM_MARK}
        self.assume_gpu = assume_gpu  # `torch.cuda.is_available()` is True (reachability, not views)
        self.qualname = qualname
        self.helpers = helpers
        self.resolve = resolve
        self._resolving: set[int] = set()

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
            if isinstance(node, ast.Name) and self.resolve is not None and id(node) not in self._resolving:
                bound = self.resolve(node)
                if bound is not None:
                    self._resolving.add(id(node))
                    try:
                        return self._raw(bound, rocm)
                    finally:
                        self._resolving.discard(id(node))
            return None
        if isinstance(node, ast.Constant):
            if node.value is None:
                return _NONE
            if isinstance(node.value, bool):
                return node.value
            return None
        if self.assume_gpu and isinstance(node, ast.Call) and not node.args and self.qualname(node.func) == GPU_PRESENT:
            return True  # hazards matter where a GPU runs the code: assume one is present
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
                and len(node.args) == 2 and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in ("hip", "cuda") and self.qualname(node.args[0]) == "torch.version"):
            return True  # torch.version has both attributes on every build
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool"
                and len(node.args) == 1 and not node.keywords):
            return self.value(node.args[0], rocm)  # `HIP_BUILD = bool(torch.version.hip)`
        if isinstance(node, ast.Call):
            kind = self._helper_kind(node)
            if kind == "rocm":
                return rocm
            if kind == "nvidia":
                return False if rocm else None
            return None
        return self.value(node, rocm)

    def _helper_kind(self, call: ast.Call) -> str | None:
        if self.helpers is None:
            return None
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        return self.helpers(name) if name else None

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
        if isinstance(node, ast.Compare) and any(is_capability_call(n) for n in ast.walk(node)):
            # A comparison meant to select an NVIDIA architecture is false on ROCm by intent
            # (ROC106 reports where the number itself misleads).
            if not rocm:
                return None  # judged for AMD only: nothing to say about the NVIDIA side
            verdict = judge(node, self.resolve or (lambda name: None))
            return verdict.amd_intent if verdict is not None else None
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
    """The block always leaves its enclosing block (return/raise/continue/break last, or a
    call that stops the test or the process: ``pytest.skip(...)``, ``self.skipTest(...)``)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and _call_name(last.value) in _LEAVING_CALLS


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _marker(at: ast.AST) -> ast.Name:
    return ast.copy_location(ast.Name(id=ROCM_MARK, ctx=ast.Load()), at)


def skip_conditions(decorator: ast.expr, is_skip_helper: Callable[[str], bool]) -> list[tuple[ast.expr, bool]]:
    """Conditions under which a decorated test runs: ``@skipIf(c, ...)`` -> (c, False);
    ``@skipUnless(c)`` -> (c, True); a ROCm skip decorator (``@skip_if_rocm``, by name or by
    the project's definition) -> ("on ROCm", False)."""
    node = decorator
    call = node if isinstance(node, ast.Call) else None
    name = _call_name(call) if call else (node.attr if isinstance(node, ast.Attribute)
                                          else node.id if isinstance(node, ast.Name) else None)
    if name is None:
        return []
    if call is not None and call.args and name in _SKIP_IF:
        return [(call.args[0], False)]
    if name == "skip" and (call is not None or isinstance(node, ast.Attribute)):
        # `@unittest.skip("...")` / `@pytest.mark.skip(...)`: the test runs nowhere
        return [(ast.copy_location(ast.Constant(True), decorator), False)]
    if call is not None and call.args and name in _SKIP_UNLESS:
        return [(call.args[0], True)]
    if is_skip_helper(name):
        return [(_marker(decorator), False)]
    return []


def parametrize_skips(decorator: ast.expr, resolve: NameResolver) -> list[tuple[ast.expr, bool]]:
    """``@pytest.mark.parametrize("k", [pytest.param(..., marks=skipif(c)), ...])``: the test
    runs only where some parameter set is not skipped; one condition "every set is skipped"
    that must be false (names of lists and of marks are followed through ``resolve``)."""
    if not (isinstance(decorator, ast.Call) and _call_name(decorator) == "parametrize" and len(decorator.args) >= 2):
        return []
    values = _resolved(decorator.args[1], resolve)
    if not isinstance(values, (ast.List, ast.Tuple)) or not values.elts:
        return []
    every: list[ast.expr] = []
    for element in values.elts:
        if not (isinstance(element, ast.Call) and _call_name(element) == "param"):
            return []  # a plain value: that set always runs
        marks = next((k.value for k in element.keywords if k.arg == "marks"), None)
        marks = _resolved(marks, resolve) if marks is not None else None
        items = marks.elts if isinstance(marks, (ast.List, ast.Tuple)) else [marks] if marks is not None else []
        conditions = [c for mark in items for c, wanted in skip_conditions(_resolved(mark, resolve), lambda n: False)
                      if not wanted]
        if not conditions:
            return []
        every.append(ast.BoolOp(op=ast.Or(), values=conditions))
    return [(ast.copy_location(ast.BoolOp(op=ast.And(), values=every), decorator), False)]


def _resolved(node: ast.expr, resolve: NameResolver | None) -> ast.expr:
    for _ in range(4):
        if not (isinstance(node, ast.Name) and resolve is not None):
            break
        bound = resolve(node)
        if bound is None:
            break
        node = bound
    return node


def module_skips(module: ast.Module) -> list[tuple[ast.expr, bool]]:
    """``pytestmark = pytest.mark.skipif(c, ...)`` (or a list of marks), or a module-level
    ``if c: pytest.skip(..., allow_module_level=True)``: the module's tests run only where
    every ``c`` is false."""
    found: list[tuple[ast.expr, bool]] = []
    for stmt in module.body:
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body:
            last = stmt.body[-1]
            if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and _call_name(last.value) == "skip" \
                    and any(k.arg == "allow_module_level" for k in last.value.keywords):
                found.append((stmt.test, False))
        if (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets)):
            marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
            for mark in marks:
                found.extend(skip_conditions(mark, lambda name: False))
    return found


def helper_kind(stmt: ast.stmt, evaluator: GateEvaluator, named_skip: bool) -> tuple[str, str] | None:
    """What a module-level definition is to the gate logic, judged by what it returns:
    ("rocm", "") a ROCm test, ("nvidia", "") false on every AMD GPU, ("skip", "") a decorator
    that skips on ROCm, ("call", name) returns another function's result; None otherwise."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        value = stmt.value
        if evaluator.is_gate_expression(value):
            return "rocm", ""
        if skip_conditions(value, lambda name: False) and _rocm_condition(evaluator, value):
            return "skip", ""
        if _nvidia_only(evaluator, value):
            return "nvidia", ""
        return None
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if _skips_on_rocm(evaluator, stmt, named_skip):
        return "skip", ""
    returns = [node.value for node in _own_nodes(stmt) if isinstance(node, ast.Return) and node.value is not None]
    meaningful = [r for r in returns if not (isinstance(r, ast.Constant) and r.value in (False, None))]
    if not meaningful:
        return None
    if len(meaningful) == 1 and len(returns) == 1 and isinstance(meaningful[0], ast.Call) \
            and not meaningful[0].args and not meaningful[0].keywords:
        name = _call_name(meaningful[0])
        if evaluator.value(meaningful[0], True) is None and name:
            return "call", name
    if len(returns) == 1 and evaluator.is_gate_expression(returns[0]):
        return "rocm", ""
    if all(evaluator.value(r, True) is False for r in returns) and any(_nvidia_only(evaluator, r) for r in meaningful):
        return "nvidia", ""
    return None


def _nvidia_only(evaluator: GateEvaluator, expr: ast.expr) -> bool:
    """False on ROCm because of something in it (not a plain constant)."""
    return not isinstance(expr, ast.Constant) and evaluator.value(expr, True) is False


def _rocm_condition(evaluator: GateEvaluator, call: ast.expr) -> bool:
    return isinstance(call, ast.Call) and bool(call.args) and evaluator.value(call.args[0], True) is True \
        and evaluator.value(call.args[0], False) is not True


def _own_nodes(function: ast.AST):
    """Nodes of a function body, not of nested functions or classes."""
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _skips_on_rocm(evaluator: GateEvaluator, function: ast.AST, named_skip: bool) -> bool:
    """The function (a decorator factory) skips the test on ROCm: a skip call under a ROCm
    condition, or ``skipIf(<ROCm test>, ...)``; with a ROCm-skip name, any skip will do."""
    for node in ast.walk(function):
        if isinstance(node, ast.If) and evaluator.value(node.test, True) is True \
                and evaluator.value(node.test, False) is not True and terminates(node.body):
            last = node.body[-1]
            if isinstance(last, ast.Raise) or (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                                              and _call_name(last.value) in ("skip", "skipTest")):
                return True
        if isinstance(node, ast.Call) and _call_name(node) in _SKIP_IF and _rocm_condition(evaluator, node):
            return True
        if named_skip and isinstance(node, ast.Call) and (_call_name(node) or "").lower().startswith("skip"):
            return True
    return False


STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers")


def containing_list(parent: ast.AST, child: ast.AST) -> list | None:
    for field in STATEMENT_LISTS:
        block = getattr(parent, field, None)
        if isinstance(block, list):
            for item in block:
                if item is child:
                    return block
    return None


def conditions_on_path(path: list[ast.AST], is_skip_helper: Callable[[str], bool] = lambda name: False,
                       resolve: NameResolver | None = None) -> list[tuple[ast.expr, bool]]:
    """(condition, required truth value) pairs that hold wherever the last node of ``path`` runs."""
    found: list[tuple[ast.expr, bool]] = []
    if path and isinstance(path[0], ast.Module):
        found.extend(module_skips(path[0]))
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, (ast.If, ast.While)) and child is not parent.test:
            if any(item is child for item in parent.body):
                found.append((parent.test, True))
            elif isinstance(parent, ast.If) and any(item is child for item in parent.orelse):
                found.append((parent.test, False))
        elif isinstance(parent, ast.IfExp) and child is not parent.test:
            found.append((parent.test, child is parent.body))
        elif isinstance(parent, ast.BoolOp):
            # Every other operand of an `and` must be true for it to matter (`cap >= (9, 0)
            # and not torch.version.hip`), of an `or` false.
            for value in parent.values:
                if value is not child:
                    found.append((value, isinstance(parent.op, ast.And)))
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in child.decorator_list:
                bound = _resolved(decorator, resolve) if isinstance(decorator, ast.Name) else decorator
                if bound is not decorator and isinstance(bound, ast.Call):
                    decorator = bound  # `_skip_no_sm100 = pytest.mark.skipif(...)` then `@_skip_no_sm100`
                found.extend(skip_conditions(decorator, is_skip_helper))
                if resolve is not None:
                    found.extend(parametrize_skips(decorator, resolve))
        if isinstance(child, ast.stmt):
            block = containing_list(parent, child)
            if block is None:
                continue
            for previous in block:
                if previous is child:
                    break
                # What follows `assert cond` runs only where cond holds.
                if isinstance(previous, ast.Assert):
                    found.append((previous.test, True))
                # Code after `if gate: return` runs only where the gate is false.
                if isinstance(previous, ast.If):
                    if terminates(previous.body) and not terminates(previous.orelse):
                        found.append((previous.test, False))
                    elif previous.orelse and terminates(previous.orelse) and not terminates(previous.body):
                        found.append((previous.test, True))
    return found
