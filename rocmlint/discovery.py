"""Which files to check: explicit files always; folders walked honouring .gitignore
(nested files and .git/info/exclude, via pathspec), default and configured excludes.

The walk works on resolved path strings: ``Path.resolve`` per file cost seconds on
trees of 10,000 files.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .config import ConfigResolver, Settings, is_excluded
from .languages import extra_languages, language_for

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


@dataclass(frozen=True)
class Target:
    path: Path
    display: str
    settings: Settings


def display_path(resolved: str, cwd: str) -> str:
    """Relative to the working directory with '/' separators, else absolute."""
    if resolved.startswith(cwd + os.sep):
        resolved = resolved[len(cwd) + 1 :]
    return resolved.replace(os.sep, "/")


class _IgnoreStack:
    """gitignore specs from the repository root down to the current folder."""

    def __init__(self) -> None:
        self.specs: list[tuple[str, GitIgnoreSpec]] = []

    def load(self, directory: str) -> int:
        from pathspec import GitIgnoreSpec

        added = 0
        for name in (".gitignore", os.path.join(".git", "info", "exclude")):
            candidate = os.path.join(directory, name)
            try:
                with open(candidate, encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                continue
            self.specs.append((directory, GitIgnoreSpec.from_lines(lines)))
            added += 1
        return added

    def ignored(self, path: str, is_dir: bool) -> bool:
        # Deeper files win; within one file the last matching pattern wins (pathspec).
        for base, spec in reversed(self.specs):
            rel = path[len(base) + 1 :].replace(os.sep, "/") + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                return bool(result.include)
        return False


def _repo_root(start: str) -> str | None:
    current = start
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def discover(paths: list[str], resolver: ConfigResolver, cwd: Path | None = None,
             force_exclude: bool = False) -> Iterator[Target]:
    """Targets under ``paths``. Named files are always checked, unless ``force_exclude``
    (pre-commit passes every staged file by name) and an exclude pattern matches them."""
    cwd_str = os.path.realpath(cwd or os.getcwd())
    seen: set[str] = set()
    for raw in paths:
        if os.path.isfile(raw):
            resolved = os.path.realpath(raw)
            if force_exclude and is_excluded(resolved, False, resolver.for_path(raw), cwd_str):
                continue
            if resolved not in seen and language_for(raw, sniff=True) is not None:
                seen.add(resolved)
                yield Target(Path(raw), display_path(resolved, cwd_str), resolver.for_path(raw))
            continue
        if not os.path.isdir(raw):
            raise FileNotFoundError(raw)
        yield from _walk(os.path.realpath(raw), resolver, cwd_str, seen)


_NAME = attrgetter("name")


def _wanted_languages(settings: Settings) -> frozenset[str]:
    from .engine import selected_languages

    return selected_languages(settings.select, settings.ignore)


def _wanted(language: str | None, path: str, wanted: frozenset[str]) -> bool:
    """A file some selected rule reads (``--select ROC1`` skips the C++ headers of a tree
    before any work is spent on them)."""
    if language is None:
        return False
    return language in wanted or any(extra in wanted for extra in extra_languages(path))


def _walk(top: str, resolver: ConfigResolver, cwd: str, seen: set[str]) -> Iterator[Target]:
    stack = _IgnoreStack()
    root = _repo_root(top)
    if root is not None and root != top:
        # Ignore files between the repository root and the folder we were given.
        ancestors = []
        current = os.path.dirname(top)
        while True:
            ancestors.append(current)
            if current == root:
                break
            current = os.path.dirname(current)
        for folder in reversed(ancestors):
            stack.load(folder)
        if stack.ignored(top, True):
            # The user named an ignored folder (a vendored tree, site-packages): check it.
            stack.specs.clear()
    yield from _walk_dir(top, top, stack, resolver, cwd, seen)


def _walk_dir(directory: str, top: str, stack: _IgnoreStack, resolver: ConfigResolver,
              cwd: str, seen: set[str]) -> Iterator[Target]:
    added = stack.load(directory)
    settings = resolver.for_directory(directory)
    wanted = _wanted_languages(settings)
    try:
        entries = sorted(os.scandir(directory), key=_NAME)
    except OSError as exc:
        print(f"rocmlint: warning: cannot read folder {display_path(directory, cwd)}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        entries = []
    subdirs = []
    for entry in entries:
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir()
        except OSError:
            continue
        path = entry.path
        if is_dir:
            if entry.name == ".git" or stack.ignored(path, True) or is_excluded(path, True, settings, top):
                continue
            subdirs.append(path)
        elif _wanted(language_for(path), path, wanted):
            if path in seen or stack.ignored(path, False) or is_excluded(path, False, settings, top):
                continue
            seen.add(path)
            yield Target(Path(path), display_path(path, cwd), settings)
    for sub in subdirs:
        yield from _walk_dir(sub, top, stack, resolver, cwd, seen)
    del stack.specs[len(stack.specs) - added :]
