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


def _sharing_all(own: int, holder_sets: list[set[int]]) -> list[int]:
    """The other files in every one of ``holder_sets`` (smallest first); none where more than
    ``MAX_CANDIDATES`` do (the lines are an idiom: the search stops there)."""
    found = []
    for index in holder_sets[0]:
        if index != own and all(index in holders for holders in holder_sets[1:]):
            found.append(index)
            if len(found) > MAX_CANDIDATES:
                return []
    return found


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
        for copy_index in candidates:
            copy = body(copy_index)
            # an identical file is a vendored copy, each reported; a generated one adds more
            if copy is not None and len(copy) > len(source) and source in copy:
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
