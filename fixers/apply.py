"""Apply fixes: choose non-overlapping edits, re-lint to a fixpoint, then prove and write.

A fixed buffer is only handed back when it re-parses with no new syntax errors and its
NVIDIA view (``Language.nvidia_view``) equals the original's: the NVIDIA build must not
see a single changed token.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from rocmlint.model import Applicability, Edit, Finding, apply_edits

MAX_ROUNDS = 10


class FixRejected(Exception):
    """The fixed file failed a check; nothing is written."""


@dataclass
class FixOutcome:
    buffer: bytes
    fixed: int = 0  # findings whose fix was applied
    findings: list[Finding] = field(default_factory=list)  # what remains after fixing


def applicable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    if fix is None or not fix.edits:
        return False
    if any(getattr(edit, "unbuilt", False) for edit in fix.edits):
        return False  # a stand-in for a fix built only on demand (python_gate.PendingEdit)
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def select_edits(findings: list[Finding], unsafe: bool, newline: str = "\n") -> tuple[list[Edit], int]:
    """Edits of every applicable fix that does not clash with an earlier one.

    An edit identical to one already chosen (two fixes inserting the same gate
    definition) is shared, not duplicated; a fix with any clashing edit waits for the
    next round, when it is re-derived from the updated file.
    """
    chosen: list[Edit] = []
    used = 0
    for finding in sorted(findings, key=Finding.sort_key):
        fix = finding.fix
        if fix is None or not applicable(finding, unsafe):
            continue
        new_edits: list[Edit] = []
        clash = False
        for edit in fix.edits:
            if edit in chosen or edit in new_edits:
                continue
            if any(_clash(edit, other) for other in chosen + new_edits):
                clash = True
                break
            new_edits.append(edit)
        if clash:
            continue
        chosen.extend(new_edits)
        used += 1
    if newline != "\n":
        chosen = [Edit(e.span, _to_newline(e.content, newline)) for e in chosen]
    return chosen, used


def _clash(a: Edit, b: Edit) -> bool:
    if a.span.start == a.span.end and b.span.start == b.span.end:
        return a.span.start == b.span.start  # two insertions at one point: order unknown
    return a.span.overlaps(b.span)


def _to_newline(text: str, newline: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", newline)


def fix_to_fixpoint(
    buffer: bytes,
    analyse: Callable[[bytes], list[Finding]],
    *,
    unsafe: bool,
    newline: str,
    syntax_errors: Callable[[bytes], int],
    nvidia_view: Callable[[bytes], bytes],
) -> FixOutcome:
    """Fix ``buffer`` round after round until no applicable fix is left (or raise)."""
    original = buffer
    findings = analyse(buffer)
    fixed = 0
    for _ in range(MAX_ROUNDS):
        edits, used = select_edits(findings, unsafe, newline)
        if not edits:
            break
        buffer = apply_edits(buffer, edits)
        fixed += used
        findings = analyse(buffer)
    else:
        if select_edits(findings, unsafe, newline)[0]:
            raise FixRejected(f"fixes did not converge after {MAX_ROUNDS} rounds")
    if buffer != original:
        before, after = syntax_errors(original), syntax_errors(buffer)
        if after > before:
            raise FixRejected(f"the fixed file does not parse ({after} syntax errors, {before} before)")
        if nvidia_view(buffer) != nvidia_view(original):
            raise FixRejected("the fix would change the code the NVIDIA build sees")
    return FixOutcome(buffer=buffer, fixed=fixed, findings=findings)
