"""Rows of a verify report, rendered as text or JSON, and the exit code they imply."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

EXIT_OK, EXIT_FAILED, EXIT_NO_TOOLCHAIN = 0, 1, 2


@dataclass
class Row:
    target: str                       # reference kernel name or user file path
    arch: str                         # gfx target (or sm_XX / "cuda" for --cuda)
    built: bool = False
    wavefront_size: int | None = None
    wavefront_from: str | None = None  # "code-object notes" | "assembly metadata" | "cuda"
    ran: bool | None = None
    passed: bool | None = None
    reasons: list[str] = field(default_factory=list)  # why not built / not run, build notes
    seconds: float = 0.0
    # A build that could not be tried (no nvcc): reported, but not a failure.
    build_skipped: bool = field(default=False, repr=False)

    @property
    def reason(self) -> str | None:
        return "; ".join(self.reasons) or None

    @property
    def failed(self) -> bool:
        return (not self.built and not self.build_skipped) or self.passed is False

    def to_json(self) -> dict:
        return {
            "target": self.target, "arch": self.arch, "built": self.built,
            "wavefront_size": self.wavefront_size, "wavefront_from": self.wavefront_from,
            "build_skipped": self.build_skipped, "ran": self.ran, "passed": self.passed, "reason": self.reason,
            "seconds": round(self.seconds, 2),
        }


def exit_code(rows: list[Row]) -> int:
    return EXIT_FAILED if any(row.failed for row in rows) else EXIT_OK


def render_json(rows: list[Row]) -> str:
    return json.dumps([row.to_json() for row in rows], indent=2)


def _run_cell(row: Row) -> str:
    if not row.built:
        return "-"
    if row.ran is None:
        return "skipped"
    if not row.ran:
        return "error"
    return "PASS" if row.passed else "FAIL"


def render_text(rows: list[Row], header: list[str]) -> str:
    lines = list(header)
    width = max([len(row.target) for row in rows] + [6])
    lines.append(f"{'target':<{width}}  {'arch':<8} {'built':<5} {'wave':>4}  {'wave from':<18} {'run':<7} {'seconds':>7}")
    problems: list[str] = []
    notes: Counter[str] = Counter()
    for row in rows:
        wave = str(row.wavefront_size) if row.wavefront_size else "-"
        built_cell = "yes" if row.built else ("skip" if row.build_skipped else "NO")
        lines.append(f"{row.target:<{width}}  {row.arch:<8} {built_cell:<5} {wave:>4}  "
                     f"{row.wavefront_from or '-':<18} {_run_cell(row):<7} {row.seconds:>7.2f}")
        if row.failed:
            problems.append(f"{row.target} [{row.arch}]: {row.reason}")
        else:
            notes.update(row.reasons)
    for note, count in notes.items():
        lines.append(f"({count}) {note}")
    for problem in problems:
        lines.append(problem.replace("\n", "\n    "))
    built = sum(row.built for row in rows)
    passed = sum(row.passed is True for row in rows)
    failed = sum(row.passed is False for row in rows)
    skipped = sum(row.ran is None for row in rows)
    not_tried = sum(row.build_skipped for row in rows)
    lines.append(f"{len(rows)} builds: {built} built, {len(rows) - built - not_tried} not built, "
                 f"{not_tried} skipped (no compiler); "
                 f"runs: {passed} passed, {failed} failed, {skipped} skipped")
    return "\n".join(lines)
