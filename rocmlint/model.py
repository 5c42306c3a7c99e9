"""The one data model both language halves share: byte spans, edits, fixes, findings.

Offsets are bytes into the UTF-8 buffer the engine analyses (BOM stripped); line and
column exist only for output and are computed with :class:`LineIndex`.
"""
from __future__ import annotations

import bisect
import enum
import itertools
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How far a fix may be trusted (ruff's model)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Span:
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"bad span {self.start}..{self.end}")

    def overlaps(self, other: "Span") -> bool:
        if self.start == self.end or other.start == other.end:
            # Insertions overlap only with something that strictly contains their point.
            return self.start < other.end and other.start < self.end
        return self.start < other.end and other.start < self.end

    def contains(self, offset: int) -> bool:
        return self.start <= offset < self.end


@dataclass(frozen=True)
class Edit:
    """Replace the bytes of ``span`` with ``content`` (insertion when the span is empty)."""

    span: Span
    content: str


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    title: str
    applicability: Applicability = Applicability.SAFE

    def __post_init__(self) -> None:
        object.__setattr__(self, "edits", tuple(sorted(self.edits, key=lambda e: e.span)))


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass
class Finding:
    code: str
    name: str
    path: str
    span: Span
    message: str
    fix: Fix | None = None
    severity: Severity = Severity.WARNING
    # Filled by the engine for output; 1-based.
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    # Text of the first line of the finding, kept for baselines and fingerprints.
    source_line: str = field(default="", repr=False)
    # 1-based (line, column, end_line, end_column) of each fix edit, for output.
    edit_positions: tuple[tuple[int, int, int, int], ...] = field(default=(), repr=False)
    # Why the AMD build reaches this line (project model): translation unit, #if stack.
    evidence: tuple[str, ...] = field(default=(), repr=False)
    # C-family findings: "port" (code a HIP backend is to be written from: no HIP build, or
    # --port) or "guard" (the project's HIP build compiles it); None for Python and manifests
    mode: str | None = None
    # C-family findings: macros no build file or definition decides on this line's #if path;
    # the finding holds only if the AMD build takes that path (design §2g: ask, don't allege)
    unknown_macros: tuple[str, ...] = ()
    # check --witness: (status, detail) of a wave-size finding after a run at 64 and 32 lanes
    # ("witnessed" | "not witnessed" | "not run"); None when no run was asked for
    witness: tuple[str, str] | None = None

    def sort_key(self) -> tuple:
        return (self.path, self.span.start, self.code, self.span.end)

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY


class LineIndex:
    """Byte offset <-> (line, column); columns are 1-based character counts like ruff's."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        # each line's length plus its newline, summed (no match object per newline)
        lengths = [len(line) + 1 for line in data.split(b"\n")]
        lengths.pop()  # the text after the last newline starts no further line
        starts = [0]
        starts.extend(itertools.accumulate(lengths))
        self.line_starts = starts

    def line_of(self, offset: int) -> int:
        """0-based line number containing ``offset``."""
        return bisect.bisect_right(self.line_starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset; the column counts characters."""
        line = self.line_of(offset)
        start = self.line_starts[line]
        column = len(self.data[start:offset].decode("utf-8", errors="replace")) + 1
        return line + 1, column

    def offset(self, line: int, column: int) -> int:
        """Byte offset of a 1-based (line, character column)."""
        start = self.line_starts[line - 1]
        end = self.line_end(line - 1)
        text = self.data[start:end].decode("utf-8", errors="replace")
        return start + len(text[: column - 1].encode("utf-8"))

    def line_start(self, line0: int) -> int:
        return self.line_starts[line0]

    def line_end(self, line0: int) -> int:
        """Offset just past the line's content, before its newline (``\\r\\n`` or ``\\n``)."""
        if line0 + 1 < len(self.line_starts):
            end = self.line_starts[line0 + 1] - 1
        else:
            end = len(self.data)
        if end > self.line_starts[line0] and self.data[end - 1 : end] == b"\r":
            end -= 1
        return end

    def line_text(self, line0: int) -> str:
        return self.data[self.line_starts[line0] : self.line_end(line0)].decode("utf-8", errors="replace")

    @property
    def line_count(self) -> int:
        return len(self.line_starts)


def apply_edits(data: bytes, edits: list[Edit] | tuple[Edit, ...]) -> bytes:
    """Apply non-overlapping edits (sorted or not) to a UTF-8 buffer."""
    out = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        if edit.span.start < cursor:
            raise ValueError("overlapping edits")
        out.append(data[cursor : edit.span.start])
        # Fixes copy original lines; undecodable bytes in them come back through surrogateescape.
        out.append(edit.content.encode("utf-8", errors="surrogateescape"))
        cursor = edit.span.end
    out.append(data[cursor:])
    return b"".join(out)


def finding_to_dict(f: Finding) -> dict:
    """Full-fidelity form (cache, worker results); output formats live in rocmlint/output."""
    return {
        "code": f.code, "name": f.name, "path": f.path, "span": [f.span.start, f.span.end],
        "message": f.message, "severity": f.severity.value,
        "pos": [f.line, f.column, f.end_line, f.end_column], "source_line": f.source_line,
        "edit_positions": [list(p) for p in f.edit_positions], "evidence": list(f.evidence), "mode": f.mode,
        "unknown_macros": list(f.unknown_macros),
        "fix": None if f.fix is None else {
            "title": f.fix.title, "applicability": f.fix.applicability.value,
            "edits": [[e.span.start, e.span.end, e.content] for e in f.fix.edits],
        },
    }


# by value, a dict lookup (an Enum call costs ten times more: a warm run reads thousands)
_SEVERITIES = {member.value: member for member in Severity}
_APPLICABILITIES = {member.value: member for member in Applicability}


def finding_from_dict(d: dict) -> Finding:
    fix = d["fix"]
    return Finding(
        code=d["code"], name=d["name"], path=d["path"], span=Span(*d["span"]), message=d["message"],
        severity=_SEVERITIES[d["severity"]],
        fix=None if fix is None else Fix(
            edits=tuple(Edit(Span(a, b), c) for a, b, c in fix["edits"]),
            title=fix["title"], applicability=_APPLICABILITIES[fix["applicability"]],
        ),
        line=d["pos"][0], column=d["pos"][1], end_line=d["pos"][2], end_column=d["pos"][3],
        source_line=d["source_line"], edit_positions=tuple(tuple(p) for p in d["edit_positions"]),
        evidence=tuple(d.get("evidence", ())), mode=d.get("mode"),
        unknown_macros=tuple(d.get("unknown_macros", ())),
    )


class ParseFailure(Exception):
    """The file cannot be analysed at all (reported as ROC001)."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.span = span
