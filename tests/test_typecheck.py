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


def test_readme_and_ci_type_check_before_the_tests():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setups = re.findall(r"```sh\n(sudo apt-get .*)\n```", readme)
    assert len(setups) == 2  # quick start, tests
    assert setups[1].endswith("&& python -m mypy && python -m pytest -ra")
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert ci.index("python -m mypy") < ci.index("python -m pytest -ra")
