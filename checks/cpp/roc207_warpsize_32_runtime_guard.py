from __future__ import annotations

import re

from rocmlint.rule import Example, Rule

_FAILS = re.compile(r"\b(?:throw|abort|exit|assert|\w*CHECK\w*|\w*ASSERT\w*|return|std::terminate|"
                    r"fprintf|printf|error)\b")


class WarpSize32RuntimeGuard(Rule):
    """Host code refuses to run unless the warp size is 32.

    ## What it does
    Reports checks like `if (prop.warpSize != 32) throw ...`,
    `TORCH_CHECK(warp_size() == 32, ...)` or `assert(warpSize == 32)`.

    ## Why is this bad?
    Every AMD CDNA GPU (MI100-MI300) reports a warp size of 64: the program aborts on them
    even where the kernels behind the check would work, or hides the kernels that need a
    wave64 path.

    ## Example
    ```cpp
    if (prop.warpSize != 32) throw std::runtime_error("unsupported GPU");
    ```
    Use instead: make the kernels wave-size generic (see ROC204/ROC205) and drop the check,
    or dispatch to a wave64 variant.

    ## Fix safety
    Display-only: what the program should do on wave64 is a design decision.

    ## References
    - https://github.com/ORNL/HeCBench/issues/180
    - https://github.com/ROCm/pytorch/pull/2360
    """

    code = "ROC207"
    name = "warpsize-32-runtime-guard"
    language = "cpp"
    message = "run-time check that the warp size is 32 fails on every AMD CDNA GPU (wave64)"
    # Spelled-out case variants (not (?i:)) so the prefilter gets literal factors.
    pattern = (r"(?:[wW]arp_?[sS]ize|WARP_?SIZE)\w*\s*(?:\(\s*\))?\s*[!=]=\s*32\b"
               r"|\b32\s*[!=]=\s*[\w.>-]*(?:[wW]arp_?[sS]ize|WARP_?SIZE)")
    wave_size_rule = True
    reference_kernel = "wave_size_constexpr.hip"

    valid = (
        "int threads_per_wave(const hipDeviceProp_t& prop) {\n  return prop.warpSize == 32 ? 32 : 64;\n}\n",
    )
    invalid = (
        Example(
            "#include <stdexcept>\n"
            "void require_warp32(int warp_size) {\n"
            "  if (warp_size != 32) throw std::runtime_error(\"needs 32-lane warps\");\n"
            "}\n"
        ),
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            node = ctx.node_at(hit)
            if node is None:
                continue
            guard = ctx.ancestor(node, {"if_statement", "call_expression", "conditional_expression"})
            if guard is None or guard.type == "conditional_expression":
                continue
            text = ctx.node_text(guard)
            if guard.type == "call_expression":
                fn = guard.child_by_field_name("function")
                text = ctx.node_text(fn) if fn is not None else ""
            if _FAILS.search(text):
                ctx.report(hit)
