"""Switches a lone file's own headers derive for NVIDIA only (port mode, no project model):
``arch.cuh`` defines ``LIB_SM80_ENABLED`` only under ``#if __CUDA_ARCH__ >= 800``, which hipcc
never defines, so a file that includes it and tests ``LIB_SM80_ENABLED`` never takes that
branch on AMD. Read from the headers the file includes with quotes, next to it, a few levels
deep; nothing is executed."""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Iterator

from ..cache import stat_stamp
from ..lazy_re import lazy_compile
from .lexical import quoted_include_names
from .preprocessor import directives, macro_name

MAX_DEPTH = 3
MAX_HEADERS = 24
_QUOTED = lazy_compile(r'^\s*"([^"]+)"')


MAX_ANCESTORS = 4  # "lib/arch.cuh" from include/lib/x.cuh: the include folder is a few levels up


def _quoted_includes(found, folder: str) -> list[str]:
    """The files ``#include "..."`` names: next to the includer, else below one of its
    ancestor folders (an include path such as ``-Iinclude``); the first that exists."""
    out = []
    for _first, _last, name, rest in found:
        if name != "include":
            continue
        m = _QUOTED.match(rest)
        if m:
            out.append(_resolve(folder, m.group(1)))
    return out


_RESOLVED: dict[tuple[str, str], str] = {}


def _resolve(folder: str, name: str) -> str:
    """Where ``#include "name"`` in ``folder`` lands. A header found is remembered for the
    process (one library's headers include the same few names from the same few folders);
    a missing one is looked for again, since an editor's server may see it created."""
    known = _RESOLVED.get((folder, name))
    if known is not None:
        return known
    base = folder
    for _ in range(MAX_ANCESTORS + 1):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            _RESOLVED[folder, name] = candidate
            return candidate
        base = os.path.dirname(base)
    return os.path.normpath(os.path.join(folder, name))  # missing: recorded as such


@lru_cache(maxsize=4096)
def _read_header(header: str, _mtime: int, _size: int, dead_in) -> tuple[dict[str, str], frozenset[str], tuple[str, ...]] | None:
    """(macros it defines only for NVIDIA with their #define, the others it defines, the headers it
    includes) of one header, read once per process and stat (thousands of includers share it)."""
    try:
        with open(header, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if b"__CUDA" not in data and b"__NVCC" not in data:  # no branch a hipcc build never takes: no directives
        folder = os.path.dirname(header)
        return {}, frozenset(), tuple(_resolve(folder, name) for name in quoted_include_names(data))
    found = directives(data)
    passed_over = dead_in(found)
    dead: dict[str, str] = {}
    for first, _last, name, rest in found:
        if name == "define" and rest and macro_name(rest) in passed_over:
            dead.setdefault(macro_name(rest), f"{os.path.relpath(header)}:{first + 1}")
    live = frozenset(macro_name(rest) for _f, _l, name, rest in found if name == "define" and rest) - set(dead)
    return dead, live, tuple(_quoted_includes(found, os.path.dirname(header)))


def headers_in_order(queue: list[tuple[str, int]], record=None) -> Iterator[tuple[str, int, os.stat_result]]:
    """(header, depth, stat) breadth first, each header once, at most MAX_HEADERS; the caller
    may extend ``queue`` as it goes. ``record(kind, path, value)`` notes each header read or
    missing (a result that depends on them is stored with them)."""
    seen: set[str] = set()
    while queue and len(seen) < MAX_HEADERS:
        header, depth = queue.pop(0)
        if header in seen:
            continue
        seen.add(header)
        try:
            stat = os.stat(header)
        except OSError:
            if record is not None:
                record("file", header, "False")
            continue
        if record is not None:
            record("file-content", header, stat_stamp(stat))
        yield header, depth, stat


def macros_dead_in_includes(path: str, source: bytes, dead_in, record=None) -> dict[str, str]:
    """Macros the quoted headers of ``path`` define, and only in branches the AMD build never
    takes (``dead_in(directives)`` names those of one header), never live in any of them.
    ``record(kind, path, value)`` notes each header read or missing: the result depends on it.
    Returns each such macro with the ``#define`` that was passed over (``path:line``)."""
    folder = os.path.dirname(os.path.abspath(path))
    queue = [(p, 1) for p in _quoted_includes(directives(source), folder)]
    dead: dict[str, str] = {}
    live: set[str] = set()
    for header, depth, stat in headers_in_order(queue, record):
        read = _read_header(header, stat.st_mtime_ns, stat.st_size, dead_in)
        if read is None:
            continue
        header_dead, header_live, included = read
        for name, where in header_dead.items():
            dead.setdefault(name, where)
        live |= header_live
        if depth < MAX_DEPTH:
            queue.extend((p, depth + 1) for p in included)
    return {name: where for name, where in dead.items() if name not in live}
