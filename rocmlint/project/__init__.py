"""The project model (design §2b): the facts outside a file that decide whether the AMD
build compiles or runs a line of it.

Built once per run by the runner, before files are dispatched (forked workers share it),
and reached by rules through ``ctx.project``. Each language half adds its own part:
``rocmlint/project/cpp.py`` (AMD build units, include graph, macro values, shims, hipify)
and ``rocmlint/project/python.py`` (gate helpers, NVIDIA-only modules, test skips).
Data flows one way: per-file summaries -> model -> rules. Nothing here executes project code.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from ..config import Settings

# Files whose presence marks the top of a project.
_STRONG_MARKERS = ("pyproject.toml", "setup.py", "rocmlint.toml")


@dataclass(frozen=True)
class Evidence:
    """One fact behind a verdict, with where it comes from (``path:line``, a build file, a table)."""

    what: str
    where: str = ""

    def __str__(self) -> str:
        return f"{self.what} ({self.where})" if self.where else self.what


@dataclass(frozen=True)
class Verdict:
    """Whether the AMD build reaches something: True, False (never), None (unknown)."""

    value: bool | None
    evidence: tuple[Evidence, ...] = ()


@dataclass
class Project:
    root: Path
    settings: "Settings | None" = None
    # Language parts, set by ``prepare``; a part is None when no selected rule needs it.
    parts: dict[str, Any] = field(default_factory=dict)
    cache_dir: Path | None = None  # where parts cache per-file summaries (None: no cache)
    compile_commands: str = ""  # -p: the ROCm build's compile_commands.json or its folder

    def prepare(self, languages: Iterable[str]) -> None:
        """Build the parts the selected rules need (once, in the parent process)."""
        import importlib

        for language in languages:
            if language in self.parts:
                continue
            try:
                module = importlib.import_module(f"rocmlint.project.{language}")
            except ModuleNotFoundError:
                self.parts[language] = None
                continue
            self.parts[language] = module.build(self)

    def before_fork(self) -> None:
        """A big run is about to fork its workers: parts built lazily are built now, once, so
        the workers share them (a part offers ``build_before_fork()``)."""
        for part in self.parts.values():
            if hasattr(part, "build_before_fork"):
                part.build_before_fork()

    def part(self, language: str) -> Any:
        return self.parts.get(language)

    def fingerprint_for(self, path: Path, language: str) -> str:
        """What of the model a file's results depend on (joins the cache key): a part may
        offer ``fingerprint_for(path)``, so editing one header does not invalidate all."""
        part = self.parts.get(language)
        if part is None or not hasattr(part, "fingerprint_for"):
            return ""
        return str(part.fingerprint_for(path))


def find_root(paths: Iterable[str], cwd: str | None = None) -> Path:
    """The project the paths belong to: the nearest folder above their common ancestor with
    a ``.git``; else the outermost one with a ``pyproject.toml``/``setup.py``/``rocmlint.toml``
    (nested packages belong to the project above them); else the working folder when it
    holds the paths; else the top of the ``CMakeLists.txt`` chain above them (a subfolder's
    CMakeLists.txt is not a project's top); else that ancestor."""
    cwd = os.path.abspath(cwd or os.getcwd())
    absolute = [os.path.abspath(os.path.join(cwd, p)) for p in paths] or [cwd]
    common = os.path.commonpath(absolute)
    if os.path.isfile(common):
        common = os.path.dirname(common)
    probe = common
    cmake_top = None
    outermost = None
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return Path(probe)
        if any(os.path.exists(os.path.join(probe, marker)) for marker in _STRONG_MARKERS):
            outermost = probe
        if os.path.exists(os.path.join(probe, "CMakeLists.txt")):
            if cmake_top is None or os.path.dirname(cmake_top) == probe:
                cmake_top = probe
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if outermost is not None:
        return Path(outermost)
    if common == cwd or common.startswith(cwd.rstrip(os.sep) + os.sep):
        return Path(cwd)
    return Path(cmake_top or common)


def digest(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()


_ACTIVE: Project | None = None


def activate(project: Project | None) -> None:
    """Make ``project`` the model rules see (set before the worker pool forks)."""
    global _ACTIVE
    _ACTIVE = project


def active() -> Project | None:
    return _ACTIVE
