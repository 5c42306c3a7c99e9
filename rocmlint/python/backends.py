"""Import roots that exist only for one platform: code that needs one never runs on ROCm."""
from __future__ import annotations

import re

from ..lazy_re import lazy_compile

# Import roots that exist only for NVIDIA GPUs (a dotted prefix matches it and its submodules).
NVIDIA_ONLY_IMPORTS = (
    "cutlass", "cutlass_library", "flash_attn.cute", "flash_attn_interface", "deep_gemm", "deep_ep",
    "cuda.bindings", "cuda.core", "cuda.tile", "nvmath", "tensorrt", "tensorrt_llm", "cudnn", "nvshmem",
    "pycuda", "modelopt", "nunchaku", "quack", "nvfuser", "nvfuser_direct", "magi_attention",
)
# Import roots of other accelerators' PyTorch backends: a module that needs one never runs on ROCm.
OTHER_ACCELERATOR_IMPORTS = {
    "habana_frameworks": "Intel Gaudi", "intel_extension_for_pytorch": "Intel's extension (XPU, CPU)",
    "torch_xla": "TPUs", "torch_npu": "Ascend NPUs", "torch_neuronx": "AWS Neuron", "torch_mlu": "Cambricon MLUs",
}

# A name made for TensorRT-LLM's precompiled kernels (`from flashinfer.mla import
# trtllm_batch_decode_with_kv_cache_mla`): no ROCm build of a package that wraps them has them.
_NVIDIA_KERNEL_NAME = lazy_compile(r"(?:^|[._])trtllm(?:$|_)")
_NVIDIA_ROOT = lazy_compile(r"(?:%s)(?:\.|$)" % "|".join(re.escape(r) for r in NVIDIA_ONLY_IMPORTS))


def nvidia_root(module: str) -> str | None:
    """The NVIDIA-only package a module path is part of (`deep_gemm.jit` -> `deep_gemm`), if any."""
    m = _NVIDIA_ROOT.match(module)
    return m.group(0).rstrip(".") if m else None


def nvidia_only_import(module: str) -> str | None:
    """What makes an imported module path NVIDIA-only: its package (`deep_gemm`), or a name of
    TensorRT-LLM's kernels in it (`flashinfer.mla.trtllm_batch_decode`); None otherwise."""
    return nvidia_root(module) or (module if _NVIDIA_KERNEL_NAME.search(module) else None)
