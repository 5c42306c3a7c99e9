"""The editor's workspace as the engine sees it, with no protocol in the way: open documents
(their unsaved text), the settings, and one warm project model per project root.

Every answer comes from the engine ``rocmlint check`` runs: findings from
``engine.lint_buffer`` on the buffer, fixes from ``runner.fix_buffer`` (the same gated edits
and NVIDIA-view check as ``--fix``), hover text from ``explain_command.explain``. A project
model is built once per root, on first use, and dropped when a file of that project changes
on disk (``files_changed``: saves, watched files), so the next lint rebuilds it from the
stat-keyed summary cache. Not thread-safe: the protocol layer calls it from one thread.
"""
from __future__ import annotations

import difflib
import io
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from lsprotocol import types

from ..config import (
    CONFIG_FILES,
    ConfigError,
    ConfigResolver,
    Settings,
    is_excluded,
    resolver_for,
)
from ..docs import DOCS_URL, help_uri
from ..engine import internal_error, lint_buffer
from ..languages import language_for
from ..model import Applicability, Finding, Severity
from ..project import Project, activate, find_root
from ..registry import ENGINE_CODES, all_rules, is_known_prefix
from ..runner import fix_buffer, prepared_project
from ..source import SourceFile
from .comments import suppression_edit
from .positions import UTF16, LineMap, decode_bytes, encode_text

log = logging.getLogger(__name__)

SOURCE = "rocmlint"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.rocmlint"
_BOM = b"\xef\xbb\xbf"
# An editor's language id for a file whose name rocmlint does not read (an extension-less header).
_LANGUAGE_IDS = {"python": "python", "cpp": "cpp", "c": "cpp", "cuda": "cpp", "cuda-cpp": "cpp", "hip": "cpp"}
_SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
               "information": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint}
_FROM_FINDING = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning,
                 Severity.NOTE: types.DiagnosticSeverity.Information}


class OptionsError(ValueError):
    """The client's settings cannot be used (said in the client; the previous ones stay)."""


@dataclass(frozen=True)
class Options:
    """What the client may set (``initializationOptions`` or ``workspace/didChangeConfiguration``,
    under a ``rocmlint`` key or not); the workspace's configuration files are the rest."""

    config: str = ""  # one config file for every file (the command line's --config)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    compile_commands: str = ""  # the ROCm build's compile_commands.json or its folder (-p)
    cache_dir: str = ""  # "": <project root>/.rocmlint_cache, as `rocmlint check` run from the root
    use_cache: bool = True
    severity: tuple[tuple[str, str], ...] = ()  # (code prefix, error|warning|information|hint)
    debounce_ms: int = 50
    unsafe_fixes: bool = True  # offer unsafe fixes (never preferred) as quick fixes

    KEYS = frozenset({"configPath", "select", "ignore", "extendSelect", "compileCommands", "cacheDir", "cache",
                      "severity", "debounceMs", "unsafeFixes"})

    @classmethod
    def concerns(cls, raw: object) -> bool:
        """Whether a client's settings object says anything to rocmlint."""
        return isinstance(raw, dict) and ("rocmlint" in raw or bool(cls.KEYS & set(raw)))

    @classmethod
    def parse(cls, raw: object) -> "Options":
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise OptionsError(f"settings must be an object, got {raw!r}")
        raw = raw.get("rocmlint", raw)
        if not isinstance(raw, dict):
            raise OptionsError(f"'rocmlint' settings must be an object, got {raw!r}")
        unknown = sorted(set(raw) - cls.KEYS)
        if unknown:
            raise OptionsError(f"unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(cls.KEYS))})")
        codes = {}
        for key in ("select", "ignore", "extendSelect"):
            value = raw.get(key)
            if value is None:
                continue
            if isinstance(value, str):
                value = [v for v in value.replace(" ", ",").split(",") if v]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise OptionsError(f"'{key}' must be a list of rule codes or prefixes, got {value!r}")
            value = [v.strip().upper() for v in value]
            for code in value:
                if not is_known_prefix(code):
                    raise OptionsError(f"'{key}': unknown rule or prefix {code!r}")
            codes[key] = tuple(value)
        for key in ("configPath", "compileCommands", "cacheDir"):
            if not isinstance(raw.get(key, ""), str):
                raise OptionsError(f"'{key}' must be a path (a string), got {raw[key]!r}")
        config = raw.get("configPath", "")
        if config and not os.path.isfile(os.path.expanduser(config)):
            raise OptionsError(f"'configPath': no such file: {config}")
        severity = raw.get("severity", {})
        if not isinstance(severity, dict) or not all(isinstance(v, str) and v.lower() in _SEVERITIES
                                                     for v in severity.values()):
            raise OptionsError(f"'severity' must map rule codes or prefixes to one of {', '.join(_SEVERITIES)}, "
                               f"got {severity!r}")
        for key in ("debounceMs",):
            if key in raw and (not isinstance(raw[key], int) or isinstance(raw[key], bool) or raw[key] < 0):
                raise OptionsError(f"'{key}' must be a whole number of milliseconds, got {raw[key]!r}")
        for key in ("cache", "unsafeFixes"):
            if key in raw and not isinstance(raw[key], bool):
                raise OptionsError(f"'{key}' must be true or false, got {raw[key]!r}")
        return cls(config=os.path.expanduser(config), select=codes.get("select"), ignore=codes.get("ignore"),
                   extend_select=codes.get("extendSelect", ()),
                   compile_commands=os.path.expanduser(raw.get("compileCommands", "")),
                   cache_dir=os.path.expanduser(raw.get("cacheDir", "")), use_cache=raw.get("cache", True),
                   severity=tuple(sorted((k.upper(), v.lower()) for k, v in severity.items())),
                   debounce_ms=raw.get("debounceMs", 50), unsafe_fixes=raw.get("unsafeFixes", True))


@dataclass
class Document:
    uri: str
    path: Path
    text: str
    version: int | None = None
    language_id: str = ""
    root: Path | None = None  # its project's root, found once
    linted: "Linted | None" = None


@dataclass
class Linted:
    """One lint of one version of a document: what code actions and hover answer from."""

    version: int | None
    text: str
    bom: bytes
    buffer: bytes  # the engine's buffer: UTF-8, no BOM
    language: str
    settings: Settings
    display: str
    findings: list[Finding]
    lines: LineMap
    project: Project | None
    fixes: dict = field(default_factory=dict)  # cache: key -> edits (or None: fix refused)


class Session:
    def __init__(self, folders: Iterable[Path] = (), options: Options | None = None,
                 notify: Callable[[str, types.MessageType], None] | None = None, encoding: str = UTF16) -> None:
        self.folders = [Path(os.path.realpath(f)) for f in folders]
        self.options = options or Options()
        self.encoding = encoding
        self._notify = notify or (lambda message, kind: log.warning("%s", message))
        self._told: set[str] = set()  # messages shown since the settings last changed
        self.documents: dict[str, Document] = {}
        self.projects: dict[str, Project | None] = {}
        self._resolver: ConfigResolver | None = None

    # --- messages and settings -------------------------------------------------------------
    def tell(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        """A message for the user (once until the settings or configuration change)."""
        if message not in self._told:
            self._told.add(message)
            self._notify(message, kind)

    def set_options(self, options: Options) -> None:
        self.options = options
        self._reset()

    def _reset(self) -> None:
        self._resolver = None
        self.projects.clear()
        self._told.clear()
        for doc in self.documents.values():
            doc.linted = None

    @property
    def resolver(self) -> ConfigResolver:
        if self._resolver is None:
            o = self.options
            self._resolver = resolver_for(Path(o.config) if o.config else None,
                                          list(o.select) if o.select is not None else None,
                                          list(o.ignore) if o.ignore is not None else None,
                                          o.extend_select, is_known_prefix)
        return self._resolver

    # --- documents -----------------------------------------------------------------------
    def open(self, uri: str, path: Path, text: str, version: int | None = None, language_id: str = "") -> None:
        self.documents[uri] = Document(uri, Path(os.path.realpath(path)), text, version, language_id)

    def change(self, uri: str, text: str, version: int | None = None) -> None:
        doc = self.documents.get(uri)
        if doc is not None:
            doc.text, doc.version = text, version

    def close(self, uri: str) -> None:
        self.documents.pop(uri, None)

    def files_changed(self, paths: Iterable[Path]) -> list[str]:
        """Files changed on disk (saved, created, deleted): the project models they belong to
        are rebuilt on next use; the open documents to lint again (a header's includers)."""
        touched: set[str] = set()
        for path in paths:
            real = os.path.realpath(path)
            if os.path.basename(real) in CONFIG_FILES:
                self._reset()  # settings may have changed anywhere below it
                return list(self.documents)
            for root, project in list(self.projects.items()):
                if not real.startswith(root.rstrip(os.sep) + os.sep):
                    continue
                if project is not None and project.unchanged_by(Path(real)):
                    continue  # e.g. a kernel edited between its directives: the model still holds
                del self.projects[root]
                touched.add(root)
        stale = [doc for doc in self.documents.values() if doc.root is not None and str(doc.root) in touched]
        for doc in stale:
            doc.linted = None
        return [doc.uri for doc in stale]

    # --- linting -------------------------------------------------------------------------
    def lint(self, uri: str) -> list[types.Diagnostic]:
        """Diagnostics for the document's current text (its unsaved contents)."""
        linted = self._linted(uri)
        return [self._diagnostic(linted, f) for f in linted.findings] if linted is not None else []

    def _linted(self, uri: str) -> Linted | None:
        doc = self.documents.get(uri)
        if doc is None:
            return None
        if doc.linted is not None and doc.linted.version == doc.version and doc.linted.text == doc.text:
            return doc.linted
        doc.linted = self._lint(doc)
        return doc.linted

    def _lint(self, doc: Document) -> Linted | None:
        try:
            settings = self.resolver.for_path(doc.path)
        except ConfigError as exc:
            self.tell(f"rocmlint: {exc}")
            return None
        language = self._language(doc, settings)
        if language is None or self._excluded(doc.path, settings):
            return None
        data = encode_text(doc.text)
        bom = _BOM if data.startswith(_BOM) else b""
        buffer = data[len(bom):]
        display = str(doc.path)
        project = self._project(doc)
        activate(project)
        if project is not None:
            project.begin_file()
        try:
            findings = lint_buffer(doc.path, display, buffer, language, settings)
        except ConfigError as exc:  # e.g. a compile database named in the configuration
            self.tell(f"rocmlint: {exc}")
            findings = []
        except Exception as exc:  # noqa: BLE001 - one file's crash must not stop the server
            log.exception("rocmlint crashed on %s", doc.path)
            findings = [internal_error(display, f"{type(exc).__name__}: {exc}")]
        return Linted(doc.version, doc.text, bom, buffer, language, settings, display, findings,
                      LineMap(data, self.encoding), project)

    def _language(self, doc: Document, settings: Settings) -> str | None:
        return language_for(doc.path, sniff=True, extensions=settings.extensions) or \
            _LANGUAGE_IDS.get(doc.language_id)

    def _excluded(self, path: Path, settings: Settings) -> bool:
        """Excluded by the configuration (as `--force-exclude`), it or a folder above it
        within its workspace folder."""
        top = next((str(f) for f in self.folders if str(path).startswith(str(f) + os.sep)), str(path.parent))
        if is_excluded(str(path), False, settings, top):
            return True
        folder = str(path.parent)
        while folder.startswith(top + os.sep):
            if is_excluded(folder, True, settings, top):
                return True
            folder = os.path.dirname(folder)
        return False

    def _project(self, doc: Document) -> Project | None:
        if doc.root is None:
            folder = next((str(f) for f in self.folders if str(doc.path).startswith(str(f) + os.sep)),
                          str(doc.path.parent))
            doc.root = find_root([str(doc.path)], cwd=folder)
        key = str(doc.root)
        if key not in self.projects:
            o = self.options
            cache_dir = None if not o.use_cache else Path(o.cache_dir) if o.cache_dir else doc.root / ".rocmlint_cache"
            try:
                self.projects[key] = prepared_project(doc.root, self.resolver.for_path(doc.root), cache_dir,
                                                      o.compile_commands)
            except ConfigError as exc:
                self.tell(f"rocmlint: {exc} (files are judged without the project model)")
                self.projects[key] = None
        return self.projects[key]

    def _diagnostic(self, linted: Linted, finding: Finding) -> types.Diagnostic:
        rule = all_rules().get(finding.code)
        href = help_uri(rule) if rule is not None else DOCS_URL
        fix = finding.fix.applicability.value if finding.fixable and finding.fix is not None else None
        return types.Diagnostic(
            range=self._range(linted, finding.span.start, finding.span.end),
            message=finding.message, severity=self._severity(finding), code=finding.code,
            code_description=types.CodeDescription(href=href), source=SOURCE,
            data={"name": finding.name, "fix": fix})

    def _severity(self, finding: Finding) -> types.DiagnosticSeverity:
        chosen = max((p for p, _ in self.options.severity if finding.code.startswith(p) or p == "ALL"),
                     key=len, default=None)
        if chosen is not None:
            return _SEVERITIES[dict(self.options.severity)[chosen]]
        if finding.code in ENGINE_CODES:
            return types.DiagnosticSeverity.Error
        return _FROM_FINDING[finding.severity]

    def _range(self, linted: Linted, start: int, end: int) -> types.Range:
        shift = len(linted.bom)
        a, b = linted.lines.position(start + shift), linted.lines.position(end + shift)
        return types.Range(types.Position(*a), types.Position(*b))

    # --- code actions ----------------------------------------------------------------------
    def code_actions(self, uri: str, where: types.Range, only: list[str] | None = None) -> list[types.CodeAction]:
        linted = self._linted(uri)
        if linted is None:
            return []
        quickfix = types.CodeActionKind.QuickFix.value
        wants_quickfix = not only or any(quickfix.startswith(k) or k.startswith(quickfix) for k in only)
        wants_source = bool(only) and any(FIX_ALL_KIND.startswith(k) for k in (only or ()))
        actions: list[types.CodeAction] = []
        here = [f for f in linted.findings if self._touches(linted, f, where)]
        if wants_quickfix:
            for finding in here:
                actions.extend(self._finding_actions(uri, linted, finding))
        # "Fix all": asked for as a source action (fix on save), or offered beside a finding's quick fixes.
        if (wants_source or (wants_quickfix and here)) and any(
                f.fix is not None and f.fix.applicability is Applicability.SAFE for f in linted.findings):
            edits = self._fix_all(linted)
            if edits:
                kind = FIX_ALL_KIND if wants_source else types.CodeActionKind.QuickFix
                actions.append(types.CodeAction(
                    title="rocmlint: fix all safe findings in this file", kind=kind,
                    edit=self._workspace_edit(uri, linted, edits)))
        return actions

    def _touches(self, linted: Linted, finding: Finding, where: types.Range) -> bool:
        found = self._range(linted, finding.span.start, finding.span.end)
        start, end = (found.start.line, found.start.character), (found.end.line, found.end.character)
        return start <= (where.end.line, where.end.character) and (where.start.line, where.start.character) <= end

    def _finding_actions(self, uri: str, linted: Linted, finding: Finding) -> list[types.CodeAction]:
        actions = []
        diagnostic = self._diagnostic(linted, finding)
        fix = finding.fix
        if finding.fixable and fix is not None and (fix.applicability is Applicability.SAFE or self.options.unsafe_fixes):
            edits = self._fix_one(linted, finding)
            if edits:
                safe = fix.applicability is Applicability.SAFE
                actions.append(types.CodeAction(
                    title=f"rocmlint: {fix.title}" + ("" if safe else " (unsafe: review the change)"),
                    kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=safe,
                    edit=self._workspace_edit(uri, linted, edits)))
        if finding.code not in ENGINE_CODES:
            suppression = suppression_edit(linted.buffer, linted.language, finding)
            if suppression is not None:
                edits = self._text_edits(linted, linted.buffer, suppression)
                actions.append(types.CodeAction(
                    title=f"rocmlint: suppress {finding.code} on this line", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], edit=self._workspace_edit(uri, linted, edits)))
        return actions

    def _fix_one(self, linted: Linted, finding: Finding) -> list[types.TextEdit] | None:
        key = ("one", finding.code, finding.span)
        if key not in linted.fixes:
            linted.fixes[key] = self._fixed(linted, only=[finding])
        return linted.fixes[key]

    def _fix_all(self, linted: Linted) -> list[types.TextEdit] | None:
        if "all" not in linted.fixes:
            linted.fixes["all"] = self._fixed(linted, only=None)
        return linted.fixes["all"]

    def _fixed(self, linted: Linted, only: list[Finding] | None) -> list[types.TextEdit] | None:
        """The edits `--fix` makes (``only``: just these findings' fixes), or None when a
        check refuses them (the NVIDIA view would change, the file would not parse)."""
        from ..fixers.apply import FixRejected

        newline = SourceFile(Path(linted.display), linted.buffer, b"", "utf-8", linted.buffer).newline
        activate(linted.project)
        try:
            if linted.project is not None:
                linted.project.begin_file()
            outcome = fix_buffer(linted.buffer, newline, linted.display, linted.language, linted.settings,
                                 _rules(linted), unsafe=only is not None, only=only)
        except FixRejected as exc:
            log.info("fix not offered for %s: %s", linted.display, exc)
            return None
        except Exception:  # noqa: BLE001 - no fix offered, the server goes on
            log.exception("fixing %s failed", linted.display)
            return None
        if outcome.buffer == linted.buffer:
            return None
        return self._text_edits(linted, linted.buffer, outcome.buffer)

    def _text_edits(self, linted: Linted, before: bytes, after: bytes) -> list[types.TextEdit]:
        """Line-wise edits turning ``before`` into ``after`` (both without the BOM)."""
        old, new = _split_lines(before), _split_lines(after)
        starts = [0]
        for line in old:
            starts.append(starts[-1] + len(line))
        edits = []
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            edits.append(types.TextEdit(range=self._range(linted, starts[i1], starts[i2]),
                                        new_text=decode_bytes(b"".join(new[j1:j2]))))
        return edits

    def _workspace_edit(self, uri: str, linted: Linted, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=linted.version),
            edits=list(edits))])

    # --- explain -------------------------------------------------------------------------
    def explain(self, uri: str, line: int) -> str:
        """``rocmlint explain`` for a 0-based line of the document's current text."""
        linted = self._linted(uri)
        if linted is None:
            return "rocmlint does not check this file (its language, the configuration's exclude, or a config error)."
        from ..explain_command import explain

        out, err = io.StringIO(), io.StringIO()
        activate(linted.project)
        if linted.project is not None:
            linted.project.begin_file()
        try:
            explain(linted.display, line + 1, linted.settings, out=out, buffer=linted.buffer,
                    language=linted.language, err=err)
        except Exception as exc:  # noqa: BLE001
            log.exception("explain crashed on %s", linted.display)
            return f"rocmlint explain: internal error ({type(exc).__name__}: {exc}); please report it"
        return out.getvalue() + err.getvalue()

    def hover(self, uri: str, position: types.Position) -> str | None:
        """Markdown for a position inside a finding's range: the finding, its rule's
        documentation link and the explain text of its line; None elsewhere."""
        linted = self._linted(uri)
        if linted is None:
            return None
        point = types.Range(position, position)
        here = [f for f in linted.findings if self._touches(linted, f, point)]
        if not here:
            return None
        parts = []
        for finding in here:
            rule = all_rules().get(finding.code)
            link = f" ([docs]({help_uri(rule)}))" if rule is not None else ""
            parts.append(f"**{finding.code}** `{finding.name}`: {finding.message}{link}")
        line = self._range(linted, here[0].span.start, here[0].span.start).start.line
        parts.append("```text\n" + self.explain(uri, line).rstrip() + "\n```")
        return "\n\n".join(parts)


def _rules(linted: Linted) -> tuple:
    from ..engine import active_rules

    return active_rules(linted.settings, linted.language, Path(linted.display))


def _split_lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)
