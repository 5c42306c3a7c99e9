"""Build files read as text, never executed: CMake (HIP-only definitions, CUDA-only
sources and folders, hipify), setup.py (torch extensions, hipified) and the ROCm build's
compile_commands.json (units and their -D/-U/-I)."""
from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
from dataclasses import dataclass, field

from ..config import ConfigError
from . import Evidence
from ..cpp.preprocessor import c_integer


class BuildFileError(ConfigError):
    """A build file the user pointed at cannot be used (clear message, exit 2)."""


@dataclass
class BuildFacts:
    # macro -> (value or None, evidence): defined in the AMD build by a build file
    amd_defines: dict[str, tuple[int | None, Evidence]] = field(default_factory=dict)
    # folders (relative, "/"-separated) the AMD build never enters, with why
    nvidia_dirs: dict[str, Evidence] = field(default_factory=dict)
    # (folder, glob pattern, recursive, evidence): sources only the NVIDIA build compiles
    nvidia_globs: list[tuple[str, str, bool, Evidence]] = field(default_factory=list)
    # folders hipify rewrites (torch extension or CMake hipify), with why
    hipify_dirs: dict[str, Evidence] = field(default_factory=dict)
    # (folder, glob pattern, recursive, evidence) of every source glob, whatever the platform
    all_globs: list[tuple[str, str, bool, Evidence]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # build files' text, to find literal names

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
        if picked is None or any(name in text for text in self.texts):
            return None
        return picked

    def nvidia_source(self, rel: str) -> Evidence | None:
        """Why the NVIDIA build alone compiles this source, or None."""
        for folder, why in self.nvidia_dirs.items():
            if folder == "" or rel.startswith(folder + "/"):
                return why
        for folder, pattern, recursive, why in self.nvidia_globs:
            prefix = folder + "/" if folder else ""
            if not rel.startswith(prefix):
                continue
            if _glob_match(rel[len(prefix):], pattern, recursive):
                return why
        return None


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


def _glob_match(rel: str, pattern: str, recursive: bool) -> bool:
    pattern = pattern.replace("**/", "*/" if not recursive else "")
    if recursive:  # CMake GLOB_RECURSE: the name pattern matches at any depth below
        head, _, name = pattern.rpartition("/")
        if head and not (rel.startswith(head + "/")):
            return False
        return fnmatch.fnmatchcase(rel.rpartition("/")[2], name) if "/" not in name else fnmatch.fnmatchcase(rel, pattern)
    parts, pparts = rel.split("/"), pattern.split("/")
    return len(parts) == len(pparts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pparts))


# --- CMake ------------------------------------------------------------------------
_COMMAND = re.compile(r"([A-Za-z_]\w*)[ \t]*\(")
_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"|([^\s()"]+)|(\()|(\))')
_HIP_SWITCH = re.compile(r"^(?:\w+_)?(?:USE|WITH|ENABLE|BUILD)_(?:ROCM|HIP)$|^(?:HIP|ROCM)_FOUND$|^CMAKE_HIP_COMPILER$",
                         re.IGNORECASE)
_COMPARE = {"STREQUAL", "MATCHES", "EQUAL"}
_CUDA_SRCS_KEYWORD = re.compile(r"^CUDA_(?:SPECIFIC_|ONLY_)?(?:SRCS|SOURCES|FILES)$")
_KEYWORD = re.compile(r"^[A-Z][A-Z0-9_]+$")


def cmake_commands(text: str) -> list[tuple[str, list[str], int]]:
    """(lower-case name, arguments, 1-based line) of each command; comments dropped."""
    text = re.sub(r"#\[(=*)\[.*?\]\1\]", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'#[^\n]*', lambda m: "" if '"' not in m.group(0) else m.group(0), text)
    out: list[tuple[str, list[str], int]] = []
    pos = 0
    while True:
        m = _COMMAND.search(text, pos)
        if m is None:
            return out
        line = text.count("\n", 0, m.start()) + 1
        args: list[str] = []
        depth, i = 1, m.end()
        while depth and i < len(text):
            a = _ARG.match(text, i)
            if a is None:
                i += 1
                continue
            i = a.end()
            if a.group(3):
                depth += 1
            elif a.group(4):
                depth -= 1
            else:
                args.append(a.group(1) if a.group(1) is not None else a.group(2))
        out.append((m.group(1).lower(), args, line))
        pos = i


def _platform(args: list[str]) -> str | None:
    """'cuda' / 'hip' when an if() condition selects that platform (negated: '!cuda'),
    else None. Only build-variant comparisons count for CUDA (``VARIANT STREQUAL "cuda"``):
    a CUDA-toolkit switch often wraps a backend whose sources another (HIP) CMakeLists
    compiles too."""
    if any(a.upper() == "OR" for a in args):
        return None
    conjuncts: list[list[str]] = [[]]
    for arg in args:
        if arg.upper() == "AND":
            conjuncts.append([])
        else:
            conjuncts[-1].append(arg)
    kinds = [_conjunct_platform(c) for c in conjuncts if c]
    positive = {k for k in kinds if k in ("cuda", "hip")}
    if len(positive) == 1:
        return positive.pop()
    if len(kinds) == 1 and kinds[0] in ("!cuda", "!hip"):
        return kinds[0]
    return None


def _conjunct_platform(args: list[str]) -> str | None:
    negated = args[0].upper() == "NOT"
    body = args[1:] if negated else args
    found = None
    for i, token in enumerate(body):
        bare = token.strip("${}\"")
        compared = (i + 1 < len(body) and body[i + 1].upper() in _COMPARE) or (i > 0 and body[i - 1].upper() in _COMPARE)
        if compared and re.search(r"cuda|nvcc", bare, re.I) and not re.search(r"hip|rocm", bare, re.I):
            kind = "cuda"
        elif _HIP_SWITCH.match(bare) or (compared and re.search(r"hip|rocm", bare, re.I)):
            kind = "hip"
        else:
            continue
        if found not in (None, kind):
            return None
        found = kind
    if found is None:
        return None
    return ("!" + found) if negated else found


def _hip_only_file(commands) -> bool:
    hip = cuda = False
    for name, args, _ in commands:
        upper = [a.upper() for a in args]
        if name == "enable_language":
            hip |= "HIP" in upper
            cuda |= "CUDA" in upper
        elif name == "project" and "LANGUAGES" in upper:
            hip |= "HIP" in upper
            cuda |= "CUDA" in upper
        elif name == "find_package" and upper:
            hip |= upper[0] == "HIP"
            cuda |= upper[0] in ("CUDA", "CUDATOOLKIT")
    return hip and not cuda


def _definitions(name: str, args: list[str]) -> list[str]:
    if name == "add_compile_definitions":
        return list(args)
    if name == "add_definitions":
        return [a[2:] for a in args if a.startswith("-D")]
    if name == "target_compile_definitions":
        return [a for a in args[1:] if a not in ("PUBLIC", "PRIVATE", "INTERFACE")]
    return []


def read_cmake(facts: BuildFacts, rel_file: str, text: str) -> None:
    folder = os.path.dirname(rel_file)
    commands = cmake_commands(text)
    hip_only = _hip_only_file(commands)
    stack: list[list] = []  # [platform of this branch, platform of the if, cuda-only-after-fatal]
    globs: dict[str, list[tuple[str, bool]]] = {}
    fatal_file = False

    def context() -> str | None:
        if fatal_file:
            return "cuda"
        for frame in reversed(stack):
            if frame[2]:
                return "cuda"
            if frame[0] in ("cuda", "hip"):
                return frame[0]
        return None

    def where(line: int) -> str:
        return f"{rel_file}:{line}"

    pending_fatal: list[int] = []
    for index, (name, args, line) in enumerate(commands):
        if name == "if":
            stack.append([_platform(args), _platform(args), False])
            continue
        if name == "elseif" and stack:
            stack[-1][0], stack[-1][2] = _platform(args), False
            continue
        if name == "else" and stack:
            first = stack[-1][1]
            stack[-1][0] = first[1:] if first and first.startswith("!") else None
            stack[-1][2] = False
            continue
        if name == "endif" and stack:
            frame = stack.pop()
            if frame[0] == "!cuda" and pending_fatal:
                if stack:
                    stack[-1][2] = True
                else:
                    fatal_file = True
            pending_fatal = []
            continue
        if name in ("function", "macro"):
            stack.append([None, None, False])
            continue
        if name in ("endfunction", "endmacro") and stack:
            stack.pop()
            continue
        if name == "message" and args and args[0] == "FATAL_ERROR" and stack and stack[-1][0] == "!cuda":
            pending_fatal.append(line)
            continue
        ctx = context()
        if name == "add_subdirectory" and args and ctx == "cuda":
            sub = os.path.normpath(os.path.join(folder, args[0].strip('"'))).replace(os.sep, "/")
            if not sub.startswith(".."):
                facts.nvidia_dirs[sub] = Evidence("added only to the NVIDIA build", where(line))
        elif (name == "file" and len(args) >= 3 and args[0] in ("GLOB", "GLOB_RECURSE")) or \
                (name.startswith("glob") and len(args) >= 2):
            recursive = args[0] == "GLOB_RECURSE"
            var, patterns = (args[1], args[2:]) if name == "file" else (args[0], args[1:])
            globs[var] = [(p, recursive) for p in patterns if not _KEYWORD.match(p)]
            _add_globs(facts.all_globs, folder, globs[var], Evidence("source glob", where(line)))
            if ctx == "cuda":
                _add_globs(facts.nvidia_globs, folder, globs[var],
                           Evidence("source list of the NVIDIA build only", where(line)))
        elif "hipify" in name and name not in ("function", "macro"):
            facts.hipify_dirs.setdefault(folder, Evidence(f"sources are hipified ({name}(...))", where(line)))
        defs = _definitions(name, args)
        if defs and (ctx == "hip" or (hip_only and not stack)):
            for item in defs:
                macro, _, value = item.partition("=")
                if re.fullmatch(r"[A-Za-z_]\w*", macro):
                    number = _number(value)
                    origin = "HIP-only CMakeLists" if hip_only and not stack else "HIP branch of CMakeLists"
                    facts.amd_defines.setdefault(macro, (number, Evidence(f"{name}({item}) in a {origin}", where(line))))
        for i, arg in enumerate(args):
            if _CUDA_SRCS_KEYWORD.match(arg):
                for item in args[i + 1:]:
                    if _KEYWORD.match(item):
                        break
                    ref = re.fullmatch(r"\$\{(\w+)\}", item)
                    listed = Evidence(f"listed under {arg} of {name}()", where(line))
                    if ref and ref.group(1) in globs:
                        _add_globs(facts.nvidia_globs, folder, globs[ref.group(1)], listed)
                    elif not ref:
                        _add_globs(facts.nvidia_globs, folder, [(item, False)], listed)
        if ctx == "cuda" and name not in ("set", "list", "message", "set_property", "set_source_files_properties"):
            literal = [(a, False) for a in args if os.path.splitext(a)[1].lower() in (".cu", ".cpp", ".cc", ".cxx", ".c")]
            _add_globs(facts.nvidia_globs, folder, literal, Evidence(f"{name}() of the NVIDIA build only", where(line)))
    if fatal_file:
        facts.nvidia_dirs[folder] = Evidence("CMakeLists stops with FATAL_ERROR unless the build is CUDA", rel_file)


def _add_globs(into: list, folder: str, patterns, why: Evidence) -> None:
    for pattern, recursive in patterns:
        pattern = pattern.strip('"')
        if "${" in pattern:
            pattern = re.sub(r"^\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/", "", pattern)
            if "${" in pattern:
                continue
        into.append((folder, pattern, recursive, why))


_TORCH_EXTENSION = re.compile(r"\b(?:CUDAExtension|BuildExtension|hipify_python|torch\.utils\.hipify)\b")


def read_setup_py(facts: BuildFacts, rel_file: str, text: str, folder: str | None = None) -> None:
    """A torch extension build hipifies the sources under its setup.py's folder on ROCm.
    ``folder``: for a build helper setup.py imports, that setup.py's folder."""
    m = _TORCH_EXTENSION.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        facts.hipify_dirs.setdefault(os.path.dirname(rel_file) if folder is None else folder,
                                     Evidence(f"torch extension build ({m.group(0)}) hipifies its sources",
                                              f"{rel_file}:{line}"))


_LOCAL_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\w+)[\w.]*[ \t]+import\b|import[ \t]+(\w+))", re.MULTILINE)
MAX_HELPER_FILES = 64


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
                found = sorted(name + "/" + entry for entry in os.listdir(base) if entry.endswith(".py"))
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
