"""Which platform evaluates a Python condition to what: the ROCm-gate logic.

``GateEvaluator.value(expr, rocm)`` answers True / False / None (unknown) for a condition
under one platform; ``possible(expr, rocm)`` gives the set of values an expression can take
there (``DEVICE_TYPE = "hip" if torch.version.hip else "cuda"`` is ``{"hip"}`` on ROCm), so a
comparison with a project's own platform variable (``DEVICE_TYPE == "cuda"``,
``in ("xpu", "hip")``) gates like ``is_rocm`` does. It is used both for reachability
(``nvidia_only``) and for folding the gates away in the NVIDIA view.

What a module-level name or function stands for is a ``Fact`` (``statement_facts``): its value
per platform, a function's return value per platform (a return under an early ROCm return is
not reached on ROCm), or a decorator that skips on ROCm. The project model and a file's own
context compute facts with the same function; the evaluator asks them through ``facts``.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, cast

from ..lazy_re import lazy_compile
from ..platform_words import READERS
from .backends import NVIDIA_ONLY_IMPORTS, nvidia_only_import
from .flow import called_name, containing_list
from .capability import is_capability_call, judge
from .nodes import child_nodes, walk
from .platform_sources import follow_bound, platform_selection, platform_values, user_choice

# An unknown value that is truthy and not None (a version string): `torch.version.hip` on ROCm.
SOME = Ellipsis

# Names of availability flags and tests (`_EXT_AVAILABLE`, `is_available`, `HAS_KERNELS`, `loaded`).
_AVAILABILITY = lazy_compile(r"(?i)(?:^|_)(?:available|loaded)$|^_?has_|^is_\w+_available$")
# NVIDIA-only technology named in an availability flag or an extension's op (`CUDA_CUTE_TMA_AVAILABLE`,
# `HAS_FLASHINFER`, `hasattr(_C, "fused_logp_sm90")`): never built for ROCm (a name: weaker evidence).
_NVIDIA_TECHNOLOGY = lazy_compile(r"(?i)(?<![a-z0-9])(?:cute|cutlass|wgmma|tcgen05|tma|deep_?gemm|flashinfer|quack"
                                r"|trt_?llm|tensorrt|nvshmem|fa3|hopper|blackwell|sm_?(?:90a?|100a?|103|120a?))"
                                r"(?![a-z0-9])")
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
# A name that states its platform, read when no definition of it is visible (weaker evidence,
# shown by `explain`): `rocm_build()`, `USE_HIP`, `ROCM_HOME`, `is_amd()` are ROCm tests;
# `is_nvidia()` is false on ROCm. CUDA words say nothing: ROCm runs the `torch.cuda` API.
ROCM_NAME = READERS["python-gate"]
NVIDIA_NAME = lazy_compile(r"(?<![a-z0-9])nvidia(?![a-z0-9])", re.IGNORECASE)
# Device-name tests (`"MI300" in torch.cuda.get_device_name()`, `"gfx" in props.gcnArchName`).
_DEVICE_NAME_CALLS = frozenset({"get_device_name"})
_DEVICE_NAME_FIELDS = frozenset({"gcnArchName"})
_AMD_DEVICE_WORD = lazy_compile(r"(?i)^(?:amd|instinct|radeon|mi\d{2,3}\w*|gfx\w*)$")
_NVIDIA_DEVICE_WORD = lazy_compile(r"(?i)^(?:nvidia|geforce|tesla|quadro|rtx\w*|[abhlt]\d{2,3}\w*|gb\d{3}\w*|sm_?\d+)$")

Values = frozenset  # the values an expression may take on one platform (None in it: Python's None)
NameResolver = Callable[[ast.Name], "ast.expr | None"]


@dataclass(frozen=True)
class Fact:
    """What the gate logic knows of a module-level name: ``kind`` "value" (the name's value
    per platform), "call" (a function's return value per platform) or "skip" (a decorator
    that skips tests on ROCm). ``rocm``/``nvidia``: the possible values, None when unknown."""

    kind: str
    rocm: "Values | None" = None
    nvidia: "Values | None" = None
    note: str = ""  # what else explain should say (a branch left to the user's choice)

    def on(self, rocm: bool) -> "Values | None":
        return self.rocm if rocm else self.nvidia

    @property
    def meaning(self) -> str:
        """How it reads as a condition: "rocm" (true exactly on ROCm), "nvidia" (false on
        every AMD GPU), "skip", or "platform" (a value that differs per platform)."""
        if self.kind == "skip":
            return "skip"
        on_rocm = truth(self.rocm)
        if on_rocm is True and truth(self.nvidia) is False:
            return "rocm"
        return "nvidia" if on_rocm is False else "platform"

    def describe(self, name: str) -> str:
        if self.meaning == "skip":
            return f"`{name}` skips on ROCm"
        what = "returns" if self.kind == "call" else "is"
        if self.note == f"read from {name}":  # a platform source itself (platform_sources.py)
            return f"{name[0].upper()}{name[1:]} is {_show(self.rocm)} on ROCm and {_show(self.nvidia)} on NVIDIA"
        said = f"`{name}` {what} {_show(self.rocm)} on ROCm and {_show(self.nvidia)} on NVIDIA"
        return f"{said} ({self.note})" if self.note else said


# A flag or op named for NVIDIA-only technology (see _NVIDIA_TECHNOLOGY).
_NAMED_NVIDIA_ONLY = Fact("value", frozenset({False}), None,
                          "it names NVIDIA-only technology, which ROCm builds leave out (a name: weaker evidence)")


def _show(values: "Values | None") -> str:
    if values is None:
        return "unknown"
    shown = sorted("a non-empty value" if v is SOME else repr(v) for v in values)
    return " or ".join(shown) if shown else "nothing"


def platform_dependent(rocm: "Values | None", nvidia: "Values | None") -> bool:
    """The platforms can tell the value apart: a fact worth keeping."""
    return not (rocm is None and nvidia is None) and rocm != nvidia


def truth(values: "Values | None") -> bool | None:
    """Truthiness of every value in the set, None when they differ or are unknown."""
    if not values:
        return None
    seen = {True if v is SOME else bool(v) for v in values}
    return seen.pop() if len(seen) == 1 else None


def _equal(a, b) -> bool | None:
    if a is SOME or b is SOME:
        return False if a is None or b is None else None
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False if (a is None) != (b is None) or isinstance(a, str) != isinstance(b, str) else None
    return a == b


def _all_or_none(results: Iterable[bool | None]) -> bool | None:
    seen = set(results)
    return seen.pop() if len(seen) == 1 else None


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


def _leaf_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


class GateEvaluator:
    """Three-valued truth of conditions per platform. ``facts`` gives what the project (or the
    file) knows of a module-level name (``Fact``); ``resolve`` gives the value a local name was
    bound to (``use_cuda = torch.version.cuda and ...``); ``facts(name, called)`` is asked with
    ``called`` True for a call (a function, whose judging may read other files) and False for
    a name's value. Reachability assumes a GPU is present
    (``assume_gpu``) and reads names that state their platform when nothing defines them
    (``by_name``, with ``defined`` telling which names have a visible definition and
    ``settled`` which of those return one constant whatever the machine); NVIDIA views
    fold only platform tests. ``trail`` records the facts a verdict used, for ``explain``."""

    def __init__(self, gate_names: Iterable[str], qualname: Callable[[ast.AST], str | None],
                 facts: "Callable[[str, bool], Fact | None] | None" = None, resolve: NameResolver | None = None,
                 assume_gpu: bool = False, by_name: bool = False,
                 defined: Callable[[str], bool] = lambda name: False,
                 settled: Callable[[str], bool] = lambda name: False,
                 is_module: Callable[[str], bool] = lambda name: False,
                 selectors: "Mapping[str, str] | None" = None,
                 nvidia_only_module: Callable[[str], "str | None"] = lambda name: None,
                 nvidia_only_import: Callable[[str, int], bool] = lambda module, level: False) -> None:
        self.gate_names = set(gate_names) | {ROCM_MARK}
        self.assume_gpu = assume_gpu  # `torch.cuda.is_available()` is True (reachability, not views)
        self.qualname = qualname
        self.facts = facts
        self.resolve = resolve
        self.by_name = by_name
        self.defined = defined
        self.settled = settled  # a visible definition returns one constant (returns_one_constant)
        self.is_module = is_module  # a name bound by an import (`utils.DEVICE_TYPE`)
        self.trail: list[tuple[str, "Fact | None", ast.AST]] = []  # (name, fact or None: by its name, node)
        self._resolving: set[int] = set()
        self._capability: dict[int, tuple[ast.AST, bool]] = {}  # Compare -> it reads get_device_capability()
        self.user_choices: list[str] = []  # environment variables whose branches were left to the user
        # environment variables in which the user names the platform -> where the project compares one with ROCm
        self.selectors: Mapping[str, str] = selectors or {}
        # a name bound to a project module the ROCm build never runs -> why (its evidence)
        self.nvidia_only_module = nvidia_only_module
        self.nvidia_only_import = nvidia_only_import  # (module, level): an import the ROCm build cannot do

    def is_gate_reference(self, node: ast.AST) -> bool:
        """``IS_ROCM``, ``utils.IS_ROCM``, ``is_hip()``, ``current_platform.is_rocm()``."""
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            node = node.func
        if isinstance(node, ast.Name):
            return node.id in self.gate_names
        if isinstance(node, ast.Attribute):
            return node.attr in self.gate_names
        return False

    # Values ---------------------------------------------------------------------------
    def possible(self, node: ast.AST, rocm: bool) -> "Values | None":
        """The values ``node`` may take on ROCm (``rocm=True``) or NVIDIA; None if unknown."""
        found = self._possible(node, rocm)
        if found is None and rocm and isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
            name = _leaf_name(node.func) if isinstance(node, ast.Call) else _leaf_name(node)
            if name and _AVAILABILITY.search(name) and _NVIDIA_TECHNOLOGY.search(name):
                self.trail.append((name, _NAMED_NVIDIA_ONLY, node))
                return frozenset({False})
        return found

    def _possible(self, node: ast.AST, rocm: bool) -> "Values | None":
        if self.is_gate_reference(node):
            return frozenset({rocm})
        source = platform_values(node, self.resolve)
        if source is not None:
            self.trail.append((source.name, Fact("value", source.rocm, source.nvidia, f"read from {source.name}"), node))
            return source.rocm if rocm else source.nvidia
        if isinstance(node, ast.Constant):
            plain = node.value is None or isinstance(node.value, (str, int, float))  # bool is an int
            return frozenset({node.value}) if plain else None
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, rocm)
            if test is not None:
                return self.possible(node.body if test else node.orelse, rocm)
            return _union(self.possible(node.body, rocm), self.possible(node.orelse, rocm))
        if isinstance(node, ast.BoolOp):
            return self._bool_op_values(node, rocm)
        if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            value = self.value(node, rocm)
            return None if value is None else frozenset({value})
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self._name_values(node, rocm)
        if isinstance(node, ast.Call):
            return self._call_values(node, rocm)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            return self._lookup_values(node.value, node.slice, None, rocm)  # `{"hip": "amd"}[backend]`
        return None

    def _lookup_values(self, table: ast.expr, key: ast.expr, default: ast.expr | None,
                       rocm: bool) -> "Values | None":
        """A literal table looked up with a key of known values (`{"cuda": "nvidia", "hip":
        "amd"}.get(backend, backend)`); a key the table lacks gives ``default`` (None: unknown)."""
        if isinstance(table, ast.Name) and self.resolve is not None:
            table = self.resolve(table) or table
        if not isinstance(table, ast.Dict) or not table.keys:
            return None
        entries = {}
        for k, v in zip(table.keys, table.values):
            if not (isinstance(k, ast.Constant) and isinstance(v, ast.Constant)) or isinstance(v.value, (bytes, complex)):
                return None
            entries[k.value] = v.value
        keys = self.possible(key, rocm)
        if keys is None or SOME in keys:
            return None
        found: set = set()
        for k in keys:
            if k in entries:
                found.add(entries[k])
            elif default is None:
                return None
            else:
                same_key = isinstance(default, ast.Name) and isinstance(key, ast.Name) and default.id == key.id
                missing = frozenset({k}) if same_key else self.possible(default, rocm)
                if missing is None:
                    return None
                found |= missing
        return frozenset(found)

    def _bool_op_values(self, node: ast.BoolOp, rocm: bool) -> "Values | None":
        """`a and b` is a where a is falsy, else b (`or`: a where truthy); short-circuited."""
        found: set = set()
        stops_on = isinstance(node.op, ast.Or)  # `or` stops at a truthy value, `and` at a falsy one
        for index, operand in enumerate(node.values[:-1]):
            values = self.possible(operand, rocm)
            if values is None:
                # An unknown operand: a later `and` operand that is always falsy (`or`: truthy)
                # still settles the truth, though not which value it gives.
                later = [self.value(v, rocm) for v in node.values[index + 1:]]
                if any(v is stops_on for v in later):
                    return frozenset({True}) if stops_on else frozenset({False, None})
                return None
            found |= {v for v in values if (True if v is SOME else bool(v)) == stops_on}
            if all((True if v is SOME else bool(v)) == stops_on for v in values):
                return frozenset(found)
        last = self.possible(node.values[-1], rocm)
        return None if last is None else frozenset(found | last)

    def _name_values(self, node: ast.Name | ast.Attribute, rocm: bool) -> "Values | None":
        name = self.qualname(node)
        if name == HIP_VERSION:
            return frozenset({SOME if rocm else None})
        if name == CUDA_VERSION:
            # None on ROCm; a string on CUDA builds but None on CPU-only builds.
            return frozenset({None}) if rocm else None
        if isinstance(node, ast.Name) and self.resolve is not None and id(node) not in self._resolving:
            bound = self.resolve(node)
            if bound is not None:
                self._resolving.add(id(node))
                try:
                    return self.possible(bound, rocm)
                finally:
                    self._resolving.discard(id(node))
        leaf = node.id if isinstance(node, ast.Name) else node.attr
        if isinstance(node, ast.Attribute) and rocm and self._unavailable_there(node):
            return frozenset({False})
        if isinstance(node, ast.Name) or (isinstance(node.value, ast.Name) and self.is_module(node.value.id)):
            fact = self.facts(leaf, False) if self.facts is not None else None
            if fact is not None and fact.kind == "value" and fact.on(rocm) is not None:
                self.trail.append((leaf, fact, node))
                return fact.on(rocm)
        return self._by_name(leaf, node, rocm, truthy=frozenset({SOME}), falsy=frozenset({None}))

    def _unavailable_there(self, node: ast.Attribute) -> bool:
        """`cuda_backend._EXT_AVAILABLE`, `ext.is_available()`: the availability of a project
        module the ROCm build never runs (a CUDA-only component, the CUDA side of a split) is
        False there."""
        if not (isinstance(node.value, ast.Name) and _AVAILABILITY.search(node.attr)):
            return False
        why = self.nvidia_only_module(node.value.id)
        if why is None:
            return False
        self.trail.append((f"{node.value.id}.{node.attr}", Fact("value", frozenset({False}), None, why), node))
        return True

    def _call_values(self, node: ast.Call, rocm: bool) -> "Values | None":
        func = node.func
        if rocm and isinstance(func, ast.Attribute) and not node.args and self._unavailable_there(func):
            return frozenset({False})
        if isinstance(func, ast.Attribute) and func.attr == "get" and 1 <= len(node.args) <= 2 and not node.keywords:
            default = node.args[1] if len(node.args) == 2 else ast.Constant(None)
            looked_up = self._lookup_values(func.value, node.args[0], default, rocm)
            if looked_up is not None:
                return looked_up
        if self.assume_gpu and not node.args and self.qualname(node.func) == GPU_PRESENT:
            return frozenset({True})  # hazards matter where a GPU runs the code: assume one is present
        if (isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) in (2, 3)
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in ("hip", "cuda")
                and self.qualname(node.args[0]) == "torch.version"):
            # `getattr(torch.version, "hip", None)`: torch.version has both attributes on every build
            return self.possible(ast.Attribute(node.args[0], node.args[1].value, ast.Load()), rocm)
        if (rocm and isinstance(func, ast.Name) and func.id == "hasattr" and len(node.args) == 2
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                and _NVIDIA_TECHNOLOGY.search(node.args[1].value)):
            self.trail.append((f"hasattr(..., {node.args[1].value!r})", _NAMED_NVIDIA_ONLY, node))
            return frozenset({False})  # `hasattr(_C, "fused_logp_sm90")`: an op ROCm builds leave out
        if (isinstance(func, ast.Name) and func.id == "hasattr" and len(node.args) == 2
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in ("hip", "cuda")
                and self.qualname(node.args[0]) == "torch.version"):
            return frozenset({True})  # torch.version has both attributes on every build
        if (rocm and _leaf_name(func) == "find_spec" and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            module = node.args[0].value  # `importlib.util.find_spec("deep_gemm")`: no ROCm build has it
            if nvidia_only_import(module) or self.nvidia_only_import(module, 0):
                self.trail.append((f"find_spec({module!r})", Fact("value", frozenset({None}), None,
                                                                 f"`{module}` exists only for NVIDIA GPUs"), node))
                return frozenset({None})
        if isinstance(func, ast.Name) and func.id == "bool" and len(node.args) == 1 and not node.keywords:
            value = self.value(node.args[0], rocm)  # `HIP_BUILD = bool(torch.version.hip)`
            return None if value is None else frozenset({value})
        name = _leaf_name(func)
        fact = self.facts(name, True) if self.facts is not None and name else None
        if fact is not None and fact.kind == "call" and fact.on(rocm) is not None:
            self.trail.append((name or "", fact, node))
            return fact.on(rocm)
        if name and not node.args and not node.keywords:
            return self._by_name(name, node, rocm, truthy=frozenset({True}), falsy=frozenset({False}))
        return None

    def _by_name(self, name: str, node: ast.AST, rocm: bool, truthy: "Values", falsy: "Values") -> "Values | None":
        """A name that states its platform and that nothing visible defines (see ROCM_NAME)."""
        if not self.by_name:
            return None
        if ROCM_NAME.search(name):
            # A definition that returns one constant decides (a stub); one whose value depends
            # on what the build machine has (env, paths: `rocm_build()`) leaves the name's
            # word, which has one meaning.
            if self.settled(name):
                return None
            self.trail.append((name, None, node))
            return truthy if rocm else falsy
        # Any visible definition of an NVIDIA-named one decides: PyTorch's "cuda" is ROCm's too.
        if NVIDIA_NAME.search(name) and rocm and not self.defined(name):
            self.trail.append((name, None, node))
            return falsy
        return None

    # Truth ----------------------------------------------------------------------------
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
        if isinstance(node, ast.Compare) and self._reads_capability(node):
            # A comparison meant to select an NVIDIA architecture is false on ROCm by intent
            # (ROC106 reports where the number itself misleads).
            if not rocm:
                return None  # judged for AMD only: nothing to say about the NVIDIA side
            verdict = judge(node, self.resolve or (lambda name: None))
            return verdict.amd_intent if verdict is not None else None
        if isinstance(node, ast.Compare):
            return self._compare(node, rocm) if len(node.ops) == 1 else None
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, rocm)
            if test is None:
                return None
            return self.value(node.body if test else node.orelse, rocm)
        return truth(self.possible(node, rocm))

    def _reads_capability(self, node: ast.Compare) -> bool:
        known = self._capability.get(id(node))
        if known is None or known[0] is not node:  # keyed by id, the node kept: ids are reused
            known = self._capability[id(node)] = (node, any(is_capability_call(n) for n in walk(node)))
        return known[1]

    def _compare(self, node: ast.Compare, rocm: bool) -> bool | None:
        op, left, right = node.ops[0], node.left, node.comparators[0]
        named = _device_name_test(self, node, rocm)
        if named is not None:
            return named
        selected = self._named_by_user(node, rocm)
        if selected is not None:
            return selected
        if isinstance(op, (ast.In, ast.NotIn)):
            found = self._membership(left, right, rocm)
            return None if found is None else found == isinstance(op, ast.In)
        if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            # `torch.version.cuda >= "12.4"` on ROCm orders None: it raises TypeError, so
            # nothing that needs it true ever runs there (taken as False)
            sides = (self.possible(left, rocm), self.possible(right, rocm))
            return False if frozenset({None}) in sides else None
        if not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
        lefts, rights = self.possible(left, rocm), self.possible(right, rocm)
        if not lefts or not rights:
            return None
        equal = _all_or_none(_equal(a, b) for a in lefts for b in rights)
        return None if equal is None else equal == isinstance(op, (ast.Eq, ast.Is))

    def _named_by_user(self, node: ast.Compare, rocm: bool) -> bool | None:
        """`ARCH == "rocm"`, `"cuda" in ARCH` with ARCH read from an environment variable the
        project compares with a ROCm word: the user names the platform there, so the ROCm word
        holds exactly on ROCm and an NVIDIA word is false on ROCm (unknown on NVIDIA: unset)."""
        selected = platform_selection(node, self.resolve)
        if selected is None:
            return None
        variable, platform, positive = selected
        where = self.selectors.get(variable) if platform == "nvidia" else f"line {node.lineno}"
        if where is None:
            return None
        if platform == "rocm":
            named = rocm
        elif rocm:
            named = False
        else:
            return None
        fact = Fact("value", frozenset({SOME}), None,
                    f"the user names the platform in it: the project compares it with a ROCm word at {where}")
        self.trail.append((variable, fact, node))
        return named == positive

    def _membership(self, left: ast.expr, right: ast.expr, rocm: bool) -> bool | None:
        """`v in ("hip", "xpu")` (a literal collection, maybe by name), or `"hip" in DEVICE`."""
        container = _resolved(right, self.resolve)
        lefts = self.possible(left, rocm)
        if not lefts:
            return None
        if isinstance(container, (ast.Tuple, ast.List, ast.Set)):
            items = [self.possible(e, rocm) for e in container.elts]
            if any(not item or len(item) != 1 for item in items):
                return None
            members = [next(iter(item)) for item in items if item]  # each item a single known value
            return _all_or_none(_any3(_equal(v, m) for m in members) for v in lefts)
        rights = self.possible(right, rocm)
        if not rights or not all(isinstance(v, str) for v in lefts | rights):
            return None
        return _all_or_none(a in b for a in lefts for b in rights)

    def is_gate_expression(self, node: ast.AST) -> bool:
        """True when the expression is exactly "running on ROCm" (True on ROCm, False on NVIDIA)."""
        return self.value(node, True) is True and self.value(node, False) is False


def _any3(results: Iterable[bool | None]) -> bool | None:
    """Three-valued `any`: True if one is True, False if all are False, else unknown."""
    seen = list(results)
    if True in seen:
        return True
    return False if all(r is False for r in seen) else None


def _union(a: "Values | None", b: "Values | None") -> "Values | None":
    return None if a is None or b is None else a | b


def _device_name_test(evaluator: GateEvaluator, node: ast.Compare, rocm: bool) -> bool | None:
    """`"MI300" in torch.cuda.get_device_name()` / `"gfx" in props.gcnArchName`: a word that
    names an AMD GPU is absent from every NVIDIA name (and "AMD" is in every AMD one), a word
    that names an NVIDIA GPU is absent from every AMD name."""
    op, needle, haystack = node.ops[0], node.left, node.comparators[0]
    if not (isinstance(op, (ast.In, ast.NotIn)) and isinstance(needle, ast.Constant)
            and isinstance(needle.value, str)):
        return None
    target = _resolved(haystack, evaluator.resolve)
    # `props = get_device_properties(i)` then `props.name`: the properties may sit in a name
    properties = _resolved(target.value, evaluator.resolve) if isinstance(target, ast.Attribute) else None
    names_device = (isinstance(target, ast.Call) and _leaf_name(target.func) in _DEVICE_NAME_CALLS) or (
        isinstance(target, ast.Attribute) and target.attr in _DEVICE_NAME_FIELDS | {"name"}
        and isinstance(properties, ast.Call) and _leaf_name(properties.func) == "get_device_properties")
    if not names_device:
        return None
    word = needle.value.strip()
    found: bool | None = None
    if _AMD_DEVICE_WORD.match(word):
        found = (True if word.upper() == "AMD" else None) if rocm else False
    elif _NVIDIA_DEVICE_WORD.match(word):
        found = False if rocm else (True if word.upper() == "NVIDIA" else None)
    return None if found is None else found == isinstance(op, ast.In)


def terminates(body: list[ast.stmt]) -> bool:
    """The block always leaves its enclosing block (return/raise/continue/break last, or a
    call that stops the test or the process: ``pytest.skip(...)``, ``self.skipTest(...)``)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and called_name(last.value) in _LEAVING_CALLS


def _marker(at: ast.AST) -> ast.Name:
    return ast.copy_location(ast.Name(id=ROCM_MARK, ctx=ast.Load()), at)


def skip_conditions(decorator: ast.expr, is_skip_helper: Callable[[str], bool]) -> list[tuple[ast.expr, bool]]:
    """Conditions under which a decorated test runs: ``@skipIf(c, ...)`` -> (c, False);
    ``@skipUnless(c)`` -> (c, True); a ROCm skip decorator (``@skip_if_rocm``, by name or by
    the project's definition) -> ("on ROCm", False)."""
    node = decorator
    call = node if isinstance(node, ast.Call) else None
    name = called_name(call) if call else (node.attr if isinstance(node, ast.Attribute)
                                          else node.id if isinstance(node, ast.Name) else None)
    if not name:
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
    if not (isinstance(decorator, ast.Call) and called_name(decorator) == "parametrize" and len(decorator.args) >= 2):
        return []
    values = _resolved(decorator.args[1], resolve)
    if not isinstance(values, (ast.List, ast.Tuple)) or not values.elts:
        return []
    every: list[ast.expr] = []
    for element in values.elts:
        if not (isinstance(element, ast.Call) and called_name(element) == "param"):
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
    return cast(ast.expr, follow_bound(node, resolve))


def module_skips(module: ast.Module) -> list[tuple[ast.expr, bool]]:
    """``pytestmark = pytest.mark.skipif(c, ...)`` (or a list of marks), or a module-level
    ``if c: pytest.skip(..., allow_module_level=True)``: the module's tests run only where
    every ``c`` is false."""
    found: list[tuple[ast.expr, bool]] = []
    for stmt in module.body:
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body:
            last = stmt.body[-1]
            if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and called_name(last.value) == "skip" \
                    and any(k.arg == "allow_module_level" for k in last.value.keywords):
                found.append((stmt.test, False))
        if (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets)):
            marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
            for mark in marks:
                found.extend(skip_conditions(mark, lambda name: False))
    return found


def statement_facts(stmt: ast.stmt, evaluator: GateEvaluator, named_skip: bool,
                    before: Callable[[str], "Values | None"] = lambda name: None) -> list[tuple[str, Fact]]:
    """What a module-level statement tells the gate logic about the names it defines: a
    function's return value per platform (or that it is a decorator skipping on ROCm), a
    name's value per platform (``DEVICE_TYPE = "hip" if torch.version.hip else "cuda"``, or
    bound in the branches of a module-level ``if``/``try``, starting from ``before(name)``:
    the value the module gave it above, ``PLATFORM = None``). Only platform-dependent facts."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if _skips_on_rocm(evaluator, stmt, named_skip):
            return [(stmt.name, Fact("skip"))]
        outer = evaluator.resolve
        evaluator.resolve = _local_resolver(stmt, outer)  # `has_rocm = torch.version.hip is not None`
        marks = len(evaluator.user_choices), len(evaluator.trail)
        try:
            fact = Fact("call", return_values(stmt, evaluator, True), return_values(stmt, evaluator, False),
                        _user_choice_note(evaluator, *marks))
        finally:
            evaluator.resolve = outer
        return [(stmt.name, fact)] if platform_dependent(fact.rocm, fact.nvidia) else []
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if skip_conditions(stmt.value, lambda name: False) and _rocm_condition(evaluator, stmt.value):
            return [(name, Fact("skip")) for name in names]
        marks = len(evaluator.user_choices), len(evaluator.trail)
        fact = Fact("value", evaluator.possible(stmt.value, True), evaluator.possible(stmt.value, False))
        fact = Fact("value", fact.rocm, fact.nvidia, _user_choice_note(evaluator, *marks))
        return [(name, fact) for name in names] if platform_dependent(fact.rocm, fact.nvidia) else []
    if isinstance(stmt, (ast.If, ast.Try)):
        found = []
        for name in dict.fromkeys(_bound_names(stmt)):
            fact = Fact("value", assigned_values([stmt], name, evaluator, True, before(name)),
                        assigned_values([stmt], name, evaluator, False, before(name)))
            if platform_dependent(fact.rocm, fact.nvidia):
                found.append((name, fact))
        return found
    return []


def _local_resolver(function: ast.AST, outer: "NameResolver | None") -> NameResolver:
    """A function's own names bound once (its parameters and names bound more often are
    unknown), then whatever ``outer`` resolves (module level)."""
    local: dict[str, list] = {arg.arg: [None] for arg in walk(function.args)  # type: ignore[attr-defined]
                              if isinstance(arg, ast.arg)}
    for node in _own_nodes(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in walk(target):
                    if isinstance(name, ast.Name):
                        value = node.value if target is name and not isinstance(node, ast.AugAssign) else None
                        local.setdefault(name.id, []).append(value)

    def resolve(node: ast.Name) -> ast.expr | None:
        if node.id in local:
            values = local[node.id]
            return values[0] if len(values) == 1 else None
        return outer(node) if outer is not None else None

    return resolve


def _bound_names(stmt: ast.stmt) -> Iterator[str]:
    """Names a module-level block binds with plain assignments (not inside functions)."""
    for node in _own_nodes(stmt):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    yield target.id


def assigned_values(block: list[ast.stmt], name: str, evaluator: GateEvaluator, rocm: bool,
                    before: "Values | None" = None) -> "Values | None":
    """The values ``name`` holds after ``block`` runs on one platform (``before``: what it
    held; None: unknown). Branches the platform never takes are skipped; a branch it may take
    adds its values; loops and ``try`` bodies may not run at all."""
    current = before
    for stmt in block:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                current = evaluator.possible(stmt.value, rocm)
            elif any(name in {n.id for n in walk(t) if isinstance(n, ast.Name)} for t in targets):
                current = None  # unpacked or otherwise bound: unknown
        elif isinstance(stmt, ast.If):
            test = _platform_test(evaluator, stmt.test, rocm)
            taken = [stmt.body] if test is True else [stmt.orelse] if test is False else [stmt.body, stmt.orelse]
            results = [assigned_values(branch, name, evaluator, rocm, current) for branch in taken]
            current = results[0] if len(results) == 1 else _union(*results)
        elif isinstance(stmt, ast.Try) and rocm and (cut := failing_import(stmt, evaluator)) is not None:
            # `try: import flash_attn_interface; HAS_FA3 = True / except ImportError: HAS_FA3 = False`:
            # on ROCm the import fails, the rest of the body never runs and the handler does
            current = assigned_values(stmt.body[:cut], name, evaluator, rocm, current)
            handler = next(h for h in stmt.handlers if catches_import_error(h))
            current = assigned_values([*handler.body, *stmt.finalbody], name, evaluator, rocm, current)
        elif isinstance(stmt, (ast.Try, ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith)):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, [])
                if inner:
                    current = _union(current, assigned_values(inner, name, evaluator, rocm, current))
            for handler in getattr(stmt, "handlers", []):
                current = _union(current, assigned_values(handler.body, name, evaluator, rocm, current))
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)) and name in _defined_by(stmt):
            current = frozenset({SOME})  # a module or what it defines: bound once the import succeeded
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if name in _defined_by(stmt):
                current = None
    return current


def _defined_by(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    return {getattr(stmt, "name", "")}


def return_values(function: ast.FunctionDef | ast.AsyncFunctionDef, evaluator: GateEvaluator,
                  rocm: bool) -> "Values | None":
    """The values a function returns on one platform: its body run with the platform's gates
    decided (``if torch.version.hip: return "hip"`` ends it on ROCm), None when unknown."""
    returned, falls_through = _run(function.body, evaluator, rocm)
    if returned is None:
        return None
    return returned | {None} if falls_through else returned


def _run(block: list[ast.stmt], evaluator: GateEvaluator, rocm: bool) -> tuple["Values | None", bool]:
    """(the values returned so far, whether control may reach the end of ``block``)."""
    returned: "Values | None" = frozenset()
    for index, stmt in enumerate(block):
        if isinstance(stmt, ast.Return):
            value = frozenset({None}) if stmt.value is None else evaluator.possible(stmt.value, rocm)
            if value is None and isinstance(stmt.value, ast.Name):
                # `if ...: name = "rocm" elif ...: name = "cuda" ... return name`
                value = assigned_values(block[:index], stmt.value.id, evaluator, rocm)
            return _union(returned, value), False
        if isinstance(stmt, ast.Raise) or (isinstance(stmt, ast.Assert) and evaluator.value(stmt.test, rocm) is False):
            return returned, False
        if isinstance(stmt, ast.If):
            test = _platform_test(evaluator, stmt.test, rocm)
            taken = [stmt.body] if test is True else [stmt.orelse] if test is False else [stmt.body, stmt.orelse]
            falls = False
            for branch in taken:
                inner, through = _run(branch, evaluator, rocm)
                returned, falls = _union(returned, inner), falls or through
            if not falls:
                return returned, False
        elif isinstance(stmt, ast.Try) and rocm and (cut := failing_import(stmt, evaluator)) is not None:
            handler = next(h for h in stmt.handlers if catches_import_error(h))
            for inner_block in (stmt.body[:cut], [*handler.body, *stmt.finalbody]):
                inner, through = _run(inner_block, evaluator, rocm)
                returned = _union(returned, inner)
            if not through:
                return returned, False
        elif isinstance(stmt, (ast.Try, ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith, ast.Match)):
            blocks = [getattr(stmt, f, []) for f in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(stmt, "handlers", [])] + [c.body for c in getattr(stmt, "cases", [])]
            for inner_block in blocks:
                inner, _through = _run(inner_block, evaluator, rocm)
                returned = _union(returned, inner)
    return returned, True


def failing_import(stmt: ast.Try, evaluator: "GateEvaluator | None" = None) -> int | None:
    """Where the body of a ``try`` that catches ImportError imports a package that exists only
    for NVIDIA GPUs (``backends.NVIDIA_ONLY_IMPORTS``, or a project module the ROCm build never
    builds: a CUDA-only component): on ROCm the body stops there."""
    if not any(catches_import_error(h) for h in stmt.handlers):
        return None
    for index, inner in enumerate(stmt.body):
        if isinstance(inner, ast.Import):
            modules = [alias.name for alias in inner.names]
        elif isinstance(inner, ast.ImportFrom) and not inner.level and inner.module:
            modules = [inner.module] + [f"{inner.module}.{alias.name}" for alias in inner.names]
        elif isinstance(inner, ast.ImportFrom) and evaluator is not None:
            if evaluator.nvidia_only_import(inner.module or "", inner.level):
                return index
            continue
        else:
            continue
        if any(m == root or m.startswith(root + ".") for m in modules for root in NVIDIA_ONLY_IMPORTS):
            return index
        # (`from pkg.thirdparty import deep_gemm`: the named submodule may be the NVIDIA-only one)
        if evaluator is not None and any(evaluator.nvidia_only_import(m, 0) for m in modules[:8]):
            return index
    return None


_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    """``except:``, ``except ImportError``, ``except (ModuleNotFoundError, ...)``, ``except Exception``."""
    return handler.type is None or names_import_error(handler.type)


def names_import_error(caught: ast.expr | list[ast.expr]) -> bool:
    """One of the exceptions named (`ImportError`, `(ModuleNotFoundError, OSError)`, an argument
    list of `contextlib.suppress(...)`) covers a failed import."""
    names = caught if isinstance(caught, list) else caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS for n in names)


def _platform_test(evaluator: GateEvaluator, test: ast.expr, rocm: bool) -> bool | None:
    """A branch's test as the platform decides it: a test of an environment variable the user
    sets (`os.environ.get("FORCE_DEVICE") == "cuda"`) is the user's choice, not the platform's,
    so the platform's own value is what follows it (the branch is left out)."""
    value = evaluator.value(test, rocm)
    if value is None:
        choice = user_choice(test, evaluator.resolve)
        if choice is not None:
            evaluator.user_choices.append(choice)
            return False
    return value


def _user_choice_note(evaluator: GateEvaluator, since: int, trail_since: int) -> str:
    """What a fact's computation left to the user (its own branches or a fact it used)."""
    variables = list(dict.fromkeys(evaluator.user_choices[since:]))
    notes = [f.note for _name, f, _node in evaluator.trail[trail_since:] if f is not None and f.note]
    if variables:
        shown = ", ".join(f"`{v}`" for v in variables)
        notes.insert(0, f"a branch taken only when the user sets {shown} is the user's choice, not the platform")
    return next(iter(dict.fromkeys(notes)), "")


def _rocm_condition(evaluator: GateEvaluator, call: ast.expr) -> bool:
    return isinstance(call, ast.Call) and bool(call.args) and evaluator.value(call.args[0], True) is True \
        and evaluator.value(call.args[0], False) is not True


def returns_one_constant(stmt: ast.AST) -> bool:
    """A definition that settles its value whatever the machine: a function whose every
    ``return`` gives the same constant (``def on_amd(): return False``), or a name bound to a
    constant. One that asks the environment or the file system (``rocm_build()`` returning
    True or False by what it finds) does not."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return isinstance(stmt.value, ast.Constant)
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    returned = [node.value for node in _own_nodes(stmt) if isinstance(node, ast.Return)]
    values = {repr(v.value) if isinstance(v, ast.Constant) else None for v in returned}
    return len(values) == 1 and None not in values


def _own_nodes(function: ast.AST):
    """Nodes of a function body, not of nested functions or classes."""
    todo = list(child_nodes(function))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(child_nodes(node))


def _skip_call(stmt: ast.stmt) -> bool:
    """`pytest.skip(...)` / `self.skipTest(...)` as a statement."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and called_name(stmt.value) in ("skip", "skipTest")


def _ends_in_skip(body: list[ast.stmt]) -> bool:
    """The block ends the test: it raises or calls ``skip``/``skipTest`` last (asked before its
    condition is evaluated, which costs more)."""
    return (isinstance(body[-1], ast.Raise) or _skip_call(body[-1])) and terminates(body)


def _ends_in_skip_call(body: list[ast.stmt]) -> bool:
    """The block ends in `pytest.skip(...)` / `self.skipTest(...)` or `return`."""
    return isinstance(body[-1], ast.Return) or _skip_call(body[-1])


def _skips_on_rocm(evaluator: GateEvaluator, function: ast.AST, named_skip: bool) -> bool:
    """The function (a decorator factory) skips the test on ROCm: a skip call under a ROCm
    condition, or ``skipIf(<ROCm test>, ...)``; with a ROCm-skip name, any skip will do."""
    for node in walk(function):
        if isinstance(node, ast.If) and _ends_in_skip(node.body) and evaluator.value(node.test, True) is True \
                and evaluator.value(node.test, False) is not True:
            return True
        if isinstance(node, ast.Call) and called_name(node) in _SKIP_IF and _rocm_condition(evaluator, node):
            return True
        if named_skip and isinstance(node, ast.Call) and called_name(node).lower().startswith("skip"):
            return True
    return False




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
                # `try: ... if not ext.AVAILABLE: pytest.skip(...)` (or `return`): that leaves
                # whatever the handlers catch (a skip is no Exception)
                if isinstance(previous, ast.Try):
                    found.extend((inner.test, False) for inner in previous.body
                                 if isinstance(inner, ast.If) and not inner.orelse and _ends_in_skip_call(inner.body))
                # Code after `if gate: return` runs only where the gate is false.
                if isinstance(previous, ast.If):
                    if terminates(previous.body) and not terminates(previous.orelse):
                        found.append((previous.test, False))
                    elif previous.orelse and terminates(previous.orelse) and not terminates(previous.body):
                        found.append((previous.test, True))
    return found
