"""What a constant equal to 32 stands for, by its name, and which of its uses host code reads.

A 32 may be the warp size (``kWarpSize``, ``WS``), or a tile or data size (``M_Warp_Tile``,
``threads_per_row``): ``name_says`` reads the name. How each use serves a lane group is the
lane-group model's business (``lanegroups.py``); this module says where host code reads a
name (a launch configuration, a host or ``__host__ __device__`` function, or a file-scope
constant derived from it that such code reads), so that no fix hands the host a value only
the device pass has.
"""
from __future__ import annotations

import re

from ..lazy_re import lazy_compile

_WORD = lazy_compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# Name words that make a 32 a warp size, and those that make it a tile, data or word size.
WARP_WORDS = frozenset({"warp", "wave", "wavefront", "ws", "kws", "simd", "warpsize", "wavesize",
                        "wavefrontsize"})
LANE_WORDS = frozenset({"lanes", "threads", "thread", "lane"})
DATA_WORDS = frozenset({
    "tile", "tiles", "rows", "row", "cols", "col", "columns", "elems", "elements", "elem", "items", "item",
    "bytes", "byte", "bits", "bit", "words", "word", "vec", "vector", "block", "blocks", "chunk", "chunks",
    "shape", "iter", "iters", "iterations", "stages", "stage", "repeat", "repeats", "num", "count", "warps",
    "waves", "groups", "group", "dim", "mma", "mfma", "wmma", "gemm", "load", "loads", "store", "buffer",
    "smem", "regs", "align", "alignment", "pack", "packed", "sizeof", "log", "log2", "shift", "mask",
    "i", "j", "k", "m", "n", "x", "y", "z",  # tile and matrix dimensions
})
# Words of a tile or matrix dimension (``I == 32`` in ``if constexpr`` picks a 32-wide tile).
TILE_WORDS = frozenset({"tile", "tiles", "rows", "row", "cols", "col", "columns", "dim", "shape", "mma", "mfma",
                        "wmma", "i", "j", "k", "m", "n"})
_COUNT_PREFIXES = frozenset({"num", "n", "max", "total"})  # NumThreadsPerWarp: threads per warp
_DEVICE_ONLY = lazy_compile(r"\b__global__\b|\b__device__\b")
_HOST = lazy_compile(r"\b__host__\b")
_DEVICE_MACRO = lazy_compile(r"\b[A-Z0-9_]*DEVICE[A-Z0-9_]*\b")
_HOST_MACRO = lazy_compile(r"\b[A-Z0-9_]*HOST[A-Z0-9_]*\b")


def name_words(name: str) -> list[str]:
    """``M_Warp_Tile`` -> [m, warp, tile]; ``kWarpSize`` -> [k, warp, size] (a leading
    lower-case ``k`` is a constant prefix, dropped)."""
    words = [w for part in name.split("_") for w in _WORD.findall(part)]
    if len(words) > 1 and words[0] == "k":
        words = words[1:]
    return [w.lower() for w in words]


def names_tile_dimension(name: str) -> bool:
    return bool(set(name_words(name)) & TILE_WORDS)


def name_says(name: str) -> str | None:
    """``"warp"`` when the name means the warp size, ``"data"`` when it names a tile, data
    or word size (or a count of warps), None when it says neither."""
    words = name_words(name)
    if not words:
        return None
    if "per" in words:  # threads per warp is the warp size; elements per warp, threads per row are not
        at = words.index("per")
        before, after = set(words[:at]) - _COUNT_PREFIXES, set(words[at + 1:])
        if after & WARP_WORDS and not after & DATA_WORDS and before and before <= LANE_WORDS:
            return "warp"
        return "data"
    if set(words) & DATA_WORDS:
        return "data"
    if set(words) & WARP_WORDS or words == ["lanes"]:
        return "warp"
    return None


def host_uses(ctx, name: str, definition_line: int, _depth: int = 0) -> list:
    """The uses of ``name`` the AMD build compiles that host code reads (the definition
    line excluded), in file order."""
    key = ("host-uses", name, definition_line, _depth)  # a deeper query follows fewer derived names
    cached = ctx.cache.get(key)
    if cached is not None:
        return cached
    uses = [use for use in ctx.identifiers(ctx.root, name)
            if ctx.line_of(use.start_byte) != definition_line and not ctx.pp.nvidia_only(ctx.line_of(use.start_byte))
            and reads_on_host(ctx, use, _depth)]
    ctx.cache[key] = uses
    return uses


def function_side(ctx, node) -> str | None:
    """``"device"``, ``"host"`` or ``"both"`` for the function around ``node``; None at
    file, namespace or class scope. Specifier macros are expanded when this file defines
    them, else judged by their names (``DEVICE_INLINE``, ``C10_HOST_DEVICE``)."""
    function = ctx.ancestor(node, {"function_definition"}) if node.type != "function_definition" else node
    while function is not None:
        declarator = function.child_by_field_name("declarator")
        head = ctx.source[function.start_byte : declarator.start_byte if declarator is not None
                          else function.start_byte].decode("utf-8", "replace")
        head = " ".join(ctx.macro_value(word) or word for word in re.findall(r"\w+", head))
        # specifier macros are upper case (`DEVICE_INLINE`, `C10_HOST_DEVICE`); a return type
        # named `DeviceBuffer` says nothing
        device = _DEVICE_ONLY.search(head) is not None or _DEVICE_MACRO.search(head) is not None
        host = _HOST.search(head) is not None or _HOST_MACRO.search(head) is not None
        if device:
            return "both" if host else "device"
        # a lambda or local class inside a device function is device code too
        outer = ctx.ancestor(function, {"function_definition"})
        if outer is None:
            return "host"
        function = outer
    return None


def reads_on_host(ctx, use, depth: int = 0) -> bool:
    """Whether host code reads this use: a launch configuration, a host function, or a
    file-scope constant initialised from it that host code reads."""
    if ctx.ancestor(use, {"kernel_call_syntax"}) is not None:
        return True
    side = function_side(ctx, use)
    if side in ("host", "both"):
        return True
    if side is None and depth < 2:
        declarator = ctx.ancestor(use, {"init_declarator"})
        if declarator is not None:
            derived = declarator.child_by_field_name("declarator")
            if derived is not None and derived.type == "identifier":
                return bool(host_uses(ctx, ctx.node_text(derived), ctx.line_of(derived.start_byte), depth + 1))
    return False
