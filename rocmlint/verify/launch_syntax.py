"""CUDA's launch syntax for the CPU executor, which compiles programs as plain C++.

``kernel<<<grid, block, shared, stream>>>(args)`` becomes
``::rocmlint_exec::launch("kernel", <site>, [&](auto&&... a) { kernel(a...); }, grid, block,
shared, stream)(args)``: the arguments stay where they are, the kernel is called through a
generic lambda (so template arguments are still deduced from the call), and no line is
added or removed (diagnostics and ``__LINE__`` keep their lines). Comments, strings and
character literals are skipped.
"""
from __future__ import annotations

from ..lazy_re import lazy_compile

LAUNCH_OPEN, LAUNCH_CLOSE = "<<<", ">>>"
_RAW_STRING = lazy_compile(r'R"([^()\\ ]{0,16})\(')
_IDENTIFIER_CHAR = lazy_compile(r"[A-Za-z0-9_]")
_CLOSERS = {")": "(", "]": "[", "}": "{"}


class LaunchSyntaxError(ValueError):
    """A ``<<<`` the rewrite cannot read; ``line`` is 1-based."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def code_mask(text: str) -> bytearray:
    """1 for every character of code, 0 inside comments, strings and character literals."""
    mask = bytearray(len(text))
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif char == "R" and (raw := _RAW_STRING.match(text, i)) and not _identifier_before(text, i):
            end = text.find(f"){raw.group(1)}\"", raw.end())
            i = n if end < 0 else end + len(raw.group(1)) + 2
        elif char in "\"'" and not (char == "'" and _digit_separator(text, i)):
            i = _literal_end(text, i, char)
        else:
            mask[i] = 1
            i += 1
    return mask


def _identifier_before(text: str, index: int) -> bool:
    return index > 0 and bool(_IDENTIFIER_CHAR.match(text[index - 1])) and text[index - 1] not in "uU8L"


def _digit_separator(text: str, index: int) -> bool:
    """``1'000'000``: a quote between digits is not a character literal."""
    return 0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()


def _literal_end(text: str, start: int, quote: str) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == quote or text[i] == "\n":
            return i + 1
        else:
            i += 1
    return len(text)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _skip_space_back(text: str, index: int) -> int:
    while index >= 0 and text[index].isspace():
        index -= 1
    return index


def _template_open(text: str, mask: bytearray, close: int) -> int:
    """Index of the ``<`` that opens the template arguments closed at ``close``, or -1."""
    depth = 0
    for index in range(close, -1, -1):
        if not mask[index]:
            continue
        char = text[index]
        if char in ">)]":
            depth += 1
        elif char in "<([":
            depth -= 1
            if depth == 0:
                return index if char == "<" else -1
        elif char in ";{}":
            return -1
    return -1


def _kernel_start(text: str, mask: bytearray, launch: int) -> int:
    """Start of the kernel expression before ``<<<``: ``[::]name[<args>][::name[<args>]]...``."""
    index = _skip_space_back(text, launch - 1)
    start = -1
    while index >= 0:
        if text[index] == ">":
            opening = _template_open(text, mask, index)
            if opening < 0:
                return -1
            index = _skip_space_back(text, opening - 1)
        end = index
        while index >= 0 and _IDENTIFIER_CHAR.match(text[index]) and mask[index]:
            index -= 1
        if index == end:
            return -1
        start = index + 1
        before = _skip_space_back(text, index)
        if before >= 1 and text[before - 1:before + 1] == "::":
            start = before - 1
            index = _skip_space_back(text, before - 2)
            if index < 0 or not (_IDENTIFIER_CHAR.match(text[index]) or text[index] == ">"):
                return start  # a leading ::
            continue
        return start
    return start


def _config_end(text: str, mask: bytearray, start: int) -> int:
    """Index of the ``>>>`` closing the launch configuration that begins at ``start``."""
    stack: list[str] = []
    index = start
    while index < len(text):
        if mask[index]:
            char = text[index]
            if not stack and text.startswith(LAUNCH_CLOSE, index):
                return index
            if char in "([{":
                stack.append(char)
            elif char in _CLOSERS:
                if not stack or stack.pop() != _CLOSERS[char]:
                    return -1
            elif char == ";":
                return -1
        index += 1
    return -1


def _string_literal(text: str) -> str:
    return '"' + " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"') + '"'


def rewrite_launches(text: str) -> tuple[str, int]:
    """The text with every ``<<<...>>>`` launch rewritten, and how many there were."""
    if LAUNCH_OPEN not in text:
        return text, 0
    mask = code_mask(text)
    pieces: list[str] = []
    done = 0
    count = 0
    search = 0
    while (launch := text.find(LAUNCH_OPEN, search)) >= 0:
        search = launch + len(LAUNCH_OPEN)
        if not mask[launch]:
            continue
        kernel_start = _kernel_start(text, mask, launch)
        if kernel_start < done:
            raise LaunchSyntaxError(_line_of(text, launch), "cannot read the kernel before '<<<'")
        config_end = _config_end(text, mask, launch + len(LAUNCH_OPEN))
        if config_end < 0:
            raise LaunchSyntaxError(_line_of(text, launch), "no '>>>' closes this '<<<'")
        kernel = text[kernel_start:launch]
        config = text[launch + len(LAUNCH_OPEN):config_end]
        pieces.append(text[done:kernel_start])
        pieces.append(f"::rocmlint_exec::launch({_string_literal(kernel.strip())}, ::rocmlint_exec::Site::here(), "
                      f"[&](auto&&... rocmlint_args) {{ {kernel}(rocmlint_args...); }}, {config})")
        done = search = config_end + len(LAUNCH_CLOSE)
        count += 1
    pieces.append(text[done:])
    return "".join(pieces), count
