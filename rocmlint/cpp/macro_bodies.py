"""Where a ``#define``'s body is compiled: where the macro is expanded.

PTX or a warp intrinsic inside a generator macro (``#define DEFINE_LOAD(T, ty) ... asm(...)``)
is compiled only where the macro is expanded. When every expansion the project can see lies
in code the AMD build skips (``#if __CUDA_ARCH__ >= 900 ... DEFINE_LOAD(float, f32) ...``),
the body is NVIDIA-only too, though the ``#define`` itself sits outside any ``#if``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, KeysView

from .preprocessor import define_parts, directives

# Directives that name a macro without expanding it.
_NAMING_ONLY = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "undef", "define"})


@dataclass(frozen=True)
class MacroBody:
    name: str
    first: int  # 0-based lines of the whole #define, continuations included
    last: int
    function_like: bool


class MacroBodies:
    """The multi-line ``#define``s of one file and the lines that expand each."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.bodies: list[MacroBody] = []
        self._naming_lines: set[int] = set()
        for first, last, kind, rest in directives(source):
            if kind in _NAMING_ONLY:
                self._naming_lines.update(range(first, last + 1))
            parts = define_parts(rest) if kind == "define" else None
            if parts is not None and parts[2]:
                self.bodies.append(MacroBody(parts[0], first, last, parts[1] is not None))
        self._by_line = {line: body for body in self.bodies for line in range(body.first, body.last + 1)}

    def lines(self) -> "KeysView[int]":
        """Every line inside a multi-line ``#define``."""
        return self._by_line.keys()

    def body_at(self, line: int) -> MacroBody | None:
        return self._by_line.get(line)

    def expansions(self, body: MacroBody, line_of: Callable[[int], int],
                   in_code: Callable[[int], bool]) -> list[int]:
        """Lines that expand ``body``'s macro: outside directives that only name it, and
        outside its own definition (lines inside another macro's body count: that macro
        expands it)."""
        call = r"\s*\(" if body.function_like else ""
        found: list[int] = []
        for m in re.finditer(rb"\b" + re.escape(body.name.encode()) + call.encode(), self.source):
            line = line_of(m.start())
            if body.first <= line <= body.last or not in_code(m.start()):
                continue
            if line in self._naming_lines and self._by_line.get(line) is None:
                continue  # #ifdef NAME, #undef NAME
            found.append(line)
        return found


def mentioned_in(name: str, data: bytes) -> bool:
    """Whether another file's text names the macro at all (a possible expansion there)."""
    return re.search(rb"\b" + re.escape(name.encode()) + rb"\b", data) is not None


def argument_spans(source: bytes, open_paren: int, in_code: Callable[[int], bool]) -> list[tuple[int, int]] | None:
    """The byte spans of a macro invocation's arguments, its ``(`` at ``open_paren``: split at
    commas outside nested parentheses, comments and literals (None: no closing parenthesis)."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, open_paren + 1
    for m in re.finditer(rb"[(),]", source[open_paren:]):
        at = open_paren + m.start()
        if not in_code(at):
            continue
        char = m.group(0)
        if char == b"(":
            depth += 1
        elif char == b")":
            depth -= 1
            if depth == 0:
                spans.append((start, at))
                return spans
        elif depth == 1:
            spans.append((start, at))
            start = at + 1
    return None
