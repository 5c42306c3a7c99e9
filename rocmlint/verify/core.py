"""Build (and where a GPU exists, run) sources for every target, in parallel."""
from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Protocol, TypeVar

from ..reference import ReferenceKernel
from .build import (BuildResult, TestResult, build_device, build_executable, cuda_compile_argv,
                    cuda_test_argv, hip_test_argv, run_executable)
from .cuda import CudaSetup
from .report import Row
from .targets import GpuProbe
from .toolchain import Toolchain

Item = TypeVar("Item")


class _Timed(Protocol):
    seconds: float


Timed = TypeVar("Timed", bound=_Timed)
CUDA_WAVE_SIZE = 32  # every NVIDIA architecture
NOT_A_REFERENCE_TEST = "build-only check: only reference kernels have tests to run"
NO_NVCC = "nvcc not found (PATH, CUDA_HOME)"
HIP_ONLY = "HIP-only file: it has no NVIDIA build"
# As hipcc does: CUDA-style files use threadIdx & co. without including a runtime header.
HIP_RUNTIME_PRELUDE = ["-include", "hip/hip_runtime.h"]


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label, self.done = total, label, 0
        self.enabled = total > 0 and sys.stderr.isatty()
        self._lock = threading.Lock()

    def step(self) -> None:
        with self._lock:
            self.done += 1
            if self.enabled:
                filled = 30 * self.done // self.total
                sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total}")
                if self.done == self.total:
                    sys.stderr.write("\r\033[K")
                sys.stderr.flush()


def parallel_map(task: Callable[[Item], Timed], items: Iterable[Item], jobs: int, label: str) -> list[Timed]:
    """Results of ``task`` over ``items`` in their order, each timed; clang and the programs run as
    subprocesses, so threads suffice."""
    items = list(items)
    progress = Progress(len(items), label)

    def tracked(item: Item) -> Timed:
        start = time.monotonic()
        try:
            row = task(item)
            row.seconds = time.monotonic() - start  # the build and the run, if any
            return row
        finally:
            progress.step()

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(tracked, items))


def _row_from_build(target: str, arch: str, build: BuildResult) -> Row:
    return Row(target=target, arch=arch, built=build.built, wavefront_size=build.wavefront_size,
               wavefront_from=build.wavefront_from, reasons=[build.message] if build.message else [])


def _skip_run(row: Row, reason: str) -> Row:
    """A run not attempted: its reason first, the build's own note (if any) after it."""
    row.reasons.insert(0, reason)
    return row


def _record_run(row: Row, result: TestResult) -> Row:
    row.ran, row.passed = result.ran, result.passed
    if result.reason:
        row.reasons.insert(0, result.reason)
    return row


def verify_reference(toolchain: Toolchain, kernels: list[ReferenceKernel], targets: list[str],
                     gpus: GpuProbe, workdir: Path, jobs: int) -> list[Row]:
    def task(job: tuple[ReferenceKernel, str]) -> Row:
        kernel, arch = job
        row = _row_from_build(kernel.name, arch, build_device(toolchain, kernel.path, arch, [], workdir))
        if not row.built:
            return row
        if not gpus.agents:
            return _skip_run(row, gpus.reason or "no AMD GPU")
        if arch.split(":")[0] not in gpus.agents:
            return _skip_run(row, f"no {arch} GPU here (agents: {', '.join(gpus.agents)})")
        executable = workdir / f"{kernel.name}-{arch.replace(':', '_')}.hip.exe"
        message = build_executable(hip_test_argv(toolchain, kernel.path, arch, executable))
        if message is not None:
            return _record_run(row, TestResult(False, False, f"test executable did not build: {message}"))
        return _record_run(row, run_executable(executable))

    return parallel_map(task, [(k, a) for k in kernels for a in targets], jobs, "verify")


def verify_files(toolchain: Toolchain, sources: list[tuple[Path, str, list[str]]], targets: list[str],
                 workdir: Path, jobs: int) -> list[Row]:
    """``sources``: (path, name to report, flags) per user file; compiled device-only, never run."""
    def task(job: tuple[tuple[Path, str, list[str]], int, str]) -> Row:
        (path, name, flags), index, arch = job
        folder = workdir / f"file{index}"
        folder.mkdir(exist_ok=True)
        build = build_device(toolchain, path, arch, HIP_RUNTIME_PRELUDE + flags, folder)
        row = _row_from_build(name, arch, build)
        return _skip_run(row, NOT_A_REFERENCE_TEST) if row.built else row

    jobs_list = [(source, index, arch) for index, source in enumerate(sources) for arch in targets]
    return parallel_map(task, jobs_list, jobs, "verify")


def skipped_builds(names: list[str], archs: list[str], reason: str) -> list[Row]:
    """Rows for builds that could not be tried (no compiler): reported, not failures."""
    return [Row(name, arch, reasons=[f"not built: {reason}"], build_skipped=True)
            for name in names for arch in archs]


def _cuda_row(name: str, arch_name: str, message: str | None) -> Row:
    row = Row(name, arch_name)
    if message is not None:
        row.reasons.append(message)
    else:
        row.built, row.wavefront_size, row.wavefront_from = True, CUDA_WAVE_SIZE, "cuda"
    return row


def verify_cuda(setup: CudaSetup, kernels: list[ReferenceKernel], workdir: Path, jobs: int) -> list[Row]:
    """nvcc builds of the reference kernels, run when an NVIDIA GPU is present."""
    arch_name = setup.arch or "cuda"
    if setup.nvcc is None:
        return skipped_builds([kernel.name for kernel in kernels], [arch_name], NO_NVCC)
    nvcc = setup.nvcc

    def task(kernel: ReferenceKernel) -> Row:
        executable = workdir / f"{kernel.name}.cuda.exe"
        row = _cuda_row(kernel.name, arch_name,
                        build_executable(cuda_test_argv(nvcc, kernel.path, setup.arch, executable)))
        if not row.built:
            return row
        if setup.gpu_reason:
            return _skip_run(row, setup.gpu_reason)
        return _record_run(row, run_executable(executable))

    return parallel_map(task, kernels, jobs, "verify --cuda")


def verify_cuda_files(setup: CudaSetup, sources: list[tuple[Path, str, list[str]]], workdir: Path,
                      jobs: int) -> list[Row]:
    """nvcc compiles (no link, never run) of user files: their NVIDIA view still builds."""
    arch_name = setup.arch or "cuda"
    if setup.nvcc is None:
        return skipped_builds([name for _path, name, _flags in sources], [arch_name], NO_NVCC)
    nvcc = setup.nvcc
    hip_only = [name for path, name, _flags in sources if _hip_only(path)]
    sources = [source for source in sources if source[1] not in hip_only]

    def task(job: tuple[int, tuple[Path, str, list[str]]]) -> Row:
        index, (path, name, flags) = job
        obj = workdir / f"file{index}.cuda.o"
        row = _cuda_row(name, arch_name, build_executable(cuda_compile_argv(nvcc, path, setup.arch, flags, obj)))
        return _skip_run(row, NOT_A_REFERENCE_TEST) if row.built else row

    return skipped_builds(hip_only, [arch_name], HIP_ONLY) + parallel_map(task, list(enumerate(sources)), jobs,
                                                                          "verify --cuda")


def _hip_only(path: Path) -> bool:
    """Compiled only by hipcc (``.hip``, or the HIP runtime and no CUDA path): nvcc never sees it."""
    from ..config import Settings
    from ..cpp.context import is_hip_only
    from ..cpp.preprocessor import Conditionals

    try:
        source = path.read_bytes()
    except OSError:
        return False  # the build reports the unreadable file
    settings = Settings()
    pp = Conditionals(source, settings.all_rocm_macros, settings.all_nvidia_macros, settings.gate_macro)
    return is_hip_only(str(path), source, pp)
