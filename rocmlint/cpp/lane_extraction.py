"""Extraction of the lane-group facts of one function (``LaneExtractor``): lane and warp indices,
strides and loops, shuffles and their widths and offsets, votes, and what a helper's name or
comment promises. Produces ``FunctionLanes``; ``lanegroups.py`` judges them."""
from __future__ import annotations

import re
from dataclasses import replace
from functools import cached_property
from typing import Any

from ..lazy_re import lazy_compile
from ..model import Span
from .active_lanes import first_32_lanes_only
from .dataflow import (call_arguments, callee_name, declared_identifier, flow_for, function_declarator,
    parameter_declarations)
from .full_masks import shifted_mask
from .lane_constants import (BLOCK_SIZE_TEXT, EXITS, INDEXED_BY_32, WAVE_FORM, data_named, divisor_size,
    exchanged_only, literal_form, offset_extent, selected_tile_size, is_subscript, unrolled_offsets, value_size,
    value_size_31, constant_value)
from .lane_facts import Fact, FunctionLanes, G32, SHUFFLE_KINDS, VOTES, WAVE
from .lane_includes import ShuffleWrapper, shuffle_wrappers


_TILE = lazy_compile(rb"\b(?:tiled_partition|thread_block_tile)\s*<\s*(\w+)\s*>")
_WAVE_LANE_TEXT = lazy_compile(r"__lane_id\s*\(|\b__builtin_amdgcn_mbcnt|%\s*warpSize\b|&\s*\(\s*warpSize\s*-\s*1\s*\)")
_THREAD_TEXT = lazy_compile(r"\bthreadIdx\b|\bthread_rank\s*\(")
_BLOCK_OF_32 = lazy_compile(rb"\(*(?:blockDim\.x==32|32==blockDim\.x)\)*")
# `threadIdx.x < 32 ? a : b`: a value chosen by which half of a 64-lane wavefront a lane is in
_HALF_SELECT = lazy_compile(rb"(?:threadIdx\.x|\blane\w*|__lane_id\s*\(\s*\))\s*(?:<|>=)\s*32\s*\?")
_WAVE_SIZE_TERM = lazy_compile(rb"\bwarpSize\b|(?i:warp_?size|wave_?size|wavefront_?size)|__AMDGCN_WAVEFRONT_SIZE")
_LANE_TERM = lazy_compile(rb"\bthreadIdx\b|(?i:\blane|\btid\b)|__lane_id")
# A block's size: `blockSize >= 2 * warpSize` picks code by the block, on any wave size.
_BLOCK_TERM = lazy_compile(rb"\bblockDim\b|(?i:block_?size|threads_?per_?block|block_?threads)")
_COMPARISON = lazy_compile(rb"==|!=|<|>")


def _selects_wave_size(condition: bytes) -> bool:
    """A condition that compares a wave size with a number or another size (not a lane, not
    a block's size)."""
    return _WAVE_SIZE_TERM.search(condition) is not None and _COMPARISON.search(condition) is not None \
        and _LANE_TERM.search(condition) is None and _BLOCK_TERM.search(condition) is None
# Words in a function's text that make it worth modelling (the rest have no lane facts).
_RELEVANT = lazy_compile(rb"threadIdx|__lane_id|__shfl|__ballot|__any|__all|__activemask|warpSize|lane|Lane|LANE"
                         rb"|warp|Warp|WARP|tid\b|thread_rank")
# Index arithmetic: operator -> (literal meaning 32-lane groups, what it computes).
_INDEX_OPERATORS = {"%": ("32", "lane"), "&": ("31", "lane"), "/": ("32", "warp"), ">>": ("5", "warp")}
_WAVE_INDEX_OPERATORS = {"%": "lane", "/": "warp"}
_COMPARE = frozenset({"==", "!=", "<", "<=", ">", ">="})


# --- helper contracts ------------------------------------------------------------------
# A helper's name or comment that promises a whole warp's (wavefront's) result.
_GROUP_WORDS = frozenset({"warp", "wave", "wavefront", "subgroup"})
_RESULT_WORDS = frozenset({"sum", "max", "min", "reduce", "reduction", "allreduce", "all", "any", "scan", "prefix",
                           "broadcast", "bcast", "prod", "product", "argmax", "argmin"})
_NAME_TOKENS = lazy_compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_DOC_GROUP = lazy_compile(r"(?i)\b(?:warp|wave ?front|wave)s?\b")
_DOC_RESULT = lazy_compile(r"(?i)\b(?:sum|max(?:imum)?|min(?:imum)?|reduc\w*|all|any|scan|prefix|broadcasts?)\b")
_DOC_32 = lazy_compile(r"\b32\b|(?i:\bhalf\b)")
_SPELLED_32 = frozenset({"index", "tile", "stride", "loop", "width"})


def read_contract(ctx, function: FunctionLanes) -> None:
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


# --- extraction ---------------------------------------------------------------------
def function_nodes(ctx) -> tuple[list, list]:
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


class LaneExtractor:
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
        size = divisor_size(ctx, operator, right)
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
                    value_size(ctx, text) == G32:
                span = Span(size.start_byte, size.end_byte)
                self._add(G32, "warp-start", span, "the first thread of a 32-lane warp", wave_edit=(span, "warpSize"))
                return

    def _index_fact(self, node, operator: str, left, right) -> None:
        ctx = self.ctx
        role = _INDEX_OPERATORS[operator][1]
        block = role == "warp" and BLOCK_SIZE_TEXT.fullmatch(ctx.node_text(left)) is not None
        source = "block" if block else self._source_of(left)
        if source not in ("thread", "lane", "block") or data_named(ctx, node):
            return
        size = divisor_size(ctx, operator, right)
        if size is None or (size == G32 and selected_tile_size(ctx, right)):
            return
        if role == "lane" and is_subscript(node):
            return  # tile[threadIdx.x % 32][...]: a column of data (a per-warp slot is `/ 32`)
        what = "warps per block" if block else "lane index" if role == "lane" else "warp index"
        span = Span(node.child_by_field_name("operator").start_byte, right.end_byte)
        constant = ctx.node_text(right) if right.type == "identifier" else ""
        wave_edit = None
        if size == G32:
            # `% 32`, `& 31`, `/ WS`, `& (WS - 1)`: the same operation on warpSize
            divisor = ctx.node_text(right).strip("()").strip()
            wave_edit = (span, WAVE_FORM.get((operator, divisor)) or WAVE_FORM.get((operator, literal_form(divisor))))
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
            elif value_size_31(ctx, value) and size == G32:
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
            self._source_of(left) == "wave-lane" and divisor_size(ctx, operator, right) == G32

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
        size = value_size(ctx, bound) if operator == "<" else (G32 if value_size_31(ctx, bound) else None)
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
        size = value_size(ctx, ctx.node_text(right))
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
        if lane_size is None and size == G32 and INDEXED_BY_32.search(ctx.node_text(start)) is None:
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
            if kind != "idx" and value_size(ctx, ctx.node_text(width)) == G32:
                # the offsets move with the width: from 16 inside 32 lanes, from warpSize / 2 in a wave
                extent, start_node, edit = offset_extent(ctx, node, second)
                if extent == 32 and start_node is not None:
                    self._reduction(Span(start_node.start_byte, start_node.end_byte),
                                    "the offsets of a 32-lane shuffle reduction", edit, node, args[value_index])
            return  # an explicit width: the group is what it says
        if kind == "idx":
            self._source_fact(node, name, second, args)
        else:
            self._offset_fact(node, name, kind, second, args)

    def _width_fact(self, width, text: str, span: Span, editable: bool) -> None:
        size = value_size(self.ctx, text)
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
        if value_size_31(ctx, text):  # the last lane of 32
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
                if m is not None and (value_size(ctx, m.group(2)) == G32 if m.group(1) == "<"
                                      else value_size_31(ctx, m.group(2))):
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
        extent, start_node, edit = offset_extent(ctx, node, offset)
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
        if offset.type == "number_literal" and kind == "xor" and exchanged_only(ctx, node, args[0] if args else None):
            return  # `other = __shfl_xor(v, 16)` swaps values inside each 32-lane half: no reduction
        if offset.type == "number_literal":
            steps = unrolled_offsets(ctx, node)
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
                    size = value_size(ctx, ctx.node_text(group))
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
                            and EXITS.fullmatch(ctx.node_text(statement.child_by_field_name("consequence") or
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
                size = value_size(ctx, text)
            else:
                size = G32 if value_size_31(ctx, text) else WAVE if re.fullmatch(
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
