"""NVIDIA view against the real unifdef, and the AMD view of fixed fixtures compiled for gfx targets."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rocmlint.config import Settings
from rocmlint.languages import get_language

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cpp"
SHIMS = FIXTURES / "shims"
MACRO = "__HIP_PLATFORM_AMD__"
EXPECTED = sorted(p for p in FIXTURES.glob("*") if p.is_file() and (".fixed" in p.name or ".unsafe-fixed" in p.name))
LANG = get_language("cpp")
needs_unifdef = pytest.mark.skipif(shutil.which("unifdef") is None, reason="unifdef is not installed")
needs_clang = pytest.mark.skipif(shutil.which("clang++-19") is None, reason="clang++-19 is not installed")


def unifdef(data: bytes, flag: str) -> bytes:
    # exit status 1 means "output differs from input", not an error
    proc = subprocess.run(["unifdef", flag], input=data, capture_output=True)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def original_of(fixed: Path) -> Path:
    return fixed.with_name(fixed.name.replace(".unsafe-fixed", "").replace(".fixed", ""))


def test_there_are_fixed_fixtures():
    assert len(EXPECTED) >= 5


@needs_unifdef
@pytest.mark.parametrize("path", EXPECTED + sorted(set(map(original_of, EXPECTED))), ids=lambda p: p.name)
def test_nvidia_view_is_unifdef(path):
    data = path.read_bytes()
    settings = Settings(gate="always")  # the view proper, whatever the file kind
    assert LANG.nvidia_view(data, path.name, settings) == unifdef(data, f"-U{MACRO}")


@needs_unifdef
@pytest.mark.parametrize("fixed", EXPECTED, ids=lambda p: p.name)
def test_fix_leaves_nvidia_build_unchanged(fixed):
    original = original_of(fixed)
    if original.suffix == ".hip":
        pytest.skip("HIP-only file: rewritten directly, there is no NVIDIA build")
    assert unifdef(fixed.read_bytes(), f"-U{MACRO}") == unifdef(original.read_bytes(), f"-U{MACRO}")


def _most_fixed() -> list[Path]:
    """The unsafe-fixed file where there is one: safe fixes alone leave e.g. PTX behind."""
    out = []
    for original in sorted(set(map(original_of, EXPECTED))):
        unsafe = original.with_name(f"{original.stem}.unsafe-fixed{original.suffix}")
        out.append(unsafe if unsafe.exists() else original.with_name(f"{original.stem}.fixed{original.suffix}"))
    return out


@needs_unifdef
@needs_clang
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
@pytest.mark.parametrize("fixed", _most_fixed(), ids=lambda p: p.name)
def test_amd_view_compiles(fixed, arch, tmp_path):
    source = tmp_path / "amd_view.hip"
    source.write_bytes(unifdef(fixed.read_bytes(), f"-D{MACRO}"))
    # USE_ROCM: the project macro a ROCm build defines; the shims stand in for headers the
    # AMD view still names (CUTLASS, reported display-only) and the project's own wrappers.
    cmd = ["clang++-19", "-x", "hip", f"--offload-arch={arch}", "--cuda-device-only", "-nogpulib", "-O2", "-S",
           "-DUSE_ROCM", "-include", "hip/hip_runtime.h", f"-I{SHIMS}", str(source), "-o", str(tmp_path / "k.s")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ".amdhsa" in (tmp_path / "k.s").read_text() or "amdgcn" in (tmp_path / "k.s").read_text()


def test_nvidia_view_empty_for_hip_only():
    assert LANG.nvidia_view(b"#include <hip/hip_runtime.h>\nint x;\n", "k.hip", Settings()) == b""
