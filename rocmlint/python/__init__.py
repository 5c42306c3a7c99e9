"""The Python half: stdlib ``ast`` parsing, gate analysis, NVIDIA view.

``ast`` rather than libcst: measured on the torch package files the prefilter passes,
ast parses 3.2 MB/s and libcst 0.38 MB/s (plus ~0.4 s to import), which cannot meet the
"within 3x of ruff" goal; ast's column offsets are UTF-8 byte offsets, which is what spans
are. Large files are parsed as a skeleton around the anchors (``skeleton.py``).
"""
from __future__ import annotations

import ast
import sys
import warnings

from ..lazy_re import lazy_compile
from ..model import ParseFailure
from ..model import LineIndex, Span
from .context import PythonContext
from .gates import GateEvaluator

__all__ = ["LANGUAGE", "PythonContext", "PythonLanguage", "parse"]


def parse(source: bytes) -> ast.Module:
    """Parse a UTF-8 buffer; raise ParseFailure with the error's span."""
    # Parse the decoded text: the buffer is UTF-8 whatever a coding cookie says.
    text = source.decode("utf-8", errors="surrogateescape")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            return ast.parse(text)
    except SyntaxError as exc:
        raise ParseFailure(_describe(exc, text), _error_span(source, exc)) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseFailure(str(exc) or type(exc).__name__) from None


# Statements this interpreter may not know: PEP 695 (`type X = ...`, `def f[T](...)`, Python 3.12)
# and PEP 758 (`except A, B:` without parentheses, Python 3.14).
_NEWER_SYNTAX = (((3, 12), lazy_compile(r"^\s*(?:type\s+\w+\s*(?:\[[^\]]*\])?\s*=|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)")),
                 ((3, 14), lazy_compile(r"^\s*except\s+\w[\w.]*\s*,")))


def _describe(exc: SyntaxError, text: str) -> str:
    where = f" (line {exc.lineno})" if exc.lineno else ""
    lines = text.splitlines()
    line = lines[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(lines) else ""
    for version, statement in _NEWER_SYNTAX:
        if sys.version_info < version and statement.match(line):
            needed = ".".join(map(str, version))
            return (f"{exc.msg}{where}: syntax of Python {needed}, which this interpreter "
                    f"({sys.version_info.major}.{sys.version_info.minor}) cannot read; run rocmlint with Python {needed}+")
    return f"{exc.msg}{where}"


def _error_span(source: bytes, exc: SyntaxError) -> Span | None:
    if not exc.lineno:
        return None
    lines = LineIndex(source)
    line = min(max(exc.lineno, 1), lines.line_count)
    column = max(exc.offset or 1, 1)
    try:
        start = lines.offset(line, column)
    except (IndexError, ValueError):
        start = lines.line_start(line - 1)
    start = min(start, lines.line_end(line - 1))
    return Span(start, start)


class PythonLanguage:
    name = "python"

    def make_context(self, path: str, source: bytes, settings, anchors=()) -> PythonContext:
        from .skeleton import skeleton

        reduced = skeleton(source, list(anchors)) if anchors else None
        if reduced is not None:
            try:
                return PythonContext(path, source, settings, parse(reduced))
            except ParseFailure:
                pass  # the skeleton misread a block: parse the whole file
        return PythonContext(path, source, settings, parse(source))

    def syntax_errors(self, source: bytes, path: str) -> int:
        """1 when the module does not parse; else the syntax errors tree-sitter sees in the
        kernel sources its strings hold (a fix inside a kernel must not add any)."""
        try:
            tree = parse(source)
        except ParseFailure:
            return 1
        from .embedded import has_trigger

        if not has_trigger(source):
            return 0
        from ..config import Settings
        from ..cpp import LANGUAGE as CPP
        from .embedded import kernel_texts

        texts = kernel_texts(PythonContext(path, source, Settings(), tree))
        return sum(CPP.syntax_errors(text, path + ".cu") for text in texts)

    def new_syntax_errors(self, original: bytes, fixed: bytes, path: str, settings) -> int:
        """Syntax errors a fix adds: a module that stops parsing, or errors in a kernel
        string counted in each build's view (C++'s count: a gate copies lines that never
        parsed into both branches)."""
        if self.syntax_errors(fixed, path) and not self.syntax_errors(original, path):
            try:
                parse(fixed)
            except ParseFailure:
                return 1
        from ..cpp import LANGUAGE as CPP
        from .embedded import kernel_texts

        def texts(source: bytes) -> list[bytes]:
            try:
                return kernel_texts(PythonContext(path, source, settings, parse(source)))
            except ParseFailure:
                return []

        before, after = texts(original), texts(fixed)
        if len(before) != len(after):
            return max(1, len(after) - len(before))
        return sum(CPP.new_syntax_errors(a, b, path + ".cu", settings) for a, b in zip(before, after))

    def nvidia_view(self, source: bytes, path: str, settings) -> bytes:
        from .embedded import fold_kernel_gates, has_trigger
        from .view import nvidia_dump

        try:
            context = self.make_context(path, source, settings)
        except ParseFailure:
            return b"<unparsable>\n" + source
        # Resolve imports before folding mutates the tree.
        context.aliases  # noqa: B018
        if has_trigger(source):
            fold_kernel_gates(context)
        gates = GateEvaluator(context.gates.gate_names, context.qualname)
        return nvidia_dump(context.tree, gates)


LANGUAGE = PythonLanguage()
