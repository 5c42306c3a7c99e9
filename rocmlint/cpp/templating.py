"""Branches of code generators' templates (Jinja ``{% if is_rocm %}``) inside C++ sources.

Projects that generate kernels from templates (FBGEMM's codegen) pick the platform in the
template language, not with ``#if``: ``{%- if is_rocm %} ... {%- else %} ... {%- endif %}``.
Lines in a branch taken only when a ROCm gate name is true were written for AMD.
"""
from __future__ import annotations

import re
from typing import Iterable

_TAG = re.compile(rb"\{%-?\s*(if|elif|else|endif)\b(.*?)-?%\}")
_TERM_SPLIT = re.compile(r"\s+and\s+")


def amd_only_lines(source: bytes, gate_names: Iterable[str]) -> set[int]:
    """0-based lines inside template branches that only a ROCm build takes."""
    if b"{%" not in source:
        return set()
    gates = set(gate_names)
    out: set[int] = set()
    # Per open {% if %}: (AMD-only branch open since line, whether the else is AMD-only).
    stack: list[tuple[int, bool]] = []
    line = 0
    pos = 0
    for match in _TAG.finditer(source):
        line += source.count(b"\n", pos, match.start())
        pos = match.start()
        kind = match.group(1).decode()
        condition = match.group(2).decode("utf-8", "replace").strip()
        if kind in ("elif", "else", "endif") and stack:
            opened, _ = stack[-1]
            if opened >= 0:
                out.update(range(opened + 1, line))
        if kind == "if":
            stack.append((line if _requires_gate(condition, gates) else -1, _negates_gate(condition, gates)))
        elif kind == "elif" and stack:
            stack[-1] = (line if _requires_gate(condition, gates) else -1, False)
        elif kind == "else" and stack:
            stack[-1] = (line if stack[-1][1] else -1, False)
        elif kind == "endif" and stack:
            stack.pop()
    return out


def _requires_gate(condition: str, gates: set[str]) -> bool:
    """``is_rocm`` or ``is_rocm and X``: false whenever the gate is."""
    if " or " in f" {condition} " or "(" in condition:
        return False
    return any(term in gates for term in _TERM_SPLIT.split(condition))


def _negates_gate(condition: str, gates: set[str]) -> bool:
    """``not is_rocm``: its ``else`` is taken only with the gate."""
    match = re.fullmatch(r"not\s+(\w+)", condition)
    return match is not None and match.group(1) in gates
