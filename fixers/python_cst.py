"""Python fixes built as libcst transforms, turned into byte-span Edits.

Imported only when a file has a fixable finding (``python_gate.finish_fixes``): the scan
itself reads ``ast`` and never pays for libcst. Each transform works on the smallest
fragment that holds it (the gated statements, or the statement holding a gated value),
parsed inside an ``if 1:`` header when it is indented, so big files cost no more than
small ones; libcst keeps comments and formatting, and its ``indent=True`` continuation
lines follow the block's new depth while the inside of strings never moves. The changed
region of the rendered fragment becomes the Edit (design.md §1).
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import libcst as cst
from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper, PositionProvider

from rocmlint.model import Edit, Span

_WRAPPER = "if 1:\n"
_FIRST_BLOCK_INDENT = re.compile(rb":[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*\r?\n)*([ \t]+)\S")
MIN_LINE_LENGTH = 88  # black's, for files whose own lines are all shorter


class Fragment:
    """Whole lines ``first..last`` (0-based) of the file, parsed with libcst."""

    def __init__(self, ctx, first: int, last: int) -> None:
        self.ctx = ctx
        self.span = Span(ctx.lines.line_start(first), ctx.lines.line_end(last))
        self.text = ctx.source[self.span.start:self.span.end].decode("utf-8", errors="surrogateescape")
        self.indent = self.text[: len(self.text) - len(self.text.lstrip(" \t"))]
        self.prefix = _WRAPPER if self.indent else ""
        self.module = cst.parse_module(self.prefix + self.text + "\n")

    @property
    def body(self) -> list[cst.BaseStatement]:
        """The fragment's own statements (inside the ``if 1:`` header when indented)."""
        if self.prefix:
            header = self.module.body[0]
            assert isinstance(header, cst.If) and isinstance(header.body, cst.IndentedBlock)
            return list(header.body.body)
        return list(self.module.body)

    def with_body(self, body: list[cst.BaseStatement]) -> cst.Module:
        if self.prefix:
            header = self.module.body[0]
            assert isinstance(header, cst.If) and isinstance(header.body, cst.IndentedBlock)
            return self.module.with_changes(body=[header.with_changes(body=header.body.with_changes(body=body))])
        return self.module.with_changes(body=body)

    def render(self, module: cst.Module) -> str:
        code = module.code
        assert code.startswith(self.prefix) and code.endswith("\n")
        return code[len(self.prefix):-1]

    def parses_to(self, rendered: str) -> ast.Module | None:
        try:
            return ast.parse(self.prefix + rendered)
        except SyntaxError:
            return None

    def edit(self, rendered: str, cover: Span | None = None) -> Edit:
        """The smallest region of the fragment that differs from ``rendered``, widened to
        ``cover`` (the replaced node: an edit reads as a replacement, not a bare insertion)."""
        keep = None
        if cover is not None:
            raw = self.text.encode("utf-8", errors="surrogateescape")
            before = raw[: cover.start - self.span.start].decode("utf-8", errors="surrogateescape")
            after = raw[cover.end - self.span.start:].decode("utf-8", errors="surrogateescape")
            keep = (len(before), len(after))
        return minimal_edit(self.text, rendered, self.span.start, keep)


def minimal_edit(old: str, new: str, offset: int, keep: tuple[int, int] | None = None) -> Edit:
    """``old`` -> ``new`` as one Edit of the differing middle; ``keep`` caps the common
    prefix and suffix lengths taken out."""
    prefix = 0
    limit = min(len(old), len(new))
    prefix_cap, suffix_cap = keep or (limit, limit)
    while prefix < min(limit, prefix_cap) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(limit - prefix, suffix_cap) and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = offset + _utf8_len(old[:prefix])
    end = offset + _utf8_len(old[: len(old) - suffix])
    return Edit(Span(start, end), new[prefix: len(new) - suffix])


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogateescape"))


def indent_unit(source: bytes) -> str:
    """The file's indentation step: that of its first indented block, else four spaces."""
    match = _FIRST_BLOCK_INDENT.search(source)
    if match is None:
        return "    "
    unit = match.group(1).decode("ascii", errors="replace")
    return "\t" if "\t" in unit else unit


# Gated statements ---------------------------------------------------------------------------
def wrap_statements(ctx, stmts: list[ast.stmt], condition: str, into: ast.If | None = None) -> Edit | None:
    """``stmts`` (adjacent siblings, whole lines) under one ``if <condition>:`` block, or
    appended to the existing block ``into`` that ends just above them. None when libcst
    cannot give back exactly these statements (then no fix is offered)."""
    first = (into or stmts[0]).lineno - 1
    fragment = Fragment(ctx, first, stmts[-1].end_lineno - 1)
    body = fragment.body
    expected = len(stmts) + (1 if into is not None else 0)
    if len(body) != expected:
        return None
    unit = indent_unit(ctx.source)
    if into is not None:
        block = body[0]
        if not isinstance(block, cst.If) or not isinstance(block.body, cst.IndentedBlock) or block.orelse:
            return None
        new = block.with_changes(body=block.body.with_changes(body=[*block.body.body, *body[1:]]))
    else:
        head = body[0]
        new = cst.If(
            test=cst.parse_expression(condition),
            body=cst.IndentedBlock(body=[head.with_changes(leading_lines=()), *body[1:]], indent=unit),
            leading_lines=head.leading_lines,
        )
    rendered = fragment.render(fragment.with_body([new]))
    tree = fragment.parses_to(rendered)
    if tree is None:
        return None
    outer = tree.body[0].body if fragment.prefix else tree.body
    if len(outer) != 1 or not isinstance(outer[0], ast.If):
        return None
    moved = outer[0].body[len(into.body) if into is not None else 0:]
    if [ast.dump(s) for s in moved] != [ast.dump(s) for s in stmts]:
        return None
    return fragment.edit(rendered, cover=fragment.span)


def guard_import(ctx, stmt: ast.Import | ast.ImportFrom, names: list[str]) -> Edit | None:
    """``import x`` -> ``try: import x / except ImportError: x = None`` (an optional import)."""
    fragment = Fragment(ctx, stmt.lineno - 1, stmt.end_lineno - 1)
    body = fragment.body
    if len(body) != 1:
        return None
    unit = indent_unit(ctx.source)
    head = body[0]
    fallback = [cst.parse_statement(f"{name} = None\n") for name in dict.fromkeys(names)]
    new = cst.Try(
        body=cst.IndentedBlock(body=[head.with_changes(leading_lines=())], indent=unit),
        handlers=[cst.ExceptHandler(body=cst.IndentedBlock(body=fallback, indent=unit),
                                    type=cst.Name("ImportError"))],
        leading_lines=head.leading_lines,
    )
    rendered = fragment.render(fragment.with_body([new]))
    tree = fragment.parses_to(rendered)
    outer = (tree.body[0].body if fragment.prefix else tree.body) if tree is not None else []
    if len(outer) != 1 or not isinstance(outer[0], ast.Try) or ast.dump(outer[0].body[0]) != ast.dump(stmt):
        return None
    return fragment.edit(rendered, cover=fragment.span)


# Gated values -------------------------------------------------------------------------------
def gate_value(ctx, stmt: ast.stmt, node: ast.expr, rocm_text: str, condition: str,
               parenthesize: bool) -> Edit | None:
    """``node`` -> ``<rocm_text> if <condition> else <node>`` inside ``stmt``, wrapped the
    way the file wraps long lines when the result outgrows them."""
    first = ctx.span_of(stmt).start
    fragment = Fragment(ctx, ctx.lines.line_of(first), stmt.end_lineno - 1)
    if ctx.source[fragment.span.start:first].strip():
        return None  # `x = 1; stmt`: not whole lines
    wrapper = MetadataWrapper(fragment.module)
    positions = wrapper.resolve(ByteSpanPositionProvider)
    target = ctx.node_span(node)
    shift = len(fragment.prefix) - fragment.span.start
    want = (target.start + shift, target.end + shift)
    found = [n for n, p in positions.items()
             if isinstance(n, cst.BaseExpression) and (p.start, p.start + p.length) == want]
    if not found:
        return None
    original = found[0]
    for candidate in found[1:]:  # the outermost node of that extent
        if _contains(candidate, original):
            original = candidate
    orelse = original
    if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)) and not original.lpar:
        orelse = original.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    replacement: cst.BaseExpression = cst.IfExp(
        test=cst.parse_expression(condition), body=cst.parse_expression(rocm_text), orelse=orelse,
        lpar=[cst.LeftParen()] if parenthesize else [], rpar=[cst.RightParen()] if parenthesize else [],
    )
    module = wrapper.module.deep_replace(original, replacement)
    assert isinstance(module, cst.Module)
    rendered = fragment.render(module)
    limit = line_length(ctx)
    if _longest(rendered) > max(limit, _longest(fragment.text)):
        wrapped = _wrap_long_line(fragment, module, replacement, limit, indent_unit(ctx.source))
        if wrapped is not None:
            rendered = wrapped
    if fragment.parses_to(rendered) is None:
        return None
    return fragment.edit(rendered, cover=target)


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(child is inner or _contains(child, inner) for child in outer.children)


def _longest(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def _hanging(unit: str) -> cst.ParenthesizedWhitespace:
    """A newline, then the statement's indentation plus ``unit``."""
    return cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(unit))


def _wrap_long_line(fragment: Fragment, module: cst.Module, value: cst.IfExp, limit: int,
                    unit: str) -> str | None:
    """Black's shapes, tried in order until every line fits: the outermost bracket of the
    value's line split with its arguments on one hanging line, then one argument per line
    with a trailing comma (always so for a dict or list); a bare right-hand side gets
    hanging parentheses, then its ``if``/``else`` on lines of their own."""
    parents = _parents(module)
    container = None
    node: cst.CSTNode = value
    while node in parents and not isinstance(node, (cst.BaseSmallStatement, cst.Decorator,
                                                     cst.BaseCompoundStatement)):
        if isinstance(node, _CONTAINERS) and "\n" not in module.code_for_node(node):
            container = node
        node = parents[node]
    # Continuation lines are indented from the line the bracket opens on.
    base = _line_indent(fragment, module, container or value)
    if base is None:
        return None
    step = base + unit
    shapes: list[tuple[cst.CSTNode, cst.CSTNode]] = []
    if isinstance(container, cst.Call) and container.args:
        shapes = [(container, _split_call(container, base, step, one_per_line=False)),
                  (container, _split_call(container, base, step, one_per_line=True))]
    elif isinstance(container, (cst.Dict, cst.List, cst.Set)) and container.elements:
        shapes = [(container, _split_elements(container, base, step))]
    elif container is None and isinstance(parents.get(value), (cst.Assign, cst.AnnAssign, cst.Return,
                                                                 cst.AugAssign)):
        hung = value.with_changes(lpar=[cst.LeftParen(whitespace_after=_hanging(step))],
                                  rpar=[cst.RightParen(whitespace_before=_hanging(base))])
        split = hung.with_changes(whitespace_before_if=_hanging(step), whitespace_before_else=_hanging(step))
        shapes = [(value, hung), (value, split)]
    best = None
    for old, new in shapes:
        replaced = module.deep_replace(old, new)
        assert isinstance(replaced, cst.Module)
        best = fragment.render(replaced)
        if _longest(best) <= limit:
            break
    return best


def _line_indent(fragment: Fragment, module: cst.Module, node: cst.CSTNode) -> str | None:
    """Indentation of the line ``node`` starts on, beyond the statement's own."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    line = wrapper.resolve(PositionProvider)[node].start.line
    text = module.code.split("\n")[line - 1]
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    if not indent.startswith(fragment.indent):
        return None
    return indent[len(fragment.indent):]


_CONTAINERS = (cst.Call, cst.Dict, cst.List, cst.Set)


def _split_call(call: cst.Call, base: str, step: str, one_per_line: bool) -> cst.Call:
    args = list(call.args)
    new_args = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        closing = _hanging(base)
        if one_per_line:
            new_args.append(arg.with_changes(comma=cst.Comma(whitespace_after=closing if last else _hanging(step)),
                                             whitespace_after_arg=cst.SimpleWhitespace("")))
        elif last:
            new_args.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=closing))
        else:
            new_args.append(arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                                             whitespace_after_arg=cst.SimpleWhitespace("")))
    return call.with_changes(whitespace_before_args=_hanging(step), args=new_args)


def _split_elements(node, base: str, step: str):
    elements = list(node.elements)
    new = []
    for index, element in enumerate(elements):
        last = index == len(elements) - 1
        new.append(element.with_changes(comma=cst.Comma(whitespace_after=_hanging(base if last else step))))
    if isinstance(node, (cst.Dict, cst.Set)):
        return node.with_changes(elements=new, lbrace=node.lbrace.with_changes(whitespace_after=_hanging(step)))
    return node.with_changes(elements=new, lbracket=node.lbracket.with_changes(whitespace_after=_hanging(step)))


def _parents(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    parents: dict[cst.CSTNode, cst.CSTNode] = {}

    def walk(node: cst.CSTNode) -> None:
        for child in node.children:
            parents[child] = node
            walk(child)

    walk(module)
    return parents


# Line length --------------------------------------------------------------------------------
def line_length(ctx) -> int:
    """The file's line length: ruff's or black's setting in the nearest pyproject.toml /
    ruff.toml, else the longest line a formatter could have split (no string, no comment:
    those a formatter leaves long), at least 88."""
    if "line_length" not in ctx.cache:
        configured = _configured_length(Path(ctx.path).resolve().parent)
        ctx.cache["line_length"] = configured or max(_longest_code_line(ctx.source), MIN_LINE_LENGTH)
    return ctx.cache["line_length"]


def _longest_code_line(source: bytes) -> int:
    import io
    import tokenize

    text = source.decode("utf-8", errors="surrogateescape")
    unsplittable: set[int] = set()
    kinds = {tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_START", tokenize.STRING),
             getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in kinds:
                unsplittable.update(range(token.start[0], token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return 0
    lines = text.split("\n")
    return max((len(line) for row, line in enumerate(lines, start=1) if row not in unsplittable), default=0)


@lru_cache(maxsize=256)
def _configured_length(folder: Path) -> int | None:
    """``line-length`` of the nearest ruff.toml, or of pyproject's [tool.ruff] / [tool.black]
    (their default 88 when the table is there without it); searched up to the repository root."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    for directory in (folder, *folder.parents):
        for name in ("ruff.toml", ".ruff.toml", "pyproject.toml"):
            path = directory / name
            if not path.is_file():
                continue
            try:
                table = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            tool = table.get("tool", {}) if name == "pyproject.toml" else {"ruff": table}
            sections = [tool[key] for key in ("ruff", "black") if isinstance(tool.get(key), dict)]
            for section in sections:
                value = section.get("line-length")
                if isinstance(value, int) and 40 <= value <= 400:
                    return value
            if sections:
                return MIN_LINE_LENGTH
        if (directory / ".git").exists():
            break
    return None
