""""Every lane" masks as code spells them: literals, names defined as one, vote calls.

Shared by ROC203 (a 32-bit full mask where HIP wants 64 bits), ROC210 (a mask passed to a
shuffle that takes none) and the lane-group model (which reads such a call as its author
meant it).
"""
from __future__ import annotations

from typing import Callable

from ..lazy_re import lazy_compile

ValueOf = Callable[..., "str | None"]  # lanegroups.constant_value: a name's AMD-build value

# 0xffffffff, ~0u, -1u: all ones in 32 bits.
FULL_MASK_32 = lazy_compile(r"\(?\s*(?:0[xX][fF]{8}[uU]?[lL]{0,2}|~0[uU]|~0[uU]?[lL]?\s*\)?|-1[uU])\s*\)?")
# The same in 64 bits: 0xffffffffffffffffull, ~0ull.
FULL_MASK_64 = lazy_compile(r"\(?\s*(?:0[xX][fF]{16}[uU]?[lL]{0,2}|~0[uU]?[lL]{2})\s*\)?")
# Calls whose value is a mask of lanes.
MASK_CALLS = frozenset({"__activemask", "__ballot", "__ballot_sync"})
# HIP's shuffles without a mask (HIP 5 to 7): (value, lane or offset[, width]).
NON_SYNC_SHUFFLES = frozenset({"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"})


def full_mask(ctx, node, value_of: ValueOf) -> str | None:
    """How ``node`` spells an "every lane" mask (`` `0xffffffff` ``, `` `FULL_MASK` (=
    `0xffffffff`) ``, `` `__activemask()` ``), or None when it is not one."""
    from .dataflow import callee_name

    text = ctx.node_text(node).strip()
    if FULL_MASK_32.fullmatch(text) or FULL_MASK_64.fullmatch(text):
        return f"`{text}`"
    if node.type == "identifier":
        value = value_of(ctx, text)
        if value is not None and (FULL_MASK_32.fullmatch(value) or FULL_MASK_64.fullmatch(value)):
            return f"`{text}` (= `{value}`)"
        return None
    if node.type == "call_expression" and callee_name(ctx, node) in MASK_CALLS:
        return f"`{text}`"
    return None


def shifted_mask(ctx, name: str, args, value_of: ValueOf) -> str | None:
    """A mask passed first to a HIP shuffle that takes none (``__shfl_down(0xffffffff, v,
    o)``, a hipify leftover of ``__shfl_down_sync``): how the mask is spelled, else None."""
    if name not in NON_SYNC_SHUFFLES or len(args) not in (3, 4):  # a mask in front of 2 or 3 arguments
        return None
    return full_mask(ctx, args[0], value_of)
