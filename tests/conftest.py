import sys
from pathlib import Path

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
