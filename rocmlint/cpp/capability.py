"""Run-time compute-capability values in C++/CUDA/HIP code, evaluated for one capability.

What ROC306 reads: ``prop.major``/``prop.minor`` of a ``cudaDeviceProp``/``hipDeviceProp_t``
(a variable, a pointer, ``getCurrentDeviceProperties()->major``), the value an attribute
query writes (``cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev)``, the
HIP and driver-API spellings), a local computed from those (``int sm = prop.major * 10 +
prop.minor;``) and a helper of the same file whose one ``return`` gives such a number
(``get_sm_version()``). ``Values.value(node, capability)`` gives an expression's value when
the GPU reports ``capability``, or raises ``Unknown`` when it is not a function of the
capability and constants alone.
"""
from __future__ import annotations

import re
from typing import Any

from ..lazy_re import lazy_compile

# A device-properties object: its type, or what it is initialised from.
PROPERTIES = lazy_compile(r"(?i)device_?prop|dprop")
# A name that holds device properties (`prop`, `props`, `deviceProp`, `dprops`, `properties`).
PROPERTIES_NAME = lazy_compile(r"(?i)^(?:d|dev|device|cur|gpu|cuda|hip)?_?prop(?:s|erties)?_?$|^deviceprop\w*$")
# Attribute queries: which part of the capability the written value is.
ATTRIBUTES = {
    "cudaDevAttrComputeCapabilityMajor": 0, "cudaDevAttrComputeCapabilityMinor": 1,
    "hipDeviceAttributeComputeCapabilityMajor": 0, "hipDeviceAttributeComputeCapabilityMinor": 1,
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": 0, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": 1,
}
PART = {"major": 0, "minor": 1}
_NUMBER = lazy_compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_ARITHMETIC = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b), "%": lambda a, b: a % b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "|": lambda a, b: a | b, "&": lambda a, b: a & b,
}
COMPARISONS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
_CASTS = frozenset({"static_cast", "int", "unsigned", "int32_t", "int64_t", "uint32_t", "size_t", "long"})
_WRAPPERS = frozenset({"parenthesized_expression", "condition_clause"})
_MAX_DEPTH = 16
# Capabilities a function of the capability gives different values on (`== 90` on one only).
_PROBES = ((7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (9, 4), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1))


class Unknown(Exception):
    """Not a function of the capability and constants alone."""


class Values:
    """Capability values of one file; bindings are looked up once per name and function."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._bindings: dict[tuple[int, str], Any] = {}
        self._properties: dict[tuple[int, str], bool] = {}
        self._helpers: dict[str, Any] | None = None

    # --- what a name is ------------------------------------------------------------------
    def is_properties(self, node) -> bool:
        """``node`` (the object of ``.major``) is a device-properties object."""
        ctx = self.ctx
        if node.type in _WRAPPERS | {"pointer_expression"}:
            inner = node.named_children[-1] if node.named_children else None
            return inner is not None and self.is_properties(inner)
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            return function is not None and PROPERTIES.search(ctx.node_text(function)) is not None
        if node.type == "field_expression":
            field = node.child_by_field_name("field")
            return field is not None and PROPERTIES_NAME.match(ctx.node_text(field)) is not None
        if node.type == "subscript_expression":  # `props[device].major`
            inner = node.child_by_field_name("argument")
            return inner is not None and self.is_properties(inner)
        if node.type != "identifier":
            return False
        name = ctx.node_text(node)
        scope = ctx.scope_of(node)
        key = (scope.start_byte, name)
        if key not in self._properties:
            self._properties[key] = self._declared_properties(scope, name)
        return self._properties[key]

    def _declared_properties(self, scope, name: str) -> bool:
        ctx = self.ctx
        declared = False
        for scope_node in (scope, ctx.root) if scope is not ctx.root else (scope,):
            for ident in ctx.identifiers(scope_node, name):
                declaration = ctx.ancestor(ident, _DECLARATIONS)
                if declaration is None or _declared_name(ctx, declaration) != name:
                    continue
                declared = True
                if PROPERTIES.search(ctx.node_text(declaration)):
                    return True
            if declared:
                return False
        # Declared nowhere in view (a member, a macro's parameter): its name decides.
        return PROPERTIES_NAME.match(name) is not None

    def binding(self, node):
        """What the name ``node`` holds in its function: ("part", 0/1) for an attribute
        query's output, ("expr", node) for its one initialiser or assignment; None if unknown."""
        ctx = self.ctx
        name = ctx.node_text(node)
        scope = ctx.scope_of(node)
        key = (scope.start_byte, name)
        if key in self._bindings:
            return self._bindings[key]
        self._bindings[key] = None  # a cycle (`x = x + 1`) ends as unknown
        writes: list = []
        queried = None
        for ident in ctx.identifiers(scope, name):
            parent = ident.parent
            if parent is None:
                continue
            if parent.type == "pointer_expression" and ctx.node_text(parent).startswith("&") and \
                    parent.parent is not None and parent.parent.type == "argument_list":
                part = _attribute_part(ctx, parent.parent)
                if part is not None:
                    queried = ("part", part)
                else:
                    writes.append(None)  # written by a call: unknown
            elif parent.type == "init_declarator" and parent.child_by_field_name("declarator") == ident:
                writes.append(("init", parent.child_by_field_name("value")))
            elif parent.type == "assignment_expression" and parent.child_by_field_name("left") == ident:
                operator = parent.child_by_field_name("operator")
                writes.append(("expr", parent.child_by_field_name("right"))
                              if operator is not None and ctx.node_text(operator) == "=" else None)
            elif parent.type in ("update_expression", "parameter_declaration", "reference_declarator",
                                 "pointer_declarator"):
                writes.append(None)
        if queried is not None and None not in writes:
            found = queried  # `int major = 0; cudaDeviceGetAttribute(&major, ...)`
        elif len(writes) == 1 and writes[0] is not None and writes[0][1] is not None:
            found = ("expr", writes[0][1])
        else:
            found = None
        self._bindings[key] = found
        return found

    def helpers(self) -> dict[str, Any]:
        """Functions of this file whose one ``return`` gives a capability number: name -> the
        returned expression."""
        if self._helpers is None:
            self._helpers = {}
            ctx = self.ctx
            for function in ctx.descendants(ctx.root, {"function_definition"}):
                declarator = function.child_by_field_name("declarator")
                while declarator is not None and declarator.type != "function_declarator":
                    declarator = declarator.child_by_field_name("declarator")
                name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
                if name_node is None:
                    continue
                text = ctx.node_text(function)
                if not _MENTIONS.search(text):
                    continue
                returns = [r for r in ctx.descendants(function, {"return_statement"})
                           if ctx.scope_of(r) == function]
                if len(returns) != 1 or not returns[0].named_children:
                    continue
                value = returns[0].named_children[0]
                if self.depends(value):
                    self._helpers[ctx.node_text(name_node).split("::")[-1]] = value
        return self._helpers

    # --- values --------------------------------------------------------------------------
    def depends(self, node, partial: bool = False) -> bool:
        """A function of the capability (its value differs between two GPUs)."""
        try:
            return len({self.value(node, capability, partial=partial) for capability in _PROBES}) > 1
        except (Unknown, ZeroDivisionError, ValueError):
            return False

    def value(self, node, capability: tuple[int, int], depth: int = 0, partial: bool = False) -> int:
        """With ``partial``, an operand of ``&&``/``||`` that is not a function of the
        capability counts as neither (``__CUDACC_VER_MAJOR__ < 12 || props.major < 9`` is the
        capability's test ``props.major < 9``)."""
        if depth > _MAX_DEPTH or node is None:
            raise Unknown
        ctx = self.ctx
        kind = node.type
        depth += 1
        if kind == "number_literal":
            m = _NUMBER.fullmatch(ctx.node_text(node).replace("'", ""))
            if m is None:
                raise Unknown
            return int(m.group(1), 0)
        if kind in ("true", "false"):
            return int(kind == "true")
        if kind in _WRAPPERS:
            inner = node.child_by_field_name("value") or (node.named_children[0] if node.named_children else None)
            return self.value(inner, capability, depth, partial)
        if kind == "binary_expression":
            operator = ctx.node_text(node.child_by_field_name("operator"))
            if partial and operator in ("&&", "||"):
                known = []
                for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
                    try:
                        known.append(bool(self.value(side, capability, depth, partial)))
                    except Unknown:
                        pass
                if not known:
                    raise Unknown
                return int(all(known) if operator == "&&" else any(known))
            left = self.value(node.child_by_field_name("left"), capability, depth)
            right = self.value(node.child_by_field_name("right"), capability, depth)
            if operator in COMPARISONS:
                return int(COMPARISONS[operator](left, right))
            if operator == "&&":
                return int(bool(left) and bool(right))
            if operator == "||":
                return int(bool(left) or bool(right))
            if operator in _ARITHMETIC:
                return _ARITHMETIC[operator](left, right)
            raise Unknown
        if kind == "unary_expression":
            operator = ctx.node_text(node.child_by_field_name("operator"))
            operand = self.value(node.child_by_field_name("argument"), capability, depth,
                                 partial and operator == "!")
            if operator == "!":
                return int(not operand)
            if operator == "-":
                return -operand
            if operator == "+":
                return operand
            raise Unknown
        if kind == "conditional_expression":
            condition = self.value(node.child_by_field_name("condition"), capability, depth)
            side = node.child_by_field_name("consequence" if condition else "alternative")
            return self.value(side, capability, depth)
        if kind == "cast_expression":
            return self.value(node.child_by_field_name("value"), capability, depth)
        if kind == "field_expression":
            field = node.child_by_field_name("field")
            part = PART.get(ctx.node_text(field)) if field is not None else None
            argument = node.child_by_field_name("argument")
            if part is not None and argument is not None and self.is_properties(argument):
                return capability[part]
            raise Unknown
        if kind == "identifier":
            bound = self.binding(node)
            if bound is None:
                raise Unknown
            if bound[0] == "part":
                return capability[bound[1]]
            return self.value(bound[1], capability, depth)
        if kind == "call_expression":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            name = ctx.node_text(function) if function is not None else ""
            base = re.sub(r"<.*", "", name).split("::")[-1]
            if base in _CASTS and arguments is not None and len(arguments.named_children) == 1:
                return self.value(arguments.named_children[0], capability, depth)
            body = self.helpers().get(base)
            if body is not None:
                return self.value(body, capability, depth)
        raise Unknown


_DECLARATIONS = frozenset({"declaration", "parameter_declaration", "field_declaration", "optional_parameter_declaration"})
_MENTIONS = lazy_compile(r"\b(?:major|minor)\b|ComputeCapabilityM|COMPUTE_CAPABILITY_M")


def _declared_name(ctx, declaration) -> str | None:
    """The name a one-name declaration declares (``const cudaDeviceProp& prop``)."""
    node = declaration.child_by_field_name("declarator")
    while node is not None and node.type != "identifier" and node.type != "field_identifier":
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type in ("identifier", "field_identifier")), None)
        node = inner
    return ctx.node_text(node) if node is not None else None


def _attribute_part(ctx, arguments) -> int | None:
    """0/1 when the argument list is that of a compute-capability attribute query."""
    for argument in arguments.named_children:
        text = ctx.node_text(argument).split("::")[-1]
        if text in ATTRIBUTES:
            return ATTRIBUTES[text]
    return None
