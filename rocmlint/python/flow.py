"""Small, local data flow for rules: where does a value written at an anchor end up?

Enough for the forms real code uses: a literal inside a conditional expression, an
f-string or a concatenation; a simple ``NAME = value`` (module or function scope) read
elsewhere; a dict whose key names the option.
"""
from __future__ import annotations

import ast

Path = list  # list[ast.AST], Module first


def climb(path: Path, through=(ast.IfExp,)) -> Path:
    """Path to the largest expression that carries the value at ``path[-1]`` unchanged in
    kind: up through conditional-expression branches (and whatever ``through`` adds)."""
    i = len(path) - 1
    while i > 0:
        parent = path[i - 1]
        if isinstance(parent, ast.IfExp) and parent.test is path[i]:
            break
        if not isinstance(parent, through):
            break
        i -= 1
    return path[: i + 1]


def assigned_name(path: Path) -> str | None:
    """``NAME`` when ``path[-1]`` is the whole value of ``NAME = value`` (or ``+=``)."""
    if len(path) < 2:
        return None
    parent, node = path[-2], path[-1]
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0]
    elif isinstance(parent, (ast.AnnAssign, ast.AugAssign)) and parent.value is node:
        target = parent.target  # `FLAGS += [...]` extends what FLAGS carries
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def value_sites(ctx, path: Path, through=(ast.IfExp,)) -> list[Path]:
    """Paths of the expressions where the value at ``path[-1]`` is used: the value itself
    (climbed), and every read of the name it is assigned to."""
    root = climb(path, through)
    sites = [root]
    name = assigned_name(root)
    if name is not None:
        scope = ctx.scope_of(root)
        for load in ctx.loads_of(name, scope):
            sites.append(ctx.path_to(load))
    return sites


def value_of_key(path: Path) -> ast.expr | None:
    """The value when ``path[-1]`` is a key of a dict display (``{KEY: value}``), else None."""
    if len(path) < 2 or not isinstance(path[-2], ast.Dict):
        return None
    return next((value for key, value in zip(path[-2].keys, path[-2].values) if key is path[-1]), None)


def dict_key(path: Path) -> str | None:
    """The constant string key when ``path[-1]`` is a value of a dict display, or the name of
    a keyword argument (``dict(mode=...)``)."""
    if len(path) < 2:
        return None
    parent, node = path[-2], path[-1]
    if isinstance(parent, ast.Dict):
        for key, value in zip(parent.keys, parent.values):
            if value is node and isinstance(key, ast.Constant) and isinstance(key.value, str):
                return key.value
        return None
    if isinstance(parent, ast.keyword) and parent.arg:
        return parent.arg
    return None


def mapping_path(path: Path) -> Path | None:
    """For a dict value (``{"k": v}`` or ``dict(k=v)``): the path to the mapping itself."""
    if len(path) >= 2 and isinstance(path[-2], ast.Dict):
        return path[:-1]
    if len(path) >= 3 and isinstance(path[-2], ast.keyword) and isinstance(path[-3], ast.Call):
        call = path[-3]
        if isinstance(call.func, ast.Name) and call.func.id == "dict":
            return path[:-2]
    return None


def call_of_argument(path: Path) -> tuple[ast.Call, str | int | None] | None:
    """(call, keyword name or positional index) when ``path[-1]`` is an argument; the name is
    None for ``**mapping``."""
    if len(path) < 2:
        return None
    parent, node = path[-2], path[-1]
    if isinstance(parent, ast.keyword) and len(path) >= 3 and isinstance(path[-3], ast.Call):
        return path[-3], parent.arg
    if isinstance(parent, ast.Call) and node is not parent.func:
        for index, arg in enumerate(parent.args):
            if arg is node:
                return parent, index
    return None


def called_name(call: ast.Call) -> str:
    """The called function's own name (`torch._scaled_mm` -> `_scaled_mm`); "" for other callees."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers")


def containing_list(parent: ast.AST, child: ast.AST) -> list | None:
    """The statement list of ``parent`` (its body, else-branch, ...) that holds ``child``."""
    for field in STATEMENT_LISTS:
        block = getattr(parent, field, None)
        if isinstance(block, list):
            for item in block:
                if item is child:
                    return block
    return None
