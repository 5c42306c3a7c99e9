"""The ``verify --run`` report: text (a table per program, the reasons below) or JSON."""
from __future__ import annotations

import json
from collections import defaultdict

from .report import EXIT_FAILED, EXIT_OK
from .run_programs import RunRow

_CELL = {"pass": "PASS", "fail": "FAIL", "stopped": "STOPPED", "timeout": "TIMEOUT", "no-build": "NO-BUILD"}


def render_json(rows: list[RunRow]) -> str:
    return json.dumps([row.to_json() for row in rows], indent=2)


def exit_code(rows: list[RunRow]) -> int:
    return EXIT_OK if all(row.as_expected for row in rows) else EXIT_FAILED


_VERB = {"pass": "passes", "fail": "fails", "no-build": "does not build"}


def _expectation(cells: dict[int, RunRow]) -> str:
    wanted = {wave: row.expected or "pass" for wave, row in cells.items()}
    if len(wanted) > 1 and len(set(wanted.values())) == 1:
        return f"{_VERB[next(iter(wanted.values()))]} at both"
    return ", ".join(f"{_VERB[outcome]} at {wave}" for wave, outcome in wanted.items())


def render_text(rows: list[RunRow], header: list[str]) -> str:
    programs: dict[tuple[str, str | None], dict[int, RunRow]] = defaultdict(dict)
    for row in rows:
        programs[row.target, row.form][row.wave] = row
    waves = sorted({row.wave for row in rows}, reverse=True)
    width = max([len(target) for target, _form in programs] + [7])
    with_forms = any(form for _target, form in programs)
    lines = list(header)
    form_head = f"{'form':<7}" if with_forms else ""
    lines.append(f"{'program':<{width}}  {form_head}" + "".join(f"{f'wave {wave}':<10}" for wave in waves)
                 + "expected")
    reasons: list[str] = []
    for (target, form), cells in programs.items():
        cell_text = "".join(f"{_CELL[cells[wave].result.outcome] if wave in cells else '-':<10}" for wave in waves)
        verdict = "ok" if all(row.as_expected for row in cells.values()) else "UNEXPECTED"
        form_cell = f"{form or '':<7}" if with_forms else ""
        lines.append(f"{target:<{width}}  {form_cell}{cell_text}{_expectation(cells)}: {verdict}")
        for wave in waves:
            failed = cells.get(wave)
            if failed is not None and failed.result.message and not failed.passed:
                label = f"{target} [{form + ', ' if form else ''}wave {wave}]"
                reasons.append(f"{label}: {failed.result.message}".replace("\n", "\n    "))
    lines += reasons
    unexpected = sum(not row.as_expected for row in rows)
    cached = sum(row.result.cached_build for row in rows)
    lines.append(f"{len(programs)} programs, {len(rows)} runs: {len(rows) - unexpected} as expected, "
                 f"{unexpected} not; {cached} runs from cached builds")
    return "\n".join(lines)
