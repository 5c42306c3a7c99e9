"""Branches of code generators' templates (Jinja ``{% if is_rocm %}``) inside C++ sources.

Projects that generate kernels from templates (FBGEMM's codegen) pick the platform in the
template language, not with ``#if``: ``{%- if is_rocm %} ... {%- else %} ... {%- endif %}``.
A branch taken only when a ROCm gate name is false is a gate like ``#ifndef USE_ROCM``:
the AMD build never compiles it.
"""
from __future__ import annotations

from typing import Iterable

from ..lazy_re import lazy_compile

_TAG = lazy_compile(rb"\{%-?\s*(if|elif|else|endif)\b(.*?)-?%\}")
_TERM_SPLIT = lazy_compile(r"\s+and\s+")
_NEGATED = lazy_compile(r"not\s+(\w+)")


def nvidia_only_lines(source: bytes, gate_names: Iterable[str]) -> set[int]:
    """0-based lines inside template branches that a ROCm build never takes."""
    if b"{%" not in source:
        return set()
    gates = set(gate_names)
    out: set[int] = set()
    # Per open {% if %}: (line the NVIDIA-only branch opened on or -1, whether an else
    # would be NVIDIA-only, whether an earlier branch already required the gate).
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
            stack.append((line if _requires_no_gate(condition, gates) else -1, _is_gate(condition, gates)))
        elif kind == "elif" and stack:
            stack[-1] = (line if _requires_no_gate(condition, gates) else -1, False)
        elif kind == "else" and stack:
            stack[-1] = (line if stack[-1][1] else -1, False)
        elif kind == "endif" and stack:
            stack.pop()
    return out


def _terms(condition: str) -> list[str] | None:
    """The ``and``-ed terms of a condition; None when it has ``or`` or parentheses."""
    if " or " in f" {condition} " or "(" in condition:
        return None
    return _TERM_SPLIT.split(condition)


def _requires_no_gate(condition: str, gates: set[str]) -> bool:
    """``not is_rocm`` or ``not is_rocm and X``: false whenever the gate is true."""
    terms = _terms(condition)
    return terms is not None and any((m := _NEGATED.fullmatch(t)) is not None and m.group(1) in gates for t in terms)


def _is_gate(condition: str, gates: set[str]) -> bool:
    """``is_rocm`` alone: its ``else`` is taken only without the gate."""
    return condition in gates
