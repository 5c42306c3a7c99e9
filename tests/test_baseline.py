"""Baselines: --write-baseline records findings, --baseline hides exactly those."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.baseline import filter_baseline, write_baseline
from rocmlint.config import ConfigError
from rocmlint.engine import _finish
from rocmlint.fingerprint import fingerprints
from rocmlint.model import Finding, Span
from rocmlint.registry import all_rules


def findings_for(text: str, needle: str, path: str = "pkg/a.py", code: str = "ROC101") -> list[Finding]:
    buffer = text.encode()
    out, start = [], buffer.find(needle.encode())
    while start != -1:
        out.append(Finding(code=code, name="demo", path=path, span=Span(start, start + len(needle)),
                           message=f"{needle} is bad"))
        start = buffer.find(needle.encode(), start + 1)
    return _finish([], out, buffer)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_written_file_is_sorted_stable_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = findings_for("b = bad()\na = bad()\n", "bad", path="z.py") + findings_for("x = bad\n", "bad", path="a.py")
    target = tmp_path / "baseline.json"
    write_baseline(found, target)
    first = target.read_text()
    write_baseline(list(reversed(found)), target)
    assert target.read_text() == first  # input order does not matter
    data = json.loads(first)
    assert data["version"] == 1
    entries = data["findings"]
    assert [e["path"] for e in entries] == ["a.py", "z.py", "z.py"]
    assert set(entries[0]) == {"code", "path", "fingerprint", "message"}
    assert entries[0]["message"] == "bad is bad"
    assert sorted(fingerprints(found)) == sorted(e["fingerprint"] for e in entries)  # SARIF's recipe


def test_line_shifts_and_reindentation_stay_baselined(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = findings_for("import x\n\nvalue = bad()\n", "bad")
    write_baseline(before, tmp_path / "b.json")
    after = findings_for("import x\nimport y\n\n\nif True:\n    value  =  bad()\n", "bad")
    assert after[0].line == 6
    assert filter_baseline(after, tmp_path / "b.json") == []
    changed = findings_for("import x\nvalue = bad() + 1\n", "bad")  # the flagged line itself changed
    assert filter_baseline(changed, tmp_path / "b.json") == changed


def test_duplicates_are_counted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_baseline(findings_for("v = bad()\nv = bad()\n", "bad"), tmp_path / "b.json")
    three = findings_for("v = bad()\nv = bad()\nother = 1\nv = bad()\n", "bad")
    kept = filter_baseline(three, tmp_path / "b.json")
    assert len(kept) == 1  # two recorded findings absorb two, not three
    assert kept[0].line == 4
    # Another rule or another file with the same line is new too.
    assert len(filter_baseline(findings_for("v = bad()\n", "bad", code="ROC102"), tmp_path / "b.json")) == 1
    assert len(filter_baseline(findings_for("v = bad()\n", "bad", path="pkg/b.py"), tmp_path / "b.json")) == 1


def test_paths_are_relative_to_the_baseline_file(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    write_baseline(findings_for("v = bad()\n", "bad", path="sub/a.py"), tmp_path / "b.json")
    assert json.loads((tmp_path / "b.json").read_text())["findings"][0]["path"] == "sub/a.py"
    monkeypatch.chdir(tmp_path / "sub")  # same file, displayed from another working directory
    assert filter_baseline(findings_for("v = bad()\n", "bad", path="a.py"), tmp_path / "b.json") == []


@pytest.mark.parametrize("content,message", [
    (None, "does not exist"),
    ("{not json", "not valid JSON"),
    ('["a list"]', "malformed"),
    ('{"version": 1, "findings": [{"code": "ROC101"}]}', "entry 0"),
    ('{"version": 99, "findings": []}', "unsupported version"),
])
def test_bad_baseline_files_are_clear_errors(tmp_path, content, message):
    target = tmp_path / "b.json"
    if content is not None:
        target.write_text(content)
    with pytest.raises(ConfigError, match=message):
        filter_baseline([], target)
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = cli("check", "--no-cache", "--baseline", "b.json", "a.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("rocmlint: error:")


def test_cli_round_trip(tmp_path):
    candidates = [(r, ex) for r in all_rules().values() if r.language == "python" for ex in r.examples()[1]]
    if not candidates:
        pytest.skip("no Python rule registered yet")
    rule, example = candidates[0]
    target = tmp_path / "legacy.py"
    target.write_text(example.code, encoding="utf-8")
    assert cli("check", "--no-cache", "legacy.py", cwd=tmp_path).returncode == 1
    proc = cli("check", "--no-cache", "--write-baseline", "rocmlint-baseline.json", "legacy.py", cwd=tmp_path)
    assert proc.returncode == 0 and "wrote" in proc.stderr
    recorded = json.loads((tmp_path / "rocmlint-baseline.json").read_text())["findings"]
    assert rule.code in {e["code"] for e in recorded}
    # Old findings are hidden, also after lines move.
    target.write_text("# header added later\n\n" + example.code, encoding="utf-8")
    proc = cli("check", "--no-cache", "--baseline", "rocmlint-baseline.json", "legacy.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    # A new copy of the hazard in another file is reported.
    (tmp_path / "new.py").write_text(example.code, encoding="utf-8")
    proc = cli("check", "--no-cache", "--output-format", "json", "--baseline", "rocmlint-baseline.json", ".",
               cwd=tmp_path)
    assert proc.returncode == 1
    assert {f["path"] for f in json.loads(proc.stdout)} == {"new.py"}
