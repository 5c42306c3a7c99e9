"""One fix for a whole lane group: every 32-lane member of a kernel moves to the wavefront
size together, or none does (a fix that changed ``threadIdx.x / 32`` but kept
``blockDim.x / 32`` would make the AMD build inconsistent)."""
from __future__ import annotations

from typing import TYPE_CHECKING

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
