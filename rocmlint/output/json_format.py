"""The JSON format of design.md section 5: a list of findings, 1-based positions."""
from __future__ import annotations

import json

from ..model import Finding


def finding_json(f: Finding) -> dict:
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability.value,
            "title": f.fix.title,
            "edits": [
                {"line": l, "column": c, "end_line": el, "end_column": ec, "content": e.content}
                for (l, c, el, ec), e in zip(f.edit_positions, f.fix.edits)
            ],
        }
    return {
        "code": f.code, "name": f.name, "message": f.message, "path": f.path,
        "line": f.line, "column": f.column, "end_line": f.end_line, "end_column": f.end_column,
        "severity": f.severity.value, "fix": fix, "evidence": list(f.evidence), "mode": f.mode,
        "unknown_macros": list(f.unknown_macros),
        **({"witness": {"status": f.witness[0], "detail": f.witness[1]}} if f.witness is not None else {}),
    }


def render(findings: list[Finding]) -> str:
    return json.dumps([finding_json(f) for f in findings], indent=2) + "\n"
