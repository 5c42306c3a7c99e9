"""NVIDIA machinery with nothing on AMD to map to (ROC307, `rocmlint report`): a file built on it
is rewritten for AMD, not ported line by line. One table: each blocker's label, what a porter
reads in its place on AMD, and the spellings that show it (in code and in inline assembly's
strings; comments do not count, nor code only the NVIDIA build compiles)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..lazy_re import lazy_compile

if TYPE_CHECKING:
    from .context import CppContext


@dataclass(frozen=True)
class Blocker:
    label: str
    instead: str        # what an AMD version is built on
    anchors: tuple[bytes, ...]  # the literal start of each spelling (found by one automaton pass)
    spelling: "re.Pattern[bytes]"  # the spellings, matched where an anchor is found
    # counts only inside a device function (`__device__`/`__global__`): the same names on the
    # host (NVSHMEM's host API, its header) are a library swap, ROC305's line findings
    device_only: bool = False


def _blocker(label: str, instead: str, *anchors: str, tail: bytes = rb"\w*\b", device_only: bool = False) -> Blocker:
    """Spellings that are an anchor followed by ``tail`` (the rest of a name, by default)."""
    encoded = tuple(a.encode() for a in anchors)
    return Blocker(label, instead, encoded,
                   lazy_compile(b"(?:" + b"|".join(re.escape(a) for a in encoded) + b")" + tail), device_only)


BLOCKERS = (
    _blocker("a CUTLASS 3 collective mainloop", "a CK (composable_kernel) or hipBLASLt kernel",
             "CollectiveMma", "CollectiveBuilder", "CollectiveEpilogue", "KernelTmaWarpSpecialized", "MainloopSm90",
             "MainloopSm100", "cutlass::gemm::collective"),
    _blocker("TMA descriptors and bulk tensor copies", "buffer loads into LDS",
             "CUtensorMap", "cuTensorMapEncode", "make_tma_copy", "make_tma_atom", "SM90_TMA_", "SM100_TMA_",
             "TmaDescriptor", "cp.async.bulk.tensor", "prefetch.tensormap", tail=b""),
    _blocker("tensor memory and tcgen05 (Blackwell)", "MFMA/WMMA with accumulators in registers",
             "tcgen05", "tmem_", "TMEM_", "SM100_MMA_", "UMMA::"),
    _blocker("wgmma (Hopper warpgroup MMA)", "MFMA (CDNA) or WMMA (RDNA) through rocWMMA or CK",
             "wgmma", "SM90_64x", "GMMA::", "warpgroup_arrive", "warpgroup_wait", "warpgroup_commit_batch"),
    # (a cluster launch attribute set on the host is not one: dropped on AMD, ROC305 says so)
    _blocker("thread-block clusters and distributed shared memory", "global memory between blocks (AMD has no clusters)",
             "__cluster_dims__", "cluster_ctarank", "block_rank_in_cluster", "cluster_sync",
             "this_cluster", "mapa.shared::cluster", "barrier.cluster", tail=b""),
    _blocker("the NVSHMEM device API", "rocSHMEM (roc_shmem_*)", "nvshmem_", "nvshmemx_", "nvshmemi_",
             tail=rb"\w*\s*\(", device_only=True),
)
MAX_SITES = 64  # occurrences of a blocker looked at: enough for the first lines of a message


@dataclass(frozen=True)
class Found:
    blocker: Blocker
    lines: tuple[int, ...]  # 1-based


MAX_LINES = 9  # more than any message shows: a CUTLASS header names a blocker thousands of times


@lru_cache(maxsize=1)
def _automaton():
    """Every blocker's anchors in one automaton: one pass over a file finds them all."""
    from ahocorasick_rs import BytesAhoCorasick, Implementation

    owners = [index for index, blocker in enumerate(BLOCKERS) for _anchor in blocker.anchors]
    anchors = [anchor for blocker in BLOCKERS for anchor in blocker.anchors]
    return BytesAhoCorasick(anchors, implementation=Implementation.DFA), owners


def rewrite_blockers(ctx: "CppContext") -> list[Found]:
    """The blockers the AMD view of the file uses, with their first lines, in table order."""
    source = ctx.source
    automaton, owners = _automaton()
    sites: list[list[int]] = [[] for _ in BLOCKERS]
    for index, at, _end in automaton.find_matches_as_indexes(source, overlapping=True):
        owned = sites[owners[index]]
        if len(owned) < MAX_SITES:
            owned.append(at)
    found = []
    for blocker, starts in zip(BLOCKERS, sites):
        lines: list[int] = []
        for at in starts:
            if at and (source[at - 1:at].isalnum() or source[at - 1] == 0x5F) and source[at] not in b".#_":
                continue  # inside a longer name (`xtmem_`), not the blocker's
            line = ctx.line_of(at) + 1
            if lines and lines[-1] == line or not blocker.spelling.match(source, at) or ctx.in_comment(at) \
                    or ctx.nvidia_only(at):
                continue
            if blocker.device_only and not in_device_function(ctx, at):
                continue
            lines.append(line)
            if len(lines) >= MAX_LINES:
                break
        if lines:
            found.append(Found(blocker, tuple(lines)))
    return found


_FUNCTIONS = frozenset({"function_definition", "lambda_expression"})
_DEVICE_QUALIFIER = lazy_compile(rb"__device__|__global__|\b(?:\w+_)?DEVICE(?:_\w+)?\b")


def in_device_function(ctx: "CppContext", at: int) -> bool:
    """The offset lies in a function or lambda declared ``__device__``/``__global__`` (or a
    qualifier macro named so: ``CUTLASS_DEVICE``, ``DEVICE_INLINE``); parses the file (asked
    only for a device-only blocker's sites)."""
    node = ctx.root.named_descendant_for_byte_range(at, at + 1)
    while node is not None:
        if node.type in _FUNCTIONS:
            body = node.child_by_field_name("body")
            head_end = body.start_byte if body is not None else node.end_byte
            start = node.parent.start_byte if node.parent is not None and node.parent.type == "template_declaration" \
                else node.start_byte
            if _DEVICE_QUALIFIER.search(ctx.source, start, head_end):
                return True
        node = node.parent
    return False


def describe(found: list[Found], most: int = 4) -> str:
    """`wgmma (Hopper warpgroup MMA) (lines 40, 77), ...`"""
    parts = []
    for item in found:
        shown = ", ".join(str(n) for n in item.lines[:most]) + (", ..." if len(item.lines) > most else "")
        parts.append(f"{item.blocker.label} (line{'s' if len(item.lines) > 1 else ''} {shown})")
    return "; ".join(parts)
