"""Hostile input: random bytes around trigger words, deep nesting, one-line kernels.
No crash, no internal error, and --fix either writes a checked result or refuses."""
from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TRIGGERS = [b"__ballot_sync(", b"0xffffffff", b"warpSize", b"asm volatile(", b"#include <cuda_runtime.h>\n",
            b'mode="reduce-overhead"', b"import pynvml\n", b"max_split_size_mb", b"\x00", b"\r", b"\xff\xfe",
            b"#if defined(__HIP_PLATFORM_AMD__)\n", b"#endif\n", b"'''", b"tid % 32"]


def rocmlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", *args, "--no-cache"], cwd=cwd, capture_output=True,
                          timeout=300)


@pytest.fixture
def garbage(tmp_path) -> Path:
    rng = random.Random(20261122)
    for i in range(24):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000)))
        for word in rng.sample(TRIGGERS, 5):
            at = rng.randrange(len(data) + 1)
            data = data[:at] + word + data[at:]
        (tmp_path / f"g{i}.cu").write_bytes(data)
        (tmp_path / f"g{i}.py").write_bytes(data)
    (tmp_path / "deep.py").write_bytes(b"import pynvml\nx = " + b"(" * 3000 + b")" * 3000 + b"\n")
    (tmp_path / "deep.cu").write_bytes(b"__global__ void k() { unsigned m = __ballot_sync(0xffffffff, "
                                       + b"(" * 5000 + b"1" + b")" * 5000 + b"); }\n")
    return tmp_path


def test_garbage_never_crashes(garbage):
    check = rocmlint("check", ".", cwd=garbage)
    assert check.returncode == 1, check.stderr
    assert b"Traceback" not in check.stderr and b"internal error" not in check.stderr
    before = {p.name: p.read_bytes() for p in garbage.iterdir()}
    fixed = rocmlint("check", "--fix", "--unsafe-fixes", ".", cwd=garbage)
    assert b"Traceback" not in fixed.stderr and b"internal error" not in fixed.stderr
    if shutil.which("unifdef"):
        for path in garbage.glob("*.cu"):
            if path.read_bytes() != before[path.name]:
                views = [subprocess.run(["unifdef", "-U__HIP_PLATFORM_AMD__"], input=data, capture_output=True).stdout
                         for data in (before[path.name], path.read_bytes())]
                assert views[0] == views[1], path.name


def test_one_line_kernel_in_a_shared_file_is_fixed_behind_the_gate(tmp_path):
    source = b"__global__ void k(int* o) { unsigned m = __ballot_sync(0xffffffff, o[0] > 0); o[1] = __popc(m); }\n"
    path = tmp_path / "one.cu"
    path.write_bytes(source)
    proc = rocmlint("check", "--fix", "one.cu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = path.read_bytes()
    assert b"__popcll" in fixed and b"#include <cstdint>" in fixed
    if shutil.which("unifdef"):
        view = subprocess.run(["unifdef", "-U__HIP_PLATFORM_AMD__", str(path)], capture_output=True).stdout
        assert view == source


@pytest.mark.parametrize("shadowed", ["random", "tempfile", "ast", "concurrent"])
def test_python_m_in_a_repository_runs_none_of_its_modules(tmp_path, shadowed):
    """`python -m rocmlint` puts the current folder first on sys.path; a scanned repository's
    module named like one of the standard library's (torch has `random.py`) must not be
    imported in its place, or run."""
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()\nraise SystemExit(9)\n"
    if shadowed == "concurrent":
        (tmp_path / "concurrent").mkdir()
        (tmp_path / "concurrent" / "__init__.py").write_text(code)
    else:
        (tmp_path / f"{shadowed}.py").write_text(code)
    for n in range(40):  # a big run: the pool, the project model and the cache are imported
        (tmp_path / f"m{n}.py").write_text('import torch\ntorch.compile(m, mode="reduce-overhead")\n')
    done = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--select", "ROC101", "."], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert not marker.exists(), done.stderr
    assert done.returncode == 1 and done.stdout.count("ROC101") >= 40, done.stderr
