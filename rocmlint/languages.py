"""The two language halves behind one interface; each is imported only when needed."""
from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Protocol

from .model import ParseFailure as ParseFailure  # re-exported: the engine catches it here

if TYPE_CHECKING:
    from .config import Settings
    from .rule import FileContext

EXTENSIONS = {
    ".py": "python", ".pyi": "python",
    ".cu": "cpp", ".cuh": "cpp", ".hip": "cpp", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp",
    ".c++": "cpp", ".c": "cpp", ".h": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".inl": "cpp",
    # Template and inline-implementation files: C++ whoever includes them.
    ".ipp": "cpp", ".tcc": "cpp", ".tpp": "cpp", ".cuinl": "cpp",
}
# Names a configuration's ``extension`` table may give (ruff's key): the C-family ones all
# mean the C++/CUDA/HIP half (a file of unknown extension is parsed with the CUDA grammar).
from .config import CONFIG_LANGUAGES  # noqa: E402,F401  (re-exported: the table lives with the setting)
_MODULES = {"python": "rocmlint.python", "cpp": "rocmlint.cpp", "manifest": "rocmlint.manifest"}
LANGUAGES = tuple(_MODULES)


class Language(Protocol):
    name: str

    def make_context(self, path: str, source: bytes, settings: "Settings",
                     anchors: "list[int] | tuple[int, ...]" = ()) -> "FileContext":
        """Parse ``source`` (UTF-8 buffer, no BOM) and return the context rules run on.
        ``anchors`` are the byte offsets where rule patterns matched; a language may parse
        only what surrounds them. Raises ParseFailure when nothing can be analysed."""

    def syntax_errors(self, source: bytes, path: str) -> int:
        """How many syntax errors the parser sees (a fix must not add any)."""

    def nvidia_view(self, source: bytes, path: str, settings: "Settings") -> bytes:
        """The code the NVIDIA build sees, normalised so that a correct gated fix leaves it
        unchanged (the NVIDIA-isolation proof compares original and fixed views)."""


def language_for(path: Path | str, sniff: bool = False,
                 extensions: "Mapping[str, str] | None" = None) -> str | None:
    """Language by extension (``extensions``: the configuration's own, suffix without the
    dot -> language, checked first); ``sniff`` also reads a shebang (explicit file arguments)."""
    suffix = os.path.splitext(path)[1].lower()
    lang = extensions.get(suffix[1:]) if extensions and suffix else None
    if lang is None:
        lang = EXTENSIONS.get(suffix)
    if lang is None:
        from .manifest.kinds import manifest_kind

        lang = "manifest" if manifest_kind(path) is not None else None
    if lang is None and sniff and suffix == "" and _has_python_shebang(path):
        return "python"
    return lang


def extra_languages(path: Path | str) -> tuple[str, ...]:
    """Other halves that also read the file: setup.py is Python code and a manifest."""
    return ("manifest",) if os.path.basename(path) == "setup.py" else ()


def _has_python_shebang(path) -> bool:
    try:
        with open(path, "rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def get_language(name: str) -> Language:
    return importlib.import_module(_MODULES[name]).LANGUAGE
