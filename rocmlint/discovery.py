"""Which files to check: explicit files always; directories walked honouring .gitignore
(nested files and .git/info/exclude, via pathspec), default and configured excludes."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .config import ConfigResolver, Settings, is_excluded
from .languages import language_for


@dataclass(frozen=True)
class Target:
    path: Path
    display: str
    settings: Settings


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.resolve().relative_to(cwd).as_posix()
    except ValueError:
        return path.resolve().as_posix()


class _IgnoreStack:
    """gitignore specs from the repository root down to the current folder."""

    def __init__(self) -> None:
        self.specs: list[tuple[Path, object]] = []

    def load(self, directory: Path) -> int:
        from pathspec import GitIgnoreSpec

        added = 0
        for name in (".gitignore", ".git/info/exclude"):
            candidate = directory / name
            if candidate.is_file():
                try:
                    lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    continue
                self.specs.append((directory, GitIgnoreSpec.from_lines(lines)))
                added += 1
        return added

    def ignored(self, path: Path, is_dir: bool) -> bool:
        # Deeper files win; within one file the last matching pattern wins (pathspec).
        for base, spec in reversed(self.specs):
            rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                return bool(result.include)
        return False


def _repo_root(start: Path) -> Path | None:
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def discover(paths: list[str], resolver: ConfigResolver, cwd: Path | None = None) -> Iterator[Target]:
    cwd = (cwd or Path.cwd()).resolve()
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            resolved = path.resolve()
            if resolved not in seen and language_for(path, sniff=True) is not None:
                seen.add(resolved)
                yield Target(path, display_path(path, cwd), resolver.for_path(path))
            continue
        if not path.is_dir():
            raise FileNotFoundError(raw)
        yield from _walk(path.resolve(), resolver, cwd, seen)


def _walk(top: Path, resolver: ConfigResolver, cwd: Path, seen: set[Path]) -> Iterator[Target]:
    stack = _IgnoreStack()
    root = _repo_root(top)
    if root is not None and root != top:
        # Ignore files between the repository root and the folder we were given.
        for folder in reversed((top, *top.parents)):
            if folder == top:
                break
            if folder == root or root in folder.parents:
                stack.load(folder)
        if stack.ignored(top, True):
            # The user named an ignored folder (a vendored tree, site-packages): check it.
            stack.specs.clear()
    yield from _walk_dir(top, top, stack, resolver, cwd, seen)


def _walk_dir(directory: Path, top: Path, stack: _IgnoreStack, resolver: ConfigResolver,
              cwd: Path, seen: set[Path]) -> Iterator[Target]:
    added = stack.load(directory)
    settings = resolver.for_path(directory)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        entries = []
    subdirs = []
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if entry.is_symlink():
            continue
        if is_dir:
            if entry.name == ".git" or stack.ignored(path, True) or is_excluded(path, settings, top):
                continue
            subdirs.append(path)
        elif language_for(path) is not None:
            if stack.ignored(path, False) or is_excluded(path, settings, top):
                continue
            if path not in seen:
                seen.add(path)
                yield Target(path, display_path(path, cwd), settings)
    for sub in subdirs:
        yield from _walk_dir(sub, top, stack, resolver, cwd, seen)
    del stack.specs[len(stack.specs) - added :]
