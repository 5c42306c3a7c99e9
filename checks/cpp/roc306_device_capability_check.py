from __future__ import annotations

import re
from typing import Any

from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability, Span
from rocmlint.rule import Rule

# Platform tests a condition may combine with the capability (`!is_hip && prop.major >= 9`,
# `GGML_CUDA_CC_IS_NVIDIA(cc)`, `strstr(prop.gcnArchName, "gfx")`): words of its identifiers.
_PLATFORM_WORD = lazy_compile(r"^(?:hip|rocm|amd|amdgpu|gcn|gfx\d*\w*|cdna\d*|rdna\d*|nvidia|nv|hcc)$", re.IGNORECASE)
_WORDS = lazy_compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_IDENTIFIER = lazy_compile(r"[A-Za-z_]\w*")
# `#if` conditions that decide the platform: code under them was written for one of the two.
_PLATFORM_MACRO = lazy_compile(r"(?i)hip|rocm|amd|__CUDA_ARCH__|nvidia|nvcc")
# NVIDIA-only features a branch names (`launch_gemm_sm90`, `cpAsyncCopy`, `use_tma`).
_NVIDIA_FEATURE = lazy_compile(
    r"(?<![a-z0-9])(tma|wgmma|tcgen05|cluster_?launch|cp_?async|async_?cop(?:y|ies)|fa3|flash_?attn_?3|"
    r"flash_?attention_?3|hopper|blackwell|ampere|sm_?(?:80|86|89|90a?|100a?|120)|cutlass|cute|warpgroup|mbarrier|"
    r"tensor_?memory|ldmatrix|mma_?sync|wmma|tensor_?cores?)(?![a-z0-9])", re.IGNORECASE)
# A side that only picks a number or a flag (tile sizes, stages): at worst slower on AMD.
_VALUE = r"(?:-?\d[\w.']*|true|false)"
_TUNING = lazy_compile(rf"^\s*\{{?\s*(?:(?:[\w.\[\]>-]+\s*[-+*/]?=\s*{_VALUE}|return\s+{_VALUE}|break)\s*;\s*)*\}}?\s*$")
_ARCHITECTURES = ((7, 0, "Volta"), (7, 5, "Turing"), (8, 0, "Ampere"), (8, 9, "Ada"), (9, 0, "Hopper"),
                  (10, 0, "Blackwell"))
_CONDITION_PARTS = frozenset({"binary_expression", "unary_expression", "parenthesized_expression"})


class DeviceCapabilityCheck(Rule):
    """Run-time compute-capability comparisons that pick an NVIDIA architecture's path.

    ## What it does
    Evaluates comparisons of the compute capability in host or device code: `prop.major` and
    `prop.minor` of a `cudaDeviceProp`/`hipDeviceProp_t` (a variable, a pointer, a call like
    `getCurrentDeviceProperties()->major`), the value `cudaDeviceGetAttribute(&v,
    cudaDevAttrComputeCapabilityMajor, dev)` writes (and the `hipDeviceAttribute...` and
    `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` spellings), a local computed from those
    (`int sm = prop.major * 10 + prop.minor; if (sm >= 90)`) and a helper of the same file
    whose one `return` gives such a number (`get_sm_version() >= 90`). Each comparison, with
    the `&&`/`||` test around it while that depends on the capability alone, is answered for
    the capabilities AMD GPUs report (MI100/MI200 9.0, MI300 9.4, MI350 9.5, RDNA2 10.3,
    RDNA3 11.0, RDNA4 12.0) and for NVIDIA's (7.0 to 12.1). What it selects on NVIDIA says
    what it tests: an NVIDIA architecture (`major >= 9`: Hopper, `major == 9 && minor == 0`)
    is reported on the AMD GPUs that take its side; a generic feature (fp16 from 7.0, bf16
    from 8.0, FP8 from 8.9) on the AMD GPUs that get it wrong (FP8 on MI200 and RDNA2/3), or
    where the side AMD takes names an NVIDIA-only feature (`launch_gemm_sm80_cp_async()`,
    TMA, wgmma, CUTLASS, WMMA). The message names the AMD GPUs and the path they take.

    Quiet: comparisons the AMD build never compiles (`#if __CUDA_ARCH__ >= 800` is the
    preprocessor's, `#ifndef USE_ROCM`), code under an `#if` that names the platform, a test
    combined with a platform check (`!is_hip && prop.major >= 9`, `prop.gcnArchName`), code
    inside such an `if` or after one that returns, a comparison whose sides only pick
    numbers (tile sizes, stages), and values that are only printed.

    ## Why is this bad?
    HIP reports the GCN/RDNA architecture number as the "compute capability": MI300
    (gfx942) is 9.4, MI200 (gfx90a) 9.0, RDNA3 11.0. `prop.major >= 9`, written for Hopper,
    is true on MI300 and every RDNA GPU, and `prop.major == 9 && prop.minor == 0` picks
    MI200: the program runs the NVIDIA architecture's path (TMA, wgmma, cp.async kernels,
    their tile shapes) on AMD GPUs, where it fails to launch, or computes wrongly.

    ## Example
    ```cpp
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, device);
    if (prop.major >= 9) {
      launch_gemm_sm90(args);  // runs on MI300 and RDNA GPUs
    } else {
      launch_gemm_sm80(args);
    }
    ```
    Use instead: decide the platform first, then the architecture:
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
      launch_gemm_amd(args);  // or pick by prop.gcnArchName
    #else
      if (prop.major >= 9) launch_gemm_sm90(args); else launch_gemm_sm80(args);
    #endif
    ```

    ## Fix safety
    Display-only: which AMD path the program should take is a design decision.

    ## References
    - https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hardware_features.html
    - https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html
    - https://github.com/pytorch/torchtitan/pull/4778 (the same bug in Python: ROC106)
    """

    code = "ROC306"
    name = "device-capability-check"
    language = "cpp"
    message = "compute-capability comparison picks an NVIDIA architecture's path on AMD GPUs"
    pattern = (r"(?:\.|->)[ \t]*(?:major|minor)\b|ComputeCapabilityM(?:ajor|inor)\b"
               r"|COMPUTE_CAPABILITY_M(?:AJOR|INOR)\b")
    # the pattern opens with `.`/`->`, which re scans slowly: these literals sit inside every match
    anchors = (r"major\b", r"minor\b", r"ComputeCapabilityM", r"COMPUTE_CAPABILITY_M")
    requires_any = (b"DeviceProp", b"deviceProp", b"device_prop", b"dprop", b"ComputeCapabilityM",
                    b"COMPUTE_CAPABILITY_M")
    fix_applicability = Applicability.DISPLAY_ONLY
    reference_kernel = None

    valid = (
        # printed, not compared
        "void show(const cudaDeviceProp& prop) {\n  printf(\"sm_%d%d\\n\", prop.major, prop.minor);\n}\n",
        # already decided the platform
        "void pick(const cudaDeviceProp& prop, bool is_hip) {\n"
        "  if (!is_hip && prop.major >= 9) launch_gemm_sm90();\n  else launch_gemm_generic();\n}\n",
        "void pick(const cudaDeviceProp& prop) {\n#ifndef __HIP_PLATFORM_AMD__\n"
        "  if (prop.major >= 9) launch_gemm_sm90();\n#endif\n}\n",
        # the preprocessor's, not a run-time comparison
        "__device__ void copy(float* d, const float* s) {\n#if __CUDA_ARCH__ >= 800\n  cp_async(d, s);\n"
        "#else\n  *d = *s;\n#endif\n}\n",
        # bf16 from 8.0: every AMD GPU has it
        "bool bf16_ok(const cudaDeviceProp& prop) {\n  if (prop.major >= 8) return true;\n  return false;\n}\n",
        # only a tuning number
        "int stages(const cudaDeviceProp& prop) {\n  int n = prop.major >= 9 ? 4 : 2;\n  return n;\n}\n",
    )
    invalid = (
        "void gemm(const cudaDeviceProp& prop) {\n  if (prop.major >= 9) {\n    launch_gemm_sm90();\n"
        "  } else {\n    launch_gemm_sm80();\n  }\n}\n",
        "int sm_version(int dev) {\n  int major = 0, minor = 0;\n"
        "  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);\n"
        "  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);\n"
        "  return major * 10 + minor;\n}\n"
        "bool use_wgmma(int dev) { return sm_version(dev) == 90; }\n",
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.capability import Values

        seeds = [hit for hit in ctx.hits() if ctx.in_code(hit.start) and not ctx.nvidia_only(hit.start)]
        if not seeds or _includes_cutlass(ctx):
            return  # a file built on CUTLASS/CuTe compiles for NVIDIA only (ROC302 says so)
        values = Values(ctx)
        functions: dict[int, Any] = {}
        for hit in seeds:
            node = ctx.node_at(hit)
            if node is not None:
                scope = ctx.scope_of(node)
                functions.setdefault(scope.start_byte, scope)
        helpers = values.helpers()
        if helpers:  # callers of a helper compare its number
            names = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in helpers) + rb")\s*\(")
            for m in names.finditer(ctx.source):
                node = ctx.root.named_descendant_for_byte_range(m.start(), m.start() + 1)
                if node is not None and ctx.in_code(m.start()):
                    scope = ctx.scope_of(node)
                    functions.setdefault(scope.start_byte, scope)
        done: set[int] = set()
        for scope in sorted(functions.values(), key=lambda s: s.start_byte):
            for compare in ctx.descendants(scope, {"binary_expression"}):
                operator = compare.child_by_field_name("operator")
                if operator is None or ctx.node_text(operator) not in COMPARISON_OPERATORS:
                    continue
                test = _condition(compare)
                if test.start_byte in done:
                    continue
                done.add(test.start_byte)
                if not values.depends(test, partial=True):
                    continue
                message = self._judged(ctx, values, test)
                if message is not None:
                    ctx.report(Span(test.start_byte, test.end_byte), message)

    def _judged(self, ctx, values, test) -> str | None:
        from rocmlint.cpp.capability import Unknown
        from rocmlint.python.capability import AMD_GPUS, NVIDIA_CAPABILITIES, gpu_names, judge_answers

        if ctx.nvidia_only(test.start_byte) or _platform_decided(ctx, test):
            return None

        def answer(capability: tuple[int, int]) -> bool:
            return bool(values.value(test, capability, partial=True))

        try:
            verdict = judge_answers(answer)
            reaching = _reaching(values, test, AMD_GPUS)
        except (Unknown, ZeroDivisionError, ValueError):
            return None
        if verdict.feature == "nothing" or not reaching:
            return None  # the same answer on every NVIDIA GPU (`major < 6`), or no AMD GPU gets here
        text = " ".join(ctx.node_text(test).split())
        if len(text) > 100:
            text = text[:97] + "..."
        positive = not answer(NVIDIA_CAPABILITIES[0])  # the newer GPUs' side
        newer = sorted(c for c in NVIDIA_CAPABILITIES if answer(c) == positive)
        architecture = _architecture(newer, NVIDIA_CAPABILITIES)
        amd_true = tuple(g for g in verdict.true_on if g in reaching)
        amd_false = tuple(g for g in reaching if g not in amd_true)
        wrong = tuple(g for g in verdict.wrong if g in reaching)
        sides = _sides(ctx, test)
        if sides[0] is not None and sides[1] is not None and all(_tuning(ctx, s) for s in sides):
            return None  # only picks numbers: at worst slower on AMD
        taken = [s for s, gpus in ((sides[0], amd_true), (sides[1], amd_false)) if s is not None and gpus]
        side = "true" if positive else "false"
        if verdict.nvidia_only or verdict.amd_intent is not None:  # an NVIDIA architecture
            if not wrong:
                return None
            return (f"`{text}` is {side} on {_described(gpu_names, wrong)}: the {architecture} path runs on AMD "
                    f"GPUs, which report their GCN/RDNA number as the capability; {ADVICE}")
        if wrong:  # a generic feature some AMD GPUs lack (FP8)
            return (f"`{text}` tests {verdict.feature} but is {side} on {_described(gpu_names, wrong)}, which "
                    f"lack it; {ADVICE}")
        feature = next((f for s in taken for f in [_feature(ctx, s)] if f), None)
        if feature is None:
            return None  # bf16 from 8.0: right on every AMD GPU
        gpus = amd_true if positive else amd_false
        return (f"`{text}` is {side} on {_described(gpu_names, gpus)}: the {architecture} path runs NVIDIA-only "
                f"`{feature}` on AMD GPUs; {ADVICE}")


ADVICE = "decide the platform first (`#if defined(__HIP_PLATFORM_AMD__)`, or pick by `prop.gcnArchName`)"


COMPARISON_OPERATORS = frozenset({"==", "!=", "<", "<=", ">", ">="})


def _described(gpu_names, gpus) -> str:
    named = gpu_names(gpus)
    if named == "every AMD GPU":
        return named
    return ", ".join(f"{g.name[:-1]}, {g.capability[0]}.{g.capability[1]})" if g.name.endswith(")")
                     else f"{g.name} ({g.capability[0]}.{g.capability[1]})" for g in gpus)


def _architecture(newer: list[tuple[int, int]], every: tuple[tuple[int, int], ...]) -> str:
    """``Hopper (SM 9.0+)``, ``Ada/Blackwell (SM 8.9, 12.0, 12.1)``: the NVIDIA GPUs a test selects."""
    if not newer:
        return "NVIDIA"
    names = dict.fromkeys(next((n for major, minor, n in reversed(_ARCHITECTURES) if c >= (major, minor)), "NVIDIA")
                          for c in newer)
    if newer == [c for c in every if c >= newer[0]] and len(newer) > 1:  # a minimum: "Hopper (SM 9.0+)"
        return f"{next(iter(names))} (SM {newer[0][0]}.{newer[0][1]}+)"
    return f"{'/'.join(names)} (SM {', '.join(f'{c[0]}.{c[1]}' for c in newer)})"


def _words(text: str):
    for identifier in _IDENTIFIER.findall(text):
        for part in identifier.split("_"):
            yield from _WORDS.findall(part)


def _names_platform(ctx, node) -> bool:
    text = ctx.node_text(node)
    if "gcnArchName" in text or re.search(r"\"gfx", text):
        return True
    return any(_PLATFORM_WORD.match(word) for word in _words(_code(text)))


def _code(text: str) -> str:
    return re.sub(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', " ", text, flags=re.DOTALL)


def _condition(node):
    """The whole test ``node`` is part of (up through ``&&``/``||``/``!``/parentheses)."""
    while node.parent is not None and node.parent.type in _CONDITION_PARTS:
        parent = node.parent
        if parent.type != "parenthesized_expression":
            operator = parent.child_by_field_name("operator")
            if operator is None or operator.type not in ("&&", "||", "!", "and", "or", "not"):
                break
        node = parent
    return node


def _reaching(values, test, gpus) -> tuple:
    """The AMD GPUs that get to ``test``: those for which every enclosing ``if``/``?:`` on the
    capability takes the side holding it (``else if (sm >= 80)`` after ``if (sm >= 90)``: none)."""
    reaching = tuple(gpus)
    node = test
    while node.parent is not None and node.parent.type not in ("function_definition", "lambda_expression"):
        parent = node.parent
        condition, holds = None, True
        if parent.type == "else_clause" and parent.parent is not None and parent.parent.type == "if_statement":
            condition, holds = parent.parent.child_by_field_name("condition"), False
            parent = parent.parent
        elif parent.type in ("if_statement", "conditional_expression"):
            condition = parent.child_by_field_name("condition")
            if condition == node:
                condition = None
            elif parent.child_by_field_name("alternative") == node:
                holds = False
        if condition is not None and values.depends(condition, partial=True):
            reaching = tuple(g for g in reaching
                             if bool(values.value(condition, g.capability, partial=True)) == holds)
        node = parent
    return reaching


def _includes_cutlass(ctx) -> bool:
    for m in _CUTLASS_INCLUDE.finditer(ctx.source):
        if not ctx.nvidia_only(m.start()):
            return True
    return False


_CUTLASS_INCLUDE = lazy_compile(rb"^[ \t]*#[ \t]*include[ \t]*[<\"]cut(?:lass|e)/", re.MULTILINE)


def _platform_decided(ctx, test) -> bool:
    """The platform is already decided around the comparison: an ``#if`` naming it, a platform
    test in the same condition, an enclosing ``if``/``?:`` on it, or an earlier ``if`` on it that
    returns."""
    line = ctx.line_of(test.start_byte)
    if any(_PLATFORM_MACRO.search(branch.condition or "") for branch in ctx.pp.branches_at(line)):
        return True
    if _names_platform(ctx, _condition(test)):
        return True
    node = test
    function = ctx.scope_of(test)
    while node.parent is not None and node is not function:
        parent = node.parent
        condition = None
        if parent.type in ("if_statement", "while_statement") and parent.child_by_field_name("condition") != node:
            condition = parent.child_by_field_name("condition")
        elif parent.type == "conditional_expression" and parent.child_by_field_name("condition") != node:
            condition = parent.child_by_field_name("condition")
        elif parent.type == "binary_expression" and parent.child_by_field_name("right") == node:
            condition = parent.child_by_field_name("left")  # `is_nvidia && (...)`
        if condition is not None and _names_platform(ctx, condition):
            return True
        node = parent
    if function is not ctx.root:
        for statement in ctx.descendants(function, {"if_statement"}):
            if statement.end_byte > test.start_byte:
                continue
            condition = statement.child_by_field_name("condition")
            body = statement.child_by_field_name("consequence")
            if condition is not None and body is not None and _names_platform(ctx, condition) and \
                    re.search(r"\b(?:return|throw)\b", ctx.node_text(body)):
                return True
    return False


def _sides(ctx, test):
    """The code the test switches: (taken when true, taken when false), None where there is
    none (a value stored or returned: the test itself is the side)."""
    node = test
    while node.parent is not None and node.parent.type in ("parenthesized_expression", "condition_clause"):
        node = node.parent
    parent = node.parent
    if parent is None:
        return None, None
    if parent.type == "if_statement":
        alternative = parent.child_by_field_name("alternative")
        return parent.child_by_field_name("consequence"), alternative
    if parent.type == "conditional_expression" and parent.child_by_field_name("condition") == node:
        return parent.child_by_field_name("consequence"), parent.child_by_field_name("alternative")
    if parent.type in ("init_declarator", "assignment_expression", "return_statement"):
        return parent, None  # `bool use_tma = ...;`: the name it is stored under says what it selects
    return None, None


def _tuning(ctx, side) -> bool:
    if side.type == "else_clause":
        inner = side.named_children[0] if side.named_children else None
        if inner is None or inner.type == "if_statement":
            return False
        side = inner
    if side.type in ("number_literal", "true", "false"):
        return True
    return _TUNING.match(_code(ctx.node_text(side))) is not None


def _feature(ctx, side) -> str | None:
    text = _code(ctx.node_text(side))
    for identifier in _IDENTIFIER.findall(text):
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", identifier)
        m = _NVIDIA_FEATURE.search(snake)
        if m:
            return m.group(1)
    return None
