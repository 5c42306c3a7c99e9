"""Analysis of one file: prefilter, parse, run rules, filter by gates and suppressions."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .config import Settings
from .languages import ParseFailure, extra_languages, get_language, language_for
from .literals import KERNEL_SOURCE_WORDS
from .model import Applicability, Finding, LineIndex, Span
from .project import active as active_project
from .project.explain import finding_evidence, finding_unknowns
from .registry import ENGINE_CODES, INTERNAL_ERROR, select_rules
from .rule import FileContext, Rule
from .source import SourceError, SourceFile, read_source
from .suppress import is_suppressed, suppressed_codes

# The half whose rules also read strings of Python code that a library compiles at run time
# (rocmlint/python/embedded.py); a Python file holding none of the trigger words (names of
# the run-time compilers) never pays for it, nor for importing it.
EMBEDDED_LANGUAGE = "cpp"
EMBEDDED = "embedded-source"  # the prefilter's name for the trigger


@lru_cache(maxsize=64)
def rules_for(select: tuple[str, ...], ignore: tuple[str, ...], language: str) -> tuple[Rule, ...]:
    return tuple(rule() for rule in select_rules(list(select), list(ignore)) if rule.runs_on(language))


@lru_cache(maxsize=64)
def selected_languages(select: tuple[str, ...], ignore: tuple[str, ...]) -> frozenset[str]:
    """The halves some selected rule runs on (before per-file ignores, which only remove)."""
    from .languages import LANGUAGES

    found = {language for language in LANGUAGES if rules_for(select, ignore, language)}
    if EMBEDDED_LANGUAGE in found:
        found.add("python")  # C++ rules read the kernel strings of Python files too
    return frozenset(found)


def active_rules(settings: Settings, language: str, path: Path | None = None) -> tuple[Rule, ...]:
    ignore = settings.ignore + (settings.ignored_for(path) if path is not None else ())
    rules = rules_for(settings.select, ignore, language)
    for extra in extra_languages(path) if path is not None else ():
        rules += tuple(r for r in rules_for(settings.select, ignore, extra) if not r.runs_on(language))
    if language == "python":  # C++ rules read the CUDA source in Python strings (python/embedded.py)
        rules += rules_for(settings.select, ignore, EMBEDDED_LANGUAGE)
    return rules


def engine_finding(code: str, path: str, message: str, span: Span | None = None) -> Finding:
    return Finding(code=code, name=ENGINE_CODES[code][0], path=path, span=span or Span(0, 0),
                   message=message)


def _split_embedded(language: str, rules: tuple[Rule, ...]) -> tuple[tuple[Rule, ...], tuple[Rule, ...]]:
    """(the file's own rules, the rules for the kernels embedded in a Python file)."""
    if language != "python":
        return rules, ()
    embedded = tuple(r for r in rules if r.language == EMBEDDED_LANGUAGE)
    return (tuple(r for r in rules if r.language != EMBEDDED_LANGUAGE) if embedded else rules), embedded


def prepare_rules(rule_sets: Iterable[tuple[str, tuple[Rule, ...]]]) -> None:
    """Build now what each (language, rules) selection builds on first use (its prefilter
    automaton, each rule's literals and compiled pattern): before a pool of workers forks,
    so that it is built once for all of them rather than once in each."""
    for language, rules in set(rule_sets):
        own, embedded = _split_embedded(language, rules)
        _prefilter(own, _EMBEDDED_PREFILTER if embedded else ())
        if embedded:
            _prefilter(embedded)  # the kernels in Python strings are read as C++ with these
        for rule in rules:
            if rule.pattern:
                rule.compiled_pattern()


def analyse_buffer(display: str, buffer: bytes, language: str, settings: Settings,
                   rules: tuple[Rule, ...], suppress: bool = True,
                   build_fixes: bool | frozenset[Applicability] = True) -> list[Finding]:
    """Findings for a UTF-8 buffer, with line/column filled in; [] when no rule's pattern matches.

    ``build_fixes``: which fixes' edits are needed (True: all). Fixes costly to build
    (Python's libcst fixes) that nothing will apply or print (a text report; unsafe fixes
    in a --fix run without --unsafe-fixes) keep their stand-in edits, counted but unbuilt."""
    hits: dict[str, list[Span]] = {}
    rules, embedded_rules = _split_embedded(language, rules)
    candidates = _prefilter(rules, _EMBEDDED_PREFILTER if embedded_rules else ())(buffer)
    embedded = EMBEDDED in candidates
    for rule in rules:
        if rule.code not in candidates:
            continue
        if rule.pattern:
            spans = [Span(m.start(), m.end()) for m in rule.matches(buffer)]
            if spans:
                hits[rule.code] = spans
        else:
            hits[rule.code] = []
    if not hits and not embedded:
        return []
    # A rule runs in the file's own half, or in the other half that reads the file too
    # (setup.py: Python rules and manifest rules); one context per half.
    half_of = {r.code: language if r.runs_on(language) else r.language for r in rules if r.code in hits}
    project = active_project()
    if project is not None and project.deferring:
        for needed in sorted(set(half_of.values())):
            project.part(needed)  # unbuilt: the file waits for the model, before it is parsed
    contexts: dict[str, FileContext] = {}
    for rule in rules:
        half = half_of.get(rule.code)
        if half is None:
            continue
        if half not in contexts:
            anchors = sorted({s.start for code, spans in hits.items() if half_of[code] == half for s in spans})
            try:
                contexts[half] = get_language(half).make_context(display, buffer, settings, anchors)
            except ParseFailure as exc:
                finding = engine_finding("ROC001", display, f"cannot parse: {exc}", exc.span)
                return _finish([], [finding], buffer)
            contexts[half]._hits = hits
            contexts[half].build_fixes = build_fixes
        ctx = contexts[half]
        if ctx.outside_amd_build:
            if project is not None:
                project.set_aside = True  # counted in the summary: not checked for device hazards
            continue  # the project model says the AMD build never compiles this file
        ctx.rule = rule
        rule.check(ctx)
        ctx.rule = None
    kept = []
    seen = set()
    for ctx, finding in ((c, f) for c in contexts.values() for f in c.findings):
        start = finding.span.start
        rule_cls = type(_rule_by_code(rules, finding.code)) if finding.code not in ENGINE_CODES else None
        if drop_reason(ctx, rule_cls, start) is not None:
            continue
        key = (finding.code, finding.span)
        if key in seen:
            continue
        seen.add(key)
        finding.evidence = tuple(finding_evidence(ctx, start))
        finding.mode = ctx.mode
        finding.unknown_macros = finding_unknowns(ctx, start)
        kept.append(finding)
    if embedded:
        try:
            kept.extend(_embedded_findings(display, buffer, settings, embedded_rules, build_fixes))
        except ParseFailure as exc:
            kept = [engine_finding("ROC001", display, f"cannot parse: {exc}", exc.span)]
            return _finish([], kept, buffer)
    return _finish(list(contexts.values()), kept, buffer, suppress)


_EMBEDDED_PREFILTER = ((EMBEDDED, KERNEL_SOURCE_WORDS),)


def _embedded_findings(display: str, buffer: bytes, settings: Settings, rules: tuple[Rule, ...],
                       build_fixes: bool | frozenset[Applicability]) -> list[Finding]:
    """The C++ rules' findings in kernel sources held by Python strings. The module is parsed
    as a skeleton around the constructor calls (a 1.4 MB test table of torch names a
    jiterator once)."""
    from .python import PythonLanguage
    from .python.embedded import constructor_anchors, lint_kernels

    anchors = constructor_anchors(buffer)
    if not anchors:
        return []  # a trigger word inside another word: no constructor is called
    project = active_project()
    if project is not None and project.deferring:
        project.part("python")  # reachability of the calls: wait for the model before parsing
    ctx = PythonLanguage().make_context(display, buffer, settings, anchors)
    return lint_kernels(ctx, rules, analyse_buffer, build_fixes)


# Rules whose hazard needs lanes 32-63 to be active: quiet where only lanes 0-31 run (issue 37);
# ROC204/205/208 see it through the lane groups (a vote there is no whole-wave operation), so a
# group member in such a block still moves with its group
ACTIVE_LANE_RULES = frozenset({"ROC201", "ROC202"})


def drop_reason(ctx: FileContext, rule_cls: type[Rule] | None, start: int) -> str | None:
    """Why the engine drops a rule's finding at ``start`` (None: it is reported). One place,
    shared by ``analyse_buffer`` and ``rocmlint explain``. Who wrote the code is never a
    reason: hipified ports and AMD-only branches carry most wave64 bugs."""
    if ctx.nvidia_only(start):
        return "the AMD build never compiles this line"
    if rule_cls is not None and rule_cls.wave_size_rule and ctx.wave_size_aware(start):
        return "inside a branch that picks code by wave size"
    if rule_cls is not None and rule_cls.code in ACTIVE_LANE_RULES and getattr(ctx, "pp", None) is not None:
        from .cpp.active_lanes import first_32_lanes_only  # a C-family context: tree-sitter is loaded

        why = first_32_lanes_only(ctx, start)  # type: ignore[arg-type]  # `pp`: a CppContext
        if why is not None:
            return why + ": a 32-lane design is whole there on a 64-lane wave"
    return None


def _prefilter(rules: tuple[Rule, ...], extra: tuple[tuple[str, tuple[bytes, ...]], ...] = ()):
    """``_prefilter_for`` the rules' classes: a worker receives each job's rules unpickled
    (new instances), and one automaton per rule set must serve them all."""
    return _prefilter_for(tuple(type(rule) for rule in rules), extra)


@lru_cache(maxsize=64)
def _prefilter_for(rules: tuple[type[Rule], ...], extra: tuple[tuple[str, tuple[bytes, ...]], ...] = ()):
    """A function buffer -> codes of the rules worth running their regex on.

    One Aho-Corasick pass over the bytes finds every rule's literal factors and
    ``requires_any`` markers (ahocorasick-rs scans at memory speed). A rule is a candidate
    when one of its factors occurs (or it has none) and one of its markers does (or it
    has none). ``extra`` adds (name, literals) triggers found in the same pass.
    """
    needs: dict[str, list[frozenset[bytes]]] = {name: [frozenset(literals)] for name, literals in extra}
    for rule in rules:
        groups = []
        factors = rule.literals()
        if factors is not None:
            groups.append(frozenset(factors))
        if rule.requires_any:
            groups.append(frozenset(rule.requires_any))
        needs[rule.code] = groups
    literals = sorted({lit for groups in needs.values() for group in groups for lit in group})

    unconditional = frozenset(code for code, groups in needs.items() if not groups)
    # literal -> the codes it may decide (a file with none of them is decided at once)
    deciding: dict[bytes, set[str]] = {}
    for code, groups in needs.items():
        for group in groups:
            for literal in group:
                deciding.setdefault(literal, set()).add(code)

    def decide(found: set[bytes]) -> set[str]:
        if not found:
            return set(unconditional)
        candidates = set().union(*(deciding[literal] for literal in found))
        return set(unconditional) | {code for code in candidates if all(group & found for group in needs[code])}

    if not literals:
        return lambda buffer: decide(set())
    try:
        from ahocorasick_rs import BytesAhoCorasick, Implementation
    except ImportError:  # pure-Python fallback, a few times slower
        return lambda buffer: decide({lit for lit in literals if lit in buffer})
    # A DFA: built once per rule set, it scans every file 2x faster than the default NFA
    automaton = BytesAhoCorasick(literals, implementation=Implementation.DFA)

    def scan(buffer: bytes) -> set[str]:
        hits = automaton.find_matches_as_indexes(buffer, overlapping=True)
        return decide({literals[index] for index, _start, _end in hits} if hits else set())
    return scan


def _rule_by_code(rules: tuple[Rule, ...], code: str) -> Rule:
    for rule in rules:
        if rule.code == code:
            return rule
    raise KeyError(code)


def _finish(contexts: list[FileContext], findings: list[Finding], buffer: bytes,
            suppress: bool = True) -> list[Finding]:
    lines = contexts[0].lines if contexts else LineIndex(buffer)
    result = []
    for finding in findings:
        finding.line, finding.column = lines.position(finding.span.start)
        finding.end_line, finding.end_column = lines.position(finding.span.end)
        line0 = finding.line - 1
        text = lines.line_text(line0)
        finding.source_line = text
        sets = suppressed_codes(text, lines.line_text(line0 - 1) if line0 > 0 else "")
        if finding.end_line != finding.line:
            sets += suppressed_codes(lines.line_text(finding.end_line - 1))
        if suppress and finding.code not in ENGINE_CODES and is_suppressed(finding.code, sets):
            continue
        result.append(finding)
    for ctx in contexts:
        for finish in ctx.finishers:
            finish(ctx, result)
    for finding in result:
        if finding.fix is not None:
            finding.edit_positions = tuple(
                lines.position(e.span.start) + lines.position(e.span.end) for e in finding.fix.edits
            )
    result.sort(key=Finding.sort_key)
    for ctx in contexts:
        ctx.release()
    return result


@dataclass
class FileResult:
    path: Path
    display: str
    findings: list[Finding] = field(default_factory=list)
    # Set by --fix/--diff.
    fixed_count: int = 0
    new_raw: bytes | None = None
    fix_error: str | None = None
    internal_error: str | None = None  # rocmlint crashed on this file (a bug to report)
    diff: str = ""
    content_hash: str | None = None  # set by checks, for the cache
    # First pass of a big run (``runner.run_deferred``): the file waits for the project model,
    # and what the workers summarised of it for the model (language -> summary).
    deferred: bool = False
    summaries: dict | None = None
    parts_used: tuple[str, ...] = ()  # the project model parts its analysis asked (cache key)
    includes: tuple[str, ...] = ()  # C-family: the names its #include lines give (discovery)
    facts: tuple[tuple[str, str, str], ...] = ()  # outside facts its analysis read (cache, Project.record)
    # C-family: the project's AMD build does not compile it, so no rule looked at it (summary)
    set_aside: bool = False
    unjudged_extents: tuple[str, ...] = ()  # arrays sized from 32 with lane indices no range was found for
    cache_stamp: str = ""  # the cache entry its findings are (content and key): run_passes' memo


def lint_source(path: Path, display: str, settings: Settings) -> tuple[SourceFile | None, list[Finding]]:
    language = language_for(path, sniff=True)
    if language is None:
        return None, []
    try:
        source = read_source(path, language)
    except SourceError as exc:
        return None, [engine_finding("ROC002", display, str(exc))]
    return source, lint_buffer(path, display, source.buffer, language, settings)


def lint_buffer(path: Path, display: str, buffer: bytes, language: str, settings: Settings,
                build_fixes: bool | frozenset[Applicability] = True) -> list[Finding]:
    """Findings for a file's contents held in memory (an editor's unsaved buffer: UTF-8, no
    BOM), with the rules the file on disk would get (per-file ignores, the halves it is read by)."""
    return analyse_buffer(display, buffer, language, settings, active_rules(settings, language, path),
                          build_fixes=build_fixes)


def internal_error(display: str, summary: str) -> Finding:
    """The finding of a file rocmlint crashed on: reported as not checked (ROC003), never clean."""
    return engine_finding(INTERNAL_ERROR, display, f"internal error, file not checked ({summary}); please report it")


def lint_file(path: Path, display: str, settings: Settings) -> FileResult:
    _source, findings = lint_source(path, display, settings)
    return FileResult(path=path, display=display, findings=findings)
