from __future__ import annotations

from rocmlint.model import Applicability, Edit
from rocmlint.rule import Example, Rule


class InlinePtx(Rule):
    """Inline PTX assembly is reachable in the AMD build.

    ## What it does
    Reports `asm` / `asm volatile` / `__asm__` statements with PTX that the ROCm build
    compiles (not under `#if __CUDA_ARCH__`, `#ifndef USE_ROCM` or the `#else` of a HIP
    gate). Known idioms get a HIP replacement: `%laneid` → `__lane_id()`, `ld.global.nc` →
    `__ldg`, `shfl.sync.*` → `__shfl_*`, `prmt.b32` → `__byte_perm`, `membar.gl` →
    `__threadfence()`, `bar.sync 0` → `__syncthreads()`.

    ## Why is this bad?
    AMD GPUs do not run PTX; hipify leaves inline assembly alone, so the port fails to
    compile (or, behind a wrong guard, silently takes a slow path).

    ## Example
    ```cpp
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    ```
    Use instead (shared file):
    ```cpp
    #if defined(__HIP_PLATFORM_AMD__)
    lane = __lane_id();
    #else
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    #endif
    ```

    ## Fix safety
    Unsafe: the replacements are the documented HIP equivalents, but memory-ordering and
    cache-hint semantics of PTX do not map one to one. Other PTX is reported without a fix.

    ## References
    - https://github.com/ROCm/HIPIFY/issues/731
    """

    code = "ROC301"
    name = "inline-ptx"
    language = "cpp"
    message = "inline PTX assembly reachable in the AMD build: AMD GPUs do not run PTX"
    pattern = r"\b(?:asm|__asm__|__asm)\b\s*(?:volatile|__volatile__)?\s*\("
    anchors = (r"asm\b\s*(?:volatile|__volatile__)?\s*\(", r"__asm(?:__)?\b\s*(?:volatile|__volatile__)?\s*\(")  # fast
    fix_applicability = Applicability.UNSAFE
    reference_kernel = "ptx_idioms.hip"

    valid = (
        Example(
            "__device__ unsigned lane_id() {\n"
            "  unsigned lane = 0;\n"
            "#if defined(__CUDA_ARCH__)\n"
            "  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
            "#endif\n"
            "  return lane;\n"
            "}\n"
        ),
    )
    invalid = (
        Example(
            "__device__ unsigned lane_id() {\n"
            "  unsigned lane;\n"
            "  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
            "  return lane;\n"
            "}\n",
            expected=(
                "__device__ unsigned lane_id() {\n"
                "  unsigned lane;\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "  lane = __lane_id();\n"
                "#else\n"
                "  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
                "#endif\n"
                "  return lane;\n"
                "}\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, ctx) -> None:
        from rocmlint.cpp.ptx import hip_equivalent, is_ptx, read_asm
        from rocmlint.fixers.cpp_gate import build_fix

        covered = -1  # end of the last asm statement read: one finding per statement
        for hit in ctx.hits():
            if hit.start < covered or not ctx.in_code(hit.start):
                continue
            asm = read_asm(ctx.source, hit.start)
            # PTX first, from the text: reach builds the file's gate tables (x86 asm needs none)
            if asm is None or not is_ptx(asm.template) or ctx.nvidia_only(hit.start):
                continue
            covered = asm.span.end
            replacement = hip_equivalent(asm) if asm.closed else None
            fix = None
            if replacement is not None:  # the only place ROC301 needs the tree
                statement = self._statement(ctx, asm)
                if statement is not None:
                    fix = build_fix(ctx, statement, [Edit(ctx.node_span(statement), replacement[0])],
                                    f"replace PTX {replacement[1]} with its HIP equivalent", Applicability.UNSAFE)
            message = self.message if replacement is None else \
                f"inline PTX `{replacement[1]}` reachable in the AMD build: use `{replacement[0]}`"
            ctx.report(asm.span, message, fix)

    @staticmethod
    def _statement(ctx, asm):
        """The expression statement that is exactly this asm statement, or None."""
        node = ctx.node_at(asm.span)
        while node is not None and node.type != "gnu_asm_expression":
            node = node.parent
        statement = node.parent if node is not None else None
        if statement is None or statement.type != "expression_statement" or node.start_byte != asm.span.start:
            return None
        return statement
