from __future__ import annotations

import re

from rocmlint.cpp.dataflow import BALLOT_FUNCTIONS
from rocmlint.cpp.full_masks import FULL_MASK_32
WAVE32_ONLY = frozenset({32})  # the sizes of a branch chosen for 32-lane waves
from rocmlint.model import Applicability, Edit, Span
from rocmlint.rule import Example, Rule

# CUDA *_sync intrinsics and the HIP non-sync ones that exist from HIP 5 to 7.
NON_SYNC = {
    "__shfl_sync": "__shfl", "__shfl_up_sync": "__shfl_up", "__shfl_down_sync": "__shfl_down",
    "__shfl_xor_sync": "__shfl_xor", "__ballot_sync": "__ballot", "__any_sync": "__any",
    "__all_sync": "__all",
}


class WarpMaskLiteral32Bit(Rule):
    """A 32-bit "all lanes" literal is used as a warp mask.

    ## What it does
    Reports `0xffffffff`, `~0u` and macros or constants defined so when they are passed
    as the mask of a `*_sync` intrinsic or compared with a ballot as "every lane voted",
    in files that hold device code (a host function named `*_sync` takes no warp mask).

    ## Why is this bad?
    A wavefront on CDNA has 64 lanes: a 32-bit mask names only half of them. HIP's `*_sync`
    intrinsics static_assert a 64-bit mask type, so the code stops compiling on newer ROCm,
    and a ballot compared with `0xffffffff` is never "all lanes" on wave64.

    ## Example
    ```cpp
    v += __shfl_xor_sync(0xffffffff, v, 1);
    ```
    Use instead (shared file):
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    v += __shfl_xor(v, 1);
    #else
    v += __shfl_xor_sync(0xffffffff, v, 1);
    #endif
    ```

    ## Fix safety
    Safe: a full mask means "every lane of the wave", which the HIP non-sync intrinsics
    (present from HIP 5 to 7) assume; an all-lanes comparison becomes a comparison with
    `__ballot(1)`. The NVIDIA build keeps its lines behind the gate.
    Where the kernel's lane groups disagree and another member still assumes 32 lanes for
    the value the fix changes (a leader chosen by `(threadIdx.x & 31) == 0`, a lane index
    `% 32` read with the mask), the fix alone would leave the kernel compiled but wrong:
    it is offered only together with the group's fix, as unsafe, and its title names the
    members that move with it; where the group has no mechanical fix, it is not offered.
    A width-less broadcast in a kernel built on 32-lane groups (ROC208) gets its width of 32
    in the same fix.

    ## References
    - https://github.com/ROCm/hip/issues/3667
    - https://github.com/ggml-org/llama.cpp/pull/15239
    """

    code = "ROC203"
    name = "warp-mask-literal-32bit"
    language = "cpp"
    message = "32-bit full-warp mask: a wave64 has 64 lanes and HIP's *_sync take a 64-bit mask"
    # The literal (mixed-case hex is not worth a slow prefilter), or a *_sync call whose
    # mask is a name: a FULL_MASK another header defines.
    pattern = (r"\b0[xX](?:ffffffff|FFFFFFFF)[uU]?[lL]{0,2}\b|~0[uU]\b"
               r"|\b__(?:shfl\w*|ballot|any|all|syncwarp|match_\w+|reduce_\w+)_sync\s*\(\s*[A-Za-z_]\w*\s*[,)]"
               r"|\b__syncwarp\s*\(\s*[A-Za-z_]\w*\s*\)")
    # The alternatives without their leading \b: each starts with a literal (see Rule.anchors).
    anchors = (r"0[xX](?:ffffffff|FFFFFFFF)", r"~0[uU]",
               r"__(?:shfl\w*|ballot|any|all|syncwarp|match_\w+|reduce_\w+)_sync\s*\(\s*[A-Za-z_]\w*\s*[,)]",
               r"__syncwarp\s*\(\s*[A-Za-z_]\w*\s*\)")
    fix_applicability = Applicability.SAFE
    wave_size_rule = True
    reference_kernel = "full_wave_mask.hip"

    valid = (
        Example("__device__ unsigned low_word(unsigned long long x) {\n  return x & 0xffffffffu;\n}\n"),
        Example(
            "#ifdef __HIP_DEVICE_COMPILE__\n"
            "#define FULL_MASK __activemask()\n"
            "#else\n"
            "#define FULL_MASK 0xffffffffu\n"
            "#endif\n"
            "__device__ float pair_sum(float v) {\n"
            "  return v + __shfl_xor_sync(FULL_MASK, v, 1);\n"
            "}\n"
        ),
        Example(
            "#define FULL_MASK 0xffffffff\n"
            "__device__ float sum(float v) {\n"
            "#ifndef USE_ROCM\n"
            "  v += __shfl_xor_sync(FULL_MASK, v, 1);\n"
            "#endif\n"
            "  return v;\n"
            "}\n"
        ),
    )
    invalid = (
        Example(
            "#define FULL_MASK 0xffffffff\n"
            "__device__ float pair_sum(float v) {\n"
            "  v += __shfl_xor_sync(FULL_MASK, v, 1);\n"
            "  return v;\n"
            "}\n",
            expected=(
                "#define FULL_MASK 0xffffffff\n"
                "__device__ float pair_sum(float v) {\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "  v += __shfl_xor(v, 1);\n"
                "#else\n"
                "  v += __shfl_xor_sync(FULL_MASK, v, 1);\n"
                "#endif\n"
                "  return v;\n"
                "}\n"
            ),
        ),
        Example(
            "#include <hip/hip_runtime.h>\n"
            "__device__ bool all_set(bool p) {\n"
            "  return __ballot(p) == 0xffffffff;\n"
            "}\n",
            expected=(
                "#include <hip/hip_runtime.h>\n"
                "__device__ bool all_set(bool p) {\n"
                "  return __ballot(p) == __ballot(1);\n"
                "}\n"
            ),
            filename="example.hip",
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.dataflow import call_arguments, callee_name, flow_for
        from rocmlint.fixers.lane_group_fix import wave_safe_fix

        if b"_sync" not in ctx.source and not any(name.encode() in ctx.source for name in BALLOT_FUNCTIONS):
            return  # a mask reported reaches a *_sync call or meets a ballot: neither here (and no parse)
        from rocmlint.cpp.device_code import has_device_code

        if not has_device_code(ctx):
            return  # host code: a `*_sync(0xffffffff, ...)` there is no warp operation
        for hit in ctx.amd_hits():  # a mask defined in an NVIDIA-only branch is not AMD's
            line = ctx.line_of(hit.start)
            if ctx.source.startswith(b"__", hit.start):
                uses, origin = self._header_mask_uses(ctx, hit)
            else:
                uses, origin = self._mask_uses(ctx, hit, line)
            for use in uses:
                parent = use.parent
                while parent is not None and parent.type == "parenthesized_expression":
                    use, parent = parent, parent.parent
                if parent is not None and parent.type == "argument_list":
                    call = parent.parent
                    name = callee_name(ctx, call)
                    args = call_arguments(call)
                    if not (name.endswith("_sync") or name == "__syncwarp") or not args or args[0] != use:
                        sync = _mask_parameter_reaches_sync(ctx, name, args.index(use)) if use in args else None
                        if sync is not None:  # a helper's parameter that is a *_sync call's mask
                            ctx.report(ctx.node_span(use), f"32-bit mask {origin} passed to `{name}` becomes the mask "
                                       f"of `{sync}` there: HIP's *_sync take a 64-bit mask and a wave64 has 64 lanes")
                        continue
                    shim = ctx.model.shim(name) if ctx.model is not None else None
                    if shim is not None and shim.drops(0) or _wrapper_drops_mask(ctx, name):
                        continue  # the project's AMD shim drops the mask: it never reaches HIP
                    fix = None
                    if name in NON_SYNC and len(args) > 1:
                        # the name and the mask with its comma: a group's width edit fits beside them
                        fix = wave_safe_fix(ctx, call, [Edit(ctx.node_span(call.child_by_field_name("function")),
                                                             NON_SYNC[name]),
                                                        Edit(Span(args[0].start_byte, args[1].start_byte), "")],
                                            f"use {NON_SYNC[name]}")
                    elif name == "__syncwarp":
                        fix = wave_safe_fix(ctx, call, [Edit(ctx.node_span(call), "__builtin_amdgcn_wave_barrier()")],
                                            "use a wave barrier")
                    if re.search(r"\b(?:0[xX][0-9a-fA-F]+|\d+)[uU]?[lL]{2}\b", origin):  # 0xffffffffull: compiles, names half the wave
                        message = (f"mask {origin} passed to `{name}` names lanes 0-31 only: on a 64-lane "
                                   "wavefront lanes 32-63 call it outside their own mask (HIP traps in debug builds)")
                    else:
                        message = (f"32-bit mask {origin} passed to `{name}`: HIP's *_sync take a 64-bit mask and "
                                   "a wave64 has 64 lanes")
                    ctx.report(ctx.node_span(use), message, fix)
                elif parent is not None and parent.type == "binary_expression" and \
                        ctx.node_text(parent.child_by_field_name("operator")) in ("==", "!="):
                    other = parent.child_by_field_name("left")
                    if other == use:
                        other = parent.child_by_field_name("right")
                    source = flow_for(ctx, use).mask_source(other)
                    if source is None:
                        continue
                    fix = wave_safe_fix(ctx, use, [Edit(ctx.node_span(use), "__ballot(1)")],
                                        "compare with the active lanes")
                    ctx.report(ctx.node_span(use), f"ballot mask from {source.describe()} compared with 32-bit "
                               f"{origin} as \"all lanes\": never true on a full wave64", fix)

    @staticmethod
    def _header_mask_uses(ctx, hit):
        """The mask name of a *_sync call when another file defines it as a 32-bit full
        mask (this file's own definitions are found from their literal)."""
        from rocmlint.cpp.lane_constants import constant_value

        m = re.search(rb"\(\s*([A-Za-z_]\w*)", ctx.source[hit.start:hit.end])
        if m is None or not ctx.in_code(hit.start):
            return [], ""
        name = m.group(1).decode()
        own = re.search(rb"(?:#\s*define\s+|\bconst\w*\b[^;{}()=]*\b)" + m.group(1) + rb"\b", ctx.source)
        value = None if own is not None else constant_value(ctx, name)
        if value is None or not FULL_MASK_32.fullmatch(value) or _defined_for_wave32_only(ctx, name):
            return [], ""
        start = hit.start + m.start(1)
        node = ctx.root.named_descendant_for_byte_range(start, start + len(name))
        if node is None or node.type != "identifier":
            return [], ""
        return [node], f"`{name}` (= `{value}` in an included header)"

    @staticmethod
    def _mask_uses(ctx, hit, line):
        """Nodes that carry the literal: itself, or uses of the macro / constant it defines."""
        defines = [name for name, defs in ctx.pp.defines.items() for l, _ in defs if l == line]
        literal = ctx.source[hit.start : hit.end].decode()
        if defines:
            name = defines[0]
            if ctx.pp.wave_sizes_at(line) == WAVE32_ONLY:
                return [], ""  # the definition a 32-lane wave gets: every lane it has
            return [n for n in ctx.identifiers(ctx.root, name) if n.parent is not None
                    and n.parent.type != "preproc_def"], f"`{name}` (`#define {name} {literal}`, line {line + 1})"
        node = ctx.node_at(hit)
        if node is None:
            return [], ""
        while node.parent is not None and node.parent.type == "unary_expression":
            node = node.parent
        declarator = node.parent
        if declarator is not None and declarator.type == "init_declarator":
            name_node = declarator.child_by_field_name("declarator")
            declaration = declarator.parent
            if name_node is not None and name_node.type == "identifier" and declaration is not None:
                name = ctx.node_text(name_node)
                scope = ctx.scope_of(declaration) if declaration.parent.type != "translation_unit" else ctx.root
                # a const, or a local the function never assigns again: the mask it holds is the literal
                if "const" in ctx.node_text(declaration).split("=")[0] or not _reassigned(ctx, scope, name):
                    return [n for n in ctx.identifiers(scope, name) if n != name_node], \
                        f"`{name}` (= `{literal}`, line {line + 1})"
        return [node], f"`{literal}`"


def _mask_parameter_reaches_sync(ctx, callee: str, index: int) -> str | None:
    """The ``*_sync`` call that a function of this file hands its parameter ``index`` to as the
    mask (``warp_reduce(v, 0xffffffff)`` with ``__shfl_xor_sync(mask, v, o)`` inside)."""
    from rocmlint.cpp.dataflow import (call_arguments, callee_name, declared_identifier, function_declarator,
                                       parameter_declarations)
    from rocmlint.cpp.lane_extraction import function_name

    if not callee or not re.fullmatch(r"[A-Za-z_]\w*", callee) or callee.encode() + b"(" not in ctx.source:
        return None
    for function in ctx.descendants(ctx.root, {"function_definition"}):
        if function_name(ctx, function) != callee:
            continue
        declarator = function_declarator(function)
        parameters = list(parameter_declarations(declarator)) if declarator is not None else []
        if index >= len(parameters):
            return None
        name_node = declared_identifier(parameters[index].child_by_field_name("declarator"))
        if name_node is None:
            return None
        parameter = ctx.node_text(name_node)
        for call in ctx.descendants(function, {"call_expression"}):
            inner = callee_name(ctx, call)
            args = call_arguments(call)
            if inner.endswith("_sync") and args and ctx.node_text(args[0]).strip() == parameter:
                return inner
    return None


def _reassigned(ctx, scope, name: str) -> bool:
    """Whether ``name`` is written again in ``scope`` after its declaration (``=``, ``|=``,
    ``++``, or its address taken)."""
    text = ctx.source[scope.start_byte:scope.end_byte]
    word = re.escape(name.encode())
    writes = re.findall(rb"(?:\b" + word + rb"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*" + word + rb"\b|\b" + word +
                        rb"\s*(?:\+\+|--)|&\s*" + word + rb"\b)", text)
    return len(writes) > 1  # the declaration's own `=` is one


def _defined_for_wave32_only(ctx, name: str) -> bool:
    """Every 32-bit full-mask definition of ``name`` in the headers this file includes sits
    in a branch a wave-size chain selects for 32-lane waves only (its 64-lane twin is wider)."""
    from rocmlint.cpp.lane_includes import included_files

    sizes = []
    for included in included_files(ctx):
        for line, value in included.ctx.pp.defines.get(name, ()):
            if FULL_MASK_32.fullmatch(value.strip()) and not included.ctx.pp.nvidia_only(line):
                sizes.append(included.ctx.pp.wave_sizes_at(line))
    return bool(sizes) and all(s == WAVE32_ONLY for s in sizes)


def _wrapper_drops_mask(ctx, name: str) -> bool:
    """``#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)`` in this file or a
    header it includes, outside NVIDIA-only code: the mask never reaches HIP."""
    from rocmlint.cpp.lane_includes import shuffle_wrappers

    wrapper = shuffle_wrappers(ctx).get(name)
    return wrapper is not None and wrapper.drops(0)
