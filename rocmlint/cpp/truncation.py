"""Where a ballot mask lands in a 32-bit type (ROC201's hazards, shared with ROC202's fix)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .dataflow import MaskSource, ScopeFlow, callee_name, call_arguments, is_int32_type


@dataclass(frozen=True)
class Store:
    at: object  # node reported
    type_node: object  # the 32-bit type to widen
    type_owner: object  # node whose statement holds the type (what a fix gates)
    source: MaskSource
    how: str  # "stored in" / "cast to" / "returned as"


def truncating_stores(flow: ScopeFlow) -> Iterator[Store]:
    ctx = flow.ctx
    for name, decls in flow.declarations.items():
        for type_node, decl, value in decls:
            source = flow.mask_source(value)
            if source is not None and is_int32_type(ctx, type_node):
                yield Store(value, type_node, decl, source, "stored in")
    for name, assigns in flow.assignments.items():
        declared = flow.declaration(name)
        if declared is None or not is_int32_type(ctx, declared[0]):
            continue
        for node, value in assigns:
            source = flow.mask_source(value)
            if source is not None:
                yield Store(value, declared[0], declared[1], source, "assigned to")
    for cast in ctx.descendants(flow.scope, {"cast_expression", "call_expression"}):
        if cast.type == "cast_expression":
            type_desc = cast.child_by_field_name("type")
            value = cast.child_by_field_name("value")
        else:
            if callee_name(ctx, cast) not in ("static_cast", "reinterpret_cast"):
                continue
            template = cast.child_by_field_name("function")
            targs = template.child_by_field_name("arguments") if template is not None else None
            type_desc = targs.named_children[0] if targs is not None and targs.named_children else None
            args = call_arguments(cast)
            value = args[0] if args else None
        source = flow.mask_source(value)
        if source is not None and type_desc is not None and is_int32_type(ctx, type_desc):
            yield Store(cast, type_desc, cast, source, "cast to")
    function = flow.scope if flow.scope.type == "function_definition" else None
    if function is not None and is_int32_type(ctx, function.child_by_field_name("type")):
        for ret in flow.returns:
            value = ret.named_children[0] if ret.named_children else None
            source = flow.mask_source(value)
            if source is not None:
                yield Store(value, function.child_by_field_name("type"), function, source, "returned as")
