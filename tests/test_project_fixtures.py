"""Multi-file fixture projects (fixtures/projects/<name>/): each is copied out of this
repository (its own project root), linted whole with zero configuration, and every finding
must match the inline annotations of its files (``ruleid``/``ok``/``todoruleid``, as in
fixtures/; C++, Python and manifests). ``explain.txt`` beside them holds ``PATH:LINE`` and the expected
``rocmlint explain`` output: the build-file evidence behind a decision."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fixture_harness import PROJECTS, read_annotations
from rocmlint.cli import main
from rocmlint.languages import language_for
from rocmlint.project import activate

NAMES = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())
# Known gaps (strict: they fail once fixed, so the mark goes with the fix)
GAPS: dict[str, str] = {}
ANNOTATED = [pytest.param(n, marks=pytest.mark.xfail(reason=GAPS[n], strict=True)) if n in GAPS else n
             for n in NAMES]


def run_cli(args: list[str], cwd: Path, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    try:
        code = main(args)
    finally:
        activate(None)
    return code, capsys.readouterr().out


def lint(tree: Path, capsys, monkeypatch, cwd: Path | None = None) -> list[dict]:
    _code, out = run_cli(["check", "--no-cache", "--exit-zero", "--output-format", "json", "."], cwd or tree,
                         capsys, monkeypatch)
    return json.loads(out)


def copy_project(name: str, into: Path) -> Path:
    tree = into / name
    shutil.copytree(PROJECTS / name, tree, ignore=shutil.ignore_patterns("explain*.txt"))
    return tree


def expected(tree: Path) -> tuple[set, set, set]:
    must, must_not, todo = set(), set(), set()
    for path in sorted(tree.rglob("*")):
        language = language_for(path) if path.is_file() else None
        if language is None:
            continue
        rel = path.relative_to(tree).as_posix()
        ann = read_annotations(path.read_text(encoding="utf-8"), "//" if language == "cpp" else "#")
        must |= {(rel, line, code) for line, code in ann.ruleid}
        must_not |= {(rel, line, code) for line, code in ann.ok}
        todo |= {(rel, line, code) for line, code in ann.todo}
    return must, must_not, todo


def test_there_are_fixture_projects_with_findings_and_silences():
    assert len(NAMES) >= 6
    for name in NAMES:
        must, must_not, _ = expected(PROJECTS / name)
        assert must and must_not, f"{name}: needs findings expected and silences expected"
        assert list((PROJECTS / name).glob("explain*.txt")), f"{name}: needs an explain snapshot"


@pytest.mark.parametrize("name", ANNOTATED)
def test_project_findings_match_annotations(name, tmp_path, capsys, monkeypatch):
    tree = copy_project(name, tmp_path)
    found = {(f["path"].removeprefix("./"), f["line"], f["code"]) for f in lint(tree, capsys, monkeypatch)}
    must, must_not, todo = expected(tree)
    assert not must - found, f"ruleid annotations that did not fire: {sorted(must - found)}"
    assert not found - must - todo, f"findings without a ruleid annotation: {sorted(found - must - todo)}"
    assert not must_not & found
    assert not todo & found, f"todoruleid now fires, promote it: {sorted(todo & found)}"


@pytest.mark.parametrize("name", ANNOTATED)
def test_project_explain_snapshot(name, tmp_path, capsys, monkeypatch):
    tree = copy_project(name, tmp_path)
    for snapshot in sorted((PROJECTS / name).glob("explain*.txt")):
        location, _, want = snapshot.read_text(encoding="utf-8").partition("\n")
        code, out = run_cli(["explain", "--no-cache", location], tree, capsys, monkeypatch)
        assert code == 0
        got = out.replace(str(tree), "<root>")
        assert got == want, f"{snapshot.name} differs:\n{got}"


@pytest.mark.parametrize("name", NAMES)
def test_same_findings_from_the_project_root_and_from_its_parent(name, tmp_path, capsys, monkeypatch):
    tree = copy_project(name, tmp_path / "work")
    sibling = copy_project("cmake_backend" if name != "cmake_backend" else "meson_option", tmp_path / "work")
    from_root = {(f["path"], f["line"], f["code"]) for f in lint(tree, capsys, monkeypatch)}
    from_parent = {(f["path"].removeprefix("./"), f["line"], f["code"])
                   for f in lint(tree.parent, capsys, monkeypatch)}
    mine = {(p.removeprefix(f"{name}/"), line, code) for p, line, code in from_parent if p.startswith(f"{name}/")}
    assert mine == {(p.removeprefix("./"), line, code) for p, line, code in from_root}
    assert any(p.startswith(f"{sibling.name}/") for p, _, _ in from_parent)  # the sibling is linted, apart


def test_a_tree_holding_two_copies_of_a_project_gives_twice_the_findings(tmp_path, capsys, monkeypatch):
    one = lint(copy_project("vendored_copy", tmp_path / "single"), capsys, monkeypatch)
    both = tmp_path / "both"
    copy_project("vendored_copy", both / "a")
    copy_project("vendored_copy", both / "b")
    twice = lint(both, capsys, monkeypatch)
    assert one and len(twice) == 2 * len(one)


def _comparable(finding: dict) -> tuple:
    """A finding as a single-file run and a whole-tree run must both give it (path, place,
    message, evidence and fix edits; the path without a leading ``./``)."""
    shown = dict(finding, path=finding["path"].removeprefix("./"))
    return tuple(sorted((key, json.dumps(value, sort_keys=True)) for key, value in shown.items()))


@pytest.mark.parametrize("name", NAMES)
def test_a_file_checked_alone_gets_its_findings_of_the_whole_tree_run(name, tmp_path, capsys, monkeypatch):
    """A pre-commit run names a few files: their findings must not depend on it, whatever
    part of the project model such a run builds (build files, gates in other headers)."""
    tree = copy_project(name, tmp_path)
    whole = lint(tree, capsys, monkeypatch)
    checked = [p.relative_to(tree).as_posix() for p in sorted(tree.rglob("*"))
               if p.is_file() and language_for(p, sniff=True) is not None]
    assert any(f["path"].removeprefix("./") in checked for f in whole)
    for rel in checked:
        _code, out = run_cli(["check", "--no-cache", "--exit-zero", "--output-format", "json", rel], tree,
                             capsys, monkeypatch)
        alone = sorted(map(_comparable, json.loads(out)))
        assert alone == sorted(_comparable(f) for f in whole if f["path"].removeprefix("./") == rel), rel
