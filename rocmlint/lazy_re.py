"""Regular expressions compiled on their first use.

Every rule module is imported at start-up, and a run over a Python tree never uses the
C++ rules' patterns (nor the converse): compiling them all costs each pre-commit call
about 10 ms. A lazy pattern compiles once, on the first attribute read, and then keeps
the compiled pattern's methods on itself, so later calls cost what a compiled one does.
A match's ``.re`` is the compiled pattern, not the lazy one: compare patterns by what they
matched, never by identity.
"""
from __future__ import annotations

import re
from typing import AnyStr, cast

_FORWARDED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner",
              "pattern", "flags", "groups", "groupindex")


_WAITING: list["_LazyPattern"] = []  # not compiled yet (``compile_waiting``)


class _LazyPattern:
    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self._source = (pattern, flags)
        _WAITING.append(self)

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):  # copy/pickle probes: not a use of the pattern
            raise AttributeError(name)
        return getattr(self.compile_now(), name)

    def compile_now(self) -> re.Pattern:
        compiled: re.Pattern = re.compile(self._source[0], self._source[1])
        for attribute in _FORWARDED:  # kept on the instance: later reads skip __getattr__
            setattr(self, attribute, getattr(compiled, attribute))
        return compiled

    def __repr__(self) -> str:
        return f"lazy_compile({self._source[0]!r}, {self._source[1]})"


def compile_waiting() -> None:
    """Compile every pattern not used yet: before a pool of workers is forked, so that each
    pattern is compiled once for all of them rather than once in each."""
    while _WAITING:
        pattern = _WAITING.pop()
        if "search" not in vars(pattern):
            pattern.compile_now()


def lazy_compile(pattern: AnyStr, flags: int | re.RegexFlag = 0) -> re.Pattern[AnyStr]:
    """``re.compile`` deferred to the pattern's first use."""
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, int(flags)))
