"""The lane-group model (design §2c): which lane-group size each kernel assumes, which
operations act on the whole wavefront, and where the two disagree.

For every function the model records *facts*, each sized ``32`` or ``wave``:

- lane and warp indices: ``threadIdx.x % 32``, ``& 31``, ``/ 32``, ``>> 5`` (or a name whose
  value is 32) are 32-lane groups; ``% warpSize``, ``__lane_id()`` are wave-sized;
- lane strides and lane loops (``i += 32``, ``d < 32``), reads of one lane (``lane == 0``);
- shuffles: an explicit width (32, or ``warpSize``), a width-less reduction whose offsets
  cover 32 lanes (from 16) or the whole wave (from ``warpSize / 2``), broadcasts from a
  fixed lane, sources computed per 32 lanes, ``__shfl_up`` scans and their guards;
- votes (``__ballot``, ``__any``, ``__all``, ``__activemask``), which span the whole wave.

A *context* is a root function (a kernel, or a function nothing in the file calls) with
the functions it calls. A context is consistent when its facts agree: 32-lane groups
throughout (a logical 32-lane warp, correct on wave64: lanes 0 and 32 each hold their own
half's result) or the whole wave throughout. Where they disagree:

- a *mismatch* (ROC208) is an operation that breaks a 32-lane design on a 64-lane wave by
  itself: a width-less broadcast from a fixed lane, a source lane computed per 32, an
  unguarded ``__shfl_up`` scan, a lane-0 read of a 32-lane reduction;
- otherwise the 32-lane members are reported (ROC204 for indices, strides and constants,
  ROC205 for reductions and widths), naming the wave-wide fact they disagree with; a
  helper that is consistent with some of its callers is not blamed for another caller.

Facts inside branches that select on the wave size (``__GFX9__``, ``warpSize == 64``, ...)
and on NVIDIA-only lines are not recorded, nor those of a function that declares its own
``warpSize`` (``int warpSize = 32;`` in a port: the name is its variable, not the wave). 32 as data (a tile, a row, 32 banks, bits of a
word) is judged by name (``constant_uses.name_says``) and by what the index feeds.
"""
from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Iterator

from ..cache import stat_stamp
from ..model import Span
from .active_lanes import first_32_lanes_only
from .dataflow import (call_arguments, callee_name, declared_identifier, flow_for, function_declarator,
                       parameter_declarations)
from .device_code import has_device_code, names_project_macro
from .full_masks import shifted_mask
from .markers import WAVE_OPERATIONS
from .lexical import WORD_BYTES, has_word, word_matches

if TYPE_CHECKING:
    from .context import CppContext

G32, WAVE = "32", "wave"

SHUFFLE_KINDS = {
    "__shfl": "idx", "__shfl_sync": "idx", "__shfl_up": "up", "__shfl_up_sync": "up",
    "__shfl_down": "down", "__shfl_down_sync": "down", "__shfl_xor": "xor", "__shfl_xor_sync": "xor",
}
VOTES = frozenset({"__ballot", "__ballot_sync", "__activemask", "__any", "__any_sync", "__all", "__all_sync",
                   "__lanemask_lt", "__lanemask_le", "__lanemask_gt", "__lanemask_ge", "__lanemask_eq"})
_TILE = re.compile(rb"\b(?:tiled_partition|thread_block_tile)\s*<\s*(\w+)\s*>")
_WAVE_LANE_TEXT = re.compile(r"__lane_id\s*\(|\b__builtin_amdgcn_mbcnt|%\s*warpSize\b|&\s*\(\s*warpSize\s*-\s*1\s*\)")
_THREAD_TEXT = re.compile(r"\bthreadIdx\b|\bthread_rank\s*\(")
_BLOCK_OF_32 = re.compile(rb"\(*(?:blockDim\.x==32|32==blockDim\.x)\)*")
# `threadIdx.x < 32 ? a : b`: a value chosen by which half of a 64-lane wavefront a lane is in
_HALF_SELECT = re.compile(rb"(?:threadIdx\.x|\blane\w*|__lane_id\s*\(\s*\))\s*(?:<|>=)\s*32\s*\?")
_WAVE_SIZE_TERM = re.compile(rb"\bwarpSize\b|(?i:warp_?size|wave_?size|wavefront_?size)|__AMDGCN_WAVEFRONT_SIZE")
_LANE_TERM = re.compile(rb"\bthreadIdx\b|(?i:\blane|\btid\b)|__lane_id")
# A block's size: `blockSize >= 2 * warpSize` picks code by the block, on any wave size.
_BLOCK_TERM = re.compile(rb"\bblockDim\b|(?i:block_?size|threads_?per_?block|block_?threads)")
_COMPARISON = re.compile(rb"==|!=|<|>")


def _selects_wave_size(condition: bytes) -> bool:
    """A condition that compares a wave size with a number or another size (not a lane, not
    a block's size)."""
    return _WAVE_SIZE_TERM.search(condition) is not None and _COMPARISON.search(condition) is not None \
        and _LANE_TERM.search(condition) is None and _BLOCK_TERM.search(condition) is None
# Words in a function's text that make it worth modelling (the rest have no lane facts).
_RELEVANT = re.compile(rb"threadIdx|__lane_id|__shfl|__ballot|__any|__all|__activemask|warpSize|lane|Lane|LANE"
                       rb"|warp|Warp|WARP|tid\b|thread_rank")
# Index arithmetic: operator -> (literal meaning 32-lane groups, what it computes).
_INDEX_OPERATORS = {"%": ("32", "lane"), "&": ("31", "lane"), "/": ("32", "warp"), ">>": ("5", "warp")}
_WAVE_INDEX_OPERATORS = {"%": "lane", "/": "warp"}
_COMPARE = frozenset({"==", "!=", "<", "<=", ">", ">="})
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


@dataclass
class Context:
    """A root function and everything it calls (in this file)."""

    root: FunctionLanes
    members: list[FunctionLanes]

    def facts(self) -> Iterator[Fact]:
        for member in self.members:
            if member.shadows_wave_size:  # its `warpSize` is its own variable, not the wave
                continue
            for fact in member.facts:
                # data passed to a call counts where the callee reduces it over 32 lanes
                if fact.kind != "data" or not fact.value_from or fact.value_from in self._reducers_32:
                    yield fact

    @cached_property
    def _reducers_32(self) -> frozenset[str]:
        return frozenset(m.name for m in self.members
                         if any(f.size == G32 and f.kind in SHUFFLE_MEMBER_KINDS for f in m.facts))

    @cached_property
    def sized_32(self) -> list[Fact]:
        return [f for f in self.facts() if f.size == G32 and f.kind not in NEUTRAL_KINDS]

    @cached_property
    def wave_structure(self) -> list[Fact]:
        """Wave-wide facts that make the context a wave-sized design (mismatches aside): votes,
        reads by one lane of a wavefront, shuffles over or from the whole wavefront. A wave-sized
        index alone is none (``lane = threadIdx.x % warpSize`` read at lanes 0 and 32 keeps
        32-lane groups), nor is ``threadIdx.x == 0`` (blocks of 32 x N threads)."""
        return [f for f in self.facts() if f.size == WAVE and f.kind not in MISMATCH_KINDS and f.kind != "index"]

    @cached_property
    def mismatches(self) -> list[Fact]:
        if not self.sized_32:
            return []
        return [f for f in self.facts() if f.kind in MISMATCH_KINDS]

    @property
    def consistent(self) -> bool:
        return not self.mismatches and not (self.sized_32 and self.wave_structure)

    def groups_of_32(self) -> list[Fact]:
        """The facts that make this a 32-lane design, for messages (indices first)."""
        order = {"index": 0, "tile": 1, "width": 2, "reduction": 3, "scan": 4}
        return sorted(self.sized_32, key=lambda f: (order.get(f.kind, 5), f.line))


# Wave-sized operations that break a 32-lane design on their own.
MISMATCH_KINDS = frozenset({"broadcast", "source", "unguarded-scan", "leader-read"})
# Facts shown by explain that no wave size changes: a 32-lane reduction of data only 32 lanes hold.
NEUTRAL_KINDS = frozenset({"bounded"})


class FileLanes:
    """The lane-group model of one file (``lane_groups(ctx)``)."""

    def __init__(self, ctx: "CppContext", depth: int = 0, origin: str = "") -> None:
        self.ctx = ctx
        self.functions: list[FunctionLanes] = []
        by_name: dict[str, list[FunctionLanes]] = {}
        relevant, unread = _function_nodes(ctx)
        # Functions without lane text are not modelled; one that calls a modelled function
        # hides part of a group from its callers (``group_fix_edits``).
        self._unread: dict[str, list[Any]] = {}
        for node in unread:
            self._unread.setdefault(function_name(ctx, node), []).append(node)
        for node in relevant:
            function = _Extractor(ctx, node, origin).run()
            if function is None:
                continue
            self.functions.append(function)
            by_name.setdefault(function.name, []).append(function)
        # Helpers this file calls but an included file defines (a `.inc` of warp reductions):
        # they join the callers' contexts; their own facts are reported where they stand.
        unresolved = {name for f in self.functions for name in f.calls} - set(by_name)
        if unresolved and depth < MAX_INCLUDE_DEPTH:
            for included in _included_files(ctx, depth + 1, unresolved):
                for function in included.helpers(depth + 1):
                    if function.name in unresolved:
                        by_name.setdefault(function.name, []).append(function)
        self.by_name = by_name
        reducers = {name for name, functions in by_name.items()
                    if any(f.size == G32 and f.kind in SHUFFLE_MEMBER_KINDS for fn in functions for f in fn.facts)}
        for function in self.functions:
            for call, callee, extractor in function.pending_data:
                if callee in reducers:
                    extractor.data_into_call(call, callee)
            function.pending_data = []
        called = {name for f in self.functions for name in f.calls if name in by_name and name != f.name}
        roots = [f for f in self.functions if f.name not in called] or list(self.functions)
        if depth == 0:  # an included file's helpers have a caller: the file in hand
            for function in self.functions:
                if function.name not in called:
                    _read_contract(ctx, function)
        self.contexts = [Context(root, self._closure(root)) for root in roots]
        # Functions reached from no root (call cycles) are their own context.
        reached = {id(m) for c in self.contexts for m in c.members}
        self.contexts += [Context(f, self._closure(f)) for f in self.functions if id(f) not in reached]
        self.contexts_of: dict[int, list[Context]] = {}
        for context in self.contexts:
            for member in context.members:
                self.contexts_of.setdefault(id(member), []).append(context)

    def helpers(self, depth: int) -> list[FunctionLanes]:
        """Every function of this (included) file, marked foreign."""
        for function in self.functions:
            function.foreign = self.ctx.path
        return self.functions

    def _closure(self, root: FunctionLanes) -> list[FunctionLanes]:
        seen = {id(root): root}
        frontier = [root]
        for _ in range(MAX_CALL_DEPTH):
            following = []
            for function in frontier:
                for name in function.calls:
                    for callee in self.by_name.get(name, ()):
                        if id(callee) not in seen:
                            seen[id(callee)] = callee
                            following.append(callee)
            frontier = following
        return list(seen.values())

    def function_at(self, offset: int) -> FunctionLanes | None:
        best = None
        for function in self.functions:
            if function.start <= offset < function.end and (best is None or function.start >= best.start):
                best = function
        return best

    # --- judgement --------------------------------------------------------------------
    def exempt(self, function: FunctionLanes) -> bool:
        """A helper consistent with one of its callers: the other callers disagree with it,
        not it with them."""
        contexts = self.contexts_of.get(id(function), [])
        return len(contexts) > 1 and any(c.consistent for c in contexts)

    @cached_property
    def verdicts(self) -> list["LaneVerdict"]:
        """Every disagreement of the file, each fact once: mismatches (ROC208) and the
        32-lane members of wave-sized contexts (ROC204 / ROC205)."""
        out: list[LaneVerdict] = []
        seen: set[tuple[str, Span]] = set()

        def add(verdict: LaneVerdict) -> None:
            key = (verdict.fact.kind, verdict.fact.span)
            if key not in seen:
                seen.add(key)
                out.append(verdict)

        for context in self.contexts:
            if not context.sized_32 and context.wave_structure:
                # no 32-lane groups: a read of lane 31 means the last lane, which is 63 on gfx9
                for fact in context.facts():
                    if fact.last_lane is not None and not fact.origin:
                        add(LaneVerdict(fact, context, "last-lane"))
            if context.consistent:
                continue
            for fact in context.mismatches:
                if not fact.origin:
                    add(LaneVerdict(fact, context, "mismatch"))
            if not context.wave_structure:
                continue
            blamed = [(fact, member) for member in context.members
                      if not self.exempt(member) and not member.shadows_wave_size
                      for fact in member.facts if fact.size == G32 and fact.kind in REPORTED_MEMBER_KINDS]
            for fact, member in blamed:
                if not member.foreign:
                    add(LaneVerdict(fact, context, "member"))
            if not blamed:
                # the 32-lane side is a helper other callers use consistently: this caller's
                # wave-wide reads are what disagree
                for fact in context.wave_structure:
                    if fact.kind == "read" and fact.function == context.root.name:
                        add(LaneVerdict(fact, context, "wave-read"))
        return out

    def group_fix_edits(self, context: Context) -> list[tuple[Span, str]] | None:
        """The edits that move every 32-lane member of ``context`` to the whole wave at once
        (None when one of them has no mechanical form: the group cannot move piecemeal)."""
        edits = []
        if self._hides_members(context) or any(member.shadows_wave_size for member in context.members):
            return None  # part of the group is not known
        for member in context.members:
            for fact in member.facts:
                if fact.size != G32 or fact.kind not in REPORTED_MEMBER_KINDS | {"tile", "slot-loop", "warp-start"}:
                    continue
                if member.foreign or fact.wave_edit is None:
                    return None  # another file, or no mechanical form
                edits.append(fact.wave_edit)
        return sorted(set(edits)) or None

    def _hides_members(self, context: Context) -> bool:
        """A member calls a function of this file the model did not read (no lane text) that
        calls, at any depth through such functions, one it did read: what that path passes
        (a shuffle width by default argument, a lane count) is not known, so the group is
        not known whole (HeCBench collision: a sort's swap helper reaches a shuffle whose
        width defaults to 32)."""
        source = self.ctx.source
        seen: set[str] = set()
        todo = [name for member in context.members for name in member.calls if name in self._unread]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for node in self._unread[name]:
                called = {m.group(1).decode() for m in _CALLED_WORD.finditer(source, node.start_byte, node.end_byte)}
                called.discard(name)
                if called & self.by_name.keys():
                    return True
                todo.extend(called & self._unread.keys())
        return False

    def explain(self, line: int) -> list[str]:
        """The lane-group facts of the function at ``line`` and of its contexts."""
        offset = self.ctx.lines.line_start(line)
        function = self.function_at(offset)
        if function is None or not function.facts:
            return []
        out = [f"lane groups of `{function.name}` (line {self.ctx.line_of(function.start) + 1}):"]
        contexts = self.contexts_of.get(id(function), [])
        for fact in function.facts:
            if fact.kind == "data" and fact.value_from and \
                    not any(fact.value_from in context._reducers_32 for context in contexts):
                continue  # data passed to a call that reduces nothing over 32 lanes
            out.append(f"  {fact.size:>4}: {fact.what} (line {fact.line + 1}: `{fact.code}`)")
        for context in contexts:
            verdict = "consistent" if context.consistent else "INCONSISTENT"
            sizes = sorted({f.size for f in context.facts()})
            out.append(f"  in `{context.root.name}` and what it calls: {verdict} (sizes: {', '.join(sizes) or 'none'})")
            if not context.consistent:
                for fact in context.groups_of_32()[:3]:
                    out.append(f"    32 lanes: {fact.what} ({fact.function}, {fact.where()})")
                for fact in (context.mismatches + context.wave_structure)[:3]:
                    out.append(f"    wave-wide: {fact.what} ({fact.function}, {fact.where()})")
        return out


# 32-lane members a finding points at (a ``lane == 0`` read or a tile only says the group is 32).
INDEX_KINDS = frozenset({"index", "stride", "loop", "last-lane"})  # ROC204
SHUFFLE_MEMBER_KINDS = frozenset({"width", "reduction", "scan"})  # ROC205
REPORTED_MEMBER_KINDS = INDEX_KINDS | SHUFFLE_MEMBER_KINDS


@dataclass(frozen=True)
class LaneVerdict:
    """A reported disagreement: ``kind`` is "mismatch" (ROC208: a wave-wide operation in a
    32-lane design), "member" (a 32-lane member of a wave-sized design: ROC204/ROC205),
    "wave-read" (ROC208: a caller reads a 32-lane helper's result as the wave's) or
    "last-lane" (ROC204: lane 31 read as the last lane of a wave-sized design)."""

    fact: Fact
    context: Context
    kind: str

    @property
    def fixable(self) -> bool:
        """A mismatch's fix (width 32) makes the 32-lane group explicit; where the kernel's
        32-lane members are moving to the wavefront instead (it has wave-wide structure),
        that fix would pull the other way: none is offered."""
        return self.kind != "mismatch" or not self.context.wave_structure

    def message(self) -> str:
        fact, context = self.fact, self.context
        if self.kind == "member":
            side, effect = disagreement(context, fact)
            return f"`{fact.code}` ({fact.what}) assumes 32-lane warps, but {side}: {effect}"
        if self.kind == "last-lane":
            return (f"{fact.what} reads lane 31 as the last lane, but {other_side(context, fact)}: "
                    "the last lane of a 64-lane wavefront is 63")
        group = describe_group(context, fact)
        if self.kind == "wave-read":
            return (f"`{fact.code}` ({fact.what}) reads the whole wavefront's result, but {group}: "
                    "on a 64-lane wavefront lanes 32-63 hold the other half's")
        return (f"{fact.what} spans the whole wavefront, but {group}: on a 64-lane wavefront lanes 32-63 "
                "read the first group's lanes")


_WAVE_OPERATION_TEXT = re.compile(b"|".join(WAVE_OPERATIONS))
_CALLED_WORD = re.compile(rb"\b(\w+)\s*\(")
# What can make a lane group wave-sized (``_value_size``, ``_index_of``, ``_WAVE_LANE_TEXT``):
# a wave-wide operation or lane index, the wave size, or a constant worth 64 (see _defines_64).
_WAVE_SIZED_WORDS = WAVE_OPERATIONS + (b"__lane_id", b"__builtin_amdgcn", b"__AMDGCN_WAVEFRONT_SIZE", b"warpSize",
                                       b"tiled_partition", b"thread_block_tile")
_WAVE_SIZED_TEXT = re.compile(b"|".join(_WAVE_SIZED_WORDS))  # what _may_be_wave_sized finds by one DFA pass
_WAVEFRONT_SIZE_TEXT = re.compile(rb"(?i)wave_?front_?size")
# A macro body that is the wave size (``_value_size`` reads a warp-named 64 so too).
_WAVE_SIZE_BODY = r"warpSize|(?i:wave_?front_?size)|__AMDGCN_WAVEFRONT_SIZE|^[(\s]*64[uUlL]*[)\s]*$"
# explain shows the lane facts of any file that may hold some, consistent or not.
_LANE_TEXT = re.compile(b"|".join(WAVE_OPERATIONS) + rb'|__lane_id|\bwarpSize\b|tiled_partition|thread_block_tile'
                        rb'|#\s*include\s*"')


def may_hold_lane_facts(ctx: "CppContext") -> bool:
    return _LANE_TEXT.search(ctx.source) is not None


def needs_lane_model(ctx: "CppContext") -> bool:
    """Whether a lane group of the file can be wave-sized; else every group is of 32 lanes
    (or unknown) and no verdict can stand. A group is wave-sized only through text: a
    wave-wide operation, the wave size or a constant worth 64 in this file, a macro of the
    project whose body is one of those, a ``#define`` under a wave-size ``#if``, or a file
    it includes with quotes (a helper with a shuffle or vote joins its callers; a header's
    constants are read MAX_INCLUDE_DEPTH deep). And the file must hold device code
    (``has_device_code``)."""
    source = ctx.source
    if not has_device_code(ctx):
        return False  # lanes exist only in device code: a host file's `tid % 64` is no lane group
    if _may_be_wave_sized(source):
        return True
    if any(ctx.pp.wave_size_aware(line) for defs in ctx.pp.defines.values() for line, _value in defs):
        return True
    if _names_wave_size_macro(ctx):
        return True
    level = [(path, _header_flags(path, stat)) for path, stat in _own_includes(ctx)]
    if any(flags.shuffles_or_votes for _path, flags in level):
        return True
    for depth in range(1, MAX_INCLUDE_DEPTH + 1):
        if any(flags.may_be_wave_sized for _path, flags in level):
            return True
        if depth == MAX_INCLUDE_DEPTH:
            break
        # a header's quoted includes, NVIDIA-only lines too: more files, never fewer
        level = [(path, _header_flags(path, stat)) for includer, flags in level
                 for path, stat in _quoted_includes(ctx, includer, list(flags.quoted_includes))]
    return False


@dataclass(frozen=True)
class _HeaderFlags:
    """What the lane-group pre-check needs of a header: kept per run instead of its bytes."""

    shuffles_or_votes: bool
    may_be_wave_sized: bool
    quoted_includes: tuple[str, ...]


_HEADER_FLAGS: dict[tuple[str, int, int], _HeaderFlags] = {}
_QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


def _header_flags(path: str, stat: os.stat_result) -> _HeaderFlags:
    key = (path, stat.st_mtime_ns, stat.st_size)
    flags = _HEADER_FLAGS.get(key)
    if flags is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            data = b""
        flags = _HeaderFlags(_WAVE_OPERATION_TEXT.search(data) is not None, _may_be_wave_sized(data),
                             tuple(m.group(1).decode("utf-8", "replace") for m in _QUOTED_INCLUDE.finditer(data)))
        if len(_HEADER_FLAGS) > 8192:
            _HEADER_FLAGS.clear()
        _HEADER_FLAGS[key] = flags
    return flags


def _may_be_wave_sized(source: bytes) -> bool:
    found = {index < len(_WAVE_SIZED_WORDS) for index, _start in _wave_sized_words()(source)}
    if True in found or (False in found and _WAVEFRONT_SIZE_TEXT.search(source) is not None):
        return True
    return _defines_64(source)


# The wave-sized words, then "ront" in every case (inside every _WAVEFRONT_SIZE_TEXT match):
# one Aho-Corasick pass decides most files (CUTLASS: 0.4 s of regex scans)
_RONT = tuple(bytes(ch - 32 if up else ch for ch, up in zip(b"ront", bits))
              for bits in itertools.product((False, True), repeat=4))


@lru_cache(maxsize=1)
def _wave_sized_words():
    from ..literals import literal_matcher

    return literal_matcher(list(_WAVE_SIZED_WORDS + _RONT), dfa=True)


def _defines_64(source: bytes) -> bool:
    """A ``#define`` or ``const`` definition (``constant_value``) whose value may be 64."""
    return b"64" in source and (_constant_64(source) or _DEFINE_64.search(source) is not None)


def _constant_64(source: bytes) -> bool:
    """``const(?:expr)?\\b[^;{}()=]*[={][\\s(]*64[uUlL]*\\b`` matches (loose before the
    keyword: a pre-check), found from the value back to the keyword: a forward scan tries
    every `const` of the file (thousands in a CUTLASS header), values of 64 are few."""
    for m in _VALUE_64.finditer(source):
        at = m.start()
        run_start = max([source.rfind(stop, 0, at) for stop in _STOPS]) + 1
        if _CONST_WORD.search(source, run_start, at) is not None:
            return True
    return False


_VALUE_64 = re.compile(rb"[={][\s(]*64[uUlL]*\b")
_CONST_WORD = re.compile(rb"const(?:expr)?\b")
_STOPS = (b";", b"{", b"}", b"(", b")", b"=")  # what the run between keyword and value never holds
_DEFINE_64 = re.compile(rb"define[ \t]+\w+[ \t]+[( \t]*64[uUlL]*\b")  # a literal start: a fast scan


def _names_wave_size_macro(ctx: "CppContext") -> bool:
    """The file names a macro the project defines as the wave size (or as 64)."""
    return names_project_macro(ctx, _WAVE_SIZE_BODY)


def lane_groups(ctx: "CppContext") -> FileLanes:
    model = ctx.cache.get("lane-groups")
    if model is None:
        model = ctx.cache["lane-groups"] = FileLanes(ctx)
    return model


def _at(fact: Fact, other: Fact) -> str:
    """Where ``fact`` stands, for a message about ``other``."""
    place = f"{fact.origin}:{fact.line + 1}" if fact.origin else f"line {fact.line + 1}"
    if fact.function and fact.function != other.function:
        place += f" in `{fact.function}`"
    return f"{place} (`{fact.code}`)"


def other_side(context: Context, fact: Fact) -> str:
    """A phrase naming what a blamed member disagrees with."""
    return disagreement(context, fact)[0]


def disagreement(context: Context, fact: Fact) -> tuple[str, str]:
    """What a blamed member disagrees with (the data it folds where they come from the whole
    wavefront, else the first wave-wide fact), and what goes wrong on gfx9."""
    data = data_feeding(context, fact)
    if data is not None:
        return f"it folds {data.what}", "64 lanes on gfx9, and lane 0's result misses lanes 32-63"
    wave = context.wave_structure or context.mismatches
    if not wave:
        return "", ""
    first = wave[0]
    if first.kind == "contract":
        return first.what, "on gfx9 it combines each 32-lane half of the wavefront on its own"
    return (f"{first.what} at {_at(first, fact)} spans the whole wavefront (64 lanes on gfx9)",
            "on gfx9 the two halves of each wavefront disagree")


# --- helper contracts ------------------------------------------------------------------
# A helper's name or comment that promises a whole warp's (wavefront's) result.
_GROUP_WORDS = frozenset({"warp", "wave", "wavefront", "subgroup"})
_RESULT_WORDS = frozenset({"sum", "max", "min", "reduce", "reduction", "allreduce", "all", "any", "scan", "prefix",
                           "broadcast", "bcast", "prod", "product", "argmax", "argmin"})
_NAME_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_DOC_GROUP = re.compile(r"(?i)\b(?:warp|wave ?front|wave)s?\b")
_DOC_RESULT = re.compile(r"(?i)\b(?:sum|max(?:imum)?|min(?:imum)?|reduc\w*|all|any|scan|prefix|broadcasts?)\b")
_DOC_32 = re.compile(r"\b32\b|(?i:\bhalf\b)")
_SPELLED_32 = frozenset({"index", "tile", "stride", "loop", "width"})


def _read_contract(ctx, function: FunctionLanes) -> None:
    """A device helper that reduces or scans over 32 lanes with no caller in view (this file
    or the files that include it), no width of its own (a parameter, a template argument, a
    tile) and a name or comment that promises a whole warp's result (``warp_sum``, "Max
    across the warp") is read per wavefront, as its future callers will: a wave-wide
    "contract" fact its 32-lane members disagree with. Where callers are visible, they
    decide; a helper that spells its own 32-lane groups (a lane index, "32 lanes") is left."""
    members = [f for f in function.facts if f.size == G32 and f.kind in ("reduction", "scan")]
    if not members or function.shadows_wave_size or function.explicit_group_32 or function.foreign or \
            any(f.size == WAVE or f.kind in _SPELLED_32 for f in function.facts):
        return  # its own lane indices, widths or tiles spell out the group it means
    node: Any = function.node
    declarator = function_declarator(node)
    if declarator is None or b"__global__" in ctx.source[node.start_byte:declarator.start_byte]:
        return  # a kernel is launched, not read per warp
    promise = _promise(ctx, node, function.name)
    if promise is None or _states_width(ctx, node):
        return
    from .call_sites import call_sites

    sites = call_sites(ctx, function.name, Span(function.start, function.end))
    if sites.sites or not sites.complete:
        return
    name = declarator.child_by_field_name("declarator") or declarator
    span = Span(name.start_byte, name.end_byte)
    line = ctx.line_of(span.start)
    function.facts.append(Fact(WAVE, "contract", span, line, ctx.lines.line_text(line).strip(),
                               f"{promise} promises a whole warp's result, and nothing in view calls it "
                               "with a narrower one (no caller, no width parameter)", function.name,
                               code=ctx.node_text(name)))


def _promise(ctx, node, name: str) -> str | None:
    """What promises a whole warp's result: the name (``warpReduceSum``), else the comment
    just above the definition ("Sum of v across the warp"); None where either says 32."""
    tokens = {t.lower() for t in _NAME_TOKENS.findall(name)}
    if tokens & {"32", "half"}:
        return None  # `half_wave_sum`, `warp32_max`: the name states a 32-lane contract
    outer = node.parent if node.parent is not None and node.parent.type == "template_declaration" else node
    doc = []
    line = ctx.line_of(outer.start_byte) - 1
    while line >= 0:
        text = ctx.lines.line_text(line).strip()
        if not text.startswith(("//", "/*", "*")) and not text.endswith("*/"):
            break
        doc.append(text)
        line -= 1
    comment = " ".join(reversed(doc))
    if _DOC_32.search(comment):
        return None  # "sum over 32 lanes", "each half": the comment states a 32-lane contract
    if tokens & _GROUP_WORDS and tokens & _RESULT_WORDS:
        return f"the name `{name}`"
    if _DOC_GROUP.search(comment) and _DOC_RESULT.search(comment):
        words = comment.lstrip("/* ").split()
        shown = " ".join(words[:10]) + (" ..." if len(words) > 10 else "")
        return f"the comment above `{name}` (\"{shown}\")"
    return None


def _states_width(ctx, node) -> bool:
    """A parameter (of the function or its template) that a shuffle's lane, offset or width,
    or the header of a loop around a shuffle, reads: the helper's group size is its callers'
    to choose (``template <int width>``, ``int width = 32``)."""
    names = set(_parameter_names(ctx, node))
    outer = node.parent if node.parent is not None and node.parent.type == "template_declaration" else None
    if outer is not None:
        parameters = outer.child_by_field_name("parameters")
        for parameter in parameters.named_children if parameters is not None else ():
            identifier = next((c for c in ctx.descendants(parameter, {"identifier", "type_identifier"})
                               if c.parent == parameter), None)
            if identifier is not None:
                names.add(ctx.node_text(identifier))
    if not names:
        return False
    read = []
    for call in ctx.descendants(node, {"call_expression"}):
        name = callee_name(ctx, call)
        if name not in SHUFFLE_KINDS:
            continue
        args = call_arguments(call)
        read += [ctx.node_text(a) for a in args[(1 if name.endswith("_sync") else 0) + 1:]]
        loop = ctx.ancestor(call, {"for_statement"})
        while loop is not None and loop.start_byte >= node.start_byte:
            read += [ctx.node_text(part) for part in (loop.child_by_field_name("initializer"),
                                                      loop.child_by_field_name("condition")) if part is not None]
            loop = ctx.ancestor(loop, {"for_statement"})
    words = {w for text in read for w in re.findall(r"[A-Za-z_]\w*", text)}
    return bool(words & names)


def data_feeding(context: Context, fact: Fact) -> Fact | None:
    """The wave-wide data fact of ``context`` that ``fact`` (a 32-lane reduction) folds."""
    if fact.kind not in SHUFFLE_MEMBER_KINDS:
        return None
    return next((f for f in context.wave_structure if f.kind == "data" and
                 (f.feeds == fact.span and f.function == fact.function or f.value_from == fact.function)), None)


def describe_group(context: Context, fact: Fact) -> str:
    members = context.groups_of_32()
    if not members:
        return ""
    # the reduction whose result this operation reads, where the code says so; else the
    # operation's own function
    first = next((m for m in members if fact.value_from and m.function == fact.value_from),
                 next((m for m in members if m.function == fact.function), members[0]))
    return f"{first.what} at {_at(first, fact)} makes 32-lane groups"


@dataclass(frozen=True)
class ShuffleWrapper:
    """``#define SHFL_UP(v, d) __shfl_up(v, d, 32)``: params and the shuffle's arguments."""

    shuffle: str
    params: tuple[str, ...]
    arguments: tuple[str, ...]
    defined_at: str = ""  # `line 4` or `shfl.h:4`: named in the fact, whose text the call site hides

    def drops(self, index: int) -> bool:
        """Whether parameter ``index`` never reaches the shuffle (a *_sync mask a HIP shim drops)."""
        return index < len(self.params) and self.params[index] not in self.arguments


_WRAPPER = re.compile(r"(\w+)\s*\(([^)]*)\)\s+(__shfl\w*)\s*\(([^()]*)\)\s*;?\s*$")


def shuffle_wrappers(ctx, depth: int = 0) -> dict[str, ShuffleWrapper]:
    """Function-like macros of this file or a file it includes that expand to one shuffle."""
    found = ctx.cache.get("shuffle-wrappers")
    if found is not None:
        return found
    found = {}
    if depth < MAX_INCLUDE_DEPTH:
        for included in included_files(ctx):
            if b"__shfl" in included.data and b"define" in included.data:
                found.update(shuffle_wrappers(included.ctx, depth + 1))
    for first, _last, name, rest in _directives(ctx):
        if name != "define" or "__shfl" not in rest or ctx.pp.nvidia_only(first):
            continue
        m = _WRAPPER.match(rest.strip())
        if m is None or m.group(3) not in SHUFFLE_KINDS:
            continue
        params = tuple(p.strip() for p in m.group(2).split(",") if p.strip())
        arguments = tuple(a.strip() for a in m.group(4).split(","))
        where = f"line {first + 1}" if depth == 0 else f"{ctx.path.rsplit('/', 1)[-1]}:{first + 1}"
        found[m.group(1)] = ShuffleWrapper(m.group(3), params, arguments, where)
    ctx.cache["shuffle-wrappers"] = found
    return found


def _directives(ctx):
    """The file's directives (parsed once per context)."""
    found = ctx.cache.get("directives")
    if found is None:
        from .preprocessor import directives

        found = ctx.cache["directives"] = directives(ctx.source) if b"__shfl" in ctx.source else []
    return found


class IncludedFile:
    """A file included with quotes: its bytes, and a context only when something in them
    is worth one (most lookups are settled by a byte search)."""

    def __init__(self, path: str, data: bytes, settings) -> None:
        self.path, self.data, self._settings = path, data, settings

    @cached_property
    def ctx(self) -> "CppContext":
        from .context import CppContext

        return CppContext(self.path, self.data, self._settings)

    @cached_property
    def has_wave_operation(self) -> bool:
        return _WAVE_OPERATION_TEXT.search(self.data) is not None

    @cached_property
    def called_words(self) -> frozenset[str]:
        """Every word followed by ``(`` (what ``\\bNAME\\s*\\(`` finds for a one-word NAME)."""
        return frozenset(m.decode("utf-8", "replace") for m in _CALLED_WORD.findall(self.data))


_INCLUDED: dict[tuple[str, int, int], IncludedFile] = {}


def included_files(ctx) -> list[IncludedFile]:
    """The files this one includes with quotes (next to it, or where the project model
    resolves them), read once per run (keyed by path and stat). The file in hand records
    each one's stamp: its results depend on their bytes (cache facts)."""
    found = ctx.cache.get("included-files")
    if found is not None:
        return found
    found = []
    for path, stat in _own_includes(ctx):
        key = (path, stat.st_mtime_ns, stat.st_size)
        included = _INCLUDED.get(key)
        if included is None:
            try:
                with open(path, "rb") as handle:
                    included = IncludedFile(path, handle.read(), ctx.settings)
            except OSError:
                continue
            if len(_INCLUDED) > 256:
                _INCLUDED.clear()
            _INCLUDED[key] = included
        found.append(included)
    ctx.cache["included-files"] = found
    return found


def _own_includes(ctx) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of the files this one includes with quotes on lines the AMD build may
    compile (resolved once per file: the pre-check and the model both ask)."""
    found = ctx.cache.get("own-includes")
    if found is None:
        headers = [header for line, header in ctx.pp.includes
                   if not ctx.pp.nvidia_only(line) and '"' in ctx.lines.line_text(line)]
        found = ctx.cache["own-includes"] = list(_quoted_includes(ctx, ctx.path, headers))
    return found


def _quoted_includes(ctx, includer: str, headers: list[str]) -> Iterator[tuple[str, os.stat_result]]:
    """(path, stat) of each of ``headers`` an #include in ``includer`` reaches (next to it, from
    the project's top, or as the model resolves it); each stamp, or absence, is recorded for
    the file in hand (its results depend on them)."""
    here = os.path.dirname(os.path.abspath(includer))
    for header in headers:
        path = os.path.normpath(os.path.join(here, header))
        if not os.path.isfile(path) and ctx.project is not None:  # "src/common.h" from the top
            rooted = os.path.normpath(os.path.join(str(ctx.project.root), header))
            path = rooted if os.path.isfile(rooted) else path
        if not os.path.isfile(path) and ctx.model is not None:
            rel = ctx.model.rel(includer)
            resolved = ctx.model.resolve_include(rel, header) if rel is not None else None
            path = os.path.join(str(ctx.model.root), resolved) if resolved else path
        try:
            stat = os.stat(path)
            if stat.st_size > MAX_INCLUDED_BYTES or os.path.samefile(path, includer):
                continue
        except OSError:
            if ctx.project is not None:  # a header that may appear later changes the result
                ctx.project.record("file", path, "False")
            continue
        if ctx.project is not None:
            ctx.project.record("file-content", path, stat_stamp(stat))
        yield path, stat


def _included_files(ctx, depth: int, names: set[str]) -> list["FileLanes"]:
    """The lane models of the files this one includes with quotes that define one of the
    helpers ``names`` and hold a shuffle or a vote (the others cannot change a verdict)."""
    out = []
    words = {n for n in names if n and frozenset(n.encode()) <= WORD_BYTES}
    others = sorted(names - words)  # `ns::f`: searched for as written
    spelled = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in others) + rb")\s*\(") if others else None
    for included in included_files(ctx):
        if not included.has_wave_operation:
            continue
        if not (words & included.called_words or (spelled is not None and spelled.search(included.data))):
            continue
        header = included.ctx
        lanes = header.cache.get("lane-groups")
        if lanes is None:
            lanes = header.cache["lane-groups"] = FileLanes(header, depth, os.path.basename(included.path))
        out.append(lanes)
    return out


# --- extraction ---------------------------------------------------------------------
def _function_nodes(ctx) -> tuple[list, list]:
    """The file's function definitions: (those with lane text, the others)."""
    relevant: list = []
    others: list = []
    for node in ctx.descendants(ctx.root, {"function_definition"}):
        (relevant if _RELEVANT.search(ctx.source, node.start_byte, node.end_byte) else others).append(node)
    return relevant, others


def _parameter_names(ctx, function) -> set[str]:
    """The names a function definition's parameters declare (``int warpSize = 32`` declares
    ``warpSize``; ``unsigned width = warpSize`` declares ``width``)."""
    declarator = function_declarator(function)
    names = set()
    for parameter in parameter_declarations(declarator) if declarator is not None else ():
        name = declared_identifier(parameter.child_by_field_name("declarator"))
        if name is not None:
            names.add(ctx.node_text(name))
    return names


def function_name(ctx, node) -> str:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in ("identifier", "field_identifier",
                                                             "qualified_identifier", "destructor_name",
                                                             "operator_name"):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return ""
    return ctx.node_text(declarator).split("::")[-1]


class _Extractor:
    """Reads one function's lane facts."""

    def __init__(self, ctx, node, origin: str = "") -> None:
        self.ctx = ctx
        self.node = node
        self.origin = origin
        self.name = function_name(ctx, node)
        self.flow = flow_for(ctx, node.child_by_field_name("body") or node)
        self.out = FunctionLanes(self.name, node, node.start_byte, node.end_byte)

    def run(self) -> FunctionLanes | None:
        ctx, node = self.ctx, self.node
        body = node.child_by_field_name("body")
        if body is None:
            return None
        for m in _TILE.finditer(ctx.source, node.start_byte, node.end_byte):
            if ctx.nvidia_only(m.start()):
                continue
            tile = m.group(1).decode()
            value = tile if tile.isdigit() else constant_value(ctx, tile) or ""
            if value == "32":
                self.out.explicit_group_32 = True
                self._add(G32, "tile", Span(m.start(), m.end()), "a cooperative-groups tile of 32")
            elif value == "64" or "warpSize" in value:
                self._add(WAVE, "tile", Span(m.start(), m.end()), f"a cooperative-groups tile of {value}")
        self._classify_variables(body)
        if _HALF_SELECT.search(ctx.source, node.start_byte, node.end_byte):
            self.half_aware = True  # picks values by half of a 64-lane wavefront: wave64 by design
        # the whole definition but its signature: a constructor's initialiser list counts
        declarator = node.child_by_field_name("declarator")
        signature = (declarator.start_byte, declarator.end_byte) if declarator is not None else (0, 0)
        for item in ctx.descendants(node, {"binary_expression", "assignment_expression", "call_expression"}):
            if signature[0] <= item.start_byte < signature[1]:
                continue
            if item.type == "call_expression":
                self._call(item)
            elif item.type == "binary_expression":
                self._binary(item)
            else:
                self._assignment(item)
        self._slot_loops(body)
        self.out.shadows_wave_size = "warpSize" in self.flow.declarations or "warpSize" in _parameter_names(ctx, node)
        return self.out

    def _slot_loops(self, body) -> None:
        """A loop over the per-warp slots (``sums[warp] = v; ... for (i = 0; i < n; ++i) s +=
        sums[i];``) whose bound is none of the group's members: how many slots it reads
        follows the group size in a way the model cannot see, so moving the group would
        leave it reading slots no warp wrote. A member with no mechanical form: no fix."""
        ctx = self.ctx
        warps = {name for name, (size, role) in self.out.variables.items() if size == G32 and role == "warp"}
        if not warps:
            return
        slots = set()
        for sub in ctx.descendants(body, {"subscript_expression"}):
            array, index = sub.child_by_field_name("argument"), sub.child_by_field_name("index") or \
                next((c for c in sub.named_children[1:]), None)
            if array is not None and index is not None and ctx.node_text(index).strip("[] ") in warps:
                slots.add(ctx.node_text(array))
        if not slots:
            return
        members = [f.span for f in self.out.facts if f.size == G32]
        for loop in ctx.descendants(body, {"for_statement"}):
            condition = loop.child_by_field_name("condition")
            if condition is None or any(condition.start_byte <= m.start < condition.end_byte for m in members):
                continue
            start = loop.child_by_field_name("initializer")
            counter = re.match(r"\s*(?:[\w:<>]+\s+)*?(\w+)\s*=", ctx.node_text(start)) if start is not None else None
            if counter is None:
                continue
            text = ctx.node_text(loop)  # a slot read by the loop's counter, not slot[0] inside any loop
            if any(re.search(rf"(?<![\w.]){re.escape(name)}\s*\[\s*{counter.group(1)}\s*\]", text) for name in slots):
                self._add(G32, "slot-loop", Span(condition.start_byte, condition.end_byte),
                          "a loop over the per-warp slots with a bound the lane groups do not set")

    # helpers ------------------------------------------------------------------------
    half_aware = False

    def _unreached(self, offset: int) -> bool:
        """NVIDIA-only, or in a branch chosen by wave size."""
        ctx = self.ctx
        return ctx.nvidia_only(offset) or ctx.wave_size_aware(offset) or \
            any(start <= offset < end for start, end in self._selected_branches)

    def _skipped(self, offset: int) -> bool:
        """No fact is recorded here."""
        return self.half_aware or not self.ctx.in_code(offset) or self._unreached(offset)

    @cached_property
    def _selected_branches(self) -> list[tuple[int, int]]:
        """Branches chosen by the wave size (``if (warpSize == 64)``, ``if (width ==
        physical_warp_size())``, ``if constexpr (kWave == 64)``): code that already picks by
        wave size. And ``if (blockDim.x == 32)``: code about a 32-thread block."""
        ctx = self.ctx
        text = ctx.source[self.node.start_byte:self.node.end_byte]
        if _WAVE_SIZE_TERM.search(text) is None and b"blockDim" not in text:
            return []
        out = []
        for node in ctx.descendants(self.node, {"if_statement", "conditional_expression"}):
            condition = node.child_by_field_name("condition")
            if condition is None:
                continue
            words = ctx.source[condition.start_byte:condition.end_byte]
            if _BLOCK_OF_32.fullmatch(re.sub(rb"\s+", b"", words)) or _selects_wave_size(words):
                out.append((condition.end_byte, node.end_byte))
        return out

    def _add(self, size: str, kind: str, span: Span, what: str, *, wave_edit=None, constant: str = "",
             last_lane: Span | None = None, value_from: str = "", feeds: Span | None = None) -> Fact | None:
        ctx = self.ctx
        if self._skipped(span.start):
            return None
        line = ctx.line_of(span.start)
        text = ctx.lines.line_text(line).strip()
        node = ctx.root.named_descendant_for_byte_range(span.start, span.end)
        while node is not None and node.type in ("number_literal", "identifier", "field_identifier") and \
                node.parent is not None and node.parent.type not in ("argument_list", "compound_statement"):
            node = node.parent  # `% 32` alone says less than `threadIdx.x % 32`
        code = ctx.node_text(node) if node is not None and node.end_byte - node.start_byte < 120 else text
        fact = Fact(size, kind, span, line, text, what, self.name, wave_edit, constant, self.origin, last_lane,
                    value_from, " ".join(code.split()), feeds)
        if (fact.span, feeds, value_from) not in {(f.span, f.feeds, f.value_from) for f in self.out.facts
                                                  if f.kind == kind}:
            self.out.facts.append(fact)
        return fact

    def _classify_variables(self, body) -> None:
        """Lane and warp variables: ``int lane = threadIdx.x & 31;`` and the like."""
        ctx = self.ctx
        values: dict[str, list] = {}
        for name, decls in self.flow.declarations.items():
            values.setdefault(name, []).extend(v for _, _, v in decls if v is not None)
        for name, assigns in self.flow.assignments.items():
            values.setdefault(name, []).extend(v for _, v in assigns)
        for _ in range(3):  # chains: lane = tid & 31; l2 = lane; ...
            for name, nodes in values.items():
                if name in self.out.variables:
                    continue
                for value in nodes:
                    found = self._index_of(value)
                    if found is not None:
                        self.out.variables[name] = found
                        break
                    if value.type == "identifier" and ctx.node_text(value) in self.out.variables:
                        self.out.variables[name] = self.out.variables[ctx.node_text(value)]
                        break

    def _index_of(self, node) -> tuple[str, str] | None:
        """(size, lane|warp) of an index expression, or None."""
        ctx = self.ctx
        while node is not None and node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        if node is None:
            return None
        if node.type == "call_expression" and callee_name(ctx, node) == "__lane_id":
            return WAVE, "lane"
        if node.type == "identifier":
            return self.out.variables.get(ctx.node_text(node))
        if node.type != "binary_expression":
            return None
        operator = ctx.node_text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or operator not in _INDEX_OPERATORS:
            return None
        source = self._source_of(left)
        if source is None:
            return None
        if source == "wave-lane":
            return None  # layout inside a wavefront (MFMA tiles): not a group size
        size = _divisor_size(ctx, operator, right)
        if size is None:
            return None
        return size, _INDEX_OPERATORS[operator][1]

    def _source_of(self, node) -> str | None:
        """``"thread"`` for a thread index, ``"wave-lane"`` for a lane of the wavefront
        (``__lane_id()``, ``% warpSize``), None otherwise."""
        ctx = self.ctx
        text = ctx.node_text(node)
        if _WAVE_LANE_TEXT.search(text):
            return "wave-lane"
        if node.type == "identifier":
            known = self.out.variables.get(text)
            if known is not None:
                return "wave-lane" if known == (WAVE, "lane") else None if known[1] == "warp" else "lane"
        if _THREAD_TEXT.search(text) or self.flow.holds_index(node):
            return "thread"
        return None

    # facts --------------------------------------------------------------------------
    def _binary(self, node) -> None:
        ctx = self.ctx
        operator_node = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator_node is None or left is None or right is None:
            return
        operator = ctx.node_text(operator_node)
        if operator in _INDEX_OPERATORS:
            self._index_fact(node, operator, left, right)
        elif operator in _COMPARE:
            self._compare_fact(node, operator, left, right)
        elif operator == "*":
            self._warp_start_fact(left, right)

    def _warp_start_fact(self, left, right) -> None:
        """``warp * 32`` for a warp index of 32-lane groups: the warp's first thread, which
        must move with the index (``base = tid / 32; first = base * 32``). Not reported on
        its own; a group fix that left it would point every warp at the wrong first lane."""
        from .constant_uses import name_says

        ctx = self.ctx
        for warp, size in ((left, right), (right, left)):
            known = self.out.variables.get(ctx.node_text(warp)) if warp.type == "identifier" else None
            text = ctx.node_text(size).strip("() ")
            # 32 or a name that says warp size (not MAXDEPTH = 32: a per-warp stack of 32 entries)
            if known == (G32, "warp") and (text == "32" or name_says(text) == "warp") and \
                    _value_size(ctx, text) == G32:
                span = Span(size.start_byte, size.end_byte)
                self._add(G32, "warp-start", span, "the first thread of a 32-lane warp", wave_edit=(span, "warpSize"))
                return

    def _index_fact(self, node, operator: str, left, right) -> None:
        ctx = self.ctx
        role = _INDEX_OPERATORS[operator][1]
        block = role == "warp" and _BLOCK_SIZE_TEXT.fullmatch(ctx.node_text(left)) is not None
        source = "block" if block else self._source_of(left)
        if source not in ("thread", "lane", "block") or _data_named(ctx, node):
            return
        size = _divisor_size(ctx, operator, right)
        if size is None or (size == G32 and _selected_tile_size(ctx, right)):
            return
        if role == "lane" and _subscript(node):
            return  # tile[threadIdx.x % 32][...]: a column of data (a per-warp slot is `/ 32`)
        what = "warps per block" if block else "lane index" if role == "lane" else "warp index"
        span = Span(node.child_by_field_name("operator").start_byte, right.end_byte)
        constant = ctx.node_text(right) if right.type == "identifier" else ""
        wave_edit = None
        if size == G32:
            # `% 32`, `& 31`, `/ WS`, `& (WS - 1)`: the same operation on warpSize
            divisor = ctx.node_text(right).strip("()").strip()
            wave_edit = (span, _WAVE_FORM.get((operator, divisor)) or _WAVE_FORM.get((operator, _literal_form(divisor))))
            if wave_edit[1] is None:
                wave_edit = None
        self._add(size, "index", span, f"{what} for {'32' if size == G32 else 'wave'}-lane groups",
                  wave_edit=wave_edit, constant=constant)

    def _compare_fact(self, node, operator: str, left, right) -> None:
        """``lane == 0`` (a read by one lane), ``lane == 31``, lane loops ``d < 32``."""
        ctx = self.ctx
        index = self._index_of(left)
        if index is None:
            if operator == "==" and ctx.node_text(right) == "0" and self._lane_of_half(left):
                # (lane & 31) == 0 on a lane of the wavefront: lanes 0 and 32 read
                self._add(G32, "read", Span(node.start_byte, node.end_byte), "a read by lane 0 of each 32 lanes")
                return
            self._loop_bound(node, operator, left, right)
            return
        size, role = index
        value = ctx.node_text(right)
        if role == "lane" and operator == "==":
            if value in ("0",):
                if size == WAVE and self._also_reads_lane_32(node, left):
                    size = G32  # `lane == 0 || lane == 32`: one reader per 32 lanes
                self._add(size, "read", Span(node.start_byte, node.end_byte),
                          f"a read by lane 0 of each {'32 lanes' if size == G32 else 'wavefront'}")
            elif _value_size_31(ctx, value) and size == G32:
                self._add(G32, "last-lane", Span(right.start_byte, right.end_byte), "the last lane of 32",
                          wave_edit=(Span(right.start_byte, right.end_byte), "warpSize - 1"),
                          constant="" if value == "31" else value)

    def _lane_of_half(self, node) -> bool:
        """``lane % 32`` / ``lane & 31`` of a lane of the whole wavefront (its place in its half)."""
        ctx = self.ctx
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        if node.type != "binary_expression":
            return False
        operator = ctx.node_text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return operator in ("%", "&") and left is not None and right is not None and \
            self._source_of(left) == "wave-lane" and _divisor_size(ctx, operator, right) == G32

    def _also_reads_lane_32(self, node, lane) -> bool:
        """The condition around ``lane == 0`` also lets ``lane == 32`` in."""
        ctx = self.ctx
        condition = node
        while condition.parent is not None and condition.parent.type in ("binary_expression",
                                                                         "parenthesized_expression"):
            condition = condition.parent
        name = re.escape(ctx.node_text(lane))
        return re.search(name + r"\s*==\s*32\b|\b32\s*==\s*" + name, ctx.node_text(condition)) is not None

    def _loop_bound(self, node, operator: str, left, right) -> None:
        """``for (d = 0; d < 32; ...)`` over the lanes (its body shuffles or reads a lane)."""
        ctx = self.ctx
        if operator not in ("<", "<=") or left.type != "identifier":
            return
        loop = ctx.ancestor(node, {"for_statement"})
        condition = loop.child_by_field_name("condition") if loop is not None else None
        if condition is None or not (condition.start_byte <= node.start_byte < condition.end_byte):
            return
        body = loop.child_by_field_name("body")
        if body is None or not re.search(rb"__shfl|\blane", ctx.source[body.start_byte:body.end_byte]):
            return
        update = loop.child_by_field_name("update")
        if update is not None and re.search(r"\*=|<<=|/=|>>=|\*\s*2|<<\s*1", ctx.node_text(update)):
            return  # log-step offsets of a reduction or scan: judged with its shuffles
        bound = ctx.node_text(right)
        size = _value_size(ctx, bound) if operator == "<" else (G32 if _value_size_31(ctx, bound) else None)
        if size is None:
            return
        edit = (Span(node.start_byte + ctx.node_text(node).find(operator), right.end_byte), "< warpSize") \
            if size == G32 else None
        self._add(size, "loop", Span(right.start_byte, right.end_byte), f"a loop over {'32' if size == G32 else 'all'} lanes",
                  wave_edit=edit, constant=bound if not bound.isdigit() else "")

    def _assignment(self, node) -> None:
        """``i += 32`` in a loop that starts at a lane index: a lane stride."""
        ctx = self.ctx
        operator = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator is None or left is None or right is None or ctx.node_text(operator) != "+=" or \
                left.type != "identifier":
            return
        loop = ctx.ancestor(node, {"for_statement"})
        update = loop.child_by_field_name("update") if loop is not None else None
        if update is None or not (update.start_byte <= node.start_byte < update.end_byte):
            return
        start = self._loop_start(loop, ctx.node_text(left))
        if start is None:
            return
        source = self._source_of(start)
        if source not in ("thread", "lane", "wave-lane"):
            return
        size = _value_size(ctx, ctx.node_text(right))
        if size is None:
            return
        lane_size = WAVE if source == "wave-lane" else (self.out.variables.get(ctx.node_text(start), (None,))[0]
                                                        if start.type == "identifier" else None)
        if source == "wave-lane" and size == G32:
            # a wave lane stepping by 32: lanes 32-63 and 0-31 of the next step overlap
            self._add(G32, "stride", Span(right.start_byte, right.end_byte), "a lane stride of 32",
                      wave_edit=(Span(operator.start_byte, right.end_byte), "+= warpSize"),
                      constant="" if ctx.node_text(right) == "32" else ctx.node_text(right))
            self._add(WAVE, "wave-stride", Span(start.start_byte, start.end_byte), "a lane index over the wavefront")
            return
        if lane_size is None and size == G32 and _INDEXED_BY_32.search(ctx.node_text(start)) is None:
            return  # a thread-strided loop (i = tid; i += 32) says nothing about lane groups
        self._add(size, "stride", Span(right.start_byte, right.end_byte),
                  f"a lane stride of {ctx.node_text(right)}",
                  wave_edit=(Span(operator.start_byte, right.end_byte), "+= warpSize") if size == G32 else None,
                  constant="" if ctx.node_text(right).isdigit() else ctx.node_text(right))

    def _loop_start(self, loop, name: str):
        init = loop.child_by_field_name("initializer")
        if init is None:
            return None
        for node in self.ctx.descendants(init, {"init_declarator", "assignment_expression"}):
            target = node.child_by_field_name("declarator") or node.child_by_field_name("left")
            value = node.child_by_field_name("value") or node.child_by_field_name("right")
            if target is not None and self.ctx.node_text(target) == name and value is not None:
                while value.type == "binary_expression" and \
                        self.ctx.node_text(value.child_by_field_name("operator")) == "+":
                    left = value.child_by_field_name("left")
                    right = value.child_by_field_name("right")
                    # wbeg + lane: the lane part decides
                    value = right if self._source_of(right) is not None else left
                return value
        return None

    def _call(self, node) -> None:
        ctx = self.ctx
        name = callee_name(ctx, node)
        if name in VOTES:
            if first_32_lanes_only(ctx, node.start_byte) is None:  # lanes 0-31 only: a 32-lane vote
                self._add(WAVE, "vote", Span(node.start_byte, node.end_byte), f"`{name}`")
            return
        if name == "__lane_id":
            return
        args = call_arguments(node)
        wrapper = shuffle_wrappers(ctx).get(name)
        if wrapper is not None:  # SHFL_UP(v, d) -> __shfl_up(v, d, 32): the expansion decides
            self._wrapped_shuffle(node, wrapper, args)
            return
        kind = SHUFFLE_KINDS.get(name)
        if kind is None:
            if name and not self._unreached(node.start_byte):  # a call the AMD build makes here
                callee = name.split("::")[-1].split("<")[0]
                self.out.calls[callee] = None
                if args and self._mentions_wave_size:
                    self.out.pending_data.append((node, callee, self))
            return
        value_index = 1 if name.endswith("_sync") else 0
        if value_index == 0 and shifted_mask(ctx, name, args, constant_value) is not None:
            value_index = 1  # `__shfl_down(mask, v, o)`: read as the _sync call it was (ROC210)
        if len(args) <= value_index + 1:
            return
        second = args[value_index + 1]
        width = args[value_index + 2] if len(args) > value_index + 2 else None
        if width is not None:
            self._width_fact(width, ctx.node_text(width), Span(width.start_byte, width.end_byte), True)
            if kind != "idx" and _value_size(ctx, ctx.node_text(width)) == G32:
                # the offsets move with the width: from 16 inside 32 lanes, from warpSize / 2 in a wave
                extent, start_node, edit = _offset_extent(ctx, node, second)
                if extent == 32 and start_node is not None:
                    self._reduction(Span(start_node.start_byte, start_node.end_byte),
                                    "the offsets of a 32-lane shuffle reduction", edit, node, args[value_index])
            return  # an explicit width: the group is what it says
        if kind == "idx":
            self._source_fact(node, name, second, args)
        else:
            self._offset_fact(node, name, kind, second, args)

    def _width_fact(self, width, text: str, span: Span, editable: bool) -> None:
        size = _value_size(self.ctx, text)
        if size == G32:
            self._add(G32, "width", span, "a shuffle width of 32",
                      wave_edit=(span, "warpSize") if editable else None,
                      constant="" if text.isdigit() or not editable else text)
        elif size == WAVE:
            self._add(WAVE, "width", span, "a shuffle over the whole wavefront")

    def _wrapped_shuffle(self, node, wrapper: "ShuffleWrapper", args) -> None:
        """A call of a function-like macro that expands to a shuffle, read as that shuffle.
        Fixes cannot reach inside the macro: its facts carry no edit."""
        if len(args) != len(wrapper.params):
            return
        mapping = dict(zip(wrapper.params, args))
        value_index = 1 if wrapper.shuffle.endswith("_sync") else 0
        rest = wrapper.arguments[value_index + 1:]
        if not rest:
            return
        if len(rest) > 1:
            width = mapping.get(rest[1])
            self._width_fact(width, self.ctx.node_text(width) if width is not None else rest[1],
                             Span(node.start_byte, node.end_byte), False)
            return
        second = mapping.get(rest[0])
        if second is None:
            return
        kind = SHUFFLE_KINDS[wrapper.shuffle]
        before = len(self.out.facts)
        if kind == "idx":
            self._source_fact(node, wrapper.shuffle, second, None)
        else:
            self._offset_fact(node, wrapper.shuffle, kind, second, None)
        expansion = f"{wrapper.shuffle}({', '.join(wrapper.arguments)})"
        self.out.facts[before:] = [replace(f, what=f"{f.what} (the macro at {wrapper.defined_at} expands "
                                                   f"it to `{expansion}`)") for f in self.out.facts[before:]]

    def _width_edit(self, node, args) -> tuple[Span, str] | None:
        """Insert ``, 32`` after the last argument: the 32-lane group made explicit (None
        for a macro wrapping the shuffle)."""
        if not args:
            return None
        last = args[-1]
        return Span(last.end_byte, last.end_byte), ", 32"

    def _value_from(self, call_args, name: str) -> str:
        """The function whose result a shuffle's value argument holds (``m = warp_max(v)``)."""
        ctx = self.ctx
        index = 1 if name.endswith("_sync") else 0
        if not call_args or len(call_args) <= index or call_args[index].type != "identifier":
            return ""
        variable = ctx.node_text(call_args[index])
        values: list[Any] = [v for _, _, v in self.flow.declarations.get(variable, []) if v is not None]
        values += [v for _, v in self.flow.assignments.get(variable, [])]
        for value in values:
            if value.type == "call_expression":
                return callee_name(ctx, value).split("::")[-1].split("<")[0]
        return ""

    def _source_fact(self, node, name: str, source, args) -> None:
        ctx = self.ctx
        text = ctx.node_text(source)
        span = Span(node.start_byte, node.end_byte)
        value_from = self._value_from(args, name)
        if _value_size_31(ctx, text):  # the last lane of 32
            self._add(WAVE, "broadcast", span, f"`{name}` from lane {text} with no width",
                      wave_edit=self._width_edit(node, args), last_lane=Span(source.start_byte, source.end_byte),
                      value_from=value_from)
            return
        if re.fullmatch(r"\d+[uU]?", text):
            self._add(WAVE, "broadcast", span, f"`{name}` from lane {text} with no width",
                      wave_edit=self._width_edit(node, args), value_from=value_from)
            return
        if self._per_32(source) or self._lane_loop_variable(source):
            self._add(WAVE, "source", span, f"`{name}` from a lane computed per 32 (`{text}`) with no width",
                      wave_edit=self._width_edit(node, args))
            return
        if self._source_of(source) == "wave-lane" or _WAVE_LANE_TEXT.search(text):
            self._add(WAVE, "wave-source", span, "a shuffle from a lane of the whole wavefront")

    def _lane_loop_variable(self, node) -> bool:
        """The variable of an enclosing loop over 32 lanes (``for (i = 0; i < 32; ++i)``)."""
        ctx = self.ctx
        if node.type != "identifier":
            return False
        name = ctx.node_text(node)
        loop = ctx.ancestor(node, {"for_statement"})
        while loop is not None:
            condition = loop.child_by_field_name("condition")
            if condition is not None:
                m = re.fullmatch(re.escape(name) + r"\s*(<=?)\s*(\w+)", ctx.node_text(condition).strip())
                if m is not None and (_value_size(ctx, m.group(2)) == G32 if m.group(1) == "<"
                                      else _value_size_31(ctx, m.group(2))):
                    return True
            loop = ctx.ancestor(loop, {"for_statement"})
        return False

    def _per_32(self, node) -> bool:
        """An expression built from a per-32 lane or warp index."""
        ctx = self.ctx
        for ident in ctx.descendants(node, {"identifier"}):
            known = self.out.variables.get(ctx.node_text(ident))
            if known is not None and known[0] == G32:
                return True
        found = self._index_of(node)
        return found is not None and found[0] == G32

    def _offset_fact(self, node, name: str, kind: str, offset, args) -> None:
        """Width-less xor/down/up shuffles: how many lanes their offsets cover."""
        ctx = self.ctx
        extent, start_node, edit = _offset_extent(ctx, node, offset)
        if extent is None:
            return
        span = Span(start_node.start_byte, start_node.end_byte) if start_node is not None else \
            Span(offset.start_byte, offset.end_byte)
        if extent >= 64:
            what = "a scan over the whole wavefront" if kind == "up" else "a reduction over the whole wavefront"
            self._add(WAVE, "reduction", span, what)
            return
        if extent != 32:
            return  # sub-groups of 2-16 lanes sit inside any 32-lane group
        if kind == "up":
            guard = self._scan_guard(node, offset)
            if guard == G32:
                self._add(G32, "scan", span, "a `__shfl_up` scan over 32 lanes", wave_edit=edit)
            elif guard == WAVE:
                self._add(G32, "scan", span, "a `__shfl_up` scan over 32 lanes", wave_edit=edit)
                self._add(WAVE, "wave-guard", span, "a scan guard on a lane of the whole wavefront")
            else:
                self._add(G32, "scan", span, "a `__shfl_up` scan over 32 lanes", wave_edit=edit)
                self._add(WAVE, "unguarded-scan", Span(node.start_byte, node.end_byte),
                          f"`{name}` with no width and no per-32 lane guard",
                          wave_edit=self._width_edit(node, args))
            return
        if offset.type == "number_literal" and kind == "xor" and _exchanged_only(ctx, node, args[0] if args else None):
            return  # `other = __shfl_xor(v, 16)` swaps values inside each 32-lane half: no reduction
        if offset.type == "number_literal":
            steps = _unrolled_offsets(ctx, node)
            shape = "stops at offset 16" if len(steps) > 1 and steps[-1] == ctx.node_text(offset) else \
                "starts at offset 16"
            what = f"an unrolled shuffle reduction that {shape} (32 lanes)"
        elif start_node is not None and ctx.node_text(start_node) != "1" and edit is not None and \
                edit[1] == "warpSize / 2":
            what = "a shuffle reduction from offset 16 (32 lanes)"
        else:
            what = "a shuffle reduction up to offset 16 (32 lanes)"
        self._reduction(span, what, edit, node, args[1 if name.endswith("_sync") else 0] if args else None)

    # data width: which lanes produced what a reduction folds --------------------------
    def _reduction(self, span: Span, what: str, edit, call, value) -> None:
        """A reduction over 32 lanes, read with the lanes that produced its data: data of 32
        lanes only (``tid < 32``) is all folded, which no wave size changes (no member of
        any group); data of the whole wavefront (``tid < warpSize``, ``x[tid + warpSize]``)
        is what a 32-lane reduction leaves half of (a wave-wide fact feeding it)."""
        width = self._data_width(call, value) if value is not None else None
        if width is not None and width[0] == G32:
            self._add(G32, "bounded", span, f"{what} of data from 32 lanes only ({width[1]}): it folds all of it")
            return
        fact = self._add(G32, "reduction", span, what, wave_edit=edit)
        if width is not None and fact is not None:
            self._add(WAVE, "data", width[2], f"data of the whole wavefront ({width[1]})", feeds=span)

    @cached_property
    def _mentions_wave_size(self) -> bool:
        """Only the wave size (or a name for it) makes data wave-wide."""
        return _WAVE_SIZE_TERM.search(self.ctx.source, self.node.start_byte, self.node.end_byte) is not None

    def data_into_call(self, call, callee: str) -> None:
        """Data of the whole wavefront passed to a helper that reduces over 32 lanes
        (``warp_max(fmaxf(x[tid], x[tid + warpSize]))``): a wave-wide fact of the caller."""
        for arg in call_arguments(call):
            width = self._data_width(call, arg)
            if width is not None and width[0] == WAVE:
                self._add(WAVE, "data", width[2], f"data of the whole wavefront ({width[1]}), passed to "
                          f"`{callee}`", value_from=callee)
                return

    def _data_width(self, call, value) -> tuple[str, str, Span] | None:
        """(size, evidence, where) of the lanes that produced ``value`` at ``call``: bounds on a
        thread or wave-lane index around the call or in the value's definitions (``if (tid <
        warpSize)``, ``tid < 32 ? a : b``, an early ``if (tid >= 32) return;``) and folds of two
        groups into one (``x[tid + warpSize]``). A bound of 32 wins (only 32 lanes hold data);
        a bound of unknown size (``lane < warps``) leaves the width unknown."""
        ctx = self.ctx
        bounds = self._bounds_around(call)
        producers = self._producers(value)
        folds: list[tuple[str, Any]] = []
        for producer in producers:
            for node in ctx.descendants(producer, {"conditional_expression"}):
                condition = node.child_by_field_name("condition")
                if condition is not None:
                    bounds += self._bounds_in(condition, negated=False)
            folds += self._folds(producer)
        narrow = next((node for size, node in bounds if size == G32), None)
        if narrow is not None:
            return G32, f"`{' '.join(ctx.node_text(narrow).split())}` at line {ctx.line_of(narrow.start_byte) + 1}", \
                Span(narrow.start_byte, narrow.end_byte)
        if any(size is None for size, _node in bounds):
            return None
        wave = [node for size, node in bounds + folds if size == WAVE]
        if not wave:
            return None
        evidence = ", ".join(f"`{' '.join(ctx.node_text(n).split())}` at line {ctx.line_of(n.start_byte) + 1}"
                             for n in wave[:3])
        at = ([n for size, n in folds if size == WAVE] or wave)[0]
        return WAVE, evidence, Span(at.start_byte, at.end_byte)

    def _producers(self, value) -> list:
        """The expressions a shuffled value is made of: itself, or an identifier's definitions
        and compound updates in this function (the reduction's own shuffle steps aside)."""
        ctx = self.ctx
        if value.type != "identifier":
            return [value]
        name = ctx.node_text(value)
        found: list[Any] = [v for _, _, v in self.flow.declarations.get(name, []) if v is not None]
        found += [v for _, v in self.flow.assignments.get(name, [])]
        return [v for v in found if b"__shfl" not in ctx.source[v.start_byte:v.end_byte]]

    def _folds(self, expression) -> list[tuple[str, Any]]:
        """``x[tid + warpSize]`` / ``x[tid + 32]``: a thread reads the group above its own."""
        ctx = self.ctx
        out = []
        for sub in ctx.descendants(expression, {"subscript_expression"}):
            index = sub.child_by_field_name("index") or next(iter(sub.named_children[1:]), None)
            while index is not None and index.type in ("subscript_argument_list", "parenthesized_expression") \
                    and index.named_children:
                index = index.named_children[0]
            if index is None or index.type != "binary_expression" or \
                    ctx.node_text(index.child_by_field_name("operator")) != "+":
                continue
            left, right = index.child_by_field_name("left"), index.child_by_field_name("right")
            for lane, group in ((left, right), (right, left)):
                if self._source_of(lane) in ("thread", "wave-lane"):
                    size = _value_size(ctx, ctx.node_text(group))
                    if size is not None:
                        out.append((size, sub))
                    break
        return out

    def _bounds_around(self, node) -> list[tuple[str | None, Any]]:
        """Bounds on a thread index that hold where ``node`` runs: conditions of the ``if``s
        whose taken branch holds it, and early exits before it in the blocks around it."""
        ctx = self.ctx
        out: list[tuple[str | None, Any]] = []
        child, parent = node, node.parent
        while parent is not None and parent.start_byte >= self.node.start_byte and parent != self.node:
            if parent.type == "if_statement" and parent.child_by_field_name("consequence") == child:
                condition = parent.child_by_field_name("condition")
                if condition is not None:
                    out += self._bounds_in(condition, negated=False)
            elif parent.type == "compound_statement":
                for statement in parent.named_children:
                    if statement.start_byte >= child.start_byte:
                        break
                    if statement.type == "if_statement" and statement.child_by_field_name("alternative") is None \
                            and _EXITS.fullmatch(ctx.node_text(statement.child_by_field_name("consequence") or
                                                              statement).strip("{}; \n\t")):
                        condition = statement.child_by_field_name("condition")
                        if condition is not None:
                            out += self._bounds_in(condition, negated=True)
            child, parent = parent, parent.parent
        return out

    def _bounds_in(self, condition, negated: bool) -> list[tuple[str | None, Any]]:
        """(size of the bound or None, comparison) for each ``index < bound`` a condition
        asserts: through ``&&`` (``||`` when ``negated``: an exit taken on either) and
        parentheses."""
        ctx = self.ctx
        out: list[tuple[str | None, Any]] = []
        todo = [condition]
        while todo:
            node = todo.pop()
            if node.type in ("parenthesized_expression", "condition_clause") and node.named_children:
                todo.append(node.named_children[-1])
                continue
            if node.type != "binary_expression":
                continue
            operator = ctx.node_text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None:
                continue
            if operator == ("||" if negated else "&&"):
                todo += [left, right]
                continue
            if negated:  # `if (tid >= 32) return;`: what follows runs for tid < 32
                operator = {">=": "<", ">": "<=", "<=": ">", "<": ">="}.get(operator, "")
            if operator in ("<", "<="):
                index, bound = left, right
            elif operator in (">", ">="):
                index, bound = right, left
                operator = "<" if operator == ">" else "<="
            else:
                continue
            if self._source_of(index) not in ("thread", "wave-lane"):
                continue  # a 32-lane lane index below 32 bounds nothing; a count is no lane
            text = ctx.node_text(bound)
            if operator == "<":
                size = _value_size(ctx, text)
            else:
                size = G32 if _value_size_31(ctx, text) else WAVE if re.fullmatch(
                    r"\(?\s*warpSize\s*-\s*1\s*\)?", text) else None
            out.append((size, node))
        return out

    def _scan_guard(self, node, offset) -> str | None:
        """Size of the lane compared with the offset where the scan's result is used
        (``if (lane >= d) v += t;``); None when nothing guards it."""
        ctx = self.ctx
        scope = ctx.ancestor(node, {"for_statement", "compound_statement"})
        if scope is None:
            return None
        offset_text = re.escape(ctx.node_text(offset))
        text = ctx.source[scope.start_byte:scope.end_byte].decode("utf-8", "replace")
        for m in re.finditer(r"\b(\w+)\s*>=\s*" + offset_text + r"\b", text):
            known = self.out.variables.get(m.group(1))
            if known is not None and known[1] == "lane":
                return known[0]
            if m.group(1) in ("threadIdx",):
                return WAVE
        for m in re.finditer(r"\(\s*([^()]*?)\s*\)\s*>=\s*" + offset_text + r"\b", text):
            if re.search(r"&\s*31\b|%\s*32\b", m.group(1)):
                return G32
            if _WAVE_LANE_TEXT.search(m.group(1)):
                return WAVE
        # another guard on the offset (`(tid + 1) % (2 * d) == 0`: an up-sweep whose readers sit
        # d lanes above a multiple of 2d, inside any 32-lane group)
        if re.search(r"\bif\s*\([^;{]*\b" + offset_text + r"\b", text) or \
                re.search(r"\b" + offset_text + r"\b[^;]*\?", text):
            return G32
        return None


_EXITS = re.compile(r"\s*(?:return\b[^;]*|continue|break)\s*;?\s*")

_WAVE_FORM = {("%", "32"): "% warpSize", ("/", "32"): "/ warpSize", ("&", "31"): "& (warpSize - 1)",
              (">>", "5"): "/ warpSize"}


def _literal_form(divisor: str) -> str:
    """``WS`` -> ``32``, ``WS - 1`` -> ``31`` (a constant worth 32 written as a literal)."""
    return "31" if re.fullmatch(r"\w+\s*-\s*1", divisor) else "32"
_INDEXED_BY_32 = re.compile(r"%\s*32\b|&\s*31\b")
_BLOCK_SIZE_TEXT = re.compile(r"\(?\s*(?:blockDim\.[xyz]|\w*(?:block_?size|BLOCK_?SIZE|threads_?per_?block|THREADS_?PER_?BLOCK|kBlockSize|BlockSize)\w*)\s*\)?")


def _data_named(ctx, node) -> bool:
    """The index is stored in a variable named for data (``row``, ``col``, ``bank``)."""
    from .constant_uses import name_says

    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "init_declarator":
        declarator = parent.child_by_field_name("declarator")
        if declarator is not None:
            name = ctx.node_text(declarator)
            from .dataflow import LANE_NAME, THREAD_NAME

            return len(name) > 1 and name_says(name) == "data" and not LANE_NAME.search(name) and \
                not THREAD_NAME.search(name)
    return False


def constant_value(ctx, name: str, depth: int = 0) -> str | None:
    """The AMD-build value of a name: an object-like macro (this file's or the project's)
    or a ``const``/``constexpr`` variable of this file."""
    if depth > 3 or not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    key = ("constant-value", name)
    if key in ctx.cache:
        return ctx.cache[key]
    value = ctx.macro_value(name)
    if value is None:
        for m in constant_definitions_of(ctx.source, name):
            if ctx.in_code(m.start()) and not ctx.nvidia_only(m.start()):
                value = m.group(1).decode("utf-8", "replace").strip()
                break
    if value is None and depth < MAX_INCLUDE_DEPTH:  # a header of the project: WS in utils.h
        for included in included_files(ctx):
            if has_word(included.data, name.encode()):
                value = constant_value(included.ctx, name, depth + 1)
                if value is not None:
                    break
    if value is not None:
        value = value.strip()
        while value.startswith("(") and value.endswith(")"):
            value = value[1:-1].strip()
        inner = constant_value(ctx, value, depth + 1) if re.fullmatch(r"[A-Za-z_]\w*", value) else None
        value = inner if inner is not None else value
    ctx.cache[key] = value
    return value


def constant_definitions_of(source: bytes, name: str) -> Iterator["re.Match[bytes]"]:
    """``\\b(?:const|constexpr)\\b[^;{}()=]*\\bNAME\\s*[={]...`` matches, in order."""
    return word_matches(re.compile(rb"(?:const|constexpr)\b[^;{}()=]*\b" + re.escape(name.encode()) +
                                   rb"\s*(?:=\s*|\{\s*)([^;{}]+?)\s*[;}]"), source)


def _value_size(ctx, text: str) -> str | None:
    """G32 for 32 (literal or a name worth 32, not named for data), WAVE for warpSize or 64."""
    from .constant_uses import name_says

    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if re.fullmatch(r"32[uUlL]*", text):
        return G32
    if text == "warpSize":
        return WAVE
    if not re.fullmatch(r"[A-Za-z_]\w*(?:::\w+)*", text):
        return None  # 64 and other literals: a board, a tile, a plane, not a wave
    name = text.split("::")[-1]
    said = name_says(name)
    if said == "data":
        return None
    if _defined_by_wave_size(ctx, name):
        return WAVE
    value = constant_value(ctx, name)
    if value is None:
        return None
    if "warpSize" in value or re.search(r"(?i)wave_?front_?size|__AMDGCN_WAVEFRONT_SIZE", value):
        return WAVE
    if re.fullmatch(r"32[uUlL]*", value):
        return G32
    if re.fullmatch(r"64[uUlL]*", value) and said == "warp":
        return WAVE
    return None


def _value_size_31(ctx, text: str) -> bool:
    """31, or a name worth 31 / ``WS - 1`` with WS worth 32."""
    text = text.strip().strip("()").strip()
    if re.fullmatch(r"31[uUlL]*", text):
        return True
    m = re.fullmatch(r"([A-Za-z_]\w*)\s*-\s*1", text)
    return m is not None and _value_size(ctx, m.group(1)) == G32


def _defined_by_wave_size(ctx, name: str) -> bool:
    """A macro this file defines inside a branch that selects on the wave size."""
    lines = [line for line, _ in ctx.pp.defines.get(name, [])]
    return bool(lines) and any(ctx.pp.wave_size_aware(line) for line in lines)


def _divisor_size(ctx, operator: str, right) -> str | None:
    text = ctx.node_text(right).strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if operator == "&":
        if re.fullmatch(r"31[uU]?|0x1[fF][uU]?", text):
            return G32
        m = re.fullmatch(r"(\w+)\s*-\s*1", text)
        return _value_size(ctx, m.group(1)) if m else None
    if operator == ">>":
        return G32 if text == "5" else None
    return _value_size(ctx, text)


def _offset_extent(ctx, call, offset) -> tuple[int | None, Any, tuple[Span, str] | None]:
    """How many lanes a width-less xor/down/up shuffle's offsets cover (2 x the largest
    offset), the node that decides it, and the edit moving it to the whole wave."""
    text = ctx.node_text(offset)
    if "warpSize" in text:
        return 64, None, None
    if re.fullmatch(r"\d+", text):
        steps = _unrolled_offsets(ctx, call)
        largest = max([int(s) for s in steps if s.isdigit()] + [int(text)])
        if largest != int(text):
            return None, None, None  # one fact per unrolled chain, at its largest step
        return 2 * largest, offset, None
    if offset.type != "identifier":
        return None, None, None
    loop = ctx.ancestor(call, {"for_statement"})
    while loop is not None:
        found = _loop_range(ctx, loop, text)
        if found is not None:
            return found
        loop = ctx.ancestor(loop, {"for_statement"})
    return None, None, None


def _loop_range(ctx, loop, variable: str) -> tuple[int | None, Any, tuple[Span, str] | None] | None:
    init = loop.child_by_field_name("initializer")
    condition = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    if init is None or update is None:
        return None
    start = None
    for node in ctx.descendants(init, {"init_declarator", "assignment_expression"}):
        target = node.child_by_field_name("declarator") or node.child_by_field_name("left")
        value = node.child_by_field_name("value") or node.child_by_field_name("right")
        if target is not None and ctx.node_text(target) == variable and value is not None:
            start = value
    if start is None:
        return None
    update_text = re.sub(r"\s+", "", ctx.node_text(update))
    descending = re.search(re.escape(variable) + r"(?:>>=1|/=2|=" + re.escape(variable) + r"(?:>>1|/2))", update_text)
    ascending = re.search(re.escape(variable) + r"(?:<<=1|\*=2|=" + re.escape(variable) + r"(?:<<1|\*2))", update_text)
    start_text = ctx.node_text(start)
    if descending:
        if "warpSize" in start_text:
            return 64, start, None
        value = _half_value(ctx, start_text)
        if value is None:
            return None, None, None
        edit = (Span(start.start_byte, start.end_byte), "warpSize / 2") if value == 16 else None
        return 2 * value, start, edit
    if ascending and condition is not None:
        bound_text = re.sub(r"\s+", " ", ctx.node_text(condition))
        m = re.fullmatch(re.escape(variable) + r" ?(<=?) ?(.+)", bound_text)
        if m is None:
            return None, None, None
        bound = m.group(2).strip()
        if "warpSize" in bound:
            return 64, None, None
        size = _value_size(ctx, bound)
        if m.group(1) == "<" and size == G32:
            right = condition.child_by_field_name("right")
            edit = (Span(right.start_byte, right.end_byte), "warpSize") if right is not None else None
            return 32, right, edit
        if m.group(1) == "<" and size == WAVE:
            return 64, None, None
        if m.group(1) == "<=" and bound == "16":
            right = condition.child_by_field_name("right")
            return 32, right, (Span(right.start_byte, right.end_byte), "warpSize / 2") if right is not None else None
        return None, None, None
    return None


def _half_value(ctx, text: str) -> int | None:
    """16 for ``16``, ``WS / 2``, ``kWarpSize >> 1`` with WS worth 32; the integer otherwise."""
    text = text.strip().strip("()").strip()
    if re.fullmatch(r"\d+", text):
        return int(text)
    m = re.fullmatch(r"(\w+)\s*(?:/\s*2|>>\s*1)", text)
    if m is not None:
        size = _value_size(ctx, m.group(1))
        return 16 if size == G32 else 32 if size == WAVE else None
    value = constant_value(ctx, text)
    return int(value) if value is not None and value.isdigit() else None


def _exchanged_only(ctx, call, value) -> bool:
    """A shuffle whose result goes into another variable that never flows back into the
    shuffled value (``float other = __shfl_xor(acc, 16); out = f(acc) * other;``): an
    exchange between lanes, not a step of a reduction (``t = ...; acc += t;`` is one)."""
    if value is None:
        return False
    parent = call.parent
    if parent is not None and parent.type == "init_declarator":
        target = parent.child_by_field_name("declarator")
    elif parent is not None and parent.type == "assignment_expression" and \
            ctx.node_text(parent.child_by_field_name("operator")) == "=" and parent.child_by_field_name("right") == call:
        target = parent.child_by_field_name("left")
    else:
        return False
    if target is None:
        return False
    name, shuffled = ctx.node_text(target).strip(), ctx.node_text(value).strip()
    if name == shuffled:
        return False
    block = ctx.ancestor(call, {"compound_statement"})
    for assignment in ctx.descendants(block, {"assignment_expression"}) if block is not None else ():
        left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
        if left is not None and right is not None and ctx.node_text(left).strip() == shuffled and \
                re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", ctx.node_text(right)):
            return False  # folded back into the value: a reduction step through a temporary
    return True


def _unrolled_offsets(ctx, call) -> list[str]:
    """Offsets of the width-less shuffles of the same kind in the block around ``call``."""
    name = callee_name(ctx, call)
    kind = SHUFFLE_KINDS.get(name)
    block = ctx.ancestor(call, {"compound_statement", "translation_unit"})
    out = []
    for node in ctx.descendants(block, {"call_expression"}) if block is not None else ():
        other = callee_name(ctx, node)
        if SHUFFLE_KINDS.get(other) != kind:
            continue
        args = call_arguments(node)
        index = 1 if other.endswith("_sync") else 0
        if len(args) == index + 2:
            out.append(ctx.node_text(args[index + 1]))
    return out


# Macros only the device pass defines (or, for the deprecated wavefront-size macro, that
# the host pass reads as 64): a value chosen by them differs between host and device code.
DEVICE_PASS_MACRO = re.compile(r"__GFX\d+__|__gfx\w+__|__HIP_DEVICE_COMPILE__|__AMDGCN_WAVEFRONT_SIZE")
_DEVICE_PASS_BYTES = re.compile(DEVICE_PASS_MACRO.pattern.encode())


def wave_dependent_macros(ctx) -> dict[str, str]:
    """Object-like macros whose value is chosen by a device-pass macro, in this file or a
    file it includes with quotes: name -> where it is chosen (``file:line``)."""
    key = "wave-dependent-macros"
    found = ctx.cache.get(key)
    if found is None:
        found = dict(_device_chosen_defines(ctx, "")) if _DEVICE_PASS_BYTES.search(ctx.source) else {}
        for included in included_files(ctx):
            if _DEVICE_PASS_BYTES.search(included.data) is None:
                continue
            for name, where in _device_chosen_defines(included.ctx, os.path.basename(included.path)).items():
                found.setdefault(name, where)
        ctx.cache[key] = found
    return found


def _device_chosen_defines(ctx, origin: str) -> dict[str, str]:
    pp = ctx.pp
    out: dict[str, str] = {}
    for chain in pp.chains:
        if not chain.branches or not any(DEVICE_PASS_MACRO.search(b.condition) for b in chain.branches):
            continue
        first, last = chain.branches[0].line, chain.endif
        for name, defs in pp.defines.items():
            values = {value for line, value in defs if first < line < last and not pp.nvidia_only(line)}
            if values and re.search(r"(?i)warp|wave|lane", name):
                out[name] = f"{origin}:{chain.branches[0].line + 1}" if origin else f"line {chain.branches[0].line + 1}"
    return out


def _selected_tile_size(ctx, literal) -> bool:
    """``if constexpr (I == 32 && J == 4) return threadIdx.x % 32;``: inside a branch chosen
    by a tile or data dimension equal to this literal, the literal is that dimension."""
    from .constant_uses import names_tile_dimension

    value = re.escape(ctx.node_text(literal))
    node = ctx.ancestor(literal, {"if_statement"})
    while node is not None:
        condition = node.child_by_field_name("condition")
        taken = node.child_by_field_name("consequence")
        if condition is not None and taken is not None and taken.start_byte <= literal.start_byte < taken.end_byte:
            for name in re.findall(r"\b([A-Za-z_]\w*)\s*==\s*" + value + r"\b", ctx.node_text(condition)):
                if names_tile_dimension(name):
                    return True
        node = ctx.ancestor(node, {"if_statement"})
    return False


def _subscript(node) -> bool:
    """The expression is an array subscript (``a[i % 32]``)."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is not None and parent.type == "subscript_argument_list":
        parent = parent.parent
    return parent is not None and parent.type == "subscript_expression" and \
        parent.child_by_field_name("argument") != node
