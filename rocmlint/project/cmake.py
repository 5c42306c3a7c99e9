"""CMake read as a program (never run): which sources each target compiles and which macros
the build defines, evaluated three-valued under the ROCm configuration.

Parsed with tree-sitter-cmake. The interpreter follows ``set``/``list``/``file(GLOB)``,
``foreach``, ``function``/``macro`` calls, ``add_subdirectory``/``include``, ``if``/``elseif``/
``else`` and ``message(FATAL_ERROR)``; every list item carries the condition under which it
was added, so a source used by ``add_library``/``target_sources`` (or any command naming
sources) is known to be compiled by the ROCm build (True), never (False) or maybe (None).

The ROCm configuration: options and cache variables are *selectors* when a branch on them
does platform work. A branch that enables HIP (``enable_language(HIP)``,
``find_package(hip)``, ``.hip`` sources, hipify, HIP link targets) makes its condition true
on ROCm; a branch that does only CUDA work makes its condition false (a CUDA-only
selector). A comparison with a platform's name (``BACKEND STREQUAL "cuda"``) is decided the
same way. Whether a toolkit was *found* stays unknown (another build file may compile the
same sources for HIP), and so does everything else, unless the configuration sets it
(``build-options`` in ``[tool.rocmlint]``).
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, NamedTuple

from ..evidence import KIND_BUILD_FILE, Evidence
from ..lazy_re import lazy_compile
from ..platform_words import READERS
from .conditions import MAX_HIP_BUILD_EVIDENCE, MAX_UNRESOLVED, TRUE, Cond, SourceUse, and3, branch_taken, describe, or3
from ..cpp.platform_names import value_by_name
from .templates import substitute, template_lines

MAX_COMMANDS = 200_000  # a pathological build: stop evaluating, keep what is known
MAX_DEPTH = 12  # function calls / includes / subdirectories nested
MAX_ITERATIONS = 256  # foreach items evaluated
ROOT = "@ROOT@"  # stands for the project root in paths (CMAKE_SOURCE_DIR and friends)

# Platform work, read from a branch's commands (what the branch does, not names of projects).
# A stub named for a platform's absence (no_cuda.cpp, the else of a CUDA switch) is not its work.
_HIP_WORD = READERS["cmake-hip"]
_STRONG_HIP = lazy_compile(r"(?:^|[/\s])[\w.-]+\.hip$|^hip::|hipify|^HIP$|^hip$|__HIP_PLATFORM_AMD__|USE_ROCM|^rocm$",
                           re.IGNORECASE)
_CUDA_WORD = READERS["cmake-cuda"]
# Another GPU vendor's work (SYCL/oneAPI, Level Zero, Metal): never the ROCm build's branch.
_OTHER_GPU_WORD = READERS["cmake-other"]
_SOURCE_EXT = lazy_compile(r"\.(?:cu|cuh|hip|c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|inl)$", re.IGNORECASE)
# commands whose COMMAND words run a program at build or configure time
_RUNS_PROGRAMS = ("add_custom_command", "add_custom_target", "execute_process")
_FALSE_CONSTANTS = {"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"}
_TRUE_CONSTANTS = {"1", "ON", "YES", "TRUE", "Y"}
_UNARY = {"EXISTS", "COMMAND", "POLICY", "TARGET", "TEST", "IS_DIRECTORY", "IS_SYMLINK", "IS_ABSOLUTE", "DEFINED"}
_BINARY = {"STREQUAL", "MATCHES", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STRLESS",
           "STRGREATER", "STRLESS_EQUAL", "STRGREATER_EQUAL", "VERSION_EQUAL", "VERSION_LESS", "VERSION_GREATER",
           "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL", "IN_LIST", "IS_NEWER_THAN", "PATH_EQUAL"}
# Commands that name sources without compiling them.
_NOT_A_USE = {"set", "list", "message", "set_property", "set_source_files_properties", "get_property",
              "get_filename_component", "string", "file", "install", "source_group", "foreach", "option",
              "get_source_file_property", "set_target_properties", "configure_file", "unset", "math", "cmake_path",
              "if", "elseif", "while", "return", "include", "add_subdirectory", "mark_as_advanced"}
# Commands the interpreter reads nothing from (``string``, ``get_filename_component``: their
# variables stay unknown): their arguments are not even expanded (MIOpen runs 68,768).
_INERT = frozenset(_NOT_A_USE - {"set", "list", "message", "file", "option", "configure_file", "unset", "return",
                                 "include", "add_subdirectory", "if", "elseif", "while", "foreach"})
# Keyword arguments of project helpers that mark sources for one platform only.
_CUDA_SOURCES_KEYWORD = lazy_compile(r"^CUDA_(?:SPECIFIC_|ONLY_)?(?:SRCS|SOURCES|FILES)$")
_KEYWORD = lazy_compile(r"^[A-Z][A-Z0-9_]+$")
_VAR_REF = lazy_compile(r"\$\{([^${}]+)\}")
# Commands that compile the sources they are given (besides project functions, which pass
# them on): a value not known there may name any source (``CMakeFacts.unresolved``).
_SOURCE_COMMAND = lazy_compile(r"^(?:add_library|add_executable|target_sources|\w*_add_(?:library|executable|module)"
                               r"|add_\w+_(?:library|executable|module))$")
# What an unquoted ``${X}`` becomes, in a compiling command or a project function's arguments,
# where X has no value the reader knows: it may hold sources (never dropped unseen).
_UNKNOWN = "${?}"
_UNKNOWN_PART = lazy_compile(r"\$\{.*\}|\$<.*>|\$\{.*")  # greedy: ${${a}_b} and ${a}/x_${b} in one
# Commands whose paths are relative to the current folder (besides sources: ``_uses``).
_FOLDER_COMMANDS = frozenset({"file", "add_subdirectory", "include"})
_INCLUDE_DIR_COMMANDS = frozenset({"include_directories", "target_include_directories"})
_INCLUDE_DIR_KEYWORDS = frozenset({"SYSTEM", "BEFORE", "AFTER", "INTERFACE", "PUBLIC", "PRIVATE"})
_C_IDENTIFIER = lazy_compile(r"[A-Za-z_]\w*")
_PLAIN_NAME = lazy_compile(r"\$\{(\w+)\}|(\w+)")
_VARIABLE_NAME = lazy_compile(r"[A-Za-z_][\w.+-]*")
_NUMBER = lazy_compile(r"-?\d+(?:\.\d+)?")
# A toolkit having been found stays unknown (see the module docstring); the platforms' own
# compilers too. Built-in variables whose value on a Linux ROCm machine is known:
_BUILTIN = {"UNIX": "1", "LINUX": "1", "WIN32": "", "APPLE": "", "MSVC": "", "MSYS": "", "CYGWIN": "",
            "HIP_FOUND": "1", "hip_FOUND": "1", "ROCM_FOUND": "1", "CMAKE_HIP_COMPILER_LOADED": "1",
            # what find_package(hip) and the HIP language set on an AMD machine
            "HIP_PLATFORM": "amd", "CMAKE_HIP_PLATFORM": "amd", "HIP_COMPILER": "clang", "HIP_RUNTIME": "rocclr",
            "CMAKE_HIP_COMPILER_ID": "Clang"}
_HIP_LANGUAGE_COMMANDS = ("enable_language(", "project(", "set_source_files_properties(", "hip_add_")
# Words of a command that compile for AMD as HIP (a HIP build, design §2e): the HIP language,
# hipcc or amdclang++ as the compiler, HIP's device target, .hip sources, hipify.
_HIP_BUILD_WORD = lazy_compile(r"^(?:HIP|HIPCC)$|(?:^|/)(?:hipcc|amdclang\+\+)(?:\.exe)?$|^hip::device$|^blt::hip"
                               r"|^hip-lang::|\.hip$|hipify|^CMAKE_HIP_(?:ARCHITECTURES|COMPILER|FLAGS)|^HIP_HIPCC_FLAGS",
                               re.MULTILINE)  # searched in a command's arguments joined by newlines


class Item(NamedTuple):  # a tuple: built by the thousand, 5x cheaper than a frozen dataclass
    text: str
    cond: Cond = TRUE
    origin: str = ""  # where the item entered a list (file:line of set/list/file(GLOB))
    glob: str = ""  # GLOB / GLOB_RECURSE: the item is a pattern


@dataclass
class CMakeFacts:
    uses: list[SourceUse] = field(default_factory=list)
    # macro -> [(value text or "", cond, evidence)]: -D by the build, under its condition
    definitions: dict[str, list[tuple[str, Cond, Evidence]]] = field(default_factory=dict)
    dead_dirs: dict[str, Evidence] = field(default_factory=dict)  # folders ROCm's build never enters
    hipify_dirs: dict[str, Evidence] = field(default_factory=dict)
    # (CUDA source folder, folder hipify writes to, evidence): the twins the AMD build compiles
    hipify_outputs: list[tuple[str, str, Evidence]] = field(default_factory=list)
    # headers configure_file() writes on the ROCm path (path below the build folder -> evidence)
    generated: dict[str, Evidence] = field(default_factory=dict)
    # macro -> [(value text or None, cond, evidence)]: what a configure_file() template writes
    template_defines: dict[str, list[tuple[str | None, Cond, Evidence]]] = field(default_factory=dict)
    generated_from: dict[str, str] = field(default_factory=dict)  # header written -> its template
    hip_build: list[Evidence] = field(default_factory=list)  # commands that compile as HIP
    # sources a file(GLOB) names, whatever becomes of the list: (pattern, recursive, evidence)
    globbed: list[tuple[str, bool, Evidence]] = field(default_factory=list)
    # project folders named as include directories (what `#include <x.h>` searches)
    include_dirs: list[str] = field(default_factory=list)
    # sources a compiling command names through a value the reader does not know (a list made at
    # configure time, ``${prefix}_x.cu``, a foreach over an unknown list): (a regular expression
    # every root-relative path it may name matches, evidence). ``.*``: any file of the project
    unresolved: list[tuple[str, Evidence]] = field(default_factory=list)


_UNSET: list[Item] = []  # a macro parameter's name had no variable in the caller before the call


class _Stop(Exception):
    """The evaluation budget ran out: what is known so far stands."""


class _Return(Exception):
    """``return()`` or a FATAL_ERROR certain on ROCm: the rest of the file is not evaluated."""


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_cmake
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_cmake.language()))


@dataclass
class _Command:
    name: str
    args: list[tuple[str, bool]]  # (text, quoted)
    line: int  # 1-based
    # The arguments as items when none reads a variable (most commands): expanded once
    plain: "list[Item] | None" = field(init=False, repr=False, compare=False)
    # Otherwise what each argument needs (``Interpreter._expand``), read once from the text:
    # its items (no variable), the name of the one variable it is (unquoted), or its text
    plan: "tuple[tuple[list[Item] | None, str | None, str, bool], ...]" = \
        field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.plain = None if any("${" in text for text, _ in self.args) else _split_items(self.args)
        self.plan = () if self.plain is not None else tuple(_plan_argument(text, quoted) for text, quoted in self.args)


def _plan_argument(text: str, quoted: bool) -> "tuple[list[Item] | None, str | None, str, bool]":
    if "${" not in text:
        return _split_items([(text, quoted)]), None, text, quoted
    whole = _VAR_REF.fullmatch(text)
    return None, whole.group(1) if whole and not quoted else None, text, quoted


@dataclass
class _Block:
    """An if chain, a foreach, a function/macro definition, or a while (its body read once)."""

    kind: str  # if | foreach | function | macro | while
    head: _Command
    branches: list[tuple[_Command, list]] = field(default_factory=list)  # (if/elseif/else, body)
    end_line: int = 0


def parse(text: str) -> list:
    """The file as commands and blocks (``_Command`` / ``_Block``), comments dropped."""
    data = text.encode("utf-8", "replace")
    tree = _parser().parse(data)
    return _statements(tree.root_node, data)


def _statements(node, data: bytes) -> list:
    out: list = []
    for child in node.children:
        kind = child.type
        if kind == "normal_command":
            out.append(_command(child, data))
        elif kind in ("if_condition", "foreach_loop", "function_def", "macro_def", "while_loop", "block_def"):
            block = _Block(kind.split("_")[0] if kind != "if_condition" else "if", _Command("", [], child.start_point[0] + 1))
            head = None
            for part in child.children:
                if part.type in ("if_command", "elseif_command", "else_command", "foreach_command", "function_command",
                                 "macro_command", "while_command", "block_command"):
                    head = _command(part, data)
                    block.branches.append((head, []))
                elif part.type == "body" and block.branches:
                    block.branches[-1][1].extend(_statements(part, data))
            if block.branches:
                block.head = block.branches[0][0]
            block.end_line = child.end_point[0] + 1
            out.append(block)
        elif kind == "body":
            out.extend(_statements(child, data))
    return out


def _command(node, data: bytes) -> _Command:
    name = ""
    args: list[tuple[str, bool]] = []
    for part in node.children:
        if part.type in ("identifier", "if", "elseif", "else", "foreach", "function", "macro", "while", "block"):
            name = data[part.start_byte:part.end_byte].decode("utf-8", "replace").lower()
        elif part.type == "argument_list":
            for arg in part.children:
                if arg.type != "argument":
                    continue
                inner = arg.children[0] if arg.children else arg
                text = data[inner.start_byte:inner.end_byte].decode("utf-8", "replace")
                if inner.type == "quoted_argument":
                    args.append((text[1:-1] if text.startswith('"') else text, True))
                elif inner.type == "bracket_argument":
                    args.append((re.sub(r"^\[=*\[|\]=*\]$", "", text), True))
                else:
                    args.append((text, False))
    return _Command(name, args, node.start_point[0] + 1)


# --- what a branch does -----------------------------------------------------------------
def _platform_of(body: list) -> str | None:
    """'hip' when the commands enable or build for HIP, 'cuda' when they do only CUDA work,
    'other' when they do only another GPU vendor's (SYCL, Metal).
    Only the branch's own commands count (loops included): a nested ``if`` selects by its
    own condition, and says nothing of the outer one."""
    hip = strong = cuda = False
    work: list[str] = []  # the words searched, for another vendor's only when no platform's matched
    for cmd in _own_commands(body):
        texts = [cmd.name] + [a for a, _ in cmd.args]
        upper = [a.upper() for a, _ in cmd.args]
        if cmd.name in ("enable_language", "project") and "HIP" in upper:
            strong = True
        if cmd.name == "find_package" and upper and (upper[0] in ("HIP", "ROCM") or upper[0].startswith("HIP")):
            strong = True
        if cmd.name in ("enable_language", "project") and "CUDA" in upper:
            cuda = True
        if cmd.name == "message":
            continue  # words in messages are not work
        for text in texts:
            if _SOURCE_EXT.search(text):  # a source is its own name's work, not its folder's
                text = text.rpartition("/")[2]
            if _STRONG_HIP.search(text):
                strong = True
            if _HIP_WORD.search(text):
                hip = True
            if _CUDA_WORD.search(text) or text.lower().endswith((".cu", ".cuh")):
                cuda = True
            work.append(text)
    if strong or (hip and not cuda):
        return "hip"
    if cuda and not hip:
        return "cuda"
    if not hip and not cuda and any(_OTHER_GPU_WORD.search(text) for text in work):
        return "other"
    return None


def _holds_platform_choice(body: list) -> bool:
    """The body chooses between the platforms itself: an ``if`` of its own (not nested
    deeper) with a HIP branch and a CUDA branch."""
    for st in body:
        if isinstance(st, _Block) and st.kind == "if":
            platforms = {_platform_of(branch) for _head, branch in st.branches}
            if {"hip", "cuda"} <= platforms:
                return True
    return False


def _own_commands(statements: list):
    for st in statements:
        if isinstance(st, _Command):
            yield st
        elif st.kind in ("foreach", "while", "block"):
            for _head, body in st.branches:
                yield from _own_commands(body)


def _walk(statements: list):
    for st in statements:
        if isinstance(st, _Command):
            yield st
        else:
            for head, body in st.branches:
                yield head
                yield from _walk(body)


@dataclass
class _Learned:
    """The ROCm configuration learned from what branches do: variable -> required truth
    (True/False), or -> the value it equals ("=v") / does not equal ("!=v")."""

    truth: dict[str, set] = field(default_factory=dict)
    # what ``if(NOT X)`` branches taught: weaker than ``if(X)`` (a stub built where a platform
    # is absent, ``if(NOT X_BUILD_CUDA) add_library(x_cuda cuda_hooks.cpp)``, names it)
    negated: dict[str, set] = field(default_factory=dict)
    equals: dict[str, set] = field(default_factory=dict)
    differs: dict[str, set] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    # variables the configuration reads from files or programs: what they hold is data
    read_from_disk: set[str] = field(default_factory=set)

    def switch(self, name: str) -> bool | None:
        """The switch's value in the ROCm build, where its branches agree (``if(X)`` first)."""
        for taught in (self.truth.get(name), self.negated.get(name)):
            if taught:
                return next(iter(taught)) if len(taught) == 1 else None
        return None

    def selects(self, name: str) -> bool:
        """Some branch on ``name`` does platform work: a selector the configuration decides."""
        return name in self.truth or name in self.negated or name in self.equals or name in self.differs

    def settled(self, name: str) -> tuple[set, set]:
        """The values ``name`` equals and differs from in the ROCm build, less those the
        branches disagree on (one ROCm-looking and one CUDA-looking branch on the same
        ``NAME STREQUAL v``): a contradiction teaches nothing."""
        equals, differs = self.equals.get(name, set()), self.differs.get(name, set())
        return equals - differs, differs - equals


def _read_from_disk(statements: list) -> set[str]:
    """Variables ``file(READ|STRINGS ...)`` or ``execute_process(OUTPUT_VARIABLE ...)`` set: a
    branch on what they hold (``if(text MATCHES "NCCL_MAJOR := ...")``) parses data, it
    does not select a platform."""
    names: set[str] = set()
    for cmd in _walk(statements):
        words = [a for a, _ in cmd.args]
        if cmd.name == "file" and len(words) >= 3 and words[0].upper() in ("READ", "STRINGS"):
            names.add(words[2])
        elif cmd.name == "execute_process":
            names.update(value for key, value in zip(words, words[1:])
                         if key in ("OUTPUT_VARIABLE", "ERROR_VARIABLE", "RESULT_VARIABLE"))
    return names


def _learn(statements: list, rel: str, learned: _Learned, port: bool = False) -> None:
    for st in statements:
        if not isinstance(st, _Block):
            continue
        if st.kind == "if":
            for index, (head, body) in enumerate(st.branches):
                if head.name == "if" and _holds_platform_choice(body):
                    # `if(ENABLE_GPU)` around `if(ENABLE_ROCM) <HIP> else() <CUDA>`: the switch of
                    # the GPU build as a whole, which the ROCm build is one of
                    _learn_condition(head, True, rel, learned)
                    continue
                platform = _platform_of(body)
                if platform is not None and head.name in ("if", "elseif"):
                    _learn_condition(head, branch_taken(platform, port), rel, learned)
                elif platform in ("hip", "cuda") and head.name == "else" and len(st.branches) == 2 and \
                        not _holds_platform_choice(st.branches[0][1]):
                    _learn_condition(st.branches[0][0], not branch_taken(platform, port), rel, learned)
        for _head, body in st.branches:
            _learn(body, rel, learned, port)


def _learn_condition(head: _Command, on_rocm: bool, rel: str, learned: _Learned) -> None:
    """What a branch's condition says of its variables when the branch is (not) ROCm's."""
    args = [a for a, _ in head.args]
    negated = bool(args) and args[0].upper() == "NOT"
    if negated:
        args = args[1:]
        on_rocm = not on_rocm
    where = f"{rel}:{head.line}"
    name = _bare_var(args[0]) if args else None
    if name in learned.read_from_disk:
        return
    if len(args) == 1 and name:
        if on_rocm or not _HIP_WORD.search(name):  # a CUDA branch says its switch is off, not a HIP one
            (learned.negated if negated else learned.truth).setdefault(name, set()).add(on_rocm)
            learned.why.setdefault(name, where)
    elif len(args) == 3 and args[1].upper() in ("STREQUAL", "MATCHES") and name:
        value = args[2]
        (learned.equals if on_rocm else learned.differs).setdefault(name, set()).add(value)
        learned.why.setdefault(name, where)


def _bare_var(arg: str) -> str | None:
    """The variable a condition tests, when it is one a user sets (an option or a cache
    variable): not CMake's own (``CMAKE_*``) nor a package search's result (``*_FOUND``),
    which say what the machine has, not what the build selects."""
    m = _PLAIN_NAME.fullmatch(arg)
    if m is None:
        return None
    name = m.group(1) or m.group(2)
    if name.upper() in _TRUE_CONSTANTS | _FALSE_CONSTANTS or name.upper().endswith("_FOUND") \
            or name.startswith("CMAKE_"):
        return None
    return name


# --- the interpreter --------------------------------------------------------------------
class _Scope:
    def __init__(self, parent: "_Scope | None" = None) -> None:
        self.vars: dict[str, list[Item] | None] = dict(parent.vars) if parent is not None else {}
        self.parent = parent  # set(... PARENT_SCOPE) writes there

    def folder(self, rel: str) -> str:
        """The current source folder (a function runs in its caller's), root-relative."""
        current = self.vars.get("CMAKE_CURRENT_SOURCE_DIR")
        if current and current[0].text.startswith(ROOT):
            return _strip_root(current[0].text)
        return _folder(rel)


class Interpreter:
    """Evaluates a project's CMake files (``texts``: root-relative path -> text)."""

    def __init__(self, texts: dict[str, str], options: dict[str, str] | None = None,
                 templates: dict[str, str] | None = None, port: bool = False) -> None:
        self.texts = {rel: text for rel, text in texts.items()
                      if rel.endswith(("CMakeLists.txt", ".cmake"))}
        self.options = dict(options or {})
        self.templates = templates or {}  # configure_file() inputs: root-relative path -> text
        # The AMD build read as a port (the project has no HIP build): CUDA branches are taken
        self.port = port
        self.parsed: dict[str, list] = {}
        self.facts = CMakeFacts()
        self.functions: dict[str, tuple[_Block, str]] = {}
        self.learned = _Learned()
        self.steps = 0
        self.depth = 0
        self.visited: set[str] = set()
        self.hip_files: set[str] = set()
        # every unquoted word a command is given, and the names set(${...}) may make: read
        # once, for the first foreach over a list of unknown origin (``_never_set``)
        self._set_words: tuple[set[str], list[re.Pattern]] | None = None
        self.by_name: set[str] = set()  # switches decided by the platform their name states
        self._switches: dict[str, bool | None] = {}
        self._joined: dict[str, list[Item]] = {}  # a quoted list expansion -> the list's items
        self._unresolved_seen: set[str] = set()  # patterns in facts.unresolved

    def program(self, rel: str) -> list:
        if rel not in self.parsed:
            try:
                self.parsed[rel] = parse(self.texts[rel])
            except Exception:  # noqa: BLE001 - an unreadable build file gives no facts
                self.parsed[rel] = []
        return self.parsed[rel]

    def run(self) -> CMakeFacts:
        """Evaluate the project's CMake files (see the module docstring)."""
        for rel in sorted(self.texts):
            statements = self.program(rel)
            self.learned.read_from_disk |= _read_from_disk(statements)
            self._scan(statements, rel)
        for rel in sorted(self.texts):
            statements = self.program(rel)
            _learn(statements, rel, self.learned, self.port)
            self._collect_functions(statements, rel)
            if _platform_of(statements) == "hip" and not any(
                    c.name in ("enable_language", "project") and "CUDA" in [a.upper() for a, _ in c.args]
                    for c in _walk(statements)):
                self.hip_files.add(rel)
        # The clearest evidence of a HIP build first: the language enabled, sources compiled as HIP
        self.facts.hip_build.sort(key=lambda e: not e.what.startswith(_HIP_LANGUAGE_COMMANDS))
        tops = [rel for rel in sorted(self.texts) if rel.endswith("CMakeLists.txt")
                and (not _folder(rel) or _join(_folder(_folder(rel)), "CMakeLists.txt") not in self.texts)]
        try:
            # The project's own top CMakeLists first: it is what its ROCm build configures.
            for rel in sorted(tops, key=lambda r: (r != "CMakeLists.txt", r)):
                if rel not in self.visited:
                    self._run_file(rel, _Scope(), TRUE if rel in self.hip_files or rel == "CMakeLists.txt"
                                   else Cond(None))
            # Files no other file reached (a subproject's CMakeLists added from outside the tree).
            for rel in sorted(self.texts):
                if rel.endswith("CMakeLists.txt") and rel not in self.visited:
                    self._run_file(rel, _Scope(), TRUE if rel in self.hip_files else Cond(None))
        except _Stop:
            pass
        return self.facts

    def _scan(self, statements: list, rel: str) -> None:
        """Where the project compiles as HIP, read from the text alone (in any branch: a
        build that can compile for AMD). Every word of it names "hip" or amdclang."""
        lowered = self.texts[rel].lower()
        if "hip" not in lowered and "amdclang" not in lowered:
            return
        for cmd in _walk(statements):
            if len(self.facts.hip_build) >= MAX_HIP_BUILD_EVIDENCE:
                return
            if cmd.name in ("if", "elseif", "message"):
                continue
            if cmd.name.startswith("hip_add_") or (cmd.name == "find_package" and cmd.args[:1] in (
                    [("hip", False)], [("HIP", False)])) or _HIP_BUILD_WORD.search("\n".join(a for a, _ in cmd.args)):
                self.facts.hip_build.append(Evidence(f"{cmd.name}({' '.join(a for a, _ in cmd.args)[:80]})",
                                                     f"{rel}:{cmd.line}", KIND_BUILD_FILE))

    def _never_set(self, name: str) -> bool:
        """No build file can set this variable (a list from outside the project, which the
        ROCm build does not have unless ``build-options`` gives it): no command is given its
        name as a plain word, and no ``set(${prefix}_X ...)`` can make it."""
        if self._set_words is None:
            words: set[str] = set()
            patterns: list[re.Pattern] = []
            for rel in self.texts:
                for cmd in _walk(self.program(rel)):
                    if cmd.name in ("foreach", "if", "elseif", "while", "message"):
                        continue
                    for position, (text, quoted) in enumerate(cmd.args):
                        if not quoted and "${" not in text:
                            words.add(text)
                        elif position == 0 and "${" in text:
                            patterns.append(re.compile(re.sub(r"\\\$\\\{[^}]*\\\}", ".*", re.escape(text))))
            self._set_words = (words, patterns)
        words, patterns = self._set_words
        return name not in words and name not in self.options and name not in _BUILTIN \
            and not any(pattern.fullmatch(name) for pattern in patterns)

    def _collect_functions(self, statements: list, rel: str) -> None:
        for st in statements:
            if isinstance(st, _Block):
                if st.kind in ("function", "macro") and st.head.args:
                    self.functions.setdefault(st.head.args[0][0].lower(), (st, rel))
                for _head, body in st.branches:
                    self._collect_functions(body, rel)

    def _run_file(self, rel: str, scope: _Scope, cond: Cond) -> None:
        if self.depth > MAX_DEPTH:
            return
        self.visited.add(rel)
        folder = _folder(rel)
        scope.vars["CMAKE_CURRENT_SOURCE_DIR"] = [Item(_join(ROOT, folder))]
        scope.vars["CMAKE_CURRENT_LIST_DIR"] = [Item(_join(ROOT, folder))]
        scope.vars.setdefault("CMAKE_SOURCE_DIR", [Item(_join(ROOT, folder))])
        scope.vars.setdefault("PROJECT_SOURCE_DIR", [Item(_join(ROOT, folder))])
        self.depth += 1
        try:
            self._block(self.program(rel), scope, cond, rel)
        except _Return:
            pass
        finally:
            self.depth -= 1

    def _block(self, statements: list, scope: _Scope, cond: Cond, rel: str) -> None:
        for st in statements:  # also under a false condition: its uses are the NVIDIA build's
            self.steps += 1
            if self.steps > MAX_COMMANDS:
                raise _Stop
            if isinstance(st, _Command):
                cond = self._command(st, scope, cond, rel)
            else:
                cond = self._compound(st, scope, cond, rel)

    def _compound(self, block: _Block, scope: _Scope, cond: Cond, rel: str) -> Cond:
        """Runs a block; returns the condition for what follows it (False once a FATAL_ERROR
        in a branch ROCm takes for certain ends the configuration there)."""
        if block.kind in ("function", "macro"):
            return cond
        if block.kind == "foreach":
            head, body = block.branches[0]
            args = list(head.plain) if head.plain is not None else self._expand(head, scope)
            if not args:
                return cond
            var = args[0].text
            items = self._foreach_items(args[1:], scope)
            for item in items[:MAX_ITERATIONS]:
                scope.vars[var] = [item]
                self._block_guarded(body, scope, cond.and_(item.cond), rel)
            unset = self._unset_lists(head) if not items else []
            if not items and len(head.args) > 1 and head.args[1][0] != "RANGE" and cond.value is not False:
                # over a list the reader does not know (or one nothing sets, which a user may)
                self._unknown_loop(var, body, scope, rel)
            if unset:  # runs zero times on ROCm; what it would build is the other configuration's
                scope.vars[var] = None
                self._block_guarded(body, scope, cond.and_(Cond(
                    False, f"foreach over {', '.join(unset)}, a list no build file sets (runs zero times; "
                    "build-options can set it)", f"{rel}:{head.line}")), rel)
            return cond
        if block.kind != "if":  # while, block(): read once
            for _head, body in block.branches:
                self._block_guarded(body, scope, cond, rel)
            return cond
        taken_before: list[bool | None] = []
        after = cond
        first = block.branches[0][0]
        for head, body in block.branches:
            if head.name == "else":
                own = Cond(True, f"the else of if({' '.join(a for a, _ in first.args)})", f"{rel}:{head.line}")
            else:
                own = self.condition(head, scope, rel)
            # A branch runs when no earlier one did and its own condition holds.
            if any(v is True for v in taken_before):
                branch = Cond(False, own.text, own.where)
            elif all(v is False for v in taken_before):
                branch = own if head.name != "else" else (Cond(True) if not taken_before else
                                                          Cond(True, "else", f"{rel}:{head.line}"))
            else:
                branch = own if own.value is False else Cond(None, own.text or "else", own.where or f"{rel}:{head.line}")
            taken_before.append(branch.value)
            inner = cond.and_(branch)
            ended = self._block_guarded(body, scope, inner, rel)
            if ended and branch.value is True:  # certain wherever this block runs
                after = Cond(False, f"message(FATAL_ERROR) under {branch.text or 'the enclosing block'}",
                             branch.where or f"{rel}:{head.line}")
        return after

    def _unknown_loop(self, var: str, body: list, scope: _Scope, rel: str) -> None:
        """A foreach over a list the reader does not know runs its body unseen: what its
        compiling commands (and project functions) name through the loop variable may be any
        source those words can spell."""
        ref = "${" + var + "}"
        folder = scope.folder(rel)
        for cmd in _walk(body):
            if cmd.name in self.functions or _SOURCE_COMMAND.match(cmd.name):
                for text, _quoted in cmd.args[1:]:
                    if ref in text:
                        self._note_unresolved(unresolved_pattern(text, folder), lambda: Evidence(
                            f"{cmd.name}() compiles {text} for each item of a list the reader does not know",
                            f"{rel}:{cmd.line}", KIND_BUILD_FILE))

    def _note_unresolved(self, pattern: str | None, why: Callable[[], Evidence]) -> None:
        if pattern is not None and pattern not in self._unresolved_seen and \
                len(self.facts.unresolved) < MAX_UNRESOLVED:
            self._unresolved_seen.add(pattern)
            self.facts.unresolved.append((pattern, why()))

    def _block_guarded(self, body: list, scope: _Scope, cond: Cond, rel: str) -> bool:
        """Runs a body; True when it ended in a FATAL_ERROR or return()."""
        try:
            self._block(body, scope, cond, rel)
        except _Return:
            return True
        return False

    def _unset_lists(self, head: _Command) -> list[str]:
        """The lists a ``foreach`` reads, when every one is a variable no build file sets."""
        names = []
        raw = [text for text, _ in head.args[1:]]
        if raw[:2] == ["IN", "LISTS"]:
            names = raw[2:]
        elif raw and raw[0] not in ("IN", "RANGE"):
            for text in raw:
                whole = _VAR_REF.fullmatch(text)
                if whole is None:
                    return []
                names.append(whole.group(1))
        return names if names and all(self._never_set(n) for n in names) else []

    def _foreach_items(self, args: list[Item], scope: _Scope) -> list[Item]:
        words = [a.text for a in args]
        if words and words[0] == "RANGE":
            return []  # numeric loops name no sources
        if words and words[0] == "IN":
            out: list[Item] = []
            mode = None
            for item in args[1:]:
                if item.text in ("LISTS", "ITEMS", "ZIP_LISTS"):
                    mode = item.text
                elif mode == "LISTS":
                    out.extend(self._value(item.text, scope) or [])
                elif mode == "ITEMS":
                    out.append(item)
            return out
        return args

    # --- commands -------------------------------------------------------------------
    def _command(self, cmd: _Command, scope: _Scope, cond: Cond, rel: str) -> Cond:
        name = cmd.name
        if name in _INERT and name not in self.functions:
            return cond
        where = f"{rel}:{cmd.line}"
        # The folder is read before the command runs (a macro may set it); only for commands
        # that use it: most are set/list/message.
        folder = scope.folder(rel) if self._uses_folder(name) else ""
        if name == "message":
            if cmd.args and cmd.args[0][0] == "FATAL_ERROR" and cond.value is not False:
                raise _Return
            return cond
        if name == "return":
            raise _Return
        compiles = name in self.functions or _SOURCE_COMMAND.match(name) is not None
        args = list(cmd.plain) if cmd.plain is not None else self._expand(cmd, scope, compiles)
        words = [a.text for a in args]
        if name == "set" and words:
            if cmd.plain is None and any(whole is not None and self._value(whole, scope) is None
                                         for _items, whole, _text, _quoted in cmd.plan[1:]):
                args = args[:1] + [Item("${}")] + args[1:]  # reads a variable with no known value: unknown
            self._set(scope, words[0], args[1:], cond, where)
        elif name == "unset" and words:
            if cond.value is True:
                scope.vars.pop(words[0], None)
        elif name == "option" and words:
            if words[0] not in scope.vars:
                scope.vars[words[0]] = self._configured(words[0], [Item(words[2] if len(words) > 2 else "OFF")])
        elif name == "list" and len(words) >= 2:
            self._list(scope, words, args, cond, where)
        elif name == "file" and len(words) >= 3 and words[0] in ("GLOB", "GLOB_RECURSE"):
            out: list[Item] = []
            skip = False
            for a in args[2:]:
                if skip:  # the value of RELATIVE / LIST_DIRECTORIES
                    skip = False
                elif a.text in ("RELATIVE", "LIST_DIRECTORIES"):
                    skip = True
                elif a.text not in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                    out.append(Item(_resolve(a.text, folder), a.cond, where, words[0]))
            self._assign(scope, words[1], out, cond)
            for item in out:
                pattern = _normpath(_strip_root(item.text)) if "${" not in item.text else None
                if pattern and _SOURCE_EXT.search(pattern):
                    self.facts.globbed.append((pattern, words[0] == "GLOB_RECURSE", Evidence(
                        f"file({words[0]} {words[1]} ... {item.text.rpartition('/')[2]})", where, KIND_BUILD_FILE)))
        elif name == "add_subdirectory" and words:
            sub = _normpath(_strip_root(_resolve(words[0], folder)))
            if sub is not None:
                child = f"{sub}/CMakeLists.txt" if sub else "CMakeLists.txt"
                if cond.value is False:
                    self.facts.dead_dirs.setdefault(sub, Evidence(
                        f"add_subdirectory({words[0]}) only where the ROCm build never goes: "
                        f"{describe(cond)}", where, KIND_BUILD_FILE))
                if child in self.texts and child not in self.visited:
                    self._run_file(child, _Scope(scope), cond)
        elif name == "configure_file" and len(words) >= 2 and cond.value is not False:
            output = generated_path(words[1])
            if output:
                self.facts.generated.setdefault(output, Evidence(
                    f"configure_file({words[0]} {words[1]}) writes it", where, KIND_BUILD_FILE))
            template = _normpath(_strip_root(_resolve(words[0], folder)))
            if template is not None and template in self.templates:
                self._configure(template, scope, cond, where)
                if output:
                    self.facts.generated_from.setdefault(output, template)
        elif name == "include" and words:
            target = self._include_target(words[0], folder)
            if target is not None and self.depth <= MAX_DEPTH:
                self.depth += 1
                try:
                    self._block(self.program(target), scope, cond, target)
                except _Return:
                    pass
                finally:
                    self.depth -= 1
        elif name in _INCLUDE_DIR_COMMANDS and cond.value is not False:
            self._include_dirs(words[1:] if name.startswith("target_") else words, folder)
        elif name in self.functions and name not in ("if", "set"):
            self._call(name, args, scope, cond, where)
        if "hipify" in name or (name in _RUNS_PROGRAMS and cond.value is not False
                                and any("hipify" in a.lower() for a, _ in cmd.args)):
            self.facts.hipify_dirs.setdefault(folder, Evidence(f"sources are hipified ({name}(...))", where,
                                                               KIND_BUILD_FILE))
        if "hipify" in name:
            mapping = hipify_folders([a.text for a in args], folder)
            if mapping is not None:
                self.facts.hipify_outputs.append((*mapping, Evidence(
                    f"{name}(...) writes the hipified copies of {mapping[0] or '.'} to {mapping[1]}", where,
                    KIND_BUILD_FILE)))
        if name in ("add_compile_definitions", "add_definitions", "target_compile_definitions"):
            self._definitions(name, args, cond, where, rel)
        if name not in _NOT_A_USE and name not in self.functions:
            self._uses(name, args, cond, where, folder)
            if compiles and cmd.plain is None and cond.value is not False:
                self._unresolved(name, args[1:], where, folder)
        return cond

    def _unresolved(self, name: str, args: list[Item], where: str, folder: str) -> None:
        """What a compiling command is given that names sources the reader cannot resolve:
        a pattern of every path it may name (``CMakeFacts.unresolved``)."""
        for item in self._unjoined(args):
            text = item.text
            if ("${" not in text and "$<" not in text) or item.cond.value is False:
                continue
            self._note_unresolved(unresolved_pattern(text, folder), lambda: Evidence(
                f"{name}() compiles {'a list the reader does not know' if text == _UNKNOWN else text}",
                where, KIND_BUILD_FILE))

    def _include_dirs(self, words: list[str], folder: str) -> None:
        """The project folders an include_directories() call adds (generator expressions and
        paths through unknown variables are left out)."""
        for word in words:
            if word in _INCLUDE_DIR_KEYWORDS or "$" in word:
                continue
            path = _normpath(_strip_root(_resolve(word, folder)))
            if path is not None and path not in self.facts.include_dirs:
                self.facts.include_dirs.append(path)

    def _configure(self, template: str, scope: _Scope, cond: Cond, where: str) -> None:
        """The macros ``configure_file(template ...)`` writes, each with the value of the
        variable it reads at this point of the ROCm configuration."""
        evaluator = _Eval(self, scope, [])
        for entry in template_lines(self.templates[template]):
            if entry.kind not in ("cmakedefine", "cmakedefine01", "define"):
                continue
            here = f"{template}:{entry.line}"
            value = substitute(entry.rest, lambda v: self._text_of(v, scope))
            if entry.kind == "define":
                self._template_define(entry.macro, value, cond, Evidence(
                    f"configure_file() writes `#define {entry.macro} {entry.rest}` ({where})", here, KIND_BUILD_FILE))
                continue
            truth = evaluator.truth(entry.macro, False)
            state = {True: "true", False: "false", None: "undecided"}[truth]
            named = " (by its name: no build file sets it)" if entry.macro in self.by_name else ""
            why = Evidence(f"configure_file() writes `#{entry.kind} {entry.macro}`; {entry.macro} is {state} in the "
                           f"ROCm build{named} ({where})", here, KIND_BUILD_FILE)
            on = cond.and_(Cond(truth, entry.macro, where))
            if entry.kind == "cmakedefine01":
                self._template_define(entry.macro, "1", on, why)
                self._template_define(entry.macro, "0", cond.and_(Cond(None if truth is None else not truth,
                                                                        entry.macro, where)), why)
            else:
                self._template_define(entry.macro, value if entry.rest else "", on, why)

    def _template_define(self, macro: str, value: str | None, cond: Cond, why: Evidence) -> None:
        self.facts.template_defines.setdefault(macro, []).append((value, cond, why))

    def _text_of(self, name: str, scope: _Scope) -> str | None:
        """A variable's text in the ROCm build (``@VAR@`` of a template), None when unknown."""
        value = _live(self._value(name, scope))
        if value is not None:
            return ";".join(v.text for v in value) if all(v.cond.value is True for v in value) else None
        switch = self.learned.switch(name)
        return None if switch is None else ("ON" if switch else "OFF")

    def _uses_folder(self, name: str) -> bool:
        """Whether ``_command`` reads the current folder for a command of this name."""
        return name in _FOLDER_COMMANDS or "hipify" in name or name in _RUNS_PROGRAMS or \
            (name not in _NOT_A_USE and name not in self.functions)

    def _configured(self, name: str, default: list[Item]) -> list[Item] | None:
        """A cache variable's or option's value in the ROCm build: the configuration's
        (build-options), else what its branches say, else the platform its name states,
        else unknown (a user may set it)."""
        if name in self.options:
            return [Item(self.options[name])]
        truth = self.switch(name)
        if truth is not None:
            return [Item("ON" if truth else "OFF")]
        equals, _ = self.learned.settled(name)
        if len(equals) == 1:
            return [Item(next(iter(equals)))]
        return None

    def switch(self, name: str) -> bool | None:
        """A switch's value in the ROCm build: what its branches taught, else the platform its
        name states (``EXAMPLES_ENABLE_CUDA``: weaker evidence, named in the condition's text).
        Memoised: what was learned is fixed once the evaluation starts."""
        memo = self._switches
        if name in memo:
            return memo[name]
        value = self.learned.switch(name)
        if value is None and _bare_var(name) is not None:
            value = value_by_name(name, self.port)
            if value is not None:
                self.by_name.add(name)
        memo[name] = value
        return value

    def _set(self, scope: _Scope, name: str, values: list[Item], cond: Cond, where: str) -> None:
        words = [v.text for v in values]
        if "CACHE" in words:
            cut = words.index("CACHE")
            if name in scope.vars:
                return  # a cache entry never overrides a set value
            scope.vars[name] = self._configured(name, values[:cut])
            return
        if words and words[-1] == "PARENT_SCOPE":
            values = values[:-1]
            if scope.parent is not None:
                scope = scope.parent
        if any("${" in v.text for v in values) and cond.value is not False:
            scope.vars[name] = None  # reads a variable whose value is unknown: unknown too
            return
        self._assign(scope, name, [Item(v.text, v.cond, v.origin or where, v.glob) for v in values], cond)

    def _assign(self, scope: _Scope, name: str, values: list[Item], cond: Cond) -> None:
        """Under a false condition the items join with that condition: the ROCm build never
        sees them, but a command using the list names them for the NVIDIA build."""
        new = [Item(v.text, cond.and_(v.cond), v.origin, v.glob) for v in values]
        if cond.value is False:
            scope.vars[name] = _distinct(new, scope.vars.get(name))
            return
        if cond.value is True:  # replaced, but what the NVIDIA configuration set stays on record
            scope.vars[name] = _distinct([o for o in scope.vars.get(name) or [] if o.cond.value is False] + new)
            return
        old = scope.vars.get(name) or []
        maybe = Cond(None, cond.text, cond.where)
        scope.vars[name] = _distinct([Item(o.text, o.cond.and_(maybe) if o.cond.value is True else o.cond, o.origin,
                                           o.glob) for o in old] + new)

    def _list(self, scope: _Scope, words: list[str], args: list[Item], cond: Cond, where: str) -> None:
        op, name = words[0], words[1]
        current = scope.vars.get(name) or []
        if op in ("APPEND", "PREPEND", "INSERT"):
            added = args[3:] if op == "INSERT" else args[2:]
            added = [Item(a.text, cond.and_(a.cond), a.origin or where, a.glob) for a in added]
            scope.vars[name] = _distinct(added + current) if op == "PREPEND" else _distinct(added, current)
        elif op == "REMOVE_ITEM" and cond.value is True:  # (removed under False: still there on ROCm)
            gone = set(words[2:])
            scope.vars[name] = [i for i in current if i.text not in gone]
        elif op == "FILTER" and len(words) >= 5 and cond.value is True:
            try:
                pattern = re.compile(words[4])
            except re.error:
                return
            keep = words[2] == "INCLUDE"
            scope.vars[name] = [i for i in current if i.glob or bool(pattern.search(i.text)) == keep]

    def _include_target(self, name: str, folder: str) -> str | None:
        resolved = _strip_root(_resolve(name, folder))
        for candidate in (resolved, resolved + ".cmake", _join(folder, name), _join(folder, name + ".cmake"),
                          _join("cmake", name + ".cmake")):
            path = _normpath(candidate)
            if path is not None and path in self.texts:
                return path
        stem = name.rsplit("/", 1)[-1]
        matches = [r for r in self.texts if r.endswith("/" + stem + ".cmake") or r == stem + ".cmake"]
        return matches[0] if len(matches) == 1 else None

    def _call(self, name: str, args: list[Item], scope: _Scope, cond: Cond, where: str) -> None:
        block, rel = self.functions[name]
        if self.depth > MAX_DEPTH:
            return
        params = [a for a, _ in block.head.args[1:]]
        # A function runs in a copy of the caller's variables; a macro in the caller's own,
        # its parameters set for the call only (CMake substitutes them as text).
        macro = block.kind == "macro"
        inner = scope if macro else _Scope(scope)
        own = (*params, "ARGN", "ARGV")
        saved = {name: inner.vars.get(name, _UNSET) for name in own} if macro else {}
        for i, param in enumerate(params):
            inner.vars[param] = ([args[i]] if args[i].text != _UNKNOWN else None) if i < len(args) else []
        inner.vars["ARGN"] = args[len(params):]
        inner.vars["ARGV"] = list(args)
        _parse_arguments(inner, block, args)
        self.depth += 1
        try:
            self._block(block.branches[0][1], inner, cond, rel)
        except _Return:
            pass
        finally:
            self.depth -= 1
            for name, value in saved.items():
                if value is _UNSET:
                    inner.vars.pop(name, None)
                else:
                    inner.vars[name] = value

    def _definitions(self, name: str, args: list[Item], cond: Cond, where: str, rel: str) -> None:
        items = args
        if name == "target_compile_definitions":
            items = [a for a in args[1:] if a.text not in ("PUBLIC", "PRIVATE", "INTERFACE")]
        for item in items:
            text = item.text
            if name == "add_definitions":
                if not text.startswith("-D"):
                    continue
                text = text[2:]
            elif text.startswith("-D"):
                text = text[2:]
            macro, _, value = text.partition("=")
            if not _C_IDENTIFIER.fullmatch(macro):
                continue
            effective = cond.and_(item.cond)
            if rel in self.hip_files and effective.value is None and not effective.text:
                effective = TRUE  # a HIP-only build file's top level
            origin = f"; the value is set at {item.origin}" if item.origin and item.origin != where else ""
            self.facts.definitions.setdefault(macro, []).append(
                (value, effective, Evidence(f"{name}({text}) {describe(effective)}{origin}", where, KIND_BUILD_FILE)))

    def _uses(self, name: str, args: list[Item], cond: Cond, where: str, folder: str) -> None:
        platform_only: Cond | None = None
        for item in self._unjoined(args):
            if _CUDA_SOURCES_KEYWORD.match(item.text):
                platform_only = Cond(False, f"listed under {item.text} of {name}()", where)
                continue
            if _KEYWORD.match(item.text) and platform_only is not None:
                platform_only = None
            if not (item.glob or _SOURCE_EXT.search(item.text)):
                continue
            if "${" in item.text or "$<" in item.text:
                continue
            effective = cond.and_(item.cond)
            if platform_only is not None:
                effective = platform_only
            path = _normpath(_strip_root(_resolve(item.text, folder)) if not item.glob else _strip_root(item.text))
            if path is None:
                continue
            listed = f"; listed at {item.origin}" if item.origin and item.origin != where else ""
            # A pattern handed to a helper (glob_files(...)) is a glob too.
            kind = item.glob or ("GLOB" if any(c in item.text for c in "*?[") else "")
            self.facts.uses.append(SourceUse(path, kind, effective, Evidence(
                f"{name}() compiles it {describe(effective)}{listed}", where, KIND_BUILD_FILE)))

    # --- values -----------------------------------------------------------------------
    def _expand(self, command: _Command, scope: _Scope, keep_unknown: bool = False) -> list[Item]:
        """The arguments as items; ``keep_unknown``: a variable with no known value stays as
        ``_UNKNOWN`` (a compiling command's or a project function's: it may hold sources)."""
        out: list[Item] = []
        for items, whole, text, quoted in command.plan:
            if items is not None:  # most words: nothing to substitute
                out.extend(items)
                continue
            if whole is not None:
                value = self._value(whole, scope)
                if value is not None:
                    out.extend(self._unjoined(value))
                elif keep_unknown:
                    out.append(Item(_UNKNOWN))
                continue
            if quoted:
                quoted_whole = _VAR_REF.fullmatch(text)
                value = self._value(quoted_whole.group(1), scope) if quoted_whole else None
                if value is not None and len(value) > 1:
                    # "${SRCS}": one argument, the list joined; its items (and the condition
                    # each was added under) come back where it is expanded unquoted or compiled
                    joined = Item(";".join(item.text for item in value))
                    self._joined[joined.text] = list(value)
                    out.append(joined)
                    continue
            expanded = self._substitute(text, scope)
            if quoted or ";" not in expanded:
                out.append(Item(expanded))
            else:
                out.extend(Item(part) for part in expanded.split(";") if part)
        return out

    def _unjoined(self, items: list[Item]) -> list[Item]:
        """Items with a quoted list expansion among them split back into that list's items."""
        if not self._joined or not any(item.text in self._joined for item in items):
            return items
        out: list[Item] = []
        for item in items:
            parts = self._joined.get(item.text)
            out.extend([item] if parts is None else [part._replace(cond=item.cond.and_(part.cond)) for part in parts])
        return out

    def _substitute(self, text: str, scope: _Scope) -> str:
        def one(m: re.Match) -> str:
            value = _live(self._value(m.group(1), scope))
            if value is None or len(value) != 1:
                return m.group(0) if value is None else ";".join(i.text for i in value)
            return value[0].text

        for _ in range(4):  # ${${name}}: a reference made by a substitution is substituted too
            if "${" not in text:
                break
            new = _VAR_REF.sub(one, text)
            if new == text:
                break
            text = new
        return text

    def _value(self, name: str, scope: _Scope) -> list[Item] | None:
        if name.startswith("ENV{"):
            return None
        if name in scope.vars:
            return scope.vars[name]
        if name in self.options:
            return [Item(self.options[name])]
        if name in _BUILTIN:
            return [Item(_BUILTIN[name])]
        return None

    def condition(self, head: _Command, scope: _Scope, rel: str) -> Cond:
        text = " ".join(f'"{a}"' if q else a for a, q in head.args)
        where = f"{rel}:{head.line}"
        tokens = [(a, q) for a, q in head.args]
        try:
            value, _ = _Eval(self, scope, tokens).expr(0)
        except (IndexError, ValueError):
            value = None
        named = [a for a, q in head.args if not q and a in self.by_name]
        note = f" [{', '.join(named)} by {'their names' if len(named) > 1 else 'its name'}]" if named else ""
        return Cond(value, f"{head.name}({text}){note}", where)


class _Eval:
    """Three-valued ``if()`` arguments (NOT, AND, OR, parentheses, unary tests, comparisons)."""

    def __init__(self, interp: Interpreter, scope: _Scope, tokens: list[tuple[str, bool]]) -> None:
        self.interp, self.scope, self.tokens = interp, scope, tokens

    def expr(self, i: int) -> tuple[bool | None, int]:
        value, i = self.term(i)
        while i < len(self.tokens) and self.tokens[i][0].upper() == "OR" and not self.tokens[i][1]:
            right, i = self.term(i + 1)
            value = or3(value, right)
        return value, i

    def term(self, i: int) -> tuple[bool | None, int]:
        value, i = self.factor(i)
        while i < len(self.tokens) and self.tokens[i][0].upper() == "AND" and not self.tokens[i][1]:
            right, i = self.factor(i + 1)
            value = and3(value, right)
        return value, i

    def factor(self, i: int) -> tuple[bool | None, int]:
        text, quoted = self.tokens[i]
        if text.upper() == "NOT" and not quoted:
            value, i = self.factor(i + 1)
            return (None if value is None else not value), i
        if text == "(" and not quoted:
            value, i = self.expr(i + 1)
            return value, i + 1
        if text.upper() in _UNARY and not quoted and i + 1 < len(self.tokens):
            subject = self.tokens[i + 1][0]
            if text.upper() == "DEFINED":
                name = re.sub(r"^\$\{|\}$", "", subject)
                known = self.interp._value(name, self.scope)
                return (True if known is not None else None), i + 2
            return None, i + 2
        if i + 2 < len(self.tokens) and self.tokens[i + 1][0].upper() in _BINARY and not self.tokens[i + 1][1]:
            return self.compare(self.tokens[i], self.tokens[i + 1][0].upper(), self.tokens[i + 2]), i + 3
        return self.truth(text, quoted), i + 1

    def operand(self, token: tuple[str, bool]) -> str | None:
        """A comparison operand's text: a variable's value (a bare name), else the text."""
        text, quoted = token
        expanded = self.interp._substitute(text, self.scope)
        if "${" in expanded:
            return None
        if not quoted and _VARIABLE_NAME.fullmatch(expanded):
            value = _live(self.interp._value(expanded, self.scope))
            if value is not None:
                return ";".join(v.text for v in value) if all(v.cond.value is True for v in value) else None
            if self.interp.learned.selects(expanded):
                return None  # a selector the configuration leaves open
            if expanded.lower() in ("cuda", "hip", "rocm"):
                return expanded  # a platform's name as a value
            if _cuda_setting(expanded) and not self.interp.port:
                return ""  # a CUDA setting (arch list, flags, version): not set in a ROCm build
            return None  # an unset variable: CMake would read "" but a user may set it
        return expanded

    def compare(self, left: tuple[str, bool], op: str, right: tuple[str, bool]) -> bool | None:
        a, b = self.operand(left), self.operand(right)
        if op in ("STREQUAL", "MATCHES"):
            name = _bare_var(left[0])
            if a is None and b is not None and name is not None:
                return self._selector(name, b, op)
            if a is None or b is None:
                return None
            if op == "STREQUAL":
                return a == b
            try:
                return re.search(b, a) is not None
            except re.error:
                return None
        if a is None or b is None:
            return None
        if op in ("EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL"):
            try:
                x, y = float(a), float(b)
            except ValueError:
                return None
            return {"EQUAL": x == y, "LESS": x < y, "GREATER": x > y, "LESS_EQUAL": x <= y,
                    "GREATER_EQUAL": x >= y}[op]
        return None

    def _selector(self, name: str, value: str, op: str) -> bool | None:
        """``NAME STREQUAL value`` for a variable whose ROCm value is not set: what its
        branches taught (the ROCm branch's value, values of CUDA-only branches), else the
        value naming a platform (``"cuda"``: false on ROCm)."""
        learned = self.interp.learned
        if name in learned.read_from_disk:
            return None  # text the configuration reads: what it holds is not known here

        def same(raw: str) -> bool:
            candidate = self.operand((raw, False)) or raw  # the branch compared with a variable's value
            if op == "MATCHES":
                try:
                    return re.search(value, candidate) is not None
                except re.error:
                    return False
            return candidate == value
        equals, differs = learned.settled(name)
        if len(equals) == 1:
            return same(next(iter(equals)))
        if any(same(other) for other in differs):
            return False
        kind = _names_platform(value)
        if kind == "cuda":
            return self.interp.port  # a port's AMD build is the CUDA configuration
        if kind == "other":
            return False
        if op == "STREQUAL" and value.lower() in _HIP_PLATFORM_VALUES:
            return True  # `BACKEND STREQUAL "hip"`: the ROCm configuration's choice
        return None

    def truth(self, text: str, quoted: bool) -> bool | None:
        expanded = self.interp._substitute(text, self.scope)
        if "${" in expanded:
            return None
        upper = expanded.upper()
        if upper in _TRUE_CONSTANTS or _NUMBER.fullmatch(expanded) and expanded not in ("0",):
            return upper != "0"
        if upper in _FALSE_CONSTANTS or upper.endswith("-NOTFOUND"):
            return False
        if quoted:
            return None
        value = _live(self.interp._value(expanded, self.scope))
        if value is not None:
            if not value:
                return False
            if any(v.cond.value is not True for v in value):
                return None
            joined = ";".join(v.text for v in value)
            vu = joined.upper()
            if vu in _FALSE_CONSTANTS or vu.endswith("-NOTFOUND"):
                return False
            return True
        return self.interp.switch(expanded)


MAX_ITEMS = 4096  # a list longer than this is cut (a build's own lists are far shorter)


class _Distinct(list):
    """A list ``_distinct`` made, with its items' keys: adding to it reads only what is added
    (ggml appends to one list 10,000 times)."""

    keys: set[tuple]


def _distinct(items: list[Item], start: list[Item] | None = None) -> list[Item]:
    """``start`` then ``items``, each item once (the first of equal text, glob and condition
    value), at most MAX_ITEMS: a list that re-adds itself under an undecided condition would
    otherwise double at every call."""
    if isinstance(start, _Distinct):
        out, seen = _Distinct(start), set(start.keys)
    else:
        out, seen = _Distinct(), set()
        items = list(start or ()) + items
    for item in items:
        if len(out) >= MAX_ITEMS:
            break
        key = (item.text, item.glob, item.cond.value)
        if key not in seen:
            seen.add(key)
            out.append(item)
    out.keys = seen
    return out


def hipify_folders(words: list[str], folder: str) -> tuple[str, str] | None:
    """(source folder, output folder), root-relative, from a hipify call's keyword
    arguments as a flat list (``CUDA_SOURCE_DIR a HIP_SOURCE_DIR b``;
    ``PROJECT_DIRECTORY a OUTPUT_DIRECTORY b`` from Python keywords)."""
    source = output = None
    for keyword, value in zip(words, words[1:]):
        key = keyword.upper()
        if not re.search(r"DIR(?:ECTORY)?$", key) or "${" in value:
            continue
        path = _normpath(_strip_root(_resolve(value, folder)))
        if path is None:
            continue
        if "HIP" in key or "OUT" in key:
            output = path
        elif "CUDA" in key or "SOURCE" in key or "PROJECT" in key:
            source = path
    if source is None or output is None or source == output:
        return None
    return source, output


def _cuda_setting(name: str) -> bool:
    """A variable named for CUDA's configuration (``CUTLASS_NVCC_ARCHS``,
    ``CMAKE_CUDA_ARCHITECTURES``): empty in a ROCm build. Whether CUDA was *found* is not
    one of them (it stays unknown: another build file may compile the same sources)."""
    parts = set(name.upper().split("_"))
    return bool(parts & {"CUDA", "NVCC"}) and not parts & {"HIP", "ROCM", "FOUND", "COMPILER"}


def _split_item(out: list[Item], text: str, quoted: bool) -> None:
    """A word without variables as list items (an unquoted ``a;b`` is two)."""
    if quoted or ";" not in text:
        out.append(Item(text))
    else:
        out.extend(Item(part) for part in text.split(";") if part)


def _split_items(args: list[tuple[str, bool]]) -> list[Item]:
    out: list[Item] = []
    for text, quoted in args:
        _split_item(out, text, quoted)
    return out


def _live(items: list[Item] | None) -> list[Item] | None:
    """The items the ROCm build may see (None: the value is unknown)."""
    return None if items is None else [i for i in items if i.cond.value is not False]


# Values that are exactly the ROCm platform's name: a selector equal to one is ROCm's choice.
_HIP_PLATFORM_VALUES = frozenset({"hip", "rocm", "amd"})


_HIP_VALUE = lazy_compile(r"(?<![a-z])(?:hip|rocm|amd)(?![a-z])")
_CUDA_VALUE = lazy_compile(r"(?<![a-z])(?:cuda|nvcc|nvidia)(?![a-z])")


@lru_cache(maxsize=4096)  # a few values, compared by thousands of conditions (composable_kernel)
def _names_platform(value: str) -> str | None:
    """'cuda' / 'hip' / 'other' when a value names one platform (a backend selector's choice)."""
    low = value.lower()
    if _HIP_VALUE.search(low):
        return "hip"
    if _CUDA_VALUE.search(low):
        return "cuda"
    if _OTHER_GPU_WORD.search(low):
        return "other"
    return None


def _parse_arguments(scope: _Scope, block: _Block, args: list[Item]) -> None:
    """``cmake_parse_arguments(PREFIX "<options>" "<one>" "<multi>" ${ARGN})`` at the top of
    a function body: keyword arguments become PREFIX_KEY lists."""
    for st in block.branches[0][1][:8]:
        if not isinstance(st, _Command) or st.name != "cmake_parse_arguments" or len(st.args) < 4:
            continue
        # PARSE_ARGV <N> <prefix> ...: the arguments from the N-th on (those before are named parameters)
        offset, skip = 0, 0
        if st.args[0][0] == "PARSE_ARGV":
            offset = 2
            skip = int(st.args[1][0]) if st.args[1][0].isdigit() else 0
            if len(st.args) < offset + 4:
                continue
        prefix = st.args[offset][0]
        keywords: dict[str, str] = {}
        for kind, (text, _q) in zip(("option", "one", "multi"), st.args[offset + 1: offset + 4]):
            for word in re.split(r"[;\s]+", text):
                if word:
                    keywords[word] = kind
        current = None
        values: dict[str, list[Item]] = {}
        for item in args[skip:]:
            if item.text in keywords:
                current = item.text
                values.setdefault(current, [])
                if keywords[current] == "option":
                    values[current] = [Item("TRUE")]
                    current = None
                continue
            if current is not None:
                values[current].append(item)
                if keywords[current] == "one":
                    current = None
        for key, kind in keywords.items():  # a keyword the call does not give is empty
            if kind != "option":
                scope.vars[f"{prefix}_{key}"] = values.get(key, [])
        for key, items in values.items():
            scope.vars[f"{prefix}_{key}"] = items
        return


def unresolved_pattern(text: str, folder: str) -> str | None:
    """A regular expression over root-relative paths for a word with unknown parts
    (``${X}``, ``$<...>``; glob wildcards too): each may be any text, ``/`` included. A word
    that starts unknown may be any path. None: no source can be named (a keyword)."""
    if text != _UNKNOWN and not _SOURCE_EXT.search(text) and not text.endswith(("}", ">", "*")):
        return None  # ends in a known non-source word
    if text.startswith(("$<TARGET_OBJECTS:", "$<TARGET_NAME:", "$<TARGET_FILE:")):
        return None  # another target's objects or files, not sources
    parts = _UNKNOWN_PART.split(text)
    head = ""
    if parts[0]:  # the known start, resolved from the folder (unless it leaves the project)
        resolved = _strip_root(_resolve(parts[0], folder))
        if resolved and not resolved.startswith(("/", "..")):
            head = _glob_regex(posixpath.normpath(resolved) + ("/" if parts[0].endswith("/") else ""))
    if len(parts) == 1:
        return head or ".*"
    return head + ".*" + ".*".join(_glob_regex(part) for part in parts[1:])


def _glob_regex(text: str) -> str:
    return re.escape(text).replace(r"\*", ".*").replace(r"\?", ".")


def _folder(rel: str) -> str:
    return rel.rpartition("/")[0]


def _join(a: str, b: str) -> str:
    return f"{a}/{b}" if a and b else (a or b)


def _resolve(path: str, folder: str) -> str:
    """A path as written, made relative to the root (``ROOT``-prefixed) when it is relative."""
    if path.startswith(ROOT) or path.startswith("/"):
        return path
    return _join(_join(ROOT, folder), path)


def generated_path(output: str) -> str:
    """A generated file's path below whichever build folder a variable names
    (``${PROJECT_BINARY_DIR}/include/x.h`` -> ``include/x.h``)."""
    path = _strip_root(re.sub(r"^.*\}/", "", output))
    return path.lstrip("/") if "$" not in path else ""


def _strip_root(path: str) -> str:
    if path == ROOT:
        return ""
    return path[len(ROOT) + 1:] if path.startswith(ROOT + "/") else path


def _normpath(path: str) -> str | None:
    """Root-relative and normalised; None outside the project (absolute or above the root)."""
    if path.startswith("/"):
        return None
    norm = posixpath.normpath(path) if path else ""
    if norm == ".":
        return ""
    if norm.startswith(".."):
        return None
    return norm


def read(texts: dict[str, str], options: dict[str, str] | None = None, templates: dict[str, str] | None = None,
         port: bool = False) -> CMakeFacts:
    """The facts of every CMake file of a project (root-relative path -> text), with the
    configuration-header templates its configure_file() calls read; ``port``: the ROCm build
    is the CUDA configuration (the project has no HIP build)."""
    return Interpreter(texts, options, templates, port).run()

