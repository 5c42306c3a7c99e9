"""One fix for a whole lane group: every 32-lane member of a kernel moves to the wavefront
size together, or none does (a fix that changed ``threadIdx.x / 32`` but kept
``blockDim.x / 32`` would make the AMD build inconsistent)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from rocmlint.model import Applicability, Edit, Fix

if TYPE_CHECKING:
    from rocmlint.cpp.context import CppContext
    from rocmlint.cpp.lanegroups import Context


def lane_group_fix(ctx: "CppContext", context: "Context") -> Fix | None:
    """The fix moving every 32-lane member of ``context`` to ``warpSize`` (gated in shared
    files); None when a member has no mechanical form (an unrolled reduction, a tile of
    32, a constant another definition holds): then every member is display-only."""
    from rocmlint.cpp.lanegroups import lane_groups

    from .cpp_gate import build_uses_fix

    key = ("lane-group-fix", id(context))
    if key in ctx.cache:
        return ctx.cache[key]
    edits = lane_groups(ctx).group_fix_edits(context)
    fix = None
    if edits:
        uses: list = []
        for span, content in edits:
            node = ctx.node_at(span)
            if node is None:
                uses = []
                break
            uses.append((node, [Edit(span, content)]))
        if uses:
            fix = build_uses_fix(ctx, uses, [], f"move the 32-lane groups of `{context.root.name}` to the "
                                 "wavefront size (warpSize), all together", Applicability.UNSAFE)
    ctx.cache[key] = fix
    return fix


def wave_safe_fix(ctx: "CppContext", node, edits: Sequence[Edit], title: str, *,
                  uses_uint64: bool = False) -> Fix | None:
    """A safe wave-size fix (ROC201, ROC202, ROC203, ROC210) checked against the kernel's
    lane groups: where another member still assumes 32 lanes for the value it changes
    (``lane_ties``), it is offered only together with the group's fix, as unsafe, its title
    naming the members that move with it; where the group has no mechanical fix, not at all
    (a fix marked safe must leave the AMD build right, not just compiled)."""
    from rocmlint.cpp.lane_ties import tie_for

    from .cpp_gate import build_fix, build_uses_fix

    tie = tie_for(ctx, node)
    if tie is None:
        return build_fix(ctx, node, edits, title, Applicability.SAFE, uses_uint64=uses_uint64)
    if tie.edits is None:
        return None
    uses: list = [(node, list(edits))]
    for span, content in tie.edits:
        at = ctx.node_at(span)
        if at is None:
            return None
        uses.append((at, [Edit(span, content)]))
    to = "warpSize" if tie.context.wave_structure else "an explicit 32-lane width"
    return build_uses_fix(ctx, uses, [], f"{title}, together with the lane group of `{tie.context.root.name}`: "
                          f"{tie.names()} to {to} with it", Applicability.UNSAFE, uses_uint64=uses_uint64)
