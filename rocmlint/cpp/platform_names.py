"""What a switch's name says of the platform it turns on (``GGML_USE_HIP``,
``KOKKOS_ENABLE_CUDA``, ``GINKGO_HIP_PLATFORM_NVCC``, ``HAVE_CUDA_H``).

The weakest evidence the model uses (design §2e): a macro that no visible definition sets,
or one a build template writes from a value rocmlint cannot evaluate, is decided by the
platform its name states, as the ecosystem uses such names. Shared by the project model,
the build readers and the model-less ``#if`` table of a lone file."""
from __future__ import annotations

from ..platform_words import CUDA, HIP, HIP_ON_NVIDIA, OTHER_GPU, switch_platform

__all__ = ["CUDA", "HIP", "HIP_ON_NVIDIA", "OTHER_GPU", "switch_platform", "value_by_name", "describe_by_name",
           "nvidia_toolkit_macro"]

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
