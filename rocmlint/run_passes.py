"""The passes over a whole run's results (check mode), after every file is linted: generated
copies (``twins``) and headers that go with rewrite-only files (``rewrite_headers``).

Both read only the results and the files that have findings, so their outcome is a function of
each result's file contents and stored key (``FileResult.cache_stamp``). A warm run whose every
result came from the cache gets the outcome the last run stored for the same stamps, instead of
reading hundreds of files again (a tenth of a warm run on CUTLASS).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .model import finding_from_dict, finding_to_dict

if TYPE_CHECKING:
    from .engine import FileResult


def join_results(results: list["FileResult"], cache_dir: Path | None) -> None:
    """Apply the run-wide passes to ``results`` (in place), from the memo where it holds."""
    if not any(r.findings for r in results):
        return  # both passes only move or drop findings (and a clean file's hook run imports neither)
    from .cache import build_key, save_json
    from .rewrite_headers import fold_rewrite_headers
    from .twins import drop_generated_copies

    key = _stamps_key(results) if cache_dir is not None else None
    memo = cache_dir / f"passes-{build_key()}.json" if cache_dir is not None else None
    if key is not None and memo is not None:
        stored = _changed(_load(memo), key, {str(r.path): r for r in results})
        if stored is not None:
            for result, findings in stored:
                result.findings = findings
            return
    before = [(r.findings, len(r.findings)) for r in results]
    drop_generated_copies(results)  # a generated copy's findings stand once, on the file pasted into it
    fold_rewrite_headers(results)  # a header only rewrite-only files include goes with them
    if key is None or memo is None:
        return
    changed = {str(r.path): [finding_to_dict(f) for f in r.findings]
               for r, (findings, count) in zip(results, before) if r.findings is not findings or len(findings) != count}
    save_json(memo, "passes-*.json", {"key": key, "changed": changed})


def _stamps_key(results: list["FileResult"]) -> str | None:
    """One digest of every result's path and stamp; None where a result has none (not cached)."""
    digest = hashlib.blake2b(digest_size=16)
    for path, stamp in sorted((str(r.path), r.cache_stamp) for r in results):
        if not stamp:
            return None
        digest.update(f"{path}\0{stamp}\n".encode())
    return digest.hexdigest()


def _changed(stored: dict, key: str, by_path: dict[str, "FileResult"]) -> list | None:
    """(result, its findings after the passes) as stored for ``key``; None where the memo is
    for other results or unreadable (the passes run)."""
    if stored.get("key") != key:
        return None
    try:
        return [(by_path[path], [finding_from_dict(d) for d in findings])
                for path, findings in stored["changed"].items()]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _load(memo: Path) -> dict:
    try:
        with open(memo, encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}
