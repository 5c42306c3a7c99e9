"""The manifest half: dependency files (pyproject.toml, requirement files, setup.cfg,
setup.py, conda environments), Dockerfiles, shell launchers and CMake files (their flag
variables: `cmake_flags`).

Each file kind is read with its ecosystem's own parser (tomllib, packaging, configparser,
ast, PyYAML, dockerfile-parse); parsed values are mapped back to byte spans.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import ParseFailure

if TYPE_CHECKING:
    from .context import ManifestContext


class ManifestLanguage:
    name = "manifest"

    def make_context(self, path: str, source: bytes, settings, anchors=()) -> "ManifestContext":
        from .context import ManifestContext

        context = ManifestContext(path, source, settings)
        if context.kind in ("pyproject", "setup_cfg", "conda"):
            context.manifest  # noqa: B018 - a file its parser rejects is reported as ROC001
        return context

    def syntax_errors(self, source: bytes, path: str) -> int:
        from ..config import Settings
        from .context import ManifestContext

        try:
            ManifestContext(path, source, Settings()).manifest  # noqa: B018
        except ParseFailure:
            return 1
        return 0

    def nvidia_view(self, source: bytes, path: str, settings) -> bytes:
        """What an NVIDIA machine installs. Fixes move CUDA-only requirements into a
        `cuda` extra: with that extra chosen, NVIDIA gets exactly what it had."""
        from .view import nvidia_view

        return nvidia_view(source, path)


LANGUAGE = ManifestLanguage()
