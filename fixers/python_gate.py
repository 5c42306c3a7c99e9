"""Gated-fix builders for Python rules: the ROCm gate, gated values, wrapped statements,
optional-import guards.

Every edit here leaves the NVIDIA view unchanged: the gate folds to False there, so
``rocm if GATE else original`` is ``original``, ``if not GATE: stmt`` is ``stmt``, the
import guard unwraps to the import and the gate definition is dropped
(``rocmlint.python.view``).
"""
from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass

from rocmlint.model import Applicability, Edit, Fix, Span
from rocmlint.python.view import is_import_guard

GATE_NAME = "IS_ROCM"
TORCH_GATE = '{name} = hasattr({torch}.version, "hip") and {torch}.version.hip is not None'
# Modules that import torch only through `from torch... import ...`: torch is loaded, no name bound.
TORCH_FROM_GATE = '{name} = __import__("torch").version.hip is not None'
EXTENSION_GATE = "from torch.utils.cpp_extension import IS_HIP_EXTENSION"
# Launchers that never import torch: /dev/kfd is the AMD GPU driver node every ROCm process
# needs (containers get it with --device=/dev/kfd); a host with an AMD GPU/APU running an
# NVIDIA torch would take the ROCm side too, which is why fixes using it are unsafe.
DEVICE_GATE = '{name} = {os}.path.exists("/dev/kfd")'

# Stands for the gate expression in edits until the file's gate plan is known; a NUL never
# occurs in Python source, so user text (say an f-string field named `gate`) is never hit.
GATE = "\x00gate\x00"

_STRENGTH = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 2}


@dataclass(frozen=True)
class GatePlan:
    """How fixes in one file say "on ROCm": the expression, and the definition to insert."""

    expression: str
    edits: tuple[Edit, ...] = ()
    applicability: Applicability = Applicability.SAFE


def weaker(a: Applicability, b: Applicability) -> Applicability:
    return a if _STRENGTH[a] >= _STRENGTH[b] else b


# The gate --------------------------------------------------------------------------------
def gate_plan(ctx) -> GatePlan | None:
    """The file's gate: an existing one reused, else a definition inserted once, right after
    the last top-level import that precedes the first statement needing it. Every fix in the
    file gets the same plan, so identical insertions deduplicate."""
    if "gate_plan" not in ctx.cache:
        ctx.cache["gate_plan"] = _make_plan(ctx)
    return ctx.cache["gate_plan"]


def _is_importish(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Import, ast.ImportFrom)) or (isinstance(stmt, ast.Try) and is_import_guard(stmt))


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _first_use_index(ctx) -> int:
    """Index of the first top-level statement (not an import or docstring) holding an anchor."""
    body = ctx.tree.body
    starts = [ctx.span_of(stmt).start for stmt in body]
    first = len(body)
    for spans in ctx._hits.values():
        for span in spans:
            index = bisect.bisect_right(starts, span.start) - 1
            if 0 <= index < first and ctx.span_of(body[index]).contains(span.start):
                stmt = body[index]
                if not _is_importish(stmt) and not _is_docstring(stmt):
                    first = index
    return first


def _existing_gate(ctx, stmts) -> str | None:
    names = ctx.gates.gate_names
    for stmt in stmts:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and target.id in names:
                    return target.id
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in names:
            return stmt.target.id
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                bound = alias.asname or alias.name
                if bound in names:
                    # Lower-case imported gates (vLLM's is_hip) are functions.
                    return f"{bound}()" if bound.startswith("is_") else bound
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in names:
            return f"{stmt.name}()"
        elif isinstance(stmt, (ast.Try, ast.If)):
            found = _existing_gate(ctx, stmt.body)
            if found:
                return found
    return None


def _bound_module(stmts, module: str) -> str | None:
    """The name under which ``import module`` (or ``import module.sub``) binds it."""
    for stmt in stmts:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname is None and alias.name.split(".")[0] == module:
                    return module
                if alias.asname and alias.name == module:
                    return alias.asname
    return None


def _make_plan(ctx) -> GatePlan | None:
    body = ctx.tree.body
    first_use = _first_use_index(ctx)
    existing = _existing_gate(ctx, body[:first_use])
    if existing:
        return GatePlan(existing)
    if _existing_gate(ctx, body[first_use:]):
        return None  # defined, but too late for module-level use: leave it to a human
    before = body[:first_use]
    imports = [stmt for stmt in before if _is_importish(stmt)]
    if not imports:
        return None
    flat = [s for stmt in imports for s in (stmt.body if isinstance(stmt, ast.Try) else [stmt])]
    torch = _bound_module(flat, "torch")
    applicability = Applicability.SAFE
    if torch:
        definition = TORCH_GATE.format(name=GATE_NAME, torch=torch)
        expression = GATE_NAME
    elif any(isinstance(s, ast.ImportFrom) and s.module == "torch.utils.cpp_extension" for s in flat):
        definition, expression = EXTENSION_GATE, "IS_HIP_EXTENSION"
    elif any(isinstance(s, ast.ImportFrom) and (s.module or "").split(".")[0] == "torch" for s in flat):
        definition, expression = TORCH_FROM_GATE.format(name=GATE_NAME), GATE_NAME
    elif _bound_module(flat, "os"):
        definition = DEVICE_GATE.format(name=GATE_NAME, os=_bound_module(flat, "os"))
        expression, applicability = GATE_NAME, Applicability.UNSAFE
    else:
        return None
    last = imports[-1]
    if last.end_lineno < ctx.lines.line_count:
        at, content = ctx.lines.line_start(last.end_lineno), definition + "\n"
    else:
        at, content = len(ctx.source), "\n" + definition + "\n"
    return GatePlan(expression, (Edit(Span(at, at), content),), applicability)


def gated_fix(ctx, title: str, edits, applicability: Applicability = Applicability.SAFE) -> Fix | None:
    """A fix whose edits use the gate (written ``GATE`` in their content), plus the gate's
    definition where the file has none; None when the file offers no sound gate."""
    plan = gate_plan(ctx)
    if plan is None:
        return None
    concrete = tuple(Edit(e.span, e.content.replace(GATE, plan.expression)) for e in edits)
    return Fix(concrete + plan.edits, title, weaker(applicability, plan.applicability))


# Edit shapes ------------------------------------------------------------------------------
_BARE_PARENTS = (ast.keyword, ast.Assign, ast.AnnAssign, ast.Return, ast.Dict, ast.List, ast.Tuple,
                 ast.Set, ast.Call, ast.FormattedValue, ast.AugAssign)


def needs_parentheses(node: ast.AST, parent: ast.AST | None) -> bool:
    """Whether a conditional expression put in place of ``node`` must be parenthesized."""
    if isinstance(parent, ast.Call):
        return node is parent.func
    return not isinstance(parent, _BARE_PARENTS)


def gated_value_edit(ctx, node: ast.expr, parent: ast.AST | None, rocm_text: str) -> Edit:
    """``node`` -> ``rocm_text if GATE else <node as written>``."""
    original = ctx.source_of(node)
    if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
        original = f"({original})"
    text = f"{rocm_text} if {GATE} else {original}"
    if needs_parentheses(node, parent):
        text = f"({text})"
    return Edit(ctx.node_span(node), text)


def statement_lines(ctx, stmt: ast.stmt) -> Span | None:
    """Whole lines of a statement, when nothing else shares them."""
    own = ctx.node_span(stmt)
    start = ctx.lines.line_start(ctx.lines.line_of(own.start))
    end = ctx.lines.line_end(ctx.lines.line_of(own.end))
    if ctx.source[start:own.start].strip() or ctx.text(Span(own.end, end)).strip().split("#")[0].strip():
        return None  # `x = 1; stmt` or `stmt; y = 2`
    return Span(start, end)


def wrap_statement_edit(ctx, stmt: ast.stmt, condition: str = f"not {GATE}") -> Edit | None:
    """``stmt`` -> ``if not GATE:`` + ``stmt`` one level deeper. Every line moves except
    the inside of multi-line strings (found with ``tokenize``), and the result is checked:
    the wrapped statement must parse to exactly the original one.

    (tokenize rather than libcst: importing libcst costs about a second, which a
    pre-commit run would pay for every file with a finding.)"""
    lines = statement_lines(ctx, stmt)
    if lines is None:
        return None
    text = ctx.text(lines)
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    unit = "\t" if "\t" in indent else "    "
    protected = _string_continuation_rows(text[len(indent):])
    if protected is None:
        return None
    body = [
        line if row in protected or not line.strip() else indent + unit + line[len(indent):]
        if line.startswith(indent) else unit + line
        for row, line in enumerate(text.split("\n"), start=1)
    ]
    rendered = f"{indent}if {condition}:\n" + "\n".join(body)
    if not _same_statement(rendered.replace(GATE, "GATE__"), indent, stmt):
        return None
    return Edit(lines, rendered)


def _string_continuation_rows(text: str) -> set[int] | None:
    """Rows (1-based) that continue a multi-line string: their bytes belong to the string."""
    import io
    import tokenize

    rows: set[int] = set()
    string_types = {tokenize.STRING} | {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in string_types and token.end[0] > token.start[0]:
                rows.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return None
    return rows


def _same_statement(rendered: str, indent: str, original: ast.stmt) -> bool:
    """The wrapped text parses, and what it wraps is the original statement, token for token."""
    try:
        tree = ast.parse(("if 1:\n" if indent else "") + rendered)
    except SyntaxError:
        return False
    wrapper = tree.body[0]
    if indent:
        assert isinstance(wrapper, ast.If)  # the `if 1:` that lets indented text parse
        wrapper = wrapper.body[0]
    if not isinstance(wrapper, ast.If) or len(wrapper.body) != 1:
        return False
    return ast.dump(wrapper.body[0]) == ast.dump(original)


def bound_names(stmt: ast.Import | ast.ImportFrom) -> list[str] | None:
    """Names an import binds (None for star imports)."""
    names = []
    for alias in stmt.names:
        if alias.name == "*":
            return None
        if alias.asname:
            names.append(alias.asname)
        elif isinstance(stmt, ast.Import):
            names.append(alias.name.split(".")[0])
        else:
            names.append(alias.name)
    return names


def import_guard_edit(ctx, stmt: ast.Import | ast.ImportFrom) -> Edit | None:
    """``import x`` -> ``try: import x / except ImportError: x = None``."""
    lines = statement_lines(ctx, stmt)
    names = bound_names(stmt)
    if lines is None or not names:
        return None
    text = ctx.text(lines)
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    unit = "\t" if "\t" in indent else "    "
    body = text[len(indent):]
    if "\n" in body:
        continuation = body.split("\n")
        body = "\n".join([continuation[0]] + [unit + line if line.strip() else line for line in continuation[1:]])
    fallback = "\n".join(f"{indent}{unit}{name} = None" for name in dict.fromkeys(names))
    return Edit(lines, f"{indent}try:\n{indent}{unit}{body}\n{indent}except ImportError:\n{fallback}")
