"""The project model (design §2b): the facts outside a file that decide whether the AMD
build compiles or runs a line of it.

Built once per run, on first use, and reached by rules through ``ctx.project``. Each
language half adds its own part: ``rocmlint/project/cpp.py`` (AMD build units, include
graph, macro values, shims, hipify) and ``rocmlint/project/python.py`` (gate helpers,
NVIDIA-only modules, test skips). Data flows one way: per-file summaries -> model -> rules.
Nothing here executes project code.

A big run needs the model for few files (those where a rule's pattern matches), so it goes
in two passes (``runner.run_deferred``): the workers read every file once, summarise it for
the model and finish it when no rule asks for the model; a file whose analysis does ask is
deferred (``ModelDeferred``). The parent then builds the model from the workers' summaries
and a second pool, forked after it, checks the deferred files.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..evidence import Evidence, Verdict
from ..rule import activate, active

if TYPE_CHECKING:
    from ..config import Settings
    from .tree import ProjectFiles

__all__ = ["Evidence", "Verdict", "activate", "active", "Project", "LazyPart", "ModelDeferred", "find_root", "digest"]

# Files whose presence marks the top of a project.
_STRONG_MARKERS = ("pyproject.toml", "setup.py", "rocmlint.toml")


class ModelDeferred(BaseException):
    """A file's analysis asked for a part not built yet, in the first pass of a big run: the
    file is checked again in the second pass. (Not an ``Exception``: no handler of a rule or
    a fixer may take it for a failure.)"""


class LazyPart:
    """A language part built the first time a rule asks for it (``Project.part``): a small
    run whose files hold no anchor (pre-commit on a clean file) never scans the project.

    ``build(project, known)`` makes the part (or None: nothing to model) from per-file
    summaries already made (``known``: rel -> summary); ``summarise(rel, data)`` is the
    per-file summary the workers of a big run make while they read the files anyway (None
    when the file is not one the part summarises); ``warm_up(project)`` reads what the build
    needs besides the summaries (build files), while the workers summarise."""

    def __init__(self, project: "Project", build: Callable[["Project", dict], Any],
                 summarise: Callable[[str, bytes], Any] | None = None,
                 nothing_to_model: Callable[["Project"], bool] | None = None,
                 warm_up: Callable[["Project"], None] | None = None) -> None:
        self._project = project
        self._build = build
        self.summarise = summarise
        self.warm_up = warm_up
        # A cheap test that the part would be None (C++: no HIP anywhere): then a big run
        # neither summarises for it nor makes files wait for it.
        self.nothing_to_model = nothing_to_model
        self.known: dict[str, Any] = {}  # summaries the workers made, by root-relative path
        self.built = False
        self._value: Any = None

    def get(self) -> Any:
        if not self.built:
            if self._project.deferring:
                raise ModelDeferred
            self.settle(self._build(self._project, self.known))
        return self._value

    def settle(self, value: Any) -> None:
        self._value, self.built, self.known = value, True, {}


@dataclass
class Project:
    root: Path
    settings: "Settings | None" = None
    # Language parts, set by ``prepare``; a part is None when no selected rule needs it.
    parts: dict[str, Any] = field(default_factory=dict)
    cache_dir: Path | None = None  # where parts cache per-file summaries (None: no cache)
    compile_commands: str = ""  # -p: the ROCm build's compile_commands.json or its folder
    jobs: int = 1  # processes the run may use (a small run's model summarises in a second one)
    deferring: bool = False  # first pass of a big run: a file that needs an unbuilt part waits
    used: set[str] = field(default_factory=set)  # the languages whose part the file in hand asked for
    # Facts from outside the file that its analysis read beyond what ``fingerprint_for``
    # covers (another header's macro body, whether a file exists): (kind, key, value). They
    # go into the cache with the result, which stands only while each still holds.
    facts: list[tuple[str, str, str]] = field(default_factory=list)
    set_aside: bool = False  # the file in hand is outside the AMD build: rules did not look at it
    # PATH:LINE of arrays sized from 32 whose lane indices ROC211 could not bound (summary)
    unjudged_extents: list[str] = field(default_factory=list)

    def prepare(self, languages: Iterable[str]) -> None:
        """Set up the parts the selected rules need (a ``LazyPart`` is built on first use)."""
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

    def files(self) -> "ProjectFiles":
        """The project's files, walked once per run for every part (``tree.walk``)."""
        found = self.__dict__.get("_files")
        if found is None:
            from .tree import walk

            settings = self.settings
            configured = frozenset("." + suffix for suffix, language in (settings.extension if settings else ())
                                   if language == "cpp")
            found = self.__dict__["_files"] = walk(os.path.abspath(str(self.root)), configured)
        return found

    def c_family_digest(self) -> str:
        """A digest of every C-family file's stat: what a result that searched the whole
        project (a function's call sites) depends on, as one fact (memoised per run)."""
        found = self.__dict__.get("_c_family_digest")
        if found is None:
            found = self.__dict__["_c_family_digest"] = digest(
                *(f"{rel}:{m}:{n}" for rel, (m, n) in self.files().c_family.items()))
        return found

    def before_fork(self) -> None:
        """A big run is about to fork its workers: parts built lazily are built now, once, so
        the workers share them."""
        for part in self.parts.values():
            if isinstance(part, LazyPart):
                part.get()

    def warm_up(self) -> None:
        """The first pass of a big run is under way: the parent, idle while the workers read
        the files, reads what the unbuilt parts need besides their summaries."""
        for part in self.parts.values():
            if isinstance(part, LazyPart) and not part.built and part.warm_up is not None:
                part.warm_up(self)

    def nvidia_arch_switches(self) -> dict[str, Evidence]:
        """Port mode without a model: macros the Makefiles define only beside an NVIDIA
        architecture flag (``makefile.nvidia_arch_defines``), read once per run. A file whose
        ``#if`` they decide records the Makefiles as facts (its cached result rests on them)."""
        found = self.__dict__.get("_nvidia_arch_switches")
        if found is None:
            from .makefile import is_makefile, nvidia_arch_defines

            texts: dict[str, str] = {}
            for rel, (_mtime, size) in self.files().build.items():
                if is_makefile(rel.rpartition("/")[2]) and size < 1 << 20 and len(texts) < 400:
                    try:
                        with open(os.path.join(str(self.root), rel), encoding="utf-8", errors="replace") as fh:
                            texts[rel] = fh.read()
                    except OSError:
                        continue
            found = self.__dict__["_nvidia_arch_switches"] = (nvidia_arch_defines(texts), tuple(texts))
        switches, makefiles = found
        if switches:
            for rel in makefiles:
                stat = self.files().build.get(rel)
                if stat is not None:
                    self.record("file-content", os.path.join(str(self.root), rel), f"{stat[1]}:{stat[0]}")
        return switches

    def named_for_other_platform(self, path: str | Path, compiled: bool = False) -> Evidence | None:
        """Why a file of the project is another platform's code by its folder's or its own
        name (``tree.named_for_other_platform``), or None."""
        from .tree import named_for_other_platform

        rel = _relative(self.root, path)
        return named_for_other_platform(rel, compiled) if rel is not None else None

    def part(self, language: str) -> Any:
        """The language's part, built now if it is lazy (None: no model for that language)."""
        part = self.parts.get(language)
        self.used.add(language)
        return part.get() if isinstance(part, LazyPart) else part

    def is_lazy(self, language: str) -> bool:
        """A part built on first use: a result joins its facts to its cache key only when it asked."""
        return isinstance(self.parts.get(language), LazyPart)

    def can_defer(self) -> bool:
        """Some part is still unbuilt and can take the workers' summaries (see the module
        docstring). Parts with surely nothing to model are settled now, as None."""
        for part in self.parts.values():
            if isinstance(part, LazyPart) and not part.built and part.nothing_to_model is not None \
                    and part.nothing_to_model(self):
                part.settle(None)
        return any(isinstance(p, LazyPart) and not p.built and p.summarise is not None for p in self.parts.values())

    def summarise(self, path: Path, data: bytes) -> dict[str, Any]:
        """language -> this file's summary, for every unbuilt part that summarises it."""
        out: dict[str, Any] = {}
        rel = _relative(self.root, path)
        if rel is None:
            return out
        for language, part in self.parts.items():
            if isinstance(part, LazyPart) and not part.built and part.summarise is not None:
                summary = part.summarise(rel, data)
                if summary is not None:
                    out[language] = summary
        return out

    def take_summaries(self, summaries: dict[str, Any], path: Path) -> None:
        """Keep a worker's summaries of ``path`` for the parts' build."""
        rel = _relative(self.root, path)
        if rel is None:
            return
        for language, summary in summaries.items():
            part = self.parts.get(language)
            if isinstance(part, LazyPart):
                part.known[rel] = summary

    def begin_file(self) -> None:
        """A file's analysis starts: what it asks is recorded afresh."""
        self.used.clear()
        self.facts.clear()
        self.set_aside = False
        self.unjudged_extents = []

    def record(self, kind: str, key: str, value: str) -> None:
        """The file in hand read a fact (``kind``: "file" / "dir" for a path's existence,
        "c-family" for every C-family file's stat at once,
        "file-content" for another file's bytes (its stat), else "<language>:<what>",
        answered by that part's ``fact(kind, key, path)``)."""
        self.facts.append((kind, key, value))

    def facts_hold(self, path: Path, facts, seen: dict | None = None) -> bool:
        """Every recorded fact still has the value the result was computed with. ``seen``
        keeps the values of one run's file facts (thousands of results read the same headers)."""
        for kind, key, value in facts:
            now: str | None
            if kind in _FILE_FACTS:
                now = seen.get((kind, key)) if seen is not None else None
                if now is None:
                    now = self._file_fact(kind, key)
                    if seen is not None:
                        seen[kind, key] = now
            else:
                part = self.part(kind.partition(":")[0])
                now = part.fact(kind, key, path) if part is not None and hasattr(part, "fact") else None
            if now != value:
                return False
        return True

    def _file_fact(self, kind: str, key: str) -> str:
        if kind == "file":
            return str(os.path.isfile(key))
        if kind == "dir":
            return str(os.path.isdir(key))
        if kind == "c-family":
            return self.c_family_digest()
        return content_stamp(key)

    def unchanged_by(self, path: Path) -> bool:
        """Whether the parts built so far still hold now that ``path`` changed on disk (an
        editor's save): a part not built yet will read the file as it is then; a built part
        must say that the new contents leave it as it is (``describes``); any doubt (a
        part with nothing modelled, a file gone) says no."""
        rel = _relative(self.root, path)
        if rel is None:
            return True
        try:
            data = Path(path).read_bytes()
        except OSError:
            return False
        for part in self.parts.values():
            if isinstance(part, LazyPart):
                if not part.built:
                    continue
                part = part.get()
            describes = getattr(part, "describes", None)
            if describes is None or not describes(rel, data):
                return False
        return True

    def fingerprint_for(self, path: Path, language: str) -> str:
        """What of the model a file's results depend on (joins the cache key): a part may
        offer ``fingerprint_for(path)``, so editing one header does not invalidate all."""
        part = self.part(language)
        if part is None or not hasattr(part, "fingerprint_for"):
            return ""
        return str(part.fingerprint_for(path))


_FILE_FACTS = frozenset({"file", "dir", "c-family", "file-content"})


def content_stamp(path: str) -> str:
    """What a result that read ``path`` depends on: its size and modification time ("" when
    it is gone)."""
    from ..cache import stat_stamp

    try:
        stat = os.stat(path)
    except OSError:
        return ""
    return stat_stamp(stat)


def _relative(root: Path, path: str | Path) -> str | None:
    top = _top(str(root))
    absolute = os.path.abspath(path)
    if not absolute.startswith(top):
        return None
    return absolute[len(top):].replace(os.sep, "/")


@lru_cache(maxsize=64)
def _top(root: str) -> str:
    """A root as the prefix of the absolute paths below it (asked once per file)."""
    return os.path.abspath(root).rstrip(os.sep) + os.sep


_VCS_MARKERS = (".git", ".hg", ".svn")
# Build files that chain by folder (a subfolder's file is part of the one above it).
_CHAIN_MARKERS = ("CMakeLists.txt", "meson.build")


class RootFinder:
    """The project each linted path belongs to (design: the project's root, not the working
    folder's): the nearest VCS root above it; else the outermost ``pyproject.toml`` /
    ``setup.py`` / ``rocmlint.toml`` or the top of the ``CMakeLists.txt``/``meson.build``
    chain above it, whichever is higher; else none (a loose file, see ``group``).
    Answers are memoised per folder: a run asks for every file."""

    def __init__(self) -> None:
        self._has: dict[tuple[str, str], bool] = {}
        self._info: dict[str, tuple[str | None, str | None, str | None]] = {}

    def _exists(self, folder: str, name: str) -> bool:
        key = (folder, name)
        found = self._has.get(key)
        if found is None:
            found = self._has[key] = os.path.exists(os.path.join(folder, name))
        return found

    def _chain(self, folder: str) -> bool:
        return any(self._exists(folder, m) for m in _CHAIN_MARKERS)

    def _facts(self, folder: str) -> tuple[str | None, str | None, str | None]:
        """(VCS root, outermost Python marker folder, top of the nearest build-file chain)
        at or above ``folder``."""
        cached = self._info.get(folder)
        if cached is not None:
            return cached
        if any(self._exists(folder, m) for m in _VCS_MARKERS):
            found: tuple[str | None, str | None, str | None] = (folder, None, None)
        else:
            parent = os.path.dirname(folder)
            above = self._facts(parent) if parent != folder else (None, None, None)
            if above[0] is not None:
                vcs = above[0]
                # Below a VCS root the root is that; keep the rest only for completeness.
                found = (vcs, None, None)
            else:
                python = above[1] or (folder if any(self._exists(folder, m) for m in _STRONG_MARKERS) else None)
                if self._chain(folder):
                    chain = above[2] if (parent != folder and self._chain(parent)) else folder
                else:
                    chain = above[2]
                found = (None, python, chain)
        self._info[folder] = found
        return found

    def root_of(self, folder: str) -> tuple[str | None, bool]:
        """(root, whether it is a VCS root) of an absolute folder; (None, False): no root."""
        vcs, python, chain = self._facts(folder)
        if vcs is not None:
            return vcs, True
        candidates = [c for c in (python, chain) if c is not None]
        if not candidates:
            return None, False
        return min(candidates, key=len), False  # the higher of the two (an ancestor is shorter)


def group_by_project(files: "list[str]", named: "list[str]", cwd: str | None = None) -> dict[str, list[int]]:
    """root -> indices of ``files`` (absolute or relative to ``cwd``) that belong to it.

    A file with no root of its own (no VCS root, no build file above it) joins the highest
    folder above it, within the working folder (else the paths the user named), that holds
    none of the roots found: run from a project's root or from the folder above it, the
    same files make the same project, and sibling projects never share a model."""
    cwd = os.path.abspath(cwd or os.getcwd())
    finder = RootFinder()
    absolute = [os.path.abspath(os.path.join(cwd, f)) for f in files]
    folders = [a if os.path.isdir(a) else os.path.dirname(a) for a in absolute]
    tops = [os.path.abspath(os.path.join(cwd, p)) for p in named] or [cwd]
    top = os.path.commonpath(tops)
    if os.path.isfile(top):
        top = os.path.dirname(top)
    if _under(top, cwd):
        top = cwd  # loose files in the working folder's tree: that tree (split where it holds projects)
    owner: list[str | None] = []
    found: set[str] = set()
    for folder in folders:
        root, _vcs = finder.root_of(folder)
        owner.append(root)
        if root is not None:
            found.add(root)
    loose_root: dict[str, str] = {}
    for index, folder in enumerate(folders):
        if owner[index] is not None:
            continue
        if folder not in loose_root:
            loose_root[folder] = _loose_root(folder, top, found)
        owner[index] = loose_root[folder]
    groups: dict[str, list[int]] = {}
    for index, root in enumerate(owner):
        assert root is not None
        groups.setdefault(root, []).append(index)
    return groups


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _loose_root(folder: str, top: str, roots: set[str]) -> str:
    """The highest folder between ``top`` and ``folder`` holding none of ``roots``."""
    if not _under(folder, top):
        return folder
    chain = [folder]
    while chain[-1] != top:
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1]:
            break
        chain.append(parent)
    for candidate in reversed(chain):  # highest first
        if not any(_under(r, candidate) for r in roots):
            return candidate
    return folder


def find_root(paths: Iterable[str], cwd: str | None = None) -> Path:
    """The project root of the first of ``paths`` (see ``group_by_project``)."""
    listed = list(paths) or ["."]
    groups = group_by_project(listed[:1], listed, cwd)
    return Path(next(iter(groups)))


def digest(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()

