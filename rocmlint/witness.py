"""``rocmlint check --witness PROGRAM``: the wave-size findings of a program, each with what a run
at 64 and at 32 lanes showed (``verify --run --compare``).

A finding is *witnessed* when the run's first difference (a copy to the host, or the exit
status of a stop) came after a launch of a kernel that reaches the finding's function (the
kernel itself, or a device function it calls in the linted files); *not witnessed* when the run
did not differ there (the input did not reach it, or the hazard changed nothing it copied back);
*not run* when the program could not be built or run (the reason is given).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .lazy_re import lazy_compile
from .model import Finding

WITNESSED, NOT_WITNESSED, NOT_RUN = "witnessed", "not witnessed", "not run"
_STOPPED_IN = lazy_compile(r"\[in kernel (\S+) launched at")


def is_wave_finding(f: Finding) -> bool:
    """ROC201-ROC211: the findings a run at both wave sizes can show."""
    return re.fullmatch(r"ROC2(0[1-9]|1[01])", f.code) is not None


@dataclass
class WitnessRun:
    program: str
    kernels: tuple[str, ...] = ()   # launched before the first difference (or the one a stop names)
    message: str = ""               # the witness, or why nothing was compared
    outcome: str = NOT_WITNESSED    # WITNESSED: the run differs; NOT_RUN: no comparison
    launched: tuple[str, ...] = ()  # every kernel the runs launched


def run_witness(program: Path, arguments: tuple[str, ...], time_limit: float, flags: tuple[str, ...] = ()
                ) -> WitnessRun:
    """Runs ``program`` at 64 and 32 lanes on the CPU executor (the user named it: rocmlint runs
    nothing from a repository on its own)."""
    from .verify.executor import Program
    from .verify.run_command import compare_programs
    from .verify.toolchain import HOST_COMPILER_HINT, find_host_compiler

    name = program.as_posix()
    compiler, _rejected = find_host_compiler()
    if compiler is None:
        return WitnessRun(name, message=HOST_COMPILER_HINT.splitlines()[0], outcome=NOT_RUN)
    found = compare_programs(compiler, [Program(program, name, flags, arguments=arguments)], time_limit=time_limit,
                             use_cache=True, jobs=1)[0]
    if found.not_run:
        return WitnessRun(name, message=found.not_run.splitlines()[0], outcome=NOT_RUN)
    launched = tuple(_bare_name(k) for k in found.launched)
    if found.witness is None:
        return WitnessRun(name, message=f"{found.copies[64]} copies to the host and the exit status are the same "
                                        "at 64 and 32 lanes", launched=launched)
    for wave, kernels_run in found.launched_by_wave.items():
        if not kernels_run and found.runs[wave].status != 0:  # it refused the wave size, or broke at start
            reason = found.runs[wave].message or f"exit {found.runs[wave].status}"
            return WitnessRun(name, message=f"the program ends at wave {wave} before any kernel runs ({reason})",
                              outcome=NOT_RUN, launched=launched)
    kernels = found.witness.kernels
    if not kernels:  # a stop: the message names the kernel it stopped in
        stopped = [m.group(1) for result in found.runs.values() for m in _STOPPED_IN.finditer(result.message or "")]
        kernels = tuple(dict.fromkeys(stopped))
    return WitnessRun(name, tuple(_bare_name(k) for k in kernels), found.witness.message, WITNESSED, launched)


def _bare_name(kernel: str) -> str:
    """``ns::scan<64>`` -> ``scan``: the launch's text, as the function is defined."""
    return re.sub(r"<.*", "", kernel).split("::")[-1].strip()


def _functions(source: bytes, path: str) -> list[tuple[str, int, int, set[str]]]:
    """(name, start byte, end byte, names it calls) of each function definition."""
    from .cpp.dataflow import function_declarator
    from .cpp.treesitter import parse

    found = []
    stack = [parse(source, path).root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            declarator = function_declarator(node)
            name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
            if name_node is not None:
                name = _bare_name(source[name_node.start_byte:name_node.end_byte].decode("utf-8", "replace"))
                calls = {_bare_name(source[c.start_byte:c.end_byte].decode("utf-8", "replace"))
                         for c in _called(node)}
                found.append((name, node.start_byte, node.end_byte, calls))
        stack.extend(node.named_children)
    return found


def _called(function) -> Iterable:
    stack = [function]
    while stack:
        node = stack.pop()
        if node.type == "call_expression":
            callee = node.child_by_field_name("function")
            if callee is not None:
                yield callee
        stack.extend(node.named_children)


def attach(findings: list[Finding], run: WitnessRun, sources: dict[str, bytes]) -> None:
    """Sets ``witness`` on each wave-size finding: witnessed where a kernel the difference came
    after reaches its function (through calls in ``sources``: display path -> bytes)."""
    functions = {path: _functions(data, path) for path, data in sources.items()}
    calls: dict[str, set[str]] = {}
    for listed in functions.values():
        for name, _start, _end, called in listed:
            calls.setdefault(name, set()).update(called)
    reached = _reachable(run.kernels, calls)
    ran = _reachable(run.launched, calls)
    for f in findings:
        if not is_wave_finding(f):
            continue
        if run.outcome == NOT_RUN:
            f.witness = (NOT_RUN, run.message)
            continue
        enclosing = [name for name, start, end, _c in functions.get(f.path, ()) if start <= f.span.start < end]
        if not enclosing:  # a definition (`#define WARP_SIZE 32`): its uses in kernels carry the witness
            f.witness = (NOT_WITNESSED, "outside any function: a run witnesses the kernels that use it"
                         + (f" ({run.message})" if run.outcome == WITNESSED else ""))
        elif run.outcome == WITNESSED and any(name in reached for name in enclosing):
            f.witness = (WITNESSED, run.message)
        elif not any(name in ran for name in enclosing):
            f.witness = (NOT_WITNESSED, f"not reached: no kernel the run launched ({', '.join(run.launched) or 'none'})"
                                        " reaches this code")
        elif run.outcome == WITNESSED:
            f.witness = (NOT_WITNESSED, f"no difference here: the run first differs after "
                                        f"{', '.join(run.kernels) or 'a launch'}, which does not reach this code")
        else:
            f.witness = (NOT_WITNESSED, f"no difference: the run reached this code and {run.message}")


def _reachable(kernels: Iterable[str], calls: dict[str, set[str]]) -> set[str]:
    """The kernels and every function they call, through ``calls``."""
    reached, frontier = set(kernels), list(kernels)
    while frontier:
        for callee in calls.get(frontier.pop(), ()):
            if callee not in reached:
                reached.add(callee)
                frontier.append(callee)
    return reached


def summary_line(findings: list[Finding], run: WitnessRun) -> str:
    counts = {status: sum(1 for f in findings if f.witness and f.witness[0] == status)
              for status in (WITNESSED, NOT_WITNESSED, NOT_RUN)}
    return (f"Witness run of {run.program} at 64 and 32 lanes: {counts[WITNESSED]} finding(s) witnessed, "
            f"{counts[NOT_WITNESSED]} not witnessed (the run did not reach them or did not differ), "
            f"{counts[NOT_RUN]} not run" + (f" ({run.message})" if run.outcome == NOT_RUN else "") + ".")
