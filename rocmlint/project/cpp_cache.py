"""The C++ part's caches between runs (beside the per-file summary cache): the solved model,
and the facts read from the build files.

A pre-commit hook lints the files just edited, so the run users feel most is "one file
changed since the last run". The model's key therefore has two halves: everything but the
C-family files (rocmlint's build, settings, compile database, build files), and the files'
stats. When only the second moved, the stored model still holds if every changed file's
directives are where they were (``CppModel.describes``): the model reads nothing else of a
C-family file. The build facts are keyed by the build files' contents alone, so an edit that
moves an ``#include`` re-solves the model without interpreting CMake again.
"""
from __future__ import annotations

import os
import pickle
from typing import Any, Callable

from . import digest

# Changed files read to tell whether the stored model still holds; past this a rebuild is as cheap.
MAX_REREAD = 256


def model_keys(root: str, stats: dict, build_stats: dict, settings, location: str) -> tuple[str, str]:
    """(key of everything but the C-family files, key of their stats)."""
    from ..cache import build_key

    items = [root, build_key(), settings.fingerprint if settings is not None else "", location]
    if location:
        try:
            st = os.stat(location if not os.path.isdir(location) else os.path.join(location, "compile_commands.json"))
            items.append(f"{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            items.append("missing")
    items.extend(f"{rel}:{m}:{n}" for rel, (m, n) in sorted(build_stats.items()))
    return digest(*items), digest(*(f"{rel}:{m}:{n}" for rel, (m, n) in sorted(stats.items())))


def _cache_file(cache_dir, kind: str, root: str) -> str:
    return os.path.join(str(cache_dir), f"{kind}-{digest(os.path.abspath(str(root)))}.pickle")  # one per project


def _load(path: str) -> Any:
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except Exception:  # noqa: BLE001 - a missing, stale or corrupt cache is rebuilt
        return None


def _save(path: str, value: Any) -> None:
    from ..source import write_replacing

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_replacing(path, lambda fh: pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL), binary=True)
    except OSError:
        pass  # read-only: rebuilt next time


def load_model(cache_dir, root: str, keys: tuple[str, str], stats: dict):
    """The stored model ("none": nothing to model) if it holds for the files as they are now,
    else None. A model kept across edits that left every directive in place is stored again
    under the new stats, so the next run does not read those files again."""
    if cache_dir is None:
        return None
    stored = _load(_cache_file(cache_dir, "cppmodel", root))
    if not (isinstance(stored, tuple) and len(stored) == 4) or stored[0] != keys[0]:
        return None
    _base, files_key, stored_stats, model = stored
    if not _included_files_hold(model, root):
        return None
    if files_key == keys[1]:
        return model
    if model == "none" or not isinstance(stored_stats, dict) or stored_stats.keys() != stats.keys():
        return None  # a file came or went: its includers' reach may move
    changed = [rel for rel, stamp in stats.items() if tuple(stored_stats[rel]) != tuple(stamp)]
    if len(changed) > MAX_REREAD or not all(_still_described(model, root, rel) for rel in changed):
        return None
    save_model(cache_dir, root, keys, stats, model)
    return model


def _included_files_hold(model: Any, root: str) -> bool:
    """The files the model found through #include alone (``CppModel.extra_stats``) are as
    they were: the walk's stats, in the key, do not cover them."""
    for rel, stamp in getattr(model, "extra_stats", {}).items():
        try:
            st = os.stat(os.path.join(root, rel))
        except OSError:
            return False
        if (st.st_mtime_ns, st.st_size) != tuple(stamp):
            return False
    return True


def _still_described(model: Any, root: str, rel: str) -> bool:
    """``model`` (a CppModel: not imported, cpp imports this module) holds for ``rel`` as it is now."""
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return model.describes(rel, data)


def save_model(cache_dir, root: str, keys: tuple[str, str], stats: dict, model: Any) -> None:
    if cache_dir is None:
        return
    if model is not None:
        model._memo, model._facts = {}, {}
    _save(_cache_file(cache_dir, "cppmodel", root), (keys[0], keys[1], stats, model if model is not None else "none"))


def cached_build_facts(cache_dir, root: str, texts: dict[str, str], helpers: dict[str, str], options: dict,
                       read: Callable[[], Any]) -> Any:
    """``read()`` (the facts of the build files), or what it gave for the same build files,
    helpers and options in an earlier run."""
    if cache_dir is None:
        return read()
    from ..cache import build_key

    key = digest(build_key(), repr(sorted(options.items())), repr(sorted(helpers.items())),
                 *(f"{rel}\0{text}" for rel, text in sorted(texts.items())))
    path = _cache_file(cache_dir, "buildfacts", root)
    stored = _load(path)
    if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == key:
        return stored[1]
    facts = read()
    if getattr(facts, "complete", True):  # a reader that failed warns again next run
        _save(path, (key, facts))
    return facts
