"""Compile one source for one gfx target, read its wave size, and run reference tests."""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..lazy_re import lazy_compile
from .toolchain import Toolchain

BUILD_TIMEOUT_S = 300
TEST_TIMEOUT_S = 120
MAX_MESSAGE_LINES = 12
_NOTES_WAVE = lazy_compile(r"\.wavefront_size:\s+(\d+)")
_ASM_WAVE32 = lazy_compile(r"^\s*\.amdhsa_wavefront_size32\s+(\d)", re.MULTILINE)
_ERROR_LINE = lazy_compile(r"\b(?:fatal )?error\b")
FROM_NOTES = "code-object notes"
FROM_ASSEMBLY = "assembly metadata"


@dataclass
class BuildResult:
    built: bool
    wavefront_size: int | None = None
    wavefront_from: str | None = None
    message: str | None = None      # the compiler's errors, or why only assembly was built


def call_tool(argv: list[str], timeout: float) -> tuple[int, str, str]:
    """Status, stdout and stderr of a tool; 124 / 127 with a message when it times out / cannot run."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:.0f} s: {' '.join(argv[:2])} ..."
    except OSError as exc:
        return 127, "", f"cannot run {argv[0]}: {exc.strerror}"
    return done.returncode, done.stdout or "", done.stderr or ""


def _call(argv: list[str], timeout: float) -> tuple[int, str]:
    status, output, errors = call_tool(argv, timeout)
    return status, errors + output


def compiler_message(output: str) -> str:
    """The error lines of a compiler's output (all of it when it names no error)."""
    lines = [line for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR_LINE.search(line) and "generated" not in line]
    chosen = errors or lines
    text = "\n".join(chosen[:MAX_MESSAGE_LINES])
    return text + ("\n..." if len(chosen) > MAX_MESSAGE_LINES else "")


def _wave_from_notes(toolchain: Toolchain, code_object: Path) -> int | None:
    if not toolchain.readelf:
        return None
    status, output = _call([toolchain.readelf, "--notes", str(code_object)], 60)
    match = _NOTES_WAVE.search(output) if status == 0 else None
    return int(match.group(1)) if match else None


def _wave_from_assembly(assembly: Path) -> int | None:
    text = assembly.read_text(errors="replace")
    match = _NOTES_WAVE.search(text)  # the embedded metadata, same key as the notes
    if match:
        return int(match.group(1))
    if ".amdhsa_kernel" in text:
        wave32 = _ASM_WAVE32.search(text)
        return 32 if wave32 and wave32.group(1) == "1" else 64
    return None


def build_device(toolchain: Toolchain, source: Path, arch: str, flags: list[str],
                 workdir: Path) -> BuildResult:
    """Device-only HIP build: a full code object where device libraries exist for
    ``arch``, else AMDGPU assembly (``-S -nogpulib``), the wave size read from either."""
    stem = workdir / f"{source.stem}-{arch.replace(':', '_')}"
    base = [toolchain.clang, "-x", "hip", f"--offload-arch={arch}", "--cuda-device-only", "-O2",
            *toolchain.hip_flags, *flags, str(source)]
    fallback_note = f"no ROCm device libraries for {arch}: built device assembly only"
    if toolchain.can_link(arch):
        code_object = stem.with_suffix(".co")
        status, output = _call([*base, *toolchain.device_lib_flags, "--no-gpu-bundle-output",
                                "-c", "-o", str(code_object)], BUILD_TIMEOUT_S)
        if status == 0:
            wave = _wave_from_notes(toolchain, code_object)
            if wave is not None:
                return BuildResult(True, wave, FROM_NOTES)
            fallback_note = ("no kernel metadata in the code object notes" if toolchain.readelf
                             else "llvm-readelf not found") + ": wave size read from the assembly"
        else:
            first_error = compiler_message(output).splitlines()[:1]
            fallback_note = (f"code object did not link for {arch} ({''.join(first_error)}): "
                             "built device assembly only")
    assembly = stem.with_suffix(".s")
    status, output = _call([*base, "-nogpulib", "-S", "-o", str(assembly)], BUILD_TIMEOUT_S)
    if status != 0:
        return BuildResult(False, message=compiler_message(output))
    wave = _wave_from_assembly(assembly)
    return BuildResult(True, wave, FROM_ASSEMBLY if wave else None,
                       fallback_note if wave else "no kernels in the file")


@dataclass
class TestResult:
    ran: bool
    passed: bool
    reason: str | None


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def build_executable(argv: list[str]) -> str | None:
    """Build a test executable; the compiler's message when that fails."""
    status, output = _call(argv, BUILD_TIMEOUT_S)
    return None if status == 0 else compiler_message(output)


def run_executable(executable: Path) -> TestResult:
    """Run a reference test: PASS is exit 0, else the reason is its last output line."""
    status, output = _call([str(executable)], TEST_TIMEOUT_S)
    if status == 0:
        return TestResult(True, True, None)
    return TestResult(True, False, f"exit {status}: {_last_line(output)}")


def hip_test_argv(toolchain: Toolchain, source: Path, arch: str, executable: Path) -> list[str]:
    libraries = [f"-L{toolchain.rocm_root}/lib", f"-Wl,-rpath,{toolchain.rocm_root}/lib"] if toolchain.rocm_root else []
    return [toolchain.clang, "-x", "hip", f"--offload-arch={arch}", "-O2", *toolchain.hip_flags,
            *toolchain.device_lib_flags, str(source), "-o", str(executable), "--hip-link",
            *libraries, "-lamdhip64"]


def cuda_test_argv(nvcc: str, source: Path, arch: str | None, executable: Path) -> list[str]:
    arch_flags = [f"-arch={arch}"] if arch else []
    return [nvcc, "-x", "cu", "-O2", *arch_flags, str(source), "-o", str(executable)]


def cuda_compile_argv(nvcc: str, source: Path, arch: str | None, flags: list[str], output: Path) -> list[str]:
    """Compile (host and device, no link) as the NVIDIA build sees the file."""
    arch_flags = [f"-arch={arch}"] if arch else []
    return [nvcc, "-x", "cu", "-c", "-O2", *arch_flags, *flags, str(source), "-o", str(output)]
