"""``rocmlint verify --run``: programs on the CPU executor, one row per program and wave size.

With no file, the reference library: each kernel's before form (``-DROCMLINT_BEFORE``, the
CUDA-ism) and after form (the fix), each at both wave sizes, checked against what the kernel
declares (``ReferenceKernel.expected``). With files, the user's programs as they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..reference import BEFORE_MACRO, FORMS, ReferenceKernel
from .core import parallel_map
from .executor import Executor, Program, RunResult

OUTPUT_TAIL_CHARS = 4000


@dataclass
class RunRow:
    result: RunResult
    expected: str | None = None     # reference kernels: "pass" | "fail" | "no-build"

    @property
    def target(self) -> str:
        return self.result.program.name

    @property
    def form(self) -> str | None:
        return self.result.program.form

    @property
    def wave(self) -> int:
        return self.result.wave

    @property
    def passed(self) -> bool:
        return self.result.outcome == "pass"

    @property
    def as_expected(self) -> bool:
        """A user program is expected to pass; "fail" matches a wrong result or a stop."""
        expected = self.expected or "pass"
        outcome = self.result.outcome
        return outcome == expected or (expected == "fail" and outcome in ("fail", "stopped"))

    def to_json(self) -> dict:
        result = self.result
        return {
            "target": self.target, "form": self.form, "wave": self.wave, "outcome": result.outcome,
            "expected": self.expected, "as_expected": self.as_expected, "status": result.status,
            "reason": result.message, "output": result.output[-OUTPUT_TAIL_CHARS:],
            "build_seconds": round(result.build_seconds, 2), "run_seconds": round(result.run_seconds, 2),
            "cached_build": result.cached_build,
        }


@dataclass
class _ProgramRuns:
    results: list[RunResult] = field(default_factory=list)
    seconds: float = 0.0


def _rows(executor: Executor, programs: list[Program], waves: tuple[int, ...], jobs: int,
          expected: Callable[[Program, int], str] | None = None) -> list[RunRow]:
    """Rows in (program, wave) order; programs build and run in parallel."""
    def task(program: Program) -> _ProgramRuns:
        builds = executor.build(program, waves)
        return _ProgramRuns([executor.run(program, wave, builds[wave]) for wave in waves])

    return [RunRow(result, expected(result.program, result.wave) if expected else None)
            for runs in parallel_map(task, programs, jobs, "verify --run") for result in runs.results]


def run_reference(executor: Executor, kernels: list[ReferenceKernel], waves: tuple[int, ...],
                  jobs: int) -> list[RunRow]:
    by_path = {kernel.path: kernel for kernel in kernels}
    programs = [Program(kernel.path, kernel.name, form=form, defines=(BEFORE_MACRO,) if form == "before" else ())
                for kernel in kernels for form in FORMS]
    return _rows(executor, programs, waves, jobs,
                 expected=lambda program, wave: by_path[program.path].expected(program.form or "after", wave))


def run_files(executor: Executor, programs: list[Program], waves: tuple[int, ...], jobs: int) -> list[RunRow]:
    return _rows(executor, programs, waves, jobs)
