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


def _key(data: bytes, finding) -> tuple[str, bytes]:
    line_start = data.rfind(b"\n", 0, finding.span.start) + 1
    line_end = data.find(b"\n", finding.span.start)
    return finding.code, data[line_start:line_end if line_end >= 0 else len(data)].strip()


def _read(result: "FileResult") -> bytes | None:
    try:
        return result.path.read_bytes()
    except OSError:
        return None


def drop_generated_copies(results: list["FileResult"]) -> int:
    """Drop the findings of a file that contains another file's whole text verbatim when the
    source carries the same finding; returns how many were dropped."""
    with_findings = [r for r in results if r.findings and language_for(r.display) == "cpp"]
    if len(with_findings) < 2:
        return 0
    texts: dict[int, bytes] = {}
    by_key: dict[tuple[str, bytes], list[int]] = defaultdict(list)
    for index, result in enumerate(with_findings):
        data = _read(result)
        if data is None:
            continue
        texts[index] = data
        for finding in result.findings:
            by_key[_key(data, finding)].append(index)
    copies: dict[int, set[int]] = defaultdict(set)  # generated copy -> its sources
    for holders in by_key.values():
        for a in set(holders):
            for b in set(holders):
                if a == b or b in copies[a]:
                    continue
                source, copy = texts[a].strip(), texts[b].strip()
                # an identical file is a vendored copy, each reported; a generated one adds more
                if len(source) >= _MIN_SOURCE_BYTES and len(copy) > len(source) and source in copy:
                    copies[b].add(a)
    dropped = 0
    for copy_index, sources in copies.items():
        generated = with_findings[copy_index]
        source_keys = {_key(texts[s], f) for s in sources for f in with_findings[s].findings}
        kept = [f for f in generated.findings if _key(texts[copy_index], f) not in source_keys]
        dropped += len(generated.findings) - len(kept)
        generated.findings = kept
    return dropped
