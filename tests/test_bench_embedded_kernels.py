"""benchmarks/embedded_kernels.py counts what it claims: files, trigger words, findings of both passes."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_benchmark_counts_trigger_files_and_finds_the_kernel_string_findings(tmp_path):
    (tmp_path / "plain.py").write_text("import math\nprint(math.pi)\n")
    (tmp_path / "kern.py").write_text(
        "import cupy\nk = cupy.RawKernel('__global__ void k(int* o) "
        "{ o[0] = __shfl_sync(0xffffffff, o[0], 0); }', 'k')\n")
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "embedded_kernels.py"), str(tmp_path),
                          "--repeat", "1"], capture_output=True, text=True, check=True).stdout
    assert f"{tmp_path}: 2 .py files" in out and "1 with a trigger word" in out
    counts = dict(re.findall(r"(python rules only|with kernel strings)\s+[\d.]+ s\s+\((\d+) findings\)", out))
    assert counts == {"python rules only": "0", "with kernel strings": "1"}  # the ROC203 inside the string
