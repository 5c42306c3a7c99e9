from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from rocmlint.cpp.lexical import blank_directives
from rocmlint.cpp.dataflow import declared_identifier, function_declarator, parameter_declarations
from rocmlint.cpp.markers import GPU_CODE_MARKERS
from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Span
from rocmlint.rule import Rule

_IDENT = lazy_compile(rb"[A-Za-z_]\w*")
# asm("" : "+r"(x) :: "memory"): a compiler barrier that changes no value
_EMPTY_ASM = lazy_compile(rb"\b(?:asm|__asm__)\s*(?:volatile|__volatile__)?\s*\(\s*\"\"[^;]*;")
_VOID = lazy_compile(r"\bvoid\b")
_CONST_POINTEE = lazy_compile(r"^\s*(?:\w+\s+)*const\b|\bconst\s*[&*]")
# What the AMD build may still compile in a function that does nothing there: local
# declarations and returns (of a value the missing code would have computed).
_LIVE_KINDS = frozenset({"declaration", "return_statement"})


@dataclass
class _Empty:
    function: Any  # the function_definition node
    dead: list  # the #if chains (preprocessor.Chain) holding its code
    why: str


class BodyEmptyOnAmd(Rule):
    """A function's whole body sits in branches the AMD build never compiles.

    ## What it does
    Reports a function that returns a value, or writes through a pointer or reference
    argument, whose every statement is inside `#if` branches the AMD build does not take
    (`#if __CUDA_ARCH__ >= 800`, `#ifndef USE_ROCM`, a project macro the model proves false
    on AMD), with no branch for AMD (`#else`/`#elif`), no `#error` or `static_assert`
    there, and nothing else left but declarations and a `return` of what the missing code
    would have set (a value it writes, or returns in its place). Statements outside the
    `#if` blocks are code, macro invocations included (`KOKKOS_IF_ON_DEVICE((...))`), and
    so is a `return` of a value the gated code never touches (`return a | b;` after a
    debug check). Only functions the AMD build uses are reported: a call or launch site
    it compiles, in the file or elsewhere in the project (the message says where), or
    an exported entry point (`extern "C"`, a visibility or `*_API` export, a header no file
    in view includes); a kernel only the NVIDIA path launches is NVIDIA's business. The
    message names the gate and its lines; `rocmlint explain` at the function's line shows
    the value of each branch on AMD and why.

    ## Why is this bad?
    On AMD the function compiles to nothing: an `mma()` whose PTX sits under an SM80 macro
    returns its accumulator unchanged, a kernel stores nothing, a helper returns an
    uninitialised value. The build succeeds and the program silently computes garbage;
    the porter finds it only from wrong numbers.

    ## Example
    ```cpp
    __device__ float4 mma_tile(const half* a, const half* b, float4 c) {
      float4 d = c;
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ..." : ...);
    #endif
      return d;
    }
    ```
    Use instead: an AMD branch that computes the same thing (MFMA intrinsics, rocWMMA),
    or an `#else` with `#error "mma_tile needs an AMD implementation"` until one exists.

    ## Fix safety
    Display-only: the AMD implementation has to be written.

    ## References
    - https://github.com/ggml-org/llama.cpp/pull/7716
    - https://rocm.docs.amd.com/projects/rocWMMA/en/latest/
    """

    code = "ROC304"
    name = "body-empty-on-amd"
    language = "cpp"
    message = "function body is empty on AMD: all its code sits in branches the AMD build never compiles"
    pattern = r"^[ \t]*#[ \t]*if(?:n?def)?\b"
    anchors = (r"#[ \t]*if",)  # literal first: fast
    requires_any = GPU_CODE_MARKERS + (b"__CUDA_ARCH__",)

    valid = (
        # a compile-time check the AMD build skips: nothing the function does at run time is missing
        "template <typename F, typename... Args>\n__host__ __device__ constexpr enable_if_t<has_call_operator<F>>\n"
        "check_callable(F&&, const type_list<Args...>&) {\n#if !defined(PROJ_ENABLE_HIP)\n"
        "  static_assert(is_invocable<F, Args...>::value, \"the body must take the loop's arguments\");\n#endif\n}\n"
        "template <typename Body, typename Params>\n"
        "__host__ __device__ constexpr void check_forall_args(Body&& body, Params& params) {\n"
        "  check_callable(static_cast<Body&&>(body), params.arg_types());\n}\n",
        # a kernel only the NVIDIA build launches
        "__global__ void pack_rows_sm80(float* out) {\n#if __CUDA_ARCH__ >= 800\n  out[threadIdx.x] = 1.f;\n#endif\n}\n"
        "void pack(float* out) {\n#ifndef __HIP_PLATFORM_AMD__\n  pack_rows_sm80<<<1, 32>>>(out);\n#endif\n}\n",
        # a value the gated check never touches
        "__device__ unsigned merge_bits(unsigned a, unsigned b) {\n#ifndef USE_ROCM\n  assert((a & b) == 0);\n#endif\n"
        "  return a | b;\n}\n__global__ void merge(unsigned* x) { x[0] = merge_bits(x[1], x[2]); }\n",
        # an AMD alternative
        "__device__ float dot2(float2 a, float2 b) {\n#if __CUDA_ARCH__ >= 800\n  return fma_v2(a, b);\n"
        "#else\n  return a.x * b.x + a.y * b.y;\n#endif\n}\n",
        # nothing to return, nothing to write: legitimately a no-op on AMD
        "__device__ void sync_lanes() {\n#if __CUDA_ARCH__ >= 700\n  __syncwarp();\n#endif\n}\n",
        # an explicit answer on AMD
        "__device__ bool has_async_copy() {\n#if __CUDA_ARCH__ >= 800\n  return true;\n#endif\n  return false;\n}\n",
    )
    invalid = (
        "__device__ float4 mma_tile(const half* a, const half* b, float4 c) {\n  float4 d = c;\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, ...\"\n"
        "               : \"+f\"(d.x), \"+f\"(d.y), \"+f\"(d.z), \"+f\"(d.w) : \"r\"(a[0]), \"r\"(b[0]));\n"
        "#endif\n  return d;\n}\n"
        "__global__ void tiles(const half* a, const half* b, float4* c) {\n"
        "  c[threadIdx.x] = mma_tile(a, b, c[threadIdx.x]);\n}\n",
        "__global__ void scale_rows(float* out, const float* in, float s) {\n#ifndef USE_ROCM\n"
        "  out[blockIdx.x * blockDim.x + threadIdx.x] = s * in[blockIdx.x * blockDim.x + threadIdx.x];\n#endif\n}\n"
        "void scale(float* out, const float* in, int n) { scale_rows<<<n / 256, 256>>>(out, in, 0.5f); }\n",
    )

    def check(self, ctx) -> None:
        pp = ctx.pp
        dead = [chain for chain in pp.chains if pp.amd[chain.start] is not False
                and all(branch.amd is False for branch in chain.branches)]
        if not any(_holds_code_lines(ctx, chain) for chain in dead):
            return  # only directives there (CUTLASS's arch switches): no function loses a line
        dead = [chain for chain in dead if not _unit_local(ctx, chain) and not _dead_everywhere(chain)]
        if not dead:
            return  # no parse: most files stop here
        outside, blocks = _outside_functions(ctx)
        # a chain whose block runs code on AMD needs no parse: its function is not empty
        dead = [chain for chain in dead if chain.start not in outside
                and not (chain.start in blocks and _runs_code(ctx, *blocks[chain.start]))]
        found: dict[int, _Empty] = {}
        for chain in dead:
            function = _function_around(ctx, chain.start)
            if function is None or function.start_byte in found or ctx.pp.nvidia_only(function.start_point[0]):
                continue
            empty = _empty_on_amd(ctx, function)
            if empty is not None:
                found[function.start_byte] = empty
        for empty in found.values():
            declarator = function_declarator(empty.function)
            name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
            anchor = name_node or empty.function
            used = _used_on_amd(ctx, empty.function, declarator)
            if used is None:
                continue  # nothing the AMD build compiles calls or launches it: its emptiness costs nothing
            gates = "; ".join(f"`#{c.branches[0].kind} {c.branches[0].condition}` (lines {c.start + 1}-{c.endif + 1})"
                              for c in empty.dead[:2])
            more = f" and {len(empty.dead) - 2} more" if len(empty.dead) > 2 else ""
            name = ctx.node_text(anchor) if name_node is not None else "function"
            ctx.cache.setdefault("ROC304-gates", {})[anchor.start_byte] = [c.start for c in empty.dead]
            ctx.report(Span(anchor.start_byte, anchor.end_byte),
                       f"`{name}` is empty on AMD: its code sits only under {gates}{more}, which the AMD build never "
                       f"compiles, with no #else; {empty.why}, and {used}")

    @staticmethod
    def gate_lines(ctx, finding) -> list[int]:
        """0-based lines of the gates behind a finding (``rocmlint explain`` shows their values)."""
        return ctx.cache.get("ROC304-gates", {}).get(finding.span.start, [])


# A line inside a chain whose first text is neither a directive nor a `//` comment (a
# directive's continuation counts: `_empty_on_amd` reads it as a line of code).
_CODE_LINE = lazy_compile(rb"\n[ \t]*(?![#\r\n]|//)[^ \t]")


def _holds_code_lines(ctx, chain) -> bool:
    """Whether a line between the chain's ``#if`` and ``#endif`` may be code: only such a
    line is one of the dead lines that make a function empty on AMD (``_empty_on_amd``)."""
    lines = ctx.lines
    count = len(lines.line_starts)
    if chain.start + 1 >= count:
        return False
    end = lines.line_start(chain.endif) if 0 <= chain.endif < count else len(ctx.source)
    return _CODE_LINE.search(ctx.source, lines.line_start(chain.start + 1) - 1, end) is not None


def _dead_everywhere(chain) -> bool:
    """``#if 0``: no build compiles the code, NVIDIA's neither; not an AMD gap."""
    return all(not (set(_IDENT.findall(b.condition.encode())) - {b"defined", b"true", b"false"})
               for b in chain.branches)


def _unit_local(ctx, chain) -> bool:
    """The chain is dead only through a macro another translation unit #defines (a .cu
    defining ``SKIP_FP16_BITS`` before it includes a shared .inc): other units that
    include this file do not define it, so the proof does not hold for them."""
    model = ctx.model
    if model is None:
        return False
    from rocmlint.project.summaries import SOURCE_EXTENSIONS

    own = model.rel(ctx.path)
    for branch in chain.branches:
        for name in set(_IDENT.findall(branch.condition.encode())) - {b"defined"}:
            fact = model.macro(name.decode(), ctx.path)
            where = fact.evidence[0].where.rpartition(":")[0] if fact.state and fact.evidence else ""
            if where and where != own and os.path.splitext(where)[1].lower() in SOURCE_EXTENSIONS:
                return True
    return False


_BRACE = lazy_compile(rb"[{}]")
_DIRECTIVE_LINE = lazy_compile(rb"[ \t]*#")
_COMMENT = lazy_compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)
# Heads of blocks that hold declarations, never statements (no parenthesis: ``struct
# alignas(16) S`` or a function returning a struct is left to the parse).
_DECLARATION_BLOCK = lazy_compile(rb"(?:inline\s+)?namespace(?:\s+[A-Za-z_][\w:]*)?|extern\s*\"C(?:\+\+)?\""
                                  rb"|(?:template\s*<[^(){};=\"]*>\s*)?(?:struct|class|union|enum(?:\s+class|\s+struct)?)"
                                  rb"\b[^(){};=\"]*")
_ACCESS_LABEL = lazy_compile(rb"(?:public|private|protected)\s*:")


def _outside_functions(ctx) -> tuple[set[int], dict[int, tuple[int, int]]]:
    """0-based lines of ``#if`` directives that lie, read from the text, between declarations
    of a namespace, ``extern "C"`` or class body: no function holds them (CUTLASS's arch
    headers gate whole declarations, and a parse only to learn so cost a second). Braces
    are counted in code outside directives, every branch alike; a file whose braces do not
    balance so is left to the parse (empty set), and so is everything after an ``#if``
    inside a declaration (tree-sitter's error recovery there may wrap the code after it in
    a function: what the rule reads is the parse). Where tree-sitter reads a class head
    with an export macro (``struct EXPORT Handle : Base {``) as a function, this reads a
    class: its members are not a function's body, and are no longer judged as one.
    Second: the ``{`` ``}`` offsets of the innermost block around each other ``#if`` read so."""
    code = _code_view(ctx)
    chains = sorted((ctx.lines.line_start(line), line) for line in {chain.start for chain in ctx.pp.chains})
    # per open brace: [declarations only (None: not read yet), the brace before it, where, #ifs inside]
    stack: list[list] = []
    out: set[int] = set()
    blocks: dict[int, tuple[int, int]] = {}
    index = 0
    last_brace = -1

    def declares(entry: list) -> bool:
        """Read only for the braces open at an #if: most close with none inside."""
        if entry[0] is None:  # its head starts after the last code `{` `}` `;`
            before, at = entry[1], entry[2]
            head_start = max(code.rfind(b";", before + 1, at), before) + 1
            entry[0] = _declaration_head(ctx.source, code, head_start, at)
        return entry[0]

    for m in _BRACE.finditer(code):
        at = m.start()
        while index < len(chains) and chains[index][0] < at:
            if all(declares(entry) for entry in stack):
                if not _starts_declaration(ctx, chains[index][0]):
                    return out, blocks  # an #if inside a declaration: tree-sitter's recovery may wrap what follows
                out.add(chains[index][1])
            else:
                stack[-1][3].append(chains[index][1])
            index += 1
        if code[at] == 0x7B:  # `{`
            stack.append([None, last_brace, at, []])
        elif not stack:
            return set(), {}
        else:
            _declarations, _before, opened, inside = stack.pop()
            for line in inside:
                blocks[line] = (opened, at)
        last_brace = at
    if stack:
        return set(), {}
    for _offset, line in chains[index:]:
        if not _starts_declaration(ctx, _offset):
            break
        out.add(line)
    return out, blocks


# A call or a control statement: a name right after an operator, a parenthesis, a statement
# start or `return` and before `(` (`T d(c)` has a type before the name: a declaration);
# operators on types (`sizeof(T)`) and functional casts (`float(x)`) are not calls.
_CALL_OR_CONTROL = lazy_compile(rb"\b(?:if|for|while|switch|do)\b|(?:^|[=(,;{}!&|+\-*/%<>?:]|\breturn)\s*"
                                rb"(?!(?:sizeof|alignof|alignas|decltype|noexcept|typeid|__typeof__|int|float|double|char|"
                                rb"bool|short|long|unsigned|signed|void|auto)\b)[A-Za-z_][\w:]*\s*\(")


def _runs_code(ctx, opened: int, closed: int) -> bool:
    """Whether the block between these braces holds code the AMD build may compile that makes
    its function more than a shell (a call, a control statement, a line of unknown reach):
    read from the text, so the parse is skipped; ``_empty_on_amd`` would say None."""
    code, pp = _code_view(ctx), ctx.pp
    first, last = ctx.line_of(opened), ctx.line_of(closed)
    for line in range(first, last + 1):
        start = max(ctx.lines.line_start(line), opened + 1)
        end = min(ctx.lines.line_end(line), closed)
        text = code[start:end].strip()
        if not text or pp.amd[line] is False:
            continue
        if pp.amd[line] is None or _CALL_OR_CONTROL.search(text):
            return True
    return False


def _code_view(ctx) -> bytes:
    """The file with comments, literals and preprocessor lines blanked (offsets kept)."""
    view = ctx.cache.get("ROC304-code")
    if view is None:
        view = ctx.cache["ROC304-code"] = blank_directives(ctx.code_only)
    return view


def _last_token(ctx, at: int) -> tuple[bytes, int]:
    """The last code ``{`` ``}`` or ``;`` before ``at``, and the offset just after it (b"", 0: none)."""
    code = _code_view(ctx)
    found = max(code.rfind(b"{", 0, at), code.rfind(b"}", 0, at), code.rfind(b";", 0, at))
    return (b"", 0) if found < 0 else (code[found:found + 1], found + 1)


def _declaration_head(source: bytes, code: bytes, start: int, end: int) -> bool:
    """The head of the block opened at ``end`` (from ``start``) declares a namespace, an
    ``extern "C"`` block or a class. Read from the code view (comments and directives are
    blank there); a head with a parenthesis or `=` is never one, and `extern` needs its
    literal, which the view blanks, so that one is read from the source."""
    head = code[start:end]
    if b"(" in head or b"=" in head:
        return False
    if b"extern" in head:
        return _DECLARATION_BLOCK.fullmatch(_code_between(source, start, end)) is not None
    return _DECLARATION_BLOCK.fullmatch(b" ".join(head.split())) is not None


def _code_between(source: bytes, start: int, end: int) -> bytes:
    """The code of ``source[start:end]`` on one line: comments and directives (with their
    continuation lines) dropped."""
    kept: list[bytes] = []
    continued = False
    for line in _COMMENT.sub(b" ", source[start:end]).split(b"\n"):
        directive = continued or _DIRECTIVE_LINE.match(line) is not None
        continued = directive and line.rstrip(b"\r").endswith(b"\\")
        if not directive:
            kept.append(line)
    return b" ".join(b" ".join(kept).split())


def _starts_declaration(ctx, at: int) -> bool:
    """Nothing but comments and directives since the last ``{`` ``}`` ``;`` (or an access
    label after it): the ``#if`` at ``at`` starts a declaration, inside none."""
    token, end = _last_token(ctx, at)
    between = _code_between(ctx.source, end, at)
    return not between or (token != b"" and _ACCESS_LABEL.fullmatch(between) is not None)


def _function_around(ctx, line: int):
    offset = ctx.lines.line_start(line)
    node = ctx.root.descendant_for_byte_range(offset, offset)
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node


def _empty_on_amd(ctx, function) -> _Empty | None:
    """Why the function is empty on AMD (a verdict with the chains), or None."""
    body = function.child_by_field_name("body")
    declarator = function_declarator(function)
    if body is None or declarator is None:
        return None
    pp = ctx.pp
    first, last = body.start_point[0], body.end_point[0]
    dead_lines: list[int] = []
    live_statements: dict[int, Any] = {}
    for line in range(first, last + 1):
        start, end = ctx.lines.line_start(line), ctx.lines.line_end(line)
        start, end = max(start, body.start_byte + 1 if line == first else start), min(end, body.end_byte - 1)
        code = _code_on(ctx, start, end)
        if not code or code.startswith(b"#"):
            continue
        if pp.amd[line] is False:
            dead_lines.append(line)
            continue
        if pp.amd[line] is None:
            return None  # maybe compiled: not provably empty
        at = start + (len(ctx.source[start:end]) - len(ctx.source[start:end].lstrip()))
        statement = ctx.statement_of(ctx.root.named_descendant_for_byte_range(at, at))
        if statement is None or statement.type not in _LIVE_KINDS or \
                statement.start_byte < body.start_byte or _calls(ctx, statement) or _invokes(ctx, statement):
            return None  # a statement the AMD build runs: code, not a shell around missing code
        live_statements[statement.start_byte] = statement
    if not dead_lines:
        return None
    dead_code = _EMPTY_ASM.sub(b"", b" ".join(ctx.source[ctx.lines.line_start(n):ctx.lines.line_end(n)]
                                               for n in dead_lines))
    if not _COMPILE_TIME_ONLY.sub(b"", dead_code).strip(b" \t\r\n;"):
        return None  # only static_asserts: nothing the function does at run time is missing
    chains = _chains_holding(pp, dead_lines)
    if chains is None:
        return None  # some of the code has an AMD alternative
    returns = [s for s in live_statements.values() if s.type == "return_statement"]
    head = ctx.source[function.start_byte:declarator.start_byte].decode("utf-8", "replace")
    # constructors and destructors have no return type
    returns_value = function.child_by_field_name("type") is not None and not (
        _VOID.search(head) and declarator.parent is not None
        and declarator.parent.type not in ("pointer_declarator", "reference_declarator"))
    if returns_value:
        if not returns:
            return _Empty(function, chains, "on AMD it returns without setting a value")
        names = {m.group() for s in returns for m in _IDENT.finditer(ctx.source[s.start_byte:s.end_byte])}
        locals_ = _local_names(ctx, function, declarator)
        # what the missing code would have set (written, or returned in its place); a value
        # computed from untouched inputs (`return a | b;` after a check) is the AMD answer
        returns_there = _RETURN.search(dead_code) is not None
        returned = sorted(n.decode() for n in names & locals_ if returns_there or _written(dead_code, n))
        if returned:
            return _Empty(function, chains, f"it returns `{returned[0]}` as it stood before that code")
        return None  # returns a constant or what the gated code never touches: an answer on AMD
    outputs = [name for name in _output_parameters(ctx, declarator) if re.search(rb"\b" + name + rb"\b", dead_code)]
    if outputs:
        return _Empty(function, chains, f"nothing is written to `{outputs[0].decode()}` on AMD")
    return None


# A compile-time check spelled out whole (one level of nested parentheses, as written)
_COMPILE_TIME_ONLY = lazy_compile(rb"\bstatic_assert\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\s*;")


def _code_on(ctx, start: int, end: int) -> bytes:
    """The code between two offsets of one line ("" for a blank or comment-only line)."""
    offset = start
    while offset < end:
        if not ctx.source[offset:offset + 1].isspace() and ctx.in_code(offset):
            return ctx.source[offset:end].strip()
        offset += 1
    return b""


def _calls(ctx, statement) -> bool:
    return any(True for _ in ctx.descendants(statement, {"call_expression", "ERROR"}))


_INVOCATION = lazy_compile(rb"\s*[A-Za-z_]\w*\s*\(")


def _invokes(ctx, statement) -> bool:
    """``KOKKOS_IF_ON_DEVICE((return f(x);))``: a macro invocation tree-sitter reads as a
    declaration (a name followed at once by a parenthesis declares nothing)."""
    return statement.type == "declaration" and _INVOCATION.match(ctx.source, statement.start_byte) is not None


_RETURN = lazy_compile(rb"\breturn\b")


def _written(code: bytes, name: bytes) -> bool:
    """Whether ``code`` may write ``name``: an assignment or increment of it (or of a member
    or element), an asm output operand, its address, or the name passed bare to a call (by
    reference, as ``mma_sync(acc, a, b, acc)`` does)."""
    n = re.escape(name)
    access = rb"(?:\s*(?:\.|->)\s*\w+|\s*\[[^\]]*\])*"
    return re.search(rb"\b" + n + access + rb"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*" + n + rb"\b|\b" + n +
                     access + rb"\s*(?:\+\+|--)|\"[=+]&?\w*\"\s*\(\s*\*?\s*" + n + rb"\b|(?:[(,=;{]|\breturn)\s*&\s*" + n +
                     rb"\b|[(,]\s*" + n + access + rb"\s*[,)]", code) is not None


def _used_on_amd(ctx, function, declarator) -> str | None:
    """Where the AMD build calls or launches the function ("the AMD build calls it at line
    12"), or why it may be called from outside (an exported entry point); None when
    nothing the AMD build compiles, in this file or the files that include it, uses it."""
    from rocmlint.cpp.call_sites import call_sites

    head = ctx.source[function.start_byte:declarator.start_byte] if declarator is not None else b""
    exported = _EXPORTED.search(head)
    if exported is None and ctx.ancestor(function, {"linkage_specification"}) is not None:
        return 'it is an exported entry point (inside `extern "C"`)'
    if exported is not None:
        return f"it is an exported entry point (`{exported.group().decode()}`)"
    name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
    name = ctx.node_text(name_node).split("::")[-1] if name_node is not None else ""
    scope = function
    if not name.startswith("operator"):
        name = name.split("<")[0].strip()  # `hmma16816_f32<__half>`: a specialisation is called by its template's name
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or name.startswith("operator"):  # its class is what callers name
        owner = ctx.ancestor(function, {"struct_specifier", "class_specifier"})
        type_name = owner.child_by_field_name("name") if owner is not None else None
        if type_name is not None and type_name.type == "template_type":  # `struct Mma<Shape<16, 8, 8>, ...>`
            type_name = type_name.child_by_field_name("name")
        if type_name is None:
            return None
        name, scope = ctx.node_text(type_name), owner
    sites = call_sites(ctx, name, Span(scope.start_byte, scope.end_byte))
    site = sites.amd()
    if site is None:
        # a header nothing in view includes is an interface: its callers are out of view
        if sites.public:
            return "it sits in a header whose callers are out of view"
        return None if sites.complete else "its callers are out of view (too many files to read for them)"
    verb = "launches" if b"__global__" in head else "calls"
    what = f"`{name}`" if scope is not function else "it"
    return f"the AMD build {verb} {what} at {site.where()}"


_EXPORTED = lazy_compile(rb'extern\s*"C(?:\+\+)?"|visibility\s*\(\s*"default"\s*\)|dllexport|\b[A-Z][A-Z0-9_]*_(?:API|EXPORT)\b')


def _chains_holding(pp, lines: list[int]) -> list | None:
    """The outermost chains, each with no branch for AMD, that hold these lines; None when
    one line is dead only in a chain that has an AMD branch."""
    chains: list = []
    for line in lines:
        holder = next((chain for chain in pp.chains if chain.start < line < chain.endif
                       and pp.amd[chain.start] is not False and all(b.amd is False for b in chain.branches)), None)
        if holder is None:
            return None
        if holder not in chains:
            chains.append(holder)
    return chains


def _output_parameters(ctx, declarator) -> list[bytes]:
    """Names of parameters the function can write through: non-const pointers and references."""
    names = []
    for param in parameter_declarations(declarator):
        inner = param.child_by_field_name("declarator")
        if inner is None:
            continue
        text = ctx.source[param.start_byte:param.end_byte].decode("utf-8", "replace")
        by_address = inner.type in ("pointer_declarator", "reference_declarator") or "&" in text or "*" in text
        name = declared_identifier(inner)
        if by_address and name is not None and not _CONST_POINTEE.search(text):
            names.append(ctx.source[name.start_byte:name.end_byte])
    return names


def _local_names(ctx, function, declarator) -> set[bytes]:
    """Parameters and local variables: what a return hands back unchanged."""
    names = set()
    for param in parameter_declarations(declarator):
        name = declared_identifier(param.child_by_field_name("declarator"))
        if name is not None:
            names.add(ctx.source[name.start_byte:name.end_byte])
    body = function.child_by_field_name("body")
    for declaration in ctx.descendants(body, {"declaration"}):
        for child in declaration.named_children:
            if child.type in ("init_declarator", "identifier", "array_declarator"):
                name = declared_identifier(child) if child.type != "identifier" else child
                if name is not None:
                    names.add(ctx.source[name.start_byte:name.end_byte])
    return names
