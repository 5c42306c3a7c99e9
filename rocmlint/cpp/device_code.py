"""Whether a C-family file holds device code, read from its text: lanes, warp masks and
wave-wide operations exist only there (a host file's `tid % 64` or `fence_sync(0xffffffff)`
is none). Rules skip their parse without it."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from .lexical import WORD_BYTES, word_matches
from .markers import WAVE_OPERATIONS

if TYPE_CHECKING:
    from .context import CppContext

# Device code, in code (not a comment or a string): a kernel or device qualifier, a thread
# or lane index, a wave-wide operation, a barrier, a launch; a qualifier macro named so
# (CUTLASS_DEVICE, CK_TILE_HOST_DEVICE, __DEVICE__, DEVICE_INLINE), or a project macro whose
# body is a qualifier (`#define KERNEL __global__`).
_DEVICE_WORDS = WAVE_OPERATIONS + (b"__global__", b"__device__", b"threadIdx", b"blockIdx", b"__lane_id",
                                   b"__builtin_amdgcn", b"warpSize", b"__syncthreads", b"__syncwarp", b"thread_rank",
                                   b"tiled_partition", b"thread_block_tile", b"<<<", b"LaunchKernel", b"DEVICE")
_DEVICE_BODY = r"__device__|__global__"


def has_device_code(ctx: "CppContext") -> bool:
    """The file holds device code (``_DEVICE_WORDS`` in code, or a project macro that is a
    device qualifier): without it, no lane group, warp mask or wave-wide operation runs."""
    found = ctx.cache.get("device-code")
    if found is None:
        found = ctx.cache["device-code"] = _device_text_in_code(ctx) or names_project_macro(ctx, _DEVICE_BODY)
    return found


def _device_text_in_code(ctx: "CppContext") -> bool:
    source = ctx.source
    for index, start in _device_words()(source):
        if _DEVICE_WORDS[index] == b"DEVICE" and not _device_macro_word(source, start):
            continue
        if ctx.in_code(start):
            return True
    return False


@lru_cache(maxsize=1)
def _device_words():
    """One Aho-Corasick pass for all of ``_DEVICE_WORDS`` (4x a regex alternation)."""
    from ..literals import literal_matcher

    return literal_matcher(list(_DEVICE_WORDS), dfa=True)


def _device_macro_word(source: bytes, at: int) -> bool:
    """The identifier holding ``DEVICE`` at ``at`` names a qualifier: ``*_DEVICE``,
    ``__DEVICE__``, ``DEVICE_*`` (not ``CL_DEVICE_TYPE_GPU``, ``MAX_DEVICES``)."""
    start = at
    while start > 0 and source[start - 1] in WORD_BYTES:
        start -= 1
    end = at + len(b"DEVICE")
    while end < len(source) and source[end] in WORD_BYTES:
        end += 1
    word = source[start:end]
    return word.endswith(b"_DEVICE") or word == b"__DEVICE__" or word.startswith(b"DEVICE_") or word == b"DEVICE"


def names_project_macro(ctx: "CppContext", body: str) -> bool:
    """The file names a macro the project defines with a body matching ``body``."""
    model = ctx.model
    if model is None:
        return False
    names = model.macros_matching(body)
    if ctx.project is not None:  # a header's edit may add one
        ctx.project.record("cpp:macros-matching", body, ",".join(sorted(names)))
    if not names:
        return False
    pattern = _NAMES_PATTERN.get(names)
    if pattern is None:
        if len(_NAMES_PATTERN) > 16:
            _NAMES_PATTERN.clear()
        pattern = _NAMES_PATTERN[names] = re.compile(
            rb"(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True)) + rb")\b")
    return next(word_matches(pattern, ctx.source), None) is not None


_NAMES_PATTERN: dict[frozenset[str], "re.Pattern[bytes]"] = {}
