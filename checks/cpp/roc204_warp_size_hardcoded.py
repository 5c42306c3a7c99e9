from __future__ import annotations

import re

from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability, Edit, Span
from rocmlint.cpp.markers import GPU_CODE_MARKERS
from rocmlint.rule import Example, Rule


class WarpSizeHardcoded(Rule):
    """The warp size is hard-coded as 32 in a kernel built on the whole wavefront.

    ## What it does
    Reports lane and warp indices computed for 32-lane warps (`threadIdx.x % 32`, `& 31`,
    `/ 32`, `>> 5`, or the same with a constant worth 32 such as `WS` or `WARP_SIZE`),
    lane strides and lane loops of 32 (`i += 32`, `d < 32`), `lane == 31`, and the
    constants themselves (`#define WARP_SIZE 32`, `static const int WS = 32;`), when the
    kernel around them also works on the whole wavefront: it votes with `__ballot` or
    `__any`, shuffles over `warpSize`, indexes by `__lane_id()` or `% warpSize`. A kernel
    whose every lane-group member is per 32 lanes (a logical 32-lane warp, shuffles with
    width 32 or reductions from 16 read at lanes 0 and 32) is consistent and correct on
    wave64: it is not reported, nor is 32 as data (`M_Warp_Tile`, `threads_per_row`, 32
    banks, bits of a word). Also reports a queried warp size capped at 32
    (`std::min(prop.warpSize, 32)`), and lane 31 read as the last lane where no 32-lane
    group exists.

    ## Why is this bad?
    AMD CDNA GPUs (MI100-MI300) run 64-lane wavefronts; RDNA runs 32. A kernel that mixes
    32-lane indices with wave-wide operations computes wrong lane and warp ids on wave64:
    a ballot counts two 32-lane groups as one, a per-warp slot is written by the wrong lane.

    ## Example
    ```cpp
    int lane = threadIdx.x % 32;
    unsigned long long voters = __ballot(keep);
    int rank = __popcll(voters & ((1ull << lane) - 1));
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
    Unsafe, and for a whole lane group at once: every 32-lane member of the kernel and the
    helpers it calls (lane and warp indices, warps per block, lane strides, lane loops,
    reduction starts and shuffle widths) moves to `warpSize` in one fix, or none does (an
    unrolled reduction, a tile of 32, a helper in another file, or a helper without lane
    text that passes the lanes on to a shuffling one leaves every member display-only). A
    constant worth 32 is replaced where a member uses it; the constant keeps 32 for what
    else reads it (bits of a word, a launch size), so its own finding is display-only: host
    code must query `hipDeviceAttributeWarpSize` at run time, never read a device-only wave
    size. Never hard-code 64: RDNA is wave32.

    ## References
    - https://github.com/ORNL/HeCBench/issues/167
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
    # 32-lane arithmetic and constants, and the wave-wide operations a kernel must also
    # have for them to disagree (the lane-group model decides).
    pattern = (r"#[ \t]*define[ \t]+\w+[ \t]+\(?32\)?[ \t]*(?:$|//|/\*)|=\s*32\s*;"
               r"|[%/&<]\s*3[12]\b|<=\s*3[12]\b|\+=\s*3[12]\b|>>\s*5\b|==\s*31\b|,\s*3[12]\s*\)|\(\s*32\s*,"
               r"|\b__(?:shfl|ballot|any|all|activemask|lane_id)\w*\s*\(|\bwarpSize\b")
    # Every 31/32 of the pattern follows an operator or a space: not `F32`, `int32`, `1.32`
    # (the check stands behind the literal, which keeps the scan fast)
    anchors = (r"3[12]\b(?<![\w.]3[12])", r">>\s*5\b", r"__(?:shfl|ballot|any|all|activemask|lane_id)", r"warpSize")
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
            "#include <hip/hip_runtime.h>\n"
            "// A logical 32-lane warp: consistent on wave64.\n"
            "__global__ void row_sums(const float* x, float* out) {\n"
            "  const int lane = threadIdx.x % 32;\n"
            "  const int warp = threadIdx.x / 32;\n"
            "  float v = x[threadIdx.x];\n"
            "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o, 32);\n"
            "  if (lane == 0) out[warp] = v;\n"
            "}\n",
            filename="example.hip",
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__global__ void count_kept(const int* keep, int* out) {\n"
            "  const int lane = threadIdx.x % 32;\n"
            "  const unsigned long long voters = __ballot(keep[threadIdx.x]);\n"
            "  if (lane == 0) atomicAdd(out, __popcll(voters));\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__global__ void count_kept(const int* keep, int* out) {\n"
                "  const int lane = threadIdx.x % warpSize;\n"
                "  const unsigned long long voters = __ballot(keep[threadIdx.x]);\n"
                "  if (lane == 0) atomicAdd(out, __popcll(voters));\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
        Example(
            "#define WARP_SIZE 32\n"
            "__global__ void leaders(const int* keep, int* out) {\n"
            "  const int warp = threadIdx.x / WARP_SIZE;\n"
            "  const unsigned long long voters = __ballot(keep[threadIdx.x]);\n"
            "  if (threadIdx.x % WARP_SIZE == 0) out[warp] = __popcll(voters);\n"
            "}\n",
            expected=(
                "#define WARP_SIZE 32\n"
                "__global__ void leaders(const int* keep, int* out) {\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "  const int warp = threadIdx.x / warpSize;\n"
                "  const unsigned long long voters = __ballot(keep[threadIdx.x]);\n"
                "  if (threadIdx.x % warpSize == 0) out[warp] = __popcll(voters);\n"
                "#else\n"
                "  const int warp = threadIdx.x / WARP_SIZE;\n"
                "  const unsigned long long voters = __ballot(keep[threadIdx.x]);\n"
                "  if (threadIdx.x % WARP_SIZE == 0) out[warp] = __popcll(voters);\n"
                "#endif\n"
                "}\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.lane_facts import INDEX_KINDS
        from rocmlint.cpp.lane_includes import needs_lane_model
        from rocmlint.cpp.lanegroups import lane_groups
        from rocmlint.fixers.lane_group_fix import lane_group_fix

        queried = _WARP_SIZE_BYTES.search(ctx.source) is not None  # what _clamps_warp_size needs
        for hit in ctx.hits() if queried else ():  # a queried warp size capped at 32 (host code)
            text = ctx.source[hit.start:hit.end]
            if text.lstrip(b", (").startswith(b"32") and re.match(rb"\s*,\s*32\s*\)", text) and \
                    _may_be_min_call(ctx.source, hit.start) and ctx.amd_hit(hit):
                self._cap(ctx, hit)
        for line, value in ctx.pp.defines.get("warpSize", []):  # the builtin redefined: every use is 32
            if re.fullmatch(r"\(?\s*32[uUlL]*\s*\)?", value) and not ctx.pp.nvidia_only(line):
                at = ctx.lines.line_start(line) + ctx.lines.line_text(line).rindex("32")
                ctx.report(Span(at, at + 2), "`#define warpSize 32` replaces HIP's wavefront size with 32 for "
                           "every line after it, HIP's own headers included: AMD CDNA wavefronts have 64 lanes")
        if not needs_lane_model(ctx):
            return
        model = lane_groups(ctx)
        constants: dict[str, list] = {}  # name -> its blamed uses
        for verdict in model.verdicts:
            fact = verdict.fact
            if verdict.kind == "last-lane" and fact.last_lane is not None:
                from rocmlint.fixers.cpp_gate import build_fix

                node = ctx.node_at(fact.last_lane)
                fix = build_fix(ctx, node, [Edit(fact.last_lane, "warpSize - 1")], "read the last lane as "
                                "warpSize - 1", Applicability.UNSAFE) if node is not None else None
                ctx.report(fact.last_lane, verdict.message(), fix)
                continue
            if verdict.kind != "member":
                continue
            if fact.constant:
                constants.setdefault(fact.constant, []).append(fact)
            if fact.kind in INDEX_KINDS:
                ctx.report(fact.span, verdict.message(), lane_group_fix(ctx, verdict.context))
        for name, uses in constants.items():
            definition = _constant_definition(ctx, name)
            if definition is not None:
                self._report_constant(ctx, definition, name, uses)

    @staticmethod
    def _cap(ctx, hit) -> None:
        start = ctx.source.index(b"32", hit.start)
        literal = ctx.root.named_descendant_for_byte_range(start, start + 2)
        if literal is None or literal.type != "number_literal" or literal.parent is None or \
                literal.parent.type != "argument_list" or not _clamps_warp_size(ctx, literal.parent, literal):
            return
        ctx.report(ctx.node_span(literal), f"`{ctx.node_text(literal.parent.parent)}` caps the warp size at 32: "
                   "AMD CDNA wavefronts have 64 lanes; use the queried value", None)

    @staticmethod
    def _report_constant(ctx, span, name, uses) -> None:
        """A constant equal to 32 that kernels which also work on the whole wavefront use as
        their lane-group size. Its uses move with their kernels' fix (to ``warpSize``, where
        they stand); the constant keeps 32 for what else reads it (host launch sizes, bits of
        a word), so its own finding carries no edit."""
        from rocmlint.cpp.constant_uses import host_uses

        lines = sorted({fact.line + 1 for fact in uses})
        shown = ", ".join(str(n) for n in lines[:4]) + (", ..." if len(lines) > 4 else "")
        message = (f"warp-size constant `{name}` is 32, and kernels that also work on the whole wavefront use it "
                   f"as their lane-group size (line{'s' if len(lines) > 1 else ''} {shown}): those uses move to "
                   "warpSize with their kernel")
        host = host_uses(ctx, name, ctx.line_of(span.start))
        if host:
            message += (f"; host code reads it (line {ctx.line_no(host[0])}): size launches from "
                        "hipDeviceAttributeWarpSize at run time, never from a device-only value")
        ctx.report(span, message)


def _constant_definition(ctx, name: str) -> Span | None:
    """The literal 32 of this file's ``#define NAME 32`` or ``const ... NAME = 32`` that
    the AMD build compiles."""
    for line, value in ctx.pp.defines.get(name, []):
        if re.fullmatch(r"\(?\s*32[uUlL]*\s*\)?", value) and not ctx.pp.nvidia_only(line):
            start = ctx.lines.line_start(line)
            at = ctx.source.find(b"32", start + ctx.lines.line_text(line).index(name) + len(name))
            return Span(at, at + 2) if at >= 0 else None
    from rocmlint.cpp.lane_constants import constant_definitions_of

    for m in constant_definitions_of(ctx.source, name):
        if _THIRTY_TWO.fullmatch(m.group(1)) and ctx.in_code(m.start()) and not ctx.nvidia_only(m.start()):
            at = m.start(1) + m.group(1).index(b"32")
            return Span(at, at + 2)
    return None


_THIRTY_TWO = lazy_compile(rb"\(?32[uUlL]*\)?")


_MIN_CALLS = frozenset({"min", "std::min", "MIN", "std::min<int>", "fmin", "umin", "::min"})
_WARP_SIZE_TEXT = lazy_compile(r"(?i)warp_?size|wave_?(?:front_?)?size")
_WARP_SIZE_BYTES = lazy_compile(_WARP_SIZE_TEXT.pattern.encode())  # the file-level pre-check


_MIN_NAME_BEFORE = lazy_compile(rb"(?:min|MIN)\s*(?:<[^<>()]*>\s*)?$")
_LOOK_BACK = 2048  # bytes searched for the call's opening parenthesis


def _may_be_min_call(source: bytes, comma: int) -> bool:
    """Whether the argument list ``, 32)`` closes may be a call of a ``_MIN_CALLS`` name, read
    from the text before it (no parse: two 1 MB files of ggml have hundreds of ``, 32)``).
    Unsure (a quote or a comment between, the parenthesis too far back): True."""
    depth = 0
    low = max(0, comma - _LOOK_BACK)
    for at in range(comma - 1, low - 1, -1):
        byte = source[at]
        if byte == 0x29:  # )
            depth += 1
        elif byte == 0x28:  # (
            if depth == 0:
                return _MIN_NAME_BEFORE.search(source, max(0, at - 64), at) is not None
            depth -= 1
        elif byte in b"\"'/;{}":
            return True
    return True


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
