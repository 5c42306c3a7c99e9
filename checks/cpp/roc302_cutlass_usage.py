from __future__ import annotations

from rocmlint.rule import Example, Rule


class CutlassUsage(Rule):
    """CUTLASS or CuTe code is reachable in the AMD build.

    ## What it does
    Reports each `#include <cutlass/...>` / `<cute/...>` and the first `cutlass::` or
    `cute::` use (with a count of the others) in code the ROCm build compiles.

    ## Why is this bad?
    CUTLASS and CuTe are NVIDIA-only template libraries (PTX, tensor-core MMA atoms): the
    AMD build cannot compile them. The ROCm path needs hipBLASLt, composable_kernel or
    rocWMMA instead, behind a gate.

    ## Example
    ```cpp
    #include <cutlass/gemm/device/gemm.h>
    ```
    Use instead:
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    #include <hipblaslt/hipblaslt.h>
    #else
    #include <cutlass/gemm/device/gemm.h>
    #endif
    ```

    ## Fix safety
    Display-only: the ROCm kernel library has a different API.

    ## References
    - https://github.com/ROCm/HIPIFY/issues/731
    - https://github.com/ROCm/composable_kernel
    - https://github.com/ROCm/hipBLASLt
    """

    code = "ROC302"
    name = "cutlass-usage"
    language = "cpp"
    message = "CUTLASS/CuTe is NVIDIA-only: gate it and use hipBLASLt, composable_kernel or rocWMMA on ROCm"
    pattern = r"#[ \t]*include[ \t]*[<\"](?:cutlass|cute)/|\b(?:cutlass|cute)::"

    valid = (
        Example(
            "#ifndef USE_ROCM\n"
            "#include <cutlass/gemm/device/gemm.h>\n"
            "using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor, float,\n"
            "    cutlass::layout::RowMajor, float, cutlass::layout::RowMajor>;\n"
            "#endif\n"
        ),
    )
    invalid = (
        Example("#include \"cutlass/numeric_types.h\"\nusing Half = cutlass::half_t;\n"),
    )

    def check(self, ctx) -> None:
        # Every reachable include, but only the first reachable use per file: a file that
        # depends on CUTLASS has the same fix everywhere, and one finding per declaration
        # buried real files (450 findings in torch's 26 CUTLASS headers) in noise.
        uses = []
        for hit in ctx.hits():
            if ctx.nvidia_only(hit.start):
                continue
            if ctx.source[hit.start : hit.end].startswith(b"#"):
                ctx.report(hit)
                continue
            node = ctx.node_at(hit)
            if node is None or ctx.ancestor(node, {"preproc_include"}) is not None:
                continue
            uses.append(hit)
        if uses:
            more = len(uses) - 1
            suffix = f" ({more} more use{'s' if more != 1 else ''} in this file)" if more else ""
            ctx.report(uses[0], self.message + suffix)
