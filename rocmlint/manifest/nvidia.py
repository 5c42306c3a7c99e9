"""What makes a requirement or an index NVIDIA-only: CUDA local versions (`+cu121`), CUDA
wheel indexes, CUDA extras (`jax[cuda12]`, `tensorflow[and-cuda]`), CUDA-suffixed wheels
(`cupy-cuda12x`, `nvidia-cublas-cu12`, `cudf-cu12`) and packages that only exist for CUDA."""
from __future__ import annotations

import re

from packaging.utils import canonicalize_name

from ..lazy_re import lazy_compile
from .model import Dependency

# `cu121`, `cu118`, `cu12` as a token (not `cuda`, not `cu1234`).
_CU_TOKEN = lazy_compile(r"(?i)(?<![a-z0-9])cu\d{2,3}(?![0-9a-z])")
_CUDA_INDEX = lazy_compile(r"(?i)(?<![a-z0-9])cu\d{2,3}(?![0-9])|pypi(?:\.ngc)?\.nvidia\.com|jax_cuda_releases")
_CUDA_EXTRA = lazy_compile(r"(?i)(?:and-)?cuda\d*(?:[-_.].*)?")
_CUDA_SUFFIX = lazy_compile(r"-(?:cu\d{2,3}|cuda\d*x?)$")
_NVIDIA_LIBRARY = lazy_compile(
    r"nvidia-(?:cublas|cuda-[\w-]+|cudnn|cufft|cufile|curand|cusolver|cusparse|cusparselt|nccl|nvjitlink|nvtx"
    r"|nvshmem|cutlass|dali)[\w-]*")
# Distributions published for CUDA only.
_CUDA_ONLY = frozenset({"pycuda", "cuda-python", "tensorrt", "torch-tensorrt", "onnxruntime-gpu", "tensorflow-gpu",
                        "transformer-engine", "pytorch-cuda", "cudatoolkit", "cuda-toolkit"})
# Built from source against the GPU toolkit: the CUDA build unless the ROCm one is asked for.
_CUDA_FIRST_SOURCE = frozenset({"flash-attn"})


def cuda_reason(dependency: Dependency) -> str | None:
    """Why the requirement installs NVIDIA-only bits (None: it does not, as far as we know)."""
    requirement = dependency.requirement
    name = canonicalize_name(requirement.name)
    for spec in requirement.specifier:
        local = spec.version.partition("+")[2]
        if _CU_TOKEN.match(local):
            return f"a CUDA build, `+{local}`"
    if requirement.url and _CU_TOKEN.search(requirement.url.replace("%2B", "+")):
        return "a CUDA wheel"
    for extra in requirement.extras:
        if _CUDA_EXTRA.fullmatch(extra):
            return f"the `{extra}` extra"
    if _CUDA_SUFFIX.search(name) or _NVIDIA_LIBRARY.fullmatch(name):
        return "a CUDA-only wheel"
    if name in _CUDA_ONLY:
        return "a CUDA-only package"
    if dependency.conda_spec is not None:
        channel, _, rest = dependency.conda_spec.rpartition("::")
        if channel == "nvidia" or name.startswith("cuda-") or re.search(r"(?i)cuda", rest.split("=", 1)[-1]):
            return "a CUDA conda package"
    if name in _CUDA_FIRST_SOURCE and "--no-build-isolation" not in dependency.pip_options:
        # Built against the torch already installed, a ROCm build on a ROCm machine.
        return "its wheels and source build are CUDA builds unless the ROCm build is asked for"
    return None


def is_nvidia_runtime_library(dependency: Dependency) -> bool:
    """`nvidia-cublas-cu12` and friends: PyTorch's CUDA runtime, listed together in lock files."""
    return bool(_NVIDIA_LIBRARY.fullmatch(canonicalize_name(dependency.requirement.name)))


def cuda_index(url: str) -> bool:
    return not url.startswith("conda:") and bool(_CUDA_INDEX.search(url))
