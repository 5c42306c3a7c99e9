"""The run-wide passes (generated copies, rewrite-only headers) are memoised for a warm run
whose every result came from the cache: same output as a cold run, and recomputed as soon as a
file they read changes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from rocmlint.engine import FileResult
from rocmlint.run_passes import _stamps_key
from test_project_fixtures import run_cli

UNSEEN = Path(__file__).resolve().parent.parent / "fixtures" / "unseen"


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tessel"
    shutil.copytree(UNSEEN / "tessel", tree)
    (tree / ".git").mkdir()
    return tree


def _check(tree: Path, capsys, monkeypatch, *extra: str) -> list[tuple[str, int, str]]:
    _code, out = run_cli(["check", "--exit-zero", "--output-format", "json", *extra, "."], tree, capsys, monkeypatch)
    return sorted((f["path"].removeprefix("./"), f["line"], f["code"]) for f in json.loads(out))


def _memo(tree: Path) -> dict:
    [memo] = (tree / ".rocmlint_cache").glob("passes-*.json")
    return json.loads(memo.read_text())


def test_a_warm_run_takes_the_passes_from_the_memo_and_matches_a_cold_run(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path)
    cold = _check(tree, capsys, monkeypatch, "--no-cache")
    assert not list(tree.glob(".rocmlint_cache/passes-*.json"))  # --no-cache: no memo either
    assert cold and not [f for f in cold if "tessel_all.h" in f[0]]  # the generated copy's findings are dropped
    assert _check(tree, capsys, monkeypatch) == cold  # fills the cache and the memo
    stored = _memo(tree)
    assert any(path.endswith("tessel_all.h") for path in stored["changed"])  # what the copy keeps
    assert _check(tree, capsys, monkeypatch) == cold  # every result cached: the memo stands in for the passes
    assert _memo(tree) == stored


def test_the_memo_is_not_used_once_a_file_changes(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path)
    _check(tree, capsys, monkeypatch)
    key = _memo(tree)["key"]
    (tree / "src" / "device" / "gpu_device.h").unlink()  # the copy's source is gone: the copy's findings stand
    found = _check(tree, capsys, monkeypatch)
    assert [f for f in found if "tessel_all.h" in f[0]]
    assert _memo(tree)["key"] != key


def test_an_unreadable_memo_runs_the_passes(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path)
    cold = _check(tree, capsys, monkeypatch, "--no-cache")
    _check(tree, capsys, monkeypatch)
    [memo] = (tree / ".rocmlint_cache").glob("passes-*.json")
    memo.write_text(json.dumps({"key": _memo(tree)["key"], "changed": {"no/such/file.h": [{"bad": 1}]}}))
    assert _check(tree, capsys, monkeypatch) == cold
    memo.write_text("{not json")
    assert _check(tree, capsys, monkeypatch) == cold


def test_results_not_all_from_the_cache_have_no_key(tmp_path):
    stamped = FileResult(path=tmp_path / "a.cu", display="a.cu", cache_stamp="h|k")
    assert _stamps_key([stamped]) is not None
    assert _stamps_key([stamped, FileResult(path=tmp_path / "b.cu", display="b.cu")]) is None
    # the order results arrive in (workers finish in any order) does not change the key
    other = FileResult(path=tmp_path / "c.cu", display="c.cu", cache_stamp="h2|k")
    assert _stamps_key([stamped, other]) == _stamps_key([other, stamped])


def test_a_run_with_no_findings_skips_the_passes_and_their_memo(tmp_path):
    from rocmlint.run_passes import join_results

    results = [FileResult(path=tmp_path / "clean.py", display="clean.py", cache_stamp="1:2")]
    join_results(results, tmp_path / ".rocmlint_cache")
    assert results[0].findings == [] and not (tmp_path / ".rocmlint_cache").exists()
