"""CUDA source inside Python strings: the kernels CuPy, torch and PyCUDA compile at run time.

``cupy.RawKernel``/``RawModule``/``ElementwiseKernel``/``ReductionKernel``,
``torch.utils.cpp_extension.load_inline``, torch's jiterator and PyCUDA's ``SourceModule``
take C++/CUDA source as a string and compile it on the machine (hiprtc or hipcc on ROCm).
This module finds the string expressions that reach those arguments (literals, f-strings,
concatenations, names bound once, ``str.format``/``%``/``string.Template`` templates),
assembles each argument's text as the compiler sees it (a loop body or an expression inside
a stand-in kernel), and lints it with the C++ rules (``engine.analyse_buffer``). Findings
and fix edits are mapped back to the Python file's own bytes; an edit is only offered when
it can be written into its literal and read back to exactly the text the C++ fix meant.
"""
from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterator

from ..lazy_re import lazy_compile
from ..literals import KERNEL_SOURCE_WORDS
from ..model import Finding, Fix, LineIndex, Span
from .kernel_text import KernelText, Piece
from .literal_text import FIELD, Literal, read_literal

if TYPE_CHECKING:
    from ..config import Settings
    from ..rule import Rule
    from .context import PythonContext

# The prefilter's trigger (a core table the engine reads too: files without one never import this).
TRIGGERS = KERNEL_SOURCE_WORDS


@dataclass(frozen=True)
class Slot:
    """An argument that carries source: ``unit`` (a translation unit), ``statements`` (a
    loop body the library wraps in its kernel) or ``expression`` (pasted into a macro or
    an expression: reported, never fixed)."""

    keyword: str
    position: int | None  # None: keyword only
    shape: str = "unit"


_CUPY_ELEMENTWISE = (Slot("operation", 2, "statements"), Slot("preamble", 5),
                     Slot("loop_prep", None, "statements"), Slot("after_loop", None, "statements"))
_PYCUDA_ELEMENTWISE = (Slot("operation", 1, "statements"), Slot("preamble", None),
                       Slot("loop_prep", None, "statements"), Slot("after_loop", None, "statements"))
CONSTRUCTORS: dict[tuple[str, str], tuple[Slot, ...]] = {
    ("cupy", "RawKernel"): (Slot("code", 0),),
    ("cupy", "RawModule"): (Slot("code", None),),
    ("cupy", "ElementwiseKernel"): _CUPY_ELEMENTWISE,
    # CuPy pastes the expressions into #define REDUCE(a, b) (...) and the like.
    ("cupy", "ReductionKernel"): (Slot("map_expr", 2, "expression"), Slot("reduce_expr", 3, "expression"),
                                  Slot("post_map_expr", 4, "expression"), Slot("preamble", 9)),
    ("cupy", "compile_with_cache"): (Slot("source", 0),),
    ("torch", "load_inline"): (Slot("cpp_sources", 1), Slot("cuda_sources", 2)),
    ("torch", "_create_jit_fn"): (Slot("code_string", 0),),
    ("torch", "_create_multi_output_jit_fn"): (Slot("code_string", 0),),
    ("pycuda", "SourceModule"): (Slot("source", 0),),
    ("pycuda", "DynamicSourceModule"): (Slot("source", 0),),
    ("pycuda", "ElementwiseKernel"): _PYCUDA_ELEMENTWISE,
    ("pycuda", "ReductionKernel"): (Slot("reduce_expr", 2, "expression"), Slot("map_expr", 3, "expression"),
                                    Slot("preamble", 8)),
}
_NAMES = frozenset(name for _family, name in CONSTRUCTORS)
_TRIGGER = lazy_compile(rb"\b(?:%s)\b" % b"|".join(sorted(n.encode() for n in _NAMES)))
_FAMILIES = {"cupy": "cupy", "cupyx": "cupy", "torch": "torch", "pycuda": "pycuda"}
# torch's JIT build runs hipify over load_inline's sources before hipcc compiles them.
HIPIFIED = frozenset({("torch", "load_inline")})
_MAX_DEPTH = 8


@dataclass
class Kernel:
    """One argument's source text as the run-time compiler sees it."""

    call: ast.Call
    constructor: str  # qualified name, as resolved
    family: str
    slot: Slot
    text: "KernelText"

    @property
    def hipified(self) -> bool:
        return (self.family, self.constructor.rsplit(".", 1)[-1]) in HIPIFIED

    @property
    def nvidia_only(self) -> bool:
        """Compiled by a package that exists for NVIDIA GPUs only (PyCUDA): the project
        model's list of such imports decides."""
        from .backends import NVIDIA_ONLY_IMPORTS

        return any(name == root or name.startswith(root + ".") for root in NVIDIA_ONLY_IMPORTS
                   for name in (self.constructor, self.family))


def has_trigger(buffer: bytes) -> bool:
    return any(trigger in buffer for trigger in TRIGGERS)


def constructor_anchors(buffer: bytes) -> list[int]:
    """Where a kernel constructor's name stands as a word: ``find_kernels`` reads calls
    there, and calls through an alias whose import names it (none: the file has no kernel)."""
    return [m.start() for m in _TRIGGER.finditer(buffer)]


# Finding the kernels ---------------------------------------------------------------------------
def find_kernels(ctx: "PythonContext") -> list[Kernel]:
    """Every argument of a run-time kernel constructor whose text is (partly) known."""
    finder = _Finder(ctx)
    kernels: list[Kernel] = []
    seen: set[int] = set()
    # `from torch.utils.cpp_extension import load_inline as build`: calls spell the alias
    renamed = [local for local, qualname in ctx.aliases.items()
               if qualname.rsplit(".", 1)[-1] in _NAMES and local not in _NAMES]
    calls = _TRIGGER if not renamed else re.compile(
        rb"\b(?:%s)\b" % b"|".join(re.escape(n.encode()) for n in sorted(_NAMES | set(renamed))))
    for m in calls.finditer(ctx.source):
        path = ctx.node_path(m.start())
        if len(path) < 2 or not isinstance(path[-2], ast.Call) or path[-2].func is not path[-1]:
            continue
        call = path[-2]
        if id(call) in seen:
            continue
        seen.add(id(call))
        kernels.extend(finder.kernels(call))
    return kernels


class _Finder:
    def __init__(self, ctx: "PythonContext") -> None:
        self.ctx = ctx
        self.literals: dict[int, Literal] = {}

    def kernels(self, call: ast.Call) -> Iterator[Kernel]:
        found = self.constructor(call)
        if found is None:
            return
        family, name, qualname = found
        for slot in CONSTRUCTORS[(family, name)]:
            argument = _argument(call, slot)
            if argument is None:
                continue
            for source in self.sources(argument):
                pieces = self.pieces(source, 0)
                if any(p is not None for p in pieces):
                    anchor = self.ctx.node_span(source).start
                    yield Kernel(call, qualname, family, slot, KernelText(pieces, slot.shape, anchor))

    def constructor(self, call: ast.Call) -> tuple[str, str, str] | None:
        """(family, name, qualified name) of a run-time compiler, resolved through imports.
        A name imported from another package is not one; an unresolved one (a relative
        import, a module held in a variable) is judged by its name."""
        qualname = self.ctx.qualname(call.func)
        if qualname is None:
            return None
        name = qualname.rsplit(".", 1)[-1]
        if name not in _NAMES:
            return None
        family = _FAMILIES.get(qualname.split(".")[0])
        if family is None:
            written = call.func
            while isinstance(written, ast.Attribute):
                written = written.value
            if isinstance(written, ast.Name) and written.id in self.ctx.aliases:
                return None  # imported from a package that is not a known compiler
            family = self.family_of_bare(name)
        return (family, name, qualname) if (family, name) in CONSTRUCTORS else None

    def family_of_bare(self, name: str) -> str:
        families = {family for family, known in CONSTRUCTORS if known == name}
        if len(families) == 1:
            return families.pop()
        imported = {self.ctx.aliases[a].split(".")[0] for a in self.ctx.aliases}
        return "pycuda" if "pycuda" in imported and "cupy" not in imported else "cupy"

    def sources(self, argument: ast.expr) -> list[ast.expr]:
        """load_inline takes a string or a list of them."""
        value: ast.expr | None = argument
        if isinstance(value, ast.Name):
            bound = self.ctx.resolve_name(value)
            if isinstance(bound, (ast.List, ast.Tuple)):
                value = bound
        if isinstance(value, (ast.List, ast.Tuple)):
            return [e for e in value.elts if not isinstance(e, ast.Starred)]
        return [argument]

    def literal(self, node: ast.expr) -> Literal:
        key = id(node)
        found = self.literals.get(key)
        if found is None:
            span = self.ctx.node_span(node)
            read = read_literal(self.ctx.source, span.start, span.end, node)
            assert read is not None, "pieces() keeps str literals only"
            found = self.literals[key] = read
        return found

    def pieces(self, expr: ast.expr | None, depth: int) -> list[Piece | None]:
        """The literals ``expr`` is made of, in order; None for a part not known here."""
        if expr is None or depth > _MAX_DEPTH:
            return [None]
        if isinstance(expr, ast.JoinedStr) or isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return [Piece(expr, self.literal)]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self.pieces(expr.left, depth + 1) + self.pieces(expr.right, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
            return _layered(self.pieces(expr.left, depth + 1), "percent")
        if isinstance(expr, ast.Name):
            return self.pieces(self.ctx.resolve_name(expr), depth + 1)
        if isinstance(expr, ast.IfExp):  # `SRC_HIP if IS_ROCM else SRC`: the text ROCm compiles
            on_rocm = self.ctx.gates.value(expr.test, True)
            if on_rocm is None:
                return [None]
            return self.pieces(expr.body if on_rocm else expr.orelse, depth + 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            return self.method_pieces(expr, expr.func.attr, expr.func.value, depth)
        return [None]

    def method_pieces(self, call: ast.Call, method: str, receiver: ast.expr, depth: int) -> list[Piece | None]:
        if method == "format":
            return _layered(self.pieces(receiver, depth + 1), "format")
        if method == "replace":  # `.replace("TYPE", "float")`: the text as written
            return self.pieces(receiver, depth + 1)
        if method in ("substitute", "safe_substitute"):
            template = self.ctx.resolve_name(receiver) if isinstance(receiver, ast.Name) else receiver
            if isinstance(template, ast.Call) and template.args and \
                    (self.ctx.qualname(template.func) or "").endswith("Template"):
                return _layered(self.pieces(template.args[0], depth + 1), "template")
            return [None]
        if method == "join" and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
            separator = self.pieces(receiver, depth + 1)
            out: list[Piece | None] = []
            for index, element in enumerate(call.args[0].elts):
                out.extend((separator if index else []) + self.pieces(element, depth + 1))
            return out
        return [None]


def _layered(pieces: list[Piece | None], layer: str) -> list[Piece | None]:
    return [None if p is None else Piece(p.node, p.read, p.layers + (layer,)) for p in pieces]


def _argument(call: ast.Call, slot: Slot) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == slot.keyword:
            return keyword.value
    if slot.position is None:
        return None
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if index == slot.position:
            return arg
    return None


# Linting ---------------------------------------------------------------------------------------
@contextmanager
def _without_project() -> Iterator[None]:
    """A kernel string is no file of the project's C++ build: its analysis asks no model."""
    from ..rule import activate, active

    project = active()
    activate(None)
    try:
        yield
    finally:
        activate(project)


def kernel_settings(settings: "Settings") -> "Settings":
    """The same string is compiled for both vendors: fixes always go behind the gate."""
    return settings if settings.gate == "always" else replace(settings, gate="always")


def lint_kernels(ctx: "PythonContext", rules: tuple["Rule", ...], analyse_buffer: Callable[..., list[Finding]],
                 build_fixes: "bool | frozenset" = True) -> list[Finding]:
    """The C++ rules' findings on every kernel string the ROCm build may compile, in the
    Python file's positions (suppressions inside the kernel already applied);
    ``analyse_buffer``: the engine's (which sits above this front end)."""
    settings = kernel_settings(ctx.settings)
    found: list[Finding] = []
    seen: set[tuple[str, Span]] = set()
    for kernel in find_kernels(ctx):
        if kernel.nvidia_only or ctx.nvidia_only(ctx.span_of(kernel.call).start):
            continue  # only the NVIDIA build runs this call
        with _without_project():
            inner = analyse_buffer(ctx.path + ".cu", kernel.text.data, "cpp", settings, rules,
                                   build_fixes=build_fixes)
        for finding in inner:
            if finding.code.startswith("ROC0") or _renamed_by_hipify(kernel, finding):
                continue
            mapped = _mapped(ctx, kernel, finding)
            key = (mapped.code, mapped.span)
            if key not in seen:
                seen.add(key)
                found.append(mapped)
    return found


def _renamed_by_hipify(kernel: Kernel, finding: Finding) -> bool:
    """load_inline's sources are hipified on ROCm: CUDA headers hipify renames are fine."""
    if not kernel.hipified or finding.code != "ROC303":
        return False
    from ..cpp.cuda_headers import hipify_maps

    header = re.search(r"[<\"]([^>\"]+)[>\"]", finding.source_line)
    return header is not None and hipify_maps(header.group(1)) is not None


def _mapped(ctx: "PythonContext", kernel: Kernel, finding: Finding) -> Finding:
    text = kernel.text
    fix = finding.fix
    if fix is not None:
        fixable = text.shape != "expression"
        edits = [text.python_edit(e, ctx.source) if fixable else None for e in fix.edits]
        written = [e for e in edits if e is not None]
        fix = Fix(tuple(written), fix.title, fix.applicability) if len(written) == len(edits) and written else None
    line = ctx.lines.line_of(ctx.span_of(kernel.call).start) + 1
    origin = f"kernel source compiled at run time by {kernel.constructor} ({kernel.slot.keyword}), {ctx.path}:{line}"
    return Finding(code=finding.code, name=finding.name, path=ctx.path, span=text.python_span(finding.span),
                   message=text.describe(finding.message, ctx.lines), fix=fix, severity=finding.severity,
                   evidence=(origin,) + finding.evidence)


# The NVIDIA-isolation proof ----------------------------------------------------------------------
def fold_kernel_gates(ctx: "PythonContext") -> None:
    """Rewrite, in ``ctx.tree``, each kernel literal's value as the NVIDIA build compiles it
    (``unifdef -U<gate macro>``): a gated fix inside a kernel string leaves the folded
    module unchanged, exactly as the C++ proof leaves a fixed file's NVIDIA view. An
    f-string's fields that survive the folding are written into the text as their
    expressions' dumps (a gate copies a field into both branches)."""
    from ..cpp.unifdef import undefine

    macro = ctx.settings.gate_macro
    done: set[int] = set()
    for kernel in find_kernels(ctx):
        for piece in kernel.text.pieces:
            if piece is None or id(piece.node) in done:
                continue
            node = piece.node
            done.add(id(node))
            values = node.values if isinstance(node, ast.JoinedStr) else []
            fields = [v for v in values if not isinstance(v, ast.Constant)]
            numbers = iter(range(len(fields)))
            marked = re.sub(FIELD, lambda _m: f"{FIELD}{next(numbers, -1)}{FIELD}", Piece(node, piece.read).text)
            folded = undefine(marked.encode("utf-8", "surrogateescape"), macro).decode("utf-8", "surrogateescape")
            folded = re.sub(f"{FIELD}(\\d+){FIELD}", lambda m: ast.dump(fields[int(m.group(1))]), folded)
            if isinstance(node, ast.JoinedStr):
                node.values = [ast.Constant(folded)]
            elif isinstance(node, ast.Constant):
                node.value = folded


def kernel_texts(ctx: "PythonContext") -> list[bytes]:
    """Each kernel's text, in file order (for counting syntax errors)."""
    return [kernel.text.data for kernel in find_kernels(ctx)]


# rocmlint explain --------------------------------------------------------------------------------
def explain_lines(ctx: "PythonContext", line: int, rules: tuple["Rule", ...],
                  analyse_buffer: Callable[..., list[Finding]], if_stack_lines: Callable[..., list[str]]) -> list[str]:
    """What ``rocmlint explain`` says of a Python line (0-based) inside kernel strings: the
    constructor that compiles the text, whether ROCm reaches it, the kernel's #if stack and
    lane groups there, and the C++ rules' verdicts (in Python positions). The engine's
    ``analyse_buffer`` and the model's ``if_stack_lines`` come from the caller above."""
    from ..cpp import LANGUAGE as CPP
    from ..suppress import is_suppressed, suppressed_codes

    start, end = ctx.lines.line_start(line), ctx.lines.line_end(line)
    settings = kernel_settings(ctx.settings)
    out: list[str] = []
    for kernel in find_kernels(ctx):
        text = kernel.text
        offsets = [text.offsets[i] for i, u in enumerate(text.units) if start <= u.start <= end and u.start >= 0]
        if not offsets:
            continue
        call_line = ctx.lines.line_of(ctx.span_of(kernel.call).start) + 1
        out.append(f"kernel source: compiled at run time by {kernel.constructor} ({kernel.slot.keyword}, "
                   f"{ctx.path}:{call_line}); the C++ rules read it")
        if kernel.nvidia_only:
            out.append(f"  not checked: {kernel.family} compiles for NVIDIA GPUs only")
            continue
        if ctx.nvidia_only(ctx.span_of(kernel.call).start):
            out.append("  not checked: the AMD build never runs this call")
            continue
        with _without_project():
            cpp = CPP.make_context(ctx.path + ".cu", text.data, settings)
            kernel_lines = sorted({cpp.lines.line_of(offset) for offset in offsets})
            stack = [item for kline in kernel_lines[:1] for item in if_stack_lines(cpp, kline)]
            amd = not cpp.nvidia_only(offsets[0])
            lanes: list[str] = []
            from ..cpp.lane_includes import may_hold_lane_facts
            from ..cpp.lanegroups import lane_groups

            if may_hold_lane_facts(cpp):
                lanes = lane_groups(cpp).explain(kernel_lines[0])
            inner = analyse_buffer(ctx.path + ".cu", text.data, "cpp", settings, rules, suppress=False)
        out.append(f"  AMD build compiles this kernel line: {'yes' if amd else 'no'}")
        kernel_path = re.escape(ctx.path + ".cu")
        for item in stack + lanes:
            item = re.sub(kernel_path + r":(\d+)", lambda m: f"line {m.group(1)}", item)
            out.append("  " + text.describe(item, ctx.lines))
        previous = ctx.lines.line_text(line - 1) if line > 0 else ""
        for finding in inner:
            span = text.python_span(finding.span)
            if not start <= span.start <= end:
                continue
            kernel_line = finding.line - 1
            kernel_previous = LineIndex(text.data).line_text(kernel_line - 1) if kernel_line > 0 else ""
            suppressed = is_suppressed(finding.code, suppressed_codes(ctx.lines.line_text(line), previous)
                                       + suppressed_codes(finding.source_line, kernel_previous))
            if _renamed_by_hipify(kernel, finding):
                verdict = "dropped: hipify renames this header when torch builds the sources on ROCm"
            else:
                verdict = "dropped: suppressed by a comment" if suppressed else "REPORTED"
            out.append(f"  {finding.code} {finding.name}: {verdict}: {text.describe(finding.message, ctx.lines)}")
    return out
