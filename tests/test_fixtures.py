"""Every annotated fixture, strictly: findings, gated negatives, exact fixed output."""
from __future__ import annotations

import pytest

from fixture_harness import (ROOT, analyse_fixture, expected_path, fixed_text, fixture_files,
                             read_annotations)
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.languages import get_language, language_for
from rocmlint.model import Applicability
from rocmlint.runner import fix_buffer
from rocmlint.source import decode_source

FILES = fixture_files()
IDS = [p.relative_to(ROOT / "fixtures").as_posix() for p in FILES]


def test_there_are_fixtures():
    assert len(FILES) >= 2


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_findings_match_annotations(path):
    source, *_rest, findings = analyse_fixture(path)
    comment = "//" if language_for(path) == "cpp" else "#"
    ann = read_annotations(source.buffer.decode("utf-8", errors="replace"), comment)
    fired = {(f.line, f.code) for f in findings}
    missing = sorted(ann.ruleid - fired)
    unexpected = sorted(fired - ann.ruleid - ann.todo)
    promoted = sorted(ann.todo & fired)
    wrongly = sorted(ann.ok & fired)
    assert not missing, f"ruleid annotations that did not fire: {missing}"
    assert not unexpected, f"findings without a ruleid annotation: {unexpected}\n" + "\n".join(
        f"  {f.line}:{f.column} {f.code} {f.message}" for f in findings if (f.line, f.code) in unexpected)
    assert not wrongly, f"fired on ok lines: {wrongly}"
    assert not promoted, f"todoruleid now fires, promote to ruleid: {promoted}"


def _fix_cases():
    cases = []
    for path in FILES:
        for kind, unsafe in ((".fixed", False), (".unsafe-fixed", True)):
            expected = expected_path(path, kind)
            if expected.exists():
                cases.append(pytest.param(path, expected, unsafe, id=f"{path.name}{kind}"))
    return cases


@pytest.mark.parametrize("path,expected,unsafe", _fix_cases())
def test_fixed_output(path, expected, unsafe):
    fixed, remaining = fixed_text(path, unsafe)
    assert fixed.decode("utf-8", "replace") == expected.read_bytes().decode("utf-8", "replace")
    # A second fix is a no-op, and the fixed file re-parses with no new errors.
    source, language, settings, rules, display, _ = analyse_fixture(path)
    again = decode_source(path, fixed, language)
    outcome = fix_buffer(again.buffer, again.newline, display, language, settings, rules, unsafe=unsafe)
    assert outcome.buffer == again.buffer, "second --fix changed the file"
    lang = get_language(language)
    assert lang.syntax_errors(again.buffer, display) <= lang.syntax_errors(source.buffer, display)
    assert lang.nvidia_view(again.buffer, display, settings) == lang.nvidia_view(source.buffer, display, settings)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixable_findings_have_expected_output(path):
    """A fixture whose findings carry safe fixes must say what --fix produces."""
    *_rest, findings = analyse_fixture(path)
    safe = [f for f in findings if f.fix and f.fix.edits and f.fix.applicability is Applicability.SAFE]
    if safe:
        assert expected_path(path, ".fixed").exists(), f"{path.name}: add {expected_path(path, '.fixed').name}"
    unsafe = [f for f in findings if f.fix and f.fix.edits and f.fix.applicability is Applicability.UNSAFE]
    if unsafe:
        assert expected_path(path, ".unsafe-fixed").exists(), \
            f"{path.name}: add {expected_path(path, '.unsafe-fixed').name}"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixed_output_is_clean_of_fixed_rules(path):
    """After --fix, no finding with a safe fix remains (fixpoint reached)."""
    expected = expected_path(path, ".fixed")
    if not expected.exists():
        pytest.skip("no fixed expectation")
    source, language, settings, rules, display, _ = analyse_fixture(path)
    fixed = decode_source(path, expected.read_bytes(), language)
    remaining = analyse_buffer(display, fixed.buffer, language, settings, active_rules(settings, language, path))
    assert not [f for f in remaining if f.fix and f.fix.edits and f.fix.applicability is Applicability.SAFE]
