from __future__ import annotations

from rocmlint.cpp.rewrite_blockers import BLOCKERS
from rocmlint.model import Span
from rocmlint.rule import Rule


class RewriteNotPort(Rule):
    """A file built on NVIDIA machinery with nothing on AMD to map to: rewrite it, do not port it.

    ## What it does
    In port mode (CUDA code a HIP backend is written from), reports a file once when its code
    uses what AMD GPUs have no counterpart for: CUTLASS 3 collective mainloops, TMA descriptors
    and bulk tensor copies, tensor memory and `tcgen05`, `wgmma`, thread-block clusters and
    distributed shared memory, or the NVSHMEM device API (calls in device functions: host setup
    and `nvshmem.h` are a library swap, ROC305's). The finding names each blocker with its
    lines. The file's line findings (header swaps, PTX, masks) are counted in the summary, not
    listed: they describe code an AMD version will not keep. `--show-all` lists them. A header
    that only such files include (directly or through such headers) goes with them: it gets
    the same verdict, naming its includers (when the whole project is checked).
    `rocmlint explain FILE:LINE` gives the file's verdict and its blockers.

    ## Why is this bad?
    A porter working through such a file line by line swaps headers and widens masks in code
    that cannot run on AMD at all: a Hopper warp-specialised GEMM is replaced by a CK or
    hipBLASLt kernel, not translated. Listing its line findings hides the one decision that
    matters.

    ## Example
    ```cpp
    using Mainloop = cutlass::gemm::collective::CollectiveMma<...>;  // TMA + wgmma pipeline
    ```
    Use instead: an AMD implementation (CK, hipBLASLt, rocWMMA kernels) behind the same
    interface.

    ## Fix safety
    Display-only: the AMD version is new code.

    ## References
    - https://github.com/ROCm/composable_kernel
    - https://rocm.docs.amd.com/projects/hipBLASLt/en/latest/
    """

    code = "ROC307"
    name = "rewrite-not-port"
    language = "cpp"
    message = "rewrite, not port: the file is built on NVIDIA machinery with nothing on AMD to map to"
    # A verdict on the whole file: one hit at its start, no regex over it. The blockers' anchors
    # are the prefilter's literals, and `rewrite_blockers` finds them in one automaton pass (a
    # CUTLASS header names them thousands of times).
    pattern = r"\A"
    requires_any = tuple(anchor for blocker in BLOCKERS for anchor in blocker.anchors)

    valid = (
        # a HIP-portable kernel
        "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n",
        # the blocker only in a comment
        "// TODO: a wgmma version for Hopper\n__global__ void k(float* x) { x[0] = 1; }\n",
    )
    invalid = (
        "__global__ void __cluster_dims__(2, 1, 1) gather(float* out) {\n"
        "  namespace cg = cooperative_groups;\n  auto cluster = cg::this_cluster();\n"
        "  out[cluster.block_rank()] = 1;\n}\n",
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.rewrite_blockers import describe, rewrite_blockers

        if ctx.mode != "port":
            return  # the HIP build compiles it: its guards are what is checked
        found = rewrite_blockers(ctx)
        if not found:
            return
        first = min(item.lines[0] for item in found) - 1
        start = ctx.lines.line_start(first)
        end = ctx.lines.line_end(first)
        instead = "; ".join(dict.fromkeys(item.blocker.instead for item in found))
        ctx.report(Span(start, end), f"rewrite, not port: built on {describe(found)}, which AMD GPUs have no "
                                     f"counterpart for (an AMD version is built on: {instead}); its line findings "
                                     "are counted, not listed (`--show-all`)")
