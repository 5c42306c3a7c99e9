from __future__ import annotations

from rocmlint.model import Applicability, Edit
from rocmlint.rule import Example, Rule


class ShuffleReductionFixedWidth(Rule):
    """A shuffle reduction or scan starts at offset 16 or passes width 32.

    ## What it does
    Reports butterfly and tree reductions whose loop starts at offset 16
    (`for (int o = 16; o > 0; o /= 2)`), unrolled ones that start at 16 or climb
    1, 2, 4, 8, 16 and stop there (no step at 32), and shuffles that pass an explicit width
    of 32.

    ## Why is this bad?
    On a 64-lane wavefront the reduction never combines lanes 0-31 with lanes 32-63:
    every wave produces two partial results and the sum, max or scan is silently wrong.

    ## Example
    ```cpp
    for (int offset = 16; offset > 0; offset /= 2)
      v += __shfl_down(v, offset);
    ```
    Use instead:
    ```cpp
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
      v += __shfl_down(v, offset);
    ```

    ## Fix safety
    Unsafe: starting at `warpSize / 2` reduces the whole wavefront, which changes results
    where code relied on independent 32-lane halves. Unrolled reductions are reported
    without a fix.

    ## References
    - https://github.com/ORNL/HeCBench/issues/180
    - https://github.com/ggml-org/llama.cpp/issues/3630
    """

    code = "ROC205"
    name = "shuffle-reduction-fixed-width"
    language = "cpp"
    message = "shuffle reduction covers 32 lanes: lanes 32-63 of a wave64 are never combined"
    pattern = r"\b__shfl(?:_up|_down|_xor)?(?:_sync)?\s*\("
    fix_applicability = Applicability.UNSAFE
    wave_size_rule = True
    reference_kernel = "wave_reduce.hip"

    valid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float wave_sum(float v) {\n"
            "  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);\n"
            "  return v;\n"
            "}\n",
            filename="example.hip",
        ),
    )
    invalid = (
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float wave_sum(float v) {\n"
            "  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);\n"
            "  return v;\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__device__ float wave_sum(float v) {\n"
                "  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);\n"
                "  return v;\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ float group_max(float v, int offset) {\n"
            "  return fmaxf(v, __shfl_xor(v, offset, 32));\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__device__ float group_max(float v, int offset) {\n"
                "  return fmaxf(v, __shfl_xor(v, offset, warpSize));\n"
                "}\n"
            ),
            filename="example.hip",
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.wavesize import shuffle_operands
        from rocmlint.fixers.cpp_gate import build_fix

        for hit in ctx.hits():
            node = ctx.node_at(hit)
            call = node if node is not None and node.type == "call_expression" else \
                ctx.ancestor(node, {"call_expression"}) if node is not None else None
            operands = shuffle_operands(ctx, call) if call is not None else None
            # The call decides: a loop header outside an NVIDIA-only branch may feed only
            # NVIDIA-only shuffles.
            if call is None or operands is None or ctx.nvidia_only(call.start_byte):
                continue
            args, value_index = operands
            if len(args) > value_index + 2 and ctx.node_text(args[value_index + 2]) == "32":
                width = args[value_index + 2]
                fix = build_fix(ctx, width, [Edit(ctx.node_span(width), "warpSize")], "shuffle over the whole wave",
                                Applicability.UNSAFE)
                ctx.report(ctx.node_span(width), "shuffle width 32 splits a wave64 into two halves", fix)
            if len(args) <= value_index + 1:
                continue
            offset = args[value_index + 1]
            start = self._loop_start_16(ctx, call, offset)
            if start is not None:
                fix = build_fix(ctx, start, [Edit(ctx.node_span(start), "warpSize / 2")],
                                "start the reduction at warpSize / 2", Applicability.UNSAFE)
                ctx.report(ctx.node_span(start), "shuffle reduction starts at offset 16: lanes 32-63 of a "
                           "wave64 are never combined", fix)
            elif ctx.node_text(offset) == "16" and ctx.ancestor(call, {"for_statement", "while_statement"}) is None:
                steps = self._unrolled_steps(ctx, call)
                if "32" in steps.values():
                    continue  # 1, 2, ..., 16, 32: the whole wave64
                ascending = any(text == "8" and start < call.start_byte for start, text in steps.items())
                shape = "stops" if ascending else "starts"
                ctx.report(ctx.node_span(offset), f"unrolled shuffle reduction {shape} at offset 16: add a step "
                           "at offset 32 for wave64")

    @staticmethod
    def _unrolled_steps(ctx, call) -> dict[int, str]:
        """Offsets of the shuffles in the statements around ``call`` (its block): start -> text."""
        from rocmlint.cpp.wavesize import shuffle_operands

        block = ctx.ancestor(call, {"compound_statement", "translation_unit"})
        steps = {}
        for node in ctx.descendants(block, {"call_expression"}) if block is not None else ():
            operands = shuffle_operands(ctx, node)
            if operands is not None and len(operands[0]) > operands[1] + 1:
                steps[node.start_byte] = ctx.node_text(operands[0][operands[1] + 1])
        return steps

    @staticmethod
    def _loop_start_16(ctx, call, offset):
        """The literal 16 initialising the loop variable used as the shuffle offset."""
        if offset.type != "identifier":
            return None
        name = ctx.node_text(offset)
        loop = ctx.ancestor(call, {"for_statement"})
        while loop is not None:
            init = loop.child_by_field_name("initializer")
            if init is not None:
                for node in ctx.descendants(init, {"init_declarator", "assignment_expression"}):
                    target = node.child_by_field_name("declarator") or node.child_by_field_name("left")
                    value = node.child_by_field_name("value") or node.child_by_field_name("right")
                    if target is not None and ctx.node_text(target) == name and value is not None \
                            and ctx.node_text(value) == "16":
                        return value
            loop = ctx.ancestor(loop, {"for_statement"})
        return None
