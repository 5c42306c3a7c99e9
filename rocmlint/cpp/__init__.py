"""The C++/CUDA/HIP half: tree-sitter parsing, #if gate context, NVIDIA view."""
from __future__ import annotations

from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from ..config import Settings
    from .context import CppContext


class CppLanguage:
    name = "cpp"

    def make_context(self, path: str, source: bytes, settings: "Settings", anchors=()) -> "CppContext":
        # tree-sitter always yields a tree (ERROR nodes included): rules work on what parsed.
        from .context import CppContext

        return CppContext(path, source, settings)

    def syntax_errors(self, source: bytes, path: str) -> int:
        from .treesitter import count_errors, parse

        return count_errors(parse(source, path).root_node)

    def new_syntax_errors(self, original: bytes, fixed: bytes, path: str, settings: "Settings") -> int:
        """Syntax errors a fix adds, counted in each build's view of the file. A gated fix
        copies lines into both branches: a line tree-sitter could not parse before
        (``CUTLASS_PRAGMA_UNROLL`` before a ``for``) fails in both copies, yet each build
        sees it once. Views: the AMD build on wave64 and on wave32 targets, the NVIDIA build."""
        from .markers import WAVE64_MACRO
        from .treesitter import count_errors, parse
        from .unifdef import undefine

        def views(data: bytes) -> list[bytes]:
            amd = undefine(data, settings.gate_macro, defined=True)
            return [undefine(amd, WAVE64_MACRO, defined=True), undefine(amd, WAVE64_MACRO),
                    undefine(data, settings.gate_macro)]

        added = 0
        for before, after in zip(views(original), views(fixed)):
            added = max(added, count_errors(parse(after, path).root_node) - count_errors(parse(before, path).root_node))
        return added

    def nvidia_view(self, source: bytes, path: str, settings: "Settings") -> bytes:
        """``unifdef -U<gate macro>``: a gated fix must leave it byte for byte unchanged.
        Files fixed without a gate (HIP-only, or ``gate = "never"``) have no NVIDIA build:
        their view is empty."""
        from .context import is_hip_only, uses_gate
        from .preprocessor import conditionals
        from .unifdef import undefine

        pp = conditionals(source, settings.all_rocm_macros, settings.all_nvidia_macros, settings.gate_macro)
        if not uses_gate(settings, is_hip_only(path, source, pp)):
            return b""
        return undefine(source, settings.gate_macro)


LANGUAGE = CppLanguage()
