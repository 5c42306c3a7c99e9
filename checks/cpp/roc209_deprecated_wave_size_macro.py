from __future__ import annotations

from rocmlint.rule import Example, Rule

_HOST_QUERY = "hipDeviceGetAttribute(&size, hipDeviceAttributeWarpSize, device)"


class DeprecatedWaveSizeMacro(Rule):
    """`__AMDGCN_WAVEFRONT_SIZE` / `__AMDGCN_WAVEFRONT_SIZE__` is used.

    ## What it does
    Reports each use of the compiler macros `__AMDGCN_WAVEFRONT_SIZE` and
    `__AMDGCN_WAVEFRONT_SIZE__` in code, in `#if` conditions and in `#define` bodies, and
    says what to use instead where it stands: the architecture macro in device code, a
    run-time query in host code (judged by the function around the use).

    ## Why is this bad?
    clang deprecated both macros (ROCm 6.3's release notes announce their removal): code
    that uses them stops building when they go. Worse, they read 64 in the host pass of
    every compilation, whatever the target, so host code that sizes launches, buffers or
    lane masks with them is wrong on RDNA GPUs (wave32) today.

    ## Example
    ```cpp
    #if __AMDGCN_WAVEFRONT_SIZE == 64
    constexpr int kWave = 64;
    #else
    constexpr int kWave = 32;
    #endif
    ```
    Use instead, in device code:
    ```cpp
    #if defined(__GFX9__)  // CDNA: wave64; RDNA: wave32
    constexpr int kWave = 64;
    #else
    constexpr int kWave = 32;
    #endif
    ```
    and in host code ask the device:
    `hipDeviceGetAttribute(&size, hipDeviceAttributeWarpSize, device)`.

    ## Fix safety
    Display-only: `__GFX9__` is defined in the device pass only, so whether a use moves to
    the architecture macro or to a run-time query depends on who reads the value.

    ## References
    - https://github.com/llvm/llvm-project/pull/157463
    - https://rocm.docs.amd.com/en/docs-6.3.0/about/release-notes.html
    - https://github.com/ROCm/pytorch/pull/2360
    """

    code = "ROC209"
    name = "deprecated-wave-size-macro"
    language = "cpp"
    message = "`__AMDGCN_WAVEFRONT_SIZE` is deprecated in clang and reads 64 in the host pass"
    pattern = r"\b__AMDGCN_WAVEFRONT_SIZE(?:__)?\b"
    anchors = (r"__AMDGCN_WAVEFRONT_SIZE",)  # literal first: fast
    reference_kernel = "wave_size_constexpr.hip"

    valid = (
        "#if defined(__GFX9__)\nconstexpr int kWave = 64;\n#else\nconstexpr int kWave = 32;\n#endif\n",
        "// __AMDGCN_WAVEFRONT_SIZE is deprecated: we select on __GFX9__ instead\nint n;\n",
    )
    invalid = (
        "#if __AMDGCN_WAVEFRONT_SIZE == 64\nconstexpr int kWave = 64;\n#else\nconstexpr int kWave = 32;\n#endif\n",
        Example("__device__ int lane_of(int tid) { return tid % __AMDGCN_WAVEFRONT_SIZE__; }\n"),
        Example("int blocks_for(int n) {\n  return (n + __AMDGCN_WAVEFRONT_SIZE - 1) / __AMDGCN_WAVEFRONT_SIZE;\n}\n"),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.constant_uses import function_side
        from rocmlint.fixers.cpp_gate import WAVE64_MACRO

        device = f"device code: select with `#if defined({WAVE64_MACRO})` (wave64 on CDNA, wave32 on RDNA)"
        host = f"host code: ask the device at run time ({_HOST_QUERY})"
        for hit in ctx.hits():
            if not ctx.in_code(hit.start) or not ctx.amd_hit(hit):  # the cheap test first
                continue
            name = ctx.text(hit)
            line_text = ctx.lines.line_text(ctx.line_of(hit.start)).lstrip()
            side = None
            if not line_text.startswith("#"):
                node = ctx.node_at(hit)
                side = function_side(ctx, node) if node is not None else None
            if side == "device":
                advice = f"in {device}"
            elif side in ("host", "both"):
                advice = f"the host pass reads 64 here, also for RDNA GPUs (wave32); in {host}"
            else:
                advice = f"in {device}; in {host}"
            ctx.report(hit, f"`{name}` is deprecated in clang and reads 64 in the host pass: {advice}")
