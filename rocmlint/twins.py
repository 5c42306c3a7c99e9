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
_MIN_LINE_BYTES = 24  # a line long enough to say which file it comes from


def _key(data: bytes, finding) -> tuple[str, bytes]:
    line_start = data.rfind(b"\n", 0, finding.span.start) + 1
    line_end = data.find(b"\n", finding.span.start)
    return finding.code, data[line_start:line_end if line_end >= 0 else len(data)].strip()


def _read(result: "FileResult") -> bytes | None:
    try:
        return result.path.read_bytes()
    except OSError:
        return None


def _significant_lines(data: bytes) -> set[bytes]:
    return {line.strip() for line in data.splitlines() if len(line.strip()) >= _MIN_LINE_BYTES}


def drop_generated_copies(results: list["FileResult"]) -> int:
    """Drop the findings of a file that contains another file's whole text verbatim when the
    source carries the same finding; returns how many were dropped. A copy must hold every
    significant line of its source: the rarest three of those lines pick the candidates
    (an index of lines, not a comparison of every pair of files)."""
    with_findings = [r for r in results if r.findings and language_for(r.display) == "cpp"]
    if len(with_findings) < 2:
        return 0
    texts: dict[int, bytes] = {}
    lines: dict[int, set[bytes]] = {}
    postings: dict[bytes, set[int]] = defaultdict(set)
    for index, result in enumerate(with_findings):
        data = _read(result)
        if data is None:
            continue
        texts[index] = data
        lines[index] = _significant_lines(data)
        for line in lines[index]:
            postings[line].add(index)
    copies: dict[int, set[int]] = defaultdict(set)  # generated copy -> its sources
    for source_index, own in lines.items():
        source = texts[source_index].strip()
        if len(own) < 3 or len(source) < _MIN_SOURCE_BYTES:
            continue  # a tiny file is pasted everywhere by chance, not a generated copy
        rarest = sorted(own, key=lambda line: len(postings[line]))[:3]
        candidates = set.intersection(*(postings[line] for line in rarest)) - {source_index}
        for copy_index in candidates:
            copy = texts[copy_index].strip()
            # an identical file is a vendored copy, each reported; a generated one adds more
            if len(copy) > len(source) and source in copy:
                copies[copy_index].add(source_index)
    dropped = 0
    for copy_index, sources in copies.items():
        generated = with_findings[copy_index]
        source_keys = {_key(texts[s], f) for s in sources for f in with_findings[s].findings}
        kept = [f for f in generated.findings if _key(texts[copy_index], f) not in source_keys]
        dropped += len(generated.findings) - len(kept)
        generated.findings = kept
    return dropped
