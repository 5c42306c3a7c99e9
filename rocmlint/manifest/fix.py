"""Moving a requirement of `[project] dependencies` into the `cuda` extra (pyproject.toml)."""
from __future__ import annotations

import re

from ..lazy_re import lazy_compile
from ..model import Applicability, Edit, Fix, Span
from .model import Dependency
from .text import key_position, table_region

_ALONE_ON_LINE = lazy_compile(r"""[ \t]*(["'])[^"'\n]*\1[ \t]*,?[ \t]*(?:#[^\n]*)?\r?\n""")


def move_to_cuda_extra(ctx, dependency: Dependency) -> Fix | None:
    if dependency.where != "[project] dependencies":
        return None
    text = ctx.located.text
    if not ctx.located._ascii:
        return None  # char and byte offsets differ: keep it simple, no fix
    start, end = dependency.span.start - 1, dependency.span.end + 1
    quote = text[start]
    if quote not in "\"'" or text[end - 1] != quote:
        return None
    insertion = _insertion(text, f"{quote}{text[start + 1:end - 1]}{quote}")
    if insertion is None:
        return None
    edits = (_removal(text, start, end), insertion)
    return Fix(edits, "Move it into the `cuda` extra (a `rocm` extra holds the ROCm builds)", Applicability.UNSAFE)


def _removal(text: str, start: int, end: int) -> Edit:
    line_start = text.rfind("\n", 0, start) + 1
    alone = _ALONE_ON_LINE.match(text, line_start)
    if alone and alone.start(1) == start:
        return Edit(Span(line_start, alone.end()), "")
    after = re.compile(r"\s*,[ \t]*").match(text, end)
    if after:
        return Edit(Span(start, after.end()), "")
    before = re.search(r",\s*$", text[:start])
    return Edit(Span(before.start() if before else start, end), "")


def _insertion(text: str, literal: str) -> Edit | None:
    region = table_region(text, ("project", "optional-dependencies"))
    if region is not None:
        position = key_position(text, "cuda", *region)
        if position is not None:
            bracket = text.find("[", position, region[1])
            if bracket < 0:
                return None
            empty = re.compile(r"\s*\]").match(text, bracket + 1)
            return Edit(Span(bracket + 1, bracket + 1), literal if empty else f"{literal}, ")
        line_end = text.find("\n", region[0])
        at = len(text) if line_end < 0 else line_end + 1
        return Edit(Span(at, at), f"cuda = [{literal}]\n")
    if re.search(r"(?m)^[ \t]*optional-dependencies\b", text):
        return None  # written as dotted keys or an inline table: leave it to the maintainers
    project = table_region(text, ("project",))
    if project is None:
        return None
    block = f"[project.optional-dependencies]\ncuda = [{literal}]\n"
    if project[1] == len(text):
        prefix = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return Edit(Span(len(text), len(text)), prefix + block)
    return Edit(Span(project[1], project[1]), block + "\n")
