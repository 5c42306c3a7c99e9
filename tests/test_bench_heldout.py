"""benchmarks/heldout.py: the pinned corpus follows its own split rule; totals and comparisons count right."""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import heldout

CATEGORIES = ("dual", "cuda-only", "python")


def test_corpus_halves_follow_the_rule_written_in_its_header():
    projects = heldout.load_corpus()
    assert {p["category"] for p in projects} == set(CATEGORIES)
    assert len({p["repo"] for p in projects}) == len(projects)
    for project in projects:
        assert re.fullmatch(r"[0-9a-f]{40}", project["commit"]), project["repo"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", project["repo"]), project["repo"]
    for category in CATEGORIES:
        members = sorted((p for p in projects if p["category"] == category),
                         key=lambda p: hashlib.sha256(p["repo"].encode()).hexdigest())
        wanted = ["tune" if i % 2 == 0 else "held" for i in range(len(members))]
        assert [p["half"] for p in members] == wanted, category


def test_python_corpus_halves_follow_the_same_rule_and_name_no_project_of_the_first():
    projects = heldout.load_corpus(heldout.CORPUS.parent / "python_heldout.toml")
    first = {p["repo"] for p in heldout.load_corpus()}
    assert len(projects) >= 8 and {p["category"] for p in projects} == {"python"}
    assert not first & {p["repo"] for p in projects}
    for project in projects:
        assert re.fullmatch(r"[0-9a-f]{40}", project["commit"]), project["repo"]
    members = sorted(projects, key=lambda p: hashlib.sha256(p["repo"].encode()).hexdigest())
    assert [p["half"] for p in members] == ["tune" if i % 2 == 0 else "held" for i in range(len(members))]


def test_selected_keeps_one_half_or_all():
    projects = [{"repo": "a/x", "half": "tune"}, {"repo": "b/y", "half": "held"}]
    assert [p["repo"] for p in heldout.selected(projects, "tune")] == ["a/x"]
    assert [p["repo"] for p in heldout.selected(projects, "held")] == ["b/y"]
    assert len(heldout.selected(projects, "all")) == 2


FINDINGS = [
    {"code": "ROC203", "mode": "guard", "unknown_macros": ["LIB_WARP"]},
    {"code": "ROC203", "mode": "guard"},
    {"code": "ROC301", "mode": "port"},
    {"code": "ROC106"},
]


def test_summarise_counts_rules_port_mode_and_undecided_macros():
    totals = heldout.summarise(FINDINGS)
    assert totals == {"total": 4, "by_rule": {"ROC106": 1, "ROC203": 2, "ROC301": 1}, "port": 1, "uncertain": 1}
    assert heldout.summarise([]) == {"total": 0, "by_rule": {}, "port": 0, "uncertain": 0}


def test_row_names_project_half_totals_and_rules():
    project = {"repo": "owner/lib", "category": "dual", "half": "tune"}
    line = heldout.row(project, heldout.summarise(FINDINGS), 2.5)
    assert line.startswith("owner/lib") and " dual " in line and " tune " in line
    assert "ROC203x2" in line and "ROC301x1" in line and "2.5s" in line


@pytest.fixture
def outputs(tmp_path) -> tuple[Path, Path]:
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    (before / "owner+lib.json").write_text(json.dumps(FINDINGS))
    (after / "owner+lib.json").write_text(json.dumps(FINDINGS[:1]))
    (before / "other+tool.json").write_text("[]")
    return before, after


def test_compare_rows_give_before_and_after_totals_and_flag_missing_output(outputs):
    projects = [{"repo": "owner/lib", "category": "dual", "half": "tune"},
                {"repo": "other/tool", "category": "python", "half": "tune"}]
    lib, tool = heldout.compare_rows(projects, *outputs)
    assert re.search(r"owner/lib\s+dual\s+tune\s+4 -> 1\s+\(uncertain after: 1\)", lib)
    assert tool.startswith("other/tool") and tool.endswith("missing output")


def test_port_corpus_halves_follow_its_one_sort():
    projects = heldout.load_corpus(REPO / "benchmarks" / "port_heldout.toml")
    assert len(projects) >= 8 and {p["category"] for p in projects} == {"cuda-only"}
    assert len({p["repo"] for p in projects}) == len(projects)
    for project in projects:
        assert re.fullmatch(r"[0-9a-f]{40}", project["commit"]), project["repo"]
    ordered = sorted(projects, key=lambda p: hashlib.sha256(p["repo"].encode()).hexdigest())
    assert [p["half"] for p in ordered] == ["tune" if i % 2 == 0 else "held" for i in range(len(ordered))]


def test_summarise_counts_the_line_findings_a_rewrite_verdict_folds():
    findings = [{"code": "ROC307", "path": "a.cu"}, {"code": "ROC301", "path": "a.cu"},
                {"code": "ROC303", "path": "a.cu"}, {"code": "ROC303", "path": "b.cu"}]
    assert heldout.summarise(findings)["folded"] == 2
    assert "folded" not in heldout.summarise(findings[3:])
    assert "folded    2" in heldout.row({"repo": "o/p", "category": "cuda-only", "half": "tune"},
                                       heldout.summarise(findings))
