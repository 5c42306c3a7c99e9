"""Facts about third-party toolkits the project model starts from (overridden by the
project's own #defines and build files)."""
from __future__ import annotations

import re

from ..cpp import cuda_headers

# Macros the CUDA toolkit, CUTLASS, CuTe and CUB define: never defined in an AMD build
# unless the project defines them for it.
NVIDIA_TOOLKIT_MACROS = frozenset({
    "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__",
    "__CUDACC_VER_BUILD__", "__CUDACC_RDC__", "__CUDACC_RTC__", "__CUDACC_EWP__", "CUB_VERSION",
    "CUB_MAJOR_VERSION", "CUB_MINOR_VERSION", "THRUST_VERSION", "CUTLASS_VERSION", "CUTLASS_MAJOR",
    "CUTLASS_MINOR", "CUTE_VERSION", "NV_IF_TARGET", "CUDNN_VERSION", "CUBLAS_VERSION", "NCCL_VERSION_CODE",
    "__NVCC__", "__CUDA_ARCH__", "__CUDA_ARCH_LIST__", "__NVCOMPILER",
})
NVIDIA_TOOLKIT_PREFIXES = ("CUTLASS_ARCH_", "CUTE_ARCH_", "__CUDA_ARCH_FEAT_", "__CUDA_ARCH_SPECIFIC_",
                           "__CUDA_ARCH_FAMILY_SPECIFIC_", "CUDA_ARCH_", "CUTLASS_SM", "__CUDACC_VER_")


def nvidia_toolkit_macro(name: str) -> bool:
    return name in NVIDIA_TOOLKIT_MACROS or name.startswith(NVIDIA_TOOLKIT_PREFIXES)


# Headers whose inclusion means "this is the HIP build".
HIP_RUNTIME_HEADER = re.compile(r"^hip/(?:hip_runtime(?:_api)?|hip_fp16|hip_bf16|hip_common|amd_detail/\w+)\.h$")

# What hipify writes for a CUDA header: the table ROC303 reads too (rocmlint/cpp/cuda_headers.py).
hipify_maps = cuda_headers.hipify_maps
