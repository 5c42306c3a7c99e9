"""Rule registry: finds rule modules, rejects duplicate codes, selects by prefix."""
from __future__ import annotations

import importlib
import pkgutil
import os
import sys
from functools import lru_cache

from .rule import Rule

RULE_PACKAGES = ("rocmlint.checks.python", "rocmlint.checks.cpp", "rocmlint.checks.manifest")
ENTRY_POINT_GROUP = "rocmlint.rules"


class RegistryError(Exception):
    pass


def _rules_in_module(module) -> list[type[Rule]]:
    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule
        and obj.__module__ == module.__name__ and "code" in vars(obj)
    ]


def _register(rules: dict[str, type[Rule]], rule: type[Rule], origin: str) -> None:
    if rule.code in rules and rules[rule.code] is not rule:
        raise RegistryError(f"rule code {rule.code} defined twice ({rules[rule.code].__module__} and {origin})")
    rules[rule.code] = rule


@lru_cache(maxsize=None)
def all_rules() -> dict[str, type[Rule]]:
    """Every known rule by code: built-in packages, then third-party entry points."""
    rules: dict[str, type[Rule]] = {}
    for package_name in RULE_PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package_name}.{info.name}")
            for rule in _rules_in_module(module):
                _register(rules, rule, module.__name__)
    for ep in _plugin_entry_points():
        try:
            loaded = ep.load()
        except Exception as exc:  # a broken plug-in must not take the linter down silently
            raise RegistryError(f"rule pack {ep.name!r} failed to load: {exc}") from exc
        candidates = _rules_in_module(loaded) if not isinstance(loaded, type) else [loaded]
        for rule in candidates:
            _register(rules, rule, f"entry point {ep.name}")
    return dict(sorted(rules.items()))


def _plugin_entry_points() -> list:
    """Entry points of third-party rule packs.

    importlib.metadata costs ~40 ms to import (it pulls in the email package), which a
    pre-commit run on one clean file notices; so first look for the group name in the
    installed distributions' entry_points.txt files, and only then ask importlib.metadata.
    """
    marker = f"[{ENTRY_POINT_GROUP}]"
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as fh:
                        if marker in fh.read():
                            from importlib.metadata import entry_points

                            return list(entry_points(group=ENTRY_POINT_GROUP))
                except OSError:
                    continue
    return []


def is_known_prefix(prefix: str) -> bool:
    return prefix == "ALL" or any(code.startswith(prefix) for code in all_rules()) or _engine_code(prefix)


def _engine_code(prefix: str) -> bool:
    return any(code.startswith(prefix) for code in ENGINE_CODES)


# Engine diagnostics are always on; they are not rules and cannot be fixed.
ENGINE_CODES = {
    "ROC001": ("parse-error", "file could not be parsed"),
    "ROC002": ("unreadable-file", "file could not be read or decoded"),
    "ROC003": ("internal-error", "rocmlint crashed on the file; it was not checked"),
}
INTERNAL_ERROR = "ROC003"  # a bug in rocmlint, never in the file: not baselined, exit 2
REWRITE_CODE = "ROC307"  # a file rewritten for AMD, not ported: its line findings are counted, not listed


def select_rules(select: list[str], ignore: list[str]) -> list[type[Rule]]:
    """Rules whose code starts with a selected prefix and with no ignored prefix (longest wins);
    an opt-in rule only where its full code is selected."""
    chosen = []
    for code, rule in all_rules().items():
        named = [p for p in select if p == code] if not rule.default_enabled else select
        sel = max((len(p) for p in named if p == "ALL" or code.startswith(p)), default=-1)
        ign = max((len(p) for p in ignore if p == "ALL" or code.startswith(p)), default=-1)
        if sel >= 0 and sel > ign:
            chosen.append(rule)
    return chosen
