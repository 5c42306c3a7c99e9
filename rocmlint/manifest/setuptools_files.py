"""setup.cfg (configparser) and setup.py (stdlib ast: read, never executed)."""
from __future__ import annotations

import ast
import configparser

from ..model import ParseFailure
from ..python.nodes import walk
from .model import Dependency, Manifest
from .requirement import parse_requirement
from .text import Located, key_position, table_region


def read_cfg(located: Located) -> Manifest:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(located.text)
    except configparser.Error as exc:
        raise ParseFailure(f"invalid setup.cfg: {exc.message if hasattr(exc, 'message') else exc}") from None
    manifest = Manifest([], [])
    if parser.has_option("options", "install_requires"):
        _cfg_list(located, manifest, "options", "install_requires", parser.get("options", "install_requires"),
                  optional=False)
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require", raw=True):
            _cfg_list(located, manifest, "options.extras_require", extra, value, optional=True)
    return manifest


def _cfg_list(located: Located, manifest: Manifest, section: str, key: str, value: str, *, optional: bool) -> None:
    region = table_region(located.text, (section,))  # INI section names are taken whole
    if region is None:
        return
    cursor = key_position(located.text, key, *region, separators="=:")
    if cursor is None:
        return
    for line in value.splitlines():
        line = line.split(" #", 1)[0].strip()
        requirement = parse_requirement(line) if line else None
        found = located.text.find(line, cursor, region[1]) if requirement else -1
        if requirement is None or found < 0:
            continue
        cursor = found + len(line)
        where = f"[{section}] {key}"
        manifest.dependencies.append(Dependency(requirement, located.span(found, cursor), optional, where))


def read_setup_py(located: Located) -> Manifest:
    manifest = Manifest([], [])
    try:
        tree = ast.parse(located.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return manifest  # the Python half reports the syntax error
    lines = [0]
    for line in located.source.splitlines(keepends=True):
        lines.append(lines[-1] + len(line))
    assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    for call in walk(tree):
        if not (isinstance(call, ast.Call) and _name(call.func) == "setup"):
            continue
        for keyword in call.keywords:
            value = keyword.value
            if isinstance(value, ast.Name):
                value = assigned.get(value.id, value)
            if keyword.arg == "install_requires":
                _py_list(manifest, value, lines, optional=False, where="setup(install_requires=...)")
            elif keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                for item in value.values:
                    if isinstance(item, ast.Name):
                        item = assigned.get(item.id, item)
                    _py_list(manifest, item, lines, optional=True, where="setup(extras_require=...)")
    return manifest


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _py_list(manifest: Manifest, node: ast.expr, lines: list[int], *, optional: bool, where: str) -> None:
    from ..model import Span

    if not isinstance(node, (ast.List, ast.Tuple)):
        return
    for item in node.elts:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)) or item.end_lineno is None:
            continue
        requirement = parse_requirement(item.value)
        if requirement is None:
            continue
        start = lines[item.lineno - 1] + item.col_offset
        end = lines[item.end_lineno - 1] + (item.end_col_offset or 0)
        manifest.dependencies.append(Dependency(requirement, Span(start, end), optional, where))
