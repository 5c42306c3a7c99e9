"""Include paths and defines for user files: from compile_commands.json or -I/-D.

Only ``-I``, ``-D``, ``-U``, ``-std=``, ``-isystem`` and ``-include`` are kept from a
compile command; the command itself is split with shlex and never executed.
"""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

_OPTIONS_WITH_VALUE = ("-isystem", "-include", "-I", "-D", "-U")
_DIRECTORY_OPTIONS = ("-isystem", "-I")


class CompileCommandsError(Exception):
    pass


def kept_flags(arguments: list[str], directory: str) -> list[str]:
    """The flags rocmlint keeps from one compile command, paths made absolute."""
    flags: list[str] = []
    tokens = iter(arguments[1:])  # arguments[0] is the compiler
    for token in tokens:
        if token.startswith("-std="):
            flags.append(token)
            continue
        for option in _OPTIONS_WITH_VALUE:
            if token == option:
                value = next(tokens, None)
            elif token.startswith(option):
                value = token[len(option):]
            else:
                continue
            if value:
                flags += [option, _absolute(option, value, directory)]
            break
    return flags


def _absolute(option: str, value: str, directory: str) -> str:
    """Directories relative to the entry's folder; -include files only when they exist
    there (``-include cuda_runtime.h`` is found through the include path)."""
    joined = os.path.normpath(os.path.join(directory, value))
    if option in _DIRECTORY_OPTIONS or (option == "-include" and os.path.exists(joined)):
        return joined
    return value


def load_database(location: Path) -> list[dict]:
    path = location / "compile_commands.json" if location.is_dir() else location
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompileCommandsError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise CompileCommandsError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(entries, list):
        raise CompileCommandsError(f"{path}: expected a list of compile commands")
    return [entry for entry in entries if isinstance(entry, dict)]


def _arguments(entry: dict) -> list[str]:
    if isinstance(entry.get("arguments"), list):
        return [str(argument) for argument in entry["arguments"]]
    try:
        return shlex.split(str(entry.get("command", "")))
    except ValueError:  # unbalanced quotes: nothing trustworthy to keep
        return []


def flags_for(source: Path, entries: list[dict]) -> list[str] | None:
    """Kept flags of the entry compiling ``source``; else of one in the same folder
    (headers have no entry of their own); None when neither exists."""
    wanted = source.resolve()
    same_folder: list[str] | None = None
    for entry in entries:
        directory = str(entry.get("directory", "."))
        file = Path(directory, str(entry.get("file", ""))).resolve()
        if file == wanted:
            return kept_flags(_arguments(entry), directory)
        if same_folder is None and file.parent == wanted.parent:
            same_folder = kept_flags(_arguments(entry), directory)
    return same_folder


def amd_view_flags(rocm_macros: tuple[str, ...], nvidia_macros: tuple[str, ...]) -> list[str]:
    """Define the project's ROCm macros (USE_ROCM, config rocm-macros) and undefine its
    NVIDIA ones, as rocmlint's gating assumes; the compiler owns the ``__``-reserved names."""
    flags = [f"-D{name}" for name in dict.fromkeys(rocm_macros) if not name.startswith("__")]
    return flags + [f"-U{name}" for name in dict.fromkeys(nvidia_macros) if not name.startswith("__")]


def cli_flags(includes: list[str] | None, defines: list[str] | None) -> list[str]:
    flags: list[str] = []
    for include in includes or []:
        flags += ["-I", os.path.abspath(include)]
    for define in defines or []:
        flags += ["-D", define]
    return flags
