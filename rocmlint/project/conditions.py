"""Conditions of the ROCm build as build files state them, three-valued (True: the ROCm
build takes this path, False: never, None: undecided), with the ``if`` that decided; and a
source use (what a build file compiles under such a condition). Shared by the build-file
readers (cmake.py, pybuild.py, meson.py) and BuildFacts."""
from __future__ import annotations

from dataclasses import dataclass

from ..evidence import Evidence


def and3(a: bool | None, b: bool | None) -> bool | None:
    return False if (a is False or b is False) else (None if None in (a, b) else True)


def or3(a: bool | None, b: bool | None) -> bool | None:
    return True if (a is True or b is True) else (None if None in (a, b) else False)


@dataclass(frozen=True)
class Cond:
    """Whether the ROCm build takes a path through the build file, and the ``if`` that
    decided it (``text``, ``where``) when it is not simply True."""

    value: bool | None
    text: str = ""
    where: str = ""

    def and_(self, other: "Cond") -> "Cond":
        if self.value is False:
            return self
        if other.value is False:
            return other
        if self.value is None:
            return self
        if other.value is None:
            return other
        return self if self.text else other


TRUE = Cond(True)
# Pieces of HIP-build evidence a reader keeps (the mode line shows the first ones)
MAX_HIP_BUILD_EVIDENCE = 3
MAX_UNRESOLVED = 1000  # source words a build reader could not resolve, kept (past it: no per-file verdicts)


def branch_taken(platform: str, port: bool) -> bool:
    """Whether the AMD build takes a branch doing this platform's work: HIP's always, CUDA's
    in a port (the CUDA build compiled by hipcc), another vendor's never."""
    return platform == "hip" or (port and platform == "cuda")
# The glob kind of a source named below a folder known only at run time (``base / "csrc" /
# "x.cu"`` in a build helper): it stands for every project file whose path ends so.
SUFFIX = "SUFFIX"


@dataclass
class SourceUse:
    """A source (or glob of sources) a command compiles, and whether ROCm's build does."""

    path: str  # root-relative, "/"-separated (a pattern when ``glob``; a path's end for SUFFIX)
    glob: str  # "", "GLOB", "GLOB_RECURSE" or SUFFIX
    cond: Cond
    evidence: Evidence


def describe(cond: Cond, quote: str = "") -> str:
    """How a condition reads in evidence (``quote``: around the condition's text)."""
    if cond.value is True and not cond.text:
        return "in the ROCm build"
    state = {True: "true", False: "false", None: "undecided"}[cond.value]
    return f"under {quote}{cond.text}{quote} ({cond.where}), {state} in the ROCm build" if cond.text else \
        f"({state} in the ROCm build)"
