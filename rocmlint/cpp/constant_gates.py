"""C++ ``if constexpr`` / ``if`` on constants the AMD build fixes (filled in below)."""
from __future__ import annotations


def nvidia_only_lines(ctx) -> set[int]:
    return set()
