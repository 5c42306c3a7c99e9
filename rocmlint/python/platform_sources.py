"""Where a Python program learns which GPU platform it runs on: one table, one entry a source.

Each ``PlatformSource`` recognises an expression and gives the values it may take on ROCm and
on NVIDIA (None: unknown there). The gate evaluator asks ``platform_values`` before anything
else, so helpers and module constants computed from these sources become platform facts
(``IS_NVIDIA = driver.active.get_current_target().backend == "cuda"`` is False on ROCm).
``torch.version.hip``/``.cuda``, project helpers and names that state their platform are read
by the evaluator itself (``gates.py``); device-name tests by ``gates._device_name_test``.

A branch taken only when the user sets an environment variable (``FORCE_DEVICE=cuda``, a
test-only fallback) is the user's choice, not the platform: ``user_choice`` names the
variable, and the evaluator leaves such a branch out when it computes what a helper returns.
Variables that locate a toolkit (``CUDA_HOME``, ``ROCM_PATH``) describe the machine instead.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from ..lazy_re import lazy_compile
from .nodes import walk


Resolver = Callable[[ast.Name], "ast.expr | None"]
Values = frozenset
SOME = Ellipsis  # gates.SOME: an unknown truthy value (a "gfx942" string)

# Environment variables that say where a toolkit is installed: a fact about the machine.
TOOLKIT_VARIABLE = lazy_compile(r"^(?:CUDA_(?:HOME|PATH|ROOT)|CUDA_TOOLKIT_ROOT_DIR|ROCM_(?:PATH|HOME|ROOT)|HIP_PATH)$")
_NVIDIA_TOOLKIT_VARIABLE = lazy_compile(r"^(?:CUDA_(?:HOME|PATH|ROOT)|CUDA_TOOLKIT_ROOT_DIR)$")
# Executables that exist only with NVIDIA's toolkits (`shutil.which("nvcc")`).
NVIDIA_TOOLS = frozenset({"nvcc", "nvidia-smi", "ptxas", "cuobjdump", "nvdisasm", "trtexec"})


def _leaf(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def follow_bound(node: ast.AST, resolve: Resolver | None) -> ast.AST:
    """A name followed to the expression bound to it (a few steps: ``x = y; y = expr``)."""
    for _ in range(4):
        if not (isinstance(node, ast.Name) and resolve is not None):
            break
        bound = resolve(node)
        if bound is None:
            break
        node = bound
    return node


def _string_argument(call: ast.Call) -> str | None:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def _triton_backend(node: ast.AST, resolve: Resolver | None) -> bool:
    """`triton.runtime.driver.active.get_current_target().backend` ("hip" on ROCm)."""
    if not (isinstance(node, ast.Attribute) and node.attr == "backend"):
        return False
    target = follow_bound(node.value, resolve)
    return isinstance(target, ast.Call) and _leaf(target) == "get_current_target"


def _gcn_arch_name(node: ast.AST, resolve: Resolver | None) -> bool:
    """`torch.cuda.get_device_properties(i).gcnArchName` (a "gfx..." string on ROCm)."""
    if not (isinstance(node, ast.Attribute) and node.attr == "gcnArchName"):
        return False
    props = follow_bound(node.value, resolve)
    return isinstance(props, ast.Call) and _leaf(props) == "get_device_properties"


def _has_gcn_arch_name(node: ast.AST, resolve: Resolver | None) -> bool:
    """`hasattr(props, "gcnArchName")`."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
            and len(node.args) == 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "gcnArchName")


def _nvidia_tool_lookup(node: ast.AST, resolve: Resolver | None) -> bool:
    """`shutil.which("nvcc")`: None where NVIDIA's toolkit is not installed, as on ROCm."""
    return isinstance(node, ast.Call) and _leaf(node) == "which" and _string_argument(node) in NVIDIA_TOOLS


def _cuda_home(node: ast.AST, resolve: Resolver | None) -> bool:
    """`torch.utils.cpp_extension.CUDA_HOME` (None on ROCm, which has ROCM_HOME), or the
    environment's `CUDA_HOME`/`CUDA_PATH`."""
    if isinstance(node, (ast.Name, ast.Attribute)) and _leaf(node) == "CUDA_HOME":
        return True
    variable = environment_variable(node)
    return variable is not None and _NVIDIA_TOOLKIT_VARIABLE.match(variable) is not None


# What PyTorch's build says of itself, the same on ROCm and on NVIDIA GPU builds: a ROCm build
# is a "CUDA" build (`torch.backends.cuda.is_built()`, MIOpen answers `cudnn.is_available()`);
# neither is a macOS build with MPS. (An XPU device may sit beside either: unknown.)
_BUILT_ON_BOTH = frozenset({"torch.backends.cuda.is_built", "torch.backends.cudnn.is_available"})
_ABSENT_ON_BOTH = frozenset({"torch.backends.mps.is_available", "torch.backends.mps.is_built"})


def _call_of(node: ast.AST, names: frozenset) -> bool:
    if not (isinstance(node, ast.Call) and not node.args and not node.keywords):
        return False
    parts = []
    func = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    return isinstance(func, ast.Name) and ".".join([func.id, *reversed(parts)]) in names


def _gpu_build(node: ast.AST, resolve: Resolver | None) -> bool:
    return _call_of(node, _BUILT_ON_BOTH)


def _other_backend(node: ast.AST, resolve: Resolver | None) -> bool:
    return _call_of(node, _ABSENT_ON_BOTH)


def _platform_object_is_cuda(node: ast.AST, resolve: Resolver | None) -> bool:
    """`current_platform.is_cuda()`: a platform object (vLLM's and its forks') whose ROCm
    platform answers `is_rocm()` and not `is_cuda()` (`is_cuda_alike()` is both)."""
    return (isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute)
            and node.func.attr == "is_cuda" and _leaf(node.func.value) == "current_platform")


def _of_current_platform(node: ast.AST, resolve: Resolver | None) -> bool:
    """`current_platform()` or `current_platform` (vLLM's and its forks' platform object), or a
    name bound to it (`platform = current_platform()`)."""
    return _leaf(follow_bound(node, resolve)) == "current_platform"


def _platform_object_vendor(node: ast.AST, resolve: Resolver | None) -> bool:
    """`current_platform().vendor`: the GPU vendor the platform object detected ("amd" on ROCm)."""
    return isinstance(node, ast.Attribute) and node.attr == "vendor" and _of_current_platform(node.value, resolve)


def _platform_object_is_nvidia(node: ast.AST, resolve: Resolver | None) -> bool:
    """`current_platform().is_nvidia` (a property or a call): NVIDIA only."""
    if isinstance(node, ast.Call) and not node.args:
        node = node.func
    return isinstance(node, ast.Attribute) and node.attr == "is_nvidia" and _of_current_platform(node.value, resolve)


@dataclass(frozen=True)
class PlatformSource:
    name: str  # what explain says
    matches: Callable[[ast.AST, "Resolver | None"], bool]
    rocm: "Values | None"
    nvidia: "Values | None"


PLATFORM_SOURCES = (
    PlatformSource("Triton's active driver target backend", _triton_backend,
                   frozenset({"hip"}), frozenset({"cuda"})),
    PlatformSource("the device's `gcnArchName` (ROCm only)", _gcn_arch_name, frozenset({SOME}), None),
    PlatformSource("`hasattr(props, \"gcnArchName\")`", _has_gcn_arch_name, frozenset({True}), None),
    PlatformSource("a lookup of an NVIDIA-only tool (nvcc)", _nvidia_tool_lookup, frozenset({None}), None),
    PlatformSource("the CUDA toolkit's location (`CUDA_HOME`)", _cuda_home, frozenset({None}), None),
    PlatformSource("PyTorch's GPU build (`torch.backends.cuda.is_built()`, true on ROCm too)", _gpu_build,
                   frozenset({True}), frozenset({True})),
    PlatformSource("the platform object's `current_platform.is_cuda()` (NVIDIA only)", _platform_object_is_cuda,
                   frozenset({False}), frozenset({True})),
    PlatformSource("Apple's MPS back end of PyTorch", _other_backend, frozenset({False}), frozenset({False})),
    PlatformSource("the platform object's GPU vendor (`current_platform().vendor`)", _platform_object_vendor,
                   frozenset({"amd"}), frozenset({"nvidia"})),
    PlatformSource("the platform object's `is_nvidia` (NVIDIA only)", _platform_object_is_nvidia,
                   frozenset({False}), frozenset({True})),
)


def platform_values(node: ast.AST, resolve: Resolver | None) -> "PlatformSource | None":
    """The table's entry for ``node``, or None."""
    for source in PLATFORM_SOURCES:
        if source.matches(node, resolve):
            return source
    return None


def environment_variable(node: ast.AST) -> str | None:
    """The variable a read of the environment names: `os.environ.get("X")`, `os.getenv("X")`,
    `os.environ["X"]`; None when ``node`` is no such read."""
    if isinstance(node, ast.Call) and _leaf(node) in ("get", "getenv", "setdefault"):
        func = node.func
        reads = _leaf(node) == "getenv" or (isinstance(func, ast.Attribute) and _leaf(func.value) == "environ")
        return _string_argument(node) if reads else None
    if isinstance(node, ast.Subscript) and _leaf(node.value) == "environ":
        key = node.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    return None


def user_choice(test: ast.AST, resolve: Resolver | None = None) -> str | None:
    """The environment variable a condition reads when it is the user's choice (`FORCE_DEVICE`),
    not a toolkit's location; None when the condition reads none. Names are followed to the
    value they hold (`forced = os.environ.get(...)` then `if forced == "cuda":`)."""
    for node in walk(test):
        variable = environment_variable(follow_bound(node, resolve))
        if variable is None and isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
                and _leaf(node.comparators[0]) == "environ":
            variable = node.left.value  # `"FORCE_CUDA" in os.environ`
        if variable is not None and not TOOLKIT_VARIABLE.match(variable):
            return variable
    return None


# A platform the user names in an environment variable (`ARCH=rocm`, `if "cuda" in ARCH:`).
_ROCM_WORDS = frozenset({"rocm", "hip", "amd", "hcc", "amdgpu"})
_NVIDIA_WORDS = frozenset({"cuda", "nvidia", "nvcc"})
_CASE_METHODS = frozenset({"lower", "upper", "casefold", "strip"})
# Cheap test before a parse: a file that reads the environment and holds a quoted ROCm word.
_SELECTOR_HINT = lazy_compile(rb"(?i)[\"'](?:rocm|hip|amd|hcc|amdgpu)[\"']")


def _environment_side(node: ast.AST, resolve: Resolver | None) -> str | None:
    """The variable an expression reads, through names and case changes
    (`os.environ.get("ARCH", "").lower()`)."""
    node = follow_bound(node, resolve)
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CASE_METHODS:
        node = follow_bound(node.func.value, resolve)
    return environment_variable(node)


def _platform_named(node: ast.AST) -> str | None:
    """"rocm" or "nvidia" when every word (one string, or a literal collection) names it."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    strings = [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    if not items or len(strings) != len(items):
        return None
    words = {word.lower() for word in strings}
    if words <= _ROCM_WORDS:
        return "rocm"
    return "nvidia" if words <= _NVIDIA_WORDS else None


def platform_selection(node: ast.Compare, resolve: Resolver | None) -> tuple[str, str, bool] | None:
    """(variable, "rocm" or "nvidia", positive) when the comparison asks whether the user named
    that platform in an environment variable (`os.environ["ARCH"] == "rocm"`, `"cuda" in ARCH`,
    `ARCH not in ("hip", "rocm")`); ``positive`` is False for `!=`/`not in`."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
        return None
    positive = isinstance(node.ops[0], (ast.Eq, ast.In))
    for variable_side, word_side in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
        if not isinstance(word_side, (ast.Constant, ast.Tuple, ast.List, ast.Set)):
            continue
        platform = _platform_named(word_side)
        if platform is None:
            continue
        variable = _environment_side(variable_side, resolve)
        if variable is not None and not TOOLKIT_VARIABLE.match(variable):
            return variable, platform, positive
    return None


def platform_selector_variables(source: bytes, tree: ast.AST | None, resolve: Resolver | None) -> dict[str, int]:
    """Environment variables the file compares with a ROCm word, and the line of the first such
    comparison: the project asks the user to name the platform there, so a test of the same
    variable for "cuda" is false on ROCm (in any file of the project). ``tree``: the parsed
    file, or None to parse it here when the cheap test passes."""
    if (b"environ" not in source and b"getenv" not in source) or not _SELECTOR_HINT.search(source):
        return {}
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return {}
        if resolve is None:
            resolve = _bound_once(tree)
    found: dict[str, int] = {}
    for node in walk(tree):
        if isinstance(node, ast.Compare):
            selected = platform_selection(node, resolve)
            if selected is not None and selected[1] == "rocm":
                found.setdefault(selected[0], node.lineno)
    return found


def _bound_once(tree: ast.AST) -> Resolver:
    """Names the file binds exactly once (anywhere), to their values."""
    bound: dict[str, ast.expr | None] = {}
    for node in walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            bound[name] = None if name in bound else node.value
    return lambda name: bound.get(name.id)
