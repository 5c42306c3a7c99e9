"""Apply fixes: choose non-overlapping edits, re-lint to a fixpoint, then prove and write.

A fixed buffer is only handed back when it re-parses with no new syntax errors (in any
build's view, where the language can tell: copies of an unparsable line are not new) and its
NVIDIA view (``Language.nvidia_view``) equals the original's: the NVIDIA build must not
see a single changed token.
"""
from __future__ import annotations

import bisect
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
    next round, when it is re-derived from the updated file. Chosen edits never overlap,
    so each new edit is checked against its neighbours in start order only.
    """
    chosen = _ChosenEdits()
    used = 0
    for finding in sorted(findings, key=Finding.sort_key):
        fix = finding.fix
        if fix is None or not applicable(finding, unsafe):
            continue
        new_edits: list[Edit] = []
        merges: list[tuple[Edit, Edit]] = []  # (chosen edit, what it becomes)
        clash = False
        for edit in fix.edits:
            if edit in chosen or edit in new_edits:
                continue
            if any(_clash(edit, other) for other in new_edits):
                clash = True
                break
            clashing = chosen.clashing(edit)
            merged = _merged(clashing[0], edit) if len(clashing) == 1 else None
            if clashing and merged is None:
                clash = True
                break
            if merged is not None:
                merges.append((clashing[0], merged))
            else:
                new_edits.append(edit)
        if clash or len({old for old, _ in merges}) != len(merges):
            continue
        for old, merged in merges:
            chosen.replace(old, merged)
        for edit in new_edits:
            chosen.add(edit)
        used += 1
    edits = chosen.in_order()
    if newline != "\n":
        edits = [Edit(e.span, _to_newline(e.content, newline)) for e in edits]
    return edits, used


class _ChosenEdits:
    """Non-overlapping edits kept sorted by span, for clash checks in logarithmic time."""

    def __init__(self) -> None:
        self._edits: list[Edit] = []
        self._keys: list[tuple[int, int]] = []
        self._set: set[Edit] = set()

    def __contains__(self, edit: Edit) -> bool:
        return edit in self._set

    def add(self, edit: Edit) -> None:
        at = bisect.bisect_right(self._keys, (edit.span.start, edit.span.end))
        self._keys.insert(at, (edit.span.start, edit.span.end))
        self._edits.insert(at, edit)
        self._set.add(edit)

    def remove(self, edit: Edit) -> None:
        at = self._edits.index(edit, bisect.bisect_left(self._keys, (edit.span.start, edit.span.end)))
        del self._edits[at], self._keys[at]
        self._set.discard(edit)

    def replace(self, old: Edit, new: Edit) -> None:
        self.remove(old)
        self.add(new)

    def clashing(self, edit: Edit) -> list[Edit]:
        """The chosen edits ``edit`` clashes with."""
        found = []
        at = bisect.bisect_left(self._keys, (edit.span.start, -1))
        # the chosen edits before ``at`` end in start order (they are disjoint): only the
        # last ones can reach past edit.start
        back = at - 1
        while back >= 0 and (self._edits[back].span.end > edit.span.start or
                             self._edits[back].span.start == edit.span.start):
            if _clash(edit, self._edits[back]):
                found.append(self._edits[back])
            back -= 1
        forward = at
        while forward < len(self._edits) and self._edits[forward].span.start <= edit.span.end:
            if _clash(edit, self._edits[forward]):
                found.append(self._edits[forward])
            forward += 1
        return found

    def in_order(self) -> list[Edit]:
        return list(self._edits)


def _merged(chosen: Edit, edit: Edit) -> Edit | None:
    """One edit doing what both do, where the edits know how (gate blocks on adjacent lines)."""
    merge = getattr(chosen, "merge", None)
    return merge(edit) if merge is not None else None


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
    new_syntax_errors: Callable[[bytes, bytes], int] | None = None,
) -> FixOutcome:
    """Fix ``buffer`` round after round until no applicable fix is left (or raise)."""
    original = buffer
    findings = analyse(buffer)
    fixed = 0
    before_errors, before_view = 0, b""
    for _ in range(MAX_ROUNDS):
        edits, used = select_edits(findings, unsafe, newline)
        if not edits:
            break
        if buffer is original:
            # measured while the original's parse is the one the language keeps
            before_errors, before_view = syntax_errors(original), nvidia_view(original)
        buffer = apply_edits(buffer, edits)
        fixed += used
        findings = analyse(buffer)
    else:
        if select_edits(findings, unsafe, newline)[0]:
            raise FixRejected(f"fixes did not converge after {MAX_ROUNDS} rounds")
    if buffer != original:
        before, after = before_errors, syntax_errors(buffer)
        # more errors in total may be copies of lines that never parsed: then ask the
        # language whether any build's view of the file got worse
        if after > before and (new_syntax_errors is None or new_syntax_errors(original, buffer) > 0):
            raise FixRejected(f"the fixed file does not parse ({after} syntax errors, {before} before)")
        if nvidia_view(buffer) != before_view:
            raise FixRejected("the fix would change the code the NVIDIA build sees")
    return FixOutcome(buffer=buffer, fixed=fixed, findings=findings)
