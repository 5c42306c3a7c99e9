"""Facts about third-party toolkits the project model starts from (overridden by the
project's own #defines and build files)."""
from __future__ import annotations

import re

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

# CUDA headers hipify (torch.utils.hipify / hipify_torch) renames to a HIP header.
HIPIFY_HEADERS = {
    "cuda.h": "hip/hip_runtime.h", "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_runtime_api.h": "hip/hip_runtime_api.h", "cuda_fp16.h": "hip/hip_fp16.h",
    "cuda_bf16.h": "hip/hip_bf16.h", "cuda_fp8.h": "hip/hip_fp8.h", "cublas_v2.h": "hipblas/hipblas.h",
    "cublas.h": "hipblas/hipblas.h", "cublasLt.h": "hipblaslt/hipblaslt.h",
    "curand_kernel.h": "hiprand/hiprand_kernel.h", "curand.h": "hiprand/hiprand.h",
    "cusparse.h": "hipsparse/hipsparse.h", "cufft.h": "hipfft/hipfft.h", "cudnn.h": "miopen/miopen.h",
    "nccl.h": "rccl/rccl.h", "cooperative_groups.h": "hip/hip_cooperative_groups.h",
}


def hipify_maps(header: str) -> str | None:
    """The HIP header hipify writes for ``header``, or None when hipify leaves it (every CUB
    header becomes hipcub's one)."""
    if header.startswith("cub/"):
        return "hipcub/hipcub.hpp"
    return HIPIFY_HEADERS.get(header)
