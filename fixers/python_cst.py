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

import libcst as cst

from rocmlint.model import Edit, Span

from .python_layout import line_length
from rocmlint.python.nodes import walk

_WRAPPER = "if 1:\n"


class Fragment:
    """Whole lines ``first..last`` (0-based) of the file, parsed with libcst."""

    def __init__(self, ctx, first: int, last: int, header_only: bool = False, source: bytes | None = None) -> None:
        """``source``: what to parse instead of those lines (the lines with a change made)."""
        self.ctx = ctx
        self.span = Span(ctx.lines.line_start(first), ctx.lines.line_end(last))
        self.text = _decode(ctx.source[self.span.start:self.span.end])
        self.indent = self.text[: len(self.text) - len(self.text.lstrip(" \t"))]
        self.prefix = _WRAPPER if self.indent else ""
        # A compound statement's header alone, completed by a stand-in body that is cut off again.
        self.suffix = f"\n{self.indent}{indent_unit(ctx)}pass" if header_only else ""
        parsed = self.text if source is None else _decode(source)
        self.module = cst.parse_module(self.prefix + parsed + self.suffix + "\n")

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
        assert code.startswith(self.prefix) and code.endswith(self.suffix + "\n")
        return code[len(self.prefix): len(code) - len(self.suffix) - 1]

    def parses_to(self, rendered: str) -> ast.Module | None:
        try:
            return ast.parse(self.prefix + rendered + self.suffix)
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


def last_line(node: ast.stmt | ast.expr) -> int:
    """1-based last line (``end_lineno`` is typed optional; parsed nodes always have it)."""
    return node.end_lineno or node.lineno


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogateescape"))


def indent_unit(ctx) -> str:
    """The file's indentation step: how far the first block's body sits inside its
    header (read from ``ast`` positions: a text search is fooled by docstrings and dicts)."""
    if "indent_unit" not in ctx.cache:
        unit = "    "
        for stmt in walk(ctx.tree):
            body = getattr(stmt, "body", None)
            if isinstance(stmt, ast.stmt) and isinstance(body, list) and body and body[0].lineno > stmt.lineno:
                line = ctx.lines.line_text(body[0].lineno - 1)
                indent = line[: len(line) - len(line.lstrip(" \t"))]
                if "\t" in indent:
                    unit = "\t"
                elif len(indent) > stmt.col_offset:
                    unit = " " * (len(indent) - stmt.col_offset)
                break
        ctx.cache["indent_unit"] = unit
    return ctx.cache["indent_unit"]


# Gated statements ---------------------------------------------------------------------------
def wrap_statements(ctx, stmts: list[ast.stmt], condition: str, into: ast.If | None = None) -> Edit | None:
    """``stmts`` (adjacent siblings, whole lines) under one ``if <condition>:`` block, or
    appended to the existing block ``into`` that ends just above them. None when libcst
    cannot give back exactly these statements (then no fix is offered)."""
    first = (into or stmts[0]).lineno - 1
    fragment = Fragment(ctx, first, last_line(stmts[-1]) - 1)
    body = fragment.body
    expected = len(stmts) + (1 if into is not None else 0)
    if len(body) != expected:
        return None
    unit = indent_unit(ctx)
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
            leading_lines=getattr(head, "leading_lines", ()),
        )
    rendered = fragment.render(fragment.with_body([new]))
    tree = fragment.parses_to(rendered)
    if tree is None:
        return None
    outer = getattr(tree.body[0], "body", []) if fragment.prefix else tree.body
    if len(outer) != 1 or not isinstance(outer[0], ast.If):
        return None
    moved = outer[0].body[len(into.body) if into is not None else 0:]
    if [ast.dump(s) for s in moved] != [ast.dump(s) for s in stmts]:
        return None
    return fragment.edit(rendered, cover=fragment.span)


def guard_import(ctx, stmt: ast.Import | ast.ImportFrom, names: list[str]) -> Edit | None:
    """``import x`` -> ``try: import x / except ImportError: x = None`` (an optional import)."""
    fragment = Fragment(ctx, stmt.lineno - 1, last_line(stmt) - 1)
    body = fragment.body
    if len(body) != 1:
        return None
    unit = indent_unit(ctx)
    head = body[0]
    fallback = [cst.parse_statement(f"{name} = None\n") for name in dict.fromkeys(names)]
    new = cst.Try(
        body=cst.IndentedBlock(body=[head.with_changes(leading_lines=())], indent=unit),
        handlers=[cst.ExceptHandler(body=cst.IndentedBlock(body=fallback, indent=unit),
                                    type=cst.Name("ImportError"))],
        leading_lines=getattr(head, "leading_lines", ()),
    )
    rendered = fragment.render(fragment.with_body([new]))
    tree = fragment.parses_to(rendered)
    outer = (getattr(tree.body[0], "body", []) if fragment.prefix else tree.body) if tree is not None else []
    if len(outer) != 1 or not isinstance(outer[0], ast.Try) or ast.dump(outer[0].body[0]) != ast.dump(stmt):
        return None
    return fragment.edit(rendered, cover=fragment.span)


# Gated values -------------------------------------------------------------------------------
def gate_value(ctx, stmt: ast.stmt, node: ast.expr, rocm_text: str, condition: str,
               parenthesize: bool) -> Edit | None:
    """``node`` -> ``<rocm_text> if <condition> else <node>`` inside ``stmt``, wrapped the
    way the file wraps long lines when the result outgrows them.

    The conditional is written into the statement's text and parsed there by libcst (its
    test a same-length marker name, so the new node is found without position metadata,
    which costs more than the parse); the marker becomes the gate in the rendered text."""
    first = ctx.span_of(stmt).start
    last, header_only = last_line(stmt) - 1, False
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body and body[0].lineno > last_line(node):
        last, header_only = body[0].lineno - 2, True  # the value is in the header: leave the body out
    start, end = ctx.lines.line_start(ctx.lines.line_of(first)), ctx.lines.line_end(last)
    if ctx.source[start:first].strip():
        return None  # `x = 1; stmt`: not whole lines
    marker = _marker(condition, ctx.source[start:end] + rocm_text.encode("utf-8", errors="surrogateescape"))
    if marker is None:
        return None
    target = ctx.node_span(node)
    original = ctx.source[target.start:target.end].decode("utf-8", errors="surrogateescape")
    if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
        original = f"({original})"
    value = f"{rocm_text} if {marker} else {original}"
    if parenthesize:
        value = f"({value})"
    encoded = value.encode("utf-8", errors="surrogateescape")
    fragment = Fragment(ctx, ctx.lines.line_of(first), last, header_only,
                        source=ctx.source[start:target.start] + encoded + ctx.source[target.end:end])
    module = fragment.module
    rendered = fragment.render(module)
    longest = _longest(rendered)
    if longest > _longest(fragment.text) and longest > line_length(ctx, longest):
        path = _find_conditional(module, marker)
        base = _indent_of_line(ctx, target.start, fragment.indent)
        if path is not None and base is not None:
            wrapped = _wrap_long_line(fragment, module, path, line_length(ctx, longest),
                                      base, indent_unit(ctx))
            if wrapped is not None:
                rendered = wrapped
    # libcst rendered a tree it parsed, and the marker is a name as long as the gate: no
    # re-parse here (the fixer re-parses the whole file before writing).
    return fragment.edit(rendered.replace(marker, condition), cover=target)


def _marker(condition: str, text: bytes) -> str | None:
    """A name as long as ``condition`` that ``text`` does not contain."""
    for letter in "QZXJ":
        marker = (letter * len(condition))[: max(len(condition), 1)]
        if marker.isidentifier() and marker.encode() not in text:
            return marker
    return None


def _find_conditional(node: cst.CSTNode, marker: str) -> list[cst.CSTNode] | None:
    """The nodes from ``node`` down to the conditional whose test is ``marker``."""
    if isinstance(node, cst.IfExp) and isinstance(node.test, cst.Name) and node.test.value == marker:
        return [node]
    for child in node.children:
        found = _find_conditional(child, marker)
        if found is not None:
            return [node, *found]
    return None


def _indent_of_line(ctx, offset: int, statement_indent: str) -> str | None:
    """Indentation of the line holding ``offset``, beyond the statement's own."""
    text = ctx.lines.line_text(ctx.lines.line_of(offset))
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    return indent[len(statement_indent):] if indent.startswith(statement_indent) else None


def _longest(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def _hanging(unit: str) -> cst.ParenthesizedWhitespace:
    """A newline, then the statement's indentation plus ``unit``."""
    return cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(unit))


def _wrap_long_line(fragment: Fragment, module: cst.Module, path: list[cst.CSTNode], limit: int,
                    base: str, unit: str) -> str | None:
    """Black's shapes, tried in order until every line fits: the outermost bracket of the
    value's line split with its arguments on one hanging line, then one argument per line
    with a trailing comma (always so for a dict or list); a bare right-hand side gets
    hanging parentheses, then its ``if``/``else`` on lines of their own."""
    value = path[-1]
    assert isinstance(value, cst.IfExp)
    one_line = "\n" not in fragment.text
    container = None
    in_fstring = False  # a line break inside a one-line f-string is a syntax error (< 3.12)
    for node, child in zip(reversed(path[:-1]), reversed(path[1:])):
        if isinstance(node, (cst.BaseSmallStatement, cst.Decorator, cst.BaseCompoundStatement)):
            break
        if isinstance(node, cst.FormattedString):
            in_fstring, container = True, None  # only a bracket outside the f-string may split
            continue
        # A bracket around the value: its arguments or elements hold it (not `f(x)` of `f(x)(y)`).
        if (isinstance(node, _CONTAINERS) and isinstance(child, _ITEMS)
                and (one_line or "\n" not in module.code_for_node(node))):
            container = node
    # Continuation lines are indented from the line the bracket opens on (the value's line:
    # only a bracket the value shares one line with is split).
    if in_fstring and container is None:
        return None  # a long line beats a broken f-string
    step = base + unit
    shapes: list[tuple[cst.CSTNode, cst.CSTNode]] = []
    if isinstance(container, cst.Call) and container.args:
        shapes = [(container, _split_call(container, base, step, one_per_line=False)),
                  (container, _split_call(container, base, step, one_per_line=True))]
    elif isinstance(container, (cst.Dict, cst.List, cst.Set)) and container.elements:
        shapes = [(container, _split_elements(container, base, step))]
    elif container is None and (hanging := _hanging_call(path)) is not None and base.endswith(unit):
        # Already split after its bracket, arguments on the value's line: one per line, and
        # if that is not enough, the conditional's `if` and `else` on lines of their own.
        shapes = [(hanging, _split_call(hanging, base[: len(base) - len(unit)], base, one_per_line=True))]
        if isinstance(path[-2], cst.Arg) and "\n" in module.code_for_node(hanging):
            shapes.append((value, _split_conditional(value, base)))
    elif container is None and isinstance(path[-2], (cst.Assign, cst.AnnAssign, cst.Return, cst.AugAssign)):
        hung = _parenthesized(value, base, step)
        shapes = [(value, hung), (value, _split_conditional(hung, step))]
    # Black splits the last bracket of a right-hand side first, and puts one holding an
    # operator in parentheses; those win when every line then fits.
    first = _rhs_shapes(path, value, container, base, step) if one_line else []
    best = None
    for old, new in first + shapes:
        replaced = module.deep_replace(old, new)
        assert isinstance(replaced, cst.Module)
        rendered = fragment.render(replaced)
        if _longest(rendered) <= limit:
            return rendered
        if (old, new) in shapes or not shapes:
            best = rendered  # nothing fits: the most split form of the value's own bracket
    return best


def _rhs_shapes(path: list[cst.CSTNode], value: cst.IfExp, container: cst.CSTNode | None, base: str,
                step: str) -> list[tuple[cst.CSTNode, cst.CSTNode]]:
    rhs = next((child for node, child in zip(path, path[1:])
                if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return))
                and child is node.value), None)
    if rhs is None or rhs is value or rhs is container:
        return []
    if isinstance(rhs, (cst.BinaryOperation, cst.BooleanOperation)) and not rhs.lpar:
        return [(rhs, _parenthesized(rhs, base, step)),
                (rhs, _parenthesized(_split_operators(rhs, step), base, step))]
    if isinstance(rhs, cst.Comparison) and not rhs.lpar:
        return [(rhs, _parenthesized(rhs, base, step))]
    if isinstance(rhs, cst.IfExp) and not rhs.lpar:
        hung = _parenthesized(rhs, base, step)
        return [(rhs, hung), (rhs, _split_conditional(hung, step))]
    if isinstance(rhs, cst.Call) and rhs.args:
        return [(rhs, _split_call(rhs, base, step, one_per_line=False)),
                (rhs, _split_call(rhs, base, step, one_per_line=True))]
    return []


def _parenthesized(node, base: str, step: str):
    """``node`` in parentheses that open and close lines of their own."""
    return node.with_changes(lpar=[cst.LeftParen(whitespace_after=_hanging(step))],
                             rpar=[cst.RightParen(whitespace_before=_hanging(base))])


def _split_operators(node, indent: str):
    """``a / b * c`` with each operator of the chain starting a line at ``indent``."""
    left = node.left
    if isinstance(left, type(node)) and not left.lpar:
        left = _split_operators(left, indent)
    return node.with_changes(left=left, operator=node.operator.with_changes(whitespace_before=_hanging(indent)))


def _split_conditional(node: cst.IfExp, indent: str) -> cst.IfExp:
    """``a if c else b`` with ``if c`` and ``else b`` starting lines at ``indent``."""
    return node.with_changes(whitespace_before_if=_hanging(indent), whitespace_before_else=_hanging(indent))


def _hanging_call(path: list[cst.CSTNode]) -> cst.Call | None:
    """The innermost call holding the value in its arguments, when they start on a line of
    their own."""
    for node, child in zip(reversed(path[:-1]), reversed(path[1:])):
        if isinstance(node, (cst.BaseSmallStatement, cst.Decorator, cst.BaseCompoundStatement)):
            return None
        if isinstance(node, cst.Call) and isinstance(child, cst.Arg):
            return node if isinstance(node.whitespace_before_args, cst.ParenthesizedWhitespace) else None
    return None


_CONTAINERS = (cst.Call, cst.Dict, cst.List, cst.Set)
_ITEMS = (cst.Arg, cst.BaseElement, cst.BaseDictElement)


def _split_call(call: cst.Call, base: str, step: str, one_per_line: bool) -> cst.Call:
    args = list(call.args)
    # A sole unparenthesised generator argument takes no trailing comma (a syntax error).
    sole_generator = len(args) == 1 and isinstance(args[0].value, cst.GeneratorExp) and not args[0].value.lpar
    new_args = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        closing = _hanging(base)
        if one_per_line and not (last and sole_generator):
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
