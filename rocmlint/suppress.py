"""Inline suppressions, one syntax set for both languages.

``# noqa`` / ``# noqa: ROC101,ROC102`` (flake8 and ruff compatible), ``// NOLINT`` /
``// NOLINT(ROC201)`` / ``// NOLINTNEXTLINE(ROC201)`` (clang-tidy), and
``rocmlint: ignore[ROC201]`` after either comment marker.
"""
from __future__ import annotations

import re

from .lazy_re import lazy_compile

_CODE_LIST = r"[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*"
_SAME_LINE = lazy_compile(
    rf"(?:#|//|/\*)\s*(?:noqa(?::\s*(?P<noqa>{_CODE_LIST}))?"
    rf"|NOLINT(?!NEXTLINE)(?:\((?P<nolint>[^)]*)\))?"
    rf"|rocmlint:\s*ignore(?:\[(?P<ignore>[^\]]*)\])?)",
    re.IGNORECASE,
)
_NEXT_LINE = lazy_compile(r"(?://|/\*|#)\s*NOLINTNEXTLINE(?:\((?P<codes>[^)]*)\))?")

ALL: frozenset[str] = frozenset()  # the empty set means "every code"


def _codes(text: str | None) -> frozenset[str]:
    if not text:
        return ALL
    return frozenset(c.strip().upper() for c in re.split(r"[\s,]+", text) if c.strip())


def suppressed_codes(line: str, previous_line: str = "") -> list[frozenset[str]]:
    """Suppression sets that apply to ``line`` (empty list: none; ALL: every code)."""
    found = []
    if "noqa" in line.lower() or "NOLINT" in line or "rocmlint" in line:
        for m in _SAME_LINE.finditer(line):
            found.append(_codes(m.group("noqa") or m.group("nolint") or m.group("ignore")))
    if "NOLINTNEXTLINE" in previous_line:
        for m in _NEXT_LINE.finditer(previous_line):
            found.append(_codes(m.group("codes")))
    return found


def is_suppressed(code: str, sets: list[frozenset[str]]) -> bool:
    return any(not s or any(code.startswith(c) for c in s) for s in sets)


def with_suppression(line: str, code: str, marker: str) -> str:
    """``line`` with a comment that suppresses ``code`` (``marker``: "#" or "//"): the code
    joins a list the line already has, else a comment is appended (before a trailing
    backslash, which must stay last: a block comment)."""
    for m in _SAME_LINE.finditer(line):
        for group in ("noqa", "nolint", "ignore"):
            if m.group(group):
                at = m.end(group)
                return f"{line[:at]}, {code}{line[at:]}"
    body = line.rstrip()
    if body.endswith("\\"):
        at = len(body) - 1
        return f"{line[:at].rstrip()} /* NOLINT({code}) */ {line[at:]}"
    comment = f"# noqa: {code}" if marker == "#" else f"// NOLINT({code})"
    return f"{body}  {comment}"
