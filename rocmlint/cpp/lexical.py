"""Where a C-family file has comments and string literals, from the text alone (no parse).

Rules that read the text rather than the tree (ROC301-ROC303) must not take
``//#include <mma.h>`` or a commented-out ``asm volatile(...)`` for code.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from typing import Iterator

from ..lazy_re import lazy_compile
# (re-exported: the C++ half reads words through this module)
from ..literals import WORD_BYTES as WORD_BYTES, iter_word_starts, starts_word as starts_word

# One alternation, left to right, so a `//` inside a string or a `"` inside a comment is
# read as part of the enclosing token. Line comments continue over a backslash-newline.
# Every alternative starts with a literal character, which keeps ``re`` fast; the block
# comment and the literals are unrolled (a run of plain bytes at a time, not an alternation
# per byte: a quarter faster); raw strings (rare, and costly to try at every position)
# get their own pattern.
_COMMENTS_AND_LITERALS = (
    rb"//[^\n]*(?:(?:(?<=\\)|(?<=\\\r))\n[^\n]*)*"
    rb"|/\*[^*]*(?:\*+[^*/][^*]*)*(?:\*+/|\**\Z)"
    rb"|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\""
    rb"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
)
_NOT_CODE = lazy_compile(_COMMENTS_AND_LITERALS, re.DOTALL)
_NOT_CODE_RAW = lazy_compile(rb"(?:u8|[uUL])?R\"([^()\\\s\"]{0,16})\(.*?\)\1\"|" + _COMMENTS_AND_LITERALS,
                             re.DOTALL)

_BLANK = bytes(byte if byte in b"\r\n" else 0x20 for byte in range(256))  # a span's bytes to spaces, line breaks kept


def blank(text: bytes) -> bytes:
    """``text`` as spaces, its line breaks kept (same length, same lines)."""
    return text.translate(_BLANK)


def blank_non_code(source: bytes) -> bytes:
    """``source`` with its comments and literals blanked: same offsets and lines, so a plain
    ``find`` or ``finditer`` reads code only (cheaper than asking ``NonCode`` of each hit)."""
    parts = non_code_parts(source)
    return _blank_each(_NOT_CODE_RAW, source) if parts is None else blank_parts(parts)


def non_code_parts(source: bytes) -> list[bytes] | None:
    """``source`` cut at its comments and literals: code, comment or literal, code, ... (None
    for a buffer with raw strings or NUL bytes: ``blank_non_code`` reads those one match at a time)."""
    if b'R"' in source or b"\0" in source:
        return None
    return _NOT_CODE_SPLIT.split(source)


def blank_parts(parts: list[bytes]) -> bytes:
    """The buffer of ``non_code_parts`` with its comments and literals blanked."""
    if len(parts) == 1:
        return parts[0]
    parts = list(parts)
    parts[1::2] = b"\0".join(parts[1::2]).translate(_BLANK_KEEP_NUL).split(b"\0")
    return b"".join(parts)


# Each pattern as one group: ``split`` hands back the matches between the code, and they are
# blanked in one ``translate`` (a CUTLASS header has thousands of comments: no Python call each).
_NOT_CODE_SPLIT = lazy_compile(b"(" + _COMMENTS_AND_LITERALS + b")", re.DOTALL)
_BLANK_KEEP_NUL = bytes(byte if byte in b"\r\n\0" else 0x20 for byte in range(256))


def _blank_all(pattern: "re.Pattern[bytes]", data: bytes) -> bytes:
    """``data`` with every match of ``pattern`` (one group around it all) blanked."""
    if b"\0" in data:  # the separator of blank_parts: one call per match instead
        return _blank_each(pattern, data)
    return blank_parts(pattern.split(data))


def _blank_each(pattern: "re.Pattern[bytes]", data: bytes) -> bytes:
    """``data`` with every match of ``pattern`` blanked, one call per match (the slow path)."""
    return pattern.sub(lambda m: blank(m.group()), data)


# A line start is found after a newline (the buffer gets one in front): a literal first byte
# keeps ``re`` at memchr speed, where a MULTILINE `^` is tried at every byte (3x slower).
_DIRECTIVE_LINES = lazy_compile(rb"(\n[ \t]*#[^\n]*(?:(?:(?<=\\)|(?<=\\\r))\n[^\n]*)*)")
_QUOTED_INCLUDE = lazy_compile(rb'\n[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"')


def blank_directives(code: bytes) -> bytes:
    """``code`` with its preprocessor lines (and their continuation lines) blanked."""
    return _blank_all(_DIRECTIVE_LINES, b"\n" + code)[1:]


def quoted_include_names(data: bytes) -> list[str]:
    """The names of a buffer's ``#include "..."`` lines, in order (a commented-out one too)."""
    return [name.decode("utf-8", "replace") for name in _QUOTED_INCLUDE.findall(b"\n" + data)]


def word_matches(pattern: "re.Pattern[bytes]", data: bytes) -> Iterator["re.Match[bytes]"]:
    """``re.finditer(rb"\\b" + pattern)`` for a pattern that starts with a word, by a scan of
    ``pattern`` itself (one that starts with \\b is tried at every byte; one that starts with
    a literal skips ahead): a match inside a word is dropped and the scan goes on after its
    first byte, so a word start it covered is still found."""
    pos = 0
    while (m := pattern.search(data, pos)) is not None:
        if starts_word(data, m.start()):
            yield m
            pos = m.end()
        else:
            pos = m.start() + 1


def has_word(data: bytes, word: bytes) -> bool:
    """``re.search(rb"\\b" + word + rb"\\b", data)`` for an identifier ``word``, by ``find``."""
    return next(iter_word_starts(data, word), None) is not None


class NonCode:
    """Sorted spans of comments and string/character literals of one buffer, found as far
    as the queries reach (a host file asked about a few early offsets is not read whole)."""

    def __init__(self, source: bytes, parts: list[bytes] | None = None) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self._known_below = 0  # every span starting below this offset is in starts/ends
        self._matches: Iterator[re.Match[bytes]] | None = None
        if parts is not None:  # all of them at once, from the ends of the parts (``non_code_parts``)
            bounds = list(accumulate(map(len, parts)))
            self.starts, self.ends = bounds[:-1:2], bounds[1::2]
            return
        pattern = _NOT_CODE_RAW if b'R"' in source else _NOT_CODE
        self._matches = pattern.finditer(source)

    def covers(self, offset: int) -> bool:
        """Whether ``offset`` lies inside a comment or a literal."""
        return self.covering(offset) is not None

    def covering(self, offset: int) -> int | None:
        """The start of the comment or literal holding ``offset``, or None in code."""
        if offset >= self._known_below and self._matches is not None:
            self._read_past(offset)
        index = bisect_right(self.starts, offset) - 1
        return self.starts[index] if index >= 0 and offset < self.ends[index] else None

    def _read_past(self, offset: int) -> None:
        assert self._matches is not None
        for match in self._matches:
            start, end = match.span()
            self.starts.append(start)
            self.ends.append(end)
            if end > offset:  # the next span starts at or after `end`
                self._known_below = end
                return
        self._matches = None  # all read
