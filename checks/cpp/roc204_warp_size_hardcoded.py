from __future__ import annotations

import re

from rocmlint.model import Applicability, Edit, Span
from rocmlint.cpp.dataflow import INDEX_SOURCE_TEXT
from rocmlint.cpp.markers import GPU_CODE_MARKERS
from rocmlint.rule import Example, Rule

# operator -> (literal, AMD replacement of "operator literal")
LANE_ARITHMETIC = {
    ("%", "32"): "% warpSize", ("/", "32"): "/ warpSize", ("&", "31"): "& (warpSize - 1)",
    (">>", "5"): "/ warpSize", ("==", "31"): "== warpSize - 1", ("<", "32"): "< warpSize",
    ("<=", "31"): "< warpSize", ("+=", "32"): "+= warpSize",
}
_DEFINITION = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+\(?32\)?")


class WarpSizeHardcoded(Rule):
    """The warp size is hard-coded as 32.

    ## What it does
    Reports warp-size constants equal to 32 (`#define WARP_SIZE 32`,
    `constexpr int kWarpSize = 32`, `const int WS = 32; // warp`) and lane arithmetic with
    a literal: `tid % 32`, `tid & 31`, `tid / 32`, `tid >> 5` on thread ids, `lane == 31`,
    `__shfl(x, 31)`, lane loops `d < 32` and strides `+= 32`, and a queried warp size
    capped at 32 (`std::min(prop.warpSize, 32)`). A constant is judged by its name
    (`M_Warp_Tile`, `threads_per_row`: a tile or data size, not the warp size) and by each
    use: lane arithmetic, bits of a word (`1 << (WS - 1)`), or read by host code. Lane
    arithmetic where the code names its 32-thread group is about that group, not the warp:
    in the branch of `if (blockDim.x == 32)`, or in a function that partitions its block
    into cooperative-groups tiles of 32 (`cg::tiled_partition<32>`).

    ## Why is this bad?
    AMD CDNA GPUs (MI100-MI300) run 64-lane wavefronts; RDNA runs 32. Code that assumes 32
    computes wrong lane and warp ids, skips half of every reduction and indexes per-warp
    buffers out of bounds on wave64.

    ## Example
    ```cpp
    int lane = threadIdx.x % 32;
    ```
    Use instead (shared file):
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    int lane = threadIdx.x % warpSize;
    #else
    int lane = threadIdx.x % 32;
    #endif
    ```

    ## Fix safety
    Unsafe: expressions use `warpSize` at run time; constants become PyTorch's
    `C10_WARP_SIZE` pattern (`__GFX9__` ? 64 : 32), which is right in device code only:
    the host pass reads 32. So a constant host code reads (a launch size, a host or
    `__host__ __device__` function) gets a display-only fix: the host must query
    `hipDeviceAttributeWarpSize` at run time. A constant that is both the warp size and
    the bits of a word is split: its lane uses read a new `<NAME>_WAVE`, its word uses keep
    the 32. Never hard-code 64: RDNA is wave32.

    ## References
    - https://github.com/ORNL/HeCBench/issues/180
    - https://github.com/ggml-org/llama.cpp/issues/3630
    - https://github.com/vllm-project/vllm/pull/12789
    - https://github.com/ROCm/pytorch/pull/2360
    """

    code = "ROC204"
    name = "warp-size-hardcoded"
    language = "cpp"
    message = "warp size hard-coded as 32: AMD CDNA wavefronts have 64 lanes"
    # Every alternative starts with a literal character: Python's re is 3x faster so.
    pattern = (r"#[ \t]*define[ \t]+\w+[ \t]+\(?32\)?[ \t]*(?:$|//|/\*)|=\s*32\s*;"
               r"|[%/&<]\s*3[12]\b|<=\s*3[12]\b|\+=\s*3[12]\b|>>\s*5\b|==\s*31\b|,\s*3[12]\s*\)|\(\s*32\s*,")
    anchors = (r"3[12]\b", r">>")  # the numbers, found at memchr speed
    fix_applicability = Applicability.UNSAFE
    # Warp-size arithmetic only matters in GPU code: skip files with no sign of it.
    requires_any = GPU_CODE_MARKERS
    wave_size_rule = True
    reference_kernel = "wave_size_constexpr.hip"

    valid = (
        Example(
            "#define BITS_PER_WORD 32\n"
            "__device__ bool test_bit(const unsigned* words, int bit) {\n"
            "  return (words[bit / BITS_PER_WORD] >> (bit & 31)) & 1u;\n"
            "}\n"
        ),
        Example(
            "__global__ void lanes(int* out) {\n"
            "#if __CUDA_ARCH__ >= 700\n"
            "  out[threadIdx.x] = threadIdx.x % 32;\n"
            "#endif\n"
            "}\n"
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__global__ void lanes(int* out) {\n"
            "  out[threadIdx.x] = threadIdx.x % 32;\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__global__ void lanes(int* out) {\n"
                "  out[threadIdx.x] = threadIdx.x % warpSize;\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
        Example(
            "#define WARP_SIZE 32\n"
            "__global__ void warp_ids(int* out) {\n"
            "  out[threadIdx.x] = threadIdx.x / WARP_SIZE;\n"
            "}\n",
            expected=(
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "#if defined(__GFX9__)\n"
                "#define WARP_SIZE 64\n"
                "#else\n"
                "#define WARP_SIZE 32\n"
                "#endif\n"
                "#else\n"
                "#define WARP_SIZE 32\n"
                "#endif\n"
                "__global__ void warp_ids(int* out) {\n"
                "  out[threadIdx.x] = threadIdx.x / WARP_SIZE;\n"
                "}\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.dataflow import flow_for
        from rocmlint.cpp.wavesize import shuffle_operands
        from rocmlint.fixers.cpp_gate import build_fix

        for hit in ctx.amd_hits():
            text = ctx.source[hit.start : hit.end]
            line = ctx.line_of(hit.start)
            definition = _DEFINITION.match(text)
            if definition:
                name = definition.group(1).decode()
                # a real directive (not one in a comment) that the AMD build sees
                if line not in [l for l, _ in ctx.pp.defines.get(name, [])]:
                    continue
                self._report_constant(ctx, hit, name, line)
                continue
            literal_match = re.search(rb"(\d+)\s*[;),]?$", text)
            if literal_match is None:  # every other alternative of `pattern` ends with its number
                continue
            if not _worth_parsing(ctx, hit.start, text, literal_match.group(1)):
                continue
            start = hit.start + literal_match.start(1)
            literal = ctx.root.named_descendant_for_byte_range(start, start + len(literal_match.group(1)))
            if literal is None or literal.type != "number_literal":
                continue
            parent = literal.parent
            if parent is not None and parent.type == "init_declarator":
                name = ctx.node_text(parent.child_by_field_name("declarator"))
                declaration = parent.parent
                if "const" in ctx.node_text(declaration).split("=")[0]:
                    self._report_constant(ctx, Span(literal.start_byte, literal.end_byte), name, line)
                continue
            if parent is not None and parent.type == "argument_list" and _clamps_warp_size(ctx, parent, literal):
                ctx.report(ctx.node_span(literal), f"`{ctx.node_text(parent.parent)}` caps the warp size at 32: "
                           "AMD CDNA wavefronts have 64 lanes; use the queried value", None)
                continue
            if parent is not None and parent.type == "argument_list" and literal.type == "number_literal":
                operands = shuffle_operands(ctx, parent.parent)
                if operands is None or ctx.node_text(literal) != "31":
                    continue
                args, value_index = operands
                if len(args) > value_index + 1 and args[value_index + 1] == literal:
                    fix = build_fix(ctx, literal, [Edit(ctx.node_span(literal), "warpSize - 1")],
                                    "read the last lane as warpSize - 1", Applicability.UNSAFE)
                    ctx.report(ctx.node_span(literal), "shuffle from lane 31 assumes a 32-lane warp: the last "
                               "lane of a wave64 is 63", fix)
                continue
            if parent is None or parent.type not in ("binary_expression", "assignment_expression"):
                continue
            operator = parent.child_by_field_name("operator")
            key = (ctx.node_text(operator), ctx.node_text(literal))
            if key not in LANE_ARITHMETIC or parent.child_by_field_name("right") != literal:
                continue
            left = parent.child_by_field_name("left")
            if _selected_tile_size(ctx, literal):
                continue
            if _names_a_group_of_32(ctx, parent):
                continue
            flow = flow_for(ctx, literal)
            if key[0] in ("<", "<=", "+=", "=="):
                if not self._lane_loop_or_compare(ctx, flow, parent, left, key[0]):
                    continue
            elif not flow.holds_index(left):
                continue
            edit = Edit(Span(operator.start_byte, literal.end_byte), LANE_ARITHMETIC[key])
            fix = build_fix(ctx, parent, [edit], "use warpSize", Applicability.UNSAFE)
            ctx.report(Span(operator.start_byte, literal.end_byte),
                       f"`{ctx.node_text(parent)}` assumes 32 lanes per warp: AMD CDNA wavefronts have 64", fix)

    def _report_constant(self, ctx, span, name, line) -> None:
        """A constant equal to 32 that means the warp size. Its fix follows its uses: host
        reads forbid a device-only macro (display-only), lane and word uses split it, and
        only a constant of lane and device uses is picked by ``__GFX9__``."""
        from rocmlint.cpp.constant_uses import constant_uses, means_warp_size
        from rocmlint.fixers.cpp_gate import build_fix

        uses = constant_uses(ctx, name, line)
        if not means_warp_size(ctx, name, line, uses):
            return
        node = ctx.root.named_descendant_for_byte_range(span.start, span.end)
        literal_at = ctx.source.rfind(b"32", span.start, span.end)
        if ctx.source[span.start : span.end].strip().isdigit():
            literal_at = span.start
        literal = Span(literal_at, literal_at + 2)
        message = f"warp-size constant `{name}` hard-coded as 32: AMD CDNA wavefronts have 64 lanes"
        variants = ([Edit(literal, "64")], [Edit(literal, "32")])
        if uses.host:
            where = uses.first_host_line(ctx)
            message += (f"; host code reads it (line {where}): query hipDeviceAttributeWarpSize there at run "
                        "time, a compile-time wave size is right only in device code")
            fix = build_fix(ctx, node, [], f"pick {name} by wave size in device code only (host code on line "
                            f"{where} must query hipDeviceAttributeWarpSize)", Applicability.DISPLAY_ONLY,
                            wave_variants=variants)
        elif uses.word:
            message += f"; it also counts the bits of a word (line {ctx.line_no(uses.word[0])}): split it"
            fix = self._split_fix(ctx, node, name, literal, uses)
        else:
            fix = build_fix(ctx, node, [], f"pick {name} by wave size (__GFX9__)", Applicability.UNSAFE,
                            wave_variants=variants)
        ctx.report(literal, message, fix)

    @staticmethod
    def _split_fix(ctx, node, name, literal, uses):
        """Keep ``name`` for its word-size uses; its lane uses read a new wave-size constant
        (``<name>_WAVE``) defined after it. Display-only when other uses are ambiguous."""
        from rocmlint.fixers.cpp_gate import WAVE64_MACRO, build_uses_fix

        wave_name = f"{name}_WAVE"
        definition = ctx.ancestor(node, {"preproc_def", "declaration"}) if node.type not in (
            "preproc_def", "declaration") else node
        if definition is None or uses.other or re.search(rb"\b" + wave_name.encode() + rb"\b", ctx.source):
            return None
        first, last = ctx.line_of(definition.start_byte), ctx.last_line(definition)
        if first != last or definition.type == "declaration" and len(definition.children_by_field_name(
                "declarator")) != 1:
            return None
        start = ctx.lines.line_start(first)
        end = ctx.lines.line_start(first + 1) if first + 1 < ctx.lines.line_count else len(ctx.source)
        line_text = ctx.source[start:end].decode("utf-8", "surrogateescape")
        if not line_text.endswith("\n"):
            line_text += "\n"
        name_at = re.compile(rb"\b" + name.encode() + rb"\b").search(ctx.source, definition.start_byte)
        if name_at is None:
            return None
        declared = name_at.start()

        def variant(value: str) -> str:
            text = ctx.source[start:end]
            text = text[: literal.start - start] + value.encode() + text[literal.end - start:]
            text = text[: declared - start] + wave_name.encode() + text[declared - start + len(name):]
            text = re.sub(rb"[ \t]*(//[^\n]*|/\*.*?\*/)[ \t]*(?=\n|$)", b"", text)  # drop the old comment
            return text.decode("utf-8", "surrogateescape").rstrip("\n") + "\n"

        block = f"#if defined({WAVE64_MACRO})\n{variant('64')}#else\n{variant('32')}#endif\n"
        if ctx.gated:
            block = f"#if defined({ctx.settings.gate_macro})\n{block}#endif\n"
        extra = [Edit(Span(start, end), line_text + block)]
        lane_edits = [(use, [Edit(ctx.node_span(use), wave_name)]) for use in uses.lane]
        return build_uses_fix(ctx, lane_edits, extra, f"split {name}: lane arithmetic reads {wave_name}, "
                              f"the word-size uses keep {name}", Applicability.UNSAFE)

    @staticmethod
    def _lane_loop_or_compare(ctx, flow, parent, left, operator) -> bool:
        if operator == "==":
            return flow.holds_index(left, lane_only=True)
        loop = ctx.ancestor(parent, {"for_statement"})
        if loop is None:
            return False
        if operator == "+=":  # a stride over lanes: for (i = lane; i < n; i += 32)
            return flow.holds_index(left) and left.type == "identifier"
        if left.type != "identifier" or loop.child_by_field_name("condition") is None or \
                not ctx.node_text(loop.child_by_field_name("condition")).startswith(ctx.node_text(left)):
            return False
        body = loop.child_by_field_name("body")
        return body is not None and _LANE_LOOP_BODY.search(ctx.source, body.start_byte, body.end_byte) is not None


# What the checks below need somewhere in the file or around the hit: without it a hit is
# rejected from the text, before the file is parsed (most hits in template-heavy code are
# `Int<32>`, `make_shape(32, ...)` or `%31` asm operands).
_LANE_LOOP_BODY = re.compile(rb"__shfl|\blane")
_CALL_WINDOW = 1000  # bytes before a literal argument searched for a `min` callee


def _names_a_group_of_32(ctx, node) -> bool:
    """The code names its 32-thread group, so lane arithmetic by 32 there is about that
    group, on a wave64 too: the branch of `if (blockDim.x == 32)` (lanes 32-63 hold no
    thread), or a function that partitions its block into cooperative-groups tiles of 32
    (`cg::tiled_partition<32>`, two tiles per wave64)."""
    child, current = node, node.parent
    while current is not None:
        if current.type == "if_statement":
            consequence = current.child_by_field_name("consequence")
            condition = current.child_by_field_name("condition")
            if consequence is not None and condition is not None \
                    and consequence.start_byte <= child.start_byte and child.end_byte <= consequence.end_byte \
                    and _BLOCK_OF_32.fullmatch(re.sub(rb"\s+", b"", ctx.source[condition.start_byte:condition.end_byte])):
                return True
        elif current.type == "function_definition":
            return any(_is_32(ctx, m.group(1).decode())
                       for m in _TILE_OF.finditer(ctx.source, current.start_byte, current.end_byte))
        child, current = current, current.parent
    return False


def _is_32(ctx, value: str) -> bool:
    """A literal 32, or a macro whose AMD-build value (this file's, or the project's) is 32."""
    return value == "32" or ctx.macro_value(value) == "32"


_BLOCK_OF_32 = re.compile(rb"\(*(?:blockDim\.x==32|32==blockDim\.x)\)*")
_TILE_OF = re.compile(rb"\b(?:tiled_partition|thread_block_tile)\s*<\s*(\w+)\s*>")


def _worth_parsing(ctx, start: int, text: bytes, number: bytes) -> bool:
    """Whether a lane-arithmetic, declaration or call hit can be reported at all, judged from
    the text (a necessary condition of each check of ``check``)."""
    compact = re.sub(rb"\s+", b"", text)
    if compact.startswith(b"=") and not compact.startswith(b"=="):  # `= 32;`: only a const declaration
        source = ctx.source
        statement = max(source.rfind(b";", 0, start), source.rfind(b"{", 0, start), source.rfind(b"}", 0, start)) + 1
        return b"const" in source[statement:start]
    if compact.startswith((b",", b"(")):  # an argument: a shuffle from lane 31, or min(..., 32)
        if number == b"31":
            return b"shfl" in ctx.source
        return re.search(rb"(?i)min", ctx.source[max(0, start - _CALL_WINDOW):start]) is not None
    operator = compact[: len(compact) - len(number)].decode("ascii", "replace")
    if (operator, number.decode()) not in LANE_ARITHMETIC:
        return False
    loop = operator in ("<", "<=")  # a lane loop: checked by its body (``_lane_loop_or_compare``)
    key = ("roc204-file", loop)
    found = ctx.cache.get(key)
    if found is None:
        found = ctx.cache[key] = (_LANE_LOOP_BODY if loop else INDEX_SOURCE_TEXT).search(ctx.source) is not None
    return found


_MIN_CALLS = frozenset({"min", "std::min", "MIN", "std::min<int>", "fmin", "umin", "::min"})
_WARP_SIZE_TEXT = re.compile(r"(?i)warp_?size|wave_?(?:front_?)?size")


def _clamps_warp_size(ctx, arguments, literal) -> bool:
    """``std::min(prop.warpSize, 32)``: a queried warp size clamped to a literal 32."""
    from rocmlint.cpp.dataflow import call_arguments, callee_name

    call = arguments.parent
    if call is None or call.type != "call_expression" or callee_name(ctx, call) not in _MIN_CALLS or \
            ctx.node_text(literal) != "32":
        return False
    scope = ctx.scope_of(call)
    body = ctx.source[scope.start_byte : call.start_byte].decode("utf-8", "replace")
    for arg in call_arguments(call):
        text = ctx.node_text(arg)
        if arg == literal:
            continue
        if _WARP_SIZE_TEXT.search(text):
            return True
        # int n; hipDeviceGetAttribute(&n, hipDeviceAttributeWarpSize, dev); min(n, 32)
        if arg.type == "identifier" and re.search(r"&\s*" + re.escape(text) + r"\s*,\s*\w*(?:WarpSize|warpSize)", body):
            return True
    return False


def _selected_tile_size(ctx, literal) -> bool:
    """``if constexpr (I == 32 && J == 4) return threadIdx.x % 32;``: inside a branch chosen
    by a tile or data dimension equal to this literal, the literal is that dimension."""
    from rocmlint.cpp.constant_uses import names_tile_dimension

    value = ctx.node_text(literal)
    node = ctx.ancestor(literal, {"if_statement"})
    while node is not None:
        condition = node.child_by_field_name("condition")
        taken = node.child_by_field_name("consequence")
        if condition is not None and taken is not None and taken.start_byte <= literal.start_byte < taken.end_byte:
            for name in re.findall(r"\b([A-Za-z_]\w*)\s*==\s*" + value + r"\b", ctx.node_text(condition)):
                if names_tile_dimension(name):
                    return True
        node = ctx.ancestor(node, {"if_statement"})
    return False
