"""benchmarks/real_repos.py counts what it claims: crashes, -j disagreements, fix outcomes."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import crash_rule_on

from rocmlint.languages import language_for

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import real_repos  # noqa: E402

HAVE_UNIFDEF = shutil.which("unifdef") is not None


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """The fixtures as a small repository, plus one file ROC103 crashes on in this process."""
    root = tmp_path / "repo"
    for original in sorted((REPO / "fixtures").glob("*/*.*")):
        if ".fixed." not in original.name and ".unsafe-fixed." not in original.name:
            (root / original.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(original, root / original.parent.name / original.name)
    (root / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    (root / "boom.py").write_text("import pynvml\n")
    crash_rule_on(monkeypatch, "ROC103", "boom", KeyError("lane"))  # the in-process -j 1 run only
    monkeypatch.setenv("ROCMLINT_DEBUG", "1")
    return root


def test_measure_counts_crashes_disagreements_and_fixes(tree):
    report = real_repos.measure(tree, fix=HAVE_UNIFDEF)
    # Every file rocmlint reads: code and manifests (pyproject.toml, requirement files, ...).
    assert report.files == sum(1 for p in tree.rglob("*") if p.is_file() and language_for(p) is not None)
    [crash] = report.internal_errors
    assert crash["path"] == "boom.py" and "KeyError: 'lane'" in crash["error"]
    assert crash["where"].endswith("(check)")
    # The default run is a subprocess without the crash: it reports boom.py's ROC103.
    assert report.jobs_disagreements == ["-j 1 only: boom.py:0:0 ROC003", "default only: boom.py:1:1 ROC103"]
    assert report.findings > 10 and report.by_code["ROC003"] == 1
    assert len(report.slowest) == 10 and report.bad
    if HAVE_UNIFDEF:
        assert report.fixed_files >= 5 and not report.fix_internal_errors
        assert report.nvidia_mismatches == [] and report.python_broken == [] and report.second_fix_changes == []
