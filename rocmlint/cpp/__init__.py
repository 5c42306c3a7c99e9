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
