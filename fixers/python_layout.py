"""How a Python file lays out its lines: the line length fixes must respect.

No libcst here: deciding whether a fix needs re-wrapping must not import it.
"""
from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

from rocmlint.lazy_re import lazy_compile

MIN_LINE_LENGTH = 88  # black's and ruff's default, for files whose own lines are all shorter
_OPEN_BRACKET_WITH_CONTENT = lazy_compile(r"[(\[{]\s*[^\s)\]}]")


def line_length(ctx, needed: int = 0) -> int:
    """The file's line length: ruff's or black's setting in the nearest pyproject.toml /
    ruff.toml, else the longest line a formatter could have split (no string, no comment:
    those a formatter leaves long), at least 88. The file is only read for that when a line
    of ``needed`` characters would pass the 88."""
    if "configured_length" not in ctx.cache:
        ctx.cache["configured_length"] = _configured_length(Path(ctx.path).resolve().parent)
    configured = ctx.cache["configured_length"]
    if configured:
        return configured
    if needed <= MIN_LINE_LENGTH:
        return MIN_LINE_LENGTH
    if "line_length" not in ctx.cache:
        ctx.cache["line_length"] = max(_longest_code_line(ctx.source), MIN_LINE_LENGTH)
    return ctx.cache["line_length"]


def _longest_code_line(source: bytes) -> int:
    """Longest line a formatter could have split: a bracket opens on it with something
    after, and no string or comment is on it (a formatter leaves those long). A line-by-line
    scan: tokenizing whole files cost more than building the fixes."""
    longest = 0
    open_quote = None  # the triple quote of a string spanning lines
    for line in source.decode("utf-8", errors="surrogateescape").split("\n"):
        touched = open_quote is not None
        for quote in ('"""', "'''"):
            if line.count(quote) % 2:
                if open_quote is None:
                    open_quote = quote
                elif open_quote == quote:
                    open_quote = None
        if touched or open_quote is not None or '"' in line or "'" in line or "#" in line:
            continue
        if _OPEN_BRACKET_WITH_CONTENT.search(line):  # a formatter would have split it there
            longest = max(longest, len(line))
    return longest


@lru_cache(maxsize=256)
def _configured_length(folder: Path) -> int | None:
    """``line-length`` of the nearest ruff.toml, or of pyproject's [tool.ruff] / [tool.black]
    (their default 88 when the table is there without it); searched up to the repository root."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    for directory in (folder, *folder.parents):
        for name in ("ruff.toml", ".ruff.toml", "pyproject.toml"):
            path = directory / name
            if not path.is_file():
                continue
            try:
                table = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            tool = table.get("tool", {}) if name == "pyproject.toml" else {"ruff": table}
            sections = [tool[key] for key in ("ruff", "black") if isinstance(tool.get(key), dict)]
            for section in sections:
                value = section.get("line-length")
                if isinstance(value, int) and 40 <= value <= 400:
                    return value
            if sections:
                return MIN_LINE_LENGTH
        if (directory / ".git").exists():
            break
    return None
