from __future__ import annotations

import re

from rocmlint.model import Applicability, Edit, Span
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
    `__shfl(x, 31)`, lane loops `d < 32` and strides `+= 32`. A 32 that counts bits of a
    word (bit packing, `sizeof(int) * 8`) is told apart by how the constant is used.

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
    `C10_WARP_SIZE` pattern (`__GFX9__` ? 64 : 32), which is right in device code but
    reads 32 in the host pass, so host launch sizes derived from it need a runtime
    `hipDeviceProp_t::warpSize` query. Never hard-code 64: RDNA is wave32.

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
               r"|[%/&<]\s*3[12]\b|<=\s*3[12]\b|\+=\s*3[12]\b|>>\s*5\b|==\s*31\b|,\s*31\s*\)")
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
        from rocmlint.cpp.wavesize import is_warp_constant, shuffle_operands
        from rocmlint.fixers.cpp_gate import build_fix

        for hit in ctx.hits():
            text = ctx.source[hit.start : hit.end]
            line = ctx.line_of(hit.start)
            definition = _DEFINITION.match(text)
            if definition:
                name = definition.group(1).decode()
                # a real directive (not one in a comment) that the AMD build sees
                if line not in [l for l, _ in ctx.pp.defines.get(name, [])] or not is_warp_constant(ctx, name, line):
                    continue
                self._report_constant(ctx, hit, name, build_fix)
                continue
            literal_match = re.search(rb"(\d+)\s*[;)]?$", text)
            if literal_match is None:  # every other alternative of `pattern` ends with its number
                continue
            start = hit.start + literal_match.start(1)
            literal = ctx.root.named_descendant_for_byte_range(start, start + len(literal_match.group(1)))
            if literal is None or literal.type != "number_literal":
                continue
            parent = literal.parent
            if parent is not None and parent.type == "init_declarator":
                name = ctx.node_text(parent.child_by_field_name("declarator"))
                declaration = parent.parent
                if "const" in ctx.node_text(declaration).split("=")[0] and is_warp_constant(ctx, name, line):
                    self._report_constant(ctx, Span(literal.start_byte, literal.end_byte), name, build_fix)
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

    def _report_constant(self, ctx, span, name, build_fix):
        node = ctx.root.named_descendant_for_byte_range(span.start, span.end)
        literal_at = ctx.source.rfind(b"32", span.start, span.end)
        if ctx.source[span.start : span.end].strip().isdigit():
            literal_at = span.start
        literal = Span(literal_at, literal_at + 2)
        fix = build_fix(ctx, node, [], f"pick {name} by wave size (__GFX9__)", Applicability.UNSAFE,
                        wave_variants=([Edit(literal, "64")], [Edit(literal, "32")]))
        ctx.report(literal, f"warp-size constant `{name}` hard-coded as 32: AMD CDNA wavefronts have 64 lanes", fix)

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
        return body is not None and re.search(rb"__shfl|\blane", ctx.source[body.start_byte : body.end_byte]) is not None
