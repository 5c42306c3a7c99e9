"""The facts behind a decision (core data, shared by every layer).

A decision reads ``Evidence.kind`` (a structured key) and never the rendered text: the
text (``what``) is for ``rocmlint explain`` and the ``evidence`` of findings only."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Evidence:
    """One fact behind a verdict, with where it comes from (``path:line``, a build file, a table).

    ``kind`` says what sort of fact it is, for code that decides on it (``KIND_*`` below);
    ``what`` is its wording for people."""

    what: str
    where: str = ""
    kind: str = ""

    def __str__(self) -> str:
        return f"{self.what} ({self.where})" if self.where else self.what


# Kinds that decisions read (others are free to leave ``kind`` empty).
KIND_GATE_MACRO = "gate-macro"  # the configured gate macro: defined on AMD
KIND_ROCM_MACRO = "rocm-macros"  # config: defined on AMD, undefined on NVIDIA
KIND_NVIDIA_MACRO = "nvidia-macros"  # config: undefined on AMD, defined on NVIDIA
KIND_COMPILE_DB = "compile-db"  # -D/-U in compile_commands.json (per unit)
KIND_ONLY_FROM_NVIDIA_FILE = "only-from-nvidia-file"  # included only from files the AMD build never compiles
KIND_BUILD_FILE = "build-file"  # a fact read from a build file (CMake, setup.py, meson)
KIND_HIP_TWIN = "hip-twin"  # the AMD build compiles a hipified copy of the file instead
KIND_BY_NAME = "by-name"  # a macro decided by the platform its name states (weaker than a definition)
KIND_PORT_PATH = "port-path"  # a file named by --port / `port`: linted as a port whatever the build says


@dataclass(frozen=True)
class Verdict:
    """Whether the AMD build reaches something: True, False (never), None (unknown)."""

    value: bool | None
    evidence: tuple[Evidence, ...] = ()
