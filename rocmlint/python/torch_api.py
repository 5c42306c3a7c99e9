"""Recognizing torch APIs through any import alias."""
from __future__ import annotations

import ast

COMPILE = "torch.compile"
PARTIAL = ("functools.partial", "partial")
INDUCTOR_CONFIG = "torch._inductor.config"


def is_compile(ctx, call: ast.Call) -> bool:
    """``torch.compile(...)`` under any alias, or ``functools.partial(torch.compile, ...)``."""
    target = ctx.qualname(call.func)
    if target == COMPILE:
        return True
    return target in PARTIAL and bool(call.args) and ctx.qualname(call.args[0]) == COMPILE
