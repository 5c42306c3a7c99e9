"""Python string literals byte for byte: what each character of a value is written as.

A literal's value is mapped back, one character at a time, to the source bytes that
produce it (escapes, ``\\r\\n`` read as ``\\n``, f-string braces, implicit concatenation of
several tokens), and text can be written back into a token in its own style (raw or not,
its quotes, f-string braces). Run-time templates (``str.format``, ``%``,
``string.Template``) are layers on top: their fields become placeholders that map to the
whole field. Nothing here guesses: a decoded value is checked against the one ``ast``
read, and a written token is read back before it is used.
"""
from __future__ import annotations

import ast
import re
import unicodedata
import warnings
from dataclasses import dataclass, replace

from ..lazy_re import lazy_compile

# An f-string or template field in the decoded text: its value is known only at run time.
FIELD = "\0"
_TOKEN_START = lazy_compile(rb"([A-Za-z]{0,2})('''|\"\"\"|'|\")")
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t", "v": "\v"}
_OCTAL = b"01234567"
_HEX = lazy_compile(rb"[0-9A-Fa-f]+")
_PERCENT_FIELD = lazy_compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa]")
_TEMPLATE_FIELD = lazy_compile(r"\$(?:[_a-zA-Z][_a-zA-Z0-9]*|\{[_a-zA-Z][_a-zA-Z0-9]*\})")
_CONTROL = lazy_compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
LAYERS = ("format", "percent", "template")


@dataclass(frozen=True)
class Token:
    """One string token as written: ``start..end`` from its prefix to its closing quote."""

    start: int
    end: int
    body_start: int
    body_end: int
    prefix: str  # lower case: "", "r", "f", "rf", "u", ...
    quote: str  # ', ", ''' or \"\"\"

    @property
    def raw(self) -> bool:
        return "r" in self.prefix

    @property
    def fstring(self) -> bool:
        return "f" in self.prefix

    @property
    def style(self) -> tuple[str, str]:
        return ("".join(sorted(self.prefix)), self.quote)


@dataclass(frozen=True)
class Unit:
    """The smallest piece of a value with a place in the source: one character, or a
    field (``text`` is FIELD) standing for what a template puts there at run time.
    ``start..end`` are the source bytes that produce it (-1: text rocmlint adds);
    ``token`` indexes the literal's tokens (-1: none or several)."""

    text: str
    start: int
    end: int
    token: int = -1

    @property
    def field(self) -> bool:
        return self.text == FIELD


@dataclass
class Literal:
    """A string literal expression (one ast Constant or JoinedStr, maybe several tokens)."""

    node: ast.expr
    start: int
    end: int
    tokens: list[Token]
    units: list[Unit]
    exact: bool  # every unit maps to its own bytes (else all sit at the literal's start)


def read_literal(data: bytes, start: int, end: int, node: ast.expr) -> Literal | None:
    """The literal ``node`` (a str Constant or JoinedStr) whose source is ``data[start:end]``;
    None when it is not a str literal. When the decoding disagrees with ``ast`` (a case this
    reader does not know), the value is still given, every unit placed at the start."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        expected = node.value
    elif isinstance(node, ast.JoinedStr):
        expected = "".join(str(v.value) if isinstance(v, ast.Constant) else FIELD for v in node.values)
    else:
        return None
    tokens = scan_tokens(data, start, end)
    units = _decode_tokens(data, tokens) if tokens else None
    if tokens is not None and units is not None and "".join(u.text for u in units) == expected:
        return Literal(node, start, end, tokens, units, exact=True)
    return Literal(node, start, end, tokens or [], [Unit(c, start, start) for c in expected], exact=False)


def scan_tokens(data: bytes, start: int, end: int) -> list[Token] | None:
    """The string tokens of ``data[start:end]`` (whitespace, comments and backslash line
    joins between them); None when something else is there."""
    tokens = []
    i = start
    while i < end:
        byte = data[i : i + 1]
        if byte in (b" ", b"\t", b"\n", b"\r", b"\f"):
            i += 1
            continue
        if byte == b"\\" and data[i + 1 : i + 2] in (b"\n", b"\r"):
            i += 2
            continue
        if byte == b"#":
            newline = data.find(b"\n", i, end)
            i = end if newline < 0 else newline
            continue
        m = _TOKEN_START.match(data, i, end)
        if m is None:
            return None
        prefix = m.group(1).decode().lower()
        if set(prefix) - set("rfu") or len(set(prefix)) != len(prefix) or "u" in prefix and len(prefix) > 1:
            return None  # bytes, or not a literal prefix
        quote = m.group(2)
        close = _closing_quote(data, m.end(), end, quote, "f" in prefix)
        if close is None:
            return None
        tokens.append(Token(i, close + len(quote), m.end(), close, prefix, quote.decode()))
        i = close + len(quote)
    return tokens


def _closing_quote(data: bytes, i: int, end: int, quote: bytes, fstring: bool) -> int | None:
    while i < end:
        if data.startswith(quote, i):
            return i
        byte = data[i : i + 1]
        if byte == b"\\":
            i += 2
        elif fstring and byte == b"{" and data[i + 1 : i + 2] != b"{":
            field_end = _field_end(data, i, end)
            if field_end is None:
                return None
            i = field_end
        elif fstring and byte in (b"{", b"}"):
            i += 2 if data[i + 1 : i + 2] == byte else 1
        else:
            i += 1
    return None


def _field_end(data: bytes, i: int, end: int) -> int | None:
    """End of the f-string replacement field opening at ``i`` (brackets nested, strings
    inside it skipped)."""
    depth = 0
    while i < end:
        byte = data[i : i + 1]
        if byte in (b"{", b"[", b"("):
            depth += 1
        elif byte in (b"}", b"]", b")"):
            depth -= 1
            if depth == 0:
                return i + 1
        elif byte in (b"'", b'"'):
            quote = data[i : i + 3] if data[i : i + 3] in (b"'''", b'"""') else byte
            close = _closing_quote(data, i + len(quote), end, quote, False)
            if close is None:
                return None
            i = close + len(quote)
            continue
        i += 1
    return None


def _decode_tokens(data: bytes, tokens: list[Token]) -> list[Unit] | None:
    units: list[Unit] = []
    for index, token in enumerate(tokens):
        decoded = _decode_token(data, token, index)
        if decoded is None:
            return None
        units.extend(decoded)
    return units


def _decode_token(data: bytes, token: Token, index: int) -> list[Unit] | None:
    out: list[Unit] = []
    i, end = token.body_start, token.body_end

    def emit(text: str, a: int, b: int) -> None:
        out.append(Unit(text, a, b, index))

    while i < end:
        byte = data[i : i + 1]
        if byte == b"\\" and not token.raw:
            step = _escape(data, i, end)
            if step is None:
                return None
            text, length = step
            if text:
                emit(text, i, i + length)
            i += length
        elif byte == b"\r":
            length = 2 if data[i + 1 : i + 2] == b"\n" else 1
            emit("\n", i, i + length)
            i += length
        elif token.fstring and byte in (b"{", b"}"):
            if data[i + 1 : i + 2] == byte:
                emit(byte.decode(), i, i + 2)
                i += 2
            elif byte == b"}":
                return None
            else:
                field_end = _field_end(data, i, end)
                if field_end is None:
                    return None
                emit(FIELD, i, field_end)
                i = field_end
        else:
            length = _utf8_length(data[i])
            for char in data[i : i + length].decode("utf-8", "surrogateescape"):
                emit(char, i, i + length)
            i += length
    return out


def _escape(data: bytes, i: int, end: int) -> tuple[str, int] | None:
    """(text, source length) of the escape at ``i`` in a non-raw literal."""
    if i + 1 >= end:
        return None
    char = chr(data[i + 1])
    if char == "\n":
        return "", 2
    if char == "\r":
        return "", 3 if data[i + 2 : i + 3] == b"\n" else 2
    if char in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[char], 2
    if data[i + 1] in _OCTAL:
        j = i + 1
        while j < min(i + 4, end) and data[j] in _OCTAL:
            j += 1
        return chr(int(data[i + 1 : j], 8)), j - i
    widths = {"x": 2, "u": 4, "U": 8}
    if char in widths:
        digits = data[i + 2 : i + 2 + widths[char]]
        if len(digits) != widths[char] or not _HEX.fullmatch(digits):
            return None
        value = int(digits, 16)
        return (chr(value), 2 + widths[char]) if value <= 0x10FFFF else None
    if char == "N" and data[i + 2 : i + 3] == b"{":
        close = data.find(b"}", i + 3, end)
        if close < 0:
            return None
        try:
            return unicodedata.lookup(data[i + 3 : close].decode("ascii")), close + 1 - i
        except (KeyError, UnicodeDecodeError):
            return None
    return "\\", 1  # an unknown escape keeps its backslash; the next character follows


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    return 2 if lead >= 0xC0 else 1


# Run-time templates -------------------------------------------------------------------------
def apply_layer(units: list[Unit], layer: str) -> list[Unit]:
    """What ``str.format`` ("format"), ``%`` ("percent") or ``string.Template``
    ("template") make of ``units``: escaped characters collapse, fields become placeholders."""
    text = "".join(u.text if len(u.text) == 1 else FIELD for u in units)
    out: list[Unit] = []
    i = 0
    while i < len(units):
        length, produced = _layer_step(text, i, layer)
        if length == 1 and produced is None:
            out.append(units[i])
        else:
            covered = units[i : i + length]
            token = covered[0].token if all(u.token == covered[0].token for u in covered) else -1
            out.append(Unit(produced if produced is not None else FIELD, covered[0].start, covered[-1].end, token))
        i += length
    return out


def layer_text(text: str, layer: str) -> str:
    """``apply_layer`` on plain text (FIELD for each field)."""
    out = []
    i = 0
    while i < len(text):
        length, produced = _layer_step(text, i, layer)
        out.append(text[i] if length == 1 and produced is None else (produced or FIELD))
        i += length
    return "".join(out)


def _layer_step(text: str, i: int, layer: str) -> tuple[int, str | None]:
    """(characters consumed at ``i``, the character they stand for or None for a field)."""
    char = text[i]
    if layer == "format" and char in "{}":
        if text[i + 1 : i + 2] == char:
            return 2, char
        if char == "{":
            depth, j = 0, i
            while j < len(text):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                if depth == 0:
                    return j + 1 - i, None
                j += 1
        return 1, None  # unbalanced: a format error at run time; keep the character
    if layer == "percent" and char == "%":
        if text[i + 1 : i + 2] == "%":
            return 2, "%"
        m = _PERCENT_FIELD.match(text, i)
        return (m.end() - i, None) if m else (1, None)
    if layer == "template" and char == "$":
        if text[i + 1 : i + 2] == "$":
            return 2, "$"
        m = _TEMPLATE_FIELD.match(text, i)
        return (m.end() - i, None) if m else (1, None)
    return 1, None


def escape_for_layers(text: str, layers: tuple[str, ...]) -> str:
    """``text`` written so that the templates of ``layers`` give it back."""
    for layer in reversed(layers):
        if layer == "format":
            text = text.replace("{", "{{").replace("}", "}}")
        elif layer == "percent":
            text = text.replace("%", "%%")
        elif layer == "template":
            text = text.replace("$", "$$")
    return text


# Writing back --------------------------------------------------------------------------------
def escape_for_token(text: str, token: Token) -> str:
    """``text`` as the body of ``token`` writes it (the caller reads the result back)."""
    if token.fstring:
        text = text.replace("{", "{{").replace("}", "}}")
    if token.raw:
        return text
    text = text.replace("\\", "\\\\").replace("\r", "\\r")
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    quote = token.quote[0]
    if len(token.quote) == 1:
        return text.replace("\n", "\\n").replace(quote, "\\" + quote)
    # In a triple-quoted body a quote is escaped where it could close the literal: in a run
    # of three, or at the end (next to the closing delimiter).
    pattern = re.compile(re.escape(quote) + "{3,}|" + re.escape(quote) + "+$")
    return pattern.sub(lambda m: "".join("\\" + c for c in m.group()), text)


def parse_literal(source: bytes) -> ast.expr | None:
    """The string literal expression ``source`` holds (parenthesised), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(b"(\n" + source + b"\n)", mode="eval")
    except (SyntaxError, ValueError):
        return None
    body = tree.body
    return body if isinstance(body, (ast.Constant, ast.JoinedStr)) else None


def shifted(units: list[Unit], delta: int) -> list[Unit]:
    return [replace(u, start=u.start + delta, end=u.end + delta) if u.start >= 0 else u for u in units]
