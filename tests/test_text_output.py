"""Human output: grouped by file, source line with a caret, fix markers, summary, statistics, colour."""
from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.engine import _finish
from rocmlint.model import Applicability, Edit, Finding, Fix, Span
from rocmlint.output import text
from rocmlint.registry import all_rules

ANSI = re.compile(r"\x1b\[[0-9;]*m")
HEADER = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>ROC\d+) (?P<marker>\[[*~]\] )?(?P<msg>.*)$")


def make(source: str, needle: str, *, path: str = "a.py", code: str = "ROC101", name: str = "demo-rule",
         applicability: Applicability | None = None, occurrence: int = 0) -> Finding:
    buffer = source.encode()
    start = -1
    for _ in range(occurrence + 1):
        start = buffer.index(needle.encode(), start + 1)
    span = Span(start, start + len(needle.encode()))
    fix = None if applicability is None else Fix((Edit(span, "new"),), "replace it", applicability)
    f = Finding(code=code, name=name, path=path, span=span, message=f"{needle} is bad", fix=fix)
    return _finish([], [f], buffer)[0]


def caret_under(rendered: str, source_line: str) -> str:
    """The characters of ``source_line`` that the caret line under it points at."""
    lines = rendered.splitlines()
    for i, line in enumerate(lines):
        if line.endswith("| " + source_line.replace("\t", "    ")):
            shown = line.split("| ", 1)[1]
            carets = lines[i + 1].split("| ", 1)[1]
            start = len(carets) - len(carets.lstrip(" "))
            return _cells(shown)[start : len(carets)]
    raise AssertionError(f"source line not shown:\n{rendered}")


def _cells(s: str) -> list[str]:
    """Characters laid out by terminal cell (wide characters take two cells)."""
    out = []
    for ch in s:
        out.append(ch)
        if text.display_width(ch) == 2:
            out.append("")
    return out


def pointed(rendered: str, source_line: str) -> str:
    return "".join(caret_under(rendered, source_line))


# Unit level ------------------------------------------------------------------------------

def test_caret_under_the_flagged_columns():
    src = "import torch\nmodel = torch.compile(model, mode=\"reduce-overhead\")\n"
    f = make(src, '"reduce-overhead"')
    out = text.render([f], colour=False)
    assert out.splitlines()[0] == 'a.py:2:35: ROC101 "reduce-overhead" is bad'
    assert pointed(out, src.splitlines()[1]) == '"reduce-overhead"'


def test_caret_with_tabs_and_wide_characters():
    src = 'x = "漢字😀"; y = f(a,\tbad_call(1))\n'
    f = make(src, "bad_call(1)")
    assert f.column == src.index("bad_call") + 1  # columns count characters
    out = text.render([f], colour=False)
    assert pointed(out, src.rstrip("\n")) == "bad_call(1)"


def test_multi_line_span_marks_to_end_of_first_line():
    src = "value = call(a,\n             b)\n"
    f = make(src, "call(a,\n             b)")
    out = text.render([f], colour=False)
    assert pointed(out, "value = call(a,") == "call(a,"


def test_grouped_by_file_in_order():
    a1 = make("one = bad\ntwo = bad\n", "bad", path="a.py")
    a2 = make("one = bad\ntwo = bad\n", "bad", path="a.py", occurrence=1)
    b1 = make("three = bad\n", "bad", path="b/c.py")
    out = text.render([a1, a2, b1], colour=False)
    headers = [m.group("path", "line") for m in map(HEADER.match, out.splitlines()) if m]
    assert headers == [("a.py", "1"), ("a.py", "2"), ("b/c.py", "1")]
    blocks = out.rstrip("\n").split("\n\n")
    assert len(blocks) == 2  # one block per file, separated by a blank line
    assert "b/c.py" not in blocks[0] and "a.py" not in blocks[1]


def test_fix_markers():
    src = "x = bad\n"
    safe = make(src, "bad", applicability=Applicability.SAFE)
    unsafe = make(src, "bad", applicability=Applicability.UNSAFE)
    display = make(src, "bad", applicability=Applicability.DISPLAY_ONLY)
    none = make(src, "bad")
    markers = [HEADER.match(line).group("marker") for line in
               text.render([safe, unsafe, display, none], colour=False, show_source=False).splitlines()]
    assert markers == ["[*] ", "[~] ", None, None]
    with_unsafe = text.render([unsafe], colour=False, unsafe_enabled=True, show_source=False)
    assert HEADER.match(with_unsafe.splitlines()[0]).group("marker") == "[*] "
    assert "= help: replace it" in text.render([safe], colour=False)


def test_summary_counts_per_rule_and_fixable():
    src = "x = bad\n"
    findings = [make(src, "bad", code="ROC101", applicability=Applicability.SAFE),
                make(src, "bad", code="ROC101", applicability=Applicability.SAFE, path="b.py"),
                make(src, "bad", code="ROC205", applicability=Applicability.UNSAFE),
                make(src, "bad", code="ROC302")]
    out = text.summary(findings, fixed=0, unsafe_enabled=False, colour=False)
    assert out.splitlines() == ["Found 4 findings (ROC101 x2, ROC205 x1, ROC302 x1).",
                                "[*] 2 fixable with `--fix`, 1 more with `--unsafe-fixes`."]
    assert text.summary([], fixed=0, unsafe_enabled=False, colour=False) == "All checks passed!\n"
    assert text.summary([], fixed=3, unsafe_enabled=False, colour=False) == "Fixed 3 findings. No findings remain.\n"


def test_statistics_table():
    src = "x = bad\n"
    findings = [make(src, "bad", code="ROC205", name="shuffle", applicability=Applicability.UNSAFE),
                make(src, "bad", code="ROC101", name="compile", applicability=Applicability.SAFE),
                make(src, "bad", code="ROC101", name="compile", path="b.py"),
                make(src, "bad", code="ROC302", name="cutlass")]
    rows = [line.split() for line in text.statistics(findings).splitlines()]
    assert rows == [["Count", "Code", "Fix", "Rule"],
                    ["2", "ROC101", "[*]", "compile"],
                    ["1", "ROC205", "[~]", "shuffle"],
                    ["1", "ROC302", "cutlass"],
                    ["4", "Total"]]
    table = text.statistics(findings).splitlines()
    assert len({line.index("ROC") for line in table[1:-1]}) == 1  # aligned columns
    assert text.statistics([]) == ""


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize("env,tty,expected", [
    ({}, False, False),
    ({}, True, True),
    ({"NO_COLOR": "1"}, True, False),
    ({"FORCE_COLOR": "1"}, False, True),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, True, False),
])
def test_use_colour(monkeypatch, env, tty, expected):
    for key in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert text.use_colour(_Stream(tty)) is expected


def test_colour_codes_only_when_on():
    f = make("x = bad\n", "bad", applicability=Applicability.SAFE)
    assert not ANSI.search(text.render([f], colour=False) + text.summary([f], 0, False, colour=False))
    coloured = text.render([f], colour=True)
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured) == text.render([f], colour=False)


# Through the CLI -------------------------------------------------------------------------

def python_hazard():
    for rule in all_rules().values():
        if rule.language == "python" and rule.fixable():
            for example in rule.examples()[1]:
                if example.expected is not None and not example.unsafe:
                    return rule, example
    pytest.skip("no fixable Python rule registered yet")


def cli_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(extra)
    return env


def run_cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=cli_env(**env))


def run_on_tty(args: list[str], cwd: Path, **env: str) -> str:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "rocmlint", *args], cwd=cwd, stdout=slave, stderr=slave,
                            env=cli_env(**env))
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_cli_text_output(tmp_path):
    rule, example = python_hazard()
    (tmp_path / "b.py").write_text(example.code, encoding="utf-8")
    (tmp_path / "a.py").write_text(example.code, encoding="utf-8")
    proc = run_cli(["check", "--no-cache", "--statistics", "."], tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert not ANSI.search(out)  # not a TTY
    headers = [HEADER.match(line) for line in out.splitlines() if HEADER.match(line)]
    paths = [m.group("path") for m in headers]
    assert paths == sorted(paths) and set(paths) == {"a.py", "b.py"}
    assert any(m.group("code") == rule.code and m.group("marker") == "[*] " for m in headers)
    n = len(headers)
    assert f"Found {n} finding{'s' if n != 1 else ''} (" in out
    count = sum(1 for m in headers if m.group("code") == rule.code)
    assert f"{rule.code} x{count}" in out
    assert re.search(rf"^\s+\d+\s+{rule.code}\s+\[\*\]\s+{rule.name}$", out, re.M)
    assert re.search(r"^\[\*\] \d+ fixable with `--fix`", out, re.M)
    import json

    first = json.loads(run_cli(["check", "--no-cache", "--output-format", "json", "a.py"], tmp_path).stdout)[0]
    source_line = example.code.splitlines()[first["line"] - 1]
    end = first["end_column"] if first["end_line"] == first["line"] else len(source_line) + 1
    assert pointed(out, source_line) == source_line[first["column"] - 1 : end - 1]


def test_cli_colour_follows_tty_and_env(tmp_path):
    rule, example = python_hazard()
    (tmp_path / "a.py").write_text(example.code, encoding="utf-8")
    args = ["check", "--no-cache", "a.py"]
    assert ANSI.search(run_on_tty(args, tmp_path))
    no_color = run_on_tty(args, tmp_path, NO_COLOR="1")
    assert rule.code in no_color and not ANSI.search(no_color)
    forced = run_cli(args, tmp_path, FORCE_COLOR="1").stdout
    assert ANSI.search(forced) and rule.code in ANSI.sub("", forced)
    assert not ANSI.search(run_cli(args, tmp_path, FORCE_COLOR="1", NO_COLOR="1").stdout)
