"""Per-file result cache: keyed by content hash, settings and the rocmlint build.

A re-run stats each file; when size and mtime match the entry, its findings are reused
without reading the file; when only mtime moved, the content hash decides.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
from functools import lru_cache
from pathlib import Path

from . import __version__
from .model import Finding, finding_from_dict, finding_to_dict
from .source import write_replacing

CACHE_DIR = ".rocmlint_cache"


def stat_stamp(stat: os.stat_result) -> str:
    """What a result that read another file depends on: its size and modification time (the
    fact recorded for it, and the value the fact is checked against)."""
    return f"{stat.st_size}:{stat.st_mtime_ns}"


@lru_cache(maxsize=1)
def build_key() -> str:
    """Version plus the state of rocmlint's own source files (editable installs change)."""
    digest = hashlib.sha256(__version__.encode())
    roots = [Path(folder) for name in ("rocmlint", "rocmlint.checks", "rocmlint.fixers")
             for folder in importlib.import_module(name).__path__]
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            st = path.stat()
            digest.update(f"{path}:{st.st_mtime_ns}:{st.st_size}".encode())
    return digest.hexdigest()[:16]


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.file = directory / f"results-{build_key()}.json"
        self.entries: dict[str, list] = {}
        self.dirty = False
        self._holds: dict[str, bool] = {}
        try:
            with open(self.file, encoding="utf-8") as fh:
                self.entries = json.load(fh)
        except (OSError, ValueError):
            self.entries = {}

    def lookup(self, path: Path, settings_key: str) -> list[Finding] | None:
        name = str(path)
        entry = self.entries.get(name)
        if entry is None or entry[3] != settings_key:
            return None
        try:
            st = os.stat(name)
        except OSError:
            return None
        if (st.st_mtime_ns, st.st_size) != (entry[0], entry[1]):
            if st.st_size != entry[1]:
                return None
            try:
                if content_hash(path.read_bytes()) != entry[2]:
                    return None
            except OSError:
                return None
            entry[0] = st.st_mtime_ns
            self.dirty = True
        return [finding_from_dict(d) for d in entry[4]]

    def stamp(self, path: Path) -> str:
        """The content hash and key of the entry of ``path`` ("" when there is none)."""
        entry = self.entries.get(str(path))
        return f"{entry[2]}|{entry[3]}" if entry is not None else ""

    def stored_key(self, path: Path) -> str:
        """The key the entry of ``path`` was stored under ("" when there is none)."""
        entry = self.entries.get(str(path))
        return entry[3] if entry is not None else ""

    def holds(self, marker: str) -> bool:
        """Some entry's key contains ``marker`` (e.g. results that used the project model)."""
        if marker not in self._holds:
            self._holds[marker] = any(marker in entry[3] for entry in self.entries.values())
        return self._holds[marker]

    def includes(self, path: Path) -> tuple[str, ...]:
        """The include names stored with the entry of ``path`` (read after a hit)."""
        entry = self.entries.get(str(path))
        return tuple(entry[5]) if entry is not None and len(entry) > 5 else ()

    def facts(self, path: Path) -> tuple[tuple[str, str, str], ...]:
        """The outside facts the stored result of ``path`` read (``Project.record``)."""
        entry = self.entries.get(str(path))
        return tuple((k, key, v) for k, key, v in entry[6]) if entry is not None and len(entry) > 6 else ()

    def set_aside(self, path: Path) -> bool:
        """Whether the stored result of ``path`` was set aside (outside the AMD build)."""
        entry = self.entries.get(str(path))
        return bool(entry[7]) if entry is not None and len(entry) > 7 else False

    def unjudged_extents(self, path: Path) -> tuple[str, ...]:
        """The arrays ROC211 could not judge in the stored result of ``path`` (summary)."""
        entry = self.entries.get(str(path))
        return tuple(entry[8]) if entry is not None and len(entry) > 8 else ()

    def store(self, path: Path, settings_key: str, data_hash: str, mtime_ns: int, size: int,
              findings: list[Finding], includes: tuple[str, ...] = (),
              facts: tuple[tuple[str, str, str], ...] = (), set_aside: bool = False,
              unjudged_extents: tuple[str, ...] = ()) -> None:
        self.entries[str(path)] = [mtime_ns, size, data_hash, settings_key,
                                   [finding_to_dict(f) for f in findings], list(includes), [list(f) for f in facts],
                                   set_aside, list(unjudged_extents)]
        self.dirty = True

    def save(self) -> None:
        if self.dirty:
            save_json(self.file, "results-*.json", self.entries)


def default_dir() -> Path:
    """Where a run keeps its caches unless told otherwise: ``.rocmlint_cache`` in the working folder."""
    return Path.cwd() / ".rocmlint_cache"


def save_json(file: Path, stale: str, content: object) -> None:
    """Write ``content`` to ``file`` in a cache folder (made, and git-ignored, on first use),
    removing the files of other rocmlint builds that match ``stale``. A read-only checkout
    still lints, just without what would have been kept."""
    directory = file.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by rocmlint\n*\n")
        for old in directory.glob(stale):
            if old != file:
                old.unlink(missing_ok=True)
        write_replacing(file, lambda fh: json.dump(content, fh, separators=(",", ":")))
    except OSError:
        pass
