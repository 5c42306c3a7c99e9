"""Reference kernel library: one small single-source HIP/CUDA kernel per fix pattern.

Each ``kernels/<name>.hip`` holds a kernel and a host test (``main``) that checks it
against a CPU result and prints PASS/FAIL; ``vendor.h`` lets nvcc build the same file.
Built as it is, a kernel is the fix (the "after" form, what ``rocmlint verify`` compiles
for gfx targets); built with ``-DROCMLINT_BEFORE`` it is the CUDA-ism the fix replaces.
``verify --run`` runs both on the CPU executor: the before form fails at wave 64 and passes
at wave 32 unless its ``// expect before: wave64=... wave32=...`` line says otherwise; the
after form passes at both.
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from ..lazy_re import lazy_compile

KERNEL_SUFFIX = ".hip"
BEFORE_MACRO = "ROCMLINT_BEFORE"
FORMS = ("before", "after")
_OUTCOME = r"(pass|fail|no-build)"
_EXPECT_BEFORE = lazy_compile(rf"^// expect before: wave64={_OUTCOME} wave32={_OUTCOME}[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ReferenceKernel:
    name: str
    path: Path

    def expected(self, form: str, wave: int) -> str:
        """"pass", "fail" (runs, and its check fails) or "no-build" for a form at a wave size."""
        if form == "after":
            return "pass"
        declared = _EXPECT_BEFORE.search(self.path.read_text(encoding="utf-8", errors="replace"))
        wave64, wave32 = declared.groups() if declared else ("fail", "pass")
        return wave64 if wave == 64 else wave32


def package_folder(package: str, name: str) -> Path:
    """A data folder of ``package`` as a real directory (extracted once if the package is zipped)."""
    folder = files(package).joinpath(name)
    if isinstance(folder, Path):
        return folder
    key = f"{package}/{name}"
    if key not in _extracted_dirs:
        target = Path(tempfile.mkdtemp(prefix="rocmlint-data-"))
        _copy_tree(folder, target)
        _extracted_dirs[key] = target
    return _extracted_dirs[key]


def kernels_dir() -> Path:
    """The kernels folder as a real directory."""
    return package_folder(__name__, "kernels")


def list_kernels() -> list[ReferenceKernel]:
    """Every reference kernel, sorted by name."""
    return [ReferenceKernel(path.stem, path)
            for path in sorted(kernels_dir().glob(f"*{KERNEL_SUFFIX}"))]


_extracted_dirs: dict[str, Path] = {}


def _copy_tree(folder, target: Path) -> None:
    target.mkdir(exist_ok=True)
    for entry in folder.iterdir():
        if entry.is_file():
            (target / entry.name).write_bytes(entry.read_bytes())
        elif entry.is_dir():
            _copy_tree(entry, target / entry.name)


__all__ = ["BEFORE_MACRO", "FORMS", "KERNEL_SUFFIX", "ReferenceKernel", "kernels_dir", "list_kernels", "package_folder"]
