"""The Python part of the project model: gate helpers and NVIDIA-only modules.

Per-file summaries (cached by content) are read with regexes first and ``ast`` only on the
few module-level blocks that can matter, so building the model over thousands of files
costs a fraction of the lint itself. What it knows:

- **gate helpers**, found by what they return, not by name: a module-level function whose
  result is a ROCm test (``return torch.version.hip is not None``) is a ROCm gate; one whose
  result is False on every AMD GPU by intent (``get_device_capability() >= (10, 0)``,
  ``torch.version.cuda is not None and ...``) is an NVIDIA-only predicate; a function that
  returns another helper's result is followed one level. Module-level names bound to a gate
  expression (``IS_ROCM = torch.version.hip is not None``) count too.
- **skip decorators**: a decorator factory whose body skips under a ROCm gate
  (``if is_rocm(): pytest.skip(...)``, ``return unittest.skipIf(IS_ROCM, ...)``).
- **NVIDIA-only modules**: a module that imports, unconditionally at module level, a package
  that exists only for NVIDIA GPUs (CUTLASS's Python DSL, FA3, DeepGEMM, ...), TensorRT-LLM's
  kernels by name (`from flashinfer.mla import trtllm_...`), or a project module that is
  NVIDIA-only. Nothing in it runs on ROCm; its import is the one fact to show.
"""
from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from ..evidence import Evidence, Verdict
from ..lazy_re import lazy_compile
from ..python.gates import SOME, Fact
from ..literals import literal_matcher, word_uses
from ..python.toplevel import (
    ASSIGN_LINE,
    DEF_LINE,
    MAX_HELPER_BYTES,
    SKIP_NAME,
    gate_word_positions,
    module_statement_starts,
)
from . import digest
from ..python.backends import NVIDIA_ONLY_IMPORTS, OTHER_ACCELERATOR_IMPORTS, nvidia_only_import, nvidia_root
from ..python.platform_sources import platform_selector_variables
from .dependencies import dependency_files, required_everywhere
from .summary_cache import cached_summaries
from ..manifest.kinds import TEST_PATH
from .tree import named_for_other_platform

if TYPE_CHECKING:
    from . import LazyPart, Project


# One pass over b"\n" + source finds the module-level lines the model needs: an import
# (groups 1-2: `from M import NAMES`, group 3: `import M`), a function (group 4), or a name
# bound to a call that may be a gate (group 5: `skip_sm90 = pytest.mark.skipif(...)`,
# `SM90_OR_LATER = is_sm_at_least_90()`). The literal first byte keeps the scan at memchr
# speed (a MULTILINE `^` would be tried at every byte), and the look-ahead drops indented
# and blank lines before the alternatives are tried (half the time of the scan).
_TOP_LINE = lazy_compile(rb"\n(?=\w)(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([^\n#]*)|import[ \t]+([\w.]+)"
                         rb"|(?:async[ \t]+)?def[ \t]+(\w+)|(\w*[sS]kip\w*|[A-Z][A-Z0-9_]*)[ \t]*=[ \t]*[\w.]+\()")
_WORD = lazy_compile(rb"\w+")
# A module's name set from another module, to what a function returns (column 0, one call):
# `devices.backend = devices.get_backend(cmd_opts)`.
_ATTRIBUTE_CALL = lazy_compile(rb"\n[A-Za-z_]\w*\.(\w+)[ \t]*=[ \t]*(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)\([^\n]*\)[ \t]*(?=\n|#|$)")
# `hip` as a word of its own (`IS_HIP_EXTENSION`, `version.hip`, hipcc, hipify), not inside
# `shipped`, `chip` or `ownership`
_ROCM_BUILD = lazy_compile(rb"(?<![a-z])hip(?:cc|ify)?(?![a-z])|rocm", re.IGNORECASE)
_NVCC_FLAG = lazy_compile(rb"-gencode|-arch=sm_|--use_fast_math|-Xptxas")
SUMMARY_VERSION = "13"


@dataclass
class Helper:
    """A module-level function or name whose value decides who runs code (``fact``)."""

    name: str
    fact: Fact
    path: str
    line: int

    @property
    def kind(self) -> str:
        """"rocm" (a ROCm test), "nvidia" (false on every AMD GPU), "skip" (skips on ROCm) or
        "platform" (a value that differs per platform: `DEVICE_TYPE`)."""
        return self.fact.meaning

    def evidence(self) -> Evidence:
        return Evidence(self.fact.describe(self.name), f"{self.path}:{self.line}")


@dataclass
class Summary:
    module: str
    imports: list[tuple[str, int]]  # (absolute module, line) imported unconditionally at module level
    helpers: list[Helper] = field(default_factory=list)
    cuda_build: int = 0  # a setup.py building CUDA-only extensions: the line that shows it
    rocm_build: int = 0  # a setup.py that builds for ROCm too: the line that shows it
    defs: list[str] = field(default_factory=list)  # module-level functions (judged lazily, one level)
    # `devices.backend = devices.get_backend(opts)` at column 0: (attribute, function called, line)
    attribute_calls: list[tuple[str, str, int]] = field(default_factory=list)
    # a file under a folder (or itself a module) named for CUDA: the line of its first ROCm
    # test (`torch.version.hip`, `is_rocm()`), which makes that folder shared rather than NVIDIA's
    rocm_word: int = 0
    # `weight.view(torch.float8_e4m3fnuz)`: OCP FP8 bits reinterpreted as FNUZ (a load-time
    # normalisation of e4m3fn checkpoints for MI300): its line
    fnuz_view: int = 0
    # environment variables compared with a ROCm word (`ARCH == "rocm"`): the user names the
    # platform in them; each with the line of its first such comparison
    platform_variables: dict[str, int] = field(default_factory=dict)


# Words of a folder or module name (`cuda_impl` -> cuda, impl; `_nvidia` -> nvidia).
_NAME_WORDS = ("_", "-")
_CUDA_WORDS = ("cuda", "nvidia")
# Code that tests for ROCm (not a comment naming it): `torch.version.hip`, `is_hip()`,
# `IS_ROCM`, `gcnArchName`, a "hip" or "rocm" string compared or returned.
_ROCM_TEST = rb"version\.hip|gcnArchName|(?i:is_(?:hip|rocm)|on_(?:hip|rocm))|[\"'](?:hip|rocm)[\"']"
# An AMD GPU target (`gfx942`, `gfx1201`, `gfx90a`).
_GFX_TARGET = lazy_compile(rb"\bgfx\d{3,4}[a-z]?\b")
# An AMD GPU named as a target or a product (`gfx950`, `MI300X`, `mi355x`).
_AMD_GPU = lazy_compile(rb"(?<![A-Za-z0-9])(?:gfx\d{3,4}[a-z]?|[Mm][Ii]\d{3}[AaXxSs]?)(?![A-Za-z0-9])")
# A folder or module named for a gfx target (`ops/gfx950/`, `gemm_gfx942.py`).
_GFX_PATH = lazy_compile(r"(?:^|[/_])(gfx\d{3,4}[a-z]?)(?=[/_.])")
# Instinct products by their targets (the FNUZ FP8 ones are gfx940-942).
_INSTINCT_TARGETS = {"mi300": "gfx942", "mi308": "gfx942", "mi325": "gfx942", "mi350": "gfx950", "mi355": "gfx950",
                     "mi250": "gfx90a", "mi210": "gfx90a", "mi200": "gfx90a", "mi100": "gfx908"}


def amd_gpus_named(source: bytes) -> set[str]:
    """The AMD GPUs a text names, as targets (`MI300X` is gfx942); an Instinct product this
    table does not know is left out."""
    words = (m.group().decode().lower() for m in _AMD_GPU.finditer(source))
    return {word if word.startswith("gfx") else _INSTINCT_TARGETS[word[:5]] for word in words
            if word.startswith("gfx") or word[:5] in _INSTINCT_TARGETS}
# A CMake build that cannot configure without CUDA.
_CUDA_REQUIRED = lazy_compile(r"(?i)\bproject\s*\([^)]*\bLANGUAGES\b[^)]*\bCUDA\b|\benable_language\s*\(\s*CUDA\b"
                              r"|\bfind_package\s*\(\s*CUDA(?:Toolkit)?\b[^)]*\bREQUIRED\b")
_AMD_WORDS = ("rocm", "hip", "amd")


def _name_words(name: str) -> list[str]:
    for separator in _NAME_WORDS[1:]:
        name = name.replace(separator, _NAME_WORDS[0])
    return name.lower().split(_NAME_WORDS[0])


def _named_for_cuda(rel: str) -> bool:
    """A folder or the module on the path is named for CUDA (`kernels/cuda/`, `cuda_impl/`,
    `attn_cuda.py`)."""
    lowered = rel.lower()
    if "cuda" not in lowered and "nvidia" not in lowered:
        return False
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    return any(word in _CUDA_WORDS for part in parts for word in _name_words(part))


def _amd_twins(name: str) -> list[str]:
    """The names an AMD twin of a CUDA-named folder or module takes (`cuda_impl` ->
    `rocm_impl`, `hip_impl`, `amd_impl`; `_nvidia` -> `_amd`, ...)."""
    words = _name_words(name)
    if not any(word in _CUDA_WORDS for word in words):
        return []
    twins = []
    for amd in _AMD_WORDS:
        twins.append("_".join(amd if word in _CUDA_WORDS else word for word in words))
    return twins


def _module_name(rel: str) -> str:
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_names(module: str) -> list[str]:
    """The names a module may be imported by, itself first: a package may sit below a source
    or project folder (`src/kern/gemm` is imported as `kern.gemm` or `gemm`)."""
    parts = module.split(".")
    return [".".join(parts[start:]) for start in range(len(parts))]


def _absolute(module: str, relative: str, is_package: bool) -> str:
    dots = len(relative) - len(relative.lstrip("."))
    if not dots:
        return relative
    base = module.split(".") if is_package else module.split(".")[:-1]
    if dots > 1:
        base = base[: len(base) - (dots - 1)]
    rest = relative[dots:]
    return ".".join(base + ([rest] if rest else []))


def _stat(path: Path) -> tuple[int, int]:
    """(mtime in ns, size) of a file, for the fingerprint; (0, 0) when it cannot be read."""
    try:
        found = path.stat()
    except OSError:
        return (0, 0)
    return (found.st_mtime_ns, found.st_size)


def _line_of(source: bytes, offset: int) -> int:
    return source.count(b"\n", 0, offset) + 1


def summarize(rel: str, source: bytes) -> Summary:
    """What one file tells the model (pure function of its path and content)."""
    module = _module_name(rel)
    is_package = rel.endswith("__init__.py")
    imports: list[tuple[str, int]] = []
    defs: list[str] = []
    line, counted = 1, 0
    padded = b"\n" + source
    for m in _TOP_LINE.finditer(padded):
        from_module, names, plain_import, function, bound = m.groups()
        if function or bound:
            defs.append((function or bound).decode())
            continue
        line += padded.count(b"\n", counted + 1, m.start() + 1)  # the line of padded[m.start() + 1]
        counted = m.start()
        if plain_import:
            imports.append((plain_import.decode(), line))
            continue
        base = _absolute(module, from_module.decode(), is_package)
        imports.append((base, line))
        for name in _WORD.findall(names):  # `from pkg import submodule`
            if name != b"as":
                imports.append((f"{base}.{name.decode()}" if base else name.decode(), line))
    summary = Summary(module, imports, defs=defs)
    if b"." in source:
        summary.attribute_calls = [(m.group(1).decode(), m.group(2).decode(), _line_of(source, m.start() + 1))
                                   for m in _ATTRIBUTE_CALL.finditer(padded)]
    if rel == "setup.py" or rel.endswith("/setup.py"):
        rocm = _ROCM_BUILD.search(source)
        summary.rocm_build = _line_of(source, rocm.start()) if rocm else 0
        summary.cuda_build = 0 if rocm else _nvcc_flag_line(source)
    if _named_for_cuda(rel):  # (compiled on first use: re's own cache)
        rocm = re.search(_ROCM_TEST, source)
        summary.rocm_word = _line_of(source, rocm.start()) if rocm else 0
    if b"e4m3fnuz" in source:
        view = re.search(rb"\.view\(\s*(?:dtype\s*=\s*)?torch\.float8_e4m3fnuz\s*\)", source)
        summary.fnuz_view = _line_of(source, view.start()) if view else 0
    summary.platform_variables = platform_selector_variables(source, None, None)
    positions = gate_word_positions(source)
    if not positions:
        return summary
    from ..python.gates import GateEvaluator

    facts: dict[str, Fact] = {}
    blocks = list(_blocks_around(source, positions))
    resolver = _module_resolver(source)
    asked: set[str] = set()

    def helper_fact(name: str, called: bool) -> Fact | None:
        asked.add(name)
        return facts.get(name)

    for _ in range(2):  # a second pass knows the first's facts (helpers calling helpers)
        evaluator = GateEvaluator((), _dotted, helper_fact, resolver, assume_gpu=True,
                                  selectors={v: f"{rel}:{line}" for v, line in summary.platform_variables.items()})
        summary.helpers = [helper for label, line, stmt in blocks
                           for helper in _judged(rel, source, label, line, stmt, evaluator)]
        found = {helper.name: helper.fact for helper in summary.helpers}
        if found == facts or not found or asked.isdisjoint(found):
            break  # no block asked for a helper this file defines: a second pass reads the same
        facts = found
    return summary


def _judged(rel: str, source: bytes, label: str, line: int, stmt: ast.stmt, evaluator) -> list[Helper]:
    """The facts a module-level block gives (a name bound again at module level after the
    block decides nothing: its later value is not read here)."""
    from ..python.gates import statement_facts

    found = []
    for name, fact in statement_facts(stmt, evaluator, SKIP_NAME.search(label) is not None,
                                      lambda name: _constant_before(source, name, line)):
        if fact.kind == "value" and _bound_after(source, name, line):
            continue
        found.append(Helper(name, fact, rel, line))
    return found


def _assignment_heads(source: bytes, name: str) -> list[int]:
    """Where column-0 assignments of ``name`` start (`NAME = ...`, `NAME: T = ...`); searched
    after a newline, at memchr speed (see _TOP_LINE)."""
    pattern = rb"\n%s[ \t]*(?::[^=\n]*)?=(?!=)" % re.escape(name.encode())
    return [m.start() for m in re.finditer(pattern, b"\n" + source)]  # the newline's offset is the line's in source


def _constant_before(source: bytes, name: str, line: int) -> frozenset | None:
    """The value of ``name`` above ``line`` when one column-0 assignment binds it there, to a
    constant (`PLATFORM = None` before `if torch.version.hip: PLATFORM = "rocm"`)."""
    heads = [head for head in _assignment_heads(source, name) if _line_of(source, head) < line]
    if len(heads) != 1:
        return None
    end = source.find(b"\n", heads[0])
    try:
        value = ast.parse(source[heads[0]: end if end >= 0 else len(source)]).body[0]
    except (SyntaxError, ValueError, IndexError):
        return None
    if isinstance(value, (ast.Assign, ast.AnnAssign)) and isinstance(value.value, ast.Constant):
        return frozenset({value.value.value})
    return None


def _bound_after(source: bytes, name: str, line: int) -> bool:
    """``name`` is assigned again at column 0 below ``line``."""
    return any(_line_of(source, head) > line for head in _assignment_heads(source, name))


def _module_resolver(source: bytes):
    """Names bound once at column 0 of the file, read on demand (the file is not parsed whole)."""
    cache: dict[str, ast.expr | None] = {}

    def resolve(node: ast.Name) -> ast.expr | None:
        if node.id not in cache:
            heads = _assignment_heads(source, node.id)
            value = None
            if len(heads) == 1:
                for _label, _line, stmt in _blocks_around(source, [heads[0]]):
                    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                        value = stmt.value
            cache[node.id] = value
        return cache[node.id]

    return resolve


def _blocks_around(source: bytes, positions: list[int]):
    """(name, line, statement) of each short module-level `def`, assignment, `if` or `try`
    that contains one of ``positions``: found from them, so a file costs a few scans at
    memchr speed."""
    starts = module_statement_starts(source)
    seen: set[int] = set()
    for position in positions:
        index = bisect.bisect_right(starts, position) - 1
        if index < 0:
            continue
        block = _CONTINUATION.match(source, starts[index])
        while block is not None and index > 0:  # an `else:` line belongs to the `if` above it
            index -= 1
            block = _CONTINUATION.match(source, starts[index])
        if index in seen:
            continue
        seen.add(index)
        start = starts[index]
        end = starts[index + 1] if index + 1 < len(starts) else len(source)
        head = DEF_LINE.match(source, start) or ASSIGN_LINE.match(source, start)
        if head is None:
            head = _BLOCK_LINE.match(source, start)
            if head is not None:  # an if/try block: its elif/else/except lines belong to it
                end = _compound_end(source, starts, index)
        if head is None or end - start > MAX_HELPER_BYTES:
            continue
        try:
            tree = ast.parse(source[start:end].decode("utf-8", "replace"))
        except (SyntaxError, ValueError, RecursionError):
            continue
        if tree.body:
            yield head.group(1).decode(), _line_of(source, start), tree.body[0]


_BLOCK_LINE = lazy_compile(rb"(if|try)\b")
_CONTINUATION = lazy_compile(rb"(?:elif|else|except|finally)\b")


def _compound_end(source: bytes, starts: list[int], index: int) -> int:
    """End of the module-level compound statement starting at ``starts[index]``: the
    column-0 `elif`/`else`/`except`/`finally` lines that follow belong to it."""
    index += 1
    while index < len(starts) and _CONTINUATION.match(source, starts[index]):
        index += 1
    return starts[index] if index < len(starts) else len(source)


def judge_definition(rel: str, source: bytes, name: str, facts: dict[str, Fact]) -> Helper | None:
    """A module-level function judged knowing the project's helpers: one level of helper calls
    (`def fp8_ok(): return is_sm_at_least_89() and has_triton()`)."""
    from ..python.gates import GateEvaluator

    head = re.search(rb"(?:^|\n)(?:(?:async[ \t]+)?def[ \t]+%s\b|%s[ \t]*=[^=])"
                     % (re.escape(name.encode()), re.escape(name.encode())), source)
    if head is None:
        return None
    evaluator = GateEvaluator((), _dotted, lambda name, called: facts.get(name), _module_resolver(source),
                              assume_gpu=True)
    for found, line, stmt in _blocks_around(source, [head.end() - 1]):
        if found == name:
            return next((h for h in _judged(rel, source, found, line, stmt, evaluator) if h.name == name), None)
    return None


def _nvcc_flag_line(source: bytes) -> int:
    """Line of the first NVIDIA-only build flag (0: none)."""
    m = _NVCC_FLAG.search(source)
    return _line_of(source, m.start()) if m else 0


def _dotted(node: ast.AST) -> str | None:
    from ..python.gates import dotted_name

    return dotted_name(node)


_ANY_IMPORT = lazy_compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w.]+))"
                           rb"|(?:import_module|find_spec)\([ \t]*[\"']([\w.]+)[\"']", re.MULTILINE)


def nvidia_backend_import(source: bytes) -> tuple[str, int] | None:
    """The first place a file loads a package that exists only for NVIDIA GPUs, at any depth
    (a lazy `import cutlass` in a function, `importlib.import_module("flash_attn_interface")`):
    the file is (part of) that NVIDIA backend's glue."""
    global _NVIDIA_SCAN
    if _NVIDIA_SCAN is None:
        _NVIDIA_SCAN = literal_matcher(_NVIDIA_WORDS, longest=True)
    checked = -1
    for _index, position in word_uses(_NVIDIA_WORDS, source, _NVIDIA_SCAN):  # lines naming such a package
        start = source.rfind(b"\n", 0, position) + 1
        if start <= checked:
            continue
        end = source.find(b"\n", position)
        checked = end = len(source) if end < 0 else end
        for m in _ANY_IMPORT.finditer(source, start, end):
            module = (m.group(1) or m.group(2) or m.group(3)).decode()
            if nvidia_root(module):
                return module, _line_of(source, m.start())
    return None


_NVIDIA_WORDS = [root.encode() for root in NVIDIA_ONLY_IMPORTS]
_NVIDIA_SCAN = None


def _other_accelerator(module: str) -> str | None:
    """The platform a module exists only for (`habana_frameworks.torch` -> Intel Gaudi), if any."""
    return OTHER_ACCELERATOR_IMPORTS.get(module.split(".")[0])


class PythonModel:
    """What the project tells about Python files (see the module docstring)."""

    @staticmethod
    def describes(rel: str, data: bytes) -> bool:
        """New contents of a file the model never reads (not Python) leave it as it is."""
        return not rel.endswith((".py", ".pyi"))

    def __init__(self, root: Path, summaries: dict[str, Summary]) -> None:
        self.root = root
        self.summaries = summaries
        self.helpers: dict[str, Helper] = {}
        self.nvidia_only: dict[str, Evidence] = {}  # rel path -> the import that makes it NVIDIA-only
        self.components: dict[str, Evidence] = {}  # folder/ -> why everything under it is NVIDIA-only
        self.cuda_twins: dict[str, Evidence] = {}  # folder/ or module rel -> its AMD twin (NVIDIA-only)
        self._imported_names: set[str] | None = None
        self._imported_modules: set[str] | None = None
        self._followed: dict[str, Helper | None] = {}
        self._settled: dict[str, bool] = {}  # function name -> its definitions return one constant
        self.definitions: dict[str, list[str]] = {}  # module-level function name -> files
        for rel, summary in summaries.items():
            for name in summary.defs:
                self.definitions.setdefault(name, []).append(rel)
        self._resolve_helpers()
        self._fingerprint = ""
        self._required: dict[str, str | None] = {}

    def finish(self, stats: dict[str, tuple[int, int]] | None = None,
               build: dict[str, tuple[int, int]] | None = None,
               docker: dict[str, tuple[int, int]] | None = None) -> None:
        """What depends on the helpers: components of a dual-platform project, NVIDIA-only
        modules. ``stats``: every file's (mtime, size), in the fingerprint: results also read
        who imports a name and function bodies of other files, which no digest of the facts
        above covers. ``build``: the build files (CMake components are read from them).
        ``docker``: the Dockerfiles (the AMD GPUs images are built for)."""
        self._resolve_components()
        read = self._resolve_cmake_components(build or {})
        self._build_files = sorted(rel for rel in (build or {}) if "/" not in rel)  # the top-level build
        # The build files read (CMake components, AMD targets) are part of what results depend on.
        stats = {**(stats or {}), **{rel: (build or {})[rel] for rel in [*read, *self._build_files]},
                 **{rel: _stat(self.root / rel) for rel in dependency_files(self.root)}, **(docker or {})}
        self._docker_files = sorted(docker or {})
        self._resolve_cuda_twins()
        self._resolve_modules()
        files = (f"{rel}:{m}:{n}" for rel, (m, n) in sorted((stats or {}).items()))
        self._fingerprint = digest(*sorted(f"{h.name}:{h.fact}" for h in self.helpers.values()),
                                   *sorted(self.nvidia_only), *sorted(self.components), *sorted(self.cuda_twins),
                                   *sorted(self.platform_variables()),
                                   *files)

    def _resolve_helpers(self) -> None:
        found: dict[str, list[Helper]] = {}
        for summary in self.summaries.values():
            for helper in summary.helpers:
                found.setdefault(helper.name, []).append(helper)
        # A name defined with different meanings in different places decides nothing.
        direct = {name: defs[0] for name, defs in found.items() if len({h.fact for h in defs}) == 1}
        self.helpers = direct
        # `M.name = M.helper(...)`: the name holds what the helper returns on each platform.
        conflicting: set[str] = set()
        for rel, summary in self.summaries.items():
            for attribute, function, line in summary.attribute_calls:
                source = direct.get(function)
                if source is None or source.fact.kind != "call" or attribute in found:
                    continue
                fact = Fact("value", source.fact.rocm, source.fact.nvidia,
                            f"set from `{function}()` ({source.path}:{source.line})")
                earlier = self.helpers.setdefault(attribute, Helper(attribute, fact, rel, line))
                if earlier.fact != fact:
                    conflicting.add(attribute)  # set to different things: decides nothing
        for attribute in conflicting:
            del self.helpers[attribute]

    def _resolve_components(self) -> None:
        """A sub-package whose own setup.py builds CUDA-only extensions (nvcc flags, no HIP),
        inside a project whose build above it supports ROCm, is an NVIDIA-only component: the
        project chose not to build it for AMD. (A project that builds nothing for ROCm is being
        ported: its CUDA-only builds are what ROC109 reports.)"""
        rocm_builds = [rel.rpartition("/")[0] for rel, s in self.summaries.items() if s.rocm_build]
        for rel, summary in self.summaries.items():
            folder = rel.rpartition("/")[0]
            if not (summary.cuda_build and folder):
                continue
            parent = next((f for f in rocm_builds if f != folder and (f == "" or folder.startswith(f + "/"))), None)
            if parent is not None:
                where = f"{parent}/setup.py" if parent else "setup.py"
                self.components[folder + "/"] = Evidence(
                    f"the component's own build compiles CUDA-only extensions, while the project's build "
                    f"({where}:{self.summaries[where].rocm_build}) supports ROCm", f"{rel}:{summary.cuda_build}")

    def _resolve_cmake_components(self, build: dict[str, tuple[int, int]]) -> list[str]:
        """A Python package folder (its own pyproject.toml or setup.py) whose own CMake build
        requires CUDA and names nothing of HIP (`project(x LANGUAGES CXX CUDA)`,
        `find_package(CUDAToolkit REQUIRED)`), in a project whose Python code elsewhere tests for
        ROCm: an NVIDIA-only component, as with a CUDA-only setup.py. Returns the CMake files read."""
        from ..platform_words import names_platform

        read: list[str] = []
        candidates = {}
        python_folders = set()  # every folder above a Python file
        for rel in self.summaries:
            folder = rel.rpartition("/")[0]
            while folder and folder not in python_folders:
                python_folders.add(folder)
                folder = folder.rpartition("/")[0]
        for rel in build:
            folder, _, name = rel.rpartition("/")
            if name != "CMakeLists.txt" or folder not in python_folders or folder + "/" in self.components:
                continue
            if not any((self.root / folder / package).is_file() for package in ("pyproject.toml", "setup.py")):
                continue
            read.append(rel)
            try:
                text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            required = _CUDA_REQUIRED.search(text)
            if required is not None and not names_platform(text, "cmake-hip"):
                candidates[folder] = (rel, text.count("\n", 0, required.start()) + 1)
        if not candidates:
            return read
        rocm = self._rocm_test_outside(tuple(f + "/" for f in candidates))
        if rocm is None:
            return read
        for folder, (rel, line) in candidates.items():
            self.components[folder + "/"] = Evidence(
                f"the component's own CMake build requires CUDA and names no HIP, while the project tests for "
                f"ROCm ({rocm})", f"{rel}:{line}")
        return read

    def amd_gpus(self) -> frozenset[str]:
        """The AMD GPUs the project builds for: the targets its top-level build names (`gfx1100`,
        `gfx942` in its setup.py or CMake files; a sub-extension's own list says nothing of the
        project); when it names none, the images its Dockerfiles build (`FROM ...-gfx950`,
        `PYTORCH_ROCM_ARCH=gfx942`, `MI300X` as gfx942) and the folders its Python kernels are
        sorted into (`ops/gfx950/`). (A target a file merely mentions, in a table of RDNA special
        cases, says nothing of the rest.) Empty when nothing names one. Read on first ask."""
        if not hasattr(self, "_amd_gpus"):
            found = self._gpus_in(getattr(self, "_build_files", []),
                                  lambda text: {m.group().decode() for m in _GFX_TARGET.finditer(text)})
            if not found:
                found = {m.group(1) for rel in self.summaries for m in _GFX_PATH.finditer(rel)}
                found |= self._gpus_in(getattr(self, "_docker_files", []), amd_gpus_named)
            self._amd_gpus = frozenset(found)
        return self._amd_gpus

    def _gpus_in(self, rels: list[str], scan: Callable[[bytes], Iterable[str]]) -> set[str]:
        """What ``scan`` finds in the files ``rels`` (read here; unreadable ones left out)."""
        found: set[str] = set()
        for rel in rels:
            try:
                found |= set(scan((self.root / rel).read_bytes()))
            except OSError:
                continue
        return found

    def required_everywhere(self, package: str) -> str | None:
        """Where the project's top-level packaging requires ``package`` wherever ROCm runs
        (see ``dependencies``), or None. Read on first ask."""
        if package not in self._required:
            self._required[package] = required_everywhere(self.root, package)
        return self._required[package]

    def _rocm_test_outside(self, folders: tuple[str, ...]) -> str | None:
        """file:line of the first ROCm test (`torch.version.hip`, `is_rocm()`) in a Python file
        outside ``folders``; files are read on demand (this is asked only for CUDA-only builds)."""
        for rel in sorted(self.summaries):
            if rel.startswith(folders):
                continue
            try:
                source = (self.root / rel).read_bytes()
            except OSError:
                continue
            found = re.search(_ROCM_TEST, source) if b"hip" in source or b"rocm" in source.lower() else None
            if found is not None:
                return f"{rel}:{_line_of(source, found.start())}"
        return None

    def _resolve_cuda_twins(self) -> None:
        """A folder or module named for CUDA beside a twin named for AMD (`impl/cuda/` and
        `impl/rocm/`, `cuda_impl/` and `rocm_impl/`, `attn_cuda.py` and `attn_rocm.py`): the
        project splits that code by platform, and the CUDA one is what NVIDIA machines run.
        Unless a file under it tests for ROCm itself (`torch.version.hip`, `is_rocm`): then the
        CUDA-named code is shared (kernels "for CUDA devices" that ROCm runs too)."""
        named = [rel for rel in self.summaries if _named_for_cuda(rel)]
        if not named:
            return
        children: dict[str, set[str]] = {}  # folder -> names of its folders and module stems
        for rel in self.summaries:
            parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
            for index, part in enumerate(parts):
                children.setdefault("/".join(parts[:index]), set()).add("_".join(_name_words(part)))
        # Folders that split by platform: one CUDA-named child has its AMD twin there. Their
        # other CUDA-named children (`cuda_mla_impl/` beside `cuda_impl/` and `rocm_impl/`) are
        # the CUDA side too.
        twins: dict[str, str] = {}  # splitting folder -> one AMD twin in it
        for rel in named:
            parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
            for index, part in enumerate(parts):
                parent = "/".join(parts[:index])
                twin = next((t for t in _amd_twins(part) if t in children.get(parent, ())), None)
                if twin is not None:
                    twins.setdefault(parent, f"{parent}/{twin}" if parent else twin)
        if not twins:
            return
        split: dict[str, str] = {}  # CUDA-named folder/ or module rel -> the AMD twin beside it
        for rel in named:
            parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
            for index, part in enumerate(parts):
                parent = "/".join(parts[:index])
                if parent in twins and any(word in _CUDA_WORDS for word in _name_words(part)):
                    own = "/".join(parts[: index + 1]) + ("/" if index < len(parts) - 1 else ".py")
                    split.setdefault(own, twins[parent])
                    break
        for own, twin in split.items():
            # (a test copied from elsewhere that tests for ROCm says nothing of the code)
            shared = next((rel for rel in named if (rel.startswith(own) if own.endswith("/") else rel == own)
                           and self.summaries[rel].rocm_word and not re.search(TEST_PATH, rel[len(own):])), None)
            if shared is None:
                self.cuda_twins[own] = Evidence(
                    f"`{own}` is the CUDA side of a split by platform (its AMD twin: `{twin}`): the ROCm "
                    "build runs the twin", own)

    def _resolve_modules(self) -> None:
        by_module: dict[str, str] = {}
        for rel, summary in self.summaries.items():
            for name in _module_names(summary.module):  # packages may sit under src/ or a project folder
                by_module.setdefault(name, rel)
        importers: dict[str, list[tuple[str, str, int]]] = {}  # rel -> (importer, module, line)
        todo: list[str] = []
        for rel, summary in self.summaries.items():
            for module, line in summary.imports:
                nvidia = nvidia_root(module)
                if nvidia is None and "trtllm" in module and not (
                        by_module.get(module) or by_module.get(module.rpartition(".")[0])):
                    nvidia = nvidia_only_import(module)  # a name, judged only in another package's import
                platform = "NVIDIA GPUs" if nvidia is not None else _other_accelerator(module)
                if platform is not None:
                    if rel not in self.nvidia_only:
                        self.nvidia_only[rel] = Evidence(f"imports `{module}`, which exists only for {platform}",
                                                         f"{rel}:{line}")
                        todo.append(rel)
                    continue
                target = by_module.get(module)
                if target is not None and target != rel:
                    importers.setdefault(target, []).append((rel, module, line))
        # A module importing a project module the ROCm build never loads is never loaded either.
        while todo:
            target = todo.pop()
            for rel, module, line in importers.get(target, ()):
                if rel not in self.nvidia_only:
                    self.nvidia_only[rel] = Evidence(
                        f"imports `{module}`, a module ROCm never loads ({self.nvidia_only[target]})", f"{rel}:{line}")
                    todo.append(rel)

    # Queries ----------------------------------------------------------------------------
    def relative(self, path: str | Path) -> str | None:
        try:
            rel = os.path.relpath(os.path.abspath(path), self.root)
        except ValueError:
            return None
        return None if rel.startswith("..") else rel.replace(os.sep, "/")

    def module_verdict(self, path: str | Path) -> Verdict | None:
        """Verdict(False, ...) when the whole file is NVIDIA-only, else None."""
        rel = self.relative(path)
        if rel is None:
            return None
        evidence = self.nvidia_only.get(rel)
        if evidence is None:
            evidence = next((e for folder, e in self.components.items() if rel.startswith(folder)), None)
        if evidence is None and self.cuda_twins:
            evidence = next((e for own, e in self.cuda_twins.items()
                             if (rel.startswith(own) if own.endswith("/") else rel == own)), None)
        if evidence is None:
            evidence = named_for_other_platform(rel)
        return Verdict(False, (evidence,)) if evidence else None

    def fnuz_conversion(self) -> Evidence | None:
        """Where the project reinterprets OCP FP8 tensors as FNUZ (`w.view(torch.float8_e4m3fnuz)`,
        after zeroing the NaN pattern): e4m3fn checkpoints are normalised for MI300 there."""
        if not hasattr(self, "_fnuz"):
            found = next(((rel, s.fnuz_view) for rel, s in sorted(self.summaries.items()) if s.fnuz_view), None)
            self._fnuz = None if found is None else Evidence(
                "the project reinterprets e4m3fn tensors as e4m3fnuz", f"{found[0]}:{found[1]}")
        return self._fnuz

    def platform_variables(self) -> dict[str, str]:
        """Environment variables some file compares with a ROCm word, each with where (the
        first file in path order): the user names the platform in them."""
        if not hasattr(self, "_selectors"):
            self._selectors: dict[str, str] = {}
            for rel, summary in sorted(self.summaries.items()):
                for variable, line in summary.platform_variables.items():
                    self._selectors.setdefault(variable, f"{rel}:{line}")
        return self._selectors

    def imported_anywhere(self, path: str | Path) -> bool:
        """Some project file imports the module at ``path`` (or a package imports it by name)."""
        rel = self.relative(path)
        if rel is None or rel not in self.summaries:
            return True  # not ours to say
        if self._imported_modules is None:
            self._imported_modules = {module for s in self.summaries.values() for module, _ in s.imports}
        module = self.summaries[rel].module
        return module in self._imported_modules or module.rpartition(".")[2] in self._imported_modules

    def imported_file(self, importer: str | Path, module: str, level: int = 0) -> str | None:
        """The project file (rel) an import in ``importer`` names: `module` with `level` leading
        dots (`from ..backends import cuda` is "backends.cuda" at level 2); a package's
        `__init__.py`; None when no project file is it."""
        rel = self.relative(importer)
        if rel is None:
            return None
        dotted = _absolute(_module_name(rel), "." * level + module, rel.endswith("__init__.py")) if level else module
        path = dotted.replace(".", "/")
        found = next((c for c in (f"{path}.py", f"{path}/__init__.py") if c in self.summaries), None)
        if found is None and not level:  # a package under a source folder (`python/pkg/`, `src/pkg/`)
            found = self._module_files().get(dotted)
        return found

    def _module_files(self) -> dict[str, str]:
        """Module name -> file, for packages below a source folder (`kern/python/kern/gemm.py`
        is `kern.gemm`): each file under every name its folders allow, kept where unique."""
        if not hasattr(self, "_by_module"):
            seen: dict[str, set[str]] = {}
            for rel, summary in self.summaries.items():
                for name in _module_names(summary.module)[1:]:
                    seen.setdefault(name, set()).add(rel)
            self._by_module = {name: next(iter(rels)) for name, rels in seen.items() if len(rels) == 1}
        return self._by_module

    def covers(self, path: str | Path) -> bool:
        """The model summarised this file (its helpers are in the model)."""
        return self.relative(path) in self.summaries

    def importers_of(self, path: str | Path, name: str) -> list[str] | None:
        """The other project files that import ``name`` from the module of ``path`` (`from
        pkg.mod import name`) or import that module (`import pkg.mod`, whose `mod.name(...)`
        may call it); None when the file is not one the model read."""
        rel = self.relative(path)
        summary = self.summaries.get(rel) if rel is not None else None
        if summary is None:
            return None
        modules = _module_names(summary.module)
        wanted = {*modules, *(f"{module}.{name}" for module in modules)}
        return [other for other, other_summary in self.summaries.items()
                if other != rel and any(module in wanted for module, _line in other_summary.imports)]

    def imported_by_name(self, name: str) -> bool:
        """Some project module imports ``name`` from another module (``from m import name``)."""
        if self._imported_names is None:
            self._imported_names = {module.rpartition(".")[2] for s in self.summaries.values() for module, _ in s.imports}
        return name in self._imported_names

    def helper(self, name: str) -> Helper | None:
        """The gate helper called ``name``: found by what it returns, directly or through one
        level of helper calls (judged on first use; definitions are indexed by name)."""
        found = self.helpers.get(name)
        if found is not None or name not in self.definitions:
            return found
        if name not in self._followed:
            self._followed[name] = self._follow(name)
        return self._followed[name]

    def _follow(self, name: str) -> Helper | None:
        kinds = {n: h.fact for n, h in self.helpers.items() if h.kind != "skip"}
        if not kinds:
            return None
        judged = []
        for rel in self.definitions[name][:8]:
            try:
                source = (self.root / rel).read_bytes()
            except OSError:
                continue
            if not any(n.encode() in source for n in kinds):
                return None  # calls no helper: not a gate (and one meaning per name)
            judged.append(judge_definition(rel, source, name, kinds))
        meanings = {h.fact if h else None for h in judged}
        return judged[0] if len(meanings) == 1 else None

    def settled_definition(self, name: str) -> bool:
        """Every definition of the module-level function ``name`` in the project returns one
        constant (``gates.returns_one_constant``); read on first ask."""
        if name not in self._settled:
            self._settled[name] = bool(self.definitions.get(name)) and all(
                self._returns_one_constant(rel, name) for rel in self.definitions[name][:8])
        return self._settled[name]

    def _returns_one_constant(self, rel: str, name: str) -> bool:
        from ..python.gates import returns_one_constant

        try:
            tree = ast.parse((self.root / rel).read_bytes())
        except (OSError, SyntaxError, ValueError):
            return False
        return any(getattr(stmt, "name", None) == name and returns_one_constant(stmt) for stmt in tree.body)

    def fingerprint_for(self, path: Path) -> str:
        return self._fingerprint

    def explain(self, path: str | Path, line: int) -> Verdict:
        """Does the ROCm build run ``line`` of ``path``, and why (evidence with file:line)?"""
        verdict = self.module_verdict(path)
        if verdict is not None:
            return verdict
        from ..config import Settings
        from ..model import ParseFailure
        from ..python import LANGUAGE

        try:
            source = Path(path).read_bytes()
            ctx = LANGUAGE.make_context(str(path), source, Settings())
        except (OSError, ParseFailure) as exc:
            return Verdict(None, (Evidence(f"cannot read: {exc}"),))
        from . import Project

        ctx.project = Project(self.root, parts={"python": self})  # gates resolved through this model
        if not 1 <= line <= ctx.lines.line_count:
            return Verdict(None, (Evidence(f"line {line} is outside the file"),))
        offset = _first_code(ctx, line)
        reasons = ctx.rocm_blockers(offset)
        if reasons:
            return Verdict(False, tuple(reasons))
        return Verdict(True, (Evidence("no gate, skip or NVIDIA-only import keeps the ROCm build from this line"),))


def _first_code(ctx, line: int) -> int:
    start = ctx.lines.line_start(line - 1)
    text = ctx.lines.line_text(line - 1)
    return start + (len(text.encode()) - len(text.lstrip().encode()))


def build(project: "Project") -> "LazyPart":
    """The project's Python part, built on first use (see ``LazyPart``)."""
    from . import LazyPart

    return LazyPart(project, build_now, summarise_file)


def summarise_file(rel: str, source: bytes | None) -> list | None:
    """One file's summary as the cache keeps it (None: not a Python file, or unreadable)."""
    if source is None or not rel.endswith(".py"):
        return None
    return _to_json(summarize(rel, source))


def build_now(project: "Project", known: dict | None = None) -> PythonModel:
    """Summarise every Python file under the project root (stat-keyed cache; ``known``:
    summaries the workers already made)."""
    root = Path(project.root)
    cache_file = _cache_file(project)
    stats = project.files().python
    found = cached_summaries(str(cache_file) if cache_file is not None else None, str(root), stats,
                             summarise_file, known=known)
    model = PythonModel(root, {rel: _from_json(data) for rel, data in found.items()})
    model.finish(stats, project.files().build, project.files().docker)
    return model


def _cache_file(project: "Project") -> Path | None:
    """Where summaries persist: beside the result cache, when one is in use."""
    directory = project.cache_dir
    if directory is None:
        return None
    return Path(directory) / f"python-model-{SUMMARY_VERSION}-{digest(str(project.root))}.json"


def _to_json(summary: Summary) -> list:
    return [summary.module, summary.imports,
            [[h.name, h.fact.kind, _values_json(h.fact.rocm), _values_json(h.fact.nvidia), h.path, h.line,
              h.fact.note] for h in summary.helpers],
            summary.cuda_build, summary.defs, summary.rocm_build, summary.attribute_calls, summary.rocm_word,
            summary.fnuz_view, summary.platform_variables]


def _from_json(data: list) -> Summary:
    module, imports, helpers, cuda_build, defs, rocm_build, attribute_calls, rocm_word, fnuz_view, selectors = data
    return Summary(module, [(m, line) for m, line in imports],
                   [Helper(name, Fact(kind, _values_from(rocm), _values_from(nvidia), note), path, line)
                    for name, kind, rocm, nvidia, path, line, note in helpers], cuda_build, rocm_build, defs,
                   [(attribute, function, line) for attribute, function, line in attribute_calls], rocm_word, fnuz_view,
                   dict(selectors))


def _values_json(values) -> list | None:
    """A set of Python constants as JSON: [[type, value], ...] (SOME as ["some", null])."""
    if values is None:
        return None
    return sorted(([("some" if v is SOME else type(v).__name__), None if v is SOME else v] for v in values),
                  key=repr)


def _values_from(data) -> frozenset | None:
    if data is None:
        return None
    return frozenset(SOME if kind == "some" else value for kind, value in data)
