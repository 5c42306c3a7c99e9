"""flake8 plugin: rocmlint's Python rules under the ``ROC`` prefix.

    flake8 --select ROC src/          # or extend-select = ROC in setup.cfg / .flake8
    flake8 --select ROC,ROC108 src/   # with the opt-in rules named by their code

flake8 hands over the file's lines; rocmlint analyses that text exactly as
``rocmlint check`` would (same prefilter, gates and rules), with the rocmlint
configuration (``[tool.rocmlint]``: select, ignore, per-file-ignores, gate names, ...)
that applies to the file. flake8 handles ``# noqa`` and its own select/ignore/excludes;
fixes are not available through flake8 (use ``rocmlint check --fix``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from . import __version__

_RESOLVER = None


def _resolver():
    global _RESOLVER
    if _RESOLVER is None:
        from .config import ConfigResolver
        from .registry import is_known_prefix

        _RESOLVER = ConfigResolver(is_known_prefix=is_known_prefix)
    return _RESOLVER


class Flake8Plugin:
    name = "rocmlint"
    version = __version__
    # Opt-in rules (ROC108) that flake8's own selection names by their full code.
    opt_in: tuple[str, ...] = ()

    @classmethod
    def parse_options(cls, options) -> None:
        """`flake8 --select ROC,ROC108` (or `--extend-select ROC108`) turns an opt-in rule on,
        as `rocmlint --extend-select ROC108` does; `ROC` alone leaves it off."""
        from .registry import all_rules

        named = [*(getattr(options, "select", None) or ()), *(getattr(options, "extend_select", None) or ())]
        cls.opt_in = tuple(code for code, rule in all_rules().items() if not rule.default_enabled and code in named)

    def __init__(self, tree, filename: str, lines: list[str]) -> None:
        self.tree = tree  # unused: rocmlint parses what its rules need, lazily
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from .engine import active_rules, analyse_buffer

        text = "".join(self.lines)
        if text.startswith("\ufeff"):
            text = text[1:]
        stdin = self.filename in ("-", "stdin", "<stdin>")
        path = Path.cwd() / "stdin.py" if stdin else Path(self.filename)
        settings = _resolver().for_path(path)
        if self.opt_in:
            from dataclasses import replace

            settings = replace(settings, select=settings.select + self.opt_in)
        rules = active_rules(settings, "python", path)
        if not rules:
            return
        buffer = text.encode("utf-8", errors="surrogateescape")
        for finding in analyse_buffer(str(self.filename), buffer, "python", settings, rules,
                                      suppress=False, build_fixes=False):  # flake8 applies # noqa itself
            line = max(finding.line, 1)
            col = max(finding.column - 1, 0)
            yield line, col, f"{finding.code} {finding.message}", type(self)
