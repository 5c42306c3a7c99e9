"""Names a project declares itself: a function, variable, member or parameter whose name happens
to start with a library's prefix (flux's ``torch::Tensor nvshmem_create_tensor(...)`` and its
``nvshmem_team`` member) is the project's, not the library's API. Read from the file and from the
headers it includes with quotes (next to it, or below a few of its ancestor folders, as
``included_switches`` finds them), a few levels deep; each header once per process and stat."""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Callable

from ..lazy_re import lazy_compile
from .included_switches import MAX_DEPTH, _quoted_includes, headers_in_order
from .lexical import quoted_include_names

# On the name's line, before it: a type (`Tensor `, `team_t* `, `int &`), not a statement word
# (`return nvshmem_ptr(...)`); after it: what follows a declared name (`(`, `;`, `=`, `,`, `)`, `[`, `{`).
_TYPE_BEFORE = lazy_compile(rb"(?:[\w>]\s+|[*&]\s*)$")
_AFTER = lazy_compile(rb"\s*(?:/\*.*?\*/\s*)?(?:[(;=,)\[{]|$)")  # (a comment may sit between)
_MACRO_BEFORE = lazy_compile(rb"^[ \t]*#[ \t]*define[ \t]+$")
_STATEMENT_WORDS = frozenset({b"return", b"else", b"case", b"throw", b"co_return", b"co_yield", b"do", b"goto",
                              b"new", b"delete", b"sizeof", b"decltype", b"typeid", b"typedef", b"using"})
_WORD = lazy_compile(rb"\w+$")


def declares(data: bytes, name: bytes, in_code: Callable[[int], bool] | None = None) -> bool:
    """``data`` declares ``name`` (a function, variable, member, parameter or macro) somewhere,
    outside comments where ``in_code`` says so."""
    at = data.find(name)
    while at >= 0:
        end = at + len(name)
        whole = (at == 0 or not (data[at - 1:at].isalnum() or data[at - 1] == 0x5F)) and \
            (end == len(data) or not (data[end:end + 1].isalnum() or data[end] == 0x5F))
        if whole:
            line_start = data.rfind(b"\n", 0, at) + 1
            before = data[line_start:at]
            if _MACRO_BEFORE.match(before) or (_TYPE_BEFORE.search(before) and _AFTER.match(data, end)
                                               and _last_word(before) not in _STATEMENT_WORDS):
                if in_code is None or in_code(at):
                    return True
        at = data.find(name, end)
    return False


def _last_word(before: bytes) -> bytes:
    m = _WORD.search(before.rstrip(b" \t*&"))
    return m.group() if m else b""


@lru_cache(maxsize=8192)
def _header_declares(header: str, _mtime: int, _size: int, name: bytes) -> bool:
    try:
        with open(header, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return name in data and declares(data, name)


@lru_cache(maxsize=4096)
def _header_includes(header: str, _mtime: int, _size: int) -> tuple[str, ...]:
    try:
        with open(header, "rb") as fh:
            data = fh.read()
    except OSError:
        return ()
    return _included_names(data)


def _included_names(data: bytes) -> tuple[str, ...]:
    """The names ``#include "..."`` lines give."""
    return tuple(quoted_include_names(data))


def _resolve(includer: str, name: str, resolve: Callable[[str, str], str | None] | None) -> str:
    """The file an include of ``includer`` names: where ``resolve`` (the project model's include
    path) finds it, else next to the includer or below one of its ancestor folders."""
    found = resolve(includer, name) if resolve is not None else None
    if found is not None:
        return found
    return _quoted_includes([(0, 0, "include", f'"{name}"')], os.path.dirname(includer))[0]


def declared_in_includes(path: str, source: bytes, name: str, skip_prefix: str = "",
                         record: Callable[[str, str, str], None] | None = None,
                         resolve: Callable[[str, str], str | None] | None = None) -> bool:
    """One of the headers ``path`` includes with quotes (a few levels deep) declares ``name``;
    a header whose file name starts with ``skip_prefix`` (the library's own, vendored) does not
    count. ``record(kind, path, value)`` notes each header read: the answer depends on it;
    ``resolve(includer, name)`` finds an include on the project's include path (absolute paths)."""
    word = name.encode()
    path = os.path.abspath(path)
    queue = [(_resolve(path, n, resolve), 1) for n in _included_names(source)]
    for header, depth, stat in headers_in_order(queue, record):
        if skip_prefix and os.path.basename(header).lower().startswith(skip_prefix):
            continue
        if _header_declares(header, stat.st_mtime_ns, stat.st_size, word):
            return True
        if depth < MAX_DEPTH:
            queue.extend((_resolve(header, n, resolve), depth + 1)
                         for n in _header_includes(header, stat.st_mtime_ns, stat.st_size))
    return False
