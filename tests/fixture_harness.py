"""Reads annotated fixtures (semgrep/pylint style) and checks rocmlint against them.

``ruleid: CODE`` on a line (or on a comment line just above it) must fire there;
``ok: CODE`` must not; ``todoruleid: CODE`` is a known gap (fails once it starts firing,
so it gets promoted). ``<stem>.fixed<ext>`` is the whole file after ``--fix``;
``<stem>.unsafe-fixed<ext>`` after ``--fix --unsafe-fixes``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint.config import ConfigResolver
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.languages import language_for
from rocmlint.runner import fix_buffer
from rocmlint.source import read_source

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
_ANNOTATION = re.compile(r"(?:#|//)\s*(ruleid|ok|todoruleid|todook):\s*([A-Z0-9_, ]+)")
_EXPECTED_SUFFIXES = (".fixed", ".unsafe-fixed")


PROJECTS = FIXTURES / "projects"  # multi-file projects: checked whole (tests/test_project_fixtures.py)
UNSEEN = FIXTURES / "unseen"  # projects with exact expected findings (tests/test_unseen_cpp.py)
PORT_PLAN = FIXTURES / "port_plan"  # a CUDA-only project read in port mode (tests/test_port_plan.py)
WITNESS = FIXTURES / "witness"  # programs run with verify --compare and check --witness (tests/test_witness.py)


def fixture_files() -> list[Path]:
    files = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or language_for(path) is None or PROJECTS in path.parents \
                or UNSEEN in path.parents or WITNESS in path.parents \
                or PORT_PLAN in path.parents:
            continue
        if any(path.stem.endswith(s) for s in _EXPECTED_SUFFIXES):
            continue
        files.append(path)
    return files


def expected_path(path: Path, kind: str) -> Path:
    return path.with_name(f"{path.stem}{kind}{path.suffix}")


@dataclass
class Annotations:
    ruleid: set[tuple[int, str]] = field(default_factory=set)
    ok: set[tuple[int, str]] = field(default_factory=set)
    todo: set[tuple[int, str]] = field(default_factory=set)


def python_comment_lines(text: str) -> set[int]:
    """Lines of a Python file that hold only a comment (a line of a string that starts with
    "#", such as a kernel's ``#include``, is not one)."""
    import io
    import tokenize

    lines = set()
    code_lines = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                lines.add(token.start[0])
            elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                code_lines.update(range(token.start[0], token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return {n for n, line in enumerate(text.splitlines(), start=1) if line.strip().startswith("#")}
    return lines - code_lines


def read_annotations(text: str, comment: str = "#") -> Annotations:
    """``comment`` is the line-comment marker: "#" for Python, "//" for C++ (where a line
    starting with "#" is a directive that can carry a trailing annotation). In Python, a
    ``// ruleid:`` comment inside a kernel string annotates its own line."""
    ann = Annotations()
    comment_lines = python_comment_lines(text) if comment == "#" else None
    pending: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        marks = [(kind, code.strip()) for kind, codes in _ANNOTATION.findall(line)
                 for code in codes.split(",") if code.strip()]
        comment_only = bool(marks) and (number in comment_lines if comment_lines is not None
                                         else stripped.startswith(comment))
        if comment_only:
            pending.extend(marks)
            continue
        for kind, code in marks + pending:
            target = {"ruleid": ann.ruleid, "ok": ann.ok, "todoruleid": ann.todo, "todook": ann.ok}[kind]
            target.add((number, code))
        pending = []
    return ann


def analyse_fixture(path: Path):
    language = language_for(path)
    source = read_source(path, language)
    settings = ConfigResolver().for_path(path)
    rules = active_rules(settings, language, path)
    display = path.relative_to(ROOT).as_posix()
    findings = analyse_buffer(display, source.buffer, language, settings, rules)
    return source, language, settings, rules, display, findings


def fixed_text(path: Path, unsafe: bool) -> tuple[bytes, list]:
    source, language, settings, rules, display, _ = analyse_fixture(path)
    outcome = fix_buffer(source.buffer, source.newline, display, language, settings, rules, unsafe=unsafe)
    return source.encode(outcome.buffer), outcome.findings
