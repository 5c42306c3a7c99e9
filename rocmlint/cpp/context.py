"""What C++/CUDA/HIP rules see of a file: the tree, the #if gates, and shared look-ups."""
from __future__ import annotations

from bisect import bisect_right

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Iterator

from ..evidence import Verdict
from ..lazy_re import lazy_compile
from ..model import Span
from ..rule import FileContext
from .lexical import NonCode, blank_non_code, blank_parts, non_code_parts
from .included_switches import macros_dead_in_includes
from .preprocessor import Conditionals, conditionals, dead_for_amd
from .treesitter import parse

if TYPE_CHECKING:
    from ..config import Settings

# Statements a fix gates as a whole (whole lines).
SIMPLE_STATEMENTS = frozenset({
    "declaration", "expression_statement", "return_statement", "field_declaration",
    "preproc_def", "preproc_include", "preproc_function_def", "static_assert_declaration",
    "alias_declaration", "type_definition", "break_statement", "continue_statement",
})
# Statements with a body: a fix gates their header only (up to the body).
HEADED_STATEMENTS = frozenset({
    "for_statement", "while_statement", "if_statement", "function_definition",
    "switch_statement", "do_statement", "for_range_loop",
})
_CLAUSES = frozenset({"else_clause", "condition_clause", "for_range_loop"})
# Longest statement a gated fix duplicates into both branches.
MAX_GATED_LINES = 24
FUNCTION_LIKE = frozenset({"function_definition", "lambda_expression"})
_HIP_INCLUDE = lazy_compile(r"^hip/hip_runtime(?:_api)?\.h$")
_CUDA_INCLUDE = lazy_compile(r"^(?:cuda[\w/]*\.h|cuda/|cub/|cublas|cufft|curand|cusparse|cudnn|nccl|mma\.h)")
_BRACKETS = lazy_compile(rb"[(){}\[\]]")
_NOT_CODE = lazy_compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)
_STRAY_QUOTE = lazy_compile(rb"\"|(?<![0-9A-Fa-f])'")  # digit separators (1'000) are not quotes
_INT_HEADERS = ("cstdint", "stdint.h", "cinttypes", "inttypes.h", "hip/hip_runtime.h")


def top_level_includes(pp: Conditionals) -> list[int]:
    """Lines of #includes outside any conditional (a header guard does not count)."""
    guard = pp.header_guard()

    def depth_allowed(line: int) -> int:
        return 1 if guard is not None and guard.start < line < guard.endif else 0

    return [line for line, _ in pp.includes if pp.depth[line] <= depth_allowed(line)]


@lru_cache(maxsize=8)
def _dead_reader(rocm_macros: tuple[str, ...], nvidia_macros: tuple[str, ...]):
    """``dead_for_amd`` under one configuration, as one object (a cache key of the header reader)."""
    return lambda found: dead_for_amd(found, rocm_macros, nvidia_macros)


def is_hip_only(path: str, source: bytes, pp: Conditionals) -> bool:
    """Compiled only by hipcc: ``.hip``, or includes the HIP runtime unconditionally and no
    CUDA header, nor mentions an nvcc-only macro."""
    if path.lower().endswith(".hip"):
        return True
    top = set(top_level_includes(pp))
    hip = any(_HIP_INCLUDE.match(h) for line, h in pp.includes if line in top)
    cuda = any(_CUDA_INCLUDE.match(h) for _, h in pp.includes)
    return hip and not cuda and re.search(rb"__CUDA_ARCH__|__NVCC__|__CUDACC__", source) is None


def uses_gate(settings: "Settings", hip_only: bool) -> bool:
    """Whether fixes go behind ``#if defined(<gate macro>)`` (config ``gate``)."""
    if settings.gate == "always":
        return True
    if settings.gate == "never":
        return False
    return not hip_only


_END = 1 << 62  # sorts after any (offset, end, why) with the same offset


@dataclass(frozen=True)
class DirectiveNode:
    """A preprocessor line standing in for its tree node where a fix gates it: directives
    are whole lines, so rules reading them need no parse."""

    type: str
    start_byte: int
    end_byte: int
    start_point: tuple[int, int]
    parent: None = None


class CppContext(FileContext):
    language = "cpp"

    def __init__(self, path: str, source: bytes, settings: "Settings") -> None:
        super().__init__(path, source, settings)
        # The project model's C++ part (None for a lone buffer or a CUDA-only project).
        part = self.project.part("cpp") if self.project is not None else None
        rel = getattr(part, "rel", None)  # a part may offer only some queries (tests, other halves)
        self.model = part if part is not None and rel is not None and rel(path) in part.files else None
        self.file_verdict = self.model.file_verdict(path) if self.model is not None else None
        if self.model is None and self.project is not None:
            # no build to ask (CUDA-only code): a TensorRT or NPU backend is no port's work
            named = getattr(self.project, "named_for_other_platform", None)
            why = named(path, compiled=True) if named is not None else None
            if why is not None:
                self.file_verdict = Verdict(False, (why,))
        # port mode without a model: switches this file's own headers define only for NVIDIA
        self.included_dead: dict[str, str] = {}
        if self.model is None:  # the #if table of a buffer is kept for the fixer's proof
            self.pp = conditionals(source, settings.all_rocm_macros, settings.all_nvidia_macros,
                                   settings.gate_macro)
            if any(b.amd is None for chain in self.pp.chains for b in chain.branches) and b'"' in source:
                # switches its own headers define for NVIDIA only (`#if __CUDA_ARCH__ >= 800`)
                dead = macros_dead_in_includes(path, source, _dead_reader(settings.all_rocm_macros,
                                                                          settings.all_nvidia_macros),
                                               self.project.record if self.project is not None else None)
                switches = self.project.nvidia_arch_switches() if self.project is not None else {}
                for name, why in switches.items():  # -DKITTENS_HOPPER beside -gencode arch=compute_90a
                    if name.encode() in source:
                        dead.setdefault(name, why.where)
                self.included_dead = dead
                if dead:
                    self.pp = conditionals(source, settings.all_rocm_macros,
                                           settings.all_nvidia_macros + tuple(sorted(dead)), settings.gate_macro)
        else:
            self.pp = Conditionals(source, settings.all_rocm_macros, settings.all_nvidia_macros,
                                   settings.gate_macro, self.model.resolver(path, settings), self.model.arch_macro)
        self.cache: dict = {}  # per-file memo for rules (e.g. data flow per function)
        self._amd_reach_by_line: dict[int, bool | None] = {}

    # The tree is parsed on first use: rules that read only the text and the #if stack
    # (ROC301-ROC303) leave most files unparsed.
    @cached_property
    def tree(self):
        return parse(self.source, self.path)

    @cached_property
    def root(self):
        return self.tree.root_node

    @property
    def mode(self) -> str:
        """"port" (no HIP build, or --port: the CUDA code a HIP backend is written from) or
        "guard" (the project's HIP build decides); no model: no HIP anywhere, a port."""
        return self.model.mode_of(self.path) if self.model is not None else "port"

    @property
    def outside_amd_build(self) -> bool:
        """The AMD build never compiles this file (project model): no finding stands."""
        return self.file_verdict is not None and self.file_verdict.value is False

    @cached_property
    def _non_code(self) -> NonCode:
        return NonCode(self.source)

    @cached_property
    def code_only(self) -> bytes:
        """The source with its comments and literals blanked (same offsets and lines). Its one
        pass over the file also gives every comment and literal: ``in_code`` asks no more."""
        parts = non_code_parts(self.source)
        if parts is None:
            return blank_non_code(self.source)
        self.__dict__["_non_code"] = NonCode(self.source, parts)
        return blank_parts(parts)

    def in_code(self, offset: int) -> bool:
        """Outside comments and string literals (read from the text, no parse)."""
        return not self._non_code.covers(offset)

    def in_comment(self, offset: int) -> bool:
        """Inside a comment (a string literal, such as inline assembly's, is not one)."""
        start = self._non_code.covering(offset)
        return start is not None and self.source[start:start + 2] in (b"//", b"/*")

    def directive_node(self, offset: int, kind: str = "preproc_include") -> DirectiveNode:
        """The directive line holding ``offset``, as a node a fix can gate."""
        line = self.line_of(offset)
        start = self.lines.line_start(line)
        end = self.lines.line_start(line + 1) if line + 1 < self.lines.line_count else len(self.source)
        return DirectiveNode(kind, start, end, (line, 0))

    # --- gates ----------------------------------------------------------------------
    def amd_reach(self, line: int) -> bool | None:
        """Does the AMD build compile this 0-based line: the one place that joins the file's
        verdict (project model), its ``#if`` stack (through the model's macro facts), C++
        ``if constexpr``/``if`` on HIP-only constants, code-generator template branches and,
        inside a ``#define``, where the macro is expanded."""
        # Memoised per line: rules ask for every anchor (CUTLASS: 180,000 ROC302 hits).
        known = self._amd_reach_by_line
        if line not in known:
            known[line] = self._reach(line, frozenset())
        return known[line]

    def _reach(self, line: int, seen: frozenset[str]) -> bool | None:
        if self.outside_amd_build:
            return False
        amd = self.pp.amd[line]
        if amd is False:
            return False
        beyond = self._lines_beyond_if_table
        if beyond is not None and line not in beyond:
            return amd
        if line in self._template_nvidia_lines or self.constant_gate(line) is not None:
            return False
        if self.expansions_amd_skips(line, seen):
            return False
        return self.pp.amd[line]

    @cached_property
    def _lines_beyond_if_table(self) -> frozenset[int] | None:
        """The lines whose reach may depend on more than the ``#if`` table: inside a
        code generator's template branch or a multi-line ``#define`` (None: every line, a
        C++ gate of the file reads a platform constant). The rest are answered by the
        table alone (CUTLASS asks for 150,000 lines)."""
        gates = self._constant_gates
        if gates is not None and gates.active:
            return None
        return frozenset(self._template_nvidia_lines).union(self.macro_bodies.lines())

    @cached_property
    def macro_bodies(self):
        from .macro_bodies import MacroBodies

        return MacroBodies(self.source)

    def expansions_amd_skips(self, line: int, seen: frozenset[str] = frozenset()) -> list[int]:
        """Inside a ``#define`` whose every expansion the AMD build skips: those lines (the
        body is compiled nowhere else); else []."""
        body = self.macro_bodies.body_at(line)
        if body is None or body.name in seen:
            return []
        key = ("macro-expansions", body.name)
        if key not in self.cache:
            sites = self.macro_bodies.expansions(body, self.line_of, self.in_code)
            inner = seen | {body.name}
            skipped = bool(sites) and not self._expanded_in_other_files(body.name) and \
                all(self._reach(site, inner) is False for site in sites)
            self.cache[key] = sites if skipped else []
        return self.cache[key]

    def _expanded_in_other_files(self, name: str) -> bool:
        """Whether a file that includes this one (directly or not) may expand the macro. With
        no project model a header's users are unknown; a source file's macros are its own."""
        from .macro_bodies import mentioned_in

        model = self.model
        if model is None:
            return not self.path.lower().endswith(SOURCE_SUFFIXES)
        rel = model.rel(self.path)
        todo, seen = [rel], {rel}
        while todo:
            for includer, _guard in model.includers_of(todo.pop()):  # every #include edge
                if includer in seen:
                    continue
                seen.add(includer)
                todo.append(includer)
                try:
                    with open(f"{model.root}/{includer}", "rb") as fh:
                        if mentioned_in(name, fh.read()):
                            return True
                except OSError:
                    return True
        return False

    def nvidia_only(self, offset: int) -> bool:
        if self.amd_reach(self.lines.line_of(offset)) is False:
            return True
        return bool(self._dropped_spans) and self.dropped_argument(offset) is not None

    def dropped_argument(self, offset: int) -> str | None:
        """Inside an argument that a project macro's AMD definition drops
        (``AMREX_HIP_OR_CUDA(hip_code, cuda_code)``): the macro and where it is defined."""
        spans = self._dropped_spans
        if not spans:
            return None
        index = bisect_right(spans, (offset, _END)) - 1
        if index >= 0 and spans[index][0] <= offset < spans[index][1]:
            return spans[index][2]
        return None

    @cached_property
    def _dropped_spans(self) -> list[tuple[int, int, str]]:
        """Sorted (start, end, why) of the arguments the AMD build drops in this file."""
        model = self.model
        if model is None or not model.droppers:
            return []
        names = [n for n in model.droppers if n.encode() in self.source]
        if not names:
            return []
        from .macro_bodies import argument_spans

        found: list[tuple[int, int, str]] = []
        pattern = rb"\b(" + b"|".join(re.escape(n.encode()) for n in names) + rb")\s*\("
        for m in re.finditer(pattern, self.source):
            if not self.in_code(m.start()) or self.pp.amd[self.line_of(m.start())] is False:
                continue
            shim = model.droppers[m.group(1).decode()]
            args = argument_spans(self.source, m.end() - 1, self.in_code)
            if args is None or len(args) != len(shim.params):
                continue
            for index, (start, end) in enumerate(args):
                if shim.drops(index):
                    found.append((start, end, f"{shim.name}({', '.join(shim.params)}) -> {shim.body.strip()} in the "
                                              f"AMD build ({shim.where}) drops its argument {shim.params[index]}"))
        found.sort()
        merged: list[tuple[int, int, str]] = []
        for span in found:  # a selector inside another's dropped argument: the outer one decides
            if merged and span[0] < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], span[1]), merged[-1][2])
            else:
                merged.append(span)
        return merged

    def wave_size_aware(self, offset: int) -> bool:
        return self.pp.wave_size_aware(self.lines.line_of(offset))

    def amd_hits(self) -> list[Span]:
        """The current rule's anchors that the AMD build compiles. The engine drops findings
        on NVIDIA-only lines, so a rule whose findings lie inside their anchor skips the
        others (after a gated fix most anchors sit in ``#else`` branches)."""
        return [hit for hit in self.hits() if self.amd_hit(hit)]

    def amd_hit(self, hit: Span) -> bool:
        """One of ``amd_hits``: a rule that drops most anchors by their text asks after it."""
        return not (self.nvidia_only(hit.start) and self.nvidia_only(max(hit.end - 1, hit.start)))

    def in_gate_amd_branch(self, offset: int) -> bool:
        """Inside ``#if defined(<gate macro>)``: code only the AMD build sees, rewritten directly."""
        return self.pp.in_gate_amd_branch(self.lines.line_of(offset))

    @cached_property
    def hip_only(self) -> bool:
        return is_hip_only(self.path, self.source, self.pp)

    @cached_property
    def _template_nvidia_lines(self) -> set[int]:
        """Lines in a code generator's template branch that only a non-ROCm build takes
        (``{% if not is_rocm %}``, the ``{% else %}`` of ``{% if is_rocm %}``)."""
        from .templating import nvidia_only_lines

        return nvidia_only_lines(self.source, self.settings.gate_names)

    def constant_gate(self, line: int) -> str | None:
        """Why the AMD build never runs this line by a C++ gate (a branch of ``if``/``if
        constexpr`` or a template specialisation on a constant the project sets only for
        HIP), or None."""
        gates = self._constant_gates
        return gates.reason(line) if gates is not None else None

    @cached_property
    def _constant_gates(self):
        from .constant_gates import ConstantGates, could_gate

        return ConstantGates(self) if could_gate(self.source) else None

    @cached_property
    def gated(self) -> bool:
        """Fixes go behind ``#if defined(<gate macro>)`` (shared files) or rewrite directly."""
        return uses_gate(self.settings, self.hip_only)

    def top_level_includes(self) -> list[int]:
        """Lines of #includes outside any conditional (a header guard does not count)."""
        return top_level_includes(self.pp)

    def has_uint64(self) -> bool:
        """Whether ``uint64_t`` is already declared for the AMD build."""
        for line, header in self.pp.includes:
            if header in _INT_HEADERS and not self.pp.nvidia_only(line):
                return True
        return False

    # --- tree -----------------------------------------------------------------------
    def node_at(self, span: Span):
        """The smallest named node covering the span."""
        node = self.root.named_descendant_for_byte_range(span.start, span.end)
        return node

    def node_span(self, node) -> Span:
        return Span(node.start_byte, node.end_byte)

    def node_text(self, node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    @staticmethod
    def ancestor(node, types) -> object | None:
        node = node.parent
        while node is not None:
            if node.type in types:
                return node
            node = node.parent
        return None

    def statement_of(self, node):
        """The innermost statement holding ``node`` that whole-line gating can duplicate:
        a statement that is a body or a clause of ``for``/``if``/... is gated with them."""
        current = node
        while current is not None:
            if current.type in HEADED_STATEMENTS:
                return current
            if current.type in SIMPLE_STATEMENTS:
                parent = current.parent
                if parent is None or parent.type not in HEADED_STATEMENTS | _CLAUSES:
                    return current
            current = current.parent
        return None

    def scope_of(self, node):
        """The function around ``node``; for broken trees the nearest body or ERROR region."""
        current = node.parent
        fallback = None
        while current is not None:
            if current.type in FUNCTION_LIKE:
                return current
            if fallback is None and current.type in ("compound_statement", "ERROR") and \
                    current.parent is not None and current.parent.type in ("ERROR", "translation_unit"):
                fallback = current
            current = current.parent
        return fallback or self.root

    def descendants(self, node, types=None) -> Iterator:
        """Depth-first walk below ``node`` (node included); with ``types`` only nodes of
        those types, matched by a tree-sitter query (in C: rules ask this per function)."""
        if types is not None:
            key = frozenset(types)
            if _cheaper_to_walk(key, node):
                return self._walk(node, key)
            query = _type_query(self.tree.language, key)
            if query is not None:
                from tree_sitter import QueryCursor

                found = QueryCursor(query).captures(node).get("n", [])
                return iter(sorted(found, key=lambda n: (n.start_byte, -n.end_byte)))
        return self._walk(node, types)

    def _walk(self, node, types) -> Iterator:
        cursor = node.walk()
        reached_root = False
        while not reached_root:
            if types is None or cursor.node.type in types:
                yield cursor.node
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent() or cursor.node == node:
                    reached_root = True
                    break
            if cursor.node == node:
                reached_root = True

    def identifiers(self, scope, name: str) -> list:
        """Identifier nodes spelled ``name`` inside ``scope`` (text search, then the tree)."""
        out = []
        pattern = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        for m in pattern.finditer(self.source, scope.start_byte, scope.end_byte):
            node = self.root.named_descendant_for_byte_range(m.start(), m.end())
            if node is not None and node.start_byte == m.start() and node.end_byte == m.end():
                out.append(node)
        return out

    def macro_value(self, name: str) -> str | None:
        """Value of an object-like ``#define name value`` reachable on AMD: in this file, else
        (project model) the one another header of the project gives it."""
        for line, value in self.pp.defines.get(name, []):
            if not self.pp.nvidia_only(line):
                return value
        if self.model is not None and name not in self.pp.macro_lines:
            found = self.model.macro_body(name, self.path)
            if self.project is not None:  # another file's body: part of what the cached result rests on
                self.project.record("cpp:macro-body", name, found[0] if found is not None else "")
            if found is not None:
                return found[0]
        return None

    def macros_defined_as(self, regex: "re.Pattern[str]") -> dict[str, int]:
        """Object-like macros whose value matches ``regex``: name -> line of the #define."""
        out = {}
        for name, defs in self.pp.defines.items():
            for line, value in defs:
                if regex.fullmatch(value.strip()) and not self.pp.nvidia_only(line):
                    out[name] = line
        return out

    def line_of(self, offset: int) -> int:
        return self.lines.line_of(offset)

    def line_no(self, node) -> int:
        """1-based line of a node (for messages)."""
        return node.start_point[0] + 1

    def gate_range(self, node) -> tuple[int, int] | None:
        """0-based first and last line a gated fix touching ``node`` duplicates: its whole
        statement (a loop, ``if`` or function as a whole, since tree-sitter cannot parse a
        header split by ``#if``); None when that is too long to duplicate."""
        stmt = self.statement_of(node) or node
        first, last = stmt.start_point[0], self.last_line(stmt)
        if last - first >= MAX_GATED_LINES:
            if stmt.type in HEADED_STATEMENTS:
                return None
            first, last = node.start_point[0], self.last_line(node)
        return self.balanced_lines(first, last)

    def balanced_lines(self, first: int, last: int) -> tuple[int, int] | None:
        """Lines ``first..last`` grown until their braces and parentheses balance: where
        tree-sitter misreads a macro (``CUTLASS_PRAGMA_UNROLL`` before a ``for``, one before
        a constructor's initialiser list) a "statement" can end inside a block, and a gate
        must hold whole syntactic units. None past MAX_GATED_LINES, or where a string or
        character literal is left open."""
        while last - first < MAX_GATED_LINES:
            depth = lowest = 0
            code = _code_only(self.source[self.lines.line_start(first) : self._line_end(last)])
            if _STRAY_QUOTE.search(code):
                return None  # an unterminated literal: the preprocessor cannot lex these lines
            for char in _BRACKETS.findall(code):
                depth += 1 if char in b"({[" else -1
                lowest = min(lowest, depth)
            if lowest < 0 and first > 0:
                first -= 1
            elif depth > lowest and last + 1 < self.lines.line_count:
                last += 1
            else:
                return (first, last) if depth == lowest == 0 else None
        return None

    def _line_end(self, line: int) -> int:
        return self.lines.line_start(line + 1) if line + 1 < self.lines.line_count else len(self.source)

    def last_line(self, node) -> int:
        """0-based last line of a node (preprocessor nodes end after their newline)."""
        end = node.end_byte
        if end > node.start_byte and self.source[end - 1 : end] == b"\n":
            end -= 1
        return self.lines.line_of(max(end - 1, node.start_byte))


# A translation unit's own file: the macros it defines are its own (no one includes it).
SOURCE_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".c")


# Compiling a query costs about as much as walking 10,000 nodes in Python: a type set is
# walked until that many, then queried (a one-file run compiles none; a big run, each once).
QUERY_WORTH_NODES = 10_000
_WALKED: dict[frozenset[str], int] = {}


def _cheaper_to_walk(types: frozenset[str], node) -> bool:
    walked = _WALKED.get(types, 0)
    if walked > QUERY_WORTH_NODES:
        return False
    _WALKED[types] = walked + node.descendant_count
    return walked + node.descendant_count <= QUERY_WORTH_NODES


@lru_cache(maxsize=64)
def _type_query(language, types: frozenset[str]):
    """A query capturing every node of ``types`` as ``n``; None if the grammar lacks one."""
    from tree_sitter import Query, QueryError

    try:
        return Query(language, "[" + " ".join(f"({t})" for t in sorted(types)) + "] @n")
    except QueryError:
        return None


def _code_only(text: bytes) -> bytes:
    """``text`` without comments, string and character literals (brackets there don't count)."""
    return _NOT_CODE.sub(b" ", text)
