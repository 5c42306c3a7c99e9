from __future__ import annotations

import ast

from rocmlint.model import Applicability
from rocmlint.python.capability import AMD_GPUS, gpu_names, is_capability_call, judge
from rocmlint.python.context import FUNCTIONS
from rocmlint.python.flow import value_sites
from rocmlint.python.nodes import child_nodes, walk
from rocmlint.python.switched import (nvidia_feature, operands_settle_on_rocm, switched_code, tuning_only,
                                      weight_only_storage)
from rocmlint.rule import Rule

# Expressions a capability tuple passes through before it is compared.
_CARRIERS = (ast.Subscript, ast.BinOp, ast.Tuple)


UNKNOWN_MESSAGE = ("feature gated on `get_device_capability()` against `{other}`, which rocmlint cannot evaluate: "
                   "ROCm reports GCN/RDNA arch numbers (MI300X is (9, 4)); check what the comparison means there")

FEATURE_MESSAGE = ("`get_device_capability()` gate turns on NVIDIA-only `{feature}` on {gpus}: ROCm reports "
                   "GCN/RDNA arch numbers; test the feature or the platform instead")

_CAPABILITY = ast.Call(func=ast.Name(id="get_device_capability", ctx=ast.Load()), args=[], keywords=[])


class DeviceCapabilityGate(Rule):
    """Features switched on NVIDIA compute-capability numbers.

    ## What it does
    Finds `torch.cuda.get_device_capability()` results compared with version tuples or
    numbers (`>= (8, 0)`, `[0] >= 9`, `major, minor = ...` then `major >= 8`, `in [(9, 0)]`, a
    helper returning them: `sm_version() >= 90` where `sm_version()` returns `major * 10 + minor`)
    where the ROCm build runs the comparison and its answer is wrong on some AMD GPU.
    The comparison is evaluated on the capabilities AMD GPUs report (MI200 (9, 0), MI300
    (9, 4), MI350 (9, 5), RDNA2 (10, 3), RDNA3 (11, 0), RDNA4 (12, 0)) and on NVIDIA's: what it
    selects on NVIDIA says what it tests (fp16 from 7.0, bf16 from 8.0, FP8 from 8.9, or an
    NVIDIA architecture, which no AMD GPU is). `>= (8, 0)` for bf16 is right on every AMD GPU
    and not reported; `>= (9, 0)` turns Hopper paths on for all of them; the message names
    the AMD GPUs a comparison gets wrong.

    Only gates are reported. A capability that becomes part of a cache key
    (`(shape, get_device_capability())`), indexes a table (`TABLE[cap]`, `cap in self._plans`)
    or is logged decides nothing by itself: quiet. A comparison with a value rocmlint cannot
    evaluate (`>= self.min_capability`) is reported only where the code it switches on names
    an NVIDIA-only feature (FlashAttention-3, TMA, `wgmma`, CUTLASS, ...): a gate against an
    unknown number that raises, picks a path AMD has or only tunes is a question, not a finding. Comparisons the ROCm build never
    runs are quiet, whatever decides it: `torch.version.hip`, a project's platform variable
    (`if DEVICE_TYPE == "cuda":`, computed even when a user's environment override may force
    "cuda"), Triton's active backend (`IS_NVIDIA = ...get_current_target().backend == "cuda"`),
    the device's `gcnArchName`, a helper that returns early on ROCm, a device-name test, or a
    back end that needs nvcc or `CUDA_HOME` (`is_available()` false on ROCm). A module named for
    ROCm (`rocm_flash_attn.py`, a `rocm/` folder) is an AMD back end: its `[0] != 9` means gfx9.
    A comparison with a number only AMD GPUs report (`< (9, 5)`: gfx942 against gfx950; `(9, 4)`,
    `(11, 5)`, `sm >= 94`) was written for AMD on purpose. A boolean helper whose other exits
    give ROCm the same answer anyway (`if major not in (10, 12): return False` then `return
    target.backend == "tileir"`, "hip" on ROCm) switches nothing there.

    What the gate switches decides too. A gate whose sides only choose tuning values (tile and
    block sizes, stages, warps, Triton configs), log text or Triton's environment is quiet: on
    AMD it is at worst slower. A gate whose taken side names an NVIDIA-only feature (TMA,
    wgmma/tcgen05, cluster launch, async copies, FlashAttention-3, Hopper/Blackwell kernels) is
    reported on the AMD GPUs that take that side, even when the number looks right
    (`x.is_cuda and get_device_capability()[0] >= 8` picking an Ampere async-copy kernel;
    `< (7, 5)` skipping a test, where the rest of the test runs a Marlin kernel on every AMD
    GPU). SM 7.5 by itself is a level every AMD GPU passes (flex attention, Triton).
    A predicate (`def is_hopper(): return ...[0] == 9`) is judged by what its callers switch
    with its answer, in its own module and in the modules that import it (through a package
    that re-exports it); a caller under an NVIDIA-only gate, or behind an operand that settles
    the test on ROCm (`HAS_MAGI_ATTENTION and is_hopper()`), decides nothing. A `skipif` mark
    beside another that skips on ROCm (`skipif(nvfuser_version() is None)`) decides nothing.

    ## Why is this bad?
    On ROCm the "capability" is the GCN architecture number, not an SM version: MI300X
    (gfx942) reports `(9, 4)`, MI250 (gfx90a) `(9, 0)`, RDNA3 `(11, 0)`. Checks written
    for NVIDIA (`>= (8, 0)` for bf16/flash attention, `== (9, 0)` for Hopper FP8/TMA) turn
    features on that ROCm does not have, or off where it does.

    ## Example
    ```python
    if torch.cuda.get_device_capability() >= (9, 0):
        use_fp8_kernels()
    ```
    Use instead: test the feature (`torch.cuda.is_bf16_supported()`, the GPU's
    `gcnArchName`, a try-and-fall-back) or gate the NVIDIA check on `torch.version.hip`.

    ## Fix safety
    Display-only: no mechanical rewrite knows which AMD architectures have the feature.

    ## References
    - https://github.com/pytorch/torchtitan/pull/4778
    """

    code = "ROC106"
    name = "device-capability-gate"
    message = "feature gated on `get_device_capability()`: ROCm reports GCN arch numbers (MI300X is (9, 4))"
    language = "python"
    pattern = r"get_device_capability\b"
    fix_applicability = Applicability.DISPLAY_ONLY

    valid = (
        "import torch\nprint(torch.cuda.get_device_capability())\n",
        "import torch\nif torch.cuda.get_device_capability() >= (8, 0):\n    use_bf16()\n",
        "import torch\ncap = (0, 0)\nif torch.cuda.is_available():\n    cap = torch.cuda.get_device_capability()\n"
        "needs_bf16 = pytest.mark.skipif(cap < (8, 0), reason='bf16')\n",
        "import torch\nif torch.cuda.get_device_capability() != (10, 0):\n    pytest.skip('needs SM100')\n",
        "import torch\nif not torch.version.hip and torch.cuda.get_device_capability() >= (8, 0):\n    enable()\n",
        "from torch.cuda import get_device_capability\n",
        "import torch\nDEVICE = 'hip' if torch.version.hip else 'cuda'\n"
        "if DEVICE == 'cuda' and torch.cuda.get_device_capability() >= (9, 0):\n    enable_wgmma()\n",
        "import torch\n_plans = {}\n\n\ndef plan(shape):\n    key = (shape, torch.cuda.get_device_capability())\n"
        "    if key not in _plans:\n        _plans[key] = build(shape)\n    return _plans[key]\n",
        "import torch\nif torch.cuda.get_device_capability()[0] >= 9:\n    num_stages = 4\nelse:\n    num_stages = 2\n",
        "import torch\nimport triton\nIS_NVIDIA = triton.runtime.driver.active.get_current_target().backend == 'cuda'\n"
        "if IS_NVIDIA and torch.cuda.get_device_capability() >= (9, 0):\n    enable_tma()\n",
        "import torch\n# gfx942's strided backward is wrong; gfx950 keeps the zero-copy path\n"
        "force_contiguous = torch.cuda.get_device_capability() < (9, 5)\n",
        "import torch\nif torch.__version__ >= '2.6':\n    import nvfuser_direct as nvfuser\nelse:\n    import nvfuser\n\n\n"
        "def device_supports_fp8():\n    return torch.cuda.get_device_capability()[0] > 8\n",
        "import torch\nUSE_FLEX = torch.cuda.get_device_capability() >= (7, 5)\n\n\n"
        "def attend(q, k, v):\n    return flex_attention(q, k, v) if USE_FLEX else sdpa(q, k, v)\n",
    )
    invalid = (
        "import torch\nif torch.cuda.get_device_capability() >= (9, 0):\n    enable_wgmma()\n",
        "import torch\n\n\ndef pick():\n    major, minor = torch.cuda.get_device_capability()\n"
        "    return 'fp8' if major >= 9 else 'bf16'\n",
        "import torch\nSM = torch.cuda.get_device_capability(0)[0] * 10\nHOPPER = SM == 90\n",
        "import torch\ncap = (0, 0)\nif torch.cuda.is_available():\n    cap = torch.cuda.get_device_capability()\n"
        "needs_sm90 = pytest.mark.skipif(cap < (9, 0), reason='wgmma')\n",
        "import torch\n\n\ndef attention(q, k, v, kernel):\n"
        "    if torch.cuda.get_device_capability() >= kernel.min_capability:\n"
        "        return flash_attn_3(q, k, v)\n    return sdpa(q, k, v)\n",
        "import torch\n\n\ndef copy(x):\n    if x.is_cuda and torch.cuda.get_device_capability()[0] >= 8:\n"
        "        return cp_async_copy(x)\n    return x.clone()\n",
        "import pytest\nimport torch\n\n\ndef test_marlin_gemm():\n    if torch.cuda.get_device_capability() < (7, 5):\n"
        "        pytest.skip('needs compute capability 7.5')\n    run_marlin_gemm()\n",
    )

    def check(self, ctx) -> None:
        from rocmlint.manifest.kinds import named_for_rocm
        from rocmlint.project.python import nvidia_backend_import

        if nvidia_backend_import(ctx.source):
            return  # the checks pick an NVIDIA-only backend (CUTLASS DSL, FA3, ...), which never loads on ROCm
        if named_for_rocm(ctx.path):
            return  # an AMD back end (`rocm_flash_attn.py`): its capability numbers are AMD's, on purpose
        tests_reported: set[int] = set()  # whole tests already reported: one finding a test
        for hit in ctx.hits():
            path = ctx.node_path(hit.start)
            if len(path) < 2 or not isinstance(path[-2], ast.Call) or path[-2].func is not path[-1]:
                continue
            call_path = path[:-1]
            if _climb_value(call_path) is None:
                continue  # part of a cache key or an index: a lookup, whatever its readers do
            judged = []
            tests: set[int] = set()
            helpers: dict[int, ast.expr] = {}  # a helper's call -> what it returns (`sm_version()`)
            for site in self._sites(ctx, call_path, helpers):
                verdict, test = self._compared(ctx, site, helpers)
                if test is not None and id(test) in tests_reported:
                    continue  # `cap[0] > 8 or (cap[0] == 8 and cap[1] >= 9)`: reported at its first call
                if verdict is not None:
                    tests.add(id(test))
                    climbed = _climb_value(site) or site
                    judged.append((verdict, switched_code(ctx, climbed[:-1])))
            if self._report(ctx, call_path[-1], judged):
                tests_reported |= tests

    @staticmethod
    def _report(ctx, call: ast.Call, judged: list) -> bool:
        """Report the call when one of its gates is wrong on an AMD GPU or turns on an
        NVIDIA-only feature there; whether it did."""
        # A gate that only picks tuning values, log text or Triton's environment is at
        # worst slower on AMD: what it switches decides, not the number it compares.
        judged = [(v, switches) for v, switches in judged if not tuning_only(switches)]
        # FP8 weights kept and cast up for the matmul (a weight-only quantiser) work on every GPU.
        judged = [(v, switches) for v, switches in judged if not weight_only_storage(switches)]
        # A number only AMD GPUs report (`< (9, 5)`: gfx942 against gfx950) was written for AMD.
        judged = [(v, switches) for v, switches in judged if isinstance(v, str) or not v.amd_numbers]
        if not judged:
            return False
        unknown = [(v, switches) for v, switches in judged if isinstance(v, str)]
        if unknown:  # a gate against a value the AMD table cannot evaluate: reported only
            # where what it switches is an NVIDIA-only feature (else a question, not a finding)
            feature = nvidia_feature([n for _, sw in unknown for s in sw for n in s.on])
            if feature:
                ctx.report(ctx.span_of(call), UNKNOWN_MESSAGE.format(other=unknown[0][0])
                           + f" (it turns on `{feature}`)")
            return bool(feature)
        wrong = [(v, switches) for v, switches in judged if v.wrong]
        if wrong:
            feature = nvidia_feature([n for _, sw in wrong for s in sw for n in (*s.on, *s.off)])
            switching = f" (it switches `{feature}`)" if feature else ""
            ctx.report(ctx.span_of(call), "`get_device_capability()` comparison "
                       + "; ".join(dict.fromkeys(v.describe() for v, _ in wrong)) + switching
                       + ": ROCm reports GCN/RDNA arch numbers; test the feature instead")
            return True
        # A number that looks right (`[0] >= 8` for bf16) still turns on an NVIDIA-only
        # feature wherever an AMD GPU takes that side (`cap < (7, 5)` skipping a Marlin test:
        # every AMD GPU takes the other side, and runs it).
        for verdict, switches in judged:
            false_on = tuple(g for g in AMD_GPUS if g not in verdict.true_on)
            for side, gpus in (([n for s in switches for n in s.on], verdict.true_on),
                               ([n for s in switches for n in s.off], false_on)):
                feature = nvidia_feature(side)
                if feature and gpus:
                    ctx.report(ctx.span_of(call), FEATURE_MESSAGE.format(feature=feature, gpus=gpu_names(gpus)))
                    return True
        return False

    @classmethod
    def _sites(cls, ctx, call_path, helpers: dict[int, ast.expr]) -> list[list]:
        sites = value_sites(ctx, call_path, _CARRIERS)
        root = sites[0]
        # major, minor = torch.cuda.get_device_capability()
        parent = root[-2]
        if isinstance(parent, ast.Assign) and parent.value is root[-1]:
            for target in parent.targets:
                if isinstance(target, ast.Tuple):
                    for element in target.elts:
                        if isinstance(element, ast.Name):
                            for load in ctx.loads_of(element.id, ctx.scope_of(root)):
                                sites.append(ctx.path_to(load))
        # Reads of a name climb too (`SM = cap[0] * 10` then `SM == 90`).
        expanded = []
        for site in sites:
            expanded.extend(value_sites(ctx, site, _CARRIERS) if site is not root else [site])
        # A helper returning the capability or a number made of it (`return major * 10 + minor`):
        # its callers in this file compare it.
        for site in list(expanded):
            value = _returned_value(_climb_value(site) or site)
            if value is None:
                continue
            for call in _helper_calls(ctx, _climb_value(site) or site):
                helpers[id(call)] = value
                expanded.extend(value_sites(ctx, ctx.path_to(call), _CARRIERS))
        return expanded

    @staticmethod
    def _compared(ctx, site, helpers: dict[int, ast.expr]) -> tuple:
        """(verdict, the whole test judged): verdict None: not a gate here (not compared, a
        lookup key, or gated); a str: a gate whose other side cannot be evaluated (its source);
        else the Judgement of the comparison on the AMD table."""
        carrier = site[-1]
        site = _climb_value(site)
        if site is None or len(site) < 2 or not isinstance(site[-2], ast.Compare):
            return None, None
        compare = site[-2]
        if ctx.gated(ctx.span_of(compare).start) or _rocm_stops_anyway(ctx, site[:-1]):
            return None, None
        if isinstance(compare.ops[0], (ast.In, ast.NotIn)) and compare.left is site[-1] and not isinstance(
                _resolved_container(ctx, compare.comparators[0], ctx.scope_of(site)), (ast.Tuple, ast.List, ast.Set)):
            return None, None  # `cap in self._kernels`: a lookup in a table, not a feature gate
        scope = ctx.scope_of(site)

        def bound(name):
            # A helper's own names (`major` in `sm_version()`) live in the helper's scope.
            return ctx.resolve_name(name, scope) or ctx.resolve_name(name)

        def carried(name):
            # The name this site was followed to holds the capability, whatever else the
            # name is bound to elsewhere (`cap = (0, 0)` when no GPU is present).
            return _CAPABILITY if name is carrier else bound(name)

        def returned(call):
            return helpers.get(id(call))

        resolve = bound
        verdict = judge(compare, resolve, returned)
        if verdict is None:
            resolve = carried
            verdict = judge(compare, resolve, returned)
        # The whole test the comparison is part of, while it depends on the capability alone
        # (`major > 8 or (major == 8 and minor >= 9)` tests FP8, not SM 9.0).
        i = len(site) - 3
        test = compare
        while verdict is not None and i >= 0 and isinstance(site[i], (ast.BoolOp, ast.UnaryOp)):
            wider = judge(site[i], resolve, returned)
            if wider is None:
                break
            verdict, test, i = wider, site[i], i - 1
        if verdict is None:
            other = next((side for side in (compare.left, *compare.comparators) if side is not site[-1]), compare)
            return ctx.source_of(other), compare
        return verdict, test


def _climb_value(site: list):
    """Up from the capability through what carries its value (`cap[0]`, `cap[0] * 10`,
    `(major, minor)`); None when it becomes part of a key or an index instead: a tuple that
    holds other values (`(name, cap)`), a subscript's index (`table[cap]`)."""
    i = len(site) - 1
    while i > 0:
        parent, child = site[i - 1], site[i]
        if isinstance(parent, ast.Subscript):
            if parent.value is not child:
                return None  # the capability indexes something: a lookup
        elif isinstance(parent, ast.Tuple):
            if any(element is not child and not _numeric(element) for element in parent.elts):
                return None  # `(name, torch.cuda.get_device_capability())`: a cache key
        elif not isinstance(parent, _CARRIERS):
            break
        i -= 1
    return site[: i + 1]


def _rocm_stops_anyway(ctx, compare_path: list) -> bool:
    """On ROCm the comparison decides nothing: an ``or`` around it is True there anyway (`cap <
    (9, 0) or not HAS_DEEP_GEMM` in a skip), an ``and`` False; or it guards a skip, a return or
    a raise that a following guard of the same block takes on ROCm anyway (`if cap[0] != 10:
    skip(...)` then `if not has_deep_gemm(): skip(...)`)."""
    from rocmlint.python.flow import containing_list
    from rocmlint.python.gates import terminates

    if operands_settle_on_rocm(ctx, compare_path):
        return True
    i = len(compare_path) - 1
    while i > 0 and isinstance(compare_path[i - 1], (ast.BoolOp, ast.UnaryOp)):
        i -= 1
    if i >= 2 and _sibling_mark_skips_on_rocm(ctx, compare_path[i - 1], compare_path[i], compare_path[i - 2]):
        return True
    if i < 2 or not isinstance(compare_path[i - 1], ast.If) or compare_path[i - 1].test is not compare_path[i]:
        return False
    guard = compare_path[i - 1]
    block = containing_list(compare_path[i - 2], guard)
    if block is None or not terminates(guard.body) or guard.orelse:
        return False
    if isinstance(compare_path[i - 2], FUNCTIONS) and _same_answer_after(ctx, guard, block):
        return True
    for stmt in block[block.index(guard) + 1:][:4]:
        if not (isinstance(stmt, ast.If) and terminates(stmt.body)):
            return False  # code that runs on ROCm comes first
        if ctx.gates.value(stmt.test, True) is True:
            return True
    return False


def _sibling_mark_skips_on_rocm(ctx, mark: ast.AST, condition: ast.AST, holder: ast.AST) -> bool:
    """The condition is a skip mark's, and another skip mark among the same marks (the
    decorators of the test, or a tuple of marks handed to a test factory) skips on ROCm:
    `skipif(nvfuser_version() is None)` above `skipif(cap[0] < 9)`."""
    from rocmlint.python.gates import skip_conditions

    if not isinstance(mark, ast.expr) or not any(
            test is condition for test, _runs in skip_conditions(mark, ctx.is_skip_helper)):
        return False
    if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        marks = holder.decorator_list
    elif isinstance(holder, (ast.Tuple, ast.List)):
        marks = holder.elts
    else:
        return False
    return any(ctx.gates.value(test, True) is (not runs) for other in marks if other is not mark
               for test, runs in skip_conditions(other, ctx.is_skip_helper))


def _same_answer_after(ctx, guard: ast.If, body: list[ast.stmt]) -> bool:
    """The guard returns a value and every way out of the rest of the function gives the same
    truth on ROCm (`if major not in (10, 12): return False` then `return target.backend ==
    "tileir"`, which is "hip" on ROCm): whichever way the test goes, ROCm gets the same answer."""
    from rocmlint.python.gates import terminates

    last = guard.body[-1]
    if not isinstance(last, ast.Return):
        return False
    answer = _truth_on_rocm(ctx, last.value)
    rest = body[body.index(guard) + 1:]
    if answer is None or not rest:
        return False
    if not terminates(rest) and answer is not False:
        return False  # falling off the end returns None
    returns = [node for stmt in rest for node in _walk_function_body(stmt) if isinstance(node, ast.Return)]
    return bool(returns) and all(_truth_on_rocm(ctx, r.value) is answer for r in returns)


def _truth_on_rocm(ctx, value: ast.expr | None) -> bool | None:
    """What a boolean helper returns on ROCm; None for anything but a boolean (`"wgmma"`)."""
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return False
    if isinstance(value, ast.Constant):
        return value.value if isinstance(value.value, bool) else None
    if isinstance(value, (ast.Compare, ast.BoolOp)) or (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)):
        return ctx.gates.value(value, True)
    return None


def _walk_function_body(node: ast.AST):
    """The nodes of a statement, leaving out nested functions and classes (their returns are theirs)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in child_nodes(current)
                     if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))


def _returned_value(site: list) -> ast.expr | None:
    """The value a ``return`` gives when ``site[-1]`` is all of it."""
    if len(site) > 1 and isinstance(site[-2], ast.Return) and site[-2].value is site[-1]:
        return site[-1]
    return None


def _helper_calls(ctx, site: list) -> list[ast.Call]:
    """Calls, in this file, of the module-level function whose ``return`` gives ``site[-1]``."""
    if _returned_value(site) is None or len(site) < 3:
        return []
    function = site[1]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.enclosing(site, FUNCTIONS) is not function:
        return []
    calls = []
    for load in ctx.loads_of(function.name, ctx.tree)[:16]:
        path = ctx.path_to(load)
        if len(path) > 1 and isinstance(path[-2], ast.Call) and path[-2].func is load:
            calls.append(path[-2])
    return calls


def _numeric(node: ast.AST) -> bool:
    """A number, or an expression of the capability's own parts (`(cap[0], cap[1])`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    return any(is_capability_call(n) for n in walk(node)) or isinstance(node, (ast.Subscript, ast.BinOp))


def _resolved_container(ctx, node: ast.expr, scope) -> ast.expr | None:
    if isinstance(node, ast.Name):
        return ctx.resolve_name(node, scope)
    return node
