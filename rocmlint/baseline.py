"""Baselines: adopt rocmlint on a repository with existing findings.

``rocmlint check --write-baseline rocmlint-baseline.json`` records every current finding;
``rocmlint check --baseline rocmlint-baseline.json`` then reports only new ones.

A finding is matched by rule code, path and content fingerprint (``rocmlint.fingerprint``,
the same recipe as SARIF ``partialFingerprints``: the normalised line text plus an
occurrence index, no line number), so moving code up or down, re-indenting it or editing
other lines does not resurrect it; editing the flagged line itself does. Matching counts:
N identical entries absorb N findings, not N+1.

Paths are stored relative to the baseline file's folder, so the baseline works from any
working directory. Messages are stored for humans reading the file, not matched.
Internal errors (ROC003) are never recorded nor absorbed: a crash is not a known finding.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from .config import ConfigError
from .fingerprint import fingerprints
from .model import Finding
from .registry import INTERNAL_ERROR

VERSION = 1


def _path_key(baseline: Path):
    base = baseline.resolve().parent
    cwd = Path.cwd()

    def key(f: Finding) -> str:
        full = Path(f.path) if os.path.isabs(f.path) else cwd / f.path
        try:
            return Path(os.path.relpath(full, base)).as_posix()
        except ValueError:  # other drive (Windows)
            return full.as_posix()

    return key


def _entries(findings: list[Finding], baseline: Path) -> list[dict]:
    key = _path_key(baseline)
    paths = [key(f) for f in findings]
    prints = fingerprints(findings, path_of=lambda f: key(f))
    return [{"code": f.code, "path": p, "fingerprint": fp, "message": f.message}
            for f, p, fp in zip(findings, paths, prints)]


def write_baseline(findings: list[Finding], path: Path) -> None:
    path = Path(path)
    findings = [f for f in findings if f.code != INTERNAL_ERROR]  # a crash is never "known"
    entries = sorted(_entries(findings, path), key=lambda e: (e["path"], e["code"], e["fingerprint"], e["message"]))
    data = {"version": VERSION, "tool": "rocmlint", "findings": entries}
    try:
        path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write baseline {path}: {exc.strerror or exc}") from None


def read_baseline(path: Path) -> Counter:
    """Multiset of (code, path, fingerprint) recorded in a baseline file."""
    path = Path(path)
    hint = f"(create one with `rocmlint check --write-baseline {path}`)"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"baseline file {path} does not exist {hint}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read baseline {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"baseline {path} is not valid JSON: {exc} {hint}") from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise ConfigError(f"baseline {path} is malformed: expected an object with a 'findings' list {hint}")
    if data.get("version") != VERSION:
        raise ConfigError(f"baseline {path} has unsupported version {data.get('version')!r} "
                          f"(this rocmlint writes version {VERSION}) {hint}")
    recorded: Counter = Counter()
    for number, entry in enumerate(data["findings"]):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("code", "path", "fingerprint")):
            raise ConfigError(f"baseline {path} is malformed: entry {number} needs string "
                              f"'code', 'path' and 'fingerprint' {hint}")
        recorded[(entry["code"], entry["path"], entry["fingerprint"])] += 1
    return recorded


def filter_baseline(findings: list[Finding], path: Path) -> list[Finding]:
    """The findings not recorded in the baseline (each entry absorbs one finding)."""
    recorded = read_baseline(path)
    kept = []
    for finding, entry in zip(findings, _entries(findings, Path(path))):
        key = (entry["code"], entry["path"], entry["fingerprint"])
        if recorded[key] > 0 and finding.code != INTERNAL_ERROR:
            recorded[key] -= 1
        else:
            kept.append(finding)
    return kept
