"""What a `torch.cuda.get_device_capability()` comparison means on AMD GPUs.

On ROCm the call returns the GCN/RDNA architecture number, not an SM version. A comparison
is evaluated on every AMD GPU of the table and on NVIDIA's architectures; what it selects on
NVIDIA tells what it is meant to test (fp16, bf16 and FP8 support are generic features AMD
GPUs have too; any other set of SM versions is an NVIDIA micro-architecture feature, which
no AMD GPU has). The AMD GPUs whose answer differs from that intent are the ones the
comparison gets wrong.
"""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Callable

from .flow import called_name
from .nodes import walk

CAPABILITY_CALL = "get_device_capability"


@dataclass(frozen=True)
class Gpu:
    name: str
    capability: tuple[int, int]
    fp8: bool


AMD_GPUS = (
    Gpu("MI200 (gfx90a)", (9, 0), fp8=False),
    Gpu("MI300 (gfx942)", (9, 4), fp8=True),
    Gpu("MI350 (gfx950)", (9, 5), fp8=True),
    Gpu("RDNA2 (gfx1030)", (10, 3), fp8=False),
    Gpu("RDNA3 (gfx1100)", (11, 0), fp8=False),
    Gpu("RDNA4 (gfx1200)", (12, 0), fp8=True),
)
NVIDIA_CAPABILITIES = ((7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0),
                       (12, 0), (12, 1))
# Capabilities only AMD GPUs report (gfx942, gfx950, gfx1150/1151): a test against one is
# written for AMD's numbers on purpose, and no NVIDIA GPU has them.
AMD_ONLY_CAPABILITIES = frozenset({(9, 4), (9, 5), (11, 5)})
# The same as the two-digit numbers a `major * 10 + minor` helper gives.
_AMD_ONLY_NUMBERS = frozenset(major * 10 + minor for major, minor in AMD_ONLY_CAPABILITIES)
# Generic features: the SM versions that have them, and whether an AMD GPU has them.
GENERIC_FEATURES: tuple[tuple[str, frozenset, Callable[[Gpu], bool]], ...] = (
    ("fp16", frozenset(c for c in NVIDIA_CAPABILITIES if c >= (7, 0)), lambda g: True),
    # Turing's level (int8 tensor cores; flex attention and Triton's minimum): every AMD GPU has
    # its equivalent. An NVIDIA-only kernel behind such a gate (Marlin) is judged by what it switches.
    ("SM 7.5-class GPUs", frozenset(c for c in NVIDIA_CAPABILITIES if c >= (7, 5)), lambda g: True),
    ("bf16", frozenset(c for c in NVIDIA_CAPABILITIES if c >= (8, 0)), lambda g: True),
    ("FP8", frozenset(c for c in NVIDIA_CAPABILITIES if c >= (8, 9)), lambda g: g.fp8),
)

_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


class Unknown(Exception):
    """The expression is not a function of the capability alone."""


@dataclass(frozen=True)
class Judgement:
    """A capability comparison judged against the AMD table."""

    feature: str  # what it tests on NVIDIA ("bf16", "an NVIDIA architecture (SM 9.0)", ...)
    wrong: tuple[Gpu, ...]  # AMD GPUs that get the wrong answer
    nvidia_only: bool  # True on no AMD GPU by intent: the guarded code is NVIDIA-only
    amd_intent: bool | None = None  # its intended value on every AMD GPU (an NVIDIA architecture test)
    true_on: tuple[Gpu, ...] = ()  # AMD GPUs where the comparison is True
    amd_numbers: bool = False  # compares with a number only AMD GPUs report: written for AMD

    def describe(self) -> str:
        return f"tests {self.feature} but is wrong on {gpu_names(self.wrong)}"


def gpu_names(gpus: tuple[Gpu, ...]) -> str:
    return "every AMD GPU" if len(gpus) == len(AMD_GPUS) else ", ".join(g.name for g in gpus)


def is_capability_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    return called_name(node) == CAPABILITY_CALL


Resolver = Callable[[ast.Name], "ast.expr | None"]
# What a call returns, when it is a helper of the capability (`sm_version()` returning `major * 10 + minor`).
Returned = Callable[[ast.Call], "ast.expr | None"]


def _no_helpers(call: ast.Call) -> ast.expr | None:
    return None


def evaluate(node: ast.AST, capability: tuple[int, int], resolve: Resolver, depth: int = 0,
             returned: Returned = _no_helpers):
    """The value of ``node`` when the GPU reports ``capability``; raises Unknown."""
    if depth > 12:
        raise Unknown
    if is_capability_call(node):
        return capability
    if isinstance(node, ast.Call):
        body = returned(node)
        if body is not None:
            return evaluate(body, capability, resolve, depth + 1, returned)
        if not node.args and isinstance(node.func, ast.Attribute) and node.func.attr == "is_available":
            return True  # `torch.cuda.is_available() and ...`: a capability exists where a GPU does
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return tuple(evaluate(e, capability, resolve, depth + 1, returned) for e in node.elts)
    if isinstance(node, ast.Subscript):
        value = evaluate(node.value, capability, resolve, depth + 1, returned)
        index = evaluate(node.slice, capability, resolve, depth + 1, returned)
        if isinstance(value, tuple) and isinstance(index, int) and -len(value) <= index < len(value):
            return value[index]
        raise Unknown
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = evaluate(node.left, capability, resolve, depth + 1, returned)
        right = evaluate(node.right, capability, resolve, depth + 1, returned)
        if isinstance(left, (int, float)) and isinstance(right, (int, float)):
            return _BINARY[type(node.op)](left, right)
        raise Unknown
    if isinstance(node, ast.Compare):
        left = evaluate(node.left, capability, resolve, depth + 1, returned)
        for op, comparator in zip(node.ops, node.comparators):
            right = evaluate(comparator, capability, resolve, depth + 1, returned)
            if type(op) in _COMPARE:
                if type(left) is not type(right) and not all(isinstance(v, (int, float)) for v in (left, right)):
                    raise Unknown
                ok = _COMPARE[type(op)](left, right)
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, tuple):
                ok = (left in right) == isinstance(op, ast.In)
            else:
                raise Unknown
            if not ok:
                return False
            left = right
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not evaluate(node.operand, capability, resolve, depth + 1, returned)
    if isinstance(node, ast.BoolOp):  # `major > 8 or (major == 8 and minor >= 9)`
        values = [bool(evaluate(v, capability, resolve, depth + 1, returned)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Name):
        bound = resolve(node)
        if bound is not None:
            return evaluate(bound, capability, resolve, depth + 1, returned)
    raise Unknown


def judge(compare: ast.AST, resolve: Resolver, returned: Returned = _no_helpers) -> Judgement | None:
    """Judge a comparison of the capability; None when it is not a function of it alone
    (an empty ``wrong`` when its answer is the same on every NVIDIA GPU). ``returned`` gives
    what a helper call returns."""
    try:
        verdict = judge_answers(lambda capability: bool(evaluate(compare, capability, resolve, returned=returned)))
    except (Unknown, TypeError, ValueError, ZeroDivisionError):
        return None
    if names_amd_capability(compare, resolve):
        return Judgement("an AMD architecture", (), nvidia_only=False, true_on=verdict.true_on, amd_numbers=True)
    return verdict


def names_amd_capability(test: ast.AST, resolve: Resolver) -> bool:
    """The test compares with a capability only AMD GPUs report (`< (9, 5)`: gfx942 against
    gfx950; `sm == 94`), itself or through a name bound to it."""
    for node in walk(test):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            bound = resolve(side) if isinstance(side, ast.Name) else None
            value = _literal(bound if bound is not None else side)
            if not isinstance(value, (int, tuple)):
                continue
            try:
                if value in AMD_ONLY_CAPABILITIES or (isinstance(value, int) and value in _AMD_ONLY_NUMBERS):
                    return True
                if isinstance(value, tuple) and any(v in AMD_ONLY_CAPABILITIES for v in value):
                    return True  # `cap in ((9, 4), (9, 5))`
            except TypeError:
                continue  # a literal holding something unhashable (`((9, 4), {"x": 1})`)
    return False


def _literal(node: ast.AST | None):
    try:
        value = ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, tuple) and all(isinstance(v, list) for v in value):
        value = tuple(tuple(v) for v in value)
    return value if not isinstance(value, bool) else None


def judge_answers(answer: Callable[[tuple[int, int]], bool]) -> Judgement:
    """Judge a test of the capability given as its answer for each capability (the C++ half
    evaluates its own expressions); ``answer`` may raise, and the caller catches."""
    on_nvidia = {c: answer(c) for c in NVIDIA_CAPABILITIES}
    on_amd = {g: answer(g.capability) for g in AMD_GPUS}
    true_on = tuple(g for g in AMD_GPUS if on_amd[g])
    if len(set(on_nvidia.values())) == 1:
        return Judgement("nothing", (), nvidia_only=False, true_on=true_on)  # the same answer on every GPU
    # The feature is what newer GPUs have: the side of the comparison without SM 7.0.
    positive = not on_nvidia[NVIDIA_CAPABILITIES[0]]
    selected = frozenset(c for c, v in on_nvidia.items() if v == positive)
    for name, sms, has in GENERIC_FEATURES:
        if selected == sms:
            wrong = tuple(g for g in AMD_GPUS if on_amd[g] != (has(g) == positive))
            return Judgement(name, wrong, nvidia_only=False, true_on=true_on)
    ordered = sorted(selected)
    newer = [c for c in NVIDIA_CAPABILITIES if c >= ordered[0]]
    versions = (f"{ordered[0][0]}.{ordered[0][1]}+" if ordered == newer and len(ordered) > 1
                else ", ".join(f"{c[0]}.{c[1]}" for c in ordered))
    wrong = tuple(g for g in AMD_GPUS if on_amd[g] == positive)  # no AMD GPU has an SM feature
    return Judgement(f"an NVIDIA architecture (SM {versions})", wrong, nvidia_only=positive, amd_intent=not positive,
                     true_on=true_on)
