"""What a constant equal to 32 stands for, judged by its name and by each of its uses.

A 32 may be the warp size, a tile or data size (``M_Warp_Tile``, ``threads_per_row``), or
the bits of a word (``1 << (WS - 1)``). Each use of the name in the AMD build is classed:

- ``lane``: lane/warp arithmetic (``threadIdx.x % WS``, ``i += WS``, a shuffle width);
- ``word``: a shift amount (``1 << (WS - 1)``, ``(1 << (WS / 2)) - 1``);
- ``host``: read by host code (a launch configuration, a host or ``__host__ __device__``
  function, or a file-scope constant derived from it that such code reads);
- ``other``: anything else (array bounds, loop bounds of data).

Fixes follow from the classes: a value host code reads never depends on a device-only
macro, and a constant with lane and word uses is split, never redefined.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .dataflow import flow_for

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
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
WARP_COMMENT = re.compile(r"(?i)//.*\b(?:warp|wave|lanes?)\b|/\*.*\b(?:warp|wave|lanes?)\b")
_SHIFTS = frozenset({"<<", ">>", "<<=", ">>="})
_LANE_OPERATORS = frozenset({"%", "/", "&"})
_LOOP_COMPARE = frozenset({"<", "<=", "!=", ">", ">="})
_DEVICE_ONLY = re.compile(r"\b__global__\b|\b__device__\b")
_HOST = re.compile(r"\b__host__\b")
_DEVICE_MACRO = re.compile(r"\b[A-Z0-9_]*DEVICE[A-Z0-9_]*\b")
_HOST_MACRO = re.compile(r"\b[A-Z0-9_]*HOST[A-Z0-9_]*\b")


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


@dataclass
class ConstantUses:
    lane: list = field(default_factory=list)
    word: list = field(default_factory=list)
    host: list = field(default_factory=list)
    other: list = field(default_factory=list)

    def first_host_line(self, ctx) -> int:
        return ctx.line_no(self.host[0])


def constant_uses(ctx, name: str, definition_line: int, _depth: int = 0) -> ConstantUses:
    """The uses of ``name`` the AMD build compiles (the definition line excluded), classed."""
    key = ("constant-uses", name, definition_line, _depth)  # a deeper query follows fewer derived names
    cached = ctx.cache.get(key)
    if cached is not None:
        return cached
    uses = ConstantUses()
    for use in ctx.identifiers(ctx.root, name):
        line = ctx.line_of(use.start_byte)
        if line == definition_line or ctx.pp.nvidia_only(line):
            continue
        kind = classify_use(ctx, use, _depth)
        getattr(uses, kind).append(use)
    ctx.cache[key] = uses
    return uses


def classify_use(ctx, use, depth: int = 0) -> str:
    if reads_on_host(ctx, use, depth):
        return "host"
    role = _role(use)
    parent = role.parent
    if parent is None:
        return "other"
    if parent.type == "argument_list" and parent.parent is not None:
        from .wavesize import shuffle_operands

        return "lane" if shuffle_operands(ctx, parent.parent) is not None else "other"
    if parent.type not in ("binary_expression", "assignment_expression"):
        return "other"
    operator = ctx.node_text(parent.child_by_field_name("operator"))
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    if operator in _SHIFTS:
        return "word" if right == role else "other"
    if right != role:
        return "other"
    flow = flow_for(ctx, use)
    if operator in _LANE_OPERATORS and flow.holds_index(left):
        return "lane"
    if operator == "+=" and _loop_update(ctx, parent):
        return "lane"  # a stride over lanes: for (...; ...; i += WS)
    if operator in _LOOP_COMPARE and _loop_condition(ctx, parent):
        return "lane"  # a loop over the lanes of a warp: for (...; d < WS; ...)
    if operator == "==" and flow.holds_index(left, lane_only=True):
        return "lane"
    return "other"


def _role(use):
    """The expression a use stands in: ``WS`` in ``(WS - 1)`` or ``WS / 2`` is that whole
    expression (an off-by-one or a half is still the same kind of quantity)."""
    node = use
    while node.parent is not None:
        parent = node.parent
        if parent.type == "parenthesized_expression":
            node = parent
            continue
        if parent.type == "binary_expression" and parent.child_by_field_name("left") == node:
            op = parent.child_by_field_name("operator")
            right = parent.child_by_field_name("right")
            if op is not None and op.type in ("-", "/", "+", "*") and right is not None and \
                    right.type == "number_literal":
                node = parent
                continue
        break
    return node


def _loop_update(ctx, node) -> bool:
    loop = ctx.ancestor(node, {"for_statement"})
    update = loop.child_by_field_name("update") if loop is not None else None
    return update is not None and update.start_byte <= node.start_byte and node.end_byte <= update.end_byte


def _loop_condition(ctx, node) -> bool:
    loop = ctx.ancestor(node, {"for_statement"})
    condition = loop.child_by_field_name("condition") if loop is not None else None
    return condition is not None and condition.start_byte <= node.start_byte and node.end_byte <= condition.end_byte


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
                uses = constant_uses(ctx, ctx.node_text(derived), ctx.line_of(derived.start_byte), depth + 1)
                return bool(uses.host)
    return False


def means_warp_size(ctx, name: str, line: int, uses: ConstantUses) -> bool:
    """Whether a constant equal to 32 stands for the warp size in the AMD build."""
    said = name_says(name)
    if said == "data":
        return False
    if said == "warp" or WARP_COMMENT.search(ctx.lines.line_text(line)):
        # a warp-named constant whose every use counts bits is a word size (also what a
        # split leaves behind)
        return not (uses.word and not uses.lane and not uses.other and not uses.host)
    return bool(uses.lane)
