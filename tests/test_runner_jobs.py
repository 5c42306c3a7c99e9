"""`-j 1` (and runs too small for a pool) must still check every file."""
from __future__ import annotations

from rocmlint.cli import main
from rocmlint.runner import PARALLEL_THRESHOLD


def test_one_job_checks_every_file(tmp_path, monkeypatch, capsys):
    count = PARALLEL_THRESHOLD + 6
    for i in range(count):
        (tmp_path / f"m{i:03}.py").write_text("import pynvml\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "-j", "1", "--select", "ROC103", "--output-format", "json", "."]) == 1
    import json

    assert len(json.loads(capsys.readouterr().out)) == count
