"""The wheel users install: rules and fixers inside the rocmlint namespace, kernels shipped,
no generic top-level `checks`/`fixers` packages."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_layout(tmp_path):
    leftover = ROOT / "build"
    existed = leftover.exists()
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "-q", "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True)
    if not existed:
        shutil.rmtree(leftover, ignore_errors=True)  # setuptools builds in the tree
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = tmp_path.glob("rocmlint-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {"checks", "fixers"}.isdisjoint(tops)
    assert "rocmlint/checks/python/roc101_torch_compile_reduce_overhead.py" in names
    assert "rocmlint/checks/cpp/roc201_ballot_mask_truncated.py" in names
    assert "rocmlint/fixers/apply.py" in names
    kernels = [n for n in names if n.startswith("rocmlint/reference/kernels/") and n.endswith(".hip")]
    assert len(kernels) >= 8
    assert "rocmlint/reference/kernels/vendor.h" in names
    for header in ("rocmlint_executor.h", "rocmlint_prelude.h", "hip/hip_runtime.h", "cuda_runtime.h"):
        assert f"rocmlint/verify/executor_include/{header}" in names  # verify --run
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "rocmlint = rocmlint.cli:main" in text and "ROC = rocmlint.flake8_plugin:Flake8Plugin" in text
