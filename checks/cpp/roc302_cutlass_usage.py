from __future__ import annotations

from rocmlint.rule import Example, Rule


class CutlassUsage(Rule):
    """CUTLASS or CuTe code is reachable in the AMD build.

    ## What it does
    Reports `#include <cutlass/...>` / `<cute/...>` and the first `cutlass::` or `cute::`
    use in each top-level declaration that the ROCm build compiles.

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
        seen_owners = set()
        for hit in ctx.hits():
            text = ctx.source[hit.start : hit.end]
            if text.startswith(b"#"):
                ctx.report(hit)
                continue
            node = ctx.node_at(hit)
            if node is None or ctx.ancestor(node, {"preproc_include"}) is not None:
                continue
            owner = node
            while owner.parent is not None and owner.parent.type not in (
                    "translation_unit", "declaration_list", "ERROR"):
                owner = owner.parent
            if owner.start_byte in seen_owners:
                continue
            seen_owners.add(owner.start_byte)
            ctx.report(hit)
