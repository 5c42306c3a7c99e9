"""Each rule's valid/invalid examples are its documentation and its tests."""
from __future__ import annotations

import pytest

from rocmlint.config import Settings
from rocmlint.engine import analyse_buffer
from rocmlint.languages import language_for
from rocmlint.registry import all_rules
from rocmlint.runner import fix_buffer

RULES = list(all_rules().values())
REQUIRED_SECTIONS = ("what it does", "why is this bad?", "example", "fix safety", "references")


def _filename(rule, example) -> str:
    return example.filename or ("example.py" if rule.language == "python" else "example.cu")


def _language(rule, display: str) -> str:
    """The half that reads the example's file (a rule may read several: ROC111)."""
    return language_for(display) or rule.language


def _run(rule, example):
    settings = Settings(select=(rule.code,))
    display = _filename(rule, example)
    findings = analyse_buffer(display, example.code.encode(), _language(rule, display), settings, (rule(),))
    return findings, settings, display


def _cases(kind):
    out = []
    for rule in RULES:
        valid, invalid = rule.examples()
        for i, ex in enumerate(valid if kind == "valid" else invalid):
            out.append(pytest.param(rule, ex, id=f"{rule.code}-{kind}-{i}"))
    return out


def test_catalogue_is_complete():
    codes = set(all_rules())
    python = {f"ROC10{i}" for i in range(1, 10)}
    assert python <= codes, sorted(python - codes)


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_is_documented(rule):
    sections = rule.doc_sections()
    for name in REQUIRED_SECTIONS:
        assert sections.get(name), f"{rule.code} docstring lacks '## {name}'"
    assert "http" in sections["references"], f"{rule.code} cites no evidence"
    valid, invalid = rule.examples()
    assert valid and invalid, f"{rule.code} needs valid and invalid examples"
    assert rule.pattern, f"{rule.code} has no prefilter pattern"
    if rule.fixable():
        assert any(ex.expected is not None for ex in invalid), f"{rule.code} fixes but shows no fixed example"


@pytest.mark.parametrize("rule,example", _cases("valid"))
def test_valid_example_is_quiet(rule, example):
    findings, *_ = _run(rule, example)
    assert [f for f in findings if f.code == rule.code] == []


@pytest.mark.parametrize("rule,example", _cases("invalid"))
def test_invalid_example_fires(rule, example):
    findings, settings, display = _run(rule, example)
    assert [f for f in findings if f.code == rule.code], "expected a finding"
    if example.expected is not None:
        outcome = fix_buffer(example.code.encode(), "\n", display, _language(rule, display), settings, (rule(),),
                             unsafe=example.unsafe)
        assert outcome.buffer.decode() == example.expected


@pytest.mark.parametrize("rule,example", _cases("valid") + _cases("invalid"))
def test_python_examples_parse(rule, example):
    """An example that does not parse shows nothing (a syntax error is quiet for every rule)."""
    findings, *_ = _run(rule, example)
    assert not [f for f in findings if f.code == "ROC001"], example.code
