"""Code that runs with only lanes 0-31 of a wave active: under ``if (threadIdx.x < 32)``,
``if (lane < 32)`` (lane from ``__lane_id()``), ``if (warp == 0)`` with a 32-lane warp index
(``threadIdx.x / 32``), after ``if (threadIdx.x >= 32) return;``, or in a helper whose every
call in the file sits under such a guard. There a whole-wave ballot has no bits above 31, a
32-bit mask holds it whole and a lane index ``& 31`` is the lane itself: a 32-lane design is
right at 64 lanes too (issue 37, item 5)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..lazy_re import lazy_compile

if TYPE_CHECKING:
    from .context import CppContext

_FUNCTION_TYPES = ("function_definition",)
_TID = r"threadIdx\.x"
_SMALL = r"(?:[1-9]|[12]\d|3[0-2])"  # 1..32
# NAME = threadIdx.x / NAME = __lane_id() ... in the function's text
_ASSIGNED = r"\b{name}\s*=\s*([^;,]+);"
_LANE_SOURCES = lazy_compile(r"^\(*\s*(?:__lane_id\s*\(\s*\)|threadIdx\.x\s*(?:%\s*warpSize|&\s*\(\s*warpSize\s*-\s*1\s*\)))"
                             r"\s*\)*$")
_WARP_INDEX = lazy_compile(r"^\(*\s*threadIdx\.x\s*(?:/\s*32|>>\s*5)\s*\)*$")


def _assigned(function_text: str, name: str) -> str | None:
    m = re.search(_ASSIGNED.format(name=re.escape(name)), function_text)
    return m.group(1).strip() if m else None


def _bounds_first_32(condition: str, function_text: str) -> bool:
    """Whether a condition (one of its ``&&`` conjuncts) lets only lanes 0-31 through."""
    for part in re.split(r"&&", condition):
        part = part.strip().strip("()").strip()
        m = re.fullmatch(r"(\w+(?:\.\w+)?(?:\s*\(\s*\))?)\s*<\s*(" + _SMALL + r")\b", part) or \
            re.fullmatch(r"(" + _SMALL + r")\s*>\s*(\w+(?:\.\w+)?(?:\s*\(\s*\))?)", part)
        if m:
            left, right = m.group(1), m.group(2)
            subject = right if left.isdigit() else left
            if re.fullmatch(_TID + "|__lane_id\\s*\\(\\s*\\)", subject):
                return True
            source = _assigned(function_text, subject)
            if source is not None and (re.fullmatch(r"\(*\s*" + _TID + r"\s*\)*", source)
                                       or _LANE_SOURCES.match(source)):
                return True
            continue
        m = re.fullmatch(r"(\w+)\s*==\s*0|0\s*==\s*(\w+)", part)
        if m:
            source = _assigned(function_text, m.group(1) or m.group(2))
            if source is not None and _WARP_INDEX.match(source):
                return True
    return False


def _function_of(node):
    while node is not None and node.type not in _FUNCTION_TYPES:
        node = node.parent
    return node


def _early_exit_before(ctx: "CppContext", function, offset: int) -> str | None:
    """``if (threadIdx.x >= 32) return;`` between the function's start and ``offset``."""
    text = ctx.source[function.start_byte:offset].decode("utf-8", "replace")
    for m in re.finditer(r"\bif\s*\(\s*(" + _TID + r")\s*(>=|>)\s*(\d+)\s*\)\s*return\b", text):
        limit = int(m.group(3)) + (1 if m.group(2) == ">" else 0)
        if limit <= 32:
            return m.group(0)
    return None


def _guard_around(ctx: "CppContext", node, function) -> str | None:
    """The ``if`` condition around ``node`` (inside ``function``) that admits lanes 0-31 only."""
    function_text = ctx.node_text(function)
    child, parent = node, node.parent
    while parent is not None and parent != function:
        if parent.type == "if_statement" and parent.child_by_field_name("consequence") == child:
            condition = parent.child_by_field_name("condition")
            if condition is not None:
                text = ctx.node_text(condition)
                if _bounds_first_32(text, function_text):
                    return text.strip()
        child, parent = parent, parent.parent
    return _early_exit_before(ctx, function, node.start_byte)


def first_32_lanes_only(ctx: "CppContext", offset: int) -> str | None:
    """Why only lanes 0-31 run the code at ``offset`` (None: nothing says so)."""
    key = ("first-32-lanes", offset)
    if key in ctx.cache:
        return ctx.cache[key]
    ctx.cache[key] = why = _why(ctx, offset)
    return why


def _why(ctx: "CppContext", offset: int) -> str | None:
    if b"32" not in ctx.source and b">> 5" not in ctx.source:
        return None
    node = ctx.root.named_descendant_for_byte_range(offset, offset)
    function = _function_of(node)
    if node is None or function is None:
        return None
    guard = _guard_around(ctx, node, function)
    if guard is not None:
        return f"only lanes 0-31 run it (`{guard}`)"
    declarator = function.child_by_field_name("declarator")
    name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
    if name_node is None or name_node.type != "identifier" or b"__global__" in ctx.source[
            function.start_byte:declarator.start_byte]:
        return None
    name = ctx.node_text(name_node)
    calls = [n for n in ctx.identifiers(ctx.root, name) if n != name_node and n.parent is not None
             and n.parent.type == "call_expression" and not function.start_byte <= n.start_byte < function.end_byte]
    if not calls:
        return None
    guards = []
    for call in calls:
        caller = _function_of(call)
        guard = _guard_around(ctx, call, caller) if caller is not None else None
        if guard is None:
            return None
        guards.append(f"`{guard}` (line {ctx.line_of(call.start_byte) + 1})")
    return f"every call of `{name}` runs with only lanes 0-31 active: " + ", ".join(guards[:2])
