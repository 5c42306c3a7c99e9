"""SARIF 2.1.0 output: schema-valid, GitHub-ready, fixes that round-trip, stable fingerprints."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.config import Settings
from rocmlint.docs import help_uri, render_rule
from rocmlint.engine import _finish, analyse_buffer
from rocmlint.fingerprint import SARIF_KEY
from rocmlint.model import Applicability, Edit, Finding, Fix, Span, apply_edits
from rocmlint.output import sarif
from rocmlint.registry import ENGINE_CODES, all_rules
from rocmlint.runner import fix_buffer

from rocmlint.fixers.apply import select_edits

REPO = Path(__file__).resolve().parents[1]
# shared/ sits beside the repository (or beside the folder of its worktrees).
SCHEMA_PATH = next((folder / "shared/data/sarif-schema-2.1.0.json" for folder in Path(__file__).resolve().parents
                    if (folder / "shared/data/sarif-schema-2.1.0.json").is_file()),
                   REPO.parent / "shared/data/sarif-schema-2.1.0.json")


# Helpers ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def validator():
    if not SCHEMA_PATH.is_file():
        pytest.skip(f"SARIF schema not found at {SCHEMA_PATH} (shared/ must sit beside the repository)")
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def assert_valid(validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    # Beyond the schema: what GitHub code scanning relies on.
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len({r["id"] for r in rules}) == len(rules), "duplicate rule ids"
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"][SARIF_KEY]
        for fix in result.get("fixes", []):
            assert fix["artifactChanges"], "empty artifactChanges make GitHub reject the upload"
            for change in fix["artifactChanges"]:
                assert change["replacements"]
                for rep in change["replacements"]:
                    region = rep["deletedRegion"]
                    assert {"startLine", "startColumn", "endLine", "endColumn"} <= set(region)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def sarif_of(*args: str, cwd: Path) -> dict:
    proc = run_cli("check", "--output-format", "sarif", "--no-cache", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def example_filename(rule, example) -> str:
    return example.filename or ("example.py" if rule.language == "python" else "example.cu")


def single_round_safe_examples(language: str | None = None):
    """(rule, example) pairs with a safe fix that `--fix` completes in one round."""
    out = []
    for rule in all_rules().values():
        if rule.fix_applicability is not Applicability.SAFE or (language and rule.language != language):
            continue
        for example in rule.examples()[1]:
            if example.expected is None or example.unsafe:
                continue
            settings = Settings(select=(rule.code,))
            name = example_filename(rule, example)
            buffer = example.code.encode()
            findings = analyse_buffer(name, buffer, rule.language, settings, (rule(),))
            edits, _ = select_edits(findings, unsafe=False)
            once = apply_edits(buffer, edits)
            full = fix_buffer(buffer, "\n", name, rule.language, settings, (rule(),), unsafe=False).buffer
            if edits and once == full:
                out.append((rule, example))
    return out


def hazard():
    candidates = single_round_safe_examples("python") or single_round_safe_examples()
    if not candidates:
        pytest.skip("no rule with a single-round safe fix registered yet")
    return candidates[0]


def apply_sarif_replacements(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements the way a SARIF consumer does: 1-based line/column regions,
    columns in Unicode code points, lines ending at \\n or \\r\\n; identical replacements
    (shared by several results) once."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    unique = []
    for rep in replacements:
        if rep not in unique:
            unique.append(rep)
    spans = []
    for rep in unique:
        r = rep["deletedRegion"]
        spans.append((offset(r["startLine"], r["startColumn"]), offset(r["endLine"], r["endColumn"]),
                      rep.get("insertedContent", {}).get("text", "")))
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


def all_replacements(log: dict) -> list[dict]:
    return [rep for result in log["runs"][0]["results"] for fix in result.get("fixes", [])
            for change in fix["artifactChanges"] for rep in change["replacements"]]


def synthetic(buffer: bytes, needle: bytes, *, code: str | None = None, path: str = "demo.py",
              applicability: Applicability | None = Applicability.SAFE, content: str = "fixed",
              occurrence: int = 0) -> Finding:
    """A finding on the ``occurrence``-th ``needle`` with positions filled like the engine."""
    code = code or next(iter(all_rules()), "ROC101")
    start = -1
    for _ in range(occurrence + 1):
        start = buffer.index(needle, start + 1)
    span = Span(start, start + len(needle))
    fix = None if applicability is None else Fix((Edit(span, content),), "replace it", applicability)
    finding = Finding(code=code, name="demo-rule", path=path, span=span, message="demo message", fix=fix)
    return _finish([], [finding], buffer)[0]


# Schema validity -------------------------------------------------------------------------

def test_fixture_suite_sarif_validates(validator):
    log = sarif_of("fixtures", cwd=REPO)
    assert_valid(validator, log)
    proc = run_cli("check", "--output-format", "json", "--no-cache", "fixtures", cwd=REPO)
    findings = json.loads(proc.stdout)
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == \
           [(f["code"], f["line"]) for f in findings]
    for result, finding in zip(results, findings):
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": finding["path"], "uriBaseId": "SRCROOT"}
        fixable = finding["fix"] is not None and finding["fix"]["applicability"] != "display-only"
        assert ("fixes" in result) == fixable
    assert log["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"] == REPO.as_uri() + "/"


def test_every_rule_example_sarif_validates(validator, tmp_path):
    """All invalid examples of all rules (the rule set grows): valid SARIF, fixes where fixable."""
    count = 0
    for rule in all_rules().values():
        for i, example in enumerate(rule.examples()[1]):
            name = example_filename(rule, example)
            target = tmp_path / rule.code / str(i) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(example.code, encoding="utf-8")
            count += 1
    if not count:
        pytest.skip("no rules registered yet")
    log = sarif_of("--select", "ROC", ".", cwd=tmp_path)
    assert_valid(validator, log)
    results = log["runs"][0]["results"]
    assert results
    json_findings = json.loads(run_cli("check", "--output-format", "json", "--no-cache", ".", cwd=tmp_path).stdout)
    assert len(results) == len(json_findings)
    for result, finding in zip(results, json_findings):
        fix = finding["fix"]
        if fix is None or fix["applicability"] == "display-only" or not fix["edits"]:
            assert "fixes" not in result
        else:
            (sarif_fix,) = result["fixes"]
            assert sarif_fix["properties"]["applicability"] == fix["applicability"]
            (change,) = sarif_fix["artifactChanges"]
            assert change["artifactLocation"]["uri"] == finding["path"]
            assert len(change["replacements"]) == len(fix["edits"])


def test_driver_and_rule_metadata(validator):
    log = sarif.to_dict(sarif.build_log([]))
    assert_valid(validator, log)
    assert log["version"] == "2.1.0" and log["$schema"]
    run = log["runs"][0]
    assert run["results"] == []
    assert run["columnKind"] == "unicodeCodePoints"
    driver = run["tool"]["driver"]
    from rocmlint import __version__

    assert driver["name"] == "rocmlint" and driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert ids == sorted(ENGINE_CODES) + list(all_rules())
    for descriptor in driver["rules"]:
        assert descriptor["shortDescription"]["text"]
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"]["text"] and descriptor["help"]["markdown"]
        assert descriptor["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert descriptor["properties"]["tags"]
    for code, rule in all_rules().items():
        descriptor = driver["rules"][ids.index(code)]
        assert descriptor["name"] == rule.name
        assert descriptor["help"]["markdown"] == render_rule(rule)
        assert descriptor["helpUri"] == help_uri(rule)
        assert rule.language in descriptor["properties"]["tags"]
        invalid = rule.examples()[1]
        if invalid:
            assert invalid[0].code.strip().splitlines()[0] in descriptor["help"]["markdown"]


def test_engine_errors_and_odd_locations_stay_valid(validator, tmp_path):
    buffer = b"x = 1\n"
    unreadable = Finding(code="ROC002", name="unreadable-file", path="bad file.py", span=Span(0, 0),
                         message="cannot decode as utf-8")  # line 0: no region at all
    outside = synthetic(buffer, b"1", path=(tmp_path / "elsewhere.py").as_posix())
    display_only = synthetic(buffer, b"x", applicability=Applicability.DISPLAY_ONLY)
    log = json.loads(sarif.render([unreadable, outside, display_only], root=tmp_path))
    assert_valid(validator, log)
    r0, r1, r2 = log["runs"][0]["results"]
    assert r0["level"] == "error" and "region" not in r0["locations"][0]["physicalLocation"]
    assert r0["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "bad%20file.py",
                                                                           "uriBaseId": "SRCROOT"}
    assert r1["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": (tmp_path / "elsewhere.py").as_uri()}
    assert "fixes" in r1
    assert "fixes" not in r2  # display-only findings carry no fix
    assert log["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"] == tmp_path.as_uri() + "/"


# Fixes round-trip ------------------------------------------------------------------------

@pytest.mark.parametrize("language", ["python", "cpp"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_fix_round_trip_matches_rocmlint_fix(validator, tmp_path, newline, language):
    candidates = single_round_safe_examples(language)
    if not candidates:
        pytest.skip(f"no {language} rule with a single-round safe fix registered yet")
    rule, example = candidates[0]
    name = example_filename(rule, example)
    original = example.code.replace("\n", newline)
    target = tmp_path / name
    target.write_bytes(original.encode())

    log = sarif_of(name, cwd=tmp_path)
    assert_valid(validator, log)
    replacements = all_replacements(log)
    assert replacements, "the hazard has a fix"
    via_sarif = apply_sarif_replacements(original, replacements)

    proc = run_cli("check", "--fix", "--no-cache", name, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    via_fix = target.read_bytes().decode()
    assert via_fix != original
    assert via_sarif == via_fix
    assert via_fix == example.expected.replace("\n", newline)


def test_fix_round_trip_counts_code_points(validator):
    """Columns are Unicode code points (run.columnKind): an astral character before the edit
    counts once, as the text output counts it, not twice as in UTF-16."""
    text = 'label = "é😀"; value = old_name(1)\nother = "😀😀"; x = old_name(2)\n'
    buffer = text.encode()
    findings = [synthetic(buffer, b"old_name", content="new_name"),
                synthetic(buffer, b"old_name", content="new_name", occurrence=1)]
    assert findings[0].column == text.splitlines()[0].index("old_name") + 1
    log = json.loads(sarif.render(findings))
    assert_valid(validator, log)
    via_sarif = apply_sarif_replacements(text, all_replacements(log))
    edits = [e for f in findings for e in f.fix.edits]
    assert via_sarif == apply_edits(buffer, edits).decode() == text.replace("old_name", "new_name")


def test_deletion_and_insertion_replacements(validator):
    text = "keep\ndrop me\nend\n"
    buffer = text.encode()
    start = buffer.index(b"drop")
    deletion = Finding(code="ROC101", name="demo", path="demo.py", span=Span(start, start + 4), message="m",
                       fix=Fix((Edit(Span(start, start + len(b"drop me\n")), ""),
                                Edit(Span(len(buffer), len(buffer)), "# appended\n")), "drop the line"))
    (deletion,) = _finish([], [deletion], buffer)
    log = json.loads(sarif.render([deletion]))
    assert_valid(validator, log)
    reps = all_replacements(log)
    assert "insertedContent" not in reps[0]  # a pure deletion
    assert reps[0]["deletedRegion"] == {"startLine": 2, "startColumn": 1, "endLine": 3, "endColumn": 1}
    assert reps[1]["deletedRegion"] == {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 1}
    assert apply_sarif_replacements(text, reps) == "keep\nend\n# appended\n"


# Fingerprints ----------------------------------------------------------------------------

def fingerprints_of(log: dict) -> list[tuple[str, int, str]]:
    return [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
             r["partialFingerprints"][SARIF_KEY]) for r in log["runs"][0]["results"]]


def test_fingerprints_survive_line_shifts_and_runs(tmp_path):
    rule, example = hazard()
    name = example_filename(rule, example)
    target = tmp_path / name
    target.write_text(example.code, encoding="utf-8")
    before = fingerprints_of(sarif_of(name, cwd=tmp_path))
    assert before
    assert fingerprints_of(sarif_of(name, cwd=tmp_path)) == before  # stable across runs
    comment = "#" if rule.language == "python" else "//"
    target.write_text(f"{comment} a new first line\n{comment} and another\n" + example.code, encoding="utf-8")
    after = fingerprints_of(sarif_of(name, cwd=tmp_path))
    assert [(c, line + 2, fp) for c, line, fp in before] == after


def test_identical_lines_get_distinct_fingerprints(tmp_path):
    rule, example = hazard()
    name = example_filename(rule, example)
    flagged = {f.line for f in analyse_buffer(name, example.code.encode(), rule.language,
                                               Settings(select=(rule.code,)), (rule(),))}
    lines = example.code.splitlines(keepends=True)
    line = lines[min(flagged) - 1]
    (tmp_path / name).write_text("".join(lines + [line]), encoding="utf-8")
    prints = [fp for code, _, fp in fingerprints_of(sarif_of(name, cwd=tmp_path)) if code == rule.code]
    assert len(prints) >= 2 and len(set(prints)) == len(prints)
    assert prints[0].rsplit(":", 1)[0] == prints[-1].rsplit(":", 1)[0]  # same line hash, new occurrence


# GitHub limits ---------------------------------------------------------------------------

def test_results_truncated_at_github_limit(validator):
    buffer = b"value = call(1)\n"
    base = synthetic(buffer, b"call")
    findings = []
    for i in range(sarif.MAX_RESULTS + 7):
        findings.append(Finding(code=base.code, name=base.name, path=f"pkg/m{i // 1000}.py", span=base.span,
                                message=base.message, fix=base.fix, line=1 + i % 1000, column=base.column,
                                end_line=1 + i % 1000, end_column=base.end_column, source_line=f"value = call({i})",
                                edit_positions=((1 + i % 1000, base.column, 1 + i % 1000, base.end_column),)))
    log = json.loads(sarif.render(findings))
    run = log["runs"][0]
    assert len(run["results"]) == sarif.MAX_RESULTS == 25_000
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning" and "truncated" in note["message"]["text"]
    assert str(sarif.MAX_RESULTS + 7) in note["message"]["text"]
    assert run["invocations"][0]["executionSuccessful"] is True
    # Validating 25,000 results takes half a minute; they all come from one code path and
    # one finding shape, so validate the whole log around a sample and check the shape.
    shapes = {json.dumps(r, sort_keys=True, default=str).count(":") for r in run["results"]}
    assert len(shapes) == 1
    run["results"] = run["results"][:200] + run["results"][-200:]
    assert_valid(validator, log)
    small = json.loads(sarif.render(findings[:3]))
    assert "toolExecutionNotifications" not in small["runs"][0]["invocations"][0]
