"""A crash is never hidden: a file rocmlint crashed on is reported as not checked in every
output format, and the run exits 2 whatever --exit-zero says."""
from __future__ import annotations

import json
import os

import pytest
from conftest import crash_rule_on
from test_sarif import assert_valid, validator  # noqa: F401 - the schema validator fixture

from rocmlint.cli import main

HAZARD = "import pynvml\n"  # ROC103: the rule this test makes crash on "boom" files
CRASH = "AttributeError: 'arguments' object has no attribute 'lineno'"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A clean file and a file whose rule crashes (ROC103's check raises on it)."""
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    (tmp_path / "clean.py").write_text("import os\nprint(os.getcwd())\n")
    (tmp_path / "boom.py").write_text(HAZARD)
    crash_rule_on(monkeypatch, "ROC103", "boom", AttributeError("'arguments' object has no attribute 'lineno'"))
    monkeypatch.delenv("ROCMLINT_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", "--no-cache", "-j", "1", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("extra", [[], ["--exit-zero"]])
def test_text_never_says_passed_and_exits_2(project, capsys, extra):
    code, out, err = run(capsys, *extra, ".")
    assert code == 2
    assert "All checks passed" not in out
    assert "boom.py:0:0: ROC003 internal error, file not checked" in out
    assert "1 file not checked (1 internal-error)." in out
    assert f"internal error on boom.py (file not checked; please report): {CRASH}" in err


def test_fix_does_not_claim_success(project, capsys):
    (project / "mon.py").write_text(HAZARD.replace("pynvml", "pynvml as nv"))
    code, out, _err = run(capsys, "--fix", "--exit-zero", ".")
    assert code == 2
    assert "No findings remain" not in out and "All checks passed" not in out
    assert "1 file not checked" in out
    assert (project / "boom.py").read_text() == HAZARD  # untouched: it was never checked


def test_diff_exits_2(project, capsys):
    code, _out, err = run(capsys, "--diff", "--exit-zero", ".")
    assert code == 2 and "1 file not checked (1 internal-error)" in err


def test_json_lists_the_file_as_not_checked(project, capsys):
    code, out, _ = run(capsys, "--output-format", "json", "--exit-zero", ".")
    assert code == 2
    data = json.loads(out)
    assert [(d["code"], d["name"], d["path"], d["severity"]) for d in data] == [
        ("ROC003", "internal-error", "boom.py", "warning")]
    assert CRASH in data[0]["message"] and data[0]["fix"] is None


def test_github_emits_an_error(project, capsys):
    code, out, _ = run(capsys, "--output-format", "github", ".")
    assert code == 2
    assert out.startswith("::error file=boom.py,title=ROC003 (internal-error)::internal error, file not checked")


def test_sarif_says_execution_failed(project, capsys, validator):  # noqa: F811
    code, out, _ = run(capsys, "--output-format", "sarif", "--exit-zero", ".")
    assert code == 2
    log = json.loads(out)
    assert_valid(validator, log)
    run_ = log["runs"][0]
    assert run_["results"] == []  # a crash is not an alert on the user's code
    invocation = run_["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and CRASH in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "boom.py"


def test_sarif_of_a_clean_run_is_successful(project, capsys, validator):  # noqa: F811
    (project / "boom.py").unlink()
    code, out, _ = run(capsys, "--output-format", "sarif", ".")
    log = json.loads(out)
    assert code == 0 and log["runs"][0]["invocations"][0]["executionSuccessful"] is True
    assert "toolExecutionNotifications" not in log["runs"][0]["invocations"][0]


def test_baseline_never_absorbs_a_crash(project, capsys):
    baseline = project / "baseline.json"
    code, _out, err = run(capsys, "--write-baseline", str(baseline), ".")
    assert code == 2 and "1 file not checked" in err
    assert json.loads(baseline.read_text())["findings"] == []
    code, out, _ = run(capsys, "--baseline", str(baseline), "--output-format", "json", ".")
    assert code == 2 and [d["code"] for d in json.loads(out)] == ["ROC003"]


def test_debug_shows_the_traceback(project, capsys, monkeypatch):
    monkeypatch.setenv("ROCMLINT_DEBUG", "1")
    _code, _out, err = run(capsys, ".")
    assert "Traceback (most recent call last)" in err and "in check" in err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks")
def test_crash_in_a_worker_process_is_reported_the_same(project, capsys):
    for index in range(40):  # past the pool threshold: the crash happens in a forked worker
        (project / f"clean{index}.py").write_text("x = 1\n")
    code = main(["check", "--no-cache", "-j", "2", "--output-format", "json", "."])
    out = capsys.readouterr().out
    assert code == 2 and [d["path"] for d in json.loads(out)] == ["boom.py"]




KILLER = """
import os, signal, sys
from rocmlint.cli import main
from rocmlint.registry import all_rules

parent, rule = os.getpid(), all_rules()["ROC103"]
plain = rule.check

def check(self, ctx):
    if "boom" in ctx.path and os.getpid() != parent:  # only ever in a worker process
        os.kill(os.getpid(), signal.SIGKILL)
    return plain(self, ctx)

rule.check = check
sys.exit(main(sys.argv[1:]))
"""


def test_a_worker_that_dies_is_an_internal_error_and_no_file_is_lost(tmp_path):
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    for index in range(60):
        (tmp_path / f"mon{index:02d}.py").write_text(HAZARD)
    (tmp_path / "boom.py").write_text(HAZARD)
    # Before: multiprocessing.Pool waited forever for the dead worker's results.
    done = subprocess.run([sys.executable, "-c", KILLER, "check", "--no-cache", "-j", "2", "--output-format",
                           "json", "."], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    findings = json.loads(done.stdout)
    assert sorted(f["path"] for f in findings if f["code"] == "ROC103") == [f"mon{i:02d}.py" for i in range(60)]
    [crash] = [f for f in findings if f["code"] == "ROC003"]
    assert crash["path"] == "boom.py" and "worker process died (killed by SIGKILL)" in crash["message"]


@pytest.mark.parametrize("source", [
    'ENV_NAMES = {"autotune": "TORCHINDUCTOR_MAX_AUTOTUNE"}\n',  # ROC111: the name as a dict value
    'OPTIONS = {"name": "triton.cudagraphs"}\n',  # ROC104: an option name as a dict value
])
def test_names_as_dict_values_are_not_internal_errors(tmp_path, monkeypatch, capsys, source):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "names.py").write_text(source)
    code, out, err = run(capsys, "names.py")
    assert code == 0 and "ROC003" not in out + err
