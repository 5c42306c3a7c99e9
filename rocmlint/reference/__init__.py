"""Reference kernel library: one small single-source HIP/CUDA kernel per fix pattern.

Each ``kernels/<name>.hip`` holds a kernel and a host test (``main``) that checks it
against a CPU result and prints PASS/FAIL; ``vendor.h`` lets nvcc build the same file.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

KERNEL_SUFFIX = ".hip"


@dataclass(frozen=True)
class ReferenceKernel:
    name: str
    path: Path


def kernels_dir() -> Path:
    """The kernels folder as a real directory (extracted once if the package is zipped)."""
    folder = files(__name__).joinpath("kernels")
    if isinstance(folder, Path):
        return folder
    return _extracted(folder)


def list_kernels() -> list[ReferenceKernel]:
    """Every reference kernel, sorted by name."""
    return [ReferenceKernel(path.stem, path)
            for path in sorted(kernels_dir().glob(f"*{KERNEL_SUFFIX}"))]


_extracted_dir: Path | None = None


def _extracted(folder) -> Path:
    global _extracted_dir
    if _extracted_dir is None:
        target = Path(tempfile.mkdtemp(prefix="rocmlint-kernels-"))
        for entry in folder.iterdir():
            if entry.is_file():
                (target / entry.name).write_bytes(entry.read_bytes())
        _extracted_dir = target
    return _extracted_dir


__all__ = ["ReferenceKernel", "kernels_dir", "list_kernels", "KERNEL_SUFFIX"]
