"""The manifest part of the project model: which folders ship a ROCm variant of a manifest,
and which files a requirement file includes.

A manifest's findings depend on its neighbours (`requirements.txt` beside
`requirements_amd.txt` is the NVIDIA one) and on the files its `-r`/`-c` lines pull in, so
their names and stamps join the file's cache key.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from ..lazy_re import lazy_compile

_INCLUDE = lazy_compile(rb"^[ \t]*(?:-r|--requirement|-c|--constraint)(?:[ \t]*=[ \t]*|[ \t]+)(\S+)", re.MULTILINE)


class ManifestPart:
    def __init__(self) -> None:
        self._folders: dict[str, str] = {}  # one run: each folder listed once

    @staticmethod
    def describes(rel: str, data: bytes) -> bool:
        """The part lists folders and reads no file: a file's new contents leave it as it is."""
        return True

    def fingerprint_for(self, path: Path) -> str:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self._folders:
            self._folders[folder] = _rocm_variants(folder)
        return self._folders[folder] + _included_stamps(os.path.abspath(path))


def _included_stamps(path: str) -> str:
    """Size and modification time of each file a requirement file includes, followed."""
    from ..manifest.kinds import manifest_kind
    from . import content_stamp

    if manifest_kind(path) != "requirements":
        return ""
    stamps, todo, seen = [], [path], {path}
    while todo and len(seen) < 64:
        try:
            with open(todo.pop(), "rb") as handle:
                data, including = handle.read(), handle.name
        except OSError:
            continue
        for m in _INCLUDE.finditer(data):
            target = os.path.normpath(os.path.join(os.path.dirname(including), m.group(1).decode(errors="replace")))
            if target not in seen:
                seen.add(target)
                todo.append(target)
                stamps.append(f"|{target}:{content_stamp(target)}")
    return "".join(sorted(stamps))


def _rocm_variants(folder: str) -> str:
    from ..manifest.kinds import rocm_variants

    return ",".join(name for name, _kind in rocm_variants(folder))


def build(project) -> ManifestPart:
    return ManifestPart()
