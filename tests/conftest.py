import sys
from pathlib import Path

import pytest

# Test helpers (fixture_harness) import as plain modules.
sys.path.insert(0, str(Path(__file__).resolve().parent))


def crash_rule_on(monkeypatch, code: str, marker: str, error: Exception) -> None:
    """Make rule ``code`` raise ``error`` on files whose path holds ``marker`` (in this process)."""
    from rocmlint.registry import all_rules

    rule = all_rules()[code]
    original = rule.check

    def check(self, ctx):
        if marker in ctx.path:
            raise error
        return original(self, ctx)

    monkeypatch.setattr(rule, "check", check)


@pytest.fixture(autouse=True)
def _no_project_left_active():
    """A CLI run leaves its project model active (the process ends there); a later test that
    lints a lone buffer must not read it against another test's tree, whatever the order."""
    yield
    from rocmlint.project import activate

    activate(None)
