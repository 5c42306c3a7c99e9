"""Build files read as text, never executed: CMake (HIP-only definitions, CUDA-only
sources and folders, hipify), setup.py (torch extensions, hipified) and the ROCm build's
compile_commands.json (units and their -D/-U/-I)."""
from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..config import ConfigError
from ..cpp.preprocessor import c_integer
from ..evidence import KIND_BUILD_FILE
from ..lazy_re import lazy_compile
from . import Evidence
from .conditions import MAX_UNRESOLVED, SUFFIX


class BuildFileError(ConfigError):
    """A build file the user pointed at cannot be used (clear message, exit 2)."""


@dataclass
class BuildFacts:
    # macro -> (value or None, evidence): defined in the AMD build by a build file
    amd_defines: dict[str, tuple[int | None, Evidence]] = field(default_factory=dict)
    # folders (relative, "/"-separated) the AMD build never enters, with why
    nvidia_dirs: dict[str, Evidence] = field(default_factory=dict)
    # folders hipify rewrites (torch extension or CMake hipify), with why
    hipify_dirs: dict[str, Evidence] = field(default_factory=dict)
    # of those, the folders hipified only because a torch extension build (CUDAExtension,
    # BuildExtension) hipifies on ROCm whatever its authors wrote: no HIP build by itself
    torch_extension_dirs: frozenset[str] = frozenset()
    # the build's only HIP build is that: no reader found HIP work, every hipified folder is a
    # torch extension's (``_read_build_facts``)
    torch_hipify_only: bool = False
    # (folder, glob pattern, recursive, evidence) of every source glob, whatever the platform
    all_globs: list[tuple[str, str, bool, Evidence]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # build files' text, to find literal names
    # sources the build files compile, each with whether the ROCm build does (cmake.SourceUse)
    uses: list = field(default_factory=list)
    # macro -> evidence: defined by a build file only where the ROCm build never goes
    nvidia_defines: dict[str, Evidence] = field(default_factory=dict)
    # (CUDA source folder, folder of the hipified copies, evidence) named by a hipify call
    hipify_outputs: list[tuple[str, str, Evidence]] = field(default_factory=list)
    # Python builds only (setup.py and its op builders name every source they compile, no
    # CMake or meson): why, and the basenames of C-family sources any Python file names
    python_listed: Evidence | None = None
    named_in_python: frozenset[str] = frozenset()
    # headers the build writes (configure_file), by path below the build folder, with why
    generated_headers: dict[str, Evidence] = field(default_factory=dict)
    # header -> (its new name, why): the project's own hipify custom map (hipify_torch)
    hipify_renames: dict[str, tuple[str, Evidence]] = field(default_factory=dict)
    # where the build compiles for AMD as HIP (HIP language, hipcc, hipify, .hip sources): none
    # means the project has no HIP build, and its AMD build is the port (design §2e)
    hip_build: list[Evidence] = field(default_factory=list)
    port: bool = False  # read in the port configuration: the CUDA build compiled by hipcc
    # what configuration-header templates write (configure_file, meson, autoconf), by macro:
    # defined with (value or None, why) / undefined (why) / written from a value not known (why)
    configured_defines: dict[str, tuple[int | None, Evidence]] = field(default_factory=dict)
    configured_undefines: dict[str, Evidence] = field(default_factory=dict)
    configured_unknown: dict[str, Evidence] = field(default_factory=dict)
    # header the build writes (below the build folder) -> the template it is written from
    generated_from: dict[str, str] = field(default_factory=dict)
    # project folders the build files add to the include path (root-relative)
    include_dirs: list[str] = field(default_factory=list)
    # sources a build file globs, whatever becomes of the list: (pattern, recursive, evidence)
    globbed: list[tuple[str, bool, Evidence]] = field(default_factory=list)
    complete: bool = True  # False when a reader failed (warned): such facts are not cached
    # CMake: (regular expression, why) of the sources a compiling command may name through a
    # value the reader does not know (cmake.CMakeFacts.unresolved)
    unresolved: list[tuple[str, Evidence]] = field(default_factory=list)
    # sources no build names although it names their folder's others, with why (set per run:
    # ``named_beside``, then the project's Python files searched for their names)
    unnamed: dict[str, Evidence] = field(default_factory=dict)

    def generated_header(self, header: str) -> Evidence | None:
        """Why an ``#include`` names a header the project's build generates (``nccl.h`` from
        ``configure_file(nccl.h.in ${PROJECT_BINARY_DIR}/include/nccl.h)``), or None."""
        for path, why in self.generated_headers.items():
            if path == header or path.endswith("/" + header):
                return why
        return None

    def _made_siblings(self, folder: str, name: str) -> Evidence | None:
        """A Makefile that compiles this folder's sources by name with hipcc, and not this one
        (a CUDA original or a stale copy left beside the port): why it is not compiled."""
        index = self.__dict__.get("_made_index")
        if index is None:
            index = {}
            for use in self.uses:
                if not use.glob and "(Makefile rule" in use.evidence.what:
                    head, _, leaf = use.path.rpartition("/")
                    index.setdefault(head, ([], use.evidence))[0].append(leaf)
            self.__dict__["_made_index"] = index
        made = index.get(folder)
        if made is None or name in made[0] or any(name in text for text in self.texts):
            return None
        return Evidence(f"the Makefile compiles {', '.join(made[0][:3])} from this folder; {name} is not one of them",
                        made[1].where, made[1].kind)

    def globbed_only(self, rel: str) -> Evidence | None:
        """Why a source is not compiled although a build file globs it: the glob's list feeds
        no target the ROCm build configures (CMake: a ``foreach`` over a list nothing sets), no
        use of the build covers it, and no build file names it."""
        name = rel.rpartition("/")[2]
        for pattern, recursive, why in self.globbed:
            if _glob_match(rel, pattern, recursive):
                if self._uses_of(rel) or any(_glob_match(rel, p, r) for p, _h, _l, r, _w in self._normalised_globs()) \
                        or any(name in text for text in self.texts):
                    return None
                return Evidence(f"{why.what} lists it, but no target the ROCm build configures compiles that list",
                                why.where, why.kind)
        return None

    def unbuilt_source(self, rel: str) -> Evidence | None:
        """Why no build compiles this source: a build file picks sources of its folder by a
        name filter (``dir/blackwell_*.cu``) that it does not match, and no build file names it."""
        folder, _, name = rel.rpartition("/")
        ext = os.path.splitext(name)[1]
        picked = None
        for full, head, leaf, recursive, why in self._normalised_globs():
            if _glob_match(rel, full, recursive) or (recursive and rel.startswith(head + "/") and
                                                       fnmatch.fnmatchcase(name, leaf)):
                return None
            if head == folder and not recursive and leaf.endswith(ext) and \
                    re.sub(r"[*?]|\[[^]]*\]", "", leaf) not in ("", ext):
                picked = picked or Evidence(f"the build picks {leaf} from this folder; {name} is not one",
                                            why.where)
        if picked is None and self.python_listed is not None and name not in self.named_in_python \
                and not self._uses_of(rel):
            return self.python_listed  # no Python build or op builder names it
        if picked is None:
            picked = self._made_siblings(folder, name)
        if picked is None or any(name in text for text in self.texts):
            return None
        return picked

    def named_beside(self, sources: "Iterable[str]") -> dict[str, Evidence]:
        """The sources no build names although a CMake file names other sources of their
        folder one by one (no glob covers the folder): the build does not compile them
        (a leftover copy, a variant the build dropped). Kept compiled on any doubt: a build file
        holds the file's name or stem (a ``${name}.cu`` loop, a Makefile), or a compiling
        command names sources through a value the reader does not know that may be this one."""
        if len(self.unresolved) >= MAX_UNRESOLVED:
            return {}
        named: dict[str, tuple[set[str], Evidence]] = {}
        for use in self.uses:
            if not use.glob and use.evidence.where.partition(":")[0].endswith(_LISTING_BUILD_FILES) \
                    and _COMPILING.match(use.evidence.what) \
                    and os.path.splitext(use.path)[1].lower() in _LISTED_SOURCE_EXTENSIONS:
                head, _, leaf = use.path.rpartition("/")
                named.setdefault(head, (set(), use.evidence))[0].add(leaf)
        if not named:
            return {}
        unknown = [re.compile(pattern) for pattern, _why in self.unresolved]
        if any(p.pattern == ".*" for p in unknown):
            return {}  # a list the reader does not know, which may name any source
        globbed = [(head, recursive) for _full, head, _leaf, recursive, _why in self._normalised_globs()]
        for pattern, recursive, _why in self.globbed:
            head = split_glob(pattern)[0]
            globbed.append((head, recursive or "**" in pattern))
        found: dict[str, Evidence] = {}
        for rel in sources:
            folder, _, name = rel.rpartition("/")
            stem, ext = os.path.splitext(name)
            listed = named.get(folder)
            if listed is None or name in listed[0] or ext.lower() not in _LISTED_SOURCE_EXTENSIONS:
                continue
            if any(head == folder or (recursive and (head == "" or folder.startswith(head + "/")))
                   for head, recursive in globbed):
                continue  # a glob picks sources here: globbed_only / unbuilt_source decide
            if self._uses_of(rel) or any(p.fullmatch(rel) or p.fullmatch("/" + rel) for p in unknown):
                continue
            if any(stem in text for text in self.texts):
                continue  # named some other way (a loop over stems, a Makefile, a helper)
            shown = ", ".join(sorted(listed[0])[:3]) + (", ..." if len(listed[0]) > 3 else "")
            found[rel] = Evidence(f"no build file names it; the build names its folder's sources one by one "
                                  f"({shown}), not this one", listed[1].where, KIND_BUILD_FILE)
        return found

    def other_platform_code(self, rel: str) -> Evidence | None:
        """Why a file is another platform's code by its folder's or its own name (a TensorRT or
        NPU backend: ``tree.named_for_other_platform``) where no build condition decides it: no
        build file compiles it, or one compiles it whatever the platform (a backend's own
        CMake project that only the CUDA machines configure)."""
        from .tree import named_for_other_platform

        if any(use.cond.text for use in self._uses_of(rel)):
            return None  # a build switch decides (if(USE_TENSORRT)): it knows better than a name
        return named_for_other_platform(rel, compiled=True)

    def nvidia_source(self, rel: str) -> Evidence | None:
        """Why the NVIDIA build alone compiles this source, or None: every build-file use of
        it is one the ROCm build never takes (a use it may take wins over everything)."""
        covering = self._uses_of(rel)
        if any(use.cond.value is not False for use in covering):
            return None
        if covering:
            return covering[0].evidence
        for folder, why in self.nvidia_dirs.items():
            if folder == "" or rel.startswith(folder + "/"):
                return why
        return None


    def _uses_of(self, rel: str) -> list:
        """The build-file uses that name or glob this file (asked up to five times per file)."""
        memo = self.__dict__.setdefault("_uses_memo", {})
        found = memo.get(rel)
        if found is None:
            found = memo[rel] = self._find_uses(rel)
        return found

    def _find_uses(self, rel: str) -> list:
        index = self.__dict__.get("_use_index")
        if index is None:
            literal: dict[str, list] = {}
            globs = []
            suffixes = []  # base / "csrc" / "x.cu" with a base known only at run time
            for use in self.uses:
                if use.glob == SUFFIX:
                    suffixes.append(use)
                elif use.glob:
                    folder, pattern = split_glob(use.path)
                    globs.append((folder + "/" if folder else "", pattern, use.glob == "GLOB_RECURSE", use))
                else:
                    literal.setdefault(use.path, []).append(use)
            index = self.__dict__["_use_index"] = (literal, globs, suffixes)
        found = list(index[0].get(rel, ()))
        for prefix, pattern, recursive, use in index[1]:
            if rel.startswith(prefix) and _glob_match(rel[len(prefix):], pattern, recursive):
                found.append(use)
        found.extend(use for use in index[2] if rel == use.path or rel.endswith("/" + use.path))
        return found

    def _normalised_globs(self) -> list:
        cached = self.__dict__.get("_globs")
        if cached is None:
            cached = []
            for base, pattern, recursive, why in self.all_globs:
                full = os.path.normpath(base + "/" + pattern if base else pattern).replace(os.sep, "/")
                head, _, leaf = full.rpartition("/")
                cached.append((full, head, leaf, recursive, why))
            self.__dict__["_globs"] = cached
        return cached


# Build files that list a folder's sources one by one (Python builds: python_listed; Makefiles:
# _made_siblings), and the sources they list (headers are reached through includes).
_LISTING_BUILD_FILES = ("CMakeLists.txt", ".cmake")
_LISTED_SOURCE_EXTENSIONS = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".hip"})
# The uses that compile: a target's sources (CMake's add_library and kin), not a custom
# command's DEPENDS or an install() (``cmake._SOURCE_COMMAND``)
_COMPILING = lazy_compile(r"(?:add_library|add_executable|target_sources|\w*_add_(?:library|executable|module)"
                          r"|add_\w+_(?:library|executable|module))\(\)")


def split_glob(path: str) -> tuple[str, str]:
    """(folder before the first component with a wildcard, the rest)."""
    parts = path.split("/")
    first = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts) - 1)
    return "/".join(parts[:first]), "/".join(parts[first:])


def _glob_match(rel: str, pattern: str, recursive: bool) -> bool:
    pattern = pattern.replace("**/", "*/" if not recursive else "")
    if recursive:  # CMake GLOB_RECURSE: the name pattern matches at any depth below
        head, _, name = pattern.rpartition("/")
        if head and not (rel.startswith(head + "/")):
            return False
        return fnmatch.fnmatchcase(rel.rpartition("/")[2], name) if "/" not in name else fnmatch.fnmatchcase(rel, pattern)
    parts, pparts = rel.split("/"), pattern.split("/")
    return len(parts) == len(pparts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pparts))


# --- CMake (rocmlint/project/cmake.py) ---------------------------------------------------
def read_cmake_files(facts: BuildFacts, texts: dict[str, str], options: dict[str, str] | None = None,
                     templates: dict[str, str] | None = None) -> None:
    """Every CMake file of the project, read as one program (``cmake.read``)."""
    from .cmake import read

    cmake = read(texts, options, templates, facts.port)
    _merge_reader_facts(facts, cmake)
    facts.include_dirs.extend(d for d in cmake.include_dirs if d not in facts.include_dirs)
    for folder, why in cmake.dead_dirs.items():
        facts.nvidia_dirs.setdefault(folder, why)
    for folder, why in cmake.hipify_dirs.items():
        facts.hipify_dirs.setdefault(folder, why)
    facts.hipify_outputs.extend(cmake.hipify_outputs)
    facts.globbed.extend(cmake.globbed)
    facts.unresolved.extend(cmake.unresolved)


def read_meson_files(facts: BuildFacts, texts: dict[str, str], options: dict[str, str] | None = None,
                     templates: dict[str, str] | None = None) -> None:
    """The project's meson.build files (``meson.read``)."""
    from .meson import read

    _merge_reader_facts(facts, read(texts, options, templates, facts.port))


def _merge_reader_facts(facts: BuildFacts, found) -> None:
    """What a CMake or meson reading found (its ``uses``, ``definitions``, ``generated``,
    ``template_defines``, ``hip_build``, ``generated_from``), merged into ``facts``."""
    merge_build_facts(facts, found.uses, found.definitions, found.generated)
    merge_template_defines(facts, found.template_defines)
    facts.hip_build.extend(found.hip_build)
    for output, template in found.generated_from.items():
        facts.generated_from.setdefault(output, template)


def read_makefiles(facts: BuildFacts, texts: dict[str, str]) -> None:
    """The project's Makefiles: the sources hipcc compiles (``makefile.read``)."""
    from .makefile import nvidia_arch_defines, read

    uses, hip_build, hipified = read(texts)
    merge_build_facts(facts, uses, {})
    for macro, why in nvidia_arch_defines(texts).items():
        if macro not in facts.amd_defines:
            facts.nvidia_defines.setdefault(macro, why)
    facts.hip_build.extend(hip_build)
    for source, output, why in hipified:
        facts.hipify_dirs.setdefault(source, why)
        facts.hipify_outputs.append((source, output, why))


def read_autoconf_templates(facts: BuildFacts, templates: dict[str, str]) -> None:
    """``config.h.in`` written by ``./configure`` (``#undef X`` lines): switches the build
    sets from checks rocmlint does not run; their value is left to the name rule."""
    from .templates import template_lines

    for rel, text in templates.items():
        if rel.rpartition("/")[2] != "config.h.in":
            continue
        for line in template_lines(text):
            if line.kind == "undef":
                facts.configured_unknown.setdefault(line.macro, Evidence(
                    f"./configure writes {line.macro} into config.h from checks rocmlint does not run",
                    f"{rel}:{line.line}", KIND_BUILD_FILE))


def merge_template_defines(facts: BuildFacts, found: dict) -> None:
    """What templates write, each macro decided when one of its lines certainly applies."""
    for macro, entries in found.items():
        certain = [(value, why) for value, cond, why in entries if cond.value is True]
        if certain:
            value = certain[0][0]
            facts.configured_defines.setdefault(macro, (_number(value) if value is not None else None, certain[0][1]))
        elif all(cond.value is False for _value, cond, _why in entries):
            facts.configured_undefines.setdefault(macro, entries[0][2])
        else:
            facts.configured_unknown.setdefault(macro, entries[0][2])


def merge_build_facts(facts: BuildFacts, uses: list, definitions: dict,
                      generated: "dict[str, Evidence] | None" = None) -> None:
    """One build system's source uses and -D definitions (each with its ROCm condition), and
    the headers it writes."""
    facts.uses.extend(uses)
    for path, why in (generated or {}).items():
        facts.generated_headers.setdefault(path, why)
    for use in uses:
        if use.glob and use.glob != SUFFIX:
            folder, pattern = split_glob(use.path)
            facts.all_globs.append((folder, pattern, use.glob == "GLOB_RECURSE", use.evidence))
    for macro, found in definitions.items():
        on_amd = [(value, why) for value, cond, why in found if cond.value is True]
        if on_amd:
            facts.amd_defines.setdefault(macro, (_number(on_amd[0][0]), on_amd[0][1]))
        elif all(cond.value is False for _value, cond, _why in found):
            facts.nvidia_defines.setdefault(macro, found[0][2])


_TORCH_EXTENSION = lazy_compile(r"\b(?:CUDAExtension|BuildExtension|hipify_python|torch\.utils\.hipify)\b")
_EXPLICIT_HIPIFY = lazy_compile(r"\b(?:hipify_python|torch\.utils\.hipify)\b")


def read_setup_py(facts: BuildFacts, rel_file: str, text: str, folder: str | None = None) -> None:
    """A torch extension build hipifies the sources under its setup.py's folder on ROCm.
    ``folder``: for a build helper setup.py imports, that setup.py's folder."""
    m = _TORCH_EXTENSION.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        where = os.path.dirname(rel_file) if folder is None else folder
        facts.hipify_dirs.setdefault(where, Evidence(f"torch extension build ({m.group(0)}) hipifies its sources",
                                                     f"{rel_file}:{line}"))
        if not _EXPLICIT_HIPIFY.search(text):  # torch's own hipify run, not one the authors asked for
            facts.torch_extension_dirs |= {where}


# hipify_torch's custom map: `custom_map_list=...json` (Python) or `CUSTOM_MAP_FILE ...json` (CMake).
_CUSTOM_MAP = lazy_compile(r"(?:\bcustom_map_list\s*=|\bCUSTOM_MAP_FILE\b)[^\n]*?([\w.+-]+\.json)")
MAX_CUSTOM_MAP_BYTES = 1 << 20


def hipify_custom_maps(root: str, build_texts: dict[str, str]) -> list[str]:
    """The custom-map files the project's hipify runs are given, found beside the build file
    that names them or in a folder above it (``${TE}/map.json``, ``base_dir / "map.json"``)."""
    found: list[str] = []
    for rel, text in build_texts.items():
        for m in _CUSTOM_MAP.finditer(text):
            folder = os.path.dirname(rel)
            while True:
                candidate = f"{folder}/{m.group(1)}" if folder else m.group(1)
                if os.path.isfile(os.path.join(root, candidate)):
                    if candidate not in found:
                        found.append(candidate)
                    break
                if not folder:
                    break
                folder = os.path.dirname(folder)
    return found


def read_hipify_custom_map(facts: BuildFacts, rel: str, text: str) -> None:
    """The header renames of a custom map (``{"custom_map": {"<cuda_fp8.h>": "<hip/...>"}}``),
    read as data: hipify applies them on top of its own table."""
    try:
        data = json.loads(text[:MAX_CUSTOM_MAP_BYTES])
    except ValueError:
        return
    renames = data.get("custom_map") if isinstance(data, dict) else None
    if not isinstance(renames, dict):
        return
    for key, value in renames.items():
        if isinstance(key, str) and isinstance(value, str) and key[:1] in "<\"" and key[-1:] in ">\"":
            target = value.strip().strip('<>"')
            facts.hipify_renames.setdefault(key[1:-1], (target, Evidence(
                f"the project's hipify custom map renames it to {target}", rel, KIND_BUILD_FILE)))


_LOCAL_IMPORT = lazy_compile(r"^[ \t]*(?:from[ \t]+(\w+)[\w.]*[ \t]+import\b|import[ \t]+(\w+))", re.MULTILINE)
MAX_HELPER_FILES = 256


def _package_modules(path: str, name: str) -> list[str]:
    """A package's modules and its sub-packages' (one level down: ``op_builder/xpu/*.py``,
    where a project keeps the builders of other accelerators)."""
    found = []
    for entry in sorted(os.listdir(path)):
        if entry.endswith(".py"):
            found.append(f"{name}/{entry}")
        elif os.path.isfile(os.path.join(path, entry, "__init__.py")):
            found.extend(f"{name}/{entry}/{sub}" for sub in sorted(os.listdir(os.path.join(path, entry)))
                         if sub.endswith(".py"))
    return found


def setup_helpers(root: str, build_texts: dict[str, str]) -> dict[str, str]:
    """The project's own Python modules each setup.py imports (a package: its modules, one
    level): where an extension build often lives (`from op_builder import OpBuilder`).
    helper path -> the folder of the setup.py that imports it."""
    helpers: dict[str, str] = {}
    for rel, text in build_texts.items():
        if not rel.endswith("setup.py"):
            continue
        folder = os.path.dirname(rel)
        names = {a or b for a, b in _LOCAL_IMPORT.findall(text)}
        for name in sorted(names):
            base = os.path.join(root, folder, name)
            if os.path.isfile(base + ".py"):
                found = [name + ".py"]
            elif os.path.isfile(os.path.join(base, "__init__.py")):
                found = _package_modules(base, name)
            else:
                continue
            for module in found:
                if len(helpers) < MAX_HELPER_FILES:
                    helpers.setdefault(f"{folder}/{module}" if folder else module, folder)
    return helpers


# --- compile_commands.json ---------------------------------------------------------
@dataclass
class CompileDatabase:
    path: str
    units: dict[str, list[str]] = field(default_factory=dict)  # absolute file -> its -D/-U/-I flags
    include_dirs: list[str] = field(default_factory=list)  # absolute

    def unit_macro(self, unit: str, name: str) -> tuple[bool, int | None] | None:
        """-D/-U of ``name`` on one unit's command line (the last one wins), or None."""
        found = None
        for flag in self.units.get(unit, ()):
            if flag.startswith("-D") and flag[2:].partition("=")[0] == name:
                value = flag[2:].partition("=")[2]
                found = (True, _number(value))
            elif flag == "-U" + name:
                found = (False, None)
        return found

    def macro_facts(self) -> dict[str, tuple[bool | None, int | None]]:
        """macro -> (defined in every unit / undefined in every unit / None mixed, value)."""
        per_unit: list[dict[str, tuple[bool, int | None]]] = []
        for flags in self.units.values():
            state: dict[str, tuple[bool, int | None]] = {}
            for flag in flags:
                if flag.startswith("-D"):
                    macro, _, value = flag[2:].partition("=")
                    state[macro] = (True, _number(value))
                elif flag.startswith("-U"):
                    state[flag[2:]] = (False, None)
            per_unit.append(state)
        names = {m for state in per_unit for m in state}
        out: dict[str, tuple[bool | None, int | None]] = {}
        for name in names:
            seen = {state.get(name, (False, None)) for state in per_unit}
            out[name] = next(iter(seen)) if len(seen) == 1 else (
                (True, None) if all(s[0] for s in seen) else (None, None))
        return out


def _number(value: str) -> int | None:
    """The value of ``-DNAME=value`` (``-DNAME`` is 1), None when not a number."""
    if not value:
        return 1
    if not re.fullmatch(r"-?(?:0[xX][0-9a-fA-F]+|\d+)", value):
        return None
    return -c_integer(value[1:]) if value.startswith("-") else c_integer(value)


def read_compile_commands(location: str) -> CompileDatabase:
    path = location
    if os.path.isdir(path):
        path = os.path.join(path, "compile_commands.json")
    try:
        with open(path, encoding="utf-8") as fh:
            entries = json.load(fh)
    except FileNotFoundError:
        raise BuildFileError(f"no compile_commands.json at {location}") from None
    except OSError as exc:
        raise BuildFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BuildFileError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(entries, list):
        raise BuildFileError(f"{path}: expected a list of compile commands")
    db = CompileDatabase(path)
    dirs: list[str] = []
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) or \
                not isinstance(entry.get("directory", ""), str):
            raise BuildFileError(f"{path}: entry {number} has no 'file'/'directory' strings")
        directory = entry.get("directory") or os.path.dirname(os.path.abspath(path))
        if isinstance(entry.get("arguments"), list):
            argv = [str(a) for a in entry["arguments"]]
        elif isinstance(entry.get("command"), str):
            try:
                argv = shlex.split(entry["command"])
            except ValueError as exc:
                raise BuildFileError(f"{path}: entry {number}: cannot split 'command': {exc}") from None
        else:
            raise BuildFileError(f"{path}: entry {number} has neither 'arguments' nor 'command'")
        flags: list[str] = []
        i = 0
        while i < len(argv):
            arg = argv[i]
            for opt in ("-D", "-U", "-I", "-isystem", "-iquote"):
                if arg == opt and i + 1 < len(argv):
                    i += 1
                    arg = opt + argv[i]
                    break
            if arg.startswith(("-D", "-U")):
                flags.append(arg)
            elif arg.startswith(("-isystem", "-iquote", "-I")):
                value = arg[8:] if arg.startswith(("-isystem", "-iquote")) else arg[2:]
                value = os.path.normpath(os.path.join(directory, value))
                flags.append("-I" + value)
                if value not in dirs:
                    dirs.append(value)
            i += 1
        db.units[os.path.normpath(os.path.join(directory, entry["file"]))] = flags
    db.include_dirs = dirs
    return db
