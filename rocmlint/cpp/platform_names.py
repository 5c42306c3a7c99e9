"""What a switch's name says of the platform it turns on (``GGML_USE_HIP``,
``KOKKOS_ENABLE_CUDA``, ``GINKGO_HIP_PLATFORM_NVCC``, ``HAVE_CUDA_H``).

The weakest evidence the model uses (design §2e): a macro that no visible definition sets,
or one a build template writes from a value rocmlint cannot evaluate, is decided by the
platform its name states, as the ecosystem uses such names. Shared by the project model,
the build readers and the model-less ``#if`` table of a lone file."""
from __future__ import annotations

from functools import lru_cache

# A switch word followed by a platform word: <PREFIX>_USE_HIP, ENABLE_CUDA_LAMBDA, HAVE_CUDA_H,
# <PREFIX>_ARCH_AMD_GPU (the ROCm build's architecture is AMD's), RAJA_BACKENDS_CUDA; a word
# that starts with CUDA or HIP names that platform's part (USE_CUDAUVM, USE_HIPBLAS).
_SWITCH_WORDS = frozenset({"USE", "USING", "ENABLE", "ENABLED", "BUILD", "HAVE", "HAS", "WITH", "ARCH", "BACKEND",
                           "BACKENDS"})
_HIP_WORDS = frozenset({"HIP", "ROCM", "AMD", "HCC", "AMDGPU"})
# NVIDIA's own tools and libraries too (not cuBLAS/cuDNN: older HIP ports reuse those switches)
_CUDA_WORDS = frozenset({"CUDA", "NVIDIA", "NVCC", "CUPTI", "NVTX", "NVML", "CUSOLVER", "CUSPARSE", "CUFFT", "CURAND"})
_OTHER_GPU_WORDS = frozenset({"SYCL", "DPCPP", "ONEAPI", "METAL"})  # another vendor's backend
# <PREFIX>_HIP_PLATFORM_<AMD|HCC|NVCC|NVIDIA>: HIP's platform, one of the two
_HIP_PLATFORM_AMD = frozenset({"AMD", "HCC"})
_HIP_PLATFORM_NVIDIA = frozenset({"NVCC", "NVIDIA"})

# Macros only NVIDIA's toolkit (nvcc, CUDA, CUB, CUTLASS/CuTe) defines: undefined in every AMD build
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


HIP = "hip"
CUDA = "cuda"
HIP_ON_NVIDIA = "hip-on-nvidia"  # HIP's NVIDIA platform: off in every AMD build, port or not
OTHER_GPU = "other"  # another vendor's GPU backend (SYCL, Metal): off in every AMD build


@lru_cache(maxsize=4096)
def switch_platform(name: str) -> str | None:
    """``HIP``, ``CUDA``, ``HIP_ON_NVIDIA`` or ``OTHER_GPU`` when the name is a platform
    switch; else None."""
    parts = [p for p in name.upper().split("_") if p]
    for i in range(len(parts) - 2):
        if parts[i] == "HIP" and parts[i + 1] == "PLATFORM":
            if parts[i + 2] in _HIP_PLATFORM_AMD:
                return HIP
            if parts[i + 2] in _HIP_PLATFORM_NVIDIA:
                return HIP_ON_NVIDIA
    for word, following in zip(parts, parts[1:]):
        if word in _SWITCH_WORDS:
            if following in _HIP_WORDS or following.startswith(("HIP", "ROCM")):
                return HIP
            if following in _CUDA_WORDS or following.startswith("CUDA"):
                return CUDA
            if following in _OTHER_GPU_WORDS:
                return OTHER_GPU
    return None


def value_by_name(name: str, port: bool) -> bool | None:
    """Whether the AMD build turns the switch on, by its name alone: HIP switches on; CUDA
    switches off, except in a port (the CUDA build compiled by hipcc: its CUDA options on);
    HIP's NVIDIA platform off. None: the name states no platform."""
    platform = switch_platform(name)
    if platform == HIP:
        return True
    if platform == CUDA:
        return port
    if platform in (HIP_ON_NVIDIA, OTHER_GPU):
        return False
    return None


def describe_by_name(name: str, port: bool) -> str:
    """The evidence line of ``value_by_name`` (shown below any definition from the build)."""
    platform = switch_platform(name)
    state = "defined" if value_by_name(name, port) else "undefined"
    if platform == HIP:
        why = "its name says HIP/ROCm"
    elif platform == HIP_ON_NVIDIA:
        why = "its name says HIP's NVIDIA platform"
    elif platform == OTHER_GPU:
        why = "its name says another GPU vendor's backend (SYCL, Metal)"
    elif port:
        why = "its name says CUDA, and a port compiles the CUDA build's options with hipcc"
    else:
        why = "its name says CUDA/NVIDIA"
    return f"{state} by its name: {why} (weaker evidence: no definition from the build)"
