"""Engine pieces that do not depend on any one rule."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rocmlint.config import ConfigError, ConfigResolver, Settings
from rocmlint.discovery import discover
from rocmlint.fixers.apply import select_edits
from rocmlint.model import Applicability, Edit, Finding, Fix, LineIndex, Span, apply_edits
from rocmlint.registry import select_rules
from rocmlint.source import SourceError, atomic_write, decode_source
from rocmlint.suppress import is_suppressed, suppressed_codes


def test_line_index_positions_count_characters():
    data = "a = 'é'\nb = 1\r\nc\n".encode()
    idx = LineIndex(data)
    assert idx.position(0) == (1, 1)
    assert idx.position(data.index(b"'", 5)) == (1, 7)  # é is 2 bytes, 1 column
    assert idx.position(data.index(b"b")) == (2, 1)
    assert idx.line_text(1) == "b = 1"  # CR not part of the text
    assert idx.offset(2, 5) == data.index(b"1")


def test_apply_edits_rejects_overlaps_and_keeps_order():
    data = b"0123456789"
    assert apply_edits(data, [Edit(Span(8, 9), "X"), Edit(Span(0, 1), "A"), Edit(Span(5, 5), "+")]) == b"A1234+567X9"
    with pytest.raises(ValueError):
        apply_edits(data, [Edit(Span(0, 5), "x"), Edit(Span(3, 6), "y")])


def _finding(start, end, content, applicability=Applicability.SAFE, extra=()):
    edits = (Edit(Span(start, end), content),) + tuple(extra)
    return Finding("ROC999", "test", "f.py", Span(start, end), "m", Fix(edits, "t", applicability))


def test_select_edits_shares_identical_edits_and_defers_clashes():
    shared = Edit(Span(0, 0), "IS_ROCM = ...\n")
    a = _finding(10, 12, "a", extra=(shared,))
    b = _finding(20, 22, "b", extra=(shared,))
    clash = _finding(11, 13, "c")
    unsafe = _finding(30, 31, "u", Applicability.UNSAFE)
    edits, used = select_edits([a, b, clash, unsafe], unsafe=False)
    assert used == 2
    assert edits.count(shared) == 1 and len(edits) == 3
    edits, used = select_edits([unsafe], unsafe=True, newline="\r\n")
    assert used == 1
    crlf = select_edits([_finding(0, 1, "x\ny")], unsafe=False, newline="\r\n")[0]
    assert crlf[0].content == "x\r\ny"


def test_two_insertions_at_one_point_clash():
    a = _finding(5, 5, "one")
    b = _finding(5, 5, "two")
    edits, used = select_edits([a, b], unsafe=False)
    assert used == 1


@pytest.mark.parametrize("raw,encoding,bom", [
    (b"x = 1\r\n", "utf-8", b""),
    (b"\xef\xbb\xbfx = 1\n", "utf-8", b"\xef\xbb\xbf"),
    (b"# -*- coding: latin-1 -*-\ns = '\xe9'\n", "iso8859-1", b""),
])
def test_decode_roundtrip(tmp_path, raw, encoding, bom):
    src = decode_source(tmp_path / "a.py", raw, "python")
    assert src.encoding == encoding and src.bom == bom
    assert src.encode(src.buffer) == raw


def test_cpp_invalid_utf8_survives(tmp_path):
    raw = b"// caf\xe9\nint x;\n"
    src = decode_source(tmp_path / "a.cu", raw, "cpp")
    assert src.encode(src.buffer + b"") == raw


def test_python_invalid_utf8_is_an_error(tmp_path):
    with pytest.raises(SourceError):
        decode_source(tmp_path / "a.py", b"s = '\xff'\n", "python")


def test_crlf_detection(tmp_path):
    assert decode_source(tmp_path / "a.py", b"a\r\nb\r\n", "python").newline == "\r\n"
    assert decode_source(tmp_path / "a.py", b"a\nb\n", "python").newline == "\n"


def test_atomic_write_keeps_mode(tmp_path):
    path = tmp_path / "run.py"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o751)
    atomic_write(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["run.py"]


def test_suppressions():
    assert is_suppressed("ROC101", suppressed_codes("x  # noqa"))
    assert is_suppressed("ROC101", suppressed_codes("x  # noqa: ROC101"))
    assert not is_suppressed("ROC101", suppressed_codes("x  # noqa: E501"))
    assert is_suppressed("ROC201", suppressed_codes("int m;  // NOLINT(ROC201)"))
    assert is_suppressed("ROC201", suppressed_codes("int m;", "// NOLINTNEXTLINE(ROC2)"))
    assert is_suppressed("ROC203", suppressed_codes("x; // rocmlint: ignore[ROC203]"))
    assert not is_suppressed("ROC203", suppressed_codes("x; // rocmlint: ignore[ROC201]"))


def test_select_and_ignore_by_prefix():
    codes = lambda sel, ign: {r.code for r in select_rules(sel, ign)}
    assert codes(["ROC1"], []) and all(c.startswith("ROC1") for c in codes(["ROC1"], []))
    assert "ROC101" not in codes(["ROC"], ["ROC101"])
    assert codes(["ROC101"], ["ROC"]) == {"ROC101"}  # the more specific prefix wins


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_cascade_until_root(tmp_path):
    _write(tmp_path / "pyproject.toml", "[tool.rocmlint]\nignore = ['ROC105']\nrocm-gate-names = ['ON_AMD']\n")
    _write(tmp_path / "pkg" / "rocmlint.toml", "ignore = ['ROC106']\n")
    _write(tmp_path / "pkg" / "sub" / "pyproject.toml", "[tool.rocmlint]\nroot = true\nselect = ['ROC1']\n")
    resolver = ConfigResolver()
    pkg = resolver.for_path(tmp_path / "pkg" / "x.py")
    assert pkg.ignore == ("ROC106",) and pkg.rocm_gate_names == ("ON_AMD",)
    sub = resolver.for_path(tmp_path / "pkg" / "sub" / "x.py")
    assert sub.select == ("ROC1",) and sub.ignore == () and sub.rocm_gate_names == ()


@pytest.mark.parametrize("body,message", [
    ("[tool.rocmlint]\nslect = ['ROC1']\n", "unknown key"),
    ("[tool.rocmlint]\nselect = 'ROC1'\n", "list of strings"),
    ("[tool.rocmlint]\nselect = ['XYZ9']\n", "unknown rule"),
    ("[tool.rocmlint]\ngate = 'sometimes'\n", "auto, always, never"),
    ("[tool.rocmlint\n", "invalid TOML"),
])
def test_config_errors_are_clear(tmp_path, body, message):
    _write(tmp_path / "pyproject.toml", body)
    from rocmlint.registry import is_known_prefix

    with pytest.raises(ConfigError, match=message):
        ConfigResolver(is_known_prefix=is_known_prefix).for_path(tmp_path / "a.py")


def test_per_file_ignores(tmp_path):
    _write(tmp_path / "pyproject.toml", "[tool.rocmlint]\nper-file-ignores = {'tests/**' = ['ROC101']}\n")
    settings = ConfigResolver().for_path(tmp_path / "tests" / "a.py")
    assert settings.ignored_for(tmp_path / "tests" / "test_x.py") == ("ROC101",)
    assert settings.ignored_for(tmp_path / "src" / "x.py") == ()


def test_discovery_honours_gitignore_and_excludes(tmp_path):
    (tmp_path / ".git").mkdir()
    _write(tmp_path / ".gitignore", "generated/\n*.gen.py\n")
    _write(tmp_path / "sub" / ".gitignore", "local.cu\n!keep.gen.py\n")
    for name in ("a.py", "generated/b.py", "c.gen.py", "sub/local.cu", "sub/kernel.cu", "sub/keep.gen.py",
                 "build/x.py", "node_modules/y.py", "notes.txt", "sub/k.hip"):
        _write(tmp_path / name, "x = 1\n")
    _write(tmp_path / "pyproject.toml", "[tool.rocmlint]\nexclude = ['vendor/']\n")
    _write(tmp_path / "vendor" / "v.py", "x = 1\n")
    found = {t.display for t in discover([str(tmp_path)], ConfigResolver(), cwd=tmp_path)}
    # pyproject.toml is a manifest (ROC4xx).
    assert found == {"a.py", "sub/kernel.cu", "sub/keep.gen.py", "sub/k.hip", "pyproject.toml"}
    # Explicit files are always checked.
    explicit = {t.display for t in discover([str(tmp_path / "generated" / "b.py")], ConfigResolver(), cwd=tmp_path)}
    assert explicit == {"generated/b.py"}


def test_gitignore_literal_prefilter_agrees_with_pathspec(tmp_path):
    """discovery tries a path only against the patterns whose literal part it holds; the
    answer must be pathspec's over the whole file (negations, folders, anchors, bracket
    expressions, escapes, patterns with no literal at all)."""
    import itertools

    from pathspec import GitIgnoreSpec

    from rocmlint.discovery import _IgnoreStack, _required_pieces

    lines = ["*.o", "build/", "/top-only.py", "!build/keep.cu", "docs/**/*.md", "tmp*", "!tmp_keep.py",
             "a/**/b", "[Cc]ache/", "\\#literal", "# a comment", "", "x?.cu", "**/logs", "!/logs", "!!x",
             "[Bb]in[0-9]", "*~", "keep.cu  ", "lib/sub/*.so*", "a//x", "**/b/c/"]
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
    stack = _IgnoreStack()
    assert stack.load(str(tmp_path)) == 1
    # the parts every matching path holds between slashes: never inside a bracket expression;
    # a slash inside a part is the path's; a part at the pattern's edge or next to a slash
    # is at a component's edge (`**/b` matches `b`; `log` is not in `logging.py`)
    assert _required_pieces("[Bb]in[0-9]") == {"in"} and _required_pieces("docs/**/*.md") == {"/docs/", ".md/"}
    assert _required_pieces("\\#literal") == set() and _required_pieces("!tmp_keep.py") == {"/tmp_keep.py/"}
    assert _required_pieces("lib/sub/*.so*") == {"/lib/sub/", ".so"} and _required_pieces("**/b/c/") == {"/b/c/"}
    assert _required_pieces("/logs") == {"/logs/"} and _required_pieces("x?.cu") == {"/x", ".cu/"}
    spec = GitIgnoreSpec.from_lines(lines)
    names = ["x.o", "build", "keep.cu", "top-only.py", "readme.md", "tmp1", "tmp_keep.py", "b", "Cache", "cache",
             "#literal", "x1.cu", "logs", "docs", "a", "plain.py", "Bin7", "bin", "!x", "f.c~", "lib", "sub",
             "x.so.1", "c", "x", "logs.txt", "xbuild", "build.py"]
    checked = 0
    for depth in (1, 2, 3):
        for parts in itertools.product(names, repeat=depth):
            for is_dir in (False, True):
                rel = "/".join(parts)
                expected = spec.check_file(rel + ("/" if is_dir else "")).include
                assert stack.ignored(str(tmp_path / rel), is_dir) == bool(expected), (rel, is_dir)
                checked += 1
    assert checked > 30000


def test_gitignore_invalid_pattern_is_skipped_as_git_does(tmp_path):
    """A lone '!' is no pattern to git; pathspec raises on it. The other lines still apply."""
    (tmp_path / ".git").mkdir()
    _write(tmp_path / ".gitignore", "!\n*.gen.py\n")
    _write(tmp_path / "a.gen.py", "x = 1\n")
    _write(tmp_path / "b.py", "x = 1\n")
    found = {t.display for t in discover([str(tmp_path)], ConfigResolver(), cwd=tmp_path)}
    assert found == {"b.py"}


def test_settings_fingerprint_tracks_analysis_inputs():
    assert Settings().fingerprint == Settings().fingerprint
    assert Settings().fingerprint != Settings(ignore=("ROC101",)).fingerprint


def test_force_exclude_applies_to_named_files(tmp_path):
    _write(tmp_path / "pyproject.toml", "[tool.rocmlint]\nexclude = ['third_party/']\n")
    vendored = _write(tmp_path / "third_party" / "k.py", "x = 1\n")
    mine = _write(tmp_path / "src" / "k.py", "x = 1\n")
    named = [str(vendored), str(mine)]
    assert len(list(discover(named, ConfigResolver(), cwd=tmp_path))) == 2
    kept = {t.display for t in discover(named, ConfigResolver(), cwd=tmp_path, force_exclude=True)}
    assert kept == {"src/k.py"}


def test_select_edits_is_not_quadratic():
    """10,000 fixes used to cost 50 million clash checks (minutes); now a sorted scan."""
    import time

    findings = [Finding("ROC204", "x", "f.cu", Span(10 * i, 10 * i + 4), "m",
                        Fix((Edit(Span(10 * i, 10 * i + 4), "wide"),), "t", Applicability.SAFE))
                for i in range(10_000)]
    overlapping = Finding("ROC204", "x", "f.cu", Span(52, 60), "m",
                          Fix((Edit(Span(52, 60), "z"),), "t", Applicability.SAFE))
    start = time.process_time()
    edits, used = select_edits(findings + [overlapping], unsafe=False)
    assert time.process_time() - start < 2.0
    assert used == 10_000 and len(edits) == 10_000 and Edit(Span(52, 60), "z") not in edits


def test_a_cache_write_that_fails_midway_leaves_the_old_file_and_no_temporary(tmp_path):
    from rocmlint.source import write_replacing

    target = tmp_path / "results.json"
    target.write_text("old")

    def fail(fh):
        fh.write("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_replacing(target, fail)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["results.json"]
    write_replacing(target, lambda fh: fh.write("new"))
    assert target.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["results.json"]
