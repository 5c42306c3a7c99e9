"""CUDA APIs and names that HIP lacks, and their ROCm counterparts: one maintained table, read by
ROC305 (what to report, what to use instead).

Each entry names a CUDA API (a name, or a family of names: ``nvshmem_*``), the regex that finds
it in code, what it is, the ROCm counterpart (None: there is none, the code needs a rewrite for
AMD) and a short note. A counterpart may hold ``{name}`` (the name found) or ``{rest}`` (the name
after the entry's ``prefix``: ``nvshmem_putmem`` -> ``rocshmem_putmem``).

The intrinsics were checked absent, for every argument type, from the HIP headers of HIP 5.2.3
(``/usr/include/hip``, libamdhip64-dev 5.2.3), from clang's HIP wrapper headers (15 and 19:
``__clang_hip_*.h``) and from ROCm/clr's ``hipamd/include`` of 2024-10-22 (ROCm 6.3). Left out
because HIP has them, at least in current releases: ``__ldcs``/``__ldcg``/``__ldca`` (HIP 5.2
defines them for ``__half``/``__half2``), ``__syncwarp``, ``__shfl_*_sync``, ``__reduce_*_sync``
(HIP 6.2/7.0), ``__activemask``, ``__match_any_sync``, ``__hmax_nan``, ``__fns``.
libhipcxx (ROCm's port of libcu++, early access, installed apart from ROCm) keeps the
``cuda::`` and ``cuda::std::`` names and headers; it has no ``cuda::pipeline``, no
``cuda::ceil_div`` (``<cuda/cmath>``), no ``cuda::annotated_ptr`` and no ``cuda::ptx``
(checked in ROCm/libhipcxx of 2025-01-30). rocSHMEM names its API ``rocshmem_*`` since 2.0
(``roc_shmem_*`` before), with work-group (``_wg``) and wavefront (``_wave``) variants where
NVSHMEM has ``_block`` and ``_warp`` ones.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..lazy_re import lazy_compile


@dataclass(frozen=True)
class CudaOnlyApi:
    cuda: str  # the name or family as the table and the docs show it
    # What finds it in code: it starts with a literal character, and so does each of its top-level
    # alternatives (``re`` then skips to those characters: a leading ``\b`` or look-behind is tried
    # at every byte, 3 s a megabyte). ROC305 checks that a match starts a word, and that a
    # ``cuda::`` name is not another namespace's (``at::cuda::``).
    regex: str
    what: str  # what it is
    rocm: str | None  # the ROCm counterpart (markdown; ``{name}``: the name found,
    # ``{rest}``: the name after ``prefix``); None: there is none
    note: str = ""
    prefix: str = ""  # for ``{rest}``
    # "cluster variable": not in the rule's pattern; found on variables that a `this_cluster()`
    # call initialises (``cluster.sync()``), after a hit of this file's cluster entries
    via: str = ""
    # a library swap the file makes once (libhipcxx for `cuda::std::`): its first use is reported
    # with a count of the others, as ROC302 reports CUTLASS, not one finding a line
    once_a_file: bool = False


_ROCSHMEM_NOTE = "rocSHMEM covers part of NVSHMEM's API: check that the name exists"
_LIBHIPCXX = "libhipcxx's `{name}` (ROCm's libcu++: early access, installed apart from ROCm)"
_CLUSTER = "thread-block clusters (sm_90)"
_TMA = "Tensor Memory Accelerator (sm_90)"
_NO_CLUSTERS = "AMD GPUs have no thread-block clusters: use one block, or global memory and a grid sync"
_PLAIN_STORE = "a plain store `*ptr = value` keeps the result; the cache hint has no HIP spelling"

CUDA_ONLY_APIS: tuple[CudaOnlyApi, ...] = (
    # NVSHMEM
    CudaOnlyApi("nvshmem_*", r"nvshmem_\w+", "NVSHMEM API", "rocSHMEM's `rocshmem_{rest}`", _ROCSHMEM_NOTE,
                prefix="nvshmem_"),
    CudaOnlyApi("nvshmemx_*", r"nvshmemx_\w+", "NVSHMEM extended API", "rocSHMEM's `rocshmem_{rest}`",
                _ROCSHMEM_NOTE + "; `_block` is `_wg`, `_warp` is `_wave`", prefix="nvshmemx_"),
    CudaOnlyApi("NVSHMEM_*", r"NVSHMEMX?_[A-Z]\w*", "NVSHMEM constant", "rocSHMEM's `ROCSHMEM_{rest}`",
                _ROCSHMEM_NOTE, prefix="NVSHMEM_"),
    # Hopper's Tensor Memory Accelerator: descriptors and bulk tensor copies
    CudaOnlyApi("CUtensorMap", r"CUtensorMap\w*|CU_TENSOR_MAP_\w+",
                f"TMA descriptor type or constant, {_TMA}", None,
                "AMD GPUs have no TMA: load tiles with ordinary (vectorised) loads"),
    CudaOnlyApi("cuTensorMapEncode*", r"cuTensorMap(?:Encode\w*|ReplaceAddress)\b",
                f"TMA descriptor driver API, {_TMA}", None, "AMD GPUs have no TMA"),
    CudaOnlyApi("cuda::device::experimental::cp_async_bulk_*", r"cp_async_bulk\w*",
                f"bulk (tensor) copies, cp.async.bulk, {_TMA}", None, "AMD GPUs have no bulk asynchronous copies"),
    CudaOnlyApi("cuda::ptx::*", r"cuda::ptx::\w+", "libcu++ PTX instruction wrappers", None,
                "PTX does not run on AMD GPUs"),
    # kernel qualifiers
    CudaOnlyApi("__grid_constant__", r"__grid_constant__\b", "kernel parameter qualifier (sm_70+)", None,
                "HIP has no such qualifier: `#define __grid_constant__` (empty) on AMD, where kernel arguments "
                "are read-only already"),
    # thread-block clusters
    CudaOnlyApi("__cluster_dims__", r"__cluster_dims__\b", f"kernel attribute, {_CLUSTER}", None, _NO_CLUSTERS),
    CudaOnlyApi("cudaLaunchKernelEx", r"cu(?:da)?LaunchKernelExC?\b", "extensible kernel launch",
                "`hipLaunchKernelEx` (HIP 7.0 and later)",
                "older HIP: `hipLaunchKernelGGL`; cluster dimensions have no meaning on AMD"),
    CudaOnlyApi("cudaLaunchAttributeClusterDimension",
                r"cudaLaunchAttributeCluster\w+|CU_LAUNCH_ATTRIBUTE_CLUSTER_\w+|cudaFuncAttribute"
                r"(?:RequiredCluster\w+|NonPortableClusterSizeAllowed|ClusterSchedulingPolicyPreference)\b"
                r"|cudaOccupancyMax(?:ActiveClusters|PotentialClusterSize)\b",
                f"cluster launch attribute, {_CLUSTER}", None, _NO_CLUSTERS),
    CudaOnlyApi("cooperative_groups::this_cluster", r"this_cluster\b", f"cooperative groups, {_CLUSTER}", None,
                _NO_CLUSTERS),
    CudaOnlyApi("cooperative_groups::cluster_group", r"cluster_group\b", f"cooperative groups, {_CLUSTER}", None,
                _NO_CLUSTERS),
    CudaOnlyApi("cluster.map_shared_rank", r"map_shared_rank\b",
                f"distributed shared memory, {_CLUSTER}", None,
                "a block cannot read another block's shared memory on AMD: exchange through global memory"),
    CudaOnlyApi("cluster.sync()",
                r"\s*(?:\.|->)\s*(?:sync|barrier_arrive|barrier_wait|block_rank|block_index|dim_blocks|num_blocks"
                r"|dim_threads|num_threads|thread_rank|thread_index|query_shared_rank|size)\s*\(",
                f"cluster_group member, {_CLUSTER}", None, _NO_CLUSTERS, via="cluster variable"),
    # other cooperative groups
    CudaOnlyApi("cooperative_groups::labeled_partition", r"labeled_partition\b",
                "cooperative groups partition by label (sm_70+)", None,
                "group the lanes with `__match_any` or a `tiled_partition`"),
    # intrinsics HIP does not define
    CudaOnlyApi("__h*2_mask", r"__h(?:eq|ne|lt|le|gt|ge)u?2_mask\b", "half2 comparison mask intrinsic", None,
                "HIP has only the __h*2 forms (1.0/0.0 per half): build the 0xFFFF-per-half mask from them"),
    CudaOnlyApi("__stcs", r"__stcs\b", "streaming store intrinsic",
                "`__builtin_nontemporal_store(value, ptr)`", "clang's non-temporal store; note the argument order"),
    CudaOnlyApi("__stcg / __stwb / __stwt", r"__st(?:cg|wb|wt)\b", "cache-hinted store intrinsic", None,
                _PLAIN_STORE),
    CudaOnlyApi("__ldlu / __ldcv", r"__ld(?:lu|cv)\b", "cache-hinted load intrinsic", None,
                "a plain load (`__ldcv`: a volatile one) keeps the result; the cache hint has no HIP spelling"),
    CudaOnlyApi("__nanosleep", r"__nanosleep\b", "sleep intrinsic (sm_70+)", "`__builtin_amdgcn_s_sleep(n)`",
                "it sleeps about 64 x n clock cycles, not n nanoseconds, and n must be a constant"),
    # libcu++ (cuda::, cuda::std::), with or without its <cuda/...> include
    CudaOnlyApi("cuda::std::*", r"cuda::std::\w+", "libcu++ standard library",
                _LIBHIPCXX, "or the host standard library in host code", once_a_file=True),
    CudaOnlyApi("cuda::atomic_ref", r"cuda::atomic(?:_ref)?\b", "libcu++ scoped atomics",
                _LIBHIPCXX, "or HIP's atomic functions"),
    CudaOnlyApi("cuda::barrier / cuda::memcpy_async",
                r"cuda::(?:barrier|latch|binary_semaphore|counting_semaphore|atomic_thread_fence"
                r"|thread_scope_(?:system|device|block|thread)|aligned_size_t|memcpy_async)\b",
                "libcu++ synchronisation and copies", _LIBHIPCXX,
                "`memcpy_async` is a plain copy there: no asynchronous or bulk (TMA) copy"),
    CudaOnlyApi("cuda::pipeline", r"cuda::(?:pipeline|make_pipeline)\w*",
                "libcu++ asynchronous-copy pipeline", None, "libhipcxx has no pipelines: copy synchronously"),
    CudaOnlyApi("cuda::ceil_div", r"cuda::(?:ceil_div|round_up|round_down)\b",
                "libcu++ integer helper (<cuda/cmath>)", None, "write `(a + b - 1) / b`"),
    CudaOnlyApi("cuda::annotated_ptr",
                r"cuda::(?:annotated_ptr|access_property|apply_access_property"
                r"|associate_access_property|discard_memory)\b", "libcu++ L2 cache-residency control", None,
                "drop the hint on AMD"),
    # DLPack
    CudaOnlyApi("kDLCUDA", r"kDLCUDA\b", "DLPack device type", "`kDLROCM`",
                "a ROCm tensor reports `kDLROCM`: accept it too"),
    CudaOnlyApi("kDLCUDAHost", r"kDLCUDAHost\b", "DLPack device type (pinned host memory)", "`kDLROCMHost`",
                "pinned memory of a ROCm tensor reports `kDLROCMHost`: accept it too"),
    CudaOnlyApi("kDLGPU", r"kDLGPU\b", "DLPack device type (the name before DLPack 0.6)", "`kDLROCM`",
                "a ROCm tensor reports `kDLROCM`: accept it too"),
)

DLPACK_ROCM = lazy_compile(rb"\bkDLROCM")
# the note of a DLPack entry where the code names the device rather than checks it
DLPACK_NAMED_NOTE = "a tensor this code exports from the AMD build is on `{rocm}`: name that there"


@lru_cache(maxsize=1)
def _searched() -> tuple[CudaOnlyApi, ...]:
    return tuple(e for e in CUDA_ONLY_APIS if not e.via)


def pattern() -> str:
    """One regex over the table's names, the rule's pattern: a top-level alternation whose every
    branch starts with a literal character."""
    return "|".join(e.regex for e in _searched())


def literals() -> tuple[bytes, ...]:
    """Strings one of which every match of ``pattern()`` holds (the prefilter's): the entries'
    own factors (more than one regex's factors can hold)."""
    from rocmlint.literals import required_literals

    keys: set[bytes] = set()
    for entry in _searched():
        found = required_literals(entry.regex, re.MULTILINE)
        assert found, entry.cuda  # tests/test_roc305_cuda_only_api.py: every entry has factors
        keys.update(found)
    return tuple(sorted(k for k in keys if not any(o != k and o in k for o in keys)))


@lru_cache(maxsize=None)
def _compiled_bytes(entry: CudaOnlyApi) -> "re.Pattern[bytes]":
    return re.compile(entry.regex.encode())


def entry_at(source: bytes, start: int) -> tuple[CudaOnlyApi, str] | None:
    """The entry ``pattern()`` matched at ``start`` (the first that matches there, as the
    alternation tries them) and the name it matched."""
    for entry in _searched():
        m = _compiled_bytes(entry).match(source, start)
        if m is not None:
            return entry, m.group().decode("utf-8", "replace")
    return None


@lru_cache(maxsize=None)
def _compiled(entry: CudaOnlyApi) -> "re.Pattern[str]":
    return re.compile(entry.regex)


def lookup(name: str) -> CudaOnlyApi | None:
    """The entry whose regex matches all of ``name`` (as a message names it), or None."""
    for entry in _searched():
        if _compiled(entry).fullmatch(name):
            return entry
    return None


def entry_named(cuda: str) -> CudaOnlyApi:
    return next(e for e in CUDA_ONLY_APIS if e.cuda == cuda)


def counterpart(entry: CudaOnlyApi, name: str) -> str | None:
    """The ROCm counterpart of ``name`` (an occurrence of ``entry``), or None."""
    if entry.rocm is None:
        return None
    rest = name[len(entry.prefix):] if name.startswith(entry.prefix) else name.split("_", 1)[-1]
    if entry.prefix == "nvshmemx_":
        rest = re.sub(r"_block(?=_|$)", "_wg", re.sub(r"_warp(?=_|$)", "_wave", rest))
    return entry.rocm.format(rest=rest, name=name.lstrip(":"))


def message(entry: CudaOnlyApi, name: str, note: str | None = None) -> str:
    """What ROC305 says of ``name``; ``note`` in place of the entry's."""
    rocm = counterpart(entry, name)
    note = entry.note if note is None else note
    note = f" ({note})" if note else ""
    if rocm is None:
        return f"`{name}` ({entry.what}) has no ROCm counterpart: this code needs a rewrite for AMD{note}"
    return f"`{name}` ({entry.what}): {rocm} is the ROCm counterpart{note}"
