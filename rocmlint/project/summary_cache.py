"""Per-file summaries cached by file stats: one mechanism for the C++ and Python parts of
the project model. A warm run stats the files and re-reads only those whose (mtime, size)
moved; the cache is written atomically, and a read-only checkout simply has none."""
from __future__ import annotations

import json
import os
from typing import Any, Callable

from ..source import write_replacing

# (path relative to the root, content or None when unreadable) -> JSON-able summary, or None
# to leave the file out.
Summarise = Callable[[str, "bytes | None"], Any]


def cached_summaries(cache_file: str | None, root: str, stats: dict[str, tuple[int, int]],
                     summarise: Summarise, stale_prefix: str = "", known: dict[str, Any] | None = None) -> dict[str, Any]:
    """rel -> summary for every file of ``stats`` (rel -> (mtime_ns, size)). ``known``: summaries
    made already (by the workers of a big run, from the same bytes). With ``stale_prefix``,
    other cache files of that name in the folder are removed (older builds)."""
    entries = _load(cache_file, root)
    known = known or {}
    out: dict[str, Any] = {}
    fresh: dict[str, list] = {}
    dirty = False
    for rel, (mtime, size) in stats.items():
        entry = entries.get(rel)
        if entry is not None and entry[0] == mtime and entry[1] == size:
            data = entry[2]
        elif rel in known:
            dirty = True
            data = known[rel]
        else:
            dirty = True
            try:
                with open(os.path.join(root, rel), "rb") as fh:
                    content: bytes | None = fh.read()
            except OSError:
                content = None
            data = summarise(rel, content)
        if data is None:
            continue
        out[rel] = data
        fresh[rel] = [mtime, size, data]
    if cache_file is not None and (dirty or len(fresh) != len(entries)):
        _save(cache_file, {"root": root, "files": fresh}, stale_prefix)
    return out


def _load(cache_file: str | None, root: str) -> dict[str, list]:
    if cache_file is None:
        return {}
    try:
        with open(cache_file, encoding="utf-8") as fh:
            loaded = json.load(fh)
    except (OSError, ValueError):
        return {}
    if isinstance(loaded, dict) and loaded.get("root") == root and isinstance(loaded.get("files"), dict):
        return loaded["files"]
    return {}


def _save(path: str, data: dict, stale_prefix: str) -> None:
    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        if stale_prefix:
            for old in os.listdir(folder):
                if old.startswith(stale_prefix) and old.endswith(".json") and os.path.join(folder, old) != path:
                    os.unlink(os.path.join(folder, old))
        write_replacing(path, lambda fh: json.dump(data, fh, separators=(",", ":")))
    except OSError:
        pass  # read-only checkout: no summary cache
