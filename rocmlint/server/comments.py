"""The "add a suppression comment" edit: the finding's line with the comment
``rocmlint/suppress.py`` reads (``# noqa: CODE`` in Python and manifests, ``// NOLINT(CODE)``
in C++ and in the CUDA source a Python string holds)."""
from __future__ import annotations

import io
import tokenize

from ..model import Finding, LineIndex
from ..suppress import is_suppressed, suppressed_codes, with_suppression


def suppression_edit(buffer: bytes, language: str, finding: Finding) -> bytes | None:
    """``buffer`` with the finding's line suppressing its code; None when no comment can go
    there (a Python line continued by a backslash)."""
    lines = LineIndex(buffer)
    line0 = finding.line - 1
    if not 0 <= line0 < lines.line_count:
        return None
    start, end = lines.line_start(line0), lines.line_end(line0)
    text = buffer[start:end].decode("utf-8", errors="surrogateescape")
    marker = "//" if language == "cpp" else "#"
    if language == "python":
        if text.rstrip().endswith("\\"):
            return None
        if _ends_inside_string(buffer, line0 + 1):
            marker = "//"  # kernel source in a string: a comment of the kernel's own language
    new_text = with_suppression(text, finding.code, marker)
    if not is_suppressed(finding.code, suppressed_codes(new_text)):
        return None
    return buffer[:start] + new_text.encode("utf-8", errors="surrogateescape") + buffer[end:]


def _ends_inside_string(buffer: bytes, row: int) -> bool:
    """Whether the end of 1-based line ``row`` lies inside a string spanning several lines."""
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    opened: list[int] = []
    try:
        for token in tokenize.tokenize(io.BytesIO(buffer).readline):
            if token.start[0] > row:
                break
            if token.type == tokenize.STRING and token.start[0] <= row < token.end[0]:
                return True
            if token.type == fstring_start:
                opened.append(token.start[0])
            elif token.type == fstring_end and opened:
                if opened.pop() <= row < token.end[0]:
                    return True
    except (tokenize.TokenError, SyntaxError):
        return False
    return bool(opened) and opened[-1] <= row
