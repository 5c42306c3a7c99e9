"""Headers that go with rewrite-only files: a header that only files with a rewrite-not-port
verdict (ROC307) include, directly or through other such headers, is rewritten with them (an AMD
version of a Hopper kernel does not include the CuTe helpers beside it). It gets the same verdict,
naming its includers, so ``check`` counts its line findings instead of listing them and
``rocmlint report`` files it under "rewrite".

Read from what every C-family result already carries (``FileResult.includes``, the names its
``#include`` lines give): no file is read again but the first line of a header that gets the
verdict. An include resolves next to its includer, else to the checked files whose path ends with
its name; an include from a rewrite-only file counts only where it resolves to one file, an
include from any other file wherever it may lead (it keeps the header out of the fold).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .model import Finding, Span
from .registry import REWRITE_CODE

if TYPE_CHECKING:
    from .engine import FileResult

INTERNAL_ERROR = "ROC003"
_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".hip", ".c++")  # translation units, never only included
MOST_NAMED = 3


def _rewrite(result: "FileResult") -> bool:
    return any(f.code == REWRITE_CODE for f in result.findings)


def fold_rewrite_headers(results: list["FileResult"]) -> int:
    """Give each header that only rewrite-only files include a rewrite-not-port finding of its
    own (port mode only, headers with findings only); returns how many got one."""
    rewrite = {i for i, r in enumerate(results) if r.findings and _rewrite(r)}
    if not rewrite:
        return 0
    paths = [os.path.abspath(r.path) for r in results]  # abspath normalises
    # headers that could get the verdict: port-mode findings, not a translation unit
    wanted = {i for i, r in enumerate(results) if i not in rewrite and r.findings
              and not paths[i].lower().endswith(_SOURCES)
              and all(f.mode == "port" for f in r.findings if f.code != INTERNAL_ERROR)
              and any(f.mode == "port" for f in r.findings)}
    if not wanted:
        return 0
    by_name: dict[str, list[int]] = {}
    for i, path in enumerate(paths):
        by_name.setdefault(path.rpartition(os.sep)[2], []).append(i)
    index = {path: i for i, path in enumerate(paths)}
    # who names each file name in an #include (most names lead to no header that matters)
    naming: dict[str, list[tuple[int, str]]] = {}
    for i, result in enumerate(results):
        for name in result.includes or ():  # as written after #include: `/` separates
            naming.setdefault(name.rpartition("/")[2], []).append((i, name))
    includers: dict[int, set[int]] = {}
    folders = [os.path.dirname(path) for path in paths]
    resolved: dict[tuple[str, str, bool], list[int]] = {}  # thousands of includers share a folder and a name
    todo, seen = list(wanted), set(wanted)
    while todo:  # the includers of each wanted header, then of the headers that include it
        target = todo.pop()
        found: set[int] = set()
        for includer, name in naming.get(paths[target].rpartition(os.sep)[2], ()):
            key = (folders[includer], name, includer in rewrite)
            leads = resolved.get(key)
            if leads is None:
                leads = resolved[key] = _resolve(paths, by_name, index, key[0], name, unique=key[2])
            if target in leads:
                found.add(includer)
        includers[target] = found
        for includer in found - rewrite - seen:
            if paths[includer].lower().endswith(_SOURCES):
                continue  # a translation unit is no link: it keeps what it includes out of the fold
            seen.add(includer)
            todo.append(includer)
    # greatest fixpoint: a header stays while every includer is rewrite-only or such a header
    folded = {h for h, found in includers.items() if found}
    changed = True
    while changed:
        changed = False
        for header in sorted(folded):
            if any(i not in rewrite and i not in folded for i in includers[header]):
                folded.discard(header)
                changed = True
    # ... and only where a rewrite-only file leads in (a cycle of headers proves nothing)
    entered = {h for h in folded if includers[h] & rewrite}
    grown = True
    while grown:
        grown = False
        for header in folded - entered:
            if includers[header] & entered:
                entered.add(header)
                grown = True
    given = 0
    for header in sorted(entered & wanted):
        result = results[header]
        named = sorted(results[i].display for i in includers[header])
        result.findings.append(_verdict(result, named))
        given += 1
    return given


def _resolve(paths: list[str], by_name: dict[str, list[int]], index: dict[str, int], folder: str, name: str,
             unique: bool) -> list[int]:
    """The checked files ``#include name`` in a file of ``folder`` may be: next to it, else any
    whose path ends with the name (``unique``: only where exactly one does)."""
    plain = _plain(name)
    local = index.get(folder + os.sep + name if plain else os.path.normpath(os.path.join(folder, name)))
    if local is not None:
        return [local]
    tail = os.sep + (name if plain else os.path.normpath(name))
    matches = [i for i in by_name.get(name.rpartition("/")[2], ()) if paths[i].endswith(tail)]
    return matches if not unique or len(matches) == 1 else []


def _plain(name: str) -> bool:
    """A relative name that joins an absolute folder already normalised (no `.` or `..` part,
    no doubled or trailing separator, POSIX separators): most include names; normpath costs."""
    return os.sep == "/" and not (name.startswith(("/", ".")) or "/." in name or "//" in name or name.endswith("/")
                                  or "\\" in name or not name)


def _verdict(result: "FileResult", includers: list[str]) -> Finding:
    shown = ", ".join(includers[:MOST_NAMED]) + (f" and {len(includers) - MOST_NAMED} more"
                                                 if len(includers) > MOST_NAMED else "")
    first = ""
    try:
        with open(result.path, "rb") as handle:
            first = handle.readline().decode("utf-8", "replace").rstrip("\r\n")
    except OSError:
        pass
    return Finding(REWRITE_CODE, "rewrite-not-port", result.display, Span(0, len(first.encode())),
                   f"rewrite, not port: included only by rewrite-only files ({shown}), whose AMD versions will "
                   "not include it; its line findings are counted, not listed (`--show-all`)",
                   line=1, column=1, end_line=1, end_column=len(first) + 1, source_line=first, mode="port")
