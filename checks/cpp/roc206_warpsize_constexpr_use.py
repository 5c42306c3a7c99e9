from __future__ import annotations

import re

from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability, Edit
from rocmlint.rule import Example, Rule

_CONSTANT_CONTEXTS = frozenset({"template_argument_list", "static_assert_declaration", "enumerator",
                                "case_statement"})
LAUNCH_BOUNDS = "a `__launch_bounds__` argument"
_LAUNCH_BOUNDS = lazy_compile(rb"__launch_bounds__\s*\([^)]*$")


class WarpSizeConstexprUse(Rule):
    """`warpSize` is used where a compile-time constant is required.

    ## What it does
    Reports `warpSize` in array bounds, template arguments, `static_assert`, `constexpr`
    initialisers, what `constexpr` functions return, enumerators, `case` labels and
    `__launch_bounds__`. A declaration named `warpSize` (a local
    `constexpr int warpSize = 64;`, a member, a parameter) hides the builtin: uses in its
    scope are ordinary constants.

    ## Why is this bad?
    ROCm 7 made `warpSize` a run-time value (as in CUDA): every such use stops compiling.
    Older ROCm accepted it only because `warpSize` was a `constexpr` of the compilation
    target.

    ## Example
    ```cpp
    __shared__ float partial[warpSize];
    ```
    Use instead:
    ```cpp
    #if defined(__GFX9__)
    __shared__ float partial[64];
    #else
    __shared__ float partial[32];
    #endif
    ```

    ## Fix safety
    Unsafe: the compile-time wave size is chosen with `__GFX9__` (CDNA wave64, RDNA wave32)
    as in ROCm/pytorch #2360; it is exact in device code, while the host pass reads 32.
    `__launch_bounds__` gets the largest wave size, 64: it is an upper bound on the block
    size, so it stays correct on wave32 targets. Where host code reads the value
    (`__host__ __device__`, a launch size) the fix is display-only: `__GFX9__` is undefined
    in the host pass, so the host must query `hipDeviceAttributeWarpSize` at run time.

    ## References
    - https://github.com/ROCm/apex/issues/231
    - https://github.com/ROCm/bitsandbytes/issues/86
    - https://github.com/ROCm/pytorch/pull/2360
    - https://github.com/llvm/llvm-project/issues/157463
    """

    code = "ROC206"
    name = "warpsize-constexpr-use"
    language = "cpp"
    message = "`warpSize` used as a compile-time constant: it is a run-time value on ROCm 7"
    pattern = r"\bwarpSize\b"
    anchors = (r"warpSize",)  # literal first: fast
    fix_applicability = Applicability.UNSAFE
    wave_size_rule = True
    # A build break on ROCm 7 whoever wrote it, AMD-only code included.
    reference_kernel = "wave_size_constexpr.hip"

    valid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__global__ void lanes(int* out) {\n"
            "  out[threadIdx.x] = threadIdx.x % warpSize;\n"
            "}\n",
            filename="example.hip",
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__global__ void block_sum(const float* in, float* out) {\n"
            "  __shared__ float partial[warpSize];\n"
            "  partial[threadIdx.x % warpSize] = in[threadIdx.x];\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__global__ void block_sum(const float* in, float* out) {\n"
                "#if defined(__GFX9__)\n"
                "  __shared__ float partial[64];\n"
                "#else\n"
                "  __shared__ float partial[32];\n"
                "#endif\n"
                "  partial[threadIdx.x % warpSize] = in[threadIdx.x];\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.constant_uses import reads_on_host
        from rocmlint.cpp.wavesize import shadowed_ranges
        from rocmlint.fixers.cpp_gate import build_fix

        found = []
        # a declaration named warpSize hides the builtin: there it is an ordinary constant
        shadowed = shadowed_ranges(ctx, ctx.hits())
        for hit in ctx.amd_hits():
            if any(start <= hit.start < end for start, end in shadowed):
                continue
            node = ctx.node_at(hit)
            where = self._constant_context(ctx, node, hit) if node is not None else None
            if where is not None:
                found.append((hit, node, where))
        for hit, node, where in found:
            if where == LAUNCH_BOUNDS:
                # an upper bound on the block size: the largest wave (64) is right for every
                # target and keeps the kernel in one piece (ROCm/pytorch #2360)
                fix = build_fix(ctx, node, [Edit(hit, "64")], "bound the launch by the largest wave size",
                                Applicability.UNSAFE)
                ctx.report(hit, f"`warpSize` used as {where}: it is a run-time value on ROCm 7", fix)
                continue
            # every such use in the lines the fix duplicates is fixed at once: after the fix
            # they sit in a wave-size-aware branch, where wave-size rules are silent
            lines = ctx.gate_range(node)
            together = [h for h, _, _ in found if lines and lines[0] <= ctx.line_of(h.start) <= lines[1]] or [hit]
            message = f"`warpSize` used as {where}: it is a run-time value on ROCm 7"
            title, applicability = "pick the wave size at compile time (__GFX9__)", Applicability.UNSAFE
            if reads_on_host(ctx, node):
                # __GFX9__ is undefined in the host pass: host code would read 32 on wave64 GPUs
                message += "; host code reads it: query hipDeviceAttributeWarpSize there at run time"
                title, applicability = title + " in device code only", Applicability.DISPLAY_ONLY
            fix = build_fix(ctx, node, [], title, applicability,
                            wave_variants=([Edit(h, "64") for h in together], [Edit(h, "32") for h in together]))
            ctx.report(hit, message, fix)

    @staticmethod
    def _constant_context(ctx, node, hit) -> str | None:
        line_start = ctx.lines.line_start(ctx.line_of(hit.start))
        if _LAUNCH_BOUNDS.search(ctx.source[line_start : hit.start]):
            return LAUNCH_BOUNDS
        returned = ctx.ancestor(node, {"return_statement"})
        function = ctx.ancestor(returned, {"function_definition", "lambda_expression"}) if returned else None
        if function is not None and function.type == "function_definition":
            declarator = function.child_by_field_name("declarator")
            head = ctx.source[function.start_byte : declarator.start_byte] if declarator is not None else b""
            if re.search(rb"\bconst(?:expr|eval)\b", head):
                return "the result of a constexpr function"
        current = node
        while current is not None and current.type not in ("compound_statement", "translation_unit"):
            parent = current.parent
            if parent is None:
                break
            if parent.type == "array_declarator" and parent.child_by_field_name("size") == current:
                return "an array bound"
            if parent.type in _CONSTANT_CONTEXTS:
                return {"template_argument_list": "a template argument", "static_assert_declaration":
                        "a static_assert operand", "enumerator": "an enumerator value",
                        "case_statement": "a case label"}[parent.type]
            if parent.type in ("declaration", "field_declaration") and \
                    re.search(r"\bconstexpr\b", ctx.node_text(parent).split("=")[0]):
                return "a constexpr initialiser"
            current = parent
        return None
