"""Module-level lines of a Python file read from its bytes (no parse): function and
assignment heads, where module-level statements start, and the words a gate helper needs.
Shared by the skeleton parser, the context's own gate helpers and the project model."""
from __future__ import annotations

import re

from ..lazy_re import lazy_compile
from ..literals import literal_matcher
from .backends import NVIDIA_ONLY_IMPORTS

SKIP_NAME = lazy_compile(r"skip\w*(rocm|hip|amd)|(rocm|hip|amd)\w*skip", re.IGNORECASE)
DEF_LINE = lazy_compile(rb"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
ASSIGN_LINE = lazy_compile(rb"^(\w+)[ \t]*(?::[^=\n]*)?=[^=]", re.MULTILINE)
_TOP_CODE = lazy_compile(rb"\n(?=[^ \t\r\n#)\]}])")
# What a gate helper's definition must contain; `hip` counts as a word of its own (`is_hip()`,
# `IS_HIP`, `"hip"`), not inside `ownership` or `chip` (``_WORD_ONLY``).
# An optional import of an NVIDIA-only package (`try: import flash_attn_interface ... except
# ImportError: return False`) is a platform fact too; CUTLASS's names are left out: its own
# Python trees say "cutlass" in every file, where no helper tests for it.
GATE_WORDS = (b"version.hip", b"rocm", b"ROCM", b"Rocm", b"get_device_capability", b"version.cuda",
              b"hip", b"HIP", b"Hip", b"get_current_target", b"gcnArchName", b"nvcc", b"CUDA_HOME",
              *(root.encode() for root in NVIDIA_ONLY_IMPORTS if not root.startswith("cutlass")))
_WORD_ONLY = frozenset({b"hip", b"HIP", b"Hip"})
# Gate helpers are short predicates; long test functions are not worth parsing here.
MAX_HELPER_BYTES = 3000


def module_statement_starts(source: bytes) -> list[int]:
    """Where each module-level statement (a column-0 code line) starts: 0, then a
    memchr-speed scan for the newlines before them."""
    return [0] + [m.start() + 1 for m in _TOP_CODE.finditer(source)]


_GATE_SCAN = None


def gate_word_positions(source: bytes) -> list[int]:
    """Where the words a gate helper needs occur."""
    global _GATE_SCAN
    if _GATE_SCAN is None:
        _GATE_SCAN = literal_matcher(list(GATE_WORDS))
    found = []
    for index, start in _GATE_SCAN(source):
        word = GATE_WORDS[index]
        if word in _WORD_ONLY and (_letter(source, start - 1) or _letter(source, start + 3, lower_only=True)):
            continue
        found.append(start)
    return found


def _letter(source: bytes, at: int, lower_only: bool = False) -> bool:
    """An ASCII letter or digit at ``at`` (``lower_only``: a lower-case letter or digit)."""
    if not 0 <= at < len(source):
        return False
    c = source[at]
    return (97 <= c <= 122) or (48 <= c <= 57) or (not lower_only and 65 <= c <= 90)


def has_gate_word(source: bytes) -> bool:
    return bool(gate_word_positions(source))
