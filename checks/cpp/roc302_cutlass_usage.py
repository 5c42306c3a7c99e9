from __future__ import annotations

from bisect import bisect_right

from rocmlint.cpp.lexical import starts_word
from rocmlint.lazy_re import lazy_compile
from rocmlint.rule import Example, Rule

_INCLUDE_PREFIX = lazy_compile(rb"[ \t]*#[ \t]*include[ \t]*[<\"]")


class CutlassUsage(Rule):
    """CUTLASS or CuTe code is reachable in the AMD build.

    ## What it does
    Reports, once per file, the first `#include <cutlass/...>` / `<cute/...>` or `cutlass::` /
    `cute::` use in code the ROCm build compiles, with a count of the others.

    ## Why is this bad?
    CUTLASS and CuTe are NVIDIA-only template libraries (PTX, tensor-core MMA atoms): the
    AMD build cannot compile them. The ROCm path needs hipBLASLt, composable_kernel or
    rocWMMA instead, behind a gate.

    ## Example
    ```cpp
    #include <cutlass/gemm/device/gemm.h>
    ```
    Use instead:
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    #include <hipblaslt/hipblaslt.h>
    #else
    #include <cutlass/gemm/device/gemm.h>
    #endif
    ```

    ## Fix safety
    Display-only: the ROCm kernel library has a different API.

    ## References
    - https://github.com/ROCm/HIPIFY/issues/731
    - https://github.com/ROCm/composable_kernel
    - https://github.com/ROCm/hipBLASLt
    """

    code = "ROC302"
    name = "cutlass-usage"
    language = "cpp"
    message = "CUTLASS/CuTe is NVIDIA-only: gate it and use hipBLASLt, composable_kernel or rocWMMA on ROCm"
    # A literal start keeps the scan fast on trees full of CUTLASS; ``check`` keeps the
    # includes and the whole-word qualifiers.
    pattern = r"cut(?:lass|e)(?:::|/)"

    valid = (
        Example(
            "#ifndef USE_ROCM\n"
            "#include <cutlass/gemm/device/gemm.h>\n"
            "using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor, float,\n"
            "    cutlass::layout::RowMajor, float, cutlass::layout::RowMajor>;\n"
            "#endif\n"
        ),
    )
    invalid = (
        Example("#include \"cutlass/numeric_types.h\"\nusing Half = cutlass::half_t;\n"),
    )

    def check(self, ctx) -> None:
        # One finding per file, at the first reachable include or use, with a count of the
        # others: a file that depends on CUTLASS has the same fix everywhere, and one finding
        # per include or declaration buried real files (20,000 on CUTLASS's own tree) in noise.
        uses = _uses(ctx, ctx.hits())
        if uses:
            more = len(uses) - 1
            suffix = f" ({more} more use{'s' if more != 1 else ''} in this file)" if more else ""
            ctx.report(uses[0], self.message + suffix)


def _uses(ctx, hits: list) -> list:
    """The hits that are uses: an include path after ``#include``, or a qualifier that is a
    whole word, in code the AMD build may compile. CUTLASS's own tree has 180,000 hits: the
    reach is asked once per line (hits come in file order), before the lexer reads up to
    the hit."""
    source = ctx.source
    starts = ctx.lines.line_starts
    uses = []
    line, next_line_at, live = -1, -1, False
    for hit in hits:
        at = hit.start
        if at >= next_line_at or at < starts[line]:
            line = bisect_right(starts, at) - 1
            next_line_at = starts[line + 1] if line + 1 < len(starts) else len(source) + 1
            live = ctx.amd_reach(line) is not False
        if not live:
            continue
        start = at
        if source[hit.end - 1] == 0x2F:  # "/": only as the path of an #include
            start = starts[line]
            if not _INCLUDE_PREFIX.fullmatch(source, start, at):
                continue
        elif not starts_word(source, at):  # `mycutlass::`
            continue
        if ctx.dropped_argument(at) is None and ctx.in_code(start):
            uses.append(hit)
    return uses
