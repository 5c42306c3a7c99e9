"""Inline PTX: reading ``asm`` statements and the idioms with a HIP equivalent (ROC301)."""
from __future__ import annotations

import re

PTX_MARKER = re.compile(r"%%\w+|\b(?:mov|ld|st|shfl|prmt|membar|bar|vote|cvt|mma|cp|red|atom|add|mul|fma|"
                        r"setp|selp|lop3|ldmatrix|wgmma|fence|activemask)\.\w+|\bmembar\b|\.reg\b")
# (template regex, HIP statement with {N} = operand N); operands number outputs first.
IDIOMS = (
    (re.compile(r"^mov\.u32 %0, ?%%laneid;?$"), "{0} = __lane_id();", "%laneid"),
    (re.compile(r"^ld\.global\.nc\.\w+ %0, ?\[%1\];?$"), "{0} = __ldg({1});", "ld.global.nc"),
    (re.compile(r"^prmt\.b32 %0, ?%1, ?%2, ?%3;?$"), "{0} = __byte_perm({1}, {2}, {3});", "prmt.b32"),
    (re.compile(r"^shfl\.sync\.bfly\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl_xor({1}, {2});", "shfl.sync.bfly"),
    (re.compile(r"^shfl\.sync\.down\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl_down({1}, {2});", "shfl.sync.down"),
    (re.compile(r"^shfl\.sync\.up\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl_up({1}, {2});", "shfl.sync.up"),
    (re.compile(r"^shfl\.sync\.idx\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl({1}, {2});", "shfl.sync.idx"),
    (re.compile(r"^membar\.gl;?$"), "__threadfence();", "membar.gl"),
    (re.compile(r"^bar\.sync 0;?$"), "__syncthreads();", "bar.sync 0"),
)


def asm_template(ctx, asm) -> str:
    """The assembly text of a ``gnu_asm_expression`` (adjacent literals concatenated)."""
    code = asm.child_by_field_name("assembly_code")
    if code is None:
        return ""
    parts = [ctx.node_text(n) for n in ctx.descendants(code, {"string_content", "escape_sequence"})]
    text = "".join(parts).replace("\\n", " ").replace("\\t", " ")
    return " ".join(text.split())


def asm_operands(ctx, asm) -> list[str]:
    """Operand expressions in PTX numbering: outputs, then inputs."""
    out = []
    for field in ("output_operands", "input_operands"):
        operands = asm.child_by_field_name(field)
        if operands is None:
            continue
        for operand in operands.named_children:
            value = operand.child_by_field_name("value")
            if value is not None:
                out.append(ctx.node_text(value))
    return out


def hip_equivalent(ctx, asm) -> tuple[str, str] | None:
    """(HIP statement, idiom name) for a known PTX idiom, else None."""
    template = asm_template(ctx, asm)
    operands = asm_operands(ctx, asm)
    for regex, replacement, idiom in IDIOMS:
        if regex.match(template):
            try:
                return replacement.format(*operands), idiom
            except IndexError:
                return None
    return None
