"""Import roots that exist only for one platform: code that needs one never runs on ROCm."""
from __future__ import annotations

# Import roots that exist only for NVIDIA GPUs (a dotted prefix matches it and its submodules).
NVIDIA_ONLY_IMPORTS = (
    "cutlass", "cutlass_library", "flash_attn.cute", "flash_attn_interface", "deep_gemm", "deep_ep",
    "cuda.bindings", "cuda.core", "cuda.tile", "nvmath", "tensorrt", "tensorrt_llm", "cudnn", "nvshmem",
    "pycuda", "modelopt", "nunchaku",
)
# Import roots of other accelerators' PyTorch backends: a module that needs one never runs on ROCm.
OTHER_ACCELERATOR_IMPORTS = {
    "habana_frameworks": "Intel Gaudi", "intel_extension_for_pytorch": "Intel's extension (XPU, CPU)",
    "torch_xla": "TPUs", "torch_npu": "Ascend NPUs", "torch_neuronx": "AWS Neuron", "torch_mlu": "Cambricon MLUs",
}
