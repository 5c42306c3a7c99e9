"""Positions in manifest text: character offsets of parsed values mapped to byte spans."""
from __future__ import annotations

import re

from ..lazy_re import lazy_compile
from ..model import Span


class Located:
    """The decoded text of a buffer and a char -> byte offset map (identity for ASCII)."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.text = source.decode("utf-8", errors="surrogateescape")
        self._ascii = len(self.text) == len(source)

    def byte(self, index: int) -> int:
        if self._ascii:
            return index
        return len(self.text[:index].encode("utf-8", errors="surrogateescape"))

    def span(self, start: int, end: int) -> Span:
        return Span(self.byte(start), self.byte(end))

    def find_quoted(self, value: str, start: int, end: int | None = None) -> int | None:
        """Char offset of ``value`` written as a quoted string after ``start``."""
        for quote in ('"', "'"):
            index = self.text.find(quote + value + quote, start, end)
            if index >= 0:
                return index + 1
        return None


def dotted(names: tuple[str, ...]) -> str:
    """Regex for the dotted key ``names`` as TOML writes it (each part may be quoted)."""
    return r"\s*\.\s*".join(rf"""["']?{re.escape(n)}["']?""" for n in names)


def header_pattern(names: tuple[str, ...], array: bool = False) -> re.Pattern[str]:
    """A TOML/INI table header line for the dotted key ``names``."""
    parts = dotted(names)
    brackets = (r"\[\[", r"\]\]") if array else (r"\[", r"\]")
    return re.compile(rf"^[ \t]*{brackets[0]}\s*{parts}\s*{brackets[1]}", re.MULTILINE)


_ANY_HEADER = lazy_compile(r"^[ \t]*\[", re.MULTILINE)


def table_region(text: str, names: tuple[str, ...], array: bool = False, after: int = 0) -> tuple[int, int] | None:
    """(start, end) char offsets of a table's body, from its header to the next header."""
    m = header_pattern(names, array).search(text, after)
    if m is None:
        return None
    nxt = _ANY_HEADER.search(text, m.end())
    return m.end(), nxt.start() if nxt else len(text)


def key_position(text: str, key: str, start: int, end: int, separators: str = "=") -> int | None:
    """Char offset just after ``key =`` at the start of a line inside ``[start, end)``."""
    m = re.compile(rf"""^[ \t]*["']?{re.escape(key)}["']?[ \t]*[{separators}]""", re.MULTILINE).search(text, start, end)
    return m.end() if m else None
