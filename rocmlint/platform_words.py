"""Does a word name a platform? One answer for both halves (design §2g: a name is the weakest
evidence, used where nothing the code or the build states decides).

Each reader bounds a word its own way, and the differences are deliberate; they are the
``READERS`` below, each with the cases ``tests/test_platform_words.py`` pins:

- ``python-gate``: an identifier the Python half reads as a platform test (``is_hip()``,
  ``on_amd``, ``IS_ROCM``): hip, rocm, amd between non-alphanumerics.
- ``manifest``: a manifest's file or folder name (``requirements_rocm.txt``,
  ``docker/mi300x/``, ``rocmbench/``): also MI-series names and words that start with rocm;
  ``amd64`` is the CPU, not AMD GPUs.
- ``python-build``: a name in a setup.py/build script (``if IS_HIP:``, ``use_rocm``): hip and
  rocm only, since ``amd`` there names CPUs too.
- ``cmake-hip`` / ``cmake-cuda`` / ``cmake-other``: what a CMake branch's commands do (link
  hipblas, run hipcc, find CUDAToolkit); a stub named for a platform's absence (``no_cuda.cpp``)
  is not its work.
- ``switch_platform``: a C/C++ or CMake switch (``GGML_USE_HIP``, ``LIB_USING_CUDA``,
  ``KOKKOS_ENABLE_CUDA``, ``GINKGO_HIP_PLATFORM_NVCC``): a switch word followed by a platform
  word.
"""
from __future__ import annotations

import re
from functools import lru_cache

from .lazy_re import lazy_compile

_ABSENT = r"(?<!no_)(?<!no-)(?<!non_)(?<!without_)"

READERS: dict[str, "re.Pattern[str]"] = {
    "python-gate": lazy_compile(r"(?<![a-z0-9])(?:hip|rocm|amd)(?![a-z0-9])", re.IGNORECASE),
    "manifest": lazy_compile(r"(?i)(?:^|[^a-z])(?:rocm[a-z]*|amd(?!64)|hip|mi\d{3}x?)(?:$|[^a-z])"),
    "python-build": lazy_compile(r"(?<![a-z])(?:hip|rocm)(?![a-z])", re.IGNORECASE),
    "cmake-hip": lazy_compile(_ABSENT + r"(?<![a-z])(?:hip(?:cc|ify|blas|blaslt|sparse|fft|rand|cub)?|rocm"
                              r"|roc(?:blas|prim|thrust|wmma)|amdgpu|__hip_platform_amd__)(?![a-z])", re.IGNORECASE),
    "cmake-cuda": lazy_compile(_ABSENT + r"(?<![a-z])(?:cuda(?:toolkit|_arch)?|nvcc|cublas(?:lt)?|cudnn|cudart|nccl"
                               r"|cutlass|nvidia|cusolver(?:sp|dn)?|cusparse|cufft|curand|cupti|nvtx3?|nvml)"
                               r"(?![a-z])", re.IGNORECASE),
    "cmake-other": lazy_compile(_ABSENT + r"(?<![a-z])(?:sycl|dpcpp|oneapi|level_?zero|metal)(?![a-z])",
                                re.IGNORECASE),
}


def names_platform(text: str, reader: str) -> bool:
    """Whether ``text`` holds a platform word as ``reader`` bounds words."""
    return READERS[reader].search(text) is not None


# A switch word followed by a platform word: <PREFIX>_USE_HIP, ENABLE_CUDA_LAMBDA, HAVE_CUDA_H,
# <PREFIX>_ARCH_AMD_GPU (the ROCm build's architecture is AMD's), RAJA_BACKENDS_CUDA,
# LIB_USING_HIP; a word that starts with CUDA or HIP names that platform's part (USE_CUDAUVM, USE_HIPBLAS).
SWITCH_WORDS = frozenset({"USE", "USING", "ENABLE", "ENABLED", "BUILD", "HAVE", "HAS", "WITH", "ARCH", "BACKEND",
                          "BACKENDS"})
HIP_WORDS = frozenset({"HIP", "ROCM", "AMD", "HCC", "AMDGPU"})
# NVIDIA's own tools and libraries too (not cuBLAS/cuDNN: older HIP ports reuse those switches)
CUDA_WORDS = frozenset({"CUDA", "NVIDIA", "NVCC", "CUPTI", "NVTX", "NVML", "CUSOLVER", "CUSPARSE", "CUFFT", "CURAND"})
OTHER_GPU_WORDS = frozenset({"SYCL", "DPCPP", "ONEAPI", "METAL"})  # another vendor's backend
# <PREFIX>_HIP_PLATFORM_<AMD|HCC|NVCC|NVIDIA>: HIP's platform, one of the two
_HIP_PLATFORM_AMD = frozenset({"AMD", "HCC"})
_HIP_PLATFORM_NVIDIA = frozenset({"NVCC", "NVIDIA"})

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
        if word in SWITCH_WORDS:
            if following in HIP_WORDS or following.startswith(("HIP", "ROCM")):
                return HIP
            if following in CUDA_WORDS or following.startswith("CUDA"):
                return CUDA
            if following in OTHER_GPU_WORDS:
                return OTHER_GPU
    return None
