from __future__ import annotations

import re

from rocmlint.model import Applicability, Edit, Span
from rocmlint.rule import Example, Rule


class WaveSizeMismatch(Rule):
    """Two parts of the code assume different wave sizes.

    ## What it does
    Reads each kernel's lane groups (the lane and warp indices it computes, the lanes its
    shuffles cover, the lanes that read a result) and reports the operations that break a
    32-lane design on a 64-lane wavefront: a shuffle with no width that broadcasts from a
    fixed lane (`__shfl_sync(mask, v, 0)`) or reads a source lane computed per 32 lanes
    (`__shfl(v, lane ^ 1)` with `lane = threadIdx.x & 31`), a `__shfl_up` scan with no
    width and no per-32 lane guard, a lane-0 read of a 32-lane reduction where the lane is
    a lane of the whole wavefront; and wave-size values that host code and device code
    read differently (a `WARP_SIZE` chosen by `__GFX9__`, which only the device pass
    defines, used in a launch configuration).

    ## Why is this bad?
    CUDA warps have 32 lanes; AMD CDNA wavefronts (MI100-MI300) have 64. A kernel that
    gives each 32 lanes one row is correct on wave64 as long as every operation stays
    inside its 32 lanes. A width-less shuffle spans the whole wavefront: a broadcast from
    lane 0 hands lanes 32-63 the other row's value, silently. Host code that sizes blocks
    with a device-only wave size launches half the threads the kernels expect.

    ## Example
    ```cpp
    float m = warp_max(v);              // xor butterfly from 16: one row per 32 lanes
    m = __shfl_sync(0xffffffff, m, 0);  // lanes 32-63 get lane 0's row
    ```
    Use instead (shared file):
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    m = __shfl(m, 0, 32);
    #else
    m = __shfl_sync(0xffffffff, m, 0);
    #endif
    ```

    ## Fix safety
    Unsafe: the fix makes the 32-lane group explicit (width 32), which is what the rest of
    the kernel assumes; where a kernel means the whole wavefront instead, its 32-lane
    members are what must change (ROC204/ROC205). Lane-0 reads and host/device
    disagreements are display-only: the host must query `hipDeviceAttributeWarpSize`.

    ## References
    - https://github.com/ORNL/HeCBench/issues/171
    - https://github.com/ORNL/HeCBench/issues/180
    - https://github.com/ROCm/pytorch/pull/2360
    """

    code = "ROC208"
    name = "wave-size-mismatch"
    language = "cpp"
    message = "wave-wide operation in a kernel built on 32-lane groups"
    # Shuffles and votes (lane groups); launch configurations (host reads of a wave size).
    pattern = (r"\b__shfl(?:_up|_down|_xor)?(?:_sync)?\s*\(|\b(?:__ballot|__activemask|__any|__all)\w*\s*\("
               r"|<<<|\bhipLaunchKernelGGL\b|\bdim3\b")
    # Python's re scans fast only for a pattern that starts with a literal (see Rule.anchors).
    anchors = (r"__shfl(?:_up|_down|_xor)?(?:_sync)?\s*\(", r"__(?:ballot|activemask|any|all)\w*\s*\(", r"<<<",
               r"hipLaunchKernelGGL", r"dim3")
    fix_applicability = Applicability.UNSAFE
    wave_size_rule = True
    reference_kernel = "lane_group_broadcast.hip"

    valid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float row_max(float v) {\n"
            "  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor(v, o));\n"
            "  return __shfl(v, 0, 32);\n"
            "}\n",
            filename="example.hip",
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float wave_first(float v) {\n"
            "  return __shfl(v, 0);\n"
            "}\n",
            filename="example.hip",
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float row_max(float v) {\n"
            "  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor(v, o));\n"
            "  return __shfl(v, 0);\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__device__ float row_max(float v) {\n"
                "  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor(v, o));\n"
                "  return __shfl(v, 0, 32);\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.lane_constants import wave_dependent_macros

        hits = [(hit, ctx.source[hit.start:hit.end].startswith(b"__")) for hit in ctx.hits()]
        if any(wave_wide and ctx.amd_hit(hit) for hit, wave_wide in hits):
            self._lane_groups(ctx)
        # a launch or dim3 the AMD build compiles, where a macro picks a wave size (asked first:
        # a host file's one `dim3` costs no #if or C++ gate table)
        if any(not wave_wide for _hit, wave_wide in hits) and wave_dependent_macros(ctx) and \
                any(not wave_wide and ctx.amd_hit(hit) for hit, wave_wide in hits):
            self._host_device(ctx)

    @staticmethod
    def _lane_groups(ctx) -> None:
        from rocmlint.cpp.lanegroups import lane_groups
        from rocmlint.fixers.cpp_gate import build_fix

        for verdict in lane_groups(ctx).verdicts:
            if verdict.kind == "member":
                continue
            fact = verdict.fact
            fix = None
            if verdict.kind == "mismatch" and verdict.fixable and fact.wave_edit is not None:
                span, content = fact.wave_edit
                node = ctx.node_at(fact.span)
                fix = build_fix(ctx, node, [Edit(span, content)], "make the 32-lane group explicit (width 32)",
                                Applicability.UNSAFE) if node is not None else None
            ctx.report(fact.span, verdict.message(), fix)

    @staticmethod
    def _host_device(ctx) -> None:
        """A wave-size value chosen by a device-only macro, read by host code."""
        from rocmlint.cpp.constant_uses import host_uses
        from rocmlint.cpp.lane_constants import wave_dependent_macros

        for name, where in wave_dependent_macros(ctx).items():
            pattern = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
            if pattern.search(ctx.source) is None:
                continue
            # a use in a directive or in a branch chosen by wave size is a choice, not a read
            uses = [use for use in host_uses(ctx, name, -1) if not ctx.lines.line_text(
                ctx.line_of(use.start_byte)).lstrip().startswith("#") and not ctx.wave_size_aware(use.start_byte)]
            if not uses:
                continue
            use = uses[0]
            ctx.report(Span(use.start_byte, use.end_byte),
                       f"host code reads `{name}`, which {where} picks by a macro only the device pass "
                       "defines: the host pass sees the other value (32 on gfx9, whose device code sees 64); "
                       "query hipDeviceAttributeWarpSize at run time for host-side sizes")
