"""The NVIDIA side of the reference library: nvcc builds each kernel through vendor.h."""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

PROBE_TIMEOUT_S = 30


@dataclass(frozen=True)
class CudaSetup:
    nvcc: str | None
    arch: str | None          # sm_XY of the first GPU, None without one
    gpu_reason: str | None    # why tests cannot run, None when a GPU is present


def find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "nvcc"), os.X_OK):
            return os.path.join(root, "bin", "nvcc")
    return None


def probe_nvidia_gpu() -> tuple[str | None, str | None]:
    """(sm_XY, None) for the first NVIDIA GPU nvidia-smi lists, else (None, reason)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "no NVIDIA GPU: nvidia-smi not found"
    try:
        done = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None, "no NVIDIA GPU: nvidia-smi did not run"
    capabilities = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not capabilities:
        return None, "no NVIDIA GPU: nvidia-smi lists none"
    major, _, minor = capabilities[0].partition(".")
    return f"sm_{major}{minor or '0'}", None


def cuda_setup() -> CudaSetup:
    arch, reason = probe_nvidia_gpu()
    return CudaSetup(find_nvcc(), arch, reason)
