from __future__ import annotations

from rocmlint.model import Applicability
from rocmlint.rule import Example, Rule


class ShuffleReductionFixedWidth(Rule):
    """A shuffle reduction, scan or width covers 32 lanes in a kernel built on the whole wavefront.

    ## What it does
    Reports shuffle reductions and scans whose offsets cover 32 lanes (a loop from offset
    16, an unrolled chain that climbs 1, 2, 4, 8, 16 and stops there) and shuffles with
    an explicit width of 32, when the kernel around them works on whole wavefronts: it
    reads the result at lane 0 of the wavefront (`__lane_id()`, `threadIdx.x % warpSize`),
    keeps one slot per wavefront, votes with `__ballot`/`__any`, or reduces elsewhere over
    `warpSize`. The kernel's lane groups are read as one (see ROC208): a reduction from 16
    whose result only lanes 0 and 32 read per 32-lane group is correct on wave64 and is
    not reported, nor is one every caller uses that way.

    What the reduction folds counts too: data the whole wavefront produced (`if (tid <
    warpSize)`, `x[tid + warpSize]`) is reported with that evidence, while data only 32
    lanes hold (`if (tid < 32)`, an early `if (tid >= 32) return;`) is all folded from 16 on
    any wave size and is not. A helper with no caller in view (its file or the files that
    include it), no width of its own (a parameter, a template argument, an explicit width)
    and a name or comment that promises a whole warp's result (`warp_sum`, "max across the
    warp") is read per wavefront, as the code that will call it reads it.

    ## Why is this bad?
    On a 64-lane wavefront the reduction never combines lanes 0-31 with lanes 32-63: lane
    0 holds the sum, max or scan of half the wavefront, and the code reads it as the whole.

    ## Example
    ```cpp
    for (int offset = 16; offset > 0; offset /= 2)
      v += __shfl_down(v, offset);
    if (__lane_id() == 0) atomicAdd(out, v);
    ```
    ```cpp
    if (tid < warpSize) {
      m = fmaxf(x[tid], x[tid + warpSize]);  // 64 values on gfx9
      for (int i = 16; i > 0; i >>= 1) m = fmaxf(m, __shfl_down(m, i));
    }
    ```
    Use instead:
    ```cpp
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      v += __shfl_down(v, offset);
    if (__lane_id() == 0) atomicAdd(out, v);
    ```

    ## Fix safety
    Unsafe: the fix moves every 32-lane member of the kernel to the wavefront size at
    once (reduction starts, widths, lane and warp indices, lane strides); where one of
    them has no mechanical form (an unrolled chain, a constant defined elsewhere) no
    member is fixed, so the lane groups never end up half moved.

    ## References
    - https://github.com/ORNL/HeCBench/issues/180
    - https://github.com/ggml-org/llama.cpp/issues/3630
    """

    code = "ROC205"
    name = "shuffle-reduction-fixed-width"
    language = "cpp"
    message = "shuffle reduction covers 32 lanes: lanes 32-63 of a wave64 are never combined"
    pattern = r"\b__shfl(?:_up|_down|_xor)?(?:_sync)?\s*\("
    anchors = (r"__shfl(?:_up|_down|_xor)?(?:_sync)?\s*\(",)  # literal first: fast
    fix_applicability = Applicability.UNSAFE
    wave_size_rule = True
    reference_kernel = "wave_reduce.hip"

    valid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "// The first 32 threads hold all 64 partial sums: from 16 folds every one of them.\n"
            "__device__ float tail_sum(const float* s) {\n"
            "  float v = 0.f;\n"
            "  if (threadIdx.x < 32) {\n"
            "    v = s[threadIdx.x] + s[threadIdx.x + 32];\n"
            "    for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);\n"
            "  }\n"
            "  return v;\n"
            "}\n",
            filename="example.hip",
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float wave_sum(float v) {\n"
            "  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);\n"
            "  return v;\n"
            "}\n",
            filename="example.hip",
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "// One row per 32 lanes: lanes 0 and 32 of a wave64 each hold their own row's sum.\n"
            "__global__ void row_sums(const float* x, float* out) {\n"
            "  const int lane = threadIdx.x & 31;\n"
            "  const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;\n"
            "  float v = x[row * 32 + lane];\n"
            "  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);\n"
            "  if (lane == 0) out[row] = v;\n"
            "}\n",
            filename="example.hip",
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float block_max(const float* x, float val) {\n"
            "  float m = val;\n"
            "  if (threadIdx.x < warpSize) {\n"
            "    m = fmaxf(x[threadIdx.x], x[threadIdx.x + warpSize]);\n"
            "    for (int i = 16; i > 0; i >>= 1) m = fmaxf(m, __shfl_down(m, i));\n"
            "  }\n"
            "  return m;\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__device__ float block_max(const float* x, float val) {\n"
                "  float m = val;\n"
                "  if (threadIdx.x < warpSize) {\n"
                "    m = fmaxf(x[threadIdx.x], x[threadIdx.x + warpSize]);\n"
                "    for (int i = warpSize / 2; i > 0; i >>= 1) m = fmaxf(m, __shfl_down(m, i));\n"
                "  }\n"
                "  return m;\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__global__ void wave_sums(const float* x, float* out) {\n"
            "  float v = x[blockIdx.x * blockDim.x + threadIdx.x];\n"
            "  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);\n"
            "  if (__lane_id() == 0) atomicAdd(out, v);\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__global__ void wave_sums(const float* x, float* out) {\n"
                "  float v = x[blockIdx.x * blockDim.x + threadIdx.x];\n"
                "  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);\n"
                "  if (__lane_id() == 0) atomicAdd(out, v);\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float group_max(float v) {\n"
            "  for (int o = 1; o < 32; o *= 2) v = fmaxf(v, __shfl_xor(v, o, 32));\n"
            "  return v;\n"
            "}\n"
            "__global__ void wave_max(const float* x, float* out) {\n"
            "  float v = group_max(x[threadIdx.x]);\n"
            "  if (threadIdx.x % warpSize == 0) out[threadIdx.x / warpSize] = v;\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__device__ float group_max(float v) {\n"
                "  for (int o = 1; o < warpSize; o *= 2) v = fmaxf(v, __shfl_xor(v, o, warpSize));\n"
                "  return v;\n"
                "}\n"
                "__global__ void wave_max(const float* x, float* out) {\n"
                "  float v = group_max(x[threadIdx.x]);\n"
                "  if (threadIdx.x % warpSize == 0) out[threadIdx.x / warpSize] = v;\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.lane_facts import SHUFFLE_MEMBER_KINDS
        from rocmlint.cpp.lanegroups import lane_groups
        from rocmlint.fixers.lane_group_fix import lane_group_fix

        for verdict in lane_groups(ctx).verdicts:
            if verdict.kind == "member" and verdict.fact.kind in SHUFFLE_MEMBER_KINDS:
                ctx.report(verdict.fact.span, verdict.message(), lane_group_fix(ctx, verdict.context))
