from __future__ import annotations

from rocmlint.model import Applicability, Edit, Span
from rocmlint.rule import Example, Rule


class WaveExtent(Rule):
    """A shared array sized for 32-lane waves is indexed past its end on a 64-lane wave.

    ## What it does
    For each `__shared__` array whose extent rocmlint can evaluate (literals, `2 * 32`,
    `1024 / 32`, a `WARP_SIZE` another header defines), computes the range of every index at
    64 and at 32 lanes: `threadIdx.x` up to 1023, narrowed by the guards around the access
    (`if (threadIdx.x < warpSize)`, an early `return`), `warpSize` the wave size,
    `__lane_id()` below it, locals assigned once and loop variables. Reports an index that
    reaches the extent at 64 lanes and stays below it at 32, naming the index, its range and
    the extent. An index it cannot bound is not reported.

    ## Why is this bad?
    Ports replace 32 by `warpSize` in the index arithmetic and keep extents computed from a
    32-lane count. On every 64-lane GPU (gfx90a, gfx942, gfx950) the kernel then writes past
    the array into its neighbours in shared memory: wrong results, no fault, no message. The
    code is right on NVIDIA and on RDNA (32 lanes), which is why tests there pass.

    ## Example
    ```cpp
    __shared__ int scratch[64];  // 2 x (1024 / 32) warps
    if (threadIdx.x < warpSize) scratch[2 * threadIdx.x - lane + warpSize] = v;  // 127 on wave64
    ```
    Use instead:
    ```cpp
    __shared__ int scratch[128];  // sized for 64-lane waves
    ```

    ## Fix safety
    Safe: only the extent changes, to the largest index the 64-lane range reaches plus one,
    gated for the AMD build in files NVIDIA compiles too (the NVIDIA view is unchanged). An
    over-estimated range only costs shared memory.

    ## References
    - https://github.com/ORNL/HeCBench/issues/180
    - https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warpsize
    """

    code = "ROC211"
    name = "wave-extent"
    language = "cpp"
    message = "shared array sized for 32-lane waves is indexed past its end on a 64-lane wave"
    pattern = r"__shared__"
    requires_any = (b"warpSize", b"__lane_id")
    wave_size_rule = True

    valid = (
        # sized from a count that does not depend on the wave
        "__global__ void k(const int* in, int* out) {\n  __shared__ int tile[256];\n"
        "  tile[threadIdx.x] = in[threadIdx.x];\n  __syncthreads();\n  out[threadIdx.x] = tile[warpSize];\n}\n",
        # a guarded lane index into 32 slots
        "__global__ void k(const int* in, int* out) {\n  __shared__ int firsts[32];\n"
        "  int lane = __lane_id();\n  if (lane < 32) firsts[lane] = in[threadIdx.x];\n}\n",
    )
    invalid = (
        Example("__global__ void scan(const int* in, int* out) {\n  __shared__ int scratch[64];\n"
                "  int lane = threadIdx.x % warpSize;\n"
                "  if (threadIdx.x < warpSize) scratch[2 * threadIdx.x - lane + warpSize] = in[threadIdx.x];\n}\n",
                "__global__ void scan(const int* in, int* out) {\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n  __shared__ int scratch[128];\n#else\n"
                "  __shared__ int scratch[64];\n#endif\n"
                "  int lane = threadIdx.x % warpSize;\n"
                "  if (threadIdx.x < warpSize) scratch[2 * threadIdx.x - lane + warpSize] = in[threadIdx.x];\n}\n"),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.extents import wave_extents
        from rocmlint.cpp.lane_constants import constant_value
        from rocmlint.fixers.cpp_gate import build_fix

        unjudged: list[tuple[str, int]] = []
        found_extents = wave_extents(ctx, lambda name: constant_value(ctx, name), unjudged)
        if ctx.project is not None:  # "no findings" does not cover these: the summary names them
            ctx.project.unjudged_extents += [f"{ctx.path}:{ctx.line_of(at) + 1} `{name}`" for name, at in unjudged]
        for found in found_extents:
            span = Span(*found.extent_span)
            needed = found.needed
            node = ctx.node_at(span)
            fix = build_fix(ctx, node, [Edit(span, str(needed))], f"size `{found.name}` for 64-lane waves ({needed})",
                            Applicability.SAFE) if node is not None else None
            low64, high64 = found.reach[64]
            low32, high32 = found.reach[32]
            sized = " sized for 32-lane waves" if found.extent[32] in (32, 64) else ", too small for 64-lane waves"
            guard = f" under `{found.guards[0]}`" if found.guards else ""
            access = f"`{found.name}`'s index `{found.index}` as {found.through}" if found.through else \
                f"`{found.name}[{found.index}]`"
            ctx.report(span, f"{access}{guard} reaches {high64} on a 64-lane wave (range "
                             f"{low64}..{high64}; {low32}..{high32} on 32 lanes), past the extent "
                             f"{found.extent[64]}{sized}: shared memory is corrupted on gfx9",
                       fix)
