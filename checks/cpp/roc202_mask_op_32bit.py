from __future__ import annotations

from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Span, Applicability, Edit
from rocmlint.cpp.markers import GPU_CODE_MARKERS
from rocmlint.rule import Example, Rule

# 32-bit bit-manipulation intrinsics and their 64-bit HIP counterparts (HIP 5 to 7).
WIDE_INTRINSICS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll",
                   "__brev": "__brevll", "__fns": "__fns64"}
_NARROW_ONE = lazy_compile(r"^\(?\s*(?:(1)[uU]?|(-1)|(~0)[uU]?)\s*\)?$")


class MaskOp32Bit(Rule):
    """A 32-bit bit operation runs on a ballot mask or builds a lane mask in 32 bits.

    ## What it does
    Reports `__popc`, `__ffs`, `__clz`, `__brev` and `__fns` applied to a value derived
    from a ballot (followed through local variables, `&`, `|`, `~` and casts in the
    function), and lane masks built in 32 bits: `1 << lane`, `(1u << lane) - 1`,
    `~(-1 << lane)`. The message names the ballot the value came from. In a HIP-only file, a
    helper that returns such a mask in 32 bits (`unsigned int lanemask_lt()`) is widened with
    it, with the 32-bit variables of the file its calls initialise.

    ## Why is this bad?
    A wave64 ballot has 64 bits. `__popc` counts only the low 32, `__ffs` never finds lanes
    32-63, and `1 << lane` is undefined behaviour for lanes 32-63: prefix sums and
    compaction offsets come out wrong on MI100-MI300.

    ## Example
    ```cpp
    int rank = __popc(mask & ((1u << lane) - 1));
    ```
    Use instead:
    ```cpp
    int rank = __popcll(mask & ((1ull << lane) - 1));
    ```

    ## Fix safety
    Safe: the 64-bit intrinsics return the same result for the low 32 lanes. Gated to the
    AMD build in shared CUDA/HIP files, rewritten directly in HIP-only files.
    Where the kernel's lane groups disagree and another member still assumes 32 lanes for
    the value the fix changes (a leader chosen by `(threadIdx.x & 31) == 0`, a lane index
    `% 32` read with the mask), the fix alone would leave the kernel compiled but wrong:
    it is offered only together with the group's fix, as unsafe, and its title names the
    members that move with it; where the group has no mechanical fix, it is not offered.

    ## References
    - https://github.com/ORNL/HeCBench/issues/171
    - https://github.com/ORNL/HeCBench/issues/177
    - https://github.com/pytorch/FBGEMM/pull/5830
    """

    code = "ROC202"
    name = "mask-op-32bit"
    language = "cpp"
    message = "32-bit bit operation on a wave mask: lanes 32-63 of a wave64 are ignored"
    pattern = r"\b__(?:popc|ffs|clz|brev|fns)\s*\(|(?:\b1[uU]?|-1\)?|~0[uU]?)\s*<<\s*\(?\s*\w*(?:[lL]ane|lid\b)"
    anchors = (r"__(?:popc|ffs|clz|brev|fns)", r"<<\s*\(?")  # literal first: fast to find
    fix_applicability = Applicability.SAFE
    # Lane-mask arithmetic only matters in GPU code: skip files with no sign of it.
    requires_any = GPU_CODE_MARKERS
    wave_size_rule = True
    reference_kernel = "lane_rank.hip"

    valid = (
        Example(
            "__device__ int bits_set(unsigned word) {\n"
            "  return __popc(word & 0x0f0f0f0fu);\n"
            "}\n"
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ int rank(bool p, int lane) {\n"
            "  uint64_t m = __ballot(p);\n"
            "  return __popcll(m & ((1ull << lane) - 1));\n"
            "}\n",
            filename="example.hip",
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ int rank(bool p, int lane) {\n"
            "  auto m = __ballot(p);\n"
            "  return __popc(m & ((1ull << lane) - 1));\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__device__ int rank(bool p, int lane) {\n"
                "  auto m = __ballot(p);\n"
                "  return __popcll(m & ((1ull << lane) - 1));\n"
                "}\n"
            ),
            filename="example.hip",
        ),
        Example(
            "__device__ int leader(bool p) {\n"
            "  auto votes = __ballot_sync(0xffffffffu, p);\n"
            "\n"
            "  return __ffs(votes) - 1;\n"
            "}\n",
            expected=(
                "__device__ int leader(bool p) {\n"
                "  auto votes = __ballot_sync(0xffffffffu, p);\n"
                "\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "  return __ffsll((unsigned long long)(votes)) - 1;\n"
                "#else\n"
                "  return __ffs(votes) - 1;\n"
                "#endif\n"
                "}\n"
            ),
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.dataflow import below_32, call_arguments, callee_name, flow_for, is_int32_type
        from rocmlint.fixers.lane_group_fix import wave_safe_fix

        for hit in ctx.hits():
            node = ctx.node_at(hit)
            if node is None:
                continue
            flow = flow_for(ctx, node)
            call = node if node.type == "call_expression" else ctx.ancestor(node, {"call_expression"})
            name = callee_name(ctx, call) if call is not None else ""
            if name in WIDE_INTRINSICS and call.start_byte == hit.start:
                args = call_arguments(call)
                source = flow.mask_source(args[0]) if args else None
                if source is None:
                    continue
                function = call.child_by_field_name("function")
                edits = [Edit(ctx.node_span(function), WIDE_INTRINSICS[name])]
                if name == "__ffs":
                    # HIP overloads __ffsll for long long and unsigned long long: a uint64_t
                    # (unsigned long) argument is ambiguous, so pick one.
                    arg = ctx.node_span(args[0])
                    edits += [Edit(Span(arg.start, arg.start), "(unsigned long long)("),
                              Edit(Span(arg.end, arg.end), ")")]
                fix = wave_safe_fix(ctx, call, edits, f"use {WIDE_INTRINSICS[name]}")
                ctx.report(ctx.node_span(function),
                           f"`{name}` on the ballot mask from {source.describe()} sees only lanes 0-31; "
                           f"use `{WIDE_INTRINSICS[name]}`", fix)
                continue
            shift = self._lane_shift(ctx, hit)
            if shift is None or not flow.holds_index(shift.child_by_field_name("right"), lane_only=True):
                continue
            if below_32(flow, shift.child_by_field_name("right")) and not _WAVE_VOTE.search(
                    ctx.source, flow.scope.start_byte, flow.scope.end_byte):
                continue  # a lane of a 32-lane group (`threadIdx.x % 32`) with no whole-wave vote to meet
            left = shift.child_by_field_name("left")
            literal = _NARROW_ONE.match(ctx.node_text(left))
            if literal is None:
                continue
            wide = "1ull" if literal.group(1) else "-1ll" if literal.group(2) else "~0ull"
            edits = [Edit(ctx.node_span(left), wide)]
            declaration = ctx.ancestor(shift, {"declaration"})
            if declaration is not None and _passes_through_call(shift, declaration):
                declaration = None  # `int rank = __popcll(mask & lanes)`: the result is a count
            if declaration is not None and is_int32_type(ctx, declaration.child_by_field_name("type")):
                edits.append(Edit(ctx.node_span(declaration.child_by_field_name("type")), "uint64_t"))
            elif not ctx.gated:  # a HIP-only file: a helper returning the mask in 32 bits widens with it
                edits += _returned_mask_edits(ctx, shift, is_int32_type)
            fix = wave_safe_fix(ctx, shift, edits, "build the lane mask in 64 bits", uses_uint64=len(edits) > 1)
            ctx.report(ctx.node_span(shift),
                       f"lane mask `{ctx.node_text(shift)}` is built in 32 bits: undefined for lanes 32-63 "
                       "of a wave64", fix)

    @staticmethod
    def _lane_shift(ctx, hit):
        node = ctx.root.named_descendant_for_byte_range(hit.start, hit.end)
        while node is not None and node.type != "binary_expression":
            node = node.parent
        while node is not None and node.type == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is not None and ctx.node_text(op) == "<<":
                return node
            node = node.parent if node.parent is not None and node.parent.type == "binary_expression" else None
        return None


_WAVE_VOTE = lazy_compile(rb"\b__(?:ballot|activemask|any|all)\w*\s*\(")


def _returned_mask_edits(ctx, shift, is_int32_type) -> list[Edit]:
    """``return (1ull << lane) - 1;`` in a function declared to return 32 bits (bscan's
    ``unsigned int lanemask_lt()``): its return type, and the 32-bit variables of this file
    initialised by a call of it, become ``uint64_t``."""
    returned = ctx.ancestor(shift, {"return_statement"})
    function = ctx.ancestor(returned, {"function_definition"}) if returned is not None else None
    if function is None or _passes_through_call(shift, returned):
        return []
    from rocmlint.cpp.dataflow import callee_name, function_declarator

    return_type = function.child_by_field_name("type")
    declarator = function_declarator(function)
    name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
    if return_type is None or name_node is None or not is_int32_type(ctx, return_type):
        return []
    name = ctx.node_text(name_node)
    edits = [Edit(ctx.node_span(return_type), "uint64_t")]
    for declaration in ctx.descendants(ctx.root, frozenset({"declaration"})):
        for init in declaration.children_by_field_name("declarator"):
            value = init.child_by_field_name("value") if init.type == "init_declarator" else None
            if value is not None and value.type == "call_expression" and callee_name(ctx, value) == name and \
                    is_int32_type(ctx, declaration.child_by_field_name("type")):
                edits.append(Edit(ctx.node_span(declaration.child_by_field_name("type")), "uint64_t"))
    return edits


def _passes_through_call(node, top) -> bool:
    """True when a call lies between ``node`` and its ancestor ``top``."""
    node = node.parent
    while node is not None and node != top:
        if node.type == "call_expression":
            return True
        node = node.parent
    return False
