"""The lane-group model's facts (design §2c): a fact sized ``32`` or ``wave`` that one function
states (an index, a stride, a shuffle, a vote), the facts of one function, and the kinds rules
report. Read by the extraction, the verdicts (``lanegroups.py``) and the rules."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Span


G32, WAVE = "32", "wave"

SHUFFLE_KINDS = {
    "__shfl": "idx", "__shfl_sync": "idx", "__shfl_up": "up", "__shfl_up_sync": "up",
    "__shfl_down": "down", "__shfl_down_sync": "down", "__shfl_xor": "xor", "__shfl_xor_sync": "xor",
}
VOTES = frozenset({"__ballot", "__ballot_sync", "__activemask", "__any", "__any_sync", "__all", "__all_sync",
                   "__lanemask_lt", "__lanemask_le", "__lanemask_gt", "__lanemask_ge", "__lanemask_eq"})
MAX_CALL_DEPTH = 6
MAX_INCLUDE_DEPTH = 2
MAX_INCLUDED_BYTES = 2_000_000


@dataclass(frozen=True)
class Fact:
    """One thing a function assumes or does about lanes."""

    size: str  # G32 or WAVE
    kind: str  # index, stride, loop, read, width, reduction, scan, broadcast, source, vote, tile
    span: Span  # what a finding points at
    line: int  # 0-based
    text: str  # the code, for messages
    what: str  # a few words: "warp index", "reduction from offset 16", "ballot"
    function: str = ""
    # For 32-sized facts: the AMD replacement of ``span`` that moves it to the whole wave
    # (None: no mechanical one, e.g. an unrolled reduction). For mismatches: the edit that
    # makes the 32-lane group explicit (a width argument).
    wave_edit: tuple[Span, str] | None = None
    constant: str = ""  # the name whose value is 32, when the 32 comes from a constant
    origin: str = ""  # the included file it stands in ("" : this file)
    last_lane: Span | None = None  # a broadcast's source when it is lane 31 (the last of 32)
    value_from: str = ""  # a shuffle's value: the function whose result it is
    code: str = ""  # the expression itself, for messages
    feeds: Span | None = None  # a data fact: the reduction whose data it describes

    def where(self) -> str:
        place = f"{self.origin}:{self.line + 1}" if self.origin else f"line {self.line + 1}"
        return f"{place}: `{self.code}`"


@dataclass
class FunctionLanes:
    name: str
    node: object
    start: int
    end: int
    facts: list[Fact] = field(default_factory=list)
    # in the order the code makes them (a dict as an ordered set): a context lists its
    # members, and messages name its first wave-wide fact, the same way in every run
    calls: dict[str, None] = field(default_factory=dict)
    # lane variables: name -> (size, "lane" | "warp")
    variables: dict[str, tuple[str, str]] = field(default_factory=dict)
    explicit_group_32: bool = False  # cooperative-groups tiles of 32
    foreign: str = ""  # the path of the included file that defines it (its facts are reported there)
    shadows_wave_size: bool = False  # declares its own `warpSize` (a local or a parameter)
    # calls whose data width is read only if the callee reduces over 32 lanes (the call, the
    # callee, its extractor): most calls reach no such helper, and reading every one costs
    pending_data: list = field(default_factory=list)

    def has(self, size: str) -> bool:
        return any(f.size == size for f in self.facts)


# Wave-sized operations that break a 32-lane design on their own.
MISMATCH_KINDS = frozenset({"broadcast", "source", "unguarded-scan", "leader-read"})
# Facts shown by explain that no wave size changes: a 32-lane reduction of data only 32 lanes hold.
NEUTRAL_KINDS = frozenset({"bounded"})


# 32-lane members a finding points at (a ``lane == 0`` read or a tile only says the group is 32).
INDEX_KINDS = frozenset({"index", "stride", "loop", "last-lane"})  # ROC204
SHUFFLE_MEMBER_KINDS = frozenset({"width", "reduction", "scan"})  # ROC205
REPORTED_MEMBER_KINDS = INDEX_KINDS | SHUFFLE_MEMBER_KINDS
