from __future__ import annotations

import os

from rocmlint.cpp.cuda_headers import counterpart, include_pattern, literal_names, lookup
from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability, Edit, Span
from rocmlint.rule import Example, Rule

_INCLUDE = lazy_compile(r"#\s*include\s*([<\"])([^>\"]+)[>\"]")


class CudaOnlyHeader(Rule):
    """A CUDA-only header is included in code the AMD build compiles.

    ## What it does
    Reports includes of CUDA-only headers reachable in the ROCm build: the CUDA runtime,
    driver API and toolkit headers (`cuda.h`, `cuda_runtime.h`, `cuda_fp16.h`, `cuda_bf16.h`,
    `cuda_fp8.h` ...), cooperative groups' extra headers (`cooperative_groups/reduce.h`),
    NVRTC, NVTX (`nvToolsExt.h`, `nvtx3/...`), NVML, libcu++ (`cuda/std/...`, `cuda/atomic`,
    `cuda/pipeline`), WMMA (`mma.h`), cuBLAS(Lt), cuRAND, cuSPARSE, cuFFT, cuSOLVER, cuDNN and
    its frontend, NCCL, CUB and Thrust's CUDA back end. Each has an entry in one table
    (`rocmlint/cpp/cuda_headers.py`): the ROCm header to include instead, or none. A file of
    the project with the same name (`#include "vector_types.h"` next to it) is not reported,
    nor a path into one of the project's own folders (`"cuda/components/sorting.cuh"` in a
    project with a `cuda/` folder is not libcu++), nor a header the project's build writes
    (`configure_file(... include/nccl.h)`), nor an include hipify renames in a project whose
    build runs hipify.

    ## Why is this bad?
    These headers do not exist in a ROCm installation: the file stops compiling on AMD.
    Where ROCm has no counterpart (libcu++, `cudnn_frontend.h`, `cublasXt.h`), the code
    that uses the header has to be gated or rewritten.

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
    keeps its include. Unsafe where only recent ROCm releases have the counterpart
    (`cooperative_groups/reduce.h`, `cuda_fp4.h`). Headers with no ROCm counterpart are
    reported without a fix.

    ## References
    - https://github.com/ROCm/HIPIFY/issues/731
    - https://rocm.docs.amd.com/projects/HIPIFY/en/latest/
    - https://github.com/ROCm/HIPIFY/blob/amd-staging/src/CUDA2HIP.cpp (hipify-clang's header table)
    - https://github.com/pytorch/pytorch/blob/main/torch/utils/hipify/cuda_to_hip_mappings.py
    """

    code = "ROC303"
    name = "cuda-only-header"
    language = "cpp"
    message = "CUDA-only header included in code the AMD build compiles"
    pattern = include_pattern()
    fix_applicability = Applicability.SAFE
    reference_kernel = None

    valid = (
        Example("#ifdef USE_ROCM\n#include <hip/hip_fp16.h>\n#else\n#include <cuda_fp16.h>\n#endif\n"),
        Example("#if !defined(__HIP_PLATFORM_AMD__)\n#include <cudnn_frontend.h>\n#endif\n"),
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
        Example("#include <cuda/std/atomic>\n"),
    )

    @classmethod
    def literals(cls) -> tuple[bytes, ...]:
        return literal_names()  # more names than the pattern's own factors can hold

    def check(self, ctx) -> None:
        from rocmlint.fixers.cpp_gate import build_fix

        for hit in ctx.hits():
            if not ctx.in_code(hit.start):  # `//#include <mma.h>`
                continue
            match = _INCLUDE.match(ctx.source[hit.start : hit.end].decode("utf-8", "replace"))
            entry = lookup(match.group(2)) if match is not None else None
            if match is None or entry is None:  # every hit of `pattern` is such an include
                continue
            header = match.group(2)
            if _project_file(ctx, header, angle=match.group(1) == "<") or _generated(ctx, header):
                continue  # the project's own header of that name
            if ctx.model is not None and ctx.model.hipify_maps(ctx.path, header) is not None:
                continue  # the project's build hipifies this file: the include is renamed for AMD
            hip = counterpart(header)
            note = f" ({entry.note})" if entry.note else ""
            fix = None
            if hip is not None:
                path_start = hit.start + match.start(2) - 1
                edit = Edit(Span(path_start, hit.end), f"<{hip}>")
                safety = Applicability.UNSAFE if entry.recent else Applicability.SAFE
                fix = build_fix(ctx, ctx.directive_node(hit.start), [edit], f"include {hip} on ROCm", safety)
                message = f"CUDA-only header <{header}> reachable in the AMD build: use <{hip}>{note}"
            else:
                message = f"CUDA-only header <{header}> reachable in the AMD build: no ROCm counterpart, gate the code{note}"
            ctx.report(Span(hit.start, hit.end), message, fix)


def _generated(ctx, header: str) -> bool:
    """A header the project's build writes under that name (RCCL's ``nccl.h`` from
    ``configure_file(src/nccl.h.in ...)``): the include reads the project's file."""
    if ctx.model is None:
        return False
    found = ctx.model.fact("cpp:generated", header, ctx.path)
    if ctx.project is not None:
        ctx.project.record("cpp:generated", header, found)
    return bool(found)


def _project_folder(ctx, header: str, angle: bool) -> bool:
    """A path into a folder of the project (``"cuda/components/sorting.cuh"`` where the project
    has a ``cuda/`` folder beside the includer or at its root; ``<cuda/components/x.cuh>`` where
    the root holds ``cuda/components/``): the project's own header, even one since removed,
    not the toolkit's ``cuda/`` (libcu++). A vendored toolkit (``third_party/cub/cub/``) is not
    at the root, and stays CUDA-only."""
    folder_part = os.path.dirname(header)
    first = header.partition("/")[0]
    if not folder_part or first in (".", "..") or (angle and "/" not in folder_part):
        return False
    if angle:
        if ctx.model is None:
            return False
        candidates = [os.path.join(ctx.model.root, folder_part)]
    else:
        candidates = [os.path.join(os.path.dirname(os.path.abspath(ctx.path)), first)]
        if ctx.model is not None:
            candidates.append(os.path.join(ctx.model.root, first))
    for key in candidates:
        found = os.path.isdir(key)
        if ctx.project is not None:
            ctx.project.record("dir", key, str(found))
        if found:
            return True
    return False


def _project_file(ctx, header: str, angle: bool) -> bool:
    """A quoted include naming a file of the project (its own ``vector_types.h``), not the
    toolkit's. (A vendored CUB reached through ``<cub/...>`` is still CUDA-only.)"""
    if _project_folder(ctx, header, angle):
        return True
    if angle:
        return False
    model, project = ctx.model, ctx.project
    if model is not None:
        found = model.fact("cpp:include", header, ctx.path)
        kind, key = "cpp:include", header
    else:
        key = os.path.abspath(os.path.join(os.path.dirname(ctx.path), header))
        found = str(os.path.isfile(key))
        kind = "file"
    if project is not None:  # the cached result stands while the answer does
        project.record(kind, key, found)
    return bool(found) and found != "False"
