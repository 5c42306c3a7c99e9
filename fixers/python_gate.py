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
from dataclasses import dataclass, field, replace
from typing import ClassVar

from rocmlint.model import Applicability, Edit, Fix, Span
from rocmlint.python.view import is_import_guard

GATE_NAME = "IS_ROCM"
TORCH_GATE = '{name} = hasattr({torch}.version, "hip") and {torch}.version.hip is not None'
# The line a fix writes in a module that did `import torch` (rule examples show it).
TORCH_GATE_LINE = TORCH_GATE.format(name=GATE_NAME, torch="torch") + "\n"
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
    # After the import block; an assignment one blank line apart (isort and ruff's I001 want it).
    last = imports[-1]
    gap = "" if definition.startswith("from ") else "\n"
    if last.end_lineno < ctx.lines.line_count:
        at, content = ctx.lines.line_start(last.end_lineno), gap + definition + "\n"
    else:
        at, content = len(ctx.source), "\n" + gap + definition + "\n"
    return GatePlan(expression, (Edit(Span(at, at), content),), applicability)


def gated_fix(ctx, title: str, edits, applicability: Applicability = Applicability.SAFE) -> Fix | None:
    """A fix whose edits use the gate (written ``GATE`` in their content), plus the gate's
    definition where the file has none; None when the file offers no sound gate."""
    plan = gate_plan(ctx)
    if plan is None:
        return None
    concrete = tuple(replace(e, content=e.content.replace(GATE, plan.expression)) for e in edits)
    if any(isinstance(e, PendingEdit) for e in concrete):
        _await_finish(ctx)
    return Fix(concrete + plan.edits, title, weaker(applicability, plan.applicability))


# Edits libcst builds --------------------------------------------------------------------------
@dataclass(frozen=True)
class PendingEdit(Edit):
    """An edit built with libcst (``fixers.python_cst``) once every rule has run and the
    file's suppressions are known, so adjacent gated statements share one block and libcst
    is imported only for files with a fixable finding. ``content`` is a plain-text stand-in
    (empty where there is none)."""

    unbuilt: ClassVar[bool] = True  # never applied as it is (fixers.apply)
    kind: str = "wrap"  # "wrap" (statement under the gate), "value" (gated value), "guard" (import)
    stmt: ast.stmt | None = field(default=None, compare=False)
    node: ast.expr | None = field(default=None, compare=False)
    rocm_text: str = ""
    parenthesize: bool = False


def _await_finish(ctx) -> None:
    if finish_fixes not in ctx.finishers:
        ctx.finishers.append(finish_fixes)


def finish_fixes(ctx, findings) -> None:
    """Replace every fix holding PendingEdits by the fix libcst builds (None where it cannot).
    Not when the fixes are only counted (``ctx.build_fixes`` off: a text report)."""
    pending = [f for f in findings if f.fix is not None and any(isinstance(e, PendingEdit) for e in f.fix.edits)]
    wanted = ctx.build_fixes
    if not pending or not wanted:
        return
    fixable = [f for f in pending if f.fix.applicability is not Applicability.DISPLAY_ONLY
               and (wanted is True or f.fix.applicability in wanted)]
    chosen = {id(f) for f in fixable}
    pending = [f for f in pending if id(f) in chosen or f.fix.applicability is Applicability.DISPLAY_ONLY]
    built: dict[int, Edit | None] = {}
    if any(not _fits(ctx, e) for f in fixable for e in f.fix.edits if isinstance(e, PendingEdit)):
        from . import python_cst  # the only place libcst is imported

        plan = gate_plan(ctx) if any(e.kind != "guard" for f in fixable for e in f.fix.edits
                                     if isinstance(e, PendingEdit)) else None
        built = _build(ctx, python_cst, fixable, plan.expression if plan else None)
    for finding in pending:
        edits = []
        for edit in finding.fix.edits:
            if isinstance(edit, PendingEdit):
                if edit.kind == "guard" and id(edit) in built:
                    edit = built[id(edit)]  # None: libcst could not build it, and the fix is dropped
                else:
                    edit = built.get(id(edit)) or (Edit(edit.span, edit.content) if edit.content else None)
            if edit is None:
                finding.fix = None
                break
            edits.append(edit)
        else:
            finding.fix = Fix(tuple(edits), finding.fix.title, finding.fix.applicability)


def _fits(ctx, edit: PendingEdit) -> bool:
    """A gated value whose plain-text substitution stays one line within the file's line
    length: libcst would render exactly that text, so it is not needed (nor imported)."""
    if edit.kind != "value" or not edit.content or "\n" in edit.content:
        return False
    key = ("fits", edit.span, edit.content)
    if key not in ctx.cache:
        ctx.cache[key] = _fits_line(ctx, edit)
    return ctx.cache[key]


def _fits_line(ctx, edit: PendingEdit) -> bool:
    from .python_layout import line_length

    line = ctx.lines.line_of(edit.span.start)
    if ctx.lines.line_of(edit.span.end) != line:
        return False
    before = ctx.source[ctx.lines.line_start(line):edit.span.start].decode("utf-8", errors="replace")
    after = ctx.source[edit.span.end:ctx.lines.line_end(line)].decode("utf-8", errors="replace")
    width = len(before) + len(edit.content) + len(after)
    return width <= line_length(ctx, width)


def _build(ctx, python_cst, findings, gate: str | None) -> dict[int, Edit | None]:
    """Built edits by ``id`` of their PendingEdit: guards and values one by one, wraps by group."""
    built: dict[int, Edit | None] = {}
    wraps: dict[tuple, tuple[list[ast.stmt], list[PendingEdit]]] = {}
    for finding in findings:
        for edit in finding.fix.edits:
            if not isinstance(edit, PendingEdit) or edit.stmt is None:
                continue
            if edit.kind == "guard":
                assert isinstance(edit.stmt, (ast.Import, ast.ImportFrom))
                built[id(edit)] = _guarded(python_cst.guard_import, ctx, edit.stmt, bound_names(edit.stmt))
                continue
            if gate is None:
                continue
            if edit.kind == "value":
                if not _fits(ctx, edit):
                    built[id(edit)] = _guarded(python_cst.gate_value, ctx, edit.stmt, edit.node,
                                               edit.rocm_text, gate, edit.parenthesize)
                continue
            place = _sibling_place(ctx, edit.stmt)
            if place is not None:
                wraps.setdefault((finding.fix.applicability, place[0]), (place[1], []))[1].append(edit)
    if gate is None:
        return built
    for siblings, edits in wraps.values():
        by_index = {_index_in(siblings, e.stmt): e for e in edits if e.stmt is not None}
        for run in _adjacent_runs(ctx, siblings, sorted(by_index)):
            stmts = [siblings[i] for i in run]
            into = _open_block_before(ctx, siblings, run[0], gate)
            edit = _guarded(python_cst.wrap_statements, ctx, stmts, f"not {gate}", into)
            for index in run:
                for pending in edits:
                    if pending.stmt is siblings[index]:
                        built[id(pending)] = edit
    return built


def _guarded(build, *args):
    """A libcst build, None where libcst rejects the fragment (the fix is then dropped).
    Any other failure of a builder drops the fix too, not the file's findings; with
    ROCMLINT_DEBUG set it is raised, as an internal error."""
    import os

    import libcst

    try:
        return build(*args)
    except (libcst.ParserSyntaxError, libcst.CSTValidationError, RecursionError, ValueError):
        return None
    except Exception:  # noqa: BLE001 - a fix is optional, the findings are not
        if os.environ.get("ROCMLINT_DEBUG"):
            raise
        return None


def _sibling_place(ctx, stmt: ast.stmt) -> tuple[tuple[int, str], list[ast.stmt]] | None:
    """(key of the statement list holding ``stmt``, that list)."""
    path = ctx.path_to(stmt)
    parent = path[-2] if len(path) > 1 and path[-1] is stmt else None
    if parent is None:
        return None
    for name, value in ast.iter_fields(parent):
        if isinstance(value, list) and any(item is stmt for item in value):
            return (id(parent), name), value
    return None


def _index_in(siblings: list[ast.stmt], stmt: ast.stmt) -> int:
    return next(i for i, item in enumerate(siblings) if item is stmt)


def _only_comments_between(ctx, before: ast.stmt, after: ast.stmt) -> bool:
    """Nothing but comment lines (no blank line: that ends a paragraph) between two statements."""
    rows = range(before.end_lineno or before.lineno, after.lineno - 1)
    return all(ctx.lines.line_text(row).lstrip().startswith("#") for row in rows)


def _adjacent_runs(ctx, siblings: list[ast.stmt], indexes: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for index in indexes:
        if runs and runs[-1][-1] == index - 1 and _only_comments_between(ctx, siblings[index - 1], siblings[index]):
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _open_block_before(ctx, siblings: list[ast.stmt], index: int, gate: str) -> ast.If | None:
    """An ``if not GATE:`` block (no else) just above ``siblings[index]``: the run joins it."""
    if index == 0:
        return None
    block = siblings[index - 1]
    if not isinstance(block, ast.If) or block.orelse or not _only_comments_between(ctx, block, siblings[index]):
        return None
    test = block.test
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)) or ctx.source_of(test.operand) != gate:
        return None
    if block.body[-1].end_lineno != block.end_lineno or statement_lines(ctx, block) is None:
        return None
    return block


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
    parenthesize = needs_parentheses(node, parent)
    text = f"{rocm_text} if {GATE} else {original}"
    if parenthesize:
        text = f"({text})"
    stmt = ctx.statement_of(ctx.path_to(node))
    return PendingEdit(ctx.node_span(node), text, kind="value", stmt=stmt, node=node, rocm_text=rocm_text,
                       parenthesize=parenthesize)


def statement_lines(ctx, stmt: ast.stmt) -> Span | None:
    """Whole lines of a statement, when nothing else shares them."""
    own = ctx.node_span(stmt)
    start = ctx.lines.line_start(ctx.lines.line_of(own.start))
    end = ctx.lines.line_end(ctx.lines.line_of(own.end))
    if ctx.source[start:own.start].strip() or ctx.text(Span(own.end, end)).strip().split("#")[0].strip():
        return None  # `x = 1; stmt` or `stmt; y = 2`
    return Span(start, end)


def wrap_statement_edit(ctx, stmt: ast.stmt) -> Edit | None:
    """``stmt`` -> ``if not GATE:`` + ``stmt`` one level deeper, built with libcst once all
    rules have run: adjacent statements wrapped by any rule share one block, and a block
    just above is extended (``finish_fixes``)."""
    lines = statement_lines(ctx, stmt)
    if lines is None:
        return None
    return PendingEdit(lines, "", stmt=stmt)


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
    """``import x`` -> ``try: import x / except ImportError: x = None``, built with libcst
    once all rules have run (``finish_fixes``)."""
    lines = statement_lines(ctx, stmt)
    names = bound_names(stmt)
    if lines is None or not names:
        return None
    _await_finish(ctx)
    return PendingEdit(lines, _guard_text(ctx.text(lines), names), stmt=stmt, kind="guard")


def _guard_text(text: str, names: list[str]) -> str:
    """The plain-text guard a display-only suggestion shows without importing libcst."""
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    unit = "\t" if "\t" in indent else "    "
    first, *rest = text[len(indent):].split("\n")
    body = f"{indent}{unit}{first}\n" + "".join(f"{unit}{line}\n" for line in rest)  # rest keep their indent
    nones = "".join(f"{indent}{unit}{name} = None\n" for name in dict.fromkeys(names))
    return f"{indent}try:\n{body}{indent}except ImportError:\n{nones}".rstrip("\n")
