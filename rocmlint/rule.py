"""What a rule is, and the context it reports through.

A rule module is cheap to import: it must not import libcst or tree-sitter at module
level (import them inside functions), so that files the prefilter drops never pay for
the parsers.
"""
from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Iterator

from .model import Applicability, Finding, Fix, LineIndex, Severity, Span

if TYPE_CHECKING:
    from .config import Settings


@dataclass(frozen=True)
class Example:
    """A rule example; ``expected`` is the whole fixed text (None: no fix or not checked)."""

    code: str
    expected: str | None = None
    filename: str | None = None  # default: example.py / example.cu by language
    unsafe: bool = False  # expected text needs --unsafe-fixes


def _anchored_matches(pattern: "re.Pattern[bytes]", anchors: "tuple[re.Pattern[bytes], ...]",
                      buffer: bytes) -> "Iterator[re.Match[bytes]]":
    """``pattern.finditer`` over the lines around the anchors' matches (see ``Rule.anchors``)."""
    size = len(buffer)
    windows = []
    for anchor in anchors:
        covered = -1  # the end of this anchor's last window
        for m in anchor.finditer(buffer):
            if m.end() <= covered and buffer[m.end():covered].strip():
                continue  # a later match on that window's last line: its own window is inside it
            start = buffer.rfind(b"\n", 0, m.start()) + 1
            while start > 0 and not buffer[start:m.start()].strip():  # blank up to the anchor
                start = buffer.rfind(b"\n", 0, start - 1) + 1
            end = buffer.find(b"\n", m.end())
            while 0 <= end < size and not buffer[m.end():end].strip():
                end = buffer.find(b"\n", end + 1)
            covered = size if end < 0 else end
            windows.append((start, covered))
    windows.sort()
    merged: list[list[int]] = []
    for start, end in windows:
        if merged and start <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in merged:
        yield from pattern.finditer(buffer, start, end)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    language: ClassVar[str]  # "python", "cpp" or "manifest"
    # Other halves whose files the rule also reads (its check() looks at ctx.language).
    also_languages: ClassVar[tuple[str, ...]] = ()
    # Regex (over the file's bytes) that must match for the rule to have anything to say.
    # It is the prefilter (files where no rule's pattern matches are never parsed) and its
    # matches are the rule's anchors (``ctx.hits``): rules inspect the tree around them
    # instead of walking whole files. Keep it specific: every match costs a parse.
    pattern: ClassVar[str] = ""
    # Optional speed-up for a pattern re scans slowly (alternatives starting with common
    # punctuation): fast regexes, each best starting with a literal, one of which matches
    # inside every match of ``pattern``, which reaches beyond it only as far as the lines of
    # the nearest non-blank bytes on either side. ``pattern`` then runs on those lines only;
    # the matches are the same (``tests/test_rule_anchors.py`` holds every rule to it).
    anchors: ClassVar[tuple[str, ...]] = ()
    # Optional: the file must also contain one of these (e.g. markers of GPU code), for
    # rules whose pattern alone matches in most files (`% 32`). Checked in the same
    # Aho-Corasick pass as the pattern's literal factors.
    requires_any: ClassVar[tuple[bytes, ...]] = ()
    # The strongest fix the rule can offer; None when it never fixes.
    fix_applicability: ClassVar[Applicability | None] = None
    severity: ClassVar[Severity] = Severity.WARNING
    # Rules that look at wave size skip wave-size-aware preprocessor branches.
    wave_size_rule: ClassVar[bool] = False
    # Opt-in rules (False) run only where a selection names their full code (`--select ROC108`,
    # `extend-select = ["ROC108"]`): a prefix (`ROC`, `ROC1`, `ALL`) does not enable them.
    default_enabled: ClassVar[bool] = True
    # Reference kernel that shows the correct pattern (file name under rocmlint/reference/kernels).
    reference_kernel: ClassVar[str | None] = None
    valid: ClassVar[tuple[Example | str, ...]] = ()
    invalid: ClassVar[tuple[Example | str, ...]] = ()
    # Filled on first use; read through cls.__dict__ so that a subclass never sees its base's.
    _compiled: ClassVar[re.Pattern[bytes]]
    _literals: ClassVar[tuple[bytes, ...] | None]
    _compiled_anchors: ClassVar[tuple[re.Pattern[bytes], ...]]

    def check(self, ctx: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # Docs -------------------------------------------------------------------------
    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """The docstring split into its ``## Heading`` sections."""
        sections: dict[str, str] = {}
        current = "summary"
        buf: list[str] = []
        for line in cls.doc().splitlines():
            m = re.match(r"^#+\s*(.+?)\s*$", line)
            if m:
                sections[current] = "\n".join(buf).strip()
                current, buf = m.group(1).rstrip(":").lower(), []
            else:
                buf.append(line)
        sections[current] = "\n".join(buf).strip()
        return sections

    @classmethod
    def summary(cls) -> str:
        return cls.doc_sections().get("summary") or cls.message

    @classmethod
    def examples(cls) -> tuple[list[Example], list[Example]]:
        def norm(items):
            # dedent, not inspect.cleandoc: cleandoc strips the body's indent when the first
            # line has none (`def f():\n    x` became `def f():\nx`, a syntax error).
            return [e if isinstance(e, Example) else Example(textwrap.dedent(e).strip("\n") + "\n") for e in items]

        return norm(cls.valid), norm(cls.invalid)

    @classmethod
    def compiled_pattern(cls) -> "re.Pattern[bytes]":
        compiled = cls.__dict__.get("_compiled")
        if compiled is None:
            compiled = re.compile(cls.pattern.encode(), re.MULTILINE)
            cls._compiled = compiled
        return compiled

    @classmethod
    def matches(cls, buffer: bytes) -> "Iterator[re.Match[bytes]]":
        """``pattern``'s matches in ``buffer``, in order (through ``anchors`` when set)."""
        pattern = cls.compiled_pattern()
        if not cls.anchors:
            return pattern.finditer(buffer)
        compiled = cls.__dict__.get("_compiled_anchors")
        if compiled is None:
            compiled = cls._compiled_anchors = tuple(re.compile(a.encode(), re.MULTILINE) for a in cls.anchors)
        return _anchored_matches(pattern, compiled, buffer)

    @classmethod
    def literals(cls) -> tuple[bytes, ...] | None:
        """Strings one of which every match of ``pattern`` contains (fast prefilter)."""
        if "_literals" not in cls.__dict__:
            from .literals import required_literals

            cls._literals = required_literals(cls.pattern, re.MULTILINE)
        return cls._literals

    @classmethod
    def runs_on(cls, language: str) -> bool:
        return language == cls.language or language in cls.also_languages

    @classmethod
    def fixable(cls) -> bool:
        return cls.fix_applicability not in (None, Applicability.DISPLAY_ONLY)


class FileContext:
    """Everything a rule sees of one file; language halves subclass it."""

    language = ""

    def __init__(self, path: str, source: bytes, settings: "Settings") -> None:
        self.path = path
        self.source = source
        self.settings = settings
        self.lines = LineIndex(source)
        self.findings: list[Finding] = []
        self.rule: Rule | None = None
        self._hits: dict[str, list[Span]] = {}
        self.project = active()  # the project model (None when linting a lone buffer)
        # Called as f(ctx, findings) once every rule has run and suppressions are applied:
        # fix builders that need the whole file's findings (merged gate blocks) finish there.
        self.finishers: list = []
        # Which fixes need real edits: True (all), False (none: only counted) or the
        # applicabilities that this run applies (engine.analyse_buffer).
        self.build_fixes: bool | frozenset = True

    def release(self) -> None:
        """Drop what the rules cached on this context once its findings are final: the caches
        (a gate evaluator holding the context's own methods) form reference cycles, and a
        cycle holding a parsed tree is freed only by a collector pass over every node."""
        for cls in type(self).__mro__:
            for name, value in vars(cls).items():
                if isinstance(value, cached_property):
                    self.__dict__.pop(name, None)

    def hits(self) -> list[Span]:
        """Where the current rule's ``pattern`` matched (its anchors), in file order."""
        assert self.rule is not None
        return self._hits.get(self.rule.code, [])

    def text(self, span: Span) -> str:
        return self.source[span.start : span.end].decode("utf-8", errors="replace")

    def report(self, span: Span, message: str | None = None, fix: Fix | None = None) -> None:
        rule = self.rule
        assert rule is not None, "report() outside a rule"
        self.findings.append(
            Finding(
                code=rule.code,
                name=rule.name,
                path=self.path,
                span=span,
                message=message or rule.message,
                fix=fix,
                severity=rule.severity,
            )
        )

    @property
    def outside_amd_build(self) -> bool:
        """True when the AMD build never compiles or runs this file (project model)."""
        return False

    @property
    def mode(self) -> str | None:
        """"port" or "guard" for C-family code (design §2e); None where it does not apply."""
        return None

    def nvidia_only(self, offset: int) -> bool:
        """True where only the NVIDIA build reaches this byte (never reported)."""
        return False

    def wave_size_aware(self, offset: int) -> bool:
        """True inside branches that already pick code by wave size."""
        return False


# The project model rules see (``rocmlint.project.Project``), set by the runner before its
# workers fork. Kept here, in the base layer every context reads, as an opaque object: the
# model layer sits above the language front ends and they reach it only through this slot.
_ACTIVE: Any = None


def activate(project: Any) -> None:
    """Make ``project`` the model rules see (set before the worker pool forks)."""
    global _ACTIVE
    _ACTIVE = project


def active() -> Any:
    return _ACTIVE
