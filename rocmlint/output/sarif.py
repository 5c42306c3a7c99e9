"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers, built on ``sarif-om``.

Conventions (see docs/integrations.md):

* One run. ``tool.driver.rules`` lists every known rule (stable order: engine codes
  ROC001/ROC002, then the registry's codes sorted), so ``ruleIndex`` is stable for a
  given rocmlint version whatever the findings are.
* Paths are relative to the working directory, which is ``SRCROOT``
  (``originalUriBaseIds``, a ``file://`` URI ending in ``/``); run rocmlint from the
  repository root and GitHub resolves them against the checkout. Files outside the
  working directory get absolute ``file://`` URIs.
* Regions are 1-based lines and columns, ``endColumn`` exclusive. Columns count Unicode
  code points (``run.columnKind = "unicodeCodePoints"``), the same characters the text
  and JSON outputs count; lines end at ``\\n`` or ``\\r\\n`` (the SARIF default
  ``newlineSequences``). A UTF-8 BOM is not part of line 1.
* ``partialFingerprints["rocmlint/v1"]`` hashes rule, path and the normalised line text
  plus an occurrence index (``rocmlint.fingerprint``): stable across runs and line shifts.
* ``fixes``: safe and unsafe fixes (``properties.applicability`` says which;
  display-only findings carry none), one ``artifactChange`` for the finding's file, one
  ``replacement`` per edit. ``deletedRegion`` uses the same line/column form as the
  result region (an empty region, ``endColumn == startColumn`` on one line, is an
  insertion point); ``insertedContent.text`` uses the file's own newline style and is
  left out for pure deletions. Applying a result's replacements from last to first
  gives the file ``--fix`` writes for that finding; two findings of one file may share
  an identical replacement (a gate definition inserted once), apply it once.
* At most 25,000 results (GitHub's per-run limit); beyond that the run is truncated and
  ``invocations[0].toolExecutionNotifications`` says so.
* A file rocmlint crashed on (ROC003, internal error) is not a result: it is an
  error-level ``toolExecutionNotification`` locating the file, and the invocation's
  ``executionSuccessful`` is false.
"""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import attr
import sarif_om as om

from .. import __version__
from ..docs import help_uri, render_rule
from ..fingerprint import SARIF_KEY, fingerprints
from ..model import Applicability, Finding, Severity
from ..registry import ENGINE_CODES, INTERNAL_ERROR, all_rules

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/rocmlint/rocmlint"
SRCROOT = "SRCROOT"
MAX_RESULTS = 25_000  # GitHub code scanning: results per run
COMPACT_ABOVE = 2_000  # findings; bigger logs are written without indentation
ERROR_CODES = frozenset(ENGINE_CODES)  # parse/read failures are errors, not style warnings

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


# Serialisation -------------------------------------------------------------------------

# Key order in the output (SARIF does not care; people reading it do): identifiers first.
_FIRST = ("$schema", "id", "ruleId", "ruleIndex", "name", "version", "level", "message", "tool", "driver",
          "startLine", "startColumn", "endLine", "endColumn", "text", "description")
_SCALARS = (str, int, float, bool)
_FIELDS: dict[type, list[tuple[str, str, object]]] = {}


def _fields(cls: type) -> list[tuple[str, str, object]] | None:
    """(attribute, SARIF name, default or NOTHING) of a sarif-om class, cached; None if not one."""
    fields = _FIELDS.get(cls)
    if fields is None:
        if not attr.has(cls):
            return None
        fields = []
        for field in attr.fields(cls):
            default = field.default
            # attrs' stubs declare Factory a function; at runtime it is the class of factory defaults.
            if isinstance(default, attr.Factory):  # type: ignore[arg-type]
                default = default.factory()
            if field.name == "level":  # GitHub reads `level` from every result and rule: keep it
                default = attr.NOTHING
            fields.append((field.name, field.metadata.get("schema_property_name", field.name), default))
        rank = {name: i for i, name in enumerate(_FIRST)}
        fields.sort(key=lambda f: rank.get(f[1], len(rank)))  # stable: the rest keep sarif-om's order
        _FIELDS[cls] = fields
    return fields


def _serialise(value):
    """sarif-om objects -> JSON-ready data under the SARIF property names.

    None and empty containers are dropped, and so are attributes still at their
    ``sarif-om`` default (e.g. ``charOffset = -1``, which would be invalid), except a
    ``level`` that was set.
    """
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        return [_serialise(v) for v in value if v is not None]
    items: list[tuple[str, object]]
    if isinstance(value, dict):
        items = list(value.items())
    else:
        fields = _fields(type(value))
        if fields is None:
            raise TypeError(f"cannot serialise {type(value).__name__} to SARIF")
        items = []
        for name, json_name, default in fields:
            item = getattr(value, name)
            if item is None or (default is not attr.NOTHING and item == default):
                continue
            items.append((json_name, item))
    out = {}
    for key, item in items:
        if item is None:
            continue
        item = _serialise(item)
        if item == {} or item == []:
            continue
        out[key] = item
    return out


# Rules ---------------------------------------------------------------------------------

_FILE_ADVICE = "Fix the file, or exclude it in [tool.rocmlint]."
_ENGINE_ADVICE = {INTERNAL_ERROR: "A bug in rocmlint, not in the file: please report it with the traceback "
                                  "ROCMLINT_DEBUG=1 prints; exclude the file in [tool.rocmlint] meanwhile."}

def _rule_descriptors(extra_codes: set[str]) -> tuple[list[om.ReportingDescriptor], dict[str, int]]:
    descriptors: list[om.ReportingDescriptor] = []
    for code, (name, description) in sorted(ENGINE_CODES.items()):
        descriptors.append(om.ReportingDescriptor(
            id=code, name=name,
            short_description=om.MultiformatMessageString(text=description),
            full_description=om.MultiformatMessageString(
                text=f"rocmlint could not analyse the file: {description}."),
            help=om.MultiformatMessageString(
                text=f"{code} ({name}): {description}. {_ENGINE_ADVICE.get(code, _FILE_ADVICE)}",
                markdown=f"**{code}** `{name}`: {description}. "
                         f"{_ENGINE_ADVICE.get(code, _FILE_ADVICE).replace('[tool.rocmlint]', '`[tool.rocmlint]`')}"),
            default_configuration=om.ReportingConfiguration(level="error"),
            properties={"tags": ["rocmlint", "engine"], "precision": "very-high"},
        ))
    rules = all_rules()
    for code, rule in rules.items():
        sections = rule.doc_sections()
        summary = rule.summary().strip().splitlines()[0] if rule.summary().strip() else rule.message
        full = sections.get("what it does") or summary
        why = sections.get("why is this bad?")
        if why:
            full = f"{full}\n\n{why}"
        markdown = render_rule(rule)
        tags = ["rocmlint", rule.language, "portability", "rocm"]
        fix = rule.fix_applicability.value if rule.fix_applicability else "none"
        descriptors.append(om.ReportingDescriptor(
            id=code, name=rule.name,
            short_description=om.MultiformatMessageString(text=summary),
            full_description=om.MultiformatMessageString(text=full),
            help=om.MultiformatMessageString(text=markdown, markdown=markdown),
            help_uri=help_uri(rule),
            # An opt-in rule is off unless selected by its code (`--extend-select ROC108`).
            default_configuration=om.ReportingConfiguration(level=_LEVELS[rule.severity],
                                                            enabled=rule.default_enabled),
            properties={"tags": tags, "fix": fix, "precision": "high"},
        ))
    for code in sorted(extra_codes - set(rules) - set(ENGINE_CODES)):  # unknown to the registry
        descriptors.append(om.ReportingDescriptor(
            id=code, short_description=om.MultiformatMessageString(text=code)))
    index = {d.id: i for i, d in enumerate(descriptors)}
    return descriptors, index


# Results -------------------------------------------------------------------------------

def root_uri(root: Path) -> str:
    """``file://`` URI of a folder, ending in ``/`` as SARIF requires for base URIs."""
    uri = root.resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _artifact_location(path: str) -> om.ArtifactLocation:
    if path.startswith("/") or (len(path) > 2 and path[1] == ":"):  # outside the working directory
        return om.ArtifactLocation(uri=Path(path).as_uri())
    return om.ArtifactLocation(uri=quote(path, safe="/"), uri_base_id=SRCROOT)


def _region(line: int, column: int, end_line: int, end_column: int) -> om.Region | None:
    if line < 1:
        return None
    region = om.Region(start_line=line)
    if column >= 1:
        region.start_column = column
    if end_line >= line:
        region.end_line = end_line
        if column >= 1 and end_column >= 1 and (end_line > line or end_column >= column):
            region.end_column = end_column
    return region


def _level(f: Finding) -> str:
    if f.code in ERROR_CODES:
        return "error"
    return _LEVELS.get(f.severity, "warning")


class _Newlines:
    """Newline style of each fixed file, read once (SARIF inserts must match the file)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        if path not in self.cache:
            try:
                data = (self.root / path).read_bytes()
            except OSError:
                data = b""
            self.cache[path] = "\r\n" if data.count(b"\r\n") * 2 > data.count(b"\n") else "\n"
        return self.cache[path]


def _fix(f: Finding, newline: str) -> om.Fix | None:
    fix = f.fix
    if fix is None or not fix.edits or fix.applicability is Applicability.DISPLAY_ONLY:
        return None
    if len(f.edit_positions) != len(fix.edits):
        return None  # positions missing: no fix rather than a wrong one
    replacements = []
    for (line, col, end_line, end_col), edit in zip(f.edit_positions, fix.edits):
        if line < 1 or col < 1:
            return None
        region = om.Region(start_line=line, start_column=col, end_line=end_line, end_column=end_col)
        content = edit.content.replace("\r\n", "\n").replace("\n", newline)
        replacements.append(om.Replacement(
            deleted_region=region,
            inserted_content=om.ArtifactContent(text=content) if content else None,
        ))
    title = fix.title or f"Fix {f.code}"
    if fix.applicability is Applicability.UNSAFE:
        title += " (unsafe: review before applying)"
    return om.Fix(
        description=om.Message(text=title),
        artifact_changes=[om.ArtifactChange(artifact_location=_artifact_location(f.path),
                                            replacements=replacements)],
        properties={"applicability": fix.applicability.value},
    )


def build_log(findings: list[Finding], *, root: Path | None = None,
              max_results: int = MAX_RESULTS) -> om.SarifLog:
    root = (root or Path.cwd()).resolve()
    # Files rocmlint crashed on are the tool's failure, not alerts on the code: notifications.
    crashes = [f for f in findings if f.code == INTERNAL_ERROR]
    findings = [f for f in findings if f.code != INTERNAL_ERROR]
    prints = fingerprints(findings)  # over all findings: truncation must not shift occurrences
    descriptors, index = _rule_descriptors({f.code for f in findings})
    newlines = _Newlines(root)
    kept = findings[:max_results]
    results = []
    for f, fingerprint in zip(kept, prints):
        region = _region(f.line, f.column, f.end_line, f.end_column)
        location = om.Location(physical_location=om.PhysicalLocation(
            artifact_location=_artifact_location(f.path), region=region))
        fix = _fix(f, newlines(f.path)) if f.fixable else None
        results.append(om.Result(
            rule_id=f.code, rule_index=index[f.code], level=_level(f),
            message=om.Message(text=f.message),
            locations=[location],
            partial_fingerprints={SARIF_KEY: fingerprint},
            fixes=[fix] if fix is not None else None,
            properties=_properties(f),
        ))
    invocation = om.Invocation(execution_successful=not crashes)
    notifications = [om.Notification(
        level="error",
        message=om.Message(text=f"{f.path}: {f.message}"),
        locations=[om.Location(physical_location=om.PhysicalLocation(
            artifact_location=_artifact_location(f.path)))],
        properties={"ruleId": f.code},
    ) for f in crashes]
    if len(findings) > len(kept):
        notifications.append(om.Notification(
            level="warning",
            message=om.Message(text=(
                f"Results truncated: {len(findings)} findings, only the first {len(kept)} are "
                f"included (GitHub code scanning accepts at most {MAX_RESULTS} results per run). "
                "Fix or baseline (--write-baseline) the rest, or narrow the paths.")),
            properties={"totalResults": len(findings), "includedResults": len(kept)},
        ))
    invocation.tool_execution_notifications = notifications or None
    driver = om.ToolComponent(
        name="rocmlint", version=__version__, semantic_version=__version__,
        information_uri=INFORMATION_URI, rules=descriptors,
    )
    run = om.Run(
        tool=om.Tool(driver=driver),
        invocations=[invocation],
        original_uri_base_ids={SRCROOT: om.ArtifactLocation(uri=root_uri(root))},
        column_kind="unicodeCodePoints",
        results=results,
    )
    return om.SarifLog(runs=[run], version="2.1.0", schema_uri=SCHEMA_URI)


def to_dict(log: om.SarifLog) -> dict:
    data = _serialise(log)
    run = data["runs"][0]
    run.setdefault("results", [])  # an empty results array means "ran, found nothing"
    return data


def render(findings: list[Finding], *, root: Path | None = None, max_results: int = MAX_RESULTS) -> str:
    data = to_dict(build_log(findings, root=root, max_results=max_results))
    # Indented for people reading small logs; compact (and several times faster, the C
    # encoder) for big ones, which only machines read.
    indent = 2 if len(findings) <= COMPACT_ABOVE else None
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def _properties(f: Finding) -> dict | None:
    """A result's property bag: the project model's evidence, and for C-family findings the
    mode (``port``: code a HIP backend is written from; ``guard``: the HIP build compiles it)."""
    found: dict = {}
    if f.evidence:
        found["evidence"] = list(f.evidence)
    if f.mode is not None:
        found["mode"] = f.mode
    if f.unknown_macros:  # the finding holds only where the AMD build takes this #if path
        found["unknownMacros"] = list(f.unknown_macros)
    if f.witness is not None:  # check --witness: what a run at 64 and 32 lanes showed
        found["witness"] = {"status": f.witness[0], "detail": f.witness[1]}
    return found or None
