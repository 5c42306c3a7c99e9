from __future__ import annotations

from rocmlint.model import Span, Applicability, Edit
from rocmlint.rule import Example, Rule


class BallotMaskTruncated(Rule):
    """A ballot mask is stored into, cast to or returned as a 32-bit integer.

    ## What it does
    Follows the result of `__ballot`, `__ballot_sync`, `__activemask` and the
    `__lanemask_*` helpers through local variables, `&`, `|`, `~`, casts and assignments
    in the function, and reports each place the mask lands in a 32-bit type
    (`unsigned`, `int`, `uint32_t`): declarations, assignments, casts and returns.

    ## Why is this bad?
    On CDNA GPUs (MI100-MI300) a wavefront has 64 lanes and HIP's ballots return
    `uint64_t`. Storing one in 32 bits silently drops lanes 32-63: stream compaction loses
    elements, votes miss half the wave. This is the most common port bug in HeCBench.

    ## Example
    ```cpp
    unsigned mask = __ballot_sync(0xffffffff, pred);
    ```
    Use instead (shared file):
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    uint64_t mask = __ballot_sync(0xffffffff, pred);
    #else
    unsigned mask = __ballot_sync(0xffffffff, pred);
    #endif
    ```

    ## Fix safety
    Safe: widening keeps every bit the 32-bit type held. In shared CUDA/HIP files the wide
    type is gated to the AMD build so the NVIDIA build is byte-for-byte unchanged; in
    HIP-only files the type is rewritten directly. `#include <cstdint>` is added when needed.
    Where the kernel's lane groups disagree and another member still assumes 32 lanes for
    the value the fix changes (a leader chosen by `(threadIdx.x & 31) == 0`, a lane index
    `% 32` read with the mask), the fix alone would leave the kernel compiled but wrong:
    it is offered only together with the group's fix, as unsafe, and its title names the
    members that move with it; where the group has no mechanical fix, it is not offered.

    ## References
    - https://github.com/ORNL/HeCBench/issues/167
    - https://github.com/ORNL/HeCBench/issues/171
    - https://github.com/ORNL/HeCBench/issues/177
    - https://github.com/ORNL/HeCBench/issues/180
    - https://github.com/pytorch/FBGEMM/pull/5830
    """

    code = "ROC201"
    name = "ballot-mask-truncated"
    language = "cpp"
    message = "ballot mask stored in a 32-bit integer: lanes 32-63 of a wave64 are lost"
    pattern = r"\b__(?:ballot(?:_sync)?|activemask|lanemask_(?:lt|le|gt|ge|eq))\s*\("
    anchors = (r"__(?:ballot(?:_sync)?|activemask|lanemask_(?:lt|le|gt|ge|eq))\s*\(",)  # literal first: fast
    fix_applicability = Applicability.SAFE
    wave_size_rule = True
    reference_kernel = "ballot_compaction.hip"

    valid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__global__ void count(const int* in, unsigned long long* out) {\n"
            "  uint64_t mask = __ballot(in[threadIdx.x] > 0);\n"
            "  if (threadIdx.x == 0) *out = mask;\n"
            "}\n",
            filename="example.hip",
        ),
        Example(
            "__global__ void any_positive(const int* in, int* out) {\n"
            "#ifndef USE_ROCM\n"
            "  unsigned mask = __ballot_sync(0xffffffff, in[threadIdx.x] > 0);\n"
            "  out[0] = mask != 0;\n"
            "#endif\n"
            "}\n",
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__global__ void vote(const int* in, unsigned* out) {\n"
            "  unsigned mask = __ballot(in[threadIdx.x] > 0);\n"
            "  out[blockIdx.x] = mask;\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__global__ void vote(const int* in, unsigned* out) {\n"
                "  uint64_t mask = __ballot(in[threadIdx.x] > 0);\n"
                "  out[blockIdx.x] = mask;\n"
                "}\n"
            ),
            filename="example.hip",
        ),
        Example(
            "#include <cstdint>\n"
            "__global__ void votes(const bool* pred, unsigned* out) {\n"
            "  out[blockIdx.x] = (unsigned)__ballot_sync(0xffffffffu, pred[threadIdx.x]);\n"
            "}\n",
            expected=(
                "#include <cstdint>\n"
                "__global__ void votes(const bool* pred, unsigned* out) {\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "  out[blockIdx.x] = (uint64_t)__ballot_sync(0xffffffffu, pred[threadIdx.x]);\n"
                "#else\n"
                "  out[blockIdx.x] = (unsigned)__ballot_sync(0xffffffffu, pred[threadIdx.x]);\n"
                "#endif\n"
                "}\n"
            ),
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.dataflow import flow_for
        from rocmlint.cpp.truncation import truncating_stores
        from rocmlint.fixers.lane_group_fix import wave_safe_fix

        done = ctx.cache.setdefault(self.code, set())
        for hit in ctx.hits():
            node = ctx.node_at(hit)
            if node is None:
                continue
            flow = flow_for(ctx, node)
            if flow.scope.start_byte in done:
                continue
            done.add(flow.scope.start_byte)
            for store in truncating_stores(flow):
                edits = [Edit(ctx.node_span(store.type_node), "uint64_t")]
                edits += _activemask_edits(ctx, store.type_owner)
                fix = wave_safe_fix(ctx, store.type_owner, edits, "widen the ballot mask to uint64_t", uses_uint64=True)
                ctx.report(ctx.node_span(store.at),
                           f"ballot mask from {store.source.describe()} {store.how} 32-bit "
                           f"`{ctx.node_text(store.type_node)}`: lanes 32-63 of a wave64 are lost", fix)


def _activemask_edits(ctx, statement) -> list[Edit]:
    """`__activemask()` is missing from HIP 5 headers: on AMD the same mask is `__ballot(1)`
    (every active lane votes), which every HIP version has."""
    edits = []
    text = ctx.source[statement.start_byte : statement.end_byte]
    at = text.find(b"__activemask()")
    while at != -1:
        start = statement.start_byte + at
        edits.append(Edit(Span(start, start + len(b"__activemask()")), "__ballot(1)"))
        at = text.find(b"__activemask()", at + 1)
    return edits
