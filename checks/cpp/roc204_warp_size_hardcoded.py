from __future__ import annotations

import re

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
    Unsafe, and for a whole lane group at once: every 32-lane member of the kernel (indices,
    strides, loop bounds, reduction starts and shuffle widths) moves to `warpSize` in one fix,
    or none does (an unrolled reduction or a constant defined in another file leaves every
    member display-only). A constant becomes PyTorch's `C10_WARP_SIZE` pattern (`__GFX9__`
    ? 64 : 32), right in device code only: a constant host code reads (a launch size, a
    host or `__host__ __device__` function) gets a display-only fix, since the host must
    query `hipDeviceAttributeWarpSize` at run time. A constant that is both the warp size
    and the bits of a word is split: its lane uses read a new `<NAME>_WAVE`, its word uses
    keep the 32. Never hard-code 64: RDNA is wave32.

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
    anchors = (r"3[12]\b", r">>", r"__(?:shfl|ballot|any|all|activemask|lane_id)", r"warpSize")
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
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "#if defined(__GFX9__)\n"
                "#define WARP_SIZE 64\n"
                "#else\n"
                "#define WARP_SIZE 32\n"
                "#endif\n"
                "#else\n"
                "#define WARP_SIZE 32\n"
                "#endif\n"
                "__global__ void leaders(const int* keep, int* out) {\n"
                "  const int warp = threadIdx.x / WARP_SIZE;\n"
                "  const unsigned long long voters = __ballot(keep[threadIdx.x]);\n"
                "  if (threadIdx.x % WARP_SIZE == 0) out[warp] = __popcll(voters);\n"
                "}\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.lanegroups import INDEX_KINDS, lane_groups, needs_lane_model
        from rocmlint.fixers.lane_group_fix import lane_group_fix

        for hit in ctx.amd_hits():  # a queried warp size capped at 32 (host code)
            text = ctx.source[hit.start:hit.end]
            if text.lstrip(b", (").startswith(b"32") and re.match(rb"\s*,\s*32\s*\)", text):
                self._cap(ctx, hit)
        for line, value in ctx.pp.defines.get("warpSize", []):  # the builtin redefined: every use is 32
            if re.fullmatch(r"\(?\s*32[uUlL]*\s*\)?", value) and not ctx.pp.nvidia_only(line):
                at = ctx.lines.line_start(line) + ctx.lines.line_text(line).rindex("32")
                ctx.report(Span(at, at + 2), "`#define warpSize 32` replaces HIP's wavefront size with 32 for "
                           "every line after it, HIP's own headers included: AMD CDNA wavefronts have 64 lanes")
        if not needs_lane_model(ctx):
            return
        model = lane_groups(ctx)
        constants: dict[str, list] = {}
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
                constants.setdefault(fact.constant, []).append(verdict.context)
            if fact.kind in INDEX_KINDS:
                ctx.report(fact.span, verdict.message(), lane_group_fix(ctx, verdict.context))
        for name, contexts in constants.items():
            definition = _constant_definition(ctx, name)
            if definition is not None:
                movable = all(model.only_constant(context, name) for context in contexts)
                self._report_constant(ctx, definition, name, ctx.line_of(definition.start), movable)

    @staticmethod
    def _cap(ctx, hit) -> None:
        start = ctx.source.index(b"32", hit.start)
        literal = ctx.root.named_descendant_for_byte_range(start, start + 2)
        if literal is None or literal.type != "number_literal" or literal.parent is None or \
                literal.parent.type != "argument_list" or not _clamps_warp_size(ctx, literal.parent, literal):
            return
        ctx.report(ctx.node_span(literal), f"`{ctx.node_text(literal.parent.parent)}` caps the warp size at 32: "
                   "AMD CDNA wavefronts have 64 lanes; use the queried value", None)

    def _report_constant(self, ctx, span, name, line, movable: bool) -> None:
        """A constant equal to 32 that some inconsistent kernel uses as its lane-group size.
        Its fix follows its uses: host reads forbid a device-only macro (display-only), lane
        and word uses split it, a kernel that also has literal 32-lane members needs them
        moved in the same step (display-only), else it is picked by ``__GFX9__``."""
        from rocmlint.cpp.constant_uses import constant_uses
        from rocmlint.fixers.cpp_gate import build_fix

        uses = constant_uses(ctx, name, line)
        node = ctx.root.named_descendant_for_byte_range(span.start, span.end)
        literal = span
        message = f"warp-size constant `{name}` hard-coded as 32 in kernels that also work on the whole wavefront"
        variants = ([Edit(literal, "64")], [Edit(literal, "32")])
        if uses.host:
            where = uses.first_host_line(ctx)
            message += (f"; host code reads it (line {where}): query hipDeviceAttributeWarpSize there at run "
                        "time, a compile-time wave size is right only in device code")
            fix = build_fix(ctx, node, [], f"pick {name} by wave size in device code only (host code on line "
                            f"{where} must query hipDeviceAttributeWarpSize)", Applicability.DISPLAY_ONLY,
                            wave_variants=variants)
        elif not movable:
            message += "; the same kernels hard-code 32 elsewhere too: move them together"
            fix = build_fix(ctx, node, [], f"pick {name} by wave size (__GFX9__) together with the kernels' "
                            "literal 32-lane members", Applicability.DISPLAY_ONLY, wave_variants=variants)
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

def _constant_definition(ctx, name: str) -> Span | None:
    """The literal 32 of this file's ``#define NAME 32`` or ``const ... NAME = 32`` that
    the AMD build compiles."""
    for line, value in ctx.pp.defines.get(name, []):
        if re.fullmatch(r"\(?\s*32[uUlL]*\s*\)?", value) and not ctx.pp.nvidia_only(line):
            start = ctx.lines.line_start(line)
            at = ctx.source.find(b"32", start + ctx.lines.line_text(line).index(name) + len(name))
            return Span(at, at + 2) if at >= 0 else None
    pattern = re.compile(rb"\b(?:const|constexpr)\b[^;{}()=]*\b" + re.escape(name.encode()) +
                         rb"\s*(?:=\s*|\{\s*)\(?(32)[uUlL]*\)?\s*[;}]")
    for m in pattern.finditer(ctx.source):
        if ctx.in_code(m.start()) and not ctx.nvidia_only(m.start()):
            return Span(m.start(1), m.end(1))
    return None


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
