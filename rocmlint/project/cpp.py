"""The C++/CUDA/HIP half of the project model (design §2b): which files the AMD build
compiles, what every macro is there, which CUDA intrinsics the project shims, and whether
hipify rewrites the sources.

Built from per-file directive summaries (``summaries.py``, cached by stat) and build files
read as text (``buildfiles.py``). Macro values and include reachability depend on each
other, so they are computed together to a fixpoint (a few rounds at most). Queries take
absolute paths; rules reach them through ``ctx.project.part("cpp")``.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Callable

from ..config import DEFAULT_NVIDIA_MACROS, DEFAULT_ROCM_MACROS
from ..cpp.platform_names import describe_by_name, value_by_name
from ..lazy_re import lazy_compile
from ..platform_words import names_platform
from ..cpp.preprocessor import (
    CUDACC,
    CUDACC_IN_PORT,
    NOT_MACROS,
    WAVE_SIZE_MACRO,
    ChainWalker,
    Evaluator,
    define_parts,
    gate_polarity,
)
from ..evidence import KIND_BUILD_FILE, KIND_BY_NAME, KIND_COMPILE_DB, KIND_GATE_MACRO, KIND_HIP_TWIN, KIND_NVIDIA_MACRO, \
    KIND_ONLY_FROM_NVIDIA_FILE, KIND_PORT_PATH, KIND_ROCM_MACRO
from . import Evidence, Verdict, digest
from .conditions import MAX_HIP_BUILD_EVIDENCE
from .buildfiles import (
    BuildFacts,
    BuildFileError,
    CompileDatabase,
    hipify_custom_maps,
    merge_build_facts,
    read_autoconf_templates,
    read_cmake_files,
    read_makefiles,
    read_meson_files,
    read_compile_commands,
    read_hipify_custom_map,
    read_setup_py,
    setup_helpers,
)
from .cpp_cache import cached_build_facts, load_model, model_keys, save_model
from .summaries import (
    C_FAMILY_EXTENSIONS,
    SOURCE_EXTENSIONS,
    Summary,
    load_summaries,
    summary_directives,
    mentions_hip,
    read_build_files,
    summarise,
)
from .makefile import compiles_sources, is_makefile
from .tables import HIP_RUNTIME_HEADER, hipify_maps, nvidia_toolkit_macro
from .sibling_switches import infer_sibling_switches
from .templates import as_header, is_template

if TYPE_CHECKING:
    from . import LazyPart, Project

MAX_ROUNDS = 5
PORT_OPTION = "<port>"  # the build facts' cache key of the port configuration (no option is named so)
MAX_FILES = 60000  # above this the root is surely not one project (e.g. a home folder)
_IDENT = lazy_compile(r"[A-Za-z_]\w*")
_INCLUDE = lazy_compile(r'^[<"]([^>"]+)([>"])')
# What torch hipify rewrites: sources and the headers they include (hipify_python.py)
_HIPIFIED_EXTENSIONS = (".cu", ".cuh", ".c", ".cc", ".cpp", ".h", ".hpp")


@dataclass(frozen=True)
class MacroFact:
    """A macro in the AMD build: defined (True, with value or None), undefined (False)
    or unknown (None), and why."""

    state: bool | None
    value: int | None = None
    evidence: tuple[Evidence, ...] = ()

    def describe(self) -> str:
        if self.state is None:
            return "unknown"
        if self.state is False:
            return "undefined"
        return "defined" if self.value is None else f"defined as {self.value}"


UNKNOWN = MacroFact(None, None, (Evidence("no definition the model can see"),))


@dataclass(frozen=True)
class Shim:
    """A function-like macro the AMD build sees in place of a CUDA intrinsic."""

    name: str
    params: tuple[str, ...]
    body: str
    where: str

    def drops(self, index: int) -> bool:
        """Whether argument ``index`` never reaches the expansion (e.g. a *_sync mask)."""
        if index >= len(self.params):
            return False
        return not _mentions(self.body, self.params[index])


@lru_cache(maxsize=4096)
def _mentions(body: str, word: str) -> bool:
    """``word`` occurs in ``body`` as a whole word (asked again for each use of a shim)."""
    return re.search(r"\b" + re.escape(word) + r"\b", body) is not None


@dataclass
class _Def:
    rel: str
    line: int  # 0-based
    kind: str  # define | undef
    reach: bool | None
    value: int | None = None
    params: tuple[str, ...] | None = None
    body: str = ""
    name: str = ""
    guard: str = "1"  # the #if conditions around it as one expression (for the NVIDIA view)


@dataclass
class _Edge:
    includer: str
    line: int
    header: str
    target: str | None
    reach: bool | None
    guard: str = "1"  # the #if conditions around the #include (for the NVIDIA view)


@dataclass
class CppModel:
    root: str
    files: dict[str, Summary]
    facts: BuildFacts
    database: CompileDatabase | None
    fixed: dict[str, MacroFact]  # config and compile-database facts: never overridden
    inferred: dict[str, MacroFact] = field(default_factory=dict)
    # switches decided by what their branches include beside a sibling of the other platform
    guarded: dict[str, MacroFact] = field(default_factory=dict)
    defs: dict[str, list[_Def]] = field(default_factory=dict)
    edges: dict[str, list[_Edge]] = field(default_factory=dict)  # by includer
    includers: dict[str, list[_Edge]] = field(default_factory=dict)  # by target
    reach: dict[str, Verdict] = field(default_factory=dict)
    parent: dict[str, tuple[str, int]] = field(default_factory=dict)  # reached file -> (includer, line)
    roots: set[str] = field(default_factory=set)
    hipify_setting: object = "auto"
    shims: dict[str, Shim] = field(default_factory=dict)
    # function-like macros whose AMD definition drops arguments (``AMREX_HIP_OR_CUDA(a, b) a``):
    # code written in those arguments is never compiled by the AMD build
    droppers: dict[str, Shim] = field(default_factory=dict)
    # target -> (its includers, the #if conditions around each include), two parallel tuples
    # (the NVIDIA view's include graph; a pair per edge cost 4 MB on torch's headers, in the
    # parent and in each worker it forks): read it through ``includers_of``
    nvidia_includers: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    include_dirs: list[str] = field(default_factory=list)  # relative to root
    # Where the project compiles for AMD as HIP (none: it is a port, design §2e)
    hip_build: tuple[Evidence, ...] = ()
    port_paths: tuple[str, ...] = ()  # root-relative files/folders --port names ("" the whole project)
    # Files no C-family extension names that a project file #includes (``x.inc_isglobal``):
    # their stats, checked when a stored model is loaded (the walk does not see them)
    extra_stats: dict[str, tuple[int, int]] = field(default_factory=dict)
    # file -> 0-based line of an #error the AMD build certainly reaches: it never compiles the file
    fatal: dict[str, int] = field(default_factory=dict)
    _memo: dict = field(default_factory=dict, repr=False)
    _facts: dict = field(default_factory=dict, repr=False)  # (rel or None, name) -> MacroFact

    # --- queries (absolute or root-relative paths) -------------------------------------
    def rel(self, path: "str | os.PathLike[str]") -> str | None:
        absolute = os.path.abspath(os.fspath(path))
        if absolute == self.root or not absolute.startswith(self.root + os.sep):
            return None
        return absolute[len(self.root) + 1:].replace(os.sep, "/")

    def file_verdict(self, path) -> Verdict:
        """Whether the AMD build compiles this file at all, with the chain that decides."""
        rel = self.rel(path)
        if rel is None or rel not in self.files:
            return Verdict(None, (Evidence("outside the project model"),))
        return self.reach.get(rel, Verdict(None))

    # --- port or guard (design §2e) ---------------------------------------------------
    def ported(self, rel: str) -> bool:
        """Named by --port / ``port``: linted as a port, whatever the HIP build compiles."""
        return any(p == "" or rel == p or rel.startswith(p + "/") for p in self.port_paths)

    def mode_of(self, path) -> str:
        """"port" (the project has no HIP build, or --port names the file: every hazard is
        porting work) or "guard" (its HIP build decides; files only CUDA builds are quiet)."""
        rel = self.rel(path)
        return "port" if self.facts.port or (rel is not None and self.ported(rel)) else "guard"

    def mode_lines(self, path) -> list[str]:
        """Which mode applies to the file, and the build evidence that decides it."""
        rel = self.rel(path)
        if rel is not None and self.ported(rel) and not self.facts.port:
            return ["mode: port (named by --port / `port`: linted as a port although the project's HIP build "
                    "does not compile it)"]
        if self.facts.port and self.hip_build:
            shown = ", ".join(e.where for e in self.hip_build[:2] if e.where)
            return [f"mode: port (never built for AMD: its only HIP build is the hipify PyTorch runs on any CUDA "
                    f"extension ({shown}), and no source or build file names HIP or ROCm; its AMD build is this "
                    "CUDA code hipified and compiled by hipcc, so every hazard is porting work)"]
        if self.facts.port:
            return ["mode: port (the project has no HIP build: no build file compiles as HIP, no .hip source, "
                    "no compile_commands.json; its AMD build is the CUDA build compiled by hipcc, so every "
                    "hazard is porting work)"]
        shown = "; ".join(str(e) for e in self.hip_build[:2])
        return [f"mode: guard (the project has a HIP build: {shown}); a file only the CUDA build compiles is the "
                "maintainers' choice and is not checked (--port PATH lints it as a port)"]

    def include_chain(self, path) -> list[tuple[str, int]]:
        """(includer, 1-based line) from a translation unit down to this file."""
        rel = self.rel(path)
        chain: list[tuple[str, int]] = []
        seen = set()
        while rel in self.parent and rel not in seen:
            seen.add(rel)
            includer, line = self.parent[rel]
            chain.append((includer, line + 1))
            rel = includer
        return list(reversed(chain))

    def _unit_of(self, rel: str) -> str | None:
        """The translation unit through which the model reached this file."""
        chain = self.include_chain(os.path.join(self.root, rel))
        return chain[0][0] if chain else (rel if rel in self.roots else None)

    def macro(self, name: str, path=None) -> MacroFact:
        """The AMD value of ``name`` as seen from file ``path`` (before its own #defines)."""
        rel = self.rel(path) if path is not None else None
        return self._compiler_fact(rel, name, self._fact(rel, name))

    def resolver(self, path, settings=None):
        """What ``Conditionals`` asks for a macro the file has not set itself; the file's
        own configuration (``rocm-macros``/``nvidia-macros`` of a nested config) wins."""
        rel = self.rel(path)
        rocm = {settings.gate_macro, *settings.rocm_macros} if settings is not None else set()
        nvidia = set(settings.nvidia_macros) if settings is not None else set()

        def resolve(name: str) -> tuple[bool | None, int | None]:
            if name in rocm:
                return True, 1
            if name in nvidia:
                return False, None
            fact = self._compiler_fact(rel, name, self._fact(rel, name))
            return fact.state, fact.value
        return resolve

    def _compiler_fact(self, rel: str | None, name: str, fact: MacroFact) -> MacroFact:
        """``__CUDACC__`` where nothing in the project sets it: hipify (HIPIFY's and
        PyTorch's maps) rewrites it to ``__HIPCC__``, which hipcc defines, so a hipified file
        and a port (the CUDA code as hipify and hipcc would build it) take its branches;
        clang compiling a file as HIP defines no ``__CUDACC__``, so a HIP build that runs no
        hipify at all does not (where hipify runs but its reach is unclear, it stays unknown)."""
        if name != CUDACC or fact.state is not None or rel is None:
            return fact
        path = os.path.join(self.root, rel)
        if self.mode_of(path) == "port":
            return MacroFact(True, 1, (Evidence(CUDACC_IN_PORT),))
        hipified = self.hipified(path)
        if hipified.value is True:
            return MacroFact(True, 1, (Evidence("hipify rewrites __CUDACC__ to __HIPCC__ in this file, "
                                                "which hipcc defines"),) + hipified.evidence)
        if self.facts.hipify_dirs or self.hipify_setting is True:
            return fact  # hipify runs somewhere: whether it reaches this file is not known
        return MacroFact(False, None, (Evidence("the project's HIP build runs no hipify, and clang "
                                                "compiling HIP does not define __CUDACC__"),))

    def nvidia_macro(self, name: str) -> bool | None:
        """Whether the NVIDIA build defines ``name``: the ROCm macros are undefined there,
        the configured NVIDIA macros defined, a project macro follows its #if conditions."""
        memo = self._memo.setdefault("nvidia", {})
        if name in memo:
            return memo[name]
        memo[name] = None  # a macro whose conditions read itself stays unknown
        memo[name] = self._nvidia_macro(name)
        return memo[name]

    def _nvidia_macro(self, name: str) -> bool | None:
        if name in DEFAULT_ROCM_MACROS or name in self.facts.amd_defines:
            return False
        fixed = self.fixed.get(name)
        kind = fixed.evidence[0].kind if fixed is not None and fixed.evidence else ""
        if kind in (KIND_GATE_MACRO, KIND_ROCM_MACRO):
            return False
        if kind == KIND_NVIDIA_MACRO:
            return True
        inferred = self.inferred.get(name)
        if inferred is not None:
            return not inferred.state  # the branch that includes the HIP runtime is AMD's
        if name in self.facts.nvidia_defines:
            return True  # the build defines it in its NVIDIA configuration only
        if nvidia_toolkit_macro(name) or name in DEFAULT_NVIDIA_MACROS:
            return None  # the CUDA toolkit's own (e.g. __CUDA_ARCH__ in device passes only)
        defs = [d for d in self.defs.get(name, ()) if self.nvidia_file(d.rel) is not False]
        if not defs:
            return False if self.defs.get(name) else None
        evaluator = Evaluator({}, set(), lambda other: (self.nvidia_macro(other), None))
        states = set()
        for d in defs:
            taken = evaluator.evaluate(d.guard)
            states.add(None if taken is None else (bool(taken) and d.kind == "define"))
            if None in states:
                return None
        return True if True in states else False

    def includers_of(self, rel: str) -> list[tuple[str, str]]:
        """(includer, #if conditions around its include) of every #include edge to ``rel``."""
        found = self.nvidia_includers.get(rel)
        return list(zip(*found)) if found else []

    def nvidia_file(self, rel: str) -> bool | None:
        """Whether the NVIDIA build compiles a file (root-relative): False when every
        include of it sits under conditions false there, or in files it never compiles."""
        memo = self._memo.setdefault("nvidia-file", {})
        if rel in memo:
            return memo[rel]
        memo[rel] = None  # include cycles: unknown
        includers = self.includers_of(rel)
        if not includers:
            memo[rel] = True
            return True
        evaluator = Evaluator({}, set(), lambda other: (self.nvidia_macro(other), None))
        states = set()
        for includer, guard in includers:
            taken = evaluator.evaluate(guard)
            states.add(False if taken == 0 else self.nvidia_file(includer) if taken else None)
            if True in states:
                break
        memo[rel] = True if True in states else (False if states == {False} else None)
        return memo[rel]

    def arch_macro(self, name: str) -> bool:
        """A project macro that selects by GPU architecture: every #define of it sits under
        conditions naming __gfx*__/wave-size macros or other such macros (``CDNA``, ``RDNA``),
        or takes its value from one (``#define LANES __AMDGCN_WAVEFRONT_SIZE``)."""
        memo = self._memo.setdefault("arch", {})
        if name in memo:
            return memo[name]
        memo[name] = False  # cycles: not an architecture selector

        def selects(text: str) -> bool:
            return bool(WAVE_SIZE_MACRO.search(text)) or any(
                self.arch_macro(n) for n in _IDENT.findall(text) if n not in NOT_MACROS and n != name)
        defines = [d for d in self.defs.get(name, ()) if d.kind == "define"]
        memo[name] = bool(defines) and all(selects(d.guard) or (d.params is None and selects(d.body))
                                           for d in defines)
        return memo[name]

    def hip_only(self, path) -> bool:
        """A file only the AMD build compiles (a HIP vendor header included under the ROCm
        macro, or any file of a ROCm-native project): code in it was written for AMD."""
        rel = self.rel(path)
        if rel is None or rel not in self.files:
            return False
        if self.rocm_native:
            return True
        return self.reach.get(rel, Verdict(None)).value is not False and self.nvidia_file(rel) is False

    @property
    def rocm_native(self) -> bool:
        """Written for ROCm: some file includes HIP and none has a CUDA path (no CUDA toolkit
        header, no nvcc macro). A hipified copy beside its CUDA original is not."""
        native = self._memo.get("rocm-native")
        if native is None:
            files = self.files.values()
            native = self._memo["rocm-native"] = any(s.hip for s in files) and not any(s.cuda for s in files)
        return native

    def amd_only_macro(self, name: str) -> bool:
        """A macro only the AMD build can define (e.g. derived from the ROCm macro)."""
        return self.nvidia_macro(name) is False and self.macro(name).state is not False

    def nvidia_resolver(self, path, settings=None):
        """``resolver`` for the NVIDIA build: what ``Conditionals`` asks for the NVIDIA view."""
        rocm = {settings.gate_macro, *settings.rocm_macros} if settings is not None else set()
        nvidia = set(settings.nvidia_macros) if settings is not None else set()

        def resolve(name: str) -> tuple[bool | None, int | None]:
            if name in rocm:
                return False, None
            if name in nvidia:
                return True, None
            return self.nvidia_macro(name), None
        return resolve

    def macro_body(self, name: str, path=None) -> tuple[str, str] | None:
        """(replacement text, where) of an object-like macro another file of the project
        defines for the AMD build, when its live definitions agree (constants in headers)."""
        rel = self.rel(path) if path is not None else None
        # another source file's #define never reaches this translation unit (HeCBench's
        # snake-hip/main.cu `#define warp_size 32` is not softmax's `int warp_size`)
        live = [d for d in self.defs.get(name, ()) if d.rel != rel and d.reach is not False
                and os.path.splitext(d.rel)[1].lower() not in SOURCE_EXTENSIONS
                and self.reach.get(d.rel, Verdict(None)).value is not False]
        if not live or any(d.kind != "define" or d.params is not None or d.reach is None for d in live):
            return None
        if len({d.body for d in live}) != 1:
            return None
        return live[0].body, f"{live[0].rel}:{live[0].line + 1}"

    def macros_matching(self, pattern: str) -> frozenset[str]:
        """Names of the project's object-like macros one of whose bodies (any definition,
        live or not: for pre-checks) matches the regex ``pattern``, or is the bare name of
        such a macro (``#define WS WAVE``)."""
        key = ("macros-matching", pattern)
        found = self._memo.get(key)
        if found is None:
            compiled = re.compile(pattern)
            names = {name for name, defs in self.defs.items()
                     if any(d.kind == "define" and d.params is None and compiled.search(d.body) for d in defs)}
            aliases = {name: {d.body.strip("() \t") for d in defs if d.kind == "define" and d.params is None}
                       for name, defs in self.defs.items()}
            grown = True
            while grown:
                grown = False
                for name, bodies in aliases.items():
                    if name not in names and not bodies.isdisjoint(names):
                        names.add(name)
                        grown = True
            found = self._memo[key] = frozenset(names)
        return found

    def fact(self, kind: str, key: str, path) -> str | None:
        """A recorded fact's value now (``Project.facts_hold``): another file's macro body,
        the project file an #include names."""
        if kind == "cpp:macro-body":
            found = self.macro_body(key, path)
            return found[0] if found is not None else ""
        if kind == "cpp:macros-matching":
            return ",".join(sorted(self.macros_matching(key)))
        if kind == "cpp:include":
            rel = self.rel(path)
            return (model_resolve(self, rel, key) or "") if rel is not None else ""
        if kind == "cpp:generated":
            why = self.facts.generated_header(key)
            return str(why) if why is not None else ""
        return None

    def describes(self, rel: str, data: bytes) -> bool:
        """Whether new contents ``data`` of file ``rel`` leave the model as it is: a C-family
        file whose directives are all where they were (the model reads nothing else of it),
        or a file the model never reads (not C-family, Python or a build file)."""
        summary = self.files.get(rel)
        if summary is not None:
            return Summary(summarise(data)).signature == summary.signature
        name = rel.rpartition("/")[2]
        return not (name.endswith(tuple(C_FAMILY_EXTENSIONS)) or name.endswith((".py", ".cmake", ".json", ".txt"))
                    or name in ("meson.build", "meson_options.txt", "meson.options"))

    def resolve_include(self, includer: str, header: str, angle: bool = False) -> str | None:
        """The project file (root-relative) an ``#include`` in ``includer`` names, or None."""
        return model_resolve(self, includer, header, angle)

    def shim(self, name: str) -> Shim | None:
        """The AMD build's function-like #define of a CUDA intrinsic, if the project has one."""
        return self.shims.get(name)

    def hipified(self, path) -> Verdict:
        """Whether hipify rewrites this file's CUDA includes before the AMD build."""
        if self.hipify_setting is False:
            return Verdict(False, (Evidence("hipify = false in the configuration"),))
        rel = self.rel(path)
        if self.hipify_setting is True:
            return Verdict(True, (Evidence("hipify = true in the configuration"),))
        if rel is None or not rel.endswith(_HIPIFIED_EXTENSIONS):
            return Verdict(False)
        for folder, why in self.facts.hipify_dirs.items():
            if folder == "" or rel.startswith(folder + "/"):
                return Verdict(True, (why,))
        return Verdict(False)

    def hipify_maps(self, path, header: str) -> str | None:
        """The HIP header hipify writes for ``header`` in this file, or None (the project's
        custom map first, as hipify_torch applies it)."""
        if self.hipified(path).value is not True:
            return None
        renamed = self.facts.hipify_renames.get(header)
        return renamed[0] if renamed is not None else hipify_maps(header)

    def fingerprint_for(self, path) -> str:
        """Digest of the facts this file's results depend on: its reachability, the AMD
        values of the macros its conditions read, shims and hipify."""
        rel = self.rel(path)
        summary = self.files.get(rel) if rel is not None else None
        if rel is None or summary is None:
            return ""
        verdict = self.reach.get(rel, Verdict(None))
        shims = self._memo.get("shims-digest")
        if shims is None:
            shims = self._memo["shims-digest"] = digest(*sorted(map(repr, self.shims.values())),
                                                        *sorted(map(repr, self.droppers.values())))
        renames = self._memo.get("hipify-renames-digest")
        if renames is None:
            renames = self._memo["hipify-renames-digest"] = digest(
                *sorted(f"{header}>{target}" for header, (target, _why) in self.facts.hipify_renames.items()))
        parts = [str(verdict.value), str(self.hipified(path).value), self.mode_of(path), shims, renames,
                 str(self.rocm_native),
                 str(self.nvidia_file(rel)),
                 repr(verdict.evidence), repr(self.include_chain(path))]  # the evidence findings carry
        names = self._memo.setdefault("name-facts", {})
        for name in sorted(summary.conditions):
            fact = self._fact(rel, name)
            other = names.get(name)
            if other is None:
                other = names[name] = f"{self.nvidia_macro(name)}:{self.arch_macro(name)}"
            parts.append(f"{name}={fact.state}:{fact.value}:{fact.evidence!r}:{other}")
        return digest(*parts)

    # --- macro values -----------------------------------------------------------------
    def _fact(self, rel: str | None, name: str) -> MacroFact:
        defs = self.defs.get(name)
        # A file that neither defines the name nor has a unit's command line of its own sees
        # the project's value: one answer per name, shared by thousands of headers.
        shared = self.database is None and (not defs or all(d.rel != rel for d in defs))
        key = (None if shared else rel, name)
        memo = self._facts
        if key in memo:
            return memo[key]
        fact = self._compute_fact(None if shared else rel, name)
        memo[key] = fact
        return fact

    def _compute_fact(self, rel: str | None, name: str) -> MacroFact:
        database = self.database
        fixed = self.fixed.get(name)
        if database is not None and rel is not None and fixed is not None and fixed.evidence and \
                fixed.evidence[0].kind == KIND_COMPILE_DB:
            unit = self._unit_of(rel)
            flag = database.unit_macro(os.path.join(self.root, unit), name) if unit else None
            if flag is not None:  # this file's own translation unit decides
                return MacroFact(flag[0], flag[1], (Evidence(f"{'-D' if flag[0] else '-U'}{name} on the command "
                                                             f"line of {unit}", database.path),))
        if name in self.fixed:
            return self.fixed[name]
        if name in self.facts.amd_defines:
            value, why = self.facts.amd_defines[name]
            guarded = self.guarded.get(name)
            if value is None and guarded is not None and guarded.state:  # the build sets a value it hides
                return MacroFact(True, guarded.value, (why,) + guarded.evidence)
            return MacroFact(True, value, (why,))
        if name in self.facts.configured_defines:
            value, why = self.facts.configured_defines[name]
            return MacroFact(True, value, (why,))
        if name in self.facts.configured_undefines:
            return MacroFact(False, None, (self.facts.configured_undefines[name],))
        if name in self.facts.configured_unknown:  # a template writes it from a value not known
            return self._by_name(name)
        if name in self.inferred:
            return self.inferred[name]
        defs = self.defs.get(name)
        own_default = None
        if defs:
            others = [d for d in defs if d.rel != rel and self.reach.get(d.rel, Verdict(None)).value is not False]
            live = [d for d in others if d.kind == "define" and d.reach is True]
            doubtful = [d for d in others if d.reach is None or (d.kind == "undef" and d.reach is True)]
            own = [d for d in defs if d.rel == rel and d.reach is not False]
            if live and not doubtful:
                values = {d.value for d in live}
                value = values.pop() if len(values) == 1 else None
                d = live[0]
                more = f" (and {len(live) - 1} more)" if len(live) > 1 else ""
                return MacroFact(True, value, (Evidence(f"#define {name}{more}", f"{d.rel}:{d.line + 1}"),))
            if live or doubtful:
                d = (doubtful or live)[0]
                undecided = Evidence(f"#{d.kind} {name} under a condition the model cannot decide",
                                     f"{d.rel}:{d.line + 1}")
                if not live:  # only doubtful definitions: the toolkit table or the name still decide
                    decided = self._table_fact(name) or self._by_name(name)
                    if decided.state is not None:
                        return MacroFact(decided.state, decided.value, decided.evidence + (Evidence(
                            f"not counted: #{d.kind} {name} under a condition the model cannot decide",
                            undecided.where),))
                return MacroFact(None, None, (undecided,))
            if not own:
                shown = [d for d in defs if d.rel != rel][:3]
                dead = tuple(Evidence(f"#{d.kind} {name} only where the AMD build never goes"
                                      + ("" if d.reach is False else " (file not in the AMD build)"),
                                      f"{d.rel}:{d.line + 1}") for d in shown)
                return MacroFact(False, None, dead)
            if all(f"!defined({name})" in d.guard for d in own):
                own_default = own[0]
        fact = self._table_fact(name)
        if fact is None:
            fact = MacroFact(False, None, (self.facts.nvidia_defines[name],)) \
                if name in self.facts.nvidia_defines else self._by_name(name)
        if own_default is not None and fact.state is True:
            # `#ifndef X` / `#define X 1`: defined before its own default only by the build, and
            # the build does not (checked above). Guessing "defined" would make the default dead,
            # then X undefined, then the default live again: the solver would never settle.
            return MacroFact(False, None, (Evidence(f"not defined before its own default (#ifndef {name}), "
                                                    "and the build does not define it",
                                                    f"{own_default.rel}:{own_default.line + 1}"),))
        return fact

    @staticmethod
    def _table_fact(name: str) -> MacroFact | None:
        """Undefined in every AMD build: a CUDA toolkit / CUTLASS macro, or nvcc's."""
        if nvidia_toolkit_macro(name) or name in DEFAULT_NVIDIA_MACROS:
            return MacroFact(False, None, (Evidence(f"{name} is a CUDA toolkit / CUTLASS macro, not defined in "
                                                    "an AMD build", "table"),))
        return None

    def _by_name(self, name: str) -> MacroFact:
        """No definition decides: the platform the name states (weaker evidence), below
        the template that writes it from a value rocmlint cannot evaluate, if any."""
        written = self.facts.configured_unknown.get(name)
        guarded = self.guarded.get(name)
        if guarded is not None:  # what the code states outranks a name (design §2g)
            return dataclasses.replace(guarded, evidence=guarded.evidence + ((written,) if written is not None else ()))
        value = value_by_name(name, self.facts.port)
        if value is None:
            return MacroFact(None, None, (written,)) if written is not None else UNKNOWN
        by_name = Evidence(describe_by_name(name, self.facts.port), "", KIND_BY_NAME)
        return MacroFact(value, 1 if value else None, (by_name,) + ((written,) if written is not None else ()))

    # --- explain --------------------------------------------------------------------
    def explain_file(self, path) -> list[str]:
        verdict = self.file_verdict(path)
        lines = []
        state = {True: "compiled by the AMD build", False: "NOT compiled by the AMD build",
                 None: "maybe compiled by the AMD build"}[verdict.value]
        lines.append(f"file: {state}")
        chain = self.include_chain(path)
        rel = self.rel(path)
        if chain:
            lines.append(f"  translation unit: {chain[0][0]}")
            for includer, line in chain:
                lines.append(f"    {includer}:{line} includes ->")
            lines.append(f"    {rel}")
        for item in verdict.evidence:
            lines.append(f"  {item}")
        if verdict.value is False:
            lines.extend(self._root_cause(verdict))
        return lines

    def _root_cause(self, verdict: Verdict) -> list[str]:
        """Follow "included only from a file the AMD build never compiles" up to the fact
        that decides (a build file, a dead #include)."""
        out: list[str] = []
        seen: set[str] = set()
        while verdict.evidence and verdict.evidence[0].kind == KIND_ONLY_FROM_NVIDIA_FILE:
            includer = verdict.evidence[0].where.rpartition(":")[0]
            if includer in seen or includer not in self.reach:
                break
            seen.add(includer)
            verdict = self.reach[includer]
            out.append(f"    because {includer}: {verdict.evidence[0] if verdict.evidence else 'unknown'}")
        return out


def build(project: "Project") -> "LazyPart":
    """The project's C++ part, built on first use (see ``LazyPart``). The cheap pre-check of a
    big run and the build read the project's files once (``_Inputs``)."""
    from . import LazyPart

    location = _database_location(project)
    # A bad -p / compile-commands is a clear error now (exit 2), not in the middle of a run.
    database = read_compile_commands(location) if location else None
    found: list[_Inputs] = []

    def inputs() -> _Inputs:
        if not found:
            found.append(_Inputs(project, location, database))
        return found[0]

    def settled_none(p) -> bool:
        i = inputs()
        if not nothing_to_model(i):
            return False
        if len(i.stats) <= MAX_FILES:  # cached as a built model is: the next run reads no file for it
            save_model(p.cache_dir, i.root, model_keys(i.root, i.stats, i.build_stats, p.settings, i.location),
                       i.stats, None)
        return True

    def read_build_files(_p) -> None:
        try:
            inputs().facts
        except Exception:  # noqa: BLE001 - read again by the build, which reports it
            pass

    return LazyPart(project, lambda p, known: build_now(p, known, inputs()), summarise_file, settled_none,
                    read_build_files)


class _Inputs:
    """What both the pre-check and the build read: the C-family files' stats, the build
    files and the compile database."""

    def __init__(self, project: "Project", location: str, database: CompileDatabase | None) -> None:
        self.root = os.path.abspath(str(project.root))
        files = project.files()
        self.stats, self.build_stats = files.c_family, dict(files.build)
        self.python_stats = files.python
        self.build_texts = read_build_files(self.root, self.build_stats)
        self.helpers = setup_helpers(self.root, self.build_texts)  # helper -> its setup.py's folder
        # Build helpers setup.py imports, then the hipify custom maps the build files name: read
        # with the build files, and part of the model's key.
        self._add_build_files(list(self.helpers))
        self._add_build_files(hipify_custom_maps(self.root, self.build_texts))
        self.location, self.database = location, database
        self.build_options = project.settings.build_options if project.settings is not None else ()
        self.cache_dir = project.cache_dir

    def _add_build_files(self, rels: list[str]) -> None:
        stats = {}
        for rel in rels:
            try:
                st = os.stat(os.path.join(self.root, rel))
            except OSError:
                continue
            stats[rel] = (st.st_mtime_ns, st.st_size)
        self.build_stats.update(stats)
        self.build_texts.update(read_build_files(self.root, stats))

    @cached_property
    def facts(self) -> BuildFacts:
        """The build files' facts in the project's AMD build: its HIP build's configuration,
        or, where it has none, the port's (its CUDA configuration compiled by hipcc)."""
        options = dict(self.build_options)
        facts = cached_build_facts(self.cache_dir, self.root, self.build_texts, self.helpers, options,
                                   lambda: _read_build_facts(self.build_texts, self.helpers, options))
        self.guarded_facts = facts
        # A reader that failed leaves no evidence either way: the project stays guarded
        if facts.complete and (not _builds_for_amd(facts, self.database, self.stats) or self.never_ported(facts)):
            if self.builds_read:
                facts = cached_build_facts(self.cache_dir, self.root, self.build_texts, self.helpers,
                                           {**options, PORT_OPTION: "ON"},
                                           lambda: _read_build_facts(self.build_texts, self.helpers, options, port=True))
            else:  # no build file: the port's facts are the same few
                facts = dataclasses.replace(facts, port=True)
        _python_listing(facts, self.root, self.build_texts, self.stats, self.python_stats)
        _named_beside(facts, self.root, self.build_texts, self.stats, self.python_stats)
        return facts

    def never_ported(self, facts: BuildFacts) -> bool:
        """The project's only AMD build is the hipify PyTorch runs on any CUDA extension
        (``CUDAExtension``/``BuildExtension``), and nothing in it names HIP or ROCm: no source
        (``hip_mentioned``, already searched by the pre-check), no build file, no .hip file, no
        compile database. Its authors never built it for AMD: it is a port, whose AMD build is
        this CUDA code as hipify and hipcc would build it (hipify's header renames still hold)."""
        if not facts.torch_hipify_only or self.database is not None or self.hip_mentioned:
            return False
        if any(rel.endswith(".hip") for rel in self.stats):
            return False
        return not any(_names_hip_in_code(rel, text) for rel, text in self.build_texts.items())

    @property
    def builds_read(self) -> bool:
        """Some build file (CMake, meson, a Makefile, setup.py) describes the build."""
        return any(not is_template(rel) for rel in self.build_texts)

    @cached_property
    def names_no_amd_build(self) -> bool:
        """No compile database, no .hip file, and no build file holds a word by which a build
        reader recognises an AMD build: ``_builds_for_amd`` is False, known without reading
        them (the pre-check and the build both ask: searched once)."""
        return self.database is None and not any(rel.endswith(".hip") for rel in self.stats) and \
            not _AMD_BUILD_WORDS.search("\n".join(self.build_texts.values()))

    @cached_property
    def hip_mentioned(self) -> bool:
        """Some C-family file names HIP (reads files up to the first that does)."""
        return mentions_hip(self.root, self.stats)

    def too_many(self) -> bool:
        """Surely not one project (a home folder): no model, and say so."""
        if len(self.stats) <= MAX_FILES:
            return False
        import sys

        print(f"rocmlint: {self.root} holds more than {MAX_FILES} C/C++ files: no project model "
              "(lint from the project's folder)", file=sys.stderr)
        return True


_BUILD_COMMENT = lazy_compile(r"#[^\n]*")


def _names_hip_in_code(rel: str, text: str) -> bool:
    """A build file names HIP or ROCm outside its comments: a Python script in a name or a
    string (``torch.version.hip``, ``"ROCM_HOME"``), CMake/meson/Make in a command or a value."""
    if not rel.endswith(".py"):
        return names_platform(_BUILD_COMMENT.sub("", text), "cmake-hip")
    if not names_platform(text, "python-build"):
        return False  # not in the whole text, so not in its names and strings: no tokenizing
    if names_platform(_BUILD_COMMENT.sub("", text), "python-build"):
        return True  # outside every `#` to the line's end: in a name or a string
    import io
    import tokenize

    try:
        words = [tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                 if tok.type in (tokenize.NAME, tokenize.STRING)]
    except (tokenize.TokenError, SyntaxError):
        return names_platform(text, "python-build")
    return names_platform(" ".join(words), "python-build")


def port_paths(root: str, settings) -> tuple[str, ...]:
    """The --port / ``port`` paths inside this project, root-relative ("" for the root)."""
    found = []
    for path in settings.port if settings is not None else ():
        absolute = os.path.abspath(path)
        if absolute == root:
            found.append("")
        elif absolute.startswith(root + os.sep):
            found.append(absolute[len(root) + 1:].replace(os.sep, "/").rstrip("/"))
    return tuple(found)


def _database_location(project: "Project") -> str:
    """The ROCm build's compile_commands.json (or its folder) named by -p or the config."""
    settings = project.settings
    location = project.compile_commands or (settings.compile_commands if settings else "")
    if location and not os.path.isabs(location) and not project.compile_commands \
            and settings is not None and settings.config_dir:
        location = os.path.join(settings.config_dir, location)
    return location


def summarise_file(rel: str, data: bytes) -> Summary | None:
    """One C-family file's summary, made by the worker that reads it (``Summary.prepared``)."""
    return Summary.prepared(summarise(data)) if os.path.splitext(rel)[1].lower() in C_FAMILY_EXTENSIONS else None


def build_now(project: "Project", known: dict | None = None, inputs: _Inputs | None = None) -> CppModel | None:
    """The model, or None when there is nothing to model (a CUDA-only tree). ``known``:
    summaries the workers already made."""
    if inputs is None:
        location = _database_location(project)
        inputs = _Inputs(project, location, read_compile_commands(location) if location else None)
    if inputs.too_many():
        return None
    cache_dir = project.cache_dir
    keys = model_keys(inputs.root, inputs.stats, inputs.build_stats, project.settings, inputs.location)
    cached = load_model(cache_dir, inputs.root, keys, inputs.stats)
    if cached is not None:
        return cached if cached != "none" else None
    try:
        model = _build(project, inputs, known or {})
    except BuildFileError:
        raise  # the user's -p / compile-commands: a clear error, exit 2
    except Exception as exc:  # noqa: BLE001 - a model bug must not stop the lint
        import sys

        if os.environ.get("ROCMLINT_DEBUG"):
            raise
        print(f"rocmlint: warning: no project model ({type(exc).__name__}: {exc}); files are judged "
              "one by one. Please report it (ROCMLINT_DEBUG=1 shows the traceback).", file=sys.stderr)
        return None
    save_model(cache_dir, inputs.root, keys, inputs.stats, model)
    return model


def _read_build_facts(build_texts: dict[str, str], helpers: dict[str, str], options=None,
                      port: bool = False) -> BuildFacts:
    """The build files' facts under the ROCm configuration; ``port``: a project with no HIP
    build, whose AMD build is its CUDA configuration compiled by hipcc."""
    # Imported here: a run whose files never ask for the model (one .py) skips their import.
    from .pybuild import read_build as read_python_build
    from .pybuild import read_builders

    facts = BuildFacts(port=port)
    facts.texts = [text for rel, text in build_texts.items() if rel not in helpers and not is_template(rel)]
    templates = {rel: text for rel, text in build_texts.items() if is_template(rel)}
    for rel, text in build_texts.items():
        if rel.endswith(".json"):
            read_hipify_custom_map(facts, rel, text)
        elif rel in helpers:
            read_setup_py(facts, rel, text, folder=helpers[rel])
            folder = helpers[rel]
            _guarded_read(facts, "op builder", lambda: _merge_python_build(facts, read_builders(rel, text, folder), []))
            _guarded_read(facts, "build helper",
                          lambda: _merge_python_build(facts, *read_python_build(rel, text, folder, port=port)))
        elif rel.endswith("setup.py"):
            read_setup_py(facts, rel, text)
            _guarded_read(facts, "setup.py", lambda: _merge_python_build(facts, *read_python_build(rel, text, port=port)))
    cmake = {rel: text for rel, text in build_texts.items() if rel.endswith((".txt", ".cmake"))}
    _guarded_read(facts, "CMake", lambda: read_cmake_files(facts, cmake, options, templates))
    meson = {rel: text for rel, text in build_texts.items() if rel.endswith("meson.build")}
    if meson:
        _guarded_read(facts, "meson.build", lambda: read_meson_files(facts, meson, options, templates))
    makefiles = {rel: text for rel, text in build_texts.items() if is_makefile(rel.rpartition("/")[2])}
    if makefiles:
        _guarded_read(facts, "Makefile", lambda: read_makefiles(facts, makefiles))
    read_autoconf_templates(facts, templates)
    facts.torch_hipify_only = not facts.hip_build and bool(facts.hipify_dirs) and not facts.hipify_outputs \
        and not facts.hipify_renames and set(facts.hipify_dirs) <= facts.torch_extension_dirs
    for folder, why in facts.hipify_dirs.items():  # hipify (CMake, setup.py, a torch extension)
        if len(facts.hip_build) < MAX_HIP_BUILD_EVIDENCE:
            facts.hip_build.append(Evidence(f"{why.what} (a HIP build of {folder or 'the project'})", why.where,
                                            KIND_BUILD_FILE))
    return facts


_SOURCE_NAME = lazy_compile(r"\.(?:cu|cpp|cc|cxx|c|hip)$")
MAX_PYTHON_BYTES = 64 << 20  # Python text searched for source names (a bigger tree: no verdict)


def _python_listing(facts: BuildFacts, root: str, build_texts: dict[str, str], stats: dict,
                    python_stats: dict) -> None:
    """A project built only by Python scripts (setup.py and the op builders it imports; no
    CMake, no meson) names every source it compiles: a source that no Python file of the
    project names (a build script, an op builder, or a module that JIT-compiles it with
    ``load(sources=...)``) is in no build."""
    python_uses = [u for u in facts.uses if u.evidence.where.partition(":")[0].endswith(".py")]
    other = any(rel.endswith(("CMakeLists.txt", ".cmake", "meson.build"))
                or (is_makefile(rel.rpartition("/")[2]) and compiles_sources(text)) for rel, text in build_texts.items())
    if not python_uses or other or sum(size for _mtime, size in python_stats.values()) > MAX_PYTHON_BYTES:
        return
    names = {rel.rpartition("/")[2] for rel in stats if _SOURCE_NAME.search(rel)}
    named: set[str] = set()
    for rel in python_stats:
        try:
            with open(os.path.join(root, rel), "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        named |= {name for name in names - named if name.encode() in data}
        if named == names:
            break
    facts.named_in_python = frozenset(named)
    where = min((rel for rel in build_texts if rel.endswith("setup.py")), key=len, default=python_uses[0].evidence.where)
    facts.python_listed = Evidence("no build names it: the project is built by setup.py and the op builders it "
                                   "imports, which list every source they compile, and no Python file names "
                                   "this one", where, KIND_BUILD_FILE)


def _named_beside(facts: BuildFacts, root: str, build_texts: dict[str, str], stats: dict,
                  python_stats: dict) -> None:
    """``facts.unnamed``: the sources a CMake build leaves out of a folder whose others it
    names (``BuildFacts.named_beside``), less those another build may compile: a meson build
    anywhere (its lists are not resolved here), a Makefile that compiles sources in their folder
    or above it (pattern rules, ``$(wildcard)``), and those any Python file of the project
    names (a JIT ``load(sources=...)``, a script that writes a source list)."""
    if any(rel.endswith("meson.build") for rel in build_texts):
        return
    found = facts.named_beside(rel for rel in stats if _SOURCE_NAME.search(rel))
    made = [rel.rpartition("/")[0] for rel, text in build_texts.items()
            if is_makefile(rel.rpartition("/")[2]) and _MAKES_OBJECTS.search(text)] if found else []
    for rel in [r for r in found if any(not m or r.startswith(m + "/") for m in made)]:
        del found[rel]
    if not found:
        return
    if sum(size for _mtime, size in python_stats.values()) > MAX_PYTHON_BYTES:
        return  # too much Python to search: no verdict
    stems = {rel: os.path.splitext(rel.rpartition("/")[2])[0].encode() for rel in found}
    # Python anywhere; beside the source, any file but code and prose (a script that compiles it)
    beside: set[str] = set()
    for folder in {rel.rpartition("/")[0] for rel in found}:
        try:
            entries = list(os.scandir(os.path.join(root, folder)))
        except OSError:
            return
        for entry in entries:
            ext = os.path.splitext(entry.name)[1].lower()
            if ext not in C_FAMILY_EXTENSIONS and ext not in _PROSE and not entry.name.endswith(".py"):
                try:
                    if entry.is_file() and entry.stat().st_size <= MAX_SCRIPT_BYTES:
                        beside.add(f"{folder}/{entry.name}" if folder else entry.name)
                except OSError:
                    continue
    for rel in [*python_stats, *sorted(beside)]:
        try:
            with open(os.path.join(root, rel), "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        for source in [r for r, stem in stems.items() if stem in data]:
            del stems[source], found[source]
        if not found:
            return
    facts.unnamed = found


# A Makefile that may compile something (a pattern rule ``%.o: %.cu`` too, or a compiler)
_MAKES_OBJECTS = lazy_compile(r"\.(?:cu|hip|cpp|cc|cxx|c|o)\b|\b(?:nvcc|hipcc|CXX|CC)\b")
_PROSE = frozenset({".md", ".rst", ".html", ".htm", ".pdf", ".png", ".jpg", ".svg"})
MAX_SCRIPT_BYTES = 1 << 20


def _merge_python_build(facts: BuildFacts, uses: list, hipify_outputs: list) -> None:
    merge_build_facts(facts, uses, {})
    facts.hipify_outputs.extend(hipify_outputs)


def _guarded_read(facts: BuildFacts, what: str, read) -> None:
    """A reader's bug costs its facts (a warning), never the lint."""
    try:
        read()
    except Exception as exc:  # noqa: BLE001
        import sys

        facts.complete = False
        if os.environ.get("ROCMLINT_DEBUG"):
            raise
        print(f"rocmlint: warning: {what} files not read ({type(exc).__name__}: {exc}); please report it "
              "(ROCMLINT_DEBUG=1 shows the traceback)", file=sys.stderr)


def hip_build_evidence(facts: BuildFacts, database: CompileDatabase | None, stats: dict,
                       written_for_hip: str | None = None) -> list[Evidence]:
    """Where the project builds for AMD as HIP (design §2e): the ROCm build's compile database,
    build files that compile as HIP (language, hipcc, hipify, a torch extension), .hip files;
    with no build file at all, sources written for HIP (``written_for_hip``: one of them).
    Empty: no HIP build, the project is a port waiting to happen."""
    found = []
    if written_for_hip is not None:
        found.append(Evidence("its sources have HIP branches, and no build file says otherwise", written_for_hip))
    if database is not None:
        found.append(Evidence("the ROCm build's compile_commands.json", database.path, KIND_COMPILE_DB))
    found.extend(facts.hip_build)
    hip_file = next((rel for rel in stats if rel.endswith(".hip")), None)
    if hip_file is not None:
        found.append(Evidence("a .hip source", hip_file))
    return found


def _builds_for_amd(facts: BuildFacts, database: CompileDatabase | None, stats: dict) -> bool:
    """The project builds for AMD: a HIP build (``hip_build_evidence``)."""
    return bool(hip_build_evidence(facts, database, stats))


# Every word by which a build reader recognises an AMD build (the readers' HIP words, a
# selector's "amd", hipify, a torch extension that hipifies on ROCm), matched loosely.
_AMD_BUILD_WORDS = lazy_compile(r"hip|rocm|roc(?:blas|prim|thrust|wmma)|(?<![a-z0-9])amd(?![a-z0-9])|CUDAExtension|BuildExtension",
                                re.IGNORECASE)


def nothing_to_model(inputs: _Inputs) -> bool:
    """Cheaply (stats, build files, a byte search that stops at the first HIP mention): the
    model would surely be None, CUDA-only code with no HIP anywhere. A big run then checks
    every C++ file in its first pass, without summarising any for a model."""
    if inputs.too_many():
        return True
    if inputs.hip_mentioned:  # asked first: the build files are then read while the workers run
        return False
    if inputs.names_no_amd_build:
        return True
    return not _builds_for_amd(inputs.facts, inputs.database, inputs.stats)


def _build(project, inputs: _Inputs, known: dict) -> CppModel | None:
    settings, root, stats = project.settings, inputs.root, inputs.stats
    # A small run has no workers that summarised the files for the model: where it will be
    # built (a file names HIP), a forked process summarises them while this one reads the
    # build files.
    if not inputs.hip_mentioned and inputs.names_no_amd_build:
        return None  # CUDA-only code, no HIP anywhere, and no build file can say otherwise
    directives = _summarise_meanwhile(inputs, project.cache_dir) \
        if not known and project.jobs > 1 and inputs.hip_mentioned else None
    try:
        facts, database = inputs.facts, inputs.database
    finally:
        summarised = directives() if directives is not None else None
    dual = _builds_for_amd(facts, database, stats)
    if not dual and not inputs.hip_mentioned:
        return None  # CUDA-only code, no HIP anywhere: every file is judged on its own, as before
    files = load_summaries(root, stats, project.cache_dir, known, summarised)
    if not dual and not any(s.hip for s in files.values()):
        return None
    for output, template in facts.generated_from.items():  # config headers the build writes
        if output not in files and template in inputs.build_texts:
            files[output] = Summary(summarise(as_header(inputs.build_texts[template])))
    written_for_hip = None if inputs.builds_read else next((rel for rel, s in files.items() if s.hip), None)
    if facts.port and written_for_hip is not None:
        facts = inputs.guarded_facts  # no build file to say otherwise: the sources' HIP branches decide
    model = CppModel(root=root, files=files, facts=facts, database=database, fixed=_fixed_facts(settings, database))
    model.hipify_setting = settings.hipify if settings is not None else "auto"
    model.hip_build = tuple(hip_build_evidence(facts, database, stats, written_for_hip))
    model.port_paths = port_paths(root, settings)
    if database is not None:
        model.include_dirs = [r for r in (model.rel(d) for d in database.include_dirs) if r is not None]
    else:  # what `#include <x.h>` searches, as the CMake files set it
        model.include_dirs = list(facts.include_dirs)
    model.inferred = _infer_rocm_macros(model)
    if model.hip_build and not facts.port:  # a port compiles the CUDA branches: no sibling decides
        for macro, (defined, value, why) in infer_sibling_switches(files).items():
            if macro not in model.inferred and macro not in model.fixed and not nvidia_toolkit_macro(macro):
                model.guarded[macro] = MacroFact(defined, value, (why,))
    _solve(model)
    return model


def _summarise_meanwhile(inputs: _Inputs, cache_dir) -> Callable[[], dict | None] | None:
    """Summarises the C-family files in a forked process (``summary_directives``, the summary
    cache included); returns the function that waits for them (they are None when the
    process failed: the caller summarises them itself), or None when no process can start
    (a pool's worker may not have children)."""
    from multiprocessing import get_context

    context = get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_send_directives, args=(inputs.root, inputs.stats, cache_dir, send))
    try:
        process.start()
    except (AssertionError, OSError):
        receive.close()
        return None
    finally:
        send.close()

    def wait() -> dict | None:
        try:
            found: dict | None = receive.recv()
        except (EOFError, OSError):
            found = None
        finally:
            receive.close()
            process.join()
        return found
    return wait


def _send_directives(root: str, stats: dict, cache_dir, connection) -> None:
    try:
        connection.send(summary_directives(root, stats, cache_dir))
    finally:
        connection.close()


def _fixed_facts(settings, database: CompileDatabase | None) -> dict[str, MacroFact]:
    fixed: dict[str, MacroFact] = {}
    if database is not None:
        for name, (state, value) in database.macro_facts().items():
            fixed[name] = MacroFact(state, value, (Evidence("-D/-U in compile_commands.json", database.path,
                                                            KIND_COMPILE_DB),))
    for name in DEFAULT_ROCM_MACROS:
        fixed[name] = MacroFact(True, 1, (Evidence(f"{name} is defined by the HIP compiler for AMD", "built-in"),))
    if settings is not None:
        fixed[settings.gate_macro] = MacroFact(True, 1, (Evidence("the gate macro", "configuration", KIND_GATE_MACRO),))
        where = settings.config_path or "configuration"
        for name in settings.rocm_macros:
            fixed[name] = MacroFact(True, 1, (Evidence("rocm-macros", where, KIND_ROCM_MACRO),))
        for name in settings.nvidia_macros:
            fixed[name] = MacroFact(False, None, (Evidence("nvidia-macros", where, KIND_NVIDIA_MACRO),))
    return fixed


def _infer_rocm_macros(model: CppModel) -> dict[str, MacroFact]:
    """A macro whose ``#if defined(M)`` branch includes the HIP runtime (directly or via a
    project header that does) is the project's ROCm macro: defined on AMD."""
    # Only includes naming hip/ or a vendor header's file name can vote: the rest of the
    # project's files are passed over without building their include tables.
    hip_includers = [(rel, s) for rel, s in model.files.items()
                     if any(name == "include" and "hip/" in rest for _, _, name, rest in s.directives)]
    vendor = {rel for rel, s in hip_includers if any(HIP_RUNTIME_HEADER.match(h) for _, h, top in s.includes() if top)}
    vendor_names = {rel.rpartition("/")[2] for rel in vendor}

    def may_vote(summary: Summary) -> bool:
        return any(name == "include" and ("hip/" in rest or _included_name(rest) in vendor_names)
                   for _, _, name, rest in summary.directives)

    votes: dict[str, set[bool]] = {}
    why: dict[str, Evidence] = {}
    for rel, summary in model.files.items():
        if not may_vote(summary):
            continue
        for line, header, branch in summary.gated_includes():
            target = None if HIP_RUNTIME_HEADER.match(header) else model_resolve(model, rel, header)
            if not (HIP_RUNTIME_HEADER.match(header) or target in vendor):
                continue
            kind, condition, index, branches = branch
            macro = _gate_macro(kind, condition)
            if macro is None or macro in model.fixed or nvidia_toolkit_macro(macro) or index > 1 \
                    or (index == 1 and branches != 2):
                continue
            polarity = gate_polarity(kind, condition, macro)
            if polarity is None:
                continue
            defined = polarity if index == 0 else not polarity
            votes.setdefault(macro, set()).add(defined)
            what = f"<{header}>" if target is None else f'"{header}" (includes the HIP runtime)'
            why.setdefault(macro, Evidence(f"{'defined' if defined else 'undefined'} on AMD: its "
                                           f"{'#else ' if index else ''}branch includes {what}",
                                           f"{rel}:{line + 1}"))
    # defined: as a build defines a platform switch (-DNAME, define_macros (NAME, "1")), value 1
    found = {}
    for macro, states in votes.items():
        if len(states) == 1:
            defined = next(iter(states))
            found[macro] = MacroFact(defined, 1 if defined else None, (why[macro],))
    return found


def _included_name(rest: str) -> str:
    """The file name an ``#include`` names (``"vendors/hip.h"`` -> ``hip.h``)."""
    return rest.strip('<>" \t').rpartition("/")[2]


def _gate_macro(kind: str, condition: str) -> str | None:
    if kind in ("ifdef", "ifndef"):
        return condition.split()[0] if condition.split() else None
    m = re.fullmatch(r"[\s(!]*defined\s*\(?\s*(\w+)\s*\)?[\s)]*", condition)
    return m.group(1) if m else None


def model_resolve(model: CppModel, includer: str, header: str, angle: bool = False) -> str | None:
    """The project file an ``#include`` names: next to the includer (quoted), in an -I
    folder, else the one project file whose path ends with it."""
    key = ("inc", includer.rpartition("/")[0] if not angle else "", header, angle)  # a folder's files share
    memo = model._memo
    if key in memo:
        return memo[key]
    files = model.files
    found = None
    if not angle:
        candidate = os.path.normpath(os.path.join(os.path.dirname(includer), header)).replace(os.sep, "/")
        if candidate in files:
            found = candidate
    if found is None:
        if _PLAIN_INCLUDE.fullmatch(header):
            found = _include_dir_index(model).get(header)
        else:  # `..`, `./`, doubled slashes: path arithmetic per folder
            for folder in model.include_dirs:
                candidate = os.path.normpath(os.path.join(folder, header)).replace(os.sep, "/")
                if candidate in files:
                    found = candidate
                    break
    if found is None and not angle and os.path.splitext(header)[1].lower() not in C_FAMILY_EXTENSIONS:
        # A quoted include of a file no C-family extension names (``"op.inc_isglobal"``): part
        # of the project all the same (``_add_included_files``)
        candidate = os.path.normpath(os.path.join(os.path.dirname(includer), header)).replace(os.sep, "/")
        if not candidate.startswith("../") and os.path.isfile(os.path.join(model.root, candidate)):
            model._memo.setdefault("included-files", set()).add(candidate)
            found = candidate
    if found is None:
        matches = _suffix_index(model).get(os.path.basename(header), ())
        matches = [m for m in matches if m == header or m.endswith("/" + header)]
        if angle and "/" not in header:
            matches = [m for m in matches if m.rsplit("/", 2)[-2:-1] == ["include"]]
        if len(matches) == 1:
            found = matches[0]
        elif len(matches) > 1 and not angle:
            # Several project files end so (two subprojects with the same header names): the
            # one nearest the includer, as its subproject's include path would pick.
            near = _nearest(includer, matches)
            if near is not None:
                found = near
    memo[key] = found
    return found


def _nearest(includer: str, candidates: list[str]) -> str | None:
    """The candidate sharing the longest folder prefix with ``includer`` (None on a tie)."""
    def shared(path: str) -> int:
        a, b = includer.split("/")[:-1], path.split("/")[:-1]
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n
    ranked = sorted(((shared(c), c) for c in candidates), reverse=True)
    if ranked[0][0] == 0 or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
        return None
    return ranked[0][1]


# An include name that is a plain relative path (no `.`/`..` step, no doubled or leading slash)
_PLAIN_INCLUDE = lazy_compile(r"(?:[^/\\.]|\.(?![./]|$))(?:[^/\\]|/(?![/.])|/\.(?![./]|$))*(?<!/)")


def _include_dir_index(model: CppModel) -> dict[str, str]:
    """Project file by the name an ``-I`` folder gives it (the first folder that holds it):
    an include resolves by one lookup, not by a path join per folder."""
    index = model._memo.get("include-dir-index")
    if index is None:
        index = {}
        for folder in model.include_dirs:
            prefix = os.path.normpath(folder).replace(os.sep, "/")
            prefix = "" if prefix == "." else prefix + "/"
            for rel in model.files:
                if rel.startswith(prefix):
                    index.setdefault(rel[len(prefix):], rel)
        model._memo["include-dir-index"] = index
    return index


def _suffix_index(model: CppModel) -> dict[str, list[str]]:
    index = model._memo.get("suffix-index")
    if index is None:
        index = {}
        for rel in model.files:
            index.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
        model._memo["suffix-index"] = index
    return index


def _solve(model: CppModel) -> None:
    """Macro definitions and include reachability, to a fixpoint."""
    previous = None
    for _round in range(MAX_ROUNDS):
        model._facts = {}  # macro facts follow the last round's definitions and reach
        defs: dict[str, list[_Def]] = {}
        edges: dict[str, list[_Edge]] = {}
        changed = False
        for rel, summary in model.files.items():
            changed = _evaluate_file(model, rel, summary, defs, edges) or changed
        model.defs, model.edges = defs, edges
        changed = _add_included_files(model) or changed
        if previous is not None and not changed:
            break  # the same definitions and includes as the last round: the same reach
        _reachability(model)
        state = ({n: [(d.rel, d.line, d.reach) for d in ds] for n, ds in defs.items()},
                 {r: v.value for r, v in model.reach.items()})
        if state == previous:
            break
        previous = state
    model._memo, model._facts = {}, {}
    _collect_shims(model)
    _collect_droppers(model)
    model.nvidia_includers = {t: (tuple(e.includer for e in edges), tuple(e.guard for e in edges))
                              for t, edges in model.includers.items()}
    model.edges, model.includers = {}, {}  # only the solver needs them; chains are in ``parent``
    for summary in model.files.values():
        summary.release()


def _add_included_files(model: CppModel) -> bool:
    """Summarise the files an #include reached that the walk did not collect (their
    extension is no C-family one): the next round walks their directives too."""
    added = False
    for rel in sorted(model._memo.get("included-files", set()) - model.files.keys()):
        try:
            path = os.path.join(model.root, rel)
            st = os.stat(path)
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        model.files[rel] = Summary(summarise(data))
        model.extra_stats[rel] = (st.st_mtime_ns, st.st_size)
        added = True
    if added:
        model._memo.pop("suffix-index", None)
        model._memo.pop("include-dir-index", None)
    return added


def _evaluate_file(model: CppModel, rel: str, summary: Summary, defs: dict, edges: dict) -> bool:
    """The reach of a file's includes and #defines under the model's current macro facts;
    reused from the last round when every fact the file asked for is unchanged. Returns
    whether they differ from the last round's."""
    key = ("eval", rel)
    last = model._memo.get(key)
    changed = False
    if last is not None and all((f.state, f.value) == answer for f, answer in
                                ((model._fact(rel, name), answer) for name, answer in last[0].items())):
        asked, own_defs, out, fatal = last
    else:
        asked, own_defs, out, fatal = _walk_file(model, rel, summary)
        model._memo[key] = (asked, own_defs, out, fatal)
        changed = last is None or (own_defs, out, fatal) != (last[1], last[2], last[3])
    edges[rel] = out
    if fatal is not None:
        model.fatal[rel] = fatal
    else:
        model.fatal.pop(rel, None)
    for d in own_defs:
        defs.setdefault(d.name, []).append(d)
    return changed


def _walk_file(model: CppModel, rel: str, summary: Summary):
    """(facts asked, the file's #defines/#undefs, its includes) under the current facts.
    Files of the same shape (directives, include paths left out: thousands of generated
    headers) are walked once, while they get the same answers to the facts asked."""
    shape = (summary.guard, *((name, rest if name != "include" else "") for _, _, name, rest in summary.directives))
    walks = model._memo.setdefault("walks", {})
    entries = walks.setdefault(shape, [])
    for asked, slots in entries:
        if all((f.state, f.value) == answer for f, answer in ((model._fact(rel, n), answer) for n, answer in asked.items())):
            break
    else:
        asked, slots = _walk_shape(model, rel, summary)
        entries.append((asked, slots))
    out: list[_Edge] = []
    own_defs: list[_Def] = []
    fatal: int | None = None
    for (first, _last, name, rest), slot in zip(summary.directives, slots):
        if slot is None:
            continue
        reach, guard = slot[0], slot[1]
        if name == "error":
            if reach is True and fatal is None:
                fatal = first
        elif name == "include":
            m = _INCLUDE.match(rest)
            if m:
                header = m.group(1)
                target = model_resolve(model, rel, header, angle=m.group(2) == ">")
                out.append(_Edge(rel, first, header, target, reach, guard))
        else:
            _, _, kind, value, params, body, macro = slot
            own_defs.append(_Def(rel, first, kind, reach, value, params, body, macro, guard))
    return asked, own_defs, out, fatal


def _walk_shape(model: CppModel, rel: str, summary: Summary):
    """Walk one file's directives: the facts asked, and per directive (None for those that
    give nothing) its reach and #if conditions, with a #define's parts."""
    asked: dict[str, tuple[bool | None, int | None]] = {}
    resolve = model.resolver(os.path.join(model.root, rel))

    guard = summary.guard

    def recording(name: str) -> tuple[bool | None, int | None]:
        asked[name] = answer = resolve(name)
        return answer

    # the include guard is undefined where the file's text is read (as in Conditionals)
    walker = ChainWalker(Evaluator({}, {guard} if guard else set(), recording))
    slots: list[tuple | None] = []
    for first, last, name, rest in summary.directives:
        reach = walker.feed(first, last, name, rest)
        slot: tuple | None = None
        if name in ("include", "error"):
            slot = (reach, stack_expression(walker.stack, guard))
        elif name in ("define", "undef") and rest:
            parts = define_parts(rest) if name == "define" else (rest.split()[0], None, "")
            if parts is not None and parts[0] != guard:
                macro, params, body = parts
                value = None
                if name == "define" and params is None:
                    value = Evaluator({}, set()).evaluate(body) if body else 1
                slot = (reach, stack_expression(walker.stack, guard), name, value,
                        tuple(p.strip() for p in params.split(",")) if params is not None else None, body, macro)
        slots.append(slot)
    return asked, slots


def stack_expression(stack, guard: str | None = None) -> str:
    """The ``#if`` stack at a position as one expression: each enclosing branch's condition
    and the negation of the branches before it (a header guard left out)."""
    parts = []
    for chain in stack:
        first = chain.branches[0]
        if guard is not None and first.kind == "ifndef" and first.condition.split()[:1] == [guard]:
            continue
        for branch in chain.branches[:-1]:
            parts.append(f"!({_branch_condition(branch)})")
        current = chain.branches[-1]
        if current.kind != "else":
            parts.append(f"({_branch_condition(current)})")
    return " && ".join(parts) or "1"


def _branch_condition(branch) -> str:
    name = branch.condition.split()[0] if branch.condition.split() else ""
    if branch.kind == "ifdef":
        return f"defined({name})"
    if branch.kind == "ifndef":
        return f"!defined({name})"
    return branch.condition


MIN_NVIDIA_SIBLINGS = 2  # files beside an orphan header that the AMD build never compiles, at least


def _reachability(model: CppModel) -> None:
    """Which files the AMD build compiles, each with why. A header no file includes is a
    translation unit of its own, unless it sits beside files the AMD build never compiles
    (and beside none it does): then it goes with them, and so does what only it includes (a
    second round, run only where such a header exists)."""
    demoted: dict[str, Evidence] = {}
    for _round in range(3):
        _reach_once(model, demoted)
        more = _orphans_beside_nvidia_files(model, demoted)
        if not more:
            return
        demoted.update(more)


def _orphans_beside_nvidia_files(model: CppModel, demoted: dict[str, Evidence]) -> dict[str, Evidence]:
    """Headers that are translation units only because no file includes them, in a folder whose
    other (included) files the AMD build never compiles: CTranslate2's flash-attention headers,
    where alibi.h is included by none and its siblings only by the CUDA-only sources."""
    if model.database is not None:
        return {}
    orphans = [rel for rel in model.roots if rel not in model.includers and rel not in demoted
               and os.path.splitext(rel)[1].lower() not in SOURCE_EXTENSIONS and not model.files[rel].hip
               and not model.ported(rel)]
    if not orphans:
        return {}
    by_folder: dict[str, list[str]] = {}
    for rel in model.files:
        by_folder.setdefault(os.path.dirname(rel), []).append(rel)
    candidates = set(orphans)
    found: dict[str, Evidence] = {}
    for rel in orphans:
        # what the AMD build compiles only through an orphan of the folder proves nothing
        siblings = [r for r in by_folder.get(os.path.dirname(rel), ()) if r != rel and r in model.includers
                    and model._unit_of(r) not in candidates]
        verdicts = [model.reach.get(r) for r in siblings]
        if len(siblings) >= MIN_NVIDIA_SIBLINGS and all(v is not None and v.value is False for v in verdicts):
            shown = ", ".join(os.path.basename(r) for r in sorted(siblings)[:3])
            found[rel] = Evidence(f"a header no file includes, beside files the AMD build never compiles ({shown}"
                                  f"{', ...' if len(siblings) > 3 else ''}): it goes with them",
                                  f"{sorted(siblings)[0]}:1", KIND_ONLY_FROM_NVIDIA_FILE)
    return found


def _reach_once(model: CppModel, demoted: dict[str, Evidence]) -> None:
    files = model.files
    includers: dict[str, list[_Edge]] = {}
    for out in model.edges.values():
        for edge in out:
            if edge.target is not None and edge.target != edge.includer:
                includers.setdefault(edge.target, []).append(edge)
    model.includers = includers
    reach: dict[str, Verdict] = {}
    parent: dict[str, tuple[str, int]] = {}
    nvidia_sources: dict[str, Evidence] = {}
    database = model.database
    roots: set[str] = set()
    ported = {rel for rel in files if model.ported(rel)} if model.port_paths else set()
    if database is not None:
        for unit in database.units:
            rel = model.rel(unit)
            if rel in files:
                roots.add(rel)
        root_why = Evidence("translation unit in compile_commands.json", database.path)
    else:
        for rel in files:
            source = os.path.splitext(rel)[1].lower() in SOURCE_EXTENSIONS
            if rel in ported:
                continue  # compiled as a port whatever the build says (below)
            if not source and rel in includers:
                continue  # a header: reached through the include graph
            why = demoted.get(rel) or _build_verdict(model, rel, source)
            if why is not None and not files[rel].hip:  # a file that tests HIP is built for it
                nvidia_sources[rel] = why
            else:
                roots.add(rel)
        root_why = Evidence("translation unit of the AMD build (a source file, or a header no project "
                            "file includes; no compile_commands.json)")
    port_why = Evidence("named by --port / `port`: linted as a port whatever the build compiles", "",
                        KIND_PORT_PATH)
    for rel in sorted(ported):
        reach[rel] = Verdict(True, (port_why,))
    roots |= ported
    model.roots = roots
    # Breadth first: certain edges first, then the doubtful ones.
    for certain in (True, False):
        # Sorted: the include chain shown as evidence must not depend on hash order.
        frontier = [r for r in sorted(roots) if r not in reach or r in ported] if certain else \
            [r for r, v in reach.items()]
        for r in frontier:
            if r not in reach:
                reach[r] = Verdict(True, (root_why,))
        while frontier:
            nxt = []
            for rel in frontier:
                base = reach[rel].value
                for edge in model.edges.get(rel, ()):
                    if edge.target is None or edge.target in reach or edge.reach is False:
                        continue
                    if certain and (edge.reach is not True or base is not True):
                        continue
                    value = True if (edge.reach is True and base is True) else None
                    reach[edge.target] = Verdict(value, (Evidence(f"included from {rel}:{edge.line + 1}"),))
                    parent[edge.target] = (rel, edge.line)
                    nxt.append(edge.target)
            frontier = nxt
    for rel, why in nvidia_sources.items():
        if rel not in reach:  # a file the AMD build includes from elsewhere is compiled after all
            reach[rel] = Verdict(False, (why,))
    for rel, line in model.fatal.items():  # an #error the AMD build reaches: it never compiles the file
        if rel not in ported:
            reach[rel] = Verdict(False, (Evidence("its #error fires in the AMD build: the file is meant only for "
                                                  "builds where its conditions hold", f"{rel}:{line + 1}"),))
    unreached = [r for r in files if r not in reach]
    if database is not None:
        for rel in unreached:
            reach[rel] = Verdict(False, (Evidence("in the include closure of no unit of compile_commands.json",
                                                  database.path),))
    else:
        # Greatest fixpoint: a header stays NVIDIA-only while every include of it is dead
        # or comes from an NVIDIA-only file.
        candidates = {r for r in unreached if includers.get(r)}
        changed = True
        while changed:
            changed = False
            for rel in sorted(candidates):
                for edge in includers[rel]:
                    origin = reach.get(edge.includer)
                    if edge.reach is not False and edge.includer not in candidates and \
                            not (origin is not None and origin.value is False):
                        candidates.discard(rel)
                        changed = True
                        break
        # ... and only where a dead include or an NVIDIA-only file leads in (an include
        # cycle no unit enters proves nothing).
        entered = [c for c in candidates if any(
            e.reach is False or (e.includer in reach and reach[e.includer].value is False) for e in includers[c])]
        nvidia = set(entered)
        while entered:
            rel = entered.pop()
            for edge in model.edges.get(rel, ()):
                if edge.target in candidates and edge.target not in nvidia:
                    nvidia.add(edge.target)
                    entered.append(edge.target)
        candidates &= nvidia
        for rel in unreached:
            if rel in candidates:
                shown = includers[rel][:3]
                reach[rel] = Verdict(False, tuple(
                    Evidence("included only where the AMD build never goes", f"{e.includer}:{e.line + 1}")
                    if e.reach is False else
                    Evidence("included only from a file the AMD build never compiles", f"{e.includer}:{e.line + 1}",
                             KIND_ONLY_FROM_NVIDIA_FILE) for e in shown))
            else:  # only reachable from itself (an include cycle no unit enters)
                reach[rel] = Verdict(None, (Evidence("reached by no translation unit; included only in a cycle"),))
    model.reach, model.parent = reach, parent


def _build_verdict(model: CppModel, rel: str, source: bool) -> Evidence | None:
    """Why the build files keep this file out of the AMD build (memoised across rounds)."""
    key = ("build", rel)
    if key not in model._memo:
        facts = model.facts
        model._memo[key] = facts.nvidia_source(rel) or (facts.unbuilt_source(rel) if source else None) \
            or (facts.globbed_only(rel) if source else None) or facts.unnamed.get(rel) \
            or (hip_twin(model, rel) if source else None) or facts.other_platform_code(rel)
    return model._memo[key]


_CUDA_WORD = lazy_compile(r"cuda|CUDA|Cuda")


def hip_twin(model: CppModel, rel: str) -> Evidence | None:
    """The hipified twin the AMD build compiles instead of this CUDA source: the same path
    with ``cuda`` -> ``hip`` in folders and name (hipify's renaming), ``.cu`` -> ``.hip``, or
    ``x_hip.<ext>`` beside ``x.<ext>``; None when the project holds no such file."""
    if rel.endswith(".hip"):
        return None
    bases: list[tuple[str, Evidence | None]] = [(rel, None)]
    for source, output, named in model.facts.hipify_outputs:  # hipify output folders the build names
        if source == "" or rel.startswith(source + "/"):
            bases.append((output + rel[len(source):] if source else f"{output}/{rel}", named))
    for base, why in bases:
        stem, ext = os.path.splitext(base)
        renamed = _CUDA_WORD.sub(lambda m: {"cuda": "hip", "CUDA": "HIP", "Cuda": "Hip"}[m.group(0)], stem)
        candidates = {renamed + ".hip", renamed + ext, stem + ".hip", stem + "_hip" + ext, stem + "_hip.cpp",
                      stem + ".hip" + ext, renamed + "_hip" + ext, stem + ext}
        candidates.discard(rel)
        for twin in sorted(candidates):
            if twin in model.files:
                where = f"; {why}" if why is not None else ""
                return Evidence(f"the AMD build compiles its hipified twin {twin}{where}", twin, KIND_HIP_TWIN)
    return None


def _shim_shape(params: tuple[str, ...], body: str) -> tuple[int, str]:
    """A function-like macro up to its parameters' names and spacing: copies of one shim
    in two vendored trees may name them differently."""
    names = {p.strip(): f"\x00{i}" for i, p in enumerate(params)}
    renamed = re.sub(r"[A-Za-z_]\w*", lambda m: names.get(m.group(0), m.group(0)), body)
    return len(params), " ".join(renamed.split())


def _agreed_macro(model: CppModel, name: str, defs: list) -> Shim | None:
    """The function-like macro every definition the AMD build may see defines, each certain
    and all of one shape (a vendored second copy of the project, or the same shim in two
    headers, is still that macro); dead ones don't count. None otherwise."""
    seen = [d for d in defs if d.reach is not False and model.reach.get(d.rel, Verdict(None)).value is not False]
    if not seen or any(d.reach is not True or d.kind != "define" or d.params is None for d in seen):
        return None
    if len({_shim_shape(d.params or (), d.body) for d in seen}) != 1:
        return None
    d = seen[0]
    return Shim(name, d.params or (), d.body, f"{d.rel}:{d.line + 1}")


def _collect_shims(model: CppModel) -> None:
    shims: dict[str, Shim] = {}
    for name, defs in model.defs.items():
        shim = _agreed_macro(model, name, defs) if name.startswith("__") else None
        if shim is not None:
            shims[name] = shim
    model.shims = shims


def _collect_droppers(model: CppModel) -> None:
    """The project's function-like macros that the AMD build defines without using some
    argument, where every definition it may see is certain and agrees: a platform selector
    (``#if HIP: #define SEL(a, b) a``) whose other argument holds the CUDA code."""
    droppers: dict[str, Shim] = {}
    for name, defs in model.defs.items():
        if not any(d.kind == "define" and d.params for d in defs):
            continue  # no function-like macro with arguments (most names): nothing to drop
        shim = _agreed_macro(model, name, defs)
        if shim is not None and shim.params and not shim.params[-1].endswith("...") \
                and any(shim.drops(i) for i in range(len(shim.params))):
            droppers[name] = shim
    model.droppers = droppers
