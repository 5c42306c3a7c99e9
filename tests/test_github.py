"""GitHub Actions annotations (`--output-format github`)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from rocmlint.engine import _finish
from rocmlint.model import Applicability, Edit, Finding, Fix, Severity, Span
from rocmlint.output import github
from rocmlint.registry import all_rules

# The grammar of a workflow command: ::kind key=value,key=value::message (one line).
COMMAND = re.compile(r"^::(warning|error|notice) ((?:[a-zA-Z]+=[^,:\r\n]*)(?:,[a-zA-Z]+=[^,:\r\n]*)*)::([^\r\n]*)$")


def unescape_property(text: str) -> str:
    return (text.replace("%2C", ",").replace("%3A", ":").replace("%0A", "\n").replace("%0D", "\r")
            .replace("%25", "%"))


def parse(line: str) -> tuple[str, dict[str, str], str]:
    m = COMMAND.match(line)
    assert m, f"not a workflow command: {line!r}"
    props = dict(item.split("=", 1) for item in m.group(2).split(","))
    return m.group(1), {k: unescape_property(v) for k, v in props.items()}, m.group(3)


def finding(text: str, needle: str, **kw) -> Finding:
    buffer = text.encode()
    start = buffer.index(needle.encode())
    f = Finding(code=kw.pop("code", "ROC201"), name=kw.pop("name", "ballot-mask-truncated"),
                path=kw.pop("path", "src/k.cu"), span=Span(start, start + len(needle.encode())),
                message=kw.pop("message", "ballot mask stored in 32 bits"), **kw)
    return _finish([], [f], buffer)[0]


def test_warning_with_position_and_title():
    f = finding("int a;\n  unsigned m = __ballot(x);\n", "__ballot(x)")
    (line,) = github.render([f]).splitlines()
    assert line == ("::warning file=src/k.cu,line=2,col=16,endLine=2,endColumn=27,"
                    "title=ROC201 (ballot-mask-truncated)::ballot mask stored in 32 bits")


def test_escaping_of_properties_and_message():
    f = finding("x = 1\n", "1", path="dir,with:odd%chars/a b.py", code="ROC101", name="demo",
                message="100% wrong:\r\nsecond line, with comma")
    kind, props, message = parse(github.render([f]).rstrip("\n"))
    assert kind == "warning"
    assert props["file"] == "dir,with:odd%chars/a b.py"
    assert "file=dir%2Cwith%3Aodd%25chars/a b.py," in github.render([f])
    # The message escapes %, CR and LF only (':' and ',' are literal there).
    assert message == "100%25 wrong:%0D%0Asecond line, with comma"


def test_engine_errors_are_errors_and_unpositioned_ones_have_no_line():
    unreadable = Finding(code="ROC002", name="unreadable-file", path="bad.py", span=Span(0, 0),
                         message="cannot decode as utf-8")
    parse_error = finding("def f(:\n", "(", code="ROC001", name="parse-error", message="cannot parse")
    lines = github.render([unreadable, parse_error]).splitlines()
    assert lines[0] == "::error file=bad.py,title=ROC002 (unreadable-file)::cannot decode as utf-8"
    kind, props, _ = parse(lines[1])
    assert kind == "error" and props["line"] == "1" and props["col"] == "6"
    assert parse(github.command(finding("x\n", "x", severity=Severity.NOTE)))[0] == "notice"


def test_multi_line_span_and_fix_hint():
    f = finding("call(a,\n     b)\n", "call(a,\n     b)",
                fix=None)
    kind, props, _ = parse(github.command(f))
    assert (props["line"], props["endLine"], props["col"], props["endColumn"]) == ("1", "2", "1", "8")
    text = "w = 32\n"
    start = text.index("32")
    fixed = Finding(code="ROC204", name="warp-size-hardcoded", path="a.cu", span=Span(start, start + 2),
                    message="warp size hard-coded",
                    fix=Fix((Edit(Span(start, start + 2), "warpSize"),), "use warpSize", Applicability.UNSAFE))
    (fixed,) = _finish([], [fixed], text.encode())
    _, _, message = parse(github.command(fixed))
    assert message == "warp size hard-coded%0AFix (--fix --unsafe-fixes): use warpSize"


def test_cli_github_format(tmp_path):
    candidates = [(r, ex) for r in all_rules().values() if r.language == "python" for ex in r.examples()[1]]
    if not candidates:
        pytest.skip("no Python rule registered yet")
    rule, example = candidates[0]
    (tmp_path / "hazard.py").write_text(example.code, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", "--output-format", "github",
                           "hazard.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines, "one annotation per finding"
    parsed = [parse(line) for line in lines]  # every line is a well-formed workflow command
    assert any(props["title"] == f"{rule.code} ({rule.name})" and props["file"] == "hazard.py"
               for _, props, _ in parsed)
    assert "Found" not in proc.stdout  # no human summary mixed into the annotations
