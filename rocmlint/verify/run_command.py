"""``rocmlint verify --run [PROGRAM...]``: build and run programs on the CPU executor.

One program at one wave size behaves like the program: its output, its exit status. Several
runs print each run's output, then a table; the exit status is 0 when every run passed (the
reference library: when every form behaved as its kernel declares).
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from ..reference import ReferenceKernel
from .executor import WAVE_SIZES, Executor, Program, default_cache_dir
from .compare import Comparison, compare, read_log
from .compare import render_text as render_compare
from .core import parallel_map
from .report import EXIT_FAILED, EXIT_NO_TOOLCHAIN
from .run_programs import RunRow, run_files, run_reference
from .run_report import exit_code, render_json, render_text
from .toolchain import HostCompiler

ARCH_BY_WAVE = {64: "gfx942", 32: "gfx1100"}


def parse_waves(text: str | None) -> tuple[int, ...] | None:
    """``64``, ``32`` or ``64,32`` (the default: both); None when malformed."""
    if not text:
        return WAVE_SIZES
    try:
        waves = tuple(dict.fromkeys(int(part) for part in text.split(",") if part.strip()))
    except ValueError:
        return None
    return waves if waves and all(wave in WAVE_SIZES for wave in waves) else None


def _header(compiler: HostCompiler, waves: tuple[int, ...], time_limit: float) -> list[str]:
    sizes = ", ".join(f"wave {wave} as {ARCH_BY_WAVE[wave]}" for wave in waves)
    return [f"executor: {compiler.describe()}; {sizes}; time limit {time_limit:g} s per run"]


def _print_single(row: RunRow) -> int:
    """One program at one wave size: its output and its exit status, as if run directly."""
    result = row.result
    sys.stdout.write(result.output)
    if result.outcome == "no-build":
        print(f"rocmlint verify: {row.target} did not build:\n{result.message}", file=sys.stderr)
        return EXIT_FAILED
    if result.outcome == "timeout":
        print(f"rocmlint verify: {row.target}: {result.message}", file=sys.stderr)
        return EXIT_FAILED
    return result.status if result.status is not None else EXIT_FAILED


def _print_outputs(rows: list[RunRow]) -> None:
    for row in rows:
        result = row.result
        status = f"exit {result.status}" if result.status is not None else result.outcome
        print(f"=== {row.target} at wave {row.wave}: {status} ===")
        if result.output:
            sys.stdout.write(result.output if result.output.endswith("\n") else result.output + "\n")


def _run_jobs(jobs: int, programs: int) -> int:
    """Processes each run may split a large launch over: the cores the runs in parallel leave."""
    from ..runner import usable_cpus

    return max(1, usable_cpus() // max(1, min(jobs, programs)))


def compare_programs(compiler: HostCompiler, programs: list[Program], *, time_limit: float, use_cache: bool,
                     jobs: int) -> list[Comparison]:
    """Each program at 64 and 32 lanes, what it copied back compared (``--compare``)."""
    with tempfile.TemporaryDirectory(prefix="rocmlint-compare-") as scratch:
        executor = Executor(compiler, Path(scratch), default_cache_dir() if use_cache else None, time_limit,
                            run_jobs=_run_jobs(jobs, len(programs)))

        def task(numbered: tuple[int, Program]) -> Comparison:
            number, program = numbered
            builds = executor.build(program, WAVE_SIZES)
            logs = {wave: Path(scratch, f"copies-{number}-{wave}.log") for wave in WAVE_SIZES}
            runs = {wave: executor.run(program, wave, builds[wave], logs[wave]) for wave in WAVE_SIZES}
            return compare(program.name, runs, {wave: read_log(logs[wave]) for wave in WAVE_SIZES})

        return parallel_map(task, list(enumerate(programs)), jobs, "verify --run --compare")


def run_compare(compiler: HostCompiler, programs: list[Program], *, time_limit: float, use_cache: bool, jobs: int,
                output_format: str) -> int:
    """Exit 1 on a witness, 0 on none, 2 when a program could not be compared."""
    comparisons = compare_programs(compiler, programs, time_limit=time_limit, use_cache=use_cache, jobs=jobs)
    if output_format == "json":
        print(json.dumps([found.to_json() for found in comparisons], indent=2))
    else:
        if len(comparisons) == 1 and comparisons[0].not_run and comparisons[0].runs[64].outcome == "no-build":
            print(comparisons[0].runs[64].message or "", file=sys.stderr)
        print(render_compare(comparisons))
    if any(found.witness is not None for found in comparisons):
        return EXIT_FAILED
    return EXIT_NO_TOOLCHAIN if any(found.not_run for found in comparisons) else 0


def run(compiler: HostCompiler, *, kernels: list[ReferenceKernel] | None, programs: list[Program],
        waves: tuple[int, ...], time_limit: float, use_cache: bool, jobs: int, output_format: str) -> int:
    with tempfile.TemporaryDirectory(prefix="rocmlint-run-") as scratch:
        executor = Executor(compiler, Path(scratch), default_cache_dir() if use_cache else None, time_limit,
                            run_jobs=_run_jobs(jobs, len(programs)) if kernels is None else 1)
        if kernels is not None:
            rows = run_reference(executor, kernels, waves, jobs)
        else:
            rows = run_files(executor, programs, waves, jobs)
    if output_format == "json":
        print(render_json(rows))
        return exit_code(rows)
    if kernels is None and len(rows) == 1:
        return _print_single(rows[0])
    if kernels is None:
        _print_outputs(rows)
    print(render_text(rows, _header(compiler, waves, time_limit)))
    return exit_code(rows)
