"""Literal factors of a rule's regex: strings one of which every match must contain.

``bytes.__contains__`` scans at memory speed, Python's ``re`` does not on patterns that
start with an alternation; so the prefilter first asks "does any factor occur?" and only
then runs the regex. Derived from the pattern itself, so rules declare one thing.
"""
from __future__ import annotations

import re
import sys
from typing import Iterator


if sys.version_info >= (3, 11):
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
else:  # pragma: no cover - Python 3.10
    import sre_constants as C
    import sre_parse as P

MIN_LENGTH = 3
_MAX_SET = 16
# Words in nearly every source file make poor prefilters, whatever their length.
_COMMON = {"include", "define", "import", "return", "const", "static", "struct", "template",
           "typename", "from", "self", "void", "unsigned"}


_REPEATS = tuple(getattr(C, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(C, name))


def required_literals(pattern: str, flags: int = 0) -> tuple[bytes, ...] | None:
    """A small set of byte strings such that every match contains one; None if unknown."""
    if flags & re.IGNORECASE:
        return None
    try:
        parsed = P.parse(pattern, flags)
    except re.error:
        return None
    found = _sequence(list(parsed.data))
    if not found:
        return None
    # "asm" already finds everything "__asm__" would.
    minimal = {s for s in found if not any(o != s and o in s for o in found)}
    return tuple(sorted(s.encode("latin-1") for s in minimal))


def _pure_literals(seq) -> set[str] | None:
    """Strings a sequence matches when it is only literals and literal branches."""
    out = {""}
    for op, av in seq:
        if op is C.LITERAL:
            out = {s + chr(av) for s in out}
        elif op is C.AT:
            continue
        elif op is C.IN and 0 < len(av) <= 4 and all(o is C.LITERAL for o, _ in av):
            out = {s + chr(c) for s in out for _, c in av}
        elif op is C.SUBPATTERN and not (av[1] & re.IGNORECASE):
            inner = _pure_literals(av[3])
            if inner is None:
                return None
            out = {a + b for a in out for b in inner}
        elif op is C.BRANCH:
            alts: list[set[str]] = []
            for alt in av[1]:
                pure = _pure_literals(alt)
                if pure is None:
                    return None
                alts.append(pure)
            out = {a + b for a in out for alt in alts for b in alt}
        else:
            return None
        if len(out) > _MAX_SET:
            return None
    return out


def _best(candidates: list[set[str]]) -> set[str] | None:
    good = [c for c in candidates if c and min(map(len, c)) >= MIN_LENGTH and len(c) <= _MAX_SET]
    if not good:
        return None
    return max(good, key=lambda c: (not (c & _COMMON), min(map(len, c)), -len(c)))


def _sequence(seq) -> set[str] | None:
    candidates: list[set[str]] = []
    run = {""}

    def flush():
        nonlocal run
        if run != {""}:
            candidates.append(run)
        run = {""}

    for item in seq:
        op, av = item
        pure = _pure_literals([item])
        if pure is not None and len(pure) * len(run) <= _MAX_SET:
            run = {a + b for a in run for b in pure}
            continue
        flush()
        if op is C.SUBPATTERN and not (av[1] & re.IGNORECASE):
            inner = _sequence(list(av[3]))
            if inner:
                candidates.append(inner)
        elif op is C.BRANCH:
            alt_sets = [_sequence(list(alt)) for alt in av[1]]
            alts = [alt for alt in alt_sets if alt]
            if len(alts) == len(alt_sets):
                union: set[str] = set().union(*alts)
                if len(union) <= _MAX_SET:
                    candidates.append(union)
        elif op in _REPEATS and av[0] >= 1:
            inner = _sequence(list(av[2]))
            if inner:
                candidates.append(inner)
    flush()
    return _best(candidates)


def literal_matcher(words: list[bytes], longest: bool = False, dfa: bool = False):
    """buffer -> [(word index, start)] in one Aho-Corasick pass (a regex fallback); with
    ``longest``, of words starting at one place the longest (whole identifiers); ``dfa``: a
    matcher kept for the run (faster scans, a slower build)."""
    try:
        from ahocorasick_rs import BytesAhoCorasick, Implementation, MatchKind
    except ImportError:
        ordered = sorted(words, key=len, reverse=True) if longest else words
        pattern = re.compile(b"|".join(re.escape(w) for w in ordered))
        return lambda buffer: [(words.index(m.group()), m.start()) for m in pattern.finditer(buffer)]
    options: dict = {"implementation": Implementation.DFA} if dfa else {}
    if longest:
        options["matchkind"] = MatchKind.LeftmostLongest
    automaton = BytesAhoCorasick(words, **options)
    return lambda buffer: [(index, start) for index, start, _end in automaton.find_matches_as_indexes(buffer)]


def substring_matcher(words: list[str]):
    """text -> indices of the words it holds, overlapping ones too (one Aho-Corasick pass)."""
    if not words:
        return lambda text: set()
    try:
        from ahocorasick_rs import AhoCorasick
    except ImportError:
        return lambda text: {index for index, word in enumerate(words) if word in text}
    automaton = AhoCorasick(words)
    return lambda text: {index for index, _start, _end in automaton.find_matches_as_indexes(text, overlapping=True)}


WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")  # bytes of an identifier


def starts_word(data: bytes, at: int) -> bool:
    """No identifier byte just before ``at`` (what ``\\b`` before a word means)."""
    return at == 0 or data[at - 1] not in WORD_BYTES


def whole_word(data: bytes, at: int, after: int, end: int | None = None) -> bool:
    """``data[at:after]`` (an identifier) has no identifier byte on either side; ``end``: where
    the buffer ends for this question (``\\b`` at a search's end position)."""
    end = len(data) if end is None else end
    return starts_word(data, at) and (after == end or data[after] not in WORD_BYTES)


def word_uses(words: list[bytes], source: bytes, matcher=None) -> list[tuple[int, int]]:
    """(word index, start) of each occurrence of ``words`` as a whole word (no word byte on
    either side), in one pass; ``matcher``: ``literal_matcher(words, longest=True)``, reused."""
    found = []
    for index, start in (matcher or literal_matcher(words, longest=True))(source):
        if whole_word(source, start, start + len(words[index])):
            found.append((index, start))
    return found


def iter_word_starts(data: bytes, word: bytes, start: int = 0, end: int | None = None) -> Iterator[int]:
    """Where the identifier ``word`` occurs as a whole word in ``data[start:end]`` (what
    ``re.finditer(rb"\\bword\\b", data, start, end)`` finds), by ``find``: a pattern that starts
    with ``\\b`` is tried at every byte."""
    end = len(data) if end is None else end
    at = data.find(word, start, end)
    while at >= 0:
        if whole_word(data, at, at + len(word), end):
            yield at
        at = data.find(word, at + 1, end)


def word_starts(data: bytes, word: bytes, start: int = 0, end: int | None = None) -> list[int]:
    """Every start ``iter_word_starts`` finds."""
    return list(iter_word_starts(data, word, start, end))


# Names of the run-time kernel compilers whose CUDA source strings the C++ rules read
# (rocmlint/python/embedded.py): a Python file holding none of them never pays for it.
KERNEL_SOURCE_WORDS: tuple[bytes, ...] = (b"RawKernel", b"RawModule", b"ElementwiseKernel", b"ReductionKernel",
                                          b"load_inline", b"SourceModule", b"compile_with_cache", b"_jit_fn")
