"""Function-local data flow for wave-size rules: which values are ballot masks, which
identifiers hold lane or thread indices, where names are declared and assigned."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..lazy_re import lazy_compile

BALLOT_FUNCTIONS = frozenset({
    "__ballot", "__ballot_sync", "__activemask", "__lanemask_lt", "__lanemask_le",
    "__lanemask_gt", "__lanemask_ge", "__lanemask_eq",
})
# Types that hold 32 bits on every target rocmlint cares about.
INT32_TYPES = frozenset({
    "int", "unsigned", "unsigned int", "signed", "signed int", "uint32_t", "int32_t",
    "uint", "uint32", "int32", "u32", "std::uint32_t", "std::int32_t",
})
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast"})
_MASK_OPERATORS = frozenset({"&", "|", "^"})
_SHIFT_OPERATORS = frozenset({"<<", ">>"})
LANE_NAME = lazy_compile(r"(?i)lane")
_LANE_VALUE = lazy_compile(r"__lane_id\s*\(|%%?laneid|&\s*31\b|%\s*32\b|%\s*warpSize\b|&\s*\(\s*warpSize\s*-\s*1\s*\)")
_THREAD_VALUE = lazy_compile(r"\bthreadIdx\b|__lane_id\s*\(|\blaneid\b|\bthread_rank\s*\(")
THREAD_NAME = lazy_compile(r"(?i)^(?:tid|t_?id|thread_?id(?:x)?|thread_?idx|lane\w*|\w*_lane|lid|local_?id|warp_?id|wid)$")
# In a file's bytes, a necessary condition of ``holds_index`` anywhere in it (the union of
# the patterns above): keep it in step with them (ROC204 skips the parse without it).
INDEX_SOURCE_TEXT = lazy_compile(rb"threadIdx|__lane_id|thread_rank|(?i:lane)"
                                 rb"|(?i:\b(?:tid|t_?id|thread_?idx?|lid|local_?id|warp_?id|wid)\b)"
                                 rb"|&\s*31\b|%\s*32\b|%\s*warpSize\b|&\s*\(\s*warpSize")


@dataclass(frozen=True)
class MaskSource:
    function: str
    line: int  # 1-based

    def describe(self) -> str:
        return f"`{self.function}` on line {self.line}"


def is_int32_type(ctx, type_node) -> bool:
    if type_node is None:
        return False
    text = " ".join(ctx.node_text(type_node).replace("const", " ").replace("volatile", " ").split())
    return text in INT32_TYPES


def callee_name(ctx, call) -> str:
    fn = call.child_by_field_name("function")
    if fn is None:
        return ""
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name") or fn
    return ctx.node_text(fn).strip()


def call_arguments(call) -> list:
    args = call.child_by_field_name("arguments")
    return [] if args is None else [c for c in args.named_children if c.type != "comment"]


def function_declarator(function):
    """The ``function_declarator`` of a function definition (under pointer/reference ones)."""
    node = function.child_by_field_name("declarator")
    while node is not None and node.type != "function_declarator":
        node = node.child_by_field_name("declarator")
    return node


def parameter_declarations(declarator) -> list:
    """The parameter declarations of a ``function_declarator``."""
    params = declarator.child_by_field_name("parameters")
    return [p for p in params.named_children if p.type in ("parameter_declaration", "optional_parameter_declaration",
                                                                 "variadic_parameter_declaration")] \
        if params is not None else []


def declared_identifier(node):
    """The identifier a declarator declares (``*p``, ``&r``, ``a[4]``, ``x = 1`` -> the name)."""
    while node is not None and node.type not in ("identifier",):
        node = node.child_by_field_name("declarator") or next(
            (c for c in node.named_children if c.type in ("identifier", "pointer_declarator", "reference_declarator",
                                                          "array_declarator", "parenthesized_declarator",
                                                          "variadic_declarator")), None)
    return node


class ScopeFlow:
    """Declarations, assignments and ballot-mask taint of one function (or ERROR region)."""

    def __init__(self, ctx, scope) -> None:
        self.ctx = ctx
        self.scope = scope
        # name -> [(type node, declaration node, value node or None)]
        self.declarations: dict[str, list[tuple[object, object, object]]] = {}
        # name -> [(assignment node, value node)]
        self.assignments: dict[str, list[tuple[object, object]]] = {}
        self.returns: list = []
        self._collect()
        self.masks: dict[str, MaskSource] = {}
        for _ in range(8):  # fixpoint over chains a = ballot; b = a & c; ...
            changed = False
            for name, values in self._values().items():
                if name in self.masks:
                    continue
                for value in values:
                    source = self.mask_source(value)
                    if source is not None:
                        self.masks[name] = source
                        changed = True
                        break
            if not changed:
                break

    def _collect(self) -> None:
        ctx = self.ctx
        for node in ctx.descendants(self.scope, {"declaration", "parameter_declaration", "field_declaration",
                                                 "assignment_expression", "return_statement"}):
            if node.type == "assignment_expression":
                left = node.child_by_field_name("left")
                right = node.child_by_field_name("right")
                if left is not None and left.type == "identifier" and right is not None:
                    self.assignments.setdefault(ctx.node_text(left), []).append((node, right))
                continue
            if node.type == "return_statement":
                self.returns.append(node)
                continue
            type_node = node.child_by_field_name("type")
            for declarator in node.children_by_field_name("declarator"):
                name_node, value = declarator, None
                if declarator.type == "init_declarator":
                    name_node = declarator.child_by_field_name("declarator")
                    value = declarator.child_by_field_name("value")
                    if value is not None and value.type in ("initializer_list", "argument_list") and value.named_children:
                        value = value.named_children[0]
                if name_node is not None and name_node.type in ("identifier", "field_identifier"):
                    self.declarations.setdefault(ctx.node_text(name_node), []).append((type_node, node, value))

    def _values(self) -> dict[str, list]:
        values: dict[str, list] = {}
        for name, decls in self.declarations.items():
            values.setdefault(name, []).extend(v for _, _, v in decls if v is not None)
        for name, assigns in self.assignments.items():
            values.setdefault(name, []).extend(v for _, v in assigns)
        return values

    def declaration(self, name: str):
        """(type node, declaration node) of the first declaration of ``name`` here, or None."""
        decls = self.declarations.get(name)
        return (decls[0][0], decls[0][1]) if decls else None

    def mask_source(self, node) -> MaskSource | None:
        """The ballot a value carries lane bits from, following masks, casts and locals."""
        if node is None:
            return None
        ctx = self.ctx
        kind = node.type
        if kind == "call_expression":
            name = callee_name(ctx, node)
            if name in BALLOT_FUNCTIONS:
                return MaskSource(name, ctx.line_no(node))
            if name in _CASTS:
                args = call_arguments(node)
                return self.mask_source(args[0]) if args else None
            return None
        if kind == "identifier":
            return self.masks.get(ctx.node_text(node))
        if kind in ("parenthesized_expression", "comma_expression"):
            children = node.named_children
            return self.mask_source(children[-1]) if children else None
        if kind == "cast_expression":
            return self.mask_source(node.child_by_field_name("value"))
        if kind == "binary_expression":
            op = node.child_by_field_name("operator")
            op = ctx.node_text(op) if op is not None else ""
            if op in _MASK_OPERATORS:
                return self.mask_source(node.child_by_field_name("left")) or \
                    self.mask_source(node.child_by_field_name("right"))
            if op in _SHIFT_OPERATORS:
                return self.mask_source(node.child_by_field_name("left"))
            return None
        if kind == "unary_expression":
            op = node.child_by_field_name("operator")
            if op is not None and ctx.node_text(op) == "~":
                return self.mask_source(node.child_by_field_name("argument"))
            return None
        if kind == "conditional_expression":
            return self.mask_source(node.child_by_field_name("consequence")) or \
                self.mask_source(node.child_by_field_name("alternative"))
        if kind == "assignment_expression":
            return self.mask_source(node.child_by_field_name("right"))
        return None

    def holds_index(self, node, lane_only: bool = False, _seen: frozenset = frozenset()) -> bool:
        """Whether an expression is a lane index (``lane_only``) or a thread/lane index."""
        ctx = self.ctx
        if node is None:
            return False
        text = ctx.node_text(node)
        value_pattern = _LANE_VALUE if lane_only else _THREAD_VALUE
        if value_pattern.search(text):
            return True
        if node.type == "parenthesized_expression" and node.named_children:
            return self.holds_index(node.named_children[0], lane_only, _seen)
        if node.type == "field_expression":  # threadIdx.x
            return not lane_only and "threadIdx" in text
        if node.type != "identifier":
            return False
        if (LANE_NAME if lane_only else THREAD_NAME).search(text):
            return True
        for value in self._values().get(text, []):
            if value_pattern.search(ctx.node_text(value)):
                return True
            if value.type == "identifier" and text not in _seen and \
                    self.holds_index(value, lane_only, _seen | {text}):
                return True
        return False


_BELOW_32 = lazy_compile(r"^\(*.*(?:%\s*\(*\s*(?:[1-9]|[12]\d|3[0-2])|&\s*\(*\s*(?:0x1[fF]|31|15|7|3|1))\s*\)*$", re.DOTALL)


def below_32(flow: ScopeFlow, node) -> bool:
    """Whether an expression is below 32 by construction: ``x % 32``, ``x & 31`` (or narrower),
    or a local every value of which is so (``lane = threadIdx.x % 32``): a lane of a 32-lane
    group, never 32-63, so ``1u << lane`` is whole in 32 bits."""
    if node is None:
        return False
    text = flow.ctx.node_text(node)
    if _BELOW_32.match(text):
        return True
    if node.type == "parenthesized_expression" and node.named_children:
        return below_32(flow, node.named_children[0])
    if node.type != "identifier":
        return False
    values = flow._values().get(text, [])
    return bool(values) and all(_BELOW_32.match(flow.ctx.node_text(v)) for v in values)


def flow_for(ctx, node) -> ScopeFlow:
    """The (cached) flow of the function around ``node``."""
    scope = ctx.scope_of(node)
    key = ("flow", scope.start_byte, scope.end_byte)
    flow = ctx.cache.get(key)
    if flow is None:
        flow = ctx.cache[key] = ScopeFlow(ctx, scope)
    return flow
