"""Which members of a kernel's lane groups a fix's value reaches (design §2c: a fix never
moves one member alone).

A safe wave-size fix (a wider ballot mask, a 64-bit popcount, a mask dropped from a
shuffle) changes one value. Where the kernel is inconsistent and another member still
assumes 32 lanes for that value (``if ((threadIdx.x & 31) == 0) atomicAdd(out,
__popcll(m));``: lanes 0 and 32 both add the whole wave's count once ``m`` is 64 bits),
the fix leaves the AMD build compiled but wrong: it belongs with the group's own fix.

The value is followed through the function: the statement the fix edits, the statements
that read a variable it defines (a few steps on), the conditions of the ``if``s and the
headers of the loops around them. A 32-lane fact there, or a 32-lane lane variable read
there, is a member that moves together with the fix. In a 32-lane design (no wave-wide
structure) the 32-lane members are right: only a fix on the wave-wide operation that
breaks it (the mask of a width-less broadcast) is tied, to that operation's explicit
32-lane width.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model import Span

if TYPE_CHECKING:
    from .context import CppContext
    from .lane_facts import Fact
    from .lanegroups import Context

_FOLLOW_STEPS = 4
_DEFINING = frozenset({"declaration", "expression_statement", "return_statement", "for_statement",
                       "if_statement", "while_statement"})


@dataclass(frozen=True)
class Tie:
    context: "Context"
    members: tuple["Fact", ...]  # the members the fix's value reaches
    edits: tuple[tuple[Span, str], ...] | None  # the group's edits (None: no mechanical form)

    def names(self) -> str:
        """The members, for a fix title: "`threadIdx.x & 31` (line 7) moves"."""
        # innermost first: `threadIdx.x & 31` says more than the `(threadIdx.x & 31) == 0` around it
        members = [m for m in self.members if not any(o is not m and m.span.start <= o.span.start and
                                                       o.span.end <= m.span.end for o in self.members)]
        shown = [f"`{m.code}` (line {m.line + 1})" for m in members[:3]]
        text = ", ".join(shown) + (f" and {len(members) - 3} more" if len(members) > 3 else "")
        return text + (" moves" if len(members) == 1 else " move")


def tie_for(ctx: "CppContext", node) -> Tie | None:
    """The lane-group members the value that a fix at ``node`` changes reaches, with the
    group's fix; None where no member of an inconsistent context is reached."""
    from .lane_includes import needs_lane_model
    from .lanegroups import lane_groups

    if not needs_lane_model(ctx):
        return None
    model = lane_groups(ctx)
    function = model.function_at(node.start_byte)
    if function is None or function.foreign:
        return None
    ranges: list[tuple[int, int]] | None = None
    for context in model.contexts_of.get(id(function), []):
        if context.consistent:
            continue
        if ranges is None:
            ranges = _reached(ctx, function, node)
        if context.wave_structure:
            members = [f for f in context.sized_32 if f.function == function.name and _inside(f.span, ranges)]
            members += _lane_variables(ctx, function, ranges, members)
            if members:
                edits = model.group_fix_edits(context)
                return Tie(context, tuple(members), tuple(edits) if edits else None)
        else:  # a 32-lane design: its members are right, the operation that breaks it is not
            members = [f for f in context.mismatches if f.function == function.name and
                       f.span.start <= node.start_byte < f.span.end]
            if members:
                edits = [f.wave_edit for f in members if f.wave_edit is not None]
                return Tie(context, tuple(members), tuple(edits) if len(edits) == len(members) else None)
    return None


def _inside(span: Span, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= span.start and span.end <= end for start, end in ranges)


def _reached(ctx, function, node) -> list[tuple[int, int]]:
    """Byte ranges of what the value at ``node`` reaches in ``function``: statements, and the
    conditions and loop headers around them."""
    body = function.node.child_by_field_name("body")
    first = _statement(ctx, node, function)
    if body is None or first is None:
        return []
    statements = {first.start_byte: first}
    names = _defined(ctx, first)
    for _ in range(_FOLLOW_STEPS):
        new_names: set[str] = set()
        for name in names:
            for use in ctx.identifiers(body, name):
                statement = _statement(ctx, use, function)
                if statement is not None and statement.start_byte not in statements:
                    statements[statement.start_byte] = statement
                    new_names |= _defined(ctx, statement)
        names = new_names - names
        if not names:
            break
    ranges = []
    for statement in statements.values():
        ranges.append((statement.start_byte, statement.end_byte))
        around = statement.parent
        while around is not None and around.start_byte >= body.start_byte:
            if around.type in ("if_statement", "while_statement"):
                condition = around.child_by_field_name("condition")
                if condition is not None:
                    ranges.append((condition.start_byte, condition.end_byte))
            elif around.type == "for_statement":
                body_node = around.child_by_field_name("body")
                ranges.append((around.start_byte, body_node.start_byte if body_node is not None else around.end_byte))
            around = around.parent
    return ranges


def _statement(ctx, node, function):
    """The innermost statement holding ``node`` inside ``function`` (the condition of an
    ``if`` counts as its own statement: the guard, not the branch)."""
    current = node
    while current is not None and current.start_byte >= function.start:
        if current.type in _DEFINING and current.type not in ("if_statement", "for_statement",
                                                             "while_statement"):
            return current
        parent = current.parent
        if parent is not None and parent.type in ("if_statement", "while_statement") and \
                parent.child_by_field_name("condition") == current:
            return current
        current = parent
    return None


def _defined(ctx, statement) -> set[str]:
    """Variables a statement declares or assigns."""
    names = set()
    for node in ctx.descendants(statement, {"init_declarator", "assignment_expression"}):
        target = node.child_by_field_name("declarator") or node.child_by_field_name("left")
        if target is not None and target.type == "identifier":
            names.add(ctx.node_text(target))
    if statement.type == "declaration":
        for declarator in statement.children_by_field_name("declarator"):
            if declarator.type == "identifier":
                names.add(ctx.node_text(declarator))
    return names


def _lane_variables(ctx, function, ranges, known: list) -> list:
    """The facts that make a 32-lane lane or warp variable read in ``ranges`` (``int lane =
    threadIdx.x & 31;`` read by ``1u << lane``): its definition moves with the fix."""
    from .dataflow import flow_for
    from .lane_facts import G32

    out: list = []
    body: Any = function.node.child_by_field_name("body")
    if body is None:
        return out
    flow = None
    for name, (size, _role) in function.variables.items():
        if size != G32 or not any(_inside(Span(u.start_byte, u.end_byte), ranges) for u in ctx.identifiers(body, name)):
            continue
        flow = flow or flow_for(ctx, body)
        declarations: list[Any] = [declaration for _type, declaration, _value in flow.declarations.get(name, [])]
        for declaration in declarations:
            out += [f for f in function.facts if f.size == G32 and f not in known and f not in out and
                    declaration.start_byte <= f.span.start < declaration.end_byte]
    return out
