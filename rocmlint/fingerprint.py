"""Content fingerprints of findings, shared by SARIF ``partialFingerprints`` and baselines.

A fingerprint must survive unrelated edits: it hashes the rule code, the file's path and
the finding's first source line with its whitespace collapsed (indentation and spacing
changes do not matter), never the line number, so inserting or deleting lines above a
finding leaves it unchanged. Identical lines are told apart by an occurrence index: the
``n``-th finding of a rule on an identical line of the same file gets ``:n`` (1-based, in
file order), like GitHub's own ``primaryLocationLineHash``.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from typing import Callable, Sequence

from .model import Finding

# Key of our entry in SARIF ``partialFingerprints``; bump the version if the recipe changes.
SARIF_KEY = "rocmlint/v1"


def normalise_line(text: str) -> str:
    """The line as the fingerprint sees it: whitespace runs collapsed, ends stripped."""
    return " ".join(text.split())


def line_hash(code: str, path: str, line_text: str) -> str:
    data = "\0".join((code, path, normalise_line(line_text))).encode("utf-8", errors="surrogateescape")
    return hashlib.sha256(data).hexdigest()[:20]


def fingerprints(findings: Sequence[Finding], path_of: Callable[[Finding], str] | None = None) -> list[str]:
    """One fingerprint per finding, in the order given.

    Occurrence indexes are counted in file order (line, column), whatever order the
    findings come in. ``path_of`` picks the path that is hashed (default: ``finding.path``).
    """
    path_of = path_of or (lambda f: f.path)
    order = sorted(range(len(findings)),
                   key=lambda i: (path_of(findings[i]), findings[i].line, findings[i].column,
                                  findings[i].code, findings[i].end_line, findings[i].end_column))
    seen: Counter[str] = Counter()
    result = [""] * len(findings)
    for i in order:
        f = findings[i]
        digest = line_hash(f.code, path_of(f), f.source_line)
        seen[digest] += 1
        result[i] = f"{digest}:{seen[digest]}"
    return result
