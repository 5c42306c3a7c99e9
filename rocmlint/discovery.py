"""Which files to check: explicit files always; folders walked honouring .gitignore
(nested files and .git/info/exclude, via pathspec), default and configured excludes.

The walk works on resolved path strings: ``Path.resolve`` per file cost seconds on
trees of 10,000 files.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from .config import ConfigResolver, Settings, is_excluded
from .languages import extra_languages, language_for
from .lazy_re import lazy_compile

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


@dataclass(frozen=True)
class Target:
    path: Path
    display: str
    settings: Settings
    language: str | None = None  # decided by discovery (None: by the file name, later)


def display_path(resolved: str, cwd: str) -> str:
    """Relative to the working directory with '/' separators, else absolute."""
    if resolved.startswith(cwd + os.sep):
        resolved = resolved[len(cwd) + 1 :]
    return resolved.replace(os.sep, "/")


class _IgnoreStack:
    """gitignore specs from the repository root down to the current folder."""

    def __init__(self) -> None:
        self.files: list[tuple[str, _IgnoreFile]] = []  # (folder, its patterns)

    def load(self, directory: str) -> int:
        added = 0
        for name in (".gitignore", os.path.join(".git", "info", "exclude")):
            candidate = os.path.join(directory, name)
            try:
                with open(candidate, encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                continue
            self.files.append((directory, _IgnoreFile(lines)))
            added += 1
        return added

    def ignored(self, path: str, is_dir: bool) -> bool:
        # Deeper files win; within one file the last matching pattern wins (pathspec).
        for base, patterns in reversed(self.files):
            rel = path[len(base) + 1 :].replace(os.sep, "/") + ("/" if is_dir else "")
            include = patterns.include(rel)
            if include is not None:
                return include
        return False


class _IgnoreFile:
    """One ignore file. A path is tried only against the patterns whose literal parts it all
    holds (one Aho-Corasick pass), each pattern compiled when first tried; pathspec
    compiles and tries every pattern, and torchao's 329 cost a third of a warm run.
    Patterns that match nothing cannot change pathspec's answer (the last matching pattern
    wins), so a spec of the matching ones answers as the whole file's would."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.unanchored: list[int] = []  # lines with no literal: candidates for every path
        self.pieces_of: dict[int, int] = {}  # line -> how many distinct literal parts it has
        by_piece: dict[str, list[int]] = {}
        for index, line in enumerate(lines):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue  # blank or a comment: no pattern
            pieces = _required_pieces(line)
            if not pieces:
                self.unanchored.append(index)
                continue
            self.pieces_of[index] = len(pieces)
            for piece in pieces:
                by_piece.setdefault(piece, []).append(index)
        self.literals = list(by_piece)
        self.lines_of = list(by_piece.values())
        from .literals import substring_matcher  # only where an ignore file exists (4 ms to import)

        self.matcher = substring_matcher(self.literals)
        self.regexes: dict[int, re.Pattern[str] | None] = {}
        self.specs: dict[tuple[int, ...], GitIgnoreSpec] = {}

    def include(self, rel: str) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no pattern matches."""
        held: dict[int, int] = {}  # line -> how many of its parts the path holds
        for piece in self.matcher("/" + rel + "/"):  # rel holds its normalised form: never fewer
            for index in self.lines_of[piece]:
                held[index] = held.get(index, 0) + 1
        candidates = [index for index, count in held.items() if count == self.pieces_of[index]]
        candidates.extend(self.unanchored)
        if not candidates:
            return None
        from pathspec.util import normalize_file

        normal = normalize_file(rel)
        matching = tuple(sorted(index for index in candidates if self._matches(index, normal)))
        if not matching:
            return None
        spec = self.specs.get(matching)
        if spec is None:
            from pathspec import GitIgnoreSpec

            spec = self.specs[matching] = GitIgnoreSpec.from_lines([self.lines[index] for index in matching])
        result = spec.check_file(rel).include
        return None if result is None else bool(result)

    def _matches(self, index: int, normal: str) -> bool:
        if index not in self.regexes:
            self.regexes[index] = _pattern_regex(self.lines[index])
        regex = self.regexes[index]
        return regex is not None and regex.search(normal) is not None


def _pattern_regex(line: str) -> "re.Pattern[str] | None":
    """pathspec's regex for one gitignore line (None: no pattern, or one git ignores as
    invalid, such as a lone '!', on which pathspec raises)."""
    from pathspec import GitIgnoreSpec

    try:
        patterns = GitIgnoreSpec.from_lines([line]).patterns
    except ValueError:
        return None
    if not patterns or patterns[0].include is None:
        return None
    regex = patterns[0].regex
    # a regex this cannot run itself (another pathspec backend): pathspec decides every path
    return regex if isinstance(regex, re.Pattern) and isinstance(regex.pattern, str) else _ANY_PATH


_ANY_PATH = lazy_compile("")


# Parts of a pattern that a matching path need not hold verbatim: wildcards and bracket
# expressions (a piece still holding a bracket is not trusted).
_WILDCARDS = lazy_compile(r"[*?]+|\[[!^]?\]?[^\]]*\]")


def _required_pieces(line: str) -> set[str]:
    """Runs of a gitignore pattern that every path it matches holds, as found in ``/`` +
    path + ``/``: a pattern matches whole components, so a run at its start or after a
    slash starts one (``/log``), and a run at its end or before a slash ends one (``.png/``;
    ``log`` is not in ``logging.py``). A pattern with an escape or ``//`` gives none."""
    pattern = line.rstrip()
    if pattern.startswith("!"):
        pattern = pattern[1:]
    if "\\" in pattern or "//" in pattern:
        return set()
    bounds = [0, *(at for m in _WILDCARDS.finditer(pattern) for at in m.span()), len(pattern)]
    pieces = set()
    for start, end in zip(bounds[::2], bounds[1::2]):
        piece = pattern[start:end]
        if "[" in piece or "]" in piece or not piece.strip("/"):
            continue
        if start == 0 and not piece.startswith("/"):
            piece = "/" + piece
        if end == len(pattern) and not piece.endswith("/"):
            piece += "/"
        pieces.add(piece)
    return pieces


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
             force_exclude: bool = False) -> "Discovery":
    """Targets under ``paths``. Named files are always checked, unless ``force_exclude``
    (pre-commit passes every staged file by name) and an exclude pattern matches them."""
    return Discovery(paths, resolver, cwd, force_exclude)


@dataclass
class _Unclaimed:
    """A file no language reads by its name, kept until a C-family file includes it."""

    display: str
    settings: Settings
    named: bool  # named on the command line


class Discovery:
    """The targets under some paths (iterate once). A file that no language reads by its
    name (``winograd_helper.inc``, an extension-less header) is kept aside: when a checked
    C-family file ``#include``s it, it is C-family whatever its name (``claim_included``,
    called by the runner with the include names its workers read anyway). Files named on
    the command line that nothing claimed are ``unread_named``."""

    def __init__(self, paths: list[str], resolver: ConfigResolver, cwd: Path | None = None,
                 force_exclude: bool = False) -> None:
        self.paths, self.resolver, self.force_exclude = paths, resolver, force_exclude
        self.cwd = os.path.realpath(cwd or os.getcwd())
        self.unclaimed: dict[str, _Unclaimed] = {}  # resolved path -> what to check it with
        self._by_name: dict[str, list[str]] | None = None

    def __iter__(self) -> Iterator[Target]:
        seen: set[str] = set()
        resolver, cwd = self.resolver, self.cwd
        for raw in self.paths:
            if os.path.isfile(raw):
                resolved = os.path.realpath(raw)
                settings = resolver.for_path(raw)
                if self.force_exclude and is_excluded(resolved, False, settings, cwd):
                    continue
                if resolved in seen:
                    continue
                seen.add(resolved)
                language = language_for(raw, sniff=True, extensions=settings.extensions)
                if language is None:
                    self.unclaimed[resolved] = _Unclaimed(display_path(resolved, cwd), settings, True)
                    continue
                yield Target(Path(raw), display_path(resolved, cwd), settings, language)
                continue
            if not os.path.isdir(raw):
                raise FileNotFoundError(raw)
            yield from _walk(os.path.realpath(raw), resolver, cwd, seen, self.unclaimed)

    def claim_included(self, includers: Iterable[tuple[Path, tuple[str, ...]]]) -> list[Target]:
        """Kept-aside files that these (C-family file, names it includes) pairs include:
        next to the includer first, else any kept file whose path ends with the name (a
        bare extension-less name only next to the includer: ``<vector>`` is the library's)."""
        claimed: list[Target] = []
        if not self.unclaimed:
            return claimed
        kept_names = self._name_index()
        folders: dict[str, str] = {}  # an includer's folder -> its real path (torch: 9,000 includers)
        for includer, names in includers:
            # A name can only reach a kept file of the same file name (or climb with "..").
            if not any(os.path.basename(name) in kept_names or ".." in name for name in names):
                continue
            text = str(includer)
            if os.path.islink(text):
                folder = os.path.dirname(os.path.realpath(text))
            else:
                parent = os.path.dirname(text)
                folder = folders.get(parent) or folders.setdefault(parent, os.path.realpath(parent))
            for name in names:
                local = os.path.normpath(os.path.join(folder, name))
                found = [local] if local in self.unclaimed else []
                if not found and ("/" in name or "." in os.path.basename(name)):
                    tail = os.sep + os.path.normpath(name)
                    found = [p for p in self._named(os.path.basename(name)) if p.endswith(tail)]
                for path in found:
                    if os.path.splitext(path)[1].lower() in OTHER_GPU_LANGUAGES:
                        continue  # OpenCL/Vulkan/Metal kernels pasted in as strings: not CUDA or HIP code
                    kept = self.unclaimed.pop(path, None)
                    if kept is not None:
                        claimed.append(Target(Path(path), kept.display, kept.settings, "cpp"))
        return claimed

    def _name_index(self) -> dict[str, list[str]]:
        """File name -> kept files of that name (built when first asked: every file is found)."""
        if self._by_name is None:
            self._by_name = {}
            for path in self.unclaimed:
                self._by_name.setdefault(os.path.basename(path), []).append(path)
        return self._by_name

    def _named(self, basename: str) -> list[str]:
        return [p for p in self._name_index().get(basename, ()) if p in self.unclaimed]

    def unread_named(self) -> list[str]:
        """Warnings for the files named on the command line that rocmlint did not read."""
        return [unread_warning(kept.display) for kept in self.unclaimed.values() if kept.named]


# Kernel sources of other GPU APIs that C++ files include (often as a string literal for a
# run-time compiler): hipcc never compiles them, so no CUDA-to-HIP rule applies.
OTHER_GPU_LANGUAGES = frozenset({".cl", ".clh", ".ocl", ".glsl", ".comp", ".vert", ".frag", ".metal", ".wgsl",
                                 ".hlsl", ".spvasm"})


def unread_warning(display: str) -> str:
    """One line: the file, and what would make rocmlint read it."""
    suffix = os.path.splitext(display)[1].lstrip(".").lower()
    if suffix:
        how = (f'to check it as C++/CUDA, add `extension = {{ {suffix} = "cuda" }}` to [tool.rocmlint], '
               "or check the file that #includes it")
    else:
        how = "a file without an extension is read when a checked C-family file #includes it"
    return f"rocmlint: warning: {display}: not checked: no language is known for this file name; {how}"


_NAME = attrgetter("name")


def _wanted_languages(settings: Settings) -> frozenset[str]:
    from .engine import selected_languages

    return selected_languages(settings.select, settings.ignore)


def _wanted(language: str, path: str, wanted: frozenset[str]) -> bool:
    """A file some selected rule reads (``--select ROC1`` skips the C++ headers of a tree
    before any work is spent on them)."""
    return language in wanted or any(extra in wanted for extra in extra_languages(path))


def _walk(top: str, resolver: ConfigResolver, cwd: str, seen: set[str],
          unclaimed: dict[str, _Unclaimed]) -> Iterator[Target]:
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
            stack.files.clear()
    yield from _walk_dir(top, top, stack, resolver, cwd, seen, unclaimed)


def _walk_dir(directory: str, top: str, stack: _IgnoreStack, resolver: ConfigResolver,
              cwd: str, seen: set[str], unclaimed: dict[str, _Unclaimed]) -> Iterator[Target]:
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
    folder: Path | None = None  # made once: a child path is joined, not parsed whole (12,000 torch headers)
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
            continue
        language = language_for(path, extensions=settings.extensions)
        if language is None:
            # kept aside for an #include to claim (only where C++ rules run)
            if "cpp" in wanted and path not in seen and not stack.ignored(path, False) \
                    and not is_excluded(path, False, settings, top):
                unclaimed[path] = _Unclaimed(display_path(path, cwd), settings, False)
        elif _wanted(language, path, wanted):
            if path in seen or stack.ignored(path, False) or is_excluded(path, False, settings, top):
                continue
            seen.add(path)
            if folder is None:
                folder = Path(directory)
            yield Target(folder / entry.name, display_path(path, cwd), settings, language)
    for sub in subdirs:
        yield from _walk_dir(sub, top, stack, resolver, cwd, seen, unclaimed)
    del stack.files[len(stack.files) - added :]
