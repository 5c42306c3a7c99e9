"""What the lane-group model reads beyond the file in hand: the project headers it includes
(read once per run, their stamps recorded as cache facts), the shuffle wrappers they define
(``SHFL_UP(v, d)``), and the cheap tests of whether a file or its headers may hold lane facts
at all."""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Iterator

from ..cache import stat_stamp
from ..lazy_re import lazy_compile
from .device_code import has_device_code, names_project_macro
from .lexical import quoted_include_names
from .lane_facts import MAX_INCLUDED_BYTES, MAX_INCLUDE_DEPTH, SHUFFLE_KINDS
from .markers import WAVE_OPERATIONS

if TYPE_CHECKING:
    from .context import CppContext


_WAVE_OPERATION_TEXT = lazy_compile(b"|".join(WAVE_OPERATIONS))
CALLED_WORD = lazy_compile(rb"\b(\w+)\s*\(")
# What can make a lane group wave-sized (``value_size``, ``_index_of``, ``_WAVE_LANE_TEXT``):
# a wave-wide operation or lane index, the wave size, or a constant worth 64 (see _defines_64).
_WAVE_SIZED_WORDS = WAVE_OPERATIONS + (b"__lane_id", b"__builtin_amdgcn", b"__AMDGCN_WAVEFRONT_SIZE", b"warpSize",
                                       b"tiled_partition", b"thread_block_tile")
_WAVE_SIZED_TEXT = lazy_compile(b"|".join(_WAVE_SIZED_WORDS))  # what _may_be_wave_sized finds by one DFA pass
_WAVEFRONT_SIZE_TEXT = lazy_compile(rb"(?i)wave_?front_?size")
# A macro body that is the wave size (``value_size`` reads a warp-named 64 so too).
_WAVE_SIZE_BODY = r"warpSize|(?i:wave_?front_?size)|__AMDGCN_WAVEFRONT_SIZE|^[(\s]*64[uUlL]*[)\s]*$"
# explain shows the lane facts of any file that may hold some, consistent or not.
_LANE_TEXT = lazy_compile(b"|".join(WAVE_OPERATIONS) + rb'|__lane_id|\bwarpSize\b|tiled_partition|thread_block_tile'
                          rb'|#\s*include\s*"')


def may_hold_lane_facts(ctx: "CppContext") -> bool:
    return _LANE_TEXT.search(ctx.source) is not None


def needs_lane_model(ctx: "CppContext") -> bool:
    """Whether a lane group of the file can be wave-sized; else every group is of 32 lanes
    (or unknown) and no verdict can stand. A group is wave-sized only through text: a
    wave-wide operation, the wave size or a constant worth 64 in this file, a macro of the
    project whose body is one of those, a ``#define`` under a wave-size ``#if``, or a file
    it includes with quotes (a helper with a shuffle or vote joins its callers; a header's
    constants are read MAX_INCLUDE_DEPTH deep). And the file must hold device code
    (``has_device_code``)."""
    source = ctx.source
    if not has_device_code(ctx):
        return False  # lanes exist only in device code: a host file's `tid % 64` is no lane group
    if _may_be_wave_sized(source):
        return True
    if any(ctx.pp.wave_size_aware(line) for defs in ctx.pp.defines.values() for line, _value in defs):
        return True
    if _names_wave_size_macro(ctx):
        return True
    level = [(path, _header_flags(path, stat)) for path, stat in _own_includes(ctx)]
    if any(flags.shuffles_or_votes for _path, flags in level):
        return True
    for depth in range(1, MAX_INCLUDE_DEPTH + 1):
        if any(flags.may_be_wave_sized for _path, flags in level):
            return True
        if depth == MAX_INCLUDE_DEPTH:
            break
        # a header's quoted includes, NVIDIA-only lines too: more files, never fewer
        level = [(path, _header_flags(path, stat)) for includer, flags in level
                 for path, stat in _quoted_includes(ctx, includer, list(flags.quoted_includes))]
    return False


@dataclass(frozen=True)
class _HeaderFlags:
    """What the lane-group pre-check needs of a header: kept per run instead of its bytes."""

    shuffles_or_votes: bool
    may_be_wave_sized: bool
    quoted_includes: tuple[str, ...]


_HEADER_FLAGS: dict[tuple[str, int, int], _HeaderFlags] = {}


def _header_flags(path: str, stat: os.stat_result) -> _HeaderFlags:
    key = (path, stat.st_mtime_ns, stat.st_size)
    flags = _HEADER_FLAGS.get(key)
    if flags is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            data = b""
        flags = _HeaderFlags(_WAVE_OPERATION_TEXT.search(data) is not None, _may_be_wave_sized(data),
                             tuple(quoted_include_names(data)))
        if len(_HEADER_FLAGS) > 8192:
            _HEADER_FLAGS.clear()
        _HEADER_FLAGS[key] = flags
    return flags


def _may_be_wave_sized(source: bytes) -> bool:
    found = {index < len(_WAVE_SIZED_WORDS) for index, _start in _wave_sized_words()(source)}
    if True in found or (False in found and _WAVEFRONT_SIZE_TEXT.search(source) is not None):
        return True
    return _defines_64(source)


# The wave-sized words, then "ront" in every case (inside every _WAVEFRONT_SIZE_TEXT match):
# one Aho-Corasick pass decides most files (CUTLASS: 0.4 s of regex scans)
_RONT = tuple(bytes(ch - 32 if up else ch for ch, up in zip(b"ront", bits))
              for bits in itertools.product((False, True), repeat=4))


@lru_cache(maxsize=1)
def _wave_sized_words():
    from ..literals import literal_matcher

    return literal_matcher(list(_WAVE_SIZED_WORDS + _RONT), dfa=True)


def _defines_64(source: bytes) -> bool:
    """A ``#define`` or ``const`` definition (``constant_value``) whose value may be 64."""
    return b"64" in source and (_constant_64(source) or _DEFINE_64.search(source) is not None)


def _constant_64(source: bytes) -> bool:
    """``const(?:expr)?\\b[^;{}()=]*[={][\\s(]*64[uUlL]*\\b`` matches (loose before the
    keyword: a pre-check), found from the value back to the keyword: a forward scan tries
    every `const` of the file (thousands in a CUTLASS header), values of 64 are few."""
    for m in _VALUE_64.finditer(source):
        at = m.start()
        run_start = max([source.rfind(stop, 0, at) for stop in _STOPS]) + 1
        if _CONST_WORD.search(source, run_start, at) is not None:
            return True
    return False


_VALUE_64 = lazy_compile(rb"[={][\s(]*64[uUlL]*\b")
_CONST_WORD = lazy_compile(rb"const(?:expr)?\b")
_STOPS = (b";", b"{", b"}", b"(", b")", b"=")  # what the run between keyword and value never holds
_DEFINE_64 = lazy_compile(rb"define[ \t]+\w+[ \t]+[( \t]*64[uUlL]*\b")  # a literal start: a fast scan


def _names_wave_size_macro(ctx: "CppContext") -> bool:
    """The file names a macro the project defines as the wave size (or as 64)."""
    return names_project_macro(ctx, _WAVE_SIZE_BODY)


@dataclass(frozen=True)
class ShuffleWrapper:
    """``#define SHFL_UP(v, d) __shfl_up(v, d, 32)``: params and the shuffle's arguments."""

    shuffle: str
    params: tuple[str, ...]
    arguments: tuple[str, ...]
    defined_at: str = ""  # `line 4` or `shfl.h:4`: named in the fact, whose text the call site hides

    def drops(self, index: int) -> bool:
        """Whether parameter ``index`` never reaches the shuffle (a *_sync mask a HIP shim drops)."""
        return index < len(self.params) and self.params[index] not in self.arguments


_WRAPPER = lazy_compile(r"(\w+)\s*\(([^)]*)\)\s+(__shfl\w*)\s*\(([^()]*)\)\s*;?\s*$")


def shuffle_wrappers(ctx, depth: int = 0) -> dict[str, ShuffleWrapper]:
    """Function-like macros of this file or a file it includes that expand to one shuffle."""
    found = ctx.cache.get("shuffle-wrappers")
    if found is not None:
        return found
    found = {}
    if depth < MAX_INCLUDE_DEPTH:
        for included in included_files(ctx):
            if b"__shfl" in included.data and b"define" in included.data:
                found.update(shuffle_wrappers(included.ctx, depth + 1))
    for first, _last, name, rest in _directives(ctx):
        if name != "define" or "__shfl" not in rest or ctx.pp.nvidia_only(first):
            continue
        m = _WRAPPER.match(rest.strip())
        if m is None or m.group(3) not in SHUFFLE_KINDS:
            continue
        params = tuple(p.strip() for p in m.group(2).split(",") if p.strip())
        arguments = tuple(a.strip() for a in m.group(4).split(","))
        where = f"line {first + 1}" if depth == 0 else f"{ctx.path.rsplit('/', 1)[-1]}:{first + 1}"
        found[m.group(1)] = ShuffleWrapper(m.group(3), params, arguments, where)
    ctx.cache["shuffle-wrappers"] = found
    return found


def _directives(ctx):
    """The file's directives (parsed once per context)."""
    found = ctx.cache.get("directives")
    if found is None:
        from .preprocessor import directives

        found = ctx.cache["directives"] = directives(ctx.source) if b"__shfl" in ctx.source else []
    return found


class IncludedFile:
    """A file included with quotes: its bytes, and a context only when something in them
    is worth one (most lookups are settled by a byte search)."""

    def __init__(self, path: str, data: bytes, settings) -> None:
        self.path, self.data, self._settings = path, data, settings

    @cached_property
    def ctx(self) -> "CppContext":
        from .context import CppContext

        return CppContext(self.path, self.data, self._settings)

    @cached_property
    def has_wave_operation(self) -> bool:
        return _WAVE_OPERATION_TEXT.search(self.data) is not None

    @cached_property
    def called_words(self) -> frozenset[str]:
        """Every word followed by ``(`` (what ``\\bNAME\\s*\\(`` finds for a one-word NAME)."""
        return frozenset(m.decode("utf-8", "replace") for m in CALLED_WORD.findall(self.data))


_INCLUDED: dict[tuple[str, int, int], IncludedFile] = {}


def included_files(ctx) -> list[IncludedFile]:
    """The files this one includes with quotes (next to it, or where the project model
    resolves them), read once per run (keyed by path and stat). The file in hand records
    each one's stamp: its results depend on their bytes (cache facts)."""
    found = ctx.cache.get("included-files")
    if found is not None:
        return found
    found = []
    for path, stat in _own_includes(ctx):
        key = (path, stat.st_mtime_ns, stat.st_size)
        included = _INCLUDED.get(key)
        if included is None:
            try:
                with open(path, "rb") as handle:
                    included = IncludedFile(path, handle.read(), ctx.settings)
            except OSError:
                continue
            if len(_INCLUDED) > 256:
                _INCLUDED.clear()
            _INCLUDED[key] = included
        found.append(included)
    ctx.cache["included-files"] = found
    return found


def _own_includes(ctx) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of the files this one includes with quotes on lines the AMD build may
    compile (resolved once per file: the pre-check and the model both ask)."""
    found = ctx.cache.get("own-includes")
    if found is None:
        headers = [header for line, header in ctx.pp.includes
                   if not ctx.pp.nvidia_only(line) and '"' in ctx.lines.line_text(line)]
        found = ctx.cache["own-includes"] = list(_quoted_includes(ctx, ctx.path, headers))
    return found


def _quoted_includes(ctx, includer: str, headers: list[str]) -> Iterator[tuple[str, os.stat_result]]:
    """(path, stat) of each of ``headers`` an #include in ``includer`` reaches (next to it, from
    the project's top, or as the model resolves it); each stamp, or absence, is recorded for
    the file in hand (its results depend on them)."""
    here = os.path.dirname(os.path.abspath(includer))
    for header in headers:
        path = os.path.normpath(os.path.join(here, header))
        if not os.path.isfile(path) and ctx.project is not None:  # "src/common.h" from the top
            rooted = os.path.normpath(os.path.join(str(ctx.project.root), header))
            path = rooted if os.path.isfile(rooted) else path
        if not os.path.isfile(path) and ctx.model is not None:
            rel = ctx.model.rel(includer)
            resolved = ctx.model.resolve_include(rel, header) if rel is not None else None
            path = os.path.join(str(ctx.model.root), resolved) if resolved else path
        try:
            stat = os.stat(path)
            if stat.st_size > MAX_INCLUDED_BYTES or os.path.samefile(path, includer):
                continue
        except OSError:
            if ctx.project is not None:  # a header that may appear later changes the result
                ctx.project.record("file", path, "False")
            continue
        if ctx.project is not None:
            ctx.project.record("file-content", path, stat_stamp(stat))
        yield path, stat
