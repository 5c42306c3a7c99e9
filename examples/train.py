"""Fine-tune a small classifier; the launcher of a CUDA-first project before its ROCm port."""
import os

import pynvml
import torch

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:256,expandable_segments:True"


def gpu_memory_report() -> str:
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return f"{info.used / 2**30:.1f} GiB used"


def build(model: torch.nn.Module) -> torch.nn.Module:
    # TF32 matmuls and convolutions on Ampere and newer
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    return torch.compile(model, mode="reduce-overhead")
