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

The model in five parts, each readable alone: ``lane_facts.py`` (what a fact is),
``lane_extraction.py`` (one function's facts), ``lane_constants.py`` (a name's value, 32 or the
wave size), ``lane_includes.py`` (the headers and shuffle wrappers it reads), and this module
(contexts, consistency and the verdicts rules report).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator

from ..model import Span
from .lane_extraction import LaneExtractor, function_nodes, read_contract, function_name
from .lane_facts import (Fact, FunctionLanes, G32, MAX_CALL_DEPTH, MAX_INCLUDE_DEPTH, MISMATCH_KINDS, NEUTRAL_KINDS,
    REPORTED_MEMBER_KINDS, SHUFFLE_MEMBER_KINDS, WAVE)
from .lane_includes import CALLED_WORD, included_files
from .lexical import WORD_BYTES

if TYPE_CHECKING:
    from .context import CppContext


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


class FileLanes:
    """The lane-group model of one file (``lane_groups(ctx)``)."""

    def __init__(self, ctx: "CppContext", depth: int = 0, origin: str = "") -> None:
        self.ctx = ctx
        self.functions: list[FunctionLanes] = []
        by_name: dict[str, list[FunctionLanes]] = {}
        relevant, unread = function_nodes(ctx)
        # Functions without lane text are not modelled; one that calls a modelled function
        # hides part of a group from its callers (``group_fix_edits``).
        self._unread: dict[str, list[Any]] = {}
        for node in unread:
            self._unread.setdefault(function_name(ctx, node), []).append(node)
        for node in relevant:
            function = LaneExtractor(ctx, node, origin).run()
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
                    read_contract(ctx, function)
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
                called = {m.group(1).decode() for m in CALLED_WORD.finditer(source, node.start_byte, node.end_byte)}
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


def _included_files(ctx, depth: int, names: set[str]) -> list["FileLanes"]:
    """The lane models of the files this one includes with quotes that define one of the
    helpers ``names`` and hold a shuffle or a vote (the others cannot change a verdict)."""
    out = []
    words = {n for n in names if n and frozenset(n.encode()) <= WORD_BYTES}
    others = sorted(names - words)  # `ns::f`: searched for as written
    spelled: re.Pattern[bytes] | None = None  # compiled only for a header the words do not settle
    for included in included_files(ctx):
        if not included.has_wave_operation:
            continue
        if not words & included.called_words:
            if not others:
                continue
            if spelled is None:
                spelled = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in others) + rb")\s*\(")
            if not spelled.search(included.data):
                continue
        header = included.ctx
        lanes = header.cache.get("lane-groups")
        if lanes is None:
            lanes = header.cache["lane-groups"] = FileLanes(header, depth, os.path.basename(included.path))
        out.append(lanes)
    return out
