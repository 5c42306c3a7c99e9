"""Dockerfiles: `RUN pip install ...` commands (dockerfile-parse finds the instructions,
shlex splits the shell words) and the image they start from."""
from __future__ import annotations

import io
import re
import shlex

from ..lazy_re import lazy_compile
from .model import Dependency, Manifest, PackageIndex
from .requirement import PIP_INDEX_OPTIONS, parse_requirement
from .text import Located

_PIP = lazy_compile(r"(?:.*/)?pip(?:3(?:\.\d+)?)?")
_PYTHON = lazy_compile(r"(?:.*/)?python(?:3(?:\.\d+)?)?")
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")"}
# pip install options that take a value (the value is not a requirement).
_VALUE_OPTIONS = PIP_INDEX_OPTIONS | {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target", "--prefix", "--root",
    "--platform", "--python-version", "--implementation", "--abi", "--only-binary", "--no-binary",
    "--trusted-host", "--src", "--upgrade-strategy", "--progress-bar", "--cache-dir", "--timeout", "--retries",
    "--log", "--proxy", "-C", "--config-settings", "--global-option", "--report", "--python", "-p",
}


def _structure(source: bytes) -> list[dict]:
    from dockerfile_parse import DockerfileParser  # type: ignore[import-untyped]

    try:
        return DockerfileParser(fileobj=io.BytesIO(source), env_replace=False).structure
    except Exception:  # noqa: BLE001 - a file it cannot read has no instructions for us
        return []


def read(located: Located) -> Manifest:
    manifest = Manifest([], [])
    line_starts = [0]
    for line in located.text.split("\n"):  # dockerfile-parse numbers lines by "\n" only
        line_starts.append(line_starts[-1] + len(line) + 1)
    for item in _structure(located.source):
        if item["instruction"] != "RUN":
            continue
        start = line_starts[item["startline"]]
        end = line_starts[min(item["endline"] + 1, len(line_starts) - 1)]
        _run(located, manifest, start, located.text[start:end])
    return manifest


def _run(located: Located, manifest: Manifest, offset: int, content: str) -> None:
    body = re.sub(r"^\s*RUN\b", lambda m: " " * len(m.group()), content, flags=re.IGNORECASE)
    for command in pip_installs(body):
        indexes = []
        requirements = []
        words = iter(command)
        for word, position in words:
            if word in _VALUE_OPTIONS:
                value = next(words, None)
                if value is not None and word in PIP_INDEX_OPTIONS:
                    indexes.append(_index(located, offset, value[0], value[1]))
                continue
            option, _, value_text = word.partition("=")
            if option in PIP_INDEX_OPTIONS and value_text:
                indexes.append(_index(located, offset, value_text, position + len(option) + 1))
                continue
            if word.startswith("-") or "$" in word:
                continue
            requirement = parse_requirement(word)
            if requirement is not None:
                requirements.append((requirement, located.span(offset + position, offset + position + len(word))))
        manifest.indexes.extend(indexes)
        options = frozenset(word.partition("=")[0] for word, _ in command if word.startswith("-"))
        for requirement, span in requirements:
            manifest.dependencies.append(Dependency(requirement, span, False, "RUN pip install",
                                                    pip_options=options))


def _index(located: Located, offset: int, url: str, position: int) -> PackageIndex:
    return PackageIndex(url, located.span(offset + position, offset + position + len(url)), False, "RUN pip install")


def pip_installs(body: str) -> list[list[tuple[str, int]]]:
    """The argument words (with their offsets in ``body``) of each `pip install` command."""
    words = _words(body)
    commands: list[list[tuple[str, int]]] = [[]]
    for word in words:
        if word[0] in _SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(word)
    found = []
    for command in commands:
        names = [w for w, _ in command]
        for i, name in enumerate(names):
            if _PIP.fullmatch(name) or (name == "uv" and names[i + 1:i + 2] == ["pip"]):
                j = i + 1 if name != "uv" else i + 2
            elif _PYTHON.fullmatch(name) and names[i + 1:i + 3] == ["-m", "pip"]:
                j = i + 3
            else:
                continue
            if names[j:j + 1] == ["install"]:
                found.append(command[j + 1:])
            break
    return found


def _words(body: str) -> list[tuple[str, int]]:
    """Shell words and their offsets (a word is found where its unquoted text starts)."""
    lexer = shlex.shlex(body.replace("\\\n", "  "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words = []
    cursor = 0
    try:
        for word in lexer:
            position = body.find(word, cursor)
            if position < 0:
                position = cursor
            else:
                cursor = position + len(word)
            words.append((word, position))
    except ValueError:  # an unterminated quote: keep what was read
        pass
    return words
