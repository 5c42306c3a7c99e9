"""Shared look-ups of the wave-size rules: shuffle calls and their operands, declarations
that shadow ``warpSize``."""
from __future__ import annotations


from .dataflow import call_arguments, callee_name

SHUFFLES = frozenset({"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__shfl_sync",
                      "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"})


def shuffle_operands(ctx, call) -> tuple[list, int] | None:
    """(arguments, index of the value argument) of a shuffle call, or None."""
    name = callee_name(ctx, call)
    if name not in SHUFFLES:
        return None
    return call_arguments(call), 1 if name.endswith("_sync") else 0


_DECLARING = frozenset({"init_declarator", "declaration", "field_declaration", "parameter_declaration",
                        "optional_parameter_declaration", "array_declarator", "pointer_declarator",
                        "reference_declarator", "variadic_parameter_declaration"})
_SCOPES = frozenset({"compound_statement", "translation_unit", "declaration_list", "field_declaration_list",
                     "template_declaration", "function_definition", "lambda_expression", "for_statement",
                     "for_range_loop"})


def shadowed_ranges(ctx, spans) -> list[tuple[int, int]]:
    """Byte ranges where a declaration of the name at ``spans`` (e.g. a local
    ``constexpr int warpSize = 64;``) hides the builtin: from the declaration to the end of
    its scope (a whole class body or template for members and template parameters)."""
    ranges = []
    for span in spans:
        node = ctx.root.named_descendant_for_byte_range(span.start, span.end)
        if node is None or node.type not in ("identifier", "field_identifier") or node.parent is None:
            continue
        declarator = node
        while declarator.parent is not None and declarator.parent.type in _DECLARING and \
                declarator.parent.child_by_field_name("declarator") == declarator:
            declarator = declarator.parent
        if declarator == node:
            continue  # a use, not a declaration
        scope = ctx.ancestor(node, _SCOPES)
        if scope is None:
            continue
        member_like = declarator.type in ("field_declaration",) or scope.type in ("template_declaration",
                                                                                  "field_declaration_list")
        ranges.append((scope.start_byte if member_like else node.start_byte, scope.end_byte))
    return ranges
