"""Per-file summaries of every C-family file under the project root: its preprocessor
directives (``#if`` chains, ``#define``/``#undef``, ``#include``), cached by stat so a warm
run does not re-read files. Build files (CMake, setup.py) are collected as text."""
from __future__ import annotations

import hashlib
import os
from functools import cached_property

from ..cpp.preprocessor import NOT_MACROS, directives, include_guard
from ..languages import EXTENSIONS
from ..lazy_re import lazy_compile
from .summary_cache import cached_summaries

from .tree import C_FAMILY_EXTENSIONS as C_FAMILY_EXTENSIONS  # re-exported for the C++ part

SOURCE_EXTENSIONS = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".hip"})
_KEPT = frozenset({"if", "ifdef", "ifndef", "elif", "else", "endif", "define", "undef", "include", "error"})
_CONDITIONS = frozenset({"if", "ifdef", "ifndef", "elif"})
_IDENT = lazy_compile(r"[A-Za-z_]\w*")
_INCLUDED = lazy_compile(r'[<"]([^>"]+)[>"]')  # what an #include names
_INCLUDE_NAME = lazy_compile(rb'#[ \t]*include[ \t]*[<"]([^>"\r\n]+)[>"]')
# __HIP covers __HIPCC__; each alternative starts with its literal (the word start is checked
# behind it: a leading \b makes ``re`` try every position, 7x slower on 9,443 torch headers)
_HIP_MARK = lazy_compile(r"hip(?<!\whip)/|__HIP|USE_ROCM(?<!\wUSE_ROCM)\b|__AMDGCN__")
# A CUDA path: a CUDA toolkit header, or a test of an nvcc-only macro.
_CUDA_MARK = lazy_compile(r"[<\"](?:cuda[\w/]*\.h|cuda/|cub/|cublas|cufft|curand|cusparse|cudnn|nccl|mma\.h|cute/|cutlass/)"
                          r"|__CUDACC__|__NVCC__|__CUDA_ARCH__")
MAX_SUMMARY_BYTES = 8 << 20  # a file larger than this is summarised as empty


class Summary:
    """The directives of one file: (first line, last line, name, rest), 0-based lines."""

    __slots__ = ("directives", "__dict__")

    def __init__(self, found: list) -> None:
        self.directives: list[tuple[int, int, str, str]] = [(d[0], d[1], d[2], d[3]) for d in found]

    @cached_property
    def guard(self) -> str | None:
        """The include-guard macro (``#ifndef G`` / ``#define G`` wrapping the file)."""
        return include_guard(self.directives)

    @classmethod
    def prepared(cls, found: list) -> "Summary":
        """A summary with what ``release`` keeps already made: a worker of a big run makes
        it while it reads the file, and the model's solve (one process) only reads it."""
        summary = cls(found)
        summary._make_kept()
        return summary

    def _make_kept(self) -> None:
        """What queries read once the model is solved (``release`` keeps only this)."""
        _ = self.conditions, self.guard, self.hip, self.cuda, self.signature
        self.__dict__.pop("_texts", None)  # what it gave is kept: not sent back, not stored

    @cached_property
    def _texts(self) -> tuple[str, str]:
        """The #if/#elif conditions and the #include operands, each joined by newlines (no
        name or mark spans a newline: one search each instead of one per directive)."""
        conditions, includes = [], []
        for _, _, name, rest in self.directives:
            if name in _CONDITIONS:
                conditions.append(rest)
            elif name == "include":
                includes.append(rest)
        return "\n".join(conditions), "\n".join(includes)

    @cached_property
    def hip(self) -> bool:
        """Mentions HIP: includes a hip/ header or tests a HIP / ROCm macro."""
        return any(_HIP_MARK.search(text) for text in self._texts)

    @cached_property
    def cuda(self) -> bool:
        """Has a CUDA path: includes a CUDA toolkit header or tests an nvcc-only macro."""
        return any(_CUDA_MARK.search(text) for text in self._texts)

    @cached_property
    def conditions(self) -> frozenset[str]:
        """The macro names the file's #if conditions read."""
        return frozenset(_IDENT.findall(self._texts[0])) - NOT_MACROS

    @cached_property
    def signature(self) -> str:
        """A digest of the directives (kept after ``release``, and stable across processes:
        pickled with the model): new contents of the file with the same signature tell the
        model nothing new."""
        return hashlib.blake2b(repr(self.directives).encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()

    def release(self) -> None:
        """Keep only what queries need once the model is solved (memory, cache size)."""
        self._make_kept()
        self.__dict__.pop("_include_branches", None)
        self.directives = []

    @cached_property
    def _include_branches(self) -> list[tuple[int, str, tuple | None, bool]]:
        """(line, header, innermost branch (kind, condition, index, branch count) or None, top)."""
        out: list[tuple[int, str, tuple | None, bool]] = []
        stack: list[list] = []  # [kind, condition, index, pending includes]
        guard = self.guard
        for first, _last, name, rest in self.directives:
            if name in ("if", "ifdef", "ifndef"):
                stack.append([name, rest, 0, []])
            elif name in ("elif", "else") and stack:
                stack[-1][2] += 1
            elif name == "endif" and stack:
                frame = stack.pop()
                for item in frame[3]:
                    out.append((item[0], item[1], (frame[0], frame[1], item[2], frame[2] + 1), False))
            elif name == "include":
                m = _INCLUDED.match(rest)
                if not m:
                    continue
                inside_guard_only = len(stack) == 1 and guard is not None and stack[0][0] == "ifndef" \
                    and stack[0][1].split()[:1] == [guard]
                if not stack or inside_guard_only:
                    out.append((first, m.group(1), None, True))
                else:
                    stack[-1][3].append((first, m.group(1), stack[-1][2]))
        return out

    def includes(self) -> list[tuple[int, str, bool]]:
        return [(line, header, top) for line, header, _, top in self._include_branches]

    def gated_includes(self) -> list[tuple[int, str, tuple]]:
        return [(line, header, branch) for line, header, branch, _ in self._include_branches if branch]


def included_names(data: bytes) -> tuple[str, ...]:
    """The file names a C-family file's ``#include`` lines give, as written. Every C-family
    file a run reads is scanned, so this is one unanchored regex (0.05 s for 39 MB of torch
    headers, where the directive reader of the summaries takes 0.8 s); an ``#include`` in a
    comment counts too, which can only make discovery read a file it would have skipped."""
    return tuple(dict.fromkeys(m.decode("utf-8", "surrogateescape") for m in _INCLUDE_NAME.findall(data)))


def summarise(data: bytes) -> list:
    if len(data) > MAX_SUMMARY_BYTES:
        return []
    return [list(d) for d in directives(data) if d[2] in _KEPT]


_HIP_BYTES = (b"hip/", b"__HIP", b"USE_ROCM", b"__AMDGCN__")


def mentions_hip(root: str, stats: dict) -> bool:
    """Whether any C-family file names HIP at all (a fast byte search: CUDA-only trees
    skip the model, and are judged file by file as before)."""
    from ..literals import literal_matcher

    scan_hip = literal_matcher(list(_HIP_BYTES))

    def found(data: bytes) -> bool:
        return bool(scan_hip(data))
    for rel in stats:
        try:
            with open(os.path.join(root, rel), "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if found(data):
            return True
    return False


def read_build_files(root: str, build: dict) -> dict[str, str]:
    texts: dict[str, str] = {}
    for rel in build:
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                texts[rel] = fh.read(1 << 20)
        except OSError:
            continue
    return texts


def load_summaries(root: str, stats: dict, cache_dir=None, known: dict | None = None,
                   directives: dict[str, list] | None = None) -> dict[str, Summary]:
    """Summaries of the C-family files ``scan`` found (stat-keyed cache; ``known``: made already;
    ``directives``: what ``summary_directives`` gave already, in another process)."""
    made = {rel: s for rel, s in (known or {}).items() if isinstance(s, Summary)}  # by the workers
    if directives is None:
        plain = {rel: s.directives if isinstance(s, Summary) else s for rel, s in (known or {}).items()}
        directives = summary_directives(root, stats, cache_dir, plain)
    out = {}
    for rel, found in directives.items():
        summary = made.get(rel)
        out[rel] = summary if summary is not None and summary.directives is found else Summary(found)
    return out


def summary_directives(root: str, stats: dict, cache_dir=None, known: dict | None = None) -> dict[str, list]:
    """rel -> the directives of each C-family file, as the summary cache keeps them."""
    cache_file = None
    if cache_dir is not None:
        from ..cache import build_key

        cache_file = os.path.join(str(cache_dir), f"cppmodel-{build_key()}.json")
    # An unreadable file gives no facts (its macros stay unknown).
    return cached_summaries(cache_file, root, stats, lambda _rel, data: summarise(data) if data is not None else [],
                            stale_prefix="cppmodel-", known=known)
