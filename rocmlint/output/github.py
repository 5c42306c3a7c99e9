"""GitHub Actions workflow commands: one ``::warning``/``::error`` annotation per finding.

    ::warning file=src/a.cu,line=3,col=5,endLine=3,endColumn=14,title=ROC201 (warp-size-32)::message

Property values escape ``%``, ``\\r``, ``\\n``, ``:`` and ``,``; the message escapes
``%``, ``\\r`` and ``\\n`` (the escaping of the GitHub Actions toolkit). Engine errors
(ROC001 parse error, ROC002 unreadable file) and error-severity rules are ``::error``,
note-severity rules ``::notice``. Columns are characters, as GitHub counts them.
"""
from __future__ import annotations

from ..model import Applicability, Finding, Severity
from ..registry import ENGINE_CODES


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(f: Finding) -> str:
    if f.code in ENGINE_CODES or f.severity is Severity.ERROR:
        kind = "error"
    elif f.severity is Severity.NOTE:
        kind = "notice"
    else:
        kind = "warning"
    props = [("file", f.path)]
    if f.line >= 1:
        props.append(("line", str(f.line)))
        if f.column >= 1:
            props.append(("col", str(f.column)))
        if f.end_line >= f.line:
            props.append(("endLine", str(f.end_line)))
            if f.column >= 1 and f.end_column >= 1 and (f.end_line > f.line or f.end_column >= f.column):
                props.append(("endColumn", str(f.end_column)))
    props.append(("title", f"{f.code} ({f.name})" if f.name else f.code))
    message = f.message
    if f.fix is not None and f.fix.edits and f.fix.applicability is not Applicability.DISPLAY_ONLY:
        how = "--fix" if f.fix.applicability is Applicability.SAFE else "--fix --unsafe-fixes"
        message += f"\nFix ({how}): {f.fix.title}" if f.fix.title else f"\nFixable with {how}."
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{kind} {rendered}::{escape_data(message)}"


def render(findings: list[Finding]) -> str:
    return "".join(command(f) + "\n" for f in findings)
