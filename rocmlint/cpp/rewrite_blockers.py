"""NVIDIA machinery with nothing on AMD to map to (ROC307, `rocmlint report`): a file built on it
is rewritten for AMD, not ported line by line. One table: each blocker's label, what a porter
reads in its place on AMD, and the spellings that show it (in code and in inline assembly's
strings; comments do not count, nor code only the NVIDIA build compiles)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .context import CppContext


@dataclass(frozen=True)
class Blocker:
    label: str
    instead: str        # what an AMD version is built on
    spelling: "re.Pattern[bytes]"


BLOCKERS = (
    Blocker("a CUTLASS 3 collective mainloop", "a CK (composable_kernel) or hipBLASLt kernel",
            re.compile(rb"\b(?:CollectiveMma|CollectiveBuilder|CollectiveEpilogue|KernelTmaWarpSpecialized\w*|"
                       rb"MainloopSm(?:90|100)\w*|cutlass::gemm::collective)\b")),
    Blocker("TMA descriptors and bulk tensor copies", "buffer loads into LDS",
            re.compile(rb"\b(?:CUtensorMap|cuTensorMapEncode\w*|make_tma_copy|make_tma_atom|SM(?:90|100)_TMA_\w+|"
                       rb"TmaDescriptor)\b|cp\.async\.bulk\.tensor|prefetch\.tensormap")),
    Blocker("tensor memory and tcgen05 (Blackwell)", "MFMA/WMMA with accumulators in registers",
            re.compile(rb"\btcgen05\b|\b(?:tmem_\w+|TMEM_\w*|SM100_MMA_\w+|UMMA::\w+)\b")),
    Blocker("wgmma (Hopper warpgroup MMA)", "MFMA (CDNA) or WMMA (RDNA) through rocWMMA or CK",
            re.compile(rb"\bwgmma\b|\b(?:SM90_64x\w+|GMMA::\w+|warpgroup_arrive|warpgroup_wait|warpgroup_commit_batch)\b")),
    Blocker("thread-block clusters and distributed shared memory", "global memory between blocks (AMD has no clusters)",
            re.compile(rb"\b(?:__cluster_dims__|cluster_ctarank|block_rank_in_cluster|cluster_sync|"
                       rb"cudaLaunchAttributeClusterDimension|this_cluster)\b|mapa\.shared::cluster|barrier\.cluster")),
    Blocker("the NVSHMEM device API", "rocSHMEM (roc_shmem_*)",
            re.compile(rb"\bnvshmemx?_\w+\s*\(|#\s*include\s*[<\"]nvshmemx?\.h[>\"]")),
)


@dataclass(frozen=True)
class Found:
    blocker: Blocker
    lines: tuple[int, ...]  # 1-based


def rewrite_blockers(ctx: "CppContext") -> list[Found]:
    """The blockers the AMD view of the file uses, with their lines, in table order."""
    found = []
    for blocker in BLOCKERS:
        lines = sorted({ctx.line_of(m.start()) + 1 for m in blocker.spelling.finditer(ctx.source)
                        if not ctx.in_comment(m.start()) and not ctx.nvidia_only(m.start())})
        if lines:
            found.append(Found(blocker, tuple(lines)))
    return found


def describe(found: list[Found], most: int = 4) -> str:
    """`wgmma (Hopper warpgroup MMA) (lines 40, 77), ...`"""
    parts = []
    for item in found:
        shown = ", ".join(str(n) for n in item.lines[:most]) + (", ..." if len(item.lines) > most else "")
        parts.append(f"{item.blocker.label} (line{'s' if len(item.lines) > 1 else ''} {shown})")
    return "; ".join(parts)
