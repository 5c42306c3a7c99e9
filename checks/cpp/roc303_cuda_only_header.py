from __future__ import annotations

import re

from rocmlint.model import Applicability, Edit, Span
from rocmlint.project.tables import hipify_maps
from rocmlint.rule import Example, Rule

# CUDA-only headers hipify does not map -> HIP header (None: no drop-in equivalent); the
# others are hipify's own table (rocmlint/project/tables.py).
NOT_HIPIFIED = {"mma.h": "rocwmma/rocwmma.hpp", "cuda/pipeline": None}
_INCLUDE = re.compile(r"#\s*include\s*([<\"])([^>\"]+)[>\"]")


class CudaOnlyHeader(Rule):
    """A CUDA-only header is included in code the AMD build compiles.

    ## What it does
    Reports `cuda_runtime.h`, `cuda_fp16.h`, `cuda_bf16.h`, `cublas_v2.h`, `cublasLt.h`,
    `cub/...`, `mma.h`, `cuda/pipeline` and `curand_kernel.h` includes reachable in the
    ROCm build.

    ## Why is this bad?
    These headers do not exist in a ROCm installation: the file stops compiling on AMD.

    ## Example
    ```cpp
    #include <cuda_fp16.h>
    ```
    Use instead:
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    #include <hip/hip_fp16.h>
    #else
    #include <cuda_fp16.h>
    #endif
    ```

    ## Fix safety
    Safe: the HIP header provides the same names for the AMD build, and the NVIDIA build
    keeps its include. `cuda/pipeline` has no HIP equivalent and is reported without a fix.

    ## References
    - https://github.com/ROCm/HIPIFY/issues/731
    - https://rocm.docs.amd.com/projects/HIPIFY/en/latest/
    """

    code = "ROC303"
    name = "cuda-only-header"
    language = "cpp"
    message = "CUDA-only header included in code the AMD build compiles"
    pattern = (r"#[ \t]*include[ \t]*[<\"](?:cuda_runtime(?:_api)?\.h|cuda_fp16\.h|cuda_bf16\.h|cublas_v2\.h"
               r"|cublasLt\.h|cub/[\w/.]+|mma\.h|cuda/pipeline|curand_kernel\.h)[>\"]")
    fix_applicability = Applicability.SAFE
    reference_kernel = None

    valid = (
        Example("#ifdef USE_ROCM\n#include <hip/hip_fp16.h>\n#else\n#include <cuda_fp16.h>\n#endif\n"),
    )
    invalid = (
        Example(
            "#include <cuda_fp16.h>\n__device__ __half twice(__half x) { return __hadd(x, x); }\n",
            expected=(
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "#include <hip/hip_fp16.h>\n"
                "#else\n"
                "#include <cuda_fp16.h>\n"
                "#endif\n"
                "__device__ __half twice(__half x) { return __hadd(x, x); }\n"
            ),
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.fixers.cpp_gate import build_fix

        for hit in ctx.hits():
            if not ctx.in_code(hit.start):  # `//#include <mma.h>`
                continue
            match = _INCLUDE.match(ctx.source[hit.start : hit.end].decode("utf-8", "replace"))
            if match is None:  # every hit of `pattern` is an include directive
                continue
            header = match.group(2)
            if ctx.model is not None and ctx.model.hipify_maps(ctx.path, header) is not None:
                continue  # the project's build hipifies this file: the include is renamed for AMD
            hip = NOT_HIPIFIED[header] if header in NOT_HIPIFIED else hipify_maps(header)
            fix = None
            if hip is not None:
                path_start = hit.start + match.start(2) - 1
                edit = Edit(Span(path_start, hit.end), f"<{hip}>")
                fix = build_fix(ctx, ctx.directive_node(hit.start), [edit], f"include {hip} on ROCm", Applicability.SAFE)
            suggestion = f": use <{hip}>" if hip else ": no HIP equivalent"
            ctx.report(Span(hit.start, hit.end), f"CUDA-only header <{header}> reachable in the AMD build{suggestion}", fix)
