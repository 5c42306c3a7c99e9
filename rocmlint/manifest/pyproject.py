"""pyproject.toml: PEP 621 `[project]`, `[dependency-groups]`, Poetry and uv tables.

Parsed by tomllib (tomli before 3.11); each parsed string is then found in the text, in
order, inside its own table and key, for its span.
"""
from __future__ import annotations

import re
import sys
from typing import Any

from ..model import ParseFailure
from .model import Dependency, Manifest, PackageIndex
from .requirement import marker_reaches_rocm, parse_requirement, poetry_requirement
from .text import Located, dotted, key_position, table_region

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def read(located: Located) -> Manifest:
    try:
        data = tomllib.loads(located.text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise ParseFailure(f"invalid TOML: {exc}") from None
    manifest = Manifest([], [])
    project = _table(data, "project")
    _strings(located, manifest, ("project",), "dependencies", project.get("dependencies"),
             optional=False, where="[project] dependencies")
    for extra, items in _table(project, "optional-dependencies").items():
        _strings(located, manifest, ("project", "optional-dependencies"), extra, items, optional=True,
                 where=f"[project.optional-dependencies] {extra}")
    for group, items in _table(data, "dependency-groups").items():
        _strings(located, manifest, ("dependency-groups",), group, items, optional=True,
                 where=f"[dependency-groups] {group}")
    _poetry(located, manifest, _table(_table(data, "tool"), "poetry"))
    _uv(located, manifest, _table(_table(data, "tool"), "uv"), _required_names(manifest))
    return manifest


def _table(data: Any, key: str) -> dict:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _start_of(located: Located, table: tuple[str, ...], key: str) -> tuple[int, int]:
    """Where to look for the values of ``table.key``: after ``key =`` in the table's own
    header, else after a dotted ``last.key =`` in the parent table, else the whole file."""
    text = located.text
    region = table_region(text, table)
    if region is not None:
        position = key_position(text, key, *region)
        if position is not None:
            return position, region[1]
    for cut in range(len(table) - 1, 0, -1):
        parent = table_region(text, table[:cut])
        if parent is not None:
            position = _dotted_key(text, table[cut:] + (key,), *parent)
            if position is not None:
                return position, parent[1]
    return 0, len(text)


def _dotted_key(text: str, names: tuple[str, ...], start: int, end: int) -> int | None:
    m = re.compile(rf"^[ \t]*{dotted(names)}[ \t]*=", re.MULTILINE).search(text, start, end)
    return m.end() if m else None


def _strings(located: Located, manifest: Manifest, table: tuple[str, ...], key: str, items: Any, *,
             optional: bool, where: str) -> None:
    if not isinstance(items, list):
        return
    cursor, end = _start_of(located, table, key)
    for item in items:
        if not isinstance(item, str):
            continue
        requirement = parse_requirement(item)
        found = located.find_quoted(item, cursor, end)
        if found is None:
            found = located.find_quoted(item, 0)
        if requirement is None or found is None:
            continue
        cursor = found + len(item)
        manifest.dependencies.append(Dependency(requirement, located.span(found, cursor), optional, where))


def _poetry(located: Located, manifest: Manifest, poetry: dict) -> None:
    if not poetry:
        return
    tables: list[tuple[tuple[str, ...], dict, bool]] = [
        (("tool", "poetry", "dependencies"), _table(poetry, "dependencies"), False),
        (("tool", "poetry", "dev-dependencies"), _table(poetry, "dev-dependencies"), True),
    ]
    for group, body in _table(poetry, "group").items():
        tables.append((("tool", "poetry", "group", group, "dependencies"), _table(body, "dependencies"), True))
    used: set[str] = set()  # sources a required dependency installs from (`source = "pytorch"`)
    for names, table, optional in tables:
        region = table_region(located.text, names) or (0, len(located.text))
        for name, spec in table.items():
            if name.lower() == "python":
                continue
            for one in spec if isinstance(spec, list) else [spec]:
                requirement, is_optional = poetry_requirement(name, one)
                if (isinstance(one, dict) and isinstance(one.get("source"), str) and not (optional or is_optional)
                        and marker_reaches_rocm(one.get("markers") if isinstance(one.get("markers"), str) else None)):
                    used.add(one["source"])
                position = key_position(located.text, name, *region)
                if requirement is None or position is None:
                    continue
                line_end = located.text.find("\n", position)
                line_end = len(located.text) if line_end < 0 else line_end
                start = located.text.rfind("\n", 0, position) + 1
                start += len(located.text[start:line_end]) - len(located.text[start:line_end].lstrip())
                manifest.dependencies.append(Dependency(
                    requirement, located.span(start, len(located.text[:line_end].rstrip())),
                    optional or is_optional, "[" + ".".join(names) + "]"))
    # An explicit (or supplemental) source serves only the packages that name it: required when
    # a required dependency does, like a uv index named in `tool.uv.sources`.
    for source in poetry.get("source", []) if isinstance(poetry.get("source"), list) else []:
        if isinstance(source, dict):
            _index(located, manifest, source, ("tool", "poetry", "source"),
                   explicit=str(source.get("priority", "")).lower() in ("explicit", "supplemental")
                   and source.get("name") not in used)


def _required_names(manifest: Manifest) -> set[str]:
    from packaging.utils import canonicalize_name

    return {canonicalize_name(d.requirement.name) for d in manifest.dependencies if not d.optional}


def _uv(located: Located, manifest: Manifest, uv: dict, required_packages: set[str]) -> None:
    # An explicit index serves the packages whose `tool.uv.sources` entry names it: a required
    # dependency (not only an extra's) installed from it on a platform ROCm runs on, whatever
    # extra is chosen, makes it required.
    from packaging.utils import canonicalize_name

    required = set()
    for package, entries in _table(uv, "sources").items():
        if canonicalize_name(package) not in required_packages:
            continue
        for entry in entries if isinstance(entries, list) else [entries]:
            if not (isinstance(entry, dict) and not entry.keys() & {"extra", "group"}
                    and marker_reaches_rocm(entry.get("marker") if isinstance(entry.get("marker"), str) else None)):
                continue
            if isinstance(entry.get("index"), str):
                required.add(entry["index"])
            elif isinstance(entry.get("url"), str):
                _url_source(located, manifest, package, entry["url"])
    for index in uv.get("index", []) if isinstance(uv.get("index"), list) else []:
        if isinstance(index, dict):
            explicit = bool(index.get("explicit")) and index.get("name") not in required
            _index(located, manifest, index, ("tool", "uv", "index"), explicit=explicit)
    for key in ("index-url", "extra-index-url"):
        urls = uv.get(key)
        for url in [urls] if isinstance(urls, str) else urls if isinstance(urls, list) else []:
            found = located.find_quoted(url, 0) if isinstance(url, str) else None
            if found is not None:
                manifest.indexes.append(PackageIndex(url, located.span(found, found + len(url)), False,
                                                     f"[tool.uv] {key}"))


def _url_source(located: Located, manifest: Manifest, package: str, url: str) -> None:
    """`torch = { url = "https://.../cu121/torch-2.5.1%2Bcu121-...whl" }`: the package comes from
    that file whatever the dependency says (the span is the URL)."""
    requirement = parse_requirement(f"{package} @ {url}")
    found = located.find_quoted(url, 0)
    if requirement is not None and found is not None:
        manifest.dependencies.append(Dependency(requirement, located.span(found, found + len(url)), False,
                                                "[tool.uv.sources]"))


def _index(located: Located, manifest: Manifest, entry: Any, names: tuple[str, ...], explicit: bool) -> None:
    """An index table. Explicit ones serve only the packages that name them: optional."""
    url = entry.get("url") if isinstance(entry, dict) else None
    if not isinstance(url, str):
        return
    found = located.find_quoted(url, 0)
    if found is None:
        return
    manifest.indexes.append(PackageIndex(url, located.span(found, found + len(url)), explicit,
                                         "[[" + ".".join(names) + "]]"))
