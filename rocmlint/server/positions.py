"""Byte offsets into the engine's UTF-8 buffer <-> LSP positions (line, character).

The engine counts bytes of UTF-8 (``rocmlint.model``); a client counts characters in the
position encoding agreed at start-up: UTF-16 code units unless the client offered
UTF-8 or UTF-32 (LSP 3.17 ``positionEncoding``). Lines end at ``\\n``, ``\\r\\n`` or ``\\r``
(the LSP's three), so a lone ``\\r`` starts a line here as it does in the editor.
"""
from __future__ import annotations

import bisect

from ..lazy_re import lazy_compile

_LINE_END = lazy_compile(rb"\r\n|\r|\n")
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def encode_text(text: str) -> bytes:
    """The UTF-8 bytes of an editor's text (a lone surrogate from JSON survives)."""
    return text.encode("utf-8", errors="surrogatepass")


def decode_bytes(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogatepass")


def _units(text: str, encoding: str) -> int:
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(encode_text(text))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class LineMap:
    """Positions of one UTF-8 buffer (the whole document, BOM included) in ``encoding``."""

    def __init__(self, data: bytes, encoding: str = UTF16) -> None:
        self.data = data
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _LINE_END.finditer(data)]

    def _line_end(self, line: int) -> int:
        """Offset of the line's end, before its line break."""
        if line + 1 >= len(self.starts):
            return len(self.data)
        end = self.starts[line + 1]
        if self.data[end - 2:end] == b"\r\n":
            return end - 2
        return end - 1

    def position(self, offset: int) -> tuple[int, int]:
        """(line, character) of a byte offset, both 0-based."""
        offset = max(0, min(offset, len(self.data)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return line, _units(decode_bytes(self.data[start:min(offset, self._line_end(line))]), self.encoding)

    def offset(self, line: int, character: int) -> int:
        """Byte offset of a (line, character); past the end of a line is its end, past the
        last line is the end of the document (as the LSP says a client may send)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.data)
        start, end = self.starts[line], self._line_end(line)
        if self.encoding == UTF8:
            return min(start + max(character, 0), end)
        text = decode_bytes(self.data[start:end])
        count = 0
        for index, ch in enumerate(text):
            if count >= character:
                return start + len(encode_text(text[:index]))
            count += 1 if (self.encoding == UTF32 or ord(ch) <= 0xFFFF) else 2
        return end

    @property
    def line_count(self) -> int:
        return len(self.starts)
