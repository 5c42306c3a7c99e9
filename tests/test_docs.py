"""Rule docs: docs/rules.md matches the registry; `rocmlint rule CODE` shows a rule's docs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.docs import help_uri, render_all, render_rule
from rocmlint.registry import all_rules

RULES_MD = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Fix safety", "## References")


def test_rules_md_is_in_sync_with_the_registry():
    expected = render_all(all_rules())
    actual = RULES_MD.read_text(encoding="utf-8") if RULES_MD.is_file() else ""
    if actual != expected:
        import difflib

        diff = list(difflib.unified_diff(actual.splitlines(), expected.splitlines(), "docs/rules.md",
                                         "generated", lineterm="", n=1))
        pytest.fail("docs/rules.md is out of date with the rules in the registry: run "
                    "`python -m rocmlint.docs` and commit the result.\n" + "\n".join(diff[:30]), pytrace=False)


def test_rules_md_has_one_section_per_rule_with_working_anchors():
    text = RULES_MD.read_text(encoding="utf-8")
    for code, rule in all_rules().items():
        assert text.count(f"\n## {code} `{rule.name}`\n") == 1
        anchor = help_uri(rule).split("#", 1)[1]
        assert f"](#{anchor})" in text  # the table of contents and SARIF helpUri use it


@pytest.mark.parametrize("code", ["ROC101", "ROC201"])
def test_rule_command_renders_sections_and_example(code):
    rule = all_rules().get(code)
    if rule is None:
        pytest.skip(f"{code} not registered yet")
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "rule", code.lower()], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"## {code} `{rule.name}`")
    for heading in SECTIONS:
        assert heading in out, f"`rocmlint rule {code}` lacks {heading!r}"
    valid, invalid = rule.examples()
    assert "### Flagged" in out
    assert invalid[0].code.rstrip() in out
    with_fix = [ex for ex in invalid if ex.expected is not None]
    if with_fix:
        assert with_fix[0].expected.rstrip() in out
    assert out.rstrip("\n") == render_rule(rule).rstrip("\n")


def test_unknown_rule_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "rule", "ROC999"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "unknown rule" in proc.stderr and "Traceback" not in proc.stderr
