"""Compiler flags in CMake files, and whether they reach the HIP compile (ROC109).

A light reader (no tree-sitter, never run): commands with their arguments' byte offsets, each
command with the ``if``/``elseif``/``else`` branches around it judged for a ROCm build. A flag
variable reaches HIP when it is a HIP flag variable (``CMAKE_HIP_FLAGS``, FindHIP's
``HIP_HIPCC_FLAGS``), sits in a ``$<$<COMPILE_LANGUAGE:HIP>:...>`` expression, or is copied,
later in the file, into a variable or expression that reaches HIP (``set(CMAKE_HIP_FLAGS
${CMAKE_CUDA_FLAGS})``); CUDA's own flags and ``$<$<COMPILE_LANGUAGE:CUDA>:...>`` also reach it
where the file makes hipcc the CUDA compiler (``set(CMAKE_CUDA_COMPILER .../hipcc)``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from ..lazy_re import lazy_compile

# Branch conditions: what a ROCm build takes (HIP words) and never takes (CUDA words).
_HIP_WORD = lazy_compile(r"(?i)rocm|(?<![a-z])hip(?![a-z])|amdgpu|gfx\d")
_CUDA_WORD = lazy_compile(r"(?i)cuda|nvcc|nvidia|(?<![a-z])cu\d|cutlass")
_HIP_VARIABLE = lazy_compile(r"CMAKE_HIP_FLAGS(?:_[A-Z]+)?|HIP_HIPCC_FLAGS(?:_[A-Z]+)?|HIP_CLANG_FLAGS")
_CUDA_VARIABLE = lazy_compile(r"CMAKE_CUDA_FLAGS(?:_[A-Z]+)?|CUDA_NVCC_FLAGS(?:_[A-Z]+)?")
_LANGUAGE_GENEX = lazy_compile(r"\$<\$<COMPILE_LANGUAGE:(CUDA|HIP)>:(?:SHELL:)?")
_VAR_REF = lazy_compile(r"\$\{(\w+)\}")
_COMMAND = lazy_compile(r"([A-Za-z_]\w*)[ \t]*\(")
_BRACKET_OPEN = lazy_compile(r"\[(=*)\[")
_SET_KEYWORDS = frozenset({"CACHE", "PARENT_SCOPE", "FORCE", "STRING", "INTERNAL", "BOOL", "PATH", "FILEPATH"})


@dataclass
class Argument:
    text: str
    start: int  # offset of text in the file
    quoted: bool


@dataclass
class Command:
    name: str  # lower case
    start: int
    args: list[Argument]
    taken: bool | None = None  # does a ROCm build run it (None: may)


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    language: str | None  # "CUDA"/"HIP" inside a language generator expression


@dataclass
class FlagUse:
    """Words a command puts into a flag ``variable`` (or a target's options: ``variable`` None)."""

    command: Command
    variable: str | None
    words: list[Word] = field(default_factory=list)


def commands(text: str) -> list[Command]:
    """Every command of the file, in order, with its arguments; comments skipped."""
    found: list[Command] = []
    i, size = 0, len(text)
    while i < size:
        c = text[i]
        if c == "#":
            i = _skip_comment(text, i)
            continue
        if c in " \t\r\n":
            i += 1
            continue
        m = _COMMAND.match(text, i)
        if m is None:
            i = text.find("\n", i)
            i = size if i < 0 else i + 1
            continue
        args, i = _arguments(text, m.end())
        found.append(Command(m.group(1).lower(), m.start(), args))
    _judge_branches(found)
    return found


def _skip_comment(text: str, i: int) -> int:
    m = _BRACKET_OPEN.match(text, i + 1)
    if m:
        end = text.find("]" + m.group(1) + "]", m.end())
        return len(text) if end < 0 else end + len(m.group(1)) + 2
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def _arguments(text: str, i: int) -> tuple[list[Argument], int]:
    args: list[Argument] = []
    depth, size = 0, len(text)
    while i < size:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c == "#":
            i = _skip_comment(text, i)
        elif c == ")":
            if depth == 0:
                return args, i + 1
            depth -= 1
            i += 1
        elif c == "(":
            depth += 1
            i += 1
        elif c == '"':
            j = i + 1
            while j < size and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            args.append(Argument(text[i + 1:j], i + 1, True))
            i = j + 1
        elif (m := _BRACKET_OPEN.match(text, i)) is not None:
            end = text.find("]" + m.group(1) + "]", m.end())
            end = size if end < 0 else end
            args.append(Argument(text[m.end():end], m.end(), True))
            i = end + len(m.group(1)) + 2
        else:
            j = i
            genex = 0
            while j < size:
                ch = text[j]
                if ch == "$" and text.startswith("$<", j):
                    genex += 1
                    j += 2
                    continue
                if ch == ">" and genex:
                    genex -= 1
                elif ch == "\\":
                    j += 1
                elif ch == '"':  # quoted text inside an unquoted argument (`-DX="a b"`)
                    k = text.find('"', j + 1)
                    j = size if k < 0 else k
                elif not genex and (ch in " \t\r\n()#"):
                    break
                j += 1
            args.append(Argument(text[i:j], i, False))
            i = j
    return args, size


def condition_on_rocm(words: list[str]) -> bool | None:
    """Whether a ROCm build takes an ``if`` with these arguments: True for HIP words, False
    for CUDA words (a CUDA-only switch or toolkit), None when it cannot tell."""
    words = [w for w in words if w not in ("(", ")")]
    alternatives: list[list[list[str]]] = [[[]]]
    for word in words:
        if word == "OR":
            alternatives.append([[]])
        elif word == "AND":
            alternatives[-1].append([])
        else:
            alternatives[-1][-1].append(word)
    verdicts = []
    for terms in alternatives:
        values = [_term(term) for term in terms]
        verdicts.append(False if False in values else True if values and all(v is True for v in values) else None)
    if True in verdicts:
        return True
    return False if verdicts and all(v is False for v in verdicts) else None


def _term(words: list[str]) -> bool | None:
    negated = False
    while words and words[0] == "NOT":
        negated, words = not negated, words[1:]
    text = " ".join(words)
    hip, cuda = bool(_HIP_WORD.search(text)), bool(_CUDA_WORD.search(text))
    if hip == cuda:
        return None
    return (not hip) if negated else hip


def _judge_branches(found: list[Command]) -> None:
    # Each open `if`: the verdicts of its branches so far, and whether the current one is taken.
    stack: list[tuple[list[bool | None], bool | None]] = []
    for command in found:
        name = command.name
        if name == "if":
            verdict = condition_on_rocm([a.text for a in command.args])
            command.taken = _overall(stack)
            stack.append(([verdict], verdict))
            continue
        if name in ("elseif", "else") and stack:
            earlier, _ = stack.pop()
            if name == "elseif":
                verdict = condition_on_rocm([a.text for a in command.args])
                taken = False if True in earlier else verdict
                earlier = earlier + [verdict]
            else:
                taken = False if True in earlier else True if all(v is False for v in earlier) else None
            command.taken = _overall(stack)
            stack.append((earlier, taken))
            continue
        if name == "endif" and stack:
            stack.pop()
            command.taken = _overall(stack)
            continue
        command.taken = _overall(stack)


def _overall(stack: list[tuple[list[bool | None], bool | None]]) -> bool | None:
    takens = [taken for _, taken in stack]
    if False in takens:
        return False
    return True if takens and all(t is True for t in takens) else None


def _words(argument: Argument) -> Iterator[Word]:
    """The command-line words of one argument (split at blanks and list semicolons), each
    tagged with the language of the generator expression it sits in."""
    text = argument.text
    spans: list[tuple[int, int, str | None]] = []  # (start, end, language) of text pieces
    i = 0
    for m in _LANGUAGE_GENEX.finditer(text):
        if m.start() < i:
            continue
        spans.append((i, m.start(), None))
        j, depth = m.end(), 1
        while j < len(text) and depth:
            if text.startswith("$<", j):
                depth += 1
                j += 2
                continue
            if text[j] == ">":
                depth -= 1
            j += 1
        spans.append((m.end(), j - 1 if depth == 0 else j, m.group(1)))
        i = j
    spans.append((i, len(text), None))
    for start, end, language in spans:
        for w in re.finditer(r"[^\s;]+", text[start:end]):
            word = w.group()
            if word.startswith("$<") or word == ">":
                continue
            yield Word(word, argument.start + start + w.start(), language)


def flag_uses(found: list[Command]) -> list[FlagUse]:
    """Words that commands put into flag variables and target options."""
    uses = []
    for command in found:
        args = command.args
        name = command.name
        variable = None
        values: list[Argument] = []
        if name == "set" and args:
            variable, values = args[0].text, args[1:]
            if any(a.text == "CACHE" and not a.quoted for a in values):
                values = values[:[a.text for a in values].index("CACHE")]
        elif name in ("string", "list") and len(args) > 2 and args[0].text in ("APPEND", "PREPEND"):
            variable, values = args[1].text, args[2:]
        elif name in ("target_compile_options", "add_compile_options"):
            values = args[1:] if name == "target_compile_options" else args
        else:
            continue
        use = FlagUse(command, variable)
        for argument in values:
            if not argument.quoted and argument.text in _SET_KEYWORDS:
                continue
            use.words.extend(_words(argument))
        if variable is None:  # a target's options: only what a language expression picks
            use.words = [w for w in use.words if w.language is not None]
        uses.append(use)
    return uses


def cuda_compiler_is_hip(found: list[Command]) -> bool:
    """The file makes hipcc (or ROCm's clang) the CUDA compiler."""
    return any(c.name == "set" and c.args and c.args[0].text == "CMAKE_CUDA_COMPILER" and c.taken is not False
               and any(re.search(r"hipcc|rocm|amdclang", a.text, re.IGNORECASE) for a in c.args[1:])
               for c in found)


def reaches_hip(variable: str | None, language: str | None, after: int, uses: list[FlagUse],
                cuda_is_hip: bool) -> str | None:
    """How words put into ``variable`` (or a ``language`` expression) at offset ``after`` reach the
    HIP compile; None when they do not in this file."""
    sink = _sink(variable, language, after, uses, cuda_is_hip, 0)
    if sink is None:
        return None
    if variable is None or sink == f"`{variable}`":
        return f"in {sink}"
    return f"in `{variable}`, copied into {sink}"


def _sink(variable: str | None, language: str | None, after: int, uses: list[FlagUse], cuda_is_hip: bool,
          depth: int) -> str | None:
    if language == "HIP":
        return "a HIP generator expression"
    if language == "CUDA":
        return "a CUDA generator expression, and hipcc is the CUDA compiler" if cuda_is_hip else None
    if variable is None or depth > 8:
        return None
    if _HIP_VARIABLE.fullmatch(variable):
        return f"`{variable}`"
    if cuda_is_hip and _CUDA_VARIABLE.fullmatch(variable):
        return f"`{variable}`, and hipcc is the CUDA compiler"
    for use in uses:
        if use.command.start <= after or use.command.taken is False:
            continue
        for argument in use.command.args:
            for ref in _VAR_REF.finditer(argument.text):
                if ref.group(1) != variable:
                    continue
                offset = argument.start + ref.start()
                inner = next((w.language for w in _words(argument) if w.start <= offset < w.start + len(w.text)), None)
                if use.variable is None and inner is None:
                    continue  # a target's options outside a language expression: not read here
                sink = _sink(use.variable if inner is None else None, inner, use.command.start, uses, cuda_is_hip,
                             depth + 1)
                if sink is not None:
                    return sink
    return None
