from __future__ import annotations

from rocmlint.model import Applicability, Edit, Span
from rocmlint.rule import Example, Rule


class MaskInNonSyncShuffle(Rule):
    """A lane mask is passed to a shuffle that takes none.

    ## What it does
    Reports `__shfl`, `__shfl_up`, `__shfl_down` and `__shfl_xor` calls whose first argument
    is an "every lane" mask (`0xffffffff`, `~0ull`, a macro or constant defined so,
    `__activemask()`), the shape a port leaves when it renames `__shfl_down_sync(mask, v, o)`
    to HIP's non-sync call and keeps the mask.

    ## Why is this bad?
    HIP's non-sync shuffles take `(value, lane or offset, width)`. With a mask in front, the
    mask is what gets shuffled, the value becomes the lane offset and the offset becomes the
    width: it compiles (every argument converts) and returns garbage on every AMD GPU.

    ## Example
    ```cpp
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down(0xffffffff, sum, offset);
    ```
    Use instead:
    ```cpp
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down(sum, offset);
    ```

    ## Fix safety
    Safe: the mask is dropped and the call is the one the `_sync` form meant (a full mask on
    HIP's non-sync shuffles is every lane of the wave). In a file the NVIDIA build also
    compiles the change sits behind `#if defined(__HIP_PLATFORM_AMD__)`. Whether the offsets
    then fit the wavefront is the wave-size rules' question (ROC205, ROC208): where the
    kernel's lane groups disagree and a 32-lane member reads the shuffled value, the fix is
    offered only with the group's fix (unsafe), or not at all where that has no mechanical form.

    ## References
    - https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html#warp-shuffle-functions
    """

    code = "ROC210"
    name = "mask-in-non-sync-shuffle"
    language = "cpp"
    message = "a lane mask passed to a shuffle that takes none: the mask is shuffled and the arguments shift"
    pattern = r"\b__shfl(?:_up|_down|_xor)?\s*\("
    anchors = (r"__shfl(?:_up|_down|_xor)?\s*\(",)  # literal first: fast
    fix_applicability = Applicability.SAFE

    valid = (
        Example("__device__ float sum(float v) {\n  return v + __shfl_down(v, 1, 32);\n}\n", filename="example.hip"),
        Example("__device__ unsigned first_mask(unsigned long long m) {\n  return __shfl(m, 0);\n}\n",
                filename="example.hip"),
        Example("__device__ float sum(float v) {\n  return v + __shfl_down_sync(0xffffffffffffffffull, v, 1);\n}\n",
                filename="example.hip"),
    )
    invalid = (
        Example(
            "__device__ float warp_sum(float v) {\n"
            "  for (int offset = 16; offset > 0; offset /= 2)\n"
            "    v += __shfl_down(0xffffffff, v, offset, 32);\n"
            "  return v;\n"
            "}\n",
            expected=(
                "__device__ float warp_sum(float v) {\n"
                "  for (int offset = 16; offset > 0; offset /= 2)\n"
                "    v += __shfl_down(v, offset, 32);\n"
                "  return v;\n"
                "}\n"
            ),
            filename="example.hip",
        ),
        Example(
            "#define FULL_MASK 0xffffffffu\n"
            "__device__ float pair_max(float v) {\n"
            "  return fmaxf(v, __shfl_xor(FULL_MASK, v, 1));\n"
            "}\n",
            expected=(
                "#define FULL_MASK 0xffffffffu\n"
                "__device__ float pair_max(float v) {\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "  return fmaxf(v, __shfl_xor(v, 1));\n"
                "#else\n"
                "  return fmaxf(v, __shfl_xor(FULL_MASK, v, 1));\n"
                "#endif\n"
                "}\n"
            ),
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.dataflow import call_arguments, callee_name
        from rocmlint.cpp.full_masks import shifted_mask
        from rocmlint.cpp.lane_constants import constant_value
        from rocmlint.fixers.lane_group_fix import wave_safe_fix

        for hit in ctx.hits():
            if not ctx.in_code(hit.start) or not ctx.amd_hit(hit):  # the cheap test first
                continue
            node = ctx.root.named_descendant_for_byte_range(hit.start, hit.start + 1)
            call = node.parent if node is not None else None
            if call is None or call.type != "call_expression":
                continue
            name = callee_name(ctx, call)
            args = call_arguments(call)
            mask = shifted_mask(ctx, name, args, constant_value)
            if mask is None:
                continue
            edit = Edit(Span(args[0].start_byte, args[1].start_byte), "")  # the mask and its comma
            fix = wave_safe_fix(ctx, call, [edit], "drop the mask")
            rest = ", ".join(ctx.node_text(a) for a in args[1:])
            ctx.report(ctx.node_span(args[0]),
                       f"`{name}` takes no mask: mask {mask} is shuffled as the value and `{rest}` shift into "
                       f"the lane/offset and width places; drop the mask", fix)
