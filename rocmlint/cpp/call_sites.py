"""Where a function is called or launched: in its own file, in the files that include it,
directly or not (the project model's include graph), then in the project's other C-family
files, each site with whether the AMD build compiles its line. Read from the text (no parse): a mention of the name in code,
followed by a call (``f(``, ``f<T>(``, ``k<<<``) or passed on (``hipLaunchKernelGGL(k, ...``),
that is not a declaration (``__global__ void k(float*);``) nor the definition itself.

Used where a verdict depends on the callers (ROC304 reports only functions the AMD build
calls; a lane-group helper with no caller in view is read by what its name promises).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from ..lazy_re import lazy_compile
from ..model import Span
from .lexical import word_matches

if TYPE_CHECKING:
    from .context import CppContext

# Past these, for one name, the answer is "not known" (a few findings ever search so far).
MAX_FILES = 3000
MAX_BYTES = 96_000_000
MAX_FILE_BYTES = 4_000_000
_AFTER = lazy_compile(rb"\s*(?:<[^;{}()]*>\s*)?(?:\(|<<<|[,)])")  # called, launched or passed on
# A declaration's head: words (a type, qualifiers, a template head) and `*`/`&` only. A word
# ends at a non-word byte and template arguments nest (three levels) without crossing a `>`:
# each text has one reading, so a head that is not one fails at once (`__launch_bounds__(256)`
# before a kernel's name took minutes when a word could be split anywhere).
_TEMPLATE_ARGUMENTS = rb"<(?:[^;{}()<>]|<(?:[^;{}()<>]|<[^;{}()<>]*>)*>)*>"
_DECLARATION_HEAD = lazy_compile(rb"\s*(?:(?:[A-Za-z_][\w:]*(?![\w:])(?:\s*" + _TEMPLATE_ARGUMENTS
                                 + rb")?|\(\([^;{}]*\)\))[\s*&]*)+")
_QUALIFIER = lazy_compile(rb"(?:[A-Za-z_]\w*\s*(?:<[^;{}()]*>)?\s*::\s*)+\Z")
_STATEMENT_WORDS = frozenset({b"return", b"else", b"case", b"throw", b"co_return", b"co_yield", b"do", b"goto",
                              b"new", b"delete", b"sizeof", b"decltype", b"typeid"})


@dataclass(frozen=True)
class CallSite:
    path: str  # the file ("" : the file in hand)
    line: int  # 0-based
    amd: bool | None  # whether the AMD build compiles the line

    def where(self) -> str:
        place = f"{os.path.basename(self.path)}:{self.line + 1}" if self.path else f"line {self.line + 1}"
        return place


@dataclass(frozen=True)
class CallSites:
    sites: tuple[CallSite, ...]
    complete: bool  # every file that may call it was read
    # a header no file in view includes (or whose includers no model knows): its callers are
    # out of view, the header is their interface
    public: bool = False

    def amd(self) -> CallSite | None:
        """The first site the AMD build may compile."""
        return next((site for site in self.sites if site.amd is not False), None)


def call_sites(ctx: "CppContext", name: str, definition: Span, *, stop_at_amd: bool = True) -> CallSites:
    """The call and launch sites of ``name`` outside ``definition`` (memoised per file)."""
    key = ("call-sites", name, definition)
    found = ctx.cache.get(key)
    if found is None:
        found = ctx.cache[key] = _search(ctx, name, definition, stop_at_amd)
    return found


def _search(ctx, name: str, definition: Span, stop_at_amd: bool) -> CallSites:
    from .context import SOURCE_SUFFIXES, CppContext

    word = name.encode()
    sites = [CallSite("", ctx.line_of(at), ctx.amd_reach(ctx.line_of(at)))
             for at in _uses(ctx.source, word, ctx.in_code) if not definition.start <= at < definition.end]
    header = not ctx.path.lower().endswith(SOURCE_SUFFIXES)
    model = ctx.model
    rel = model.rel(ctx.path) if model is not None else None
    public = header and (rel is None or not model.includers_of(rel))
    if stop_at_amd and any(site.amd is not False for site in sites):
        return CallSites(tuple(sites), True, public)
    read = size = 0
    if ctx.project is not None:  # the answer depends on the other files: one fact for them all
        # (a search may read thousands of files, and a warm run checks every fact it stored)
        ctx.project.record("c-family", "", ctx.project.c_family_digest())
    for path in _other_files(ctx):
        try:
            stat = os.stat(path)
            if stat.st_size > MAX_FILE_BYTES:
                continue
            read, size = read + 1, size + stat.st_size
            if read > MAX_FILES or size > MAX_BYTES:
                return CallSites(tuple(sites), False, public)
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if word not in data:
            continue
        other = CppContext(path, data, ctx.settings)
        for at in _uses(data, word, other.in_code):
            line = other.line_of(at)
            sites.append(CallSite(path, line, other.amd_reach(line)))
            if stop_at_amd and sites[-1].amd is not False:
                return CallSites(tuple(sites), True, public)
    return CallSites(tuple(sites), True, public)


def _other_files(ctx) -> Iterator[str]:
    """The project's other C-family files: those that include this one (directly or not,
    through the model's include graph) first, where a header's callers mostly are; then the
    rest (another translation unit launching a kernel through a declaration)."""
    here = os.path.abspath(ctx.path)
    seen = {here}
    model = ctx.model
    if model is not None:
        todo = [model.rel(ctx.path)]
        done = set(todo)
        while todo:
            for includer, _guard in model.includers_of(todo.pop()):
                if includer not in done:
                    done.add(includer)
                    todo.append(includer)
                    path = os.path.join(str(model.root), includer)
                    seen.add(path)
                    yield path
    project = ctx.project
    if project is None:
        return
    root = os.path.abspath(str(project.root))
    for rel in project.files().c_family:
        path = os.path.join(root, rel)
        if path not in seen:
            yield path


def _uses(data: bytes, word: bytes, in_code) -> Iterator[int]:
    """Offsets where ``word`` is called, launched or passed on in code (not declared)."""
    for m in word_matches(re.compile(re.escape(word) + rb"\b"), data):
        at = m.start()
        if not in_code(at) or _AFTER.match(data, m.end()) is None or _declared_at(data, at):
            continue
        yield at


def _declared_at(data: bytes, at: int) -> bool:
    """The text since the last ``;`` ``{`` ``}`` (or directive line) before ``at`` is a
    declaration's head (``static __device__ float4 mma``), not an expression."""
    start = max(data.rfind(b";", 0, at), data.rfind(b"{", 0, at), data.rfind(b"}", 0, at),
                data.rfind(b"\n#", 0, at)) + 1
    if start > 0 and data[start - 1:start] == b"#":
        start = data.find(b"\n", start)  # the directive line itself ends the head's search
        start = at if start < 0 or start > at else start
    head = re.sub(rb"//[^\n]*|/\*.*?\*/", b" ", data[start:at], flags=re.DOTALL)
    head = _QUALIFIER.sub(b"", head)  # `Impl::f(`: the name's own qualification
    if not head.strip() or head.rstrip().endswith((b".", b"->")):
        return False  # a statement that starts with the call, or a member call
    words = re.findall(rb"[A-Za-z_]\w*", head)
    if not words or words[0] in _STATEMENT_WORDS or words[-1] in _STATEMENT_WORDS:
        return False
    return _DECLARATION_HEAD.fullmatch(head) is not None
