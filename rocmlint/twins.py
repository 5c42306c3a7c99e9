"""Generated copies: a header whose whole text a build script pastes into a generated header
that is checked in beside it (an amalgamated umbrella) is one piece of code in two files.
Its findings are reported once, on the source, where the fix belongs."""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from .languages import language_for

if TYPE_CHECKING:
    from .engine import FileResult

_MIN_SOURCE_BYTES = 64  # a tiny file is pasted everywhere by chance, not a generated copy


MAX_CANDIDATES = 16  # a finding line more files share is a common idiom, not a pasted file


def _line_key(finding) -> tuple[str, str]:
    return finding.code, finding.source_line.strip()


def _key(data: bytes, finding) -> tuple[str, bytes]:
    line_start = data.rfind(b"\n", 0, finding.span.start) + 1
    line_end = data.find(b"\n", finding.span.start)
    return finding.code, data[line_start:line_end if line_end >= 0 else len(data)].strip()


def _read(result: "FileResult") -> bytes | None:
    try:
        return result.path.read_bytes()
    except OSError:
        return None


_NEAR = 16  # slack around the place a pasted text should start (a byte-order mark read off one of them)
_MOST_PLACES = 32


def _starts_near(copy: bytes, source: bytes, start: int) -> bool:
    """``source`` starts in ``copy`` within ``_NEAR`` bytes of ``start`` (its head is found
    first: a search for the whole text would first read all of it, on every try)."""
    head = source[:64]
    at = copy.find(head, max(0, start - _NEAR), start + _NEAR + len(head))
    while at >= 0:
        if copy.startswith(source, at):
            return True
        at = copy.find(head, at + 1, start + _NEAR + len(head))
    return False


def _offsets_into(source_findings, lead: int) -> dict[tuple[str, str], list[int]]:
    """Each finding line of a source -> how far into its stripped text (``lead`` blank bytes
    cut off its start) the findings on that line stand."""
    into: dict[tuple[str, str], list[int]] = defaultdict(list)
    for finding in source_findings:
        into[_line_key(finding)].append(finding.span.start - lead)
    return into


def _pasted(source: bytes, into: dict[tuple[str, str], list[int]], copy: bytes, copy_findings) -> bool:
    """``source`` (stripped) appears in ``copy`` where a finding of the copy on the same line as
    one of the source's (``into``: ``_offsets_into``) says it would start (a pasted copy carries
    the source's findings at the same distances): a search near a few places instead of
    through the whole copy."""
    tried: set[int] = set()
    for finding in copy_findings:
        for offset in into.get(_line_key(finding), ()):
            start = max(0, finding.span.start - offset)
            if start // _NEAR in tried:
                continue
            if len(tried) == _MOST_PLACES:
                return source in copy  # a finding line repeated all over: search it all
            tried.add(start // _NEAR)
            if _starts_near(copy, source, start):
                return True
    return False


def _sharing_all(own: int, holder_sets: list[set[int]]) -> set[int]:
    """The other files in every one of ``holder_sets`` (smallest first, so no intersection is
    larger than it); none where more than ``MAX_CANDIDATES`` are (the lines are an idiom)."""
    found = holder_sets[0].intersection(*holder_sets[1:]) if len(holder_sets) > 1 else set(holder_sets[0])
    found.discard(own)
    return found if len(found) <= MAX_CANDIDATES else set()


def drop_generated_copies(results: list["FileResult"]) -> int:
    """Drop the findings of a file that contains another file's whole text verbatim when the
    source carries the same finding; returns how many were dropped. A copy carries every
    finding line of its source: only files that share all of them, and are larger, are read
    (a finding line that many files share is an idiom, not a paste: none are read for it)."""
    with_findings = [r for r in results if r.findings and language_for(r.display) == "cpp"]
    if len(with_findings) < 2:
        return 0
    holders: dict[tuple[str, str], set[int]] = defaultdict(set)
    keys: dict[int, set[tuple[str, str]]] = {}
    for index, result in enumerate(with_findings):
        keys[index] = {_line_key(f) for f in result.findings}
        for key in keys[index]:
            holders[key].add(index)
    texts: dict[int, bytes | None] = {}
    stripped: dict[int, bytes] = {}

    def text(index: int) -> bytes | None:
        if index not in texts:
            texts[index] = _read(with_findings[index])
        return texts[index]

    def body(index: int) -> bytes | None:  # the text without its outer blank space, made once
        if index not in stripped:
            data = text(index)
            if data is None:
                return None
            stripped[index] = data.strip()
        return stripped[index]

    copies: dict[int, set[int]] = defaultdict(set)  # generated copy -> its sources
    for source_index, own in keys.items():
        candidates = _sharing_all(source_index, sorted((holders[key] for key in own), key=len))
        if not candidates:
            continue
        source = body(source_index)
        if source is None or len(source) < _MIN_SOURCE_BYTES:
            continue  # a tiny file is pasted everywhere by chance, not a generated copy
        raw = text(source_index) or b""
        into = _offsets_into(with_findings[source_index].findings, len(raw) - len(raw.lstrip()))
        for copy_index in candidates:
            copy = body(copy_index)
            # an identical file is a vendored copy, each reported; a generated one adds more
            if copy is not None and len(copy) > len(source) and _pasted(
                    source, into, text(copy_index) or b"", with_findings[copy_index].findings):
                copies[copy_index].add(source_index)
    dropped = 0
    for copy_index, sources in copies.items():
        generated = with_findings[copy_index]
        data = text(copy_index) or b""
        source_keys = {_key(text(s) or b"", f) for s in sources for f in with_findings[s].findings}
        kept = [f for f in generated.findings if _key(data, f) not in source_keys]
        dropped += len(generated.findings) - len(kept)
        generated.findings = kept
    return dropped
