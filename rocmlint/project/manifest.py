"""The manifest part of the project model: which folders ship a ROCm variant of a manifest.

A manifest's findings depend on its neighbours (`requirements.txt` beside
`requirements_amd.txt` is the NVIDIA one), so their names join the file's cache key.
"""
from __future__ import annotations

import os
from pathlib import Path


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
        return self._folders[folder]


def _rocm_variants(folder: str) -> str:
    from ..manifest.kinds import rocm_variants

    return ",".join(name for name, _kind in rocm_variants(folder))


def build(project) -> ManifestPart:
    return ManifestPart()
