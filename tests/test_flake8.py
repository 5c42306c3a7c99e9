"""The flake8 plugin, through the real flake8 (`python -m flake8 --select ROC`)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.registry import all_rules

FLAKE8_CODE = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")


def python_hazard():
    for rule in all_rules().values():
        if rule.language == "python" and rule.examples()[1]:
            return rule, rule.examples()[1][0]
    pytest.skip("no Python rule registered yet")


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def rocmlint_json(path: str, cwd: Path) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", "--output-format", "json", path],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    return json.loads(proc.stdout)


def reported(proc: subprocess.CompletedProcess) -> list[tuple[str, int, int, str]]:
    out = []
    for line in proc.stdout.splitlines():
        path, row, col, rest = line.split(":", 3)
        out.append((path, int(row), int(col), rest.strip().split(" ", 1)[0]))
    return out


def test_plugin_is_registered_with_a_valid_prefix():
    proc = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=60)
    assert "rocmlint" in proc.stdout
    assert FLAKE8_CODE.match("ROC")
    assert all(FLAKE8_CODE.match(code) for code in all_rules())


def test_flake8_reports_what_rocmlint_reports(tmp_path):
    rule, example = python_hazard()
    (tmp_path / "hazard.py").write_text(example.code, encoding="utf-8")
    proc = flake8("--select", "ROC", "hazard.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    expected = [("hazard.py", f["line"], f["column"], f["code"]) for f in rocmlint_json("hazard.py", tmp_path)]
    assert reported(proc) == expected
    assert rule.code in {code for *_, code in reported(proc)}
    messages = [line.split(":", 3)[3].strip() for line in proc.stdout.splitlines()]
    assert messages == [f"{f['code']} {f['message']}" for f in rocmlint_json("hazard.py", tmp_path)]
    # Only ROC codes with --select ROC; a clean file is clean.
    (tmp_path / "clean.py").write_text("import os\n\nprint(os.getcwd())\n", encoding="utf-8")
    assert flake8("--select", "ROC", "clean.py", cwd=tmp_path).returncode == 0


def test_noqa_is_honoured(tmp_path):
    rule, example = python_hazard()
    first = min(f["line"] for f in rocmlint_json_for(tmp_path, example.code) if f["code"] == rule.code)
    lines = example.code.splitlines()
    lines[first - 1] += f"  # noqa: {rule.code}"
    (tmp_path / "quiet.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = flake8("--select", "ROC", "quiet.py", cwd=tmp_path)
    assert (first, rule.code) not in {(row, code) for _, row, _, code in reported(proc)}
    # flake8 owns noqa handling: --disable-noqa brings the finding back.
    proc = flake8("--select", "ROC", "--disable-noqa", "quiet.py", cwd=tmp_path)
    assert (first, rule.code) in {(row, code) for _, row, _, code in reported(proc)}
    lines[first - 1] = lines[first - 1].replace(f"# noqa: {rule.code}", "# noqa: E501")
    (tmp_path / "loud.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = flake8("--select", "ROC", "loud.py", cwd=tmp_path)
    assert (first, rule.code) in {(row, code) for _, row, _, code in reported(proc)}


def rocmlint_json_for(tmp_path: Path, code: str) -> list[dict]:
    (tmp_path / "probe.py").write_text(code, encoding="utf-8")
    return rocmlint_json("probe.py", tmp_path)


def test_rocmlint_config_applies(tmp_path):
    rule, example = python_hazard()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "hazard.py").write_text(example.code, encoding="utf-8")
    (pkg / "other.py").write_text(example.code, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.rocmlint]\nroot = true\nper-file-ignores = {{"pkg/other.py" = ["{rule.code}"]}}\n', encoding="utf-8")
    codes = {(path, code) for path, _, _, code in reported(flake8("--select", "ROC", "pkg", cwd=tmp_path))}
    assert (str(Path("pkg/hazard.py")), rule.code) in codes
    assert (str(Path("pkg/other.py")), rule.code) not in codes
    (tmp_path / "pyproject.toml").write_text(f'[tool.rocmlint]\nroot = true\nignore = ["{rule.code}"]\n',
                                             encoding="utf-8")
    codes = {code for *_, code in reported(flake8("--select", "ROC", "pkg", cwd=tmp_path))}
    assert rule.code not in codes
