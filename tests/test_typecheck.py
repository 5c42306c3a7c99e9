"""The type check runs with the tests, and mypy sees fixers/ under its installed name."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIMS = ROOT / "typings" / "rocmlint" / "fixers"


def test_every_fixers_module_has_its_type_checking_shim():
    modules = sorted(p.stem for p in (ROOT / "fixers").glob("*.py"))
    shims = sorted(p.stem for p in SHIMS.glob("*.pyi"))
    assert shims == modules, "add or remove typings/rocmlint/fixers/<module>.pyi with the module"
    for stem in modules:
        target = "fixers" if stem == "__init__" else f"fixers.{stem}"
        assert f"from {target} import *" in (SHIMS / f"{stem}.pyi").read_text(encoding="utf-8").splitlines()


def test_readme_and_ci_type_check_and_check_import_contracts_before_the_tests():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setups = re.findall(r"```sh\n(sudo apt-get .*)\n```", readme)
    assert len(setups) == 2  # quick start, tests
    assert setups[1].endswith("&& python -m mypy && lint-imports && python -m pytest -ra")
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert ci.index("python -m mypy") < ci.index("lint-imports") < ci.index("python -m pytest -ra")


def test_import_contracts_hold_and_would_catch_a_cycle(tmp_path):
    """`lint-imports` passes on the tree, and fails on a copy where a front end imports
    the project model (the contract is live, not a formality)."""
    import shutil
    import subprocess
    import sys

    lint = Path(sys.executable).with_name("lint-imports")
    ok = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout[-2000:]
    copy = tmp_path / "tree"
    for name in ("rocmlint", "checks", "fixers"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    context = copy / "rocmlint" / "cpp" / "context.py"
    context.write_text(context.read_text(encoding="utf-8") + "\nfrom ..project import cpp as _model  # noqa\n",
                       encoding="utf-8")
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(copy)
    broken = subprocess.run([str(lint), "--no-cache"], cwd=copy, capture_output=True, text=True, env=env)
    assert broken.returncode != 0 and "rocmlint.cpp.context" in broken.stdout
