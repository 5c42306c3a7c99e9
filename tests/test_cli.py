"""The command line as users meet it: exit codes, JSON, fixes that keep every byte they should."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.cli import main

HAZARD = "import pynvml\n\n\ndef used_memory():\n    return pynvml.nvmlDeviceGetCount()\n"
FIXED = ("try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n\n\n"
         "def used_memory():\n    return pynvml.nvmlDeviceGetCount()\n")


def run_cli(args, cwd: Path, capsys):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        code = main(list(args))
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    return tmp_path


def test_clean_file_exits_zero(project, capsys):
    (project / "clean.py").write_text("import os\nprint(os.getcwd())\n")
    code, out, _ = run_cli(["check", "--no-cache", "."], project, capsys)
    assert code == 0 and "All checks passed" in out


def test_findings_exit_one_and_json_schema(project, capsys):
    (project / "mon.py").write_text(HAZARD)
    code, out, _ = run_cli(["--no-cache", "--output-format", "json"], project, capsys)
    assert code == 1
    data = json.loads(out)
    assert [d["code"] for d in data] == ["ROC103"]
    item = data[0]
    assert set(item) == {"code", "name", "message", "path", "line", "column", "end_line", "end_column",
                         "severity", "fix", "evidence", "mode", "unknown_macros"}
    assert item["mode"] is None  # port/guard is a C-family finding's (design §2e)
    assert item["path"] == "mon.py" and item["line"] == 1 and item["column"] == 1
    assert item["fix"]["applicability"] == "safe"
    assert set(item["fix"]) == {"applicability", "title", "edits"}
    for edit in item["fix"]["edits"]:
        assert set(edit) == {"line", "column", "end_line", "end_column", "content"}
        assert edit["line"] >= 1 and edit["column"] >= 1


def test_exit_zero(project, capsys):
    (project / "mon.py").write_text(HAZARD)
    assert run_cli(["--no-cache", "--exit-zero"], project, capsys)[0] == 0


@pytest.mark.parametrize("args,message", [
    (["--select", "NOPE"], "unknown rule"),
    (["missing_dir"], "no such file"),
    (["--unsafe-fixes"], "needs --fix"),
    (["--output-format", "xml"], "invalid choice"),
    (["rule", "ROC999"], "unknown rule"),
])
def test_usage_errors_exit_two_without_traceback(project, capsys, args, message):
    code, out, err = run_cli(args, project, capsys)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_config_error_exits_two(project, capsys):
    (project / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\nfrobnicate = 1\n")
    (project / "a.py").write_text("x = 1\n")
    code, _, err = run_cli(["--no-cache"], project, capsys)
    assert code == 2 and "unknown key" in err and "frobnicate" in err


def test_fix_writes_gated_code_and_second_fix_is_noop(project, capsys):
    path = project / "mon.py"
    path.write_text(HAZARD)
    code, out, _ = run_cli(["--no-cache", "--fix"], project, capsys)
    assert code == 0 and "Fixed 1 finding" in out
    assert path.read_text() == FIXED
    code, _, _ = run_cli(["--no-cache", "--fix"], project, capsys)
    assert code == 0 and path.read_text() == FIXED


def test_diff_prints_and_writes_nothing(project, capsys):
    path = project / "mon.py"
    path.write_text(HAZARD)
    code, out, err = run_cli(["--no-cache", "--diff"], project, capsys)
    assert code == 1
    assert out.startswith("--- a/mon.py\n+++ b/mon.py\n")
    assert "+try:\n+    import pynvml\n+except ImportError:\n" in out
    assert path.read_text() == HAZARD


@pytest.mark.parametrize("prefix,newline", [(b"", b"\r\n"), (b"\xef\xbb\xbf", b"\n"), (b"\xef\xbb\xbf", b"\r\n")])
def test_fix_keeps_bom_line_endings_and_mode(project, capsys, prefix, newline):
    path = project / "mon.py"
    path.write_bytes(prefix + HAZARD.replace("\n", "\r\n" if newline == b"\r\n" else "\n").encode())
    os.chmod(path, 0o750)
    assert run_cli(["--no-cache", "--fix"], project, capsys)[0] == 0
    expected = prefix + FIXED.replace("\n", newline.decode()).encode()
    assert path.read_bytes() == expected
    assert stat.S_IMODE(path.stat().st_mode) == 0o750


def test_fix_keeps_legacy_encoding(project, capsys):
    path = project / "mon.py"
    raw = ("# -*- coding: latin-1 -*-\n" + HAZARD + "NAME = 'café'\n").encode("latin-1")
    path.write_bytes(raw)
    assert run_cli(["--no-cache", "--fix"], project, capsys)[0] == 0
    text = path.read_bytes().decode("latin-1")
    assert "except ImportError" in text and text.endswith("NAME = 'café'\n")


def test_syntax_error_is_roc001_not_a_traceback(project, capsys):
    (project / "broken.py").write_text("import pynvml\ndef f(:\n    pass\n")
    code, out, err = run_cli(["--no-cache", "--output-format", "json"], project, capsys)
    assert code == 1 and "Traceback" not in err
    assert [d["code"] for d in json.loads(out)] == ["ROC001"]


def test_undecodable_file_is_roc002(project, capsys):
    (project / "bad.py").write_bytes(b"import pynvml\ns = '\xff\xfe'\n")
    code, out, err = run_cli(["--no-cache", "--output-format", "json"], project, capsys)
    assert code == 1 and "Traceback" not in err
    data = json.loads(out)
    assert [d["code"] for d in data] == ["ROC002"] and "decode" in data[0]["message"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file_is_roc002(project, capsys):
    path = project / "secret.py"
    path.write_text(HAZARD)
    os.chmod(path, 0)
    code, out, _ = run_cli(["--no-cache", "--output-format", "json"], project, capsys)
    assert code == 1 and json.loads(out)[0]["code"] == "ROC002"


def test_fix_refused_when_file_is_read_only_folder(project, capsys):
    sub = project / "ro"
    sub.mkdir()
    path = sub / "mon.py"
    path.write_text(HAZARD)
    os.chmod(sub, 0o555)
    try:
        code, _, err = run_cli(["--no-cache", "--fix", "ro"], project, capsys)
    finally:
        os.chmod(sub, 0o755)
    if os.geteuid() == 0:
        assert path.read_text() == FIXED  # root may write anyway
    else:
        assert code == 2 and "cannot write" in err and path.read_text() == HAZARD


def test_noqa_suppresses(project, capsys):
    (project / "mon.py").write_text("import pynvml  # noqa: ROC103\n")
    assert run_cli(["--no-cache"], project, capsys)[0] == 0
    (project / "mon.py").write_text("import pynvml  # noqa: E501\n")
    assert run_cli(["--no-cache"], project, capsys)[0] == 1


def test_cache_reuses_results_and_notices_edits(project, capsys):
    path = project / "mon.py"
    path.write_text(HAZARD)
    assert run_cli([], project, capsys)[0] == 1
    assert list((project / ".rocmlint_cache").glob("results-*.json"))
    assert run_cli([], project, capsys)[0] == 1
    path.write_text("import os\n")
    assert run_cli([], project, capsys)[0] == 0


def test_rules_and_rule_commands(project, capsys):
    code, out, _ = run_cli(["rules"], project, capsys)
    assert code == 0 and "ROC101" in out and "ROC103" in out
    code, out, _ = run_cli(["rule", "roc103"], project, capsys)
    assert code == 0 and "## ROC103" in out and "Why is this bad?" in out


def test_console_script_runs_as_module(project):
    (project / "mon.py").write_text(HAZARD)
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "--no-cache", "mon.py"], cwd=project,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "ROC103" in proc.stdout
    assert "\x1b[" not in proc.stdout  # no colour when not a TTY


def test_cpp_gated_fix_keeps_crlf_and_nvidia_view(project, capsys):
    lf = "#include <cuda_runtime.h>\n\n__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n"
    path = project / "scale.cu"
    path.write_bytes(lf.replace("\n", "\r\n").encode())
    assert run_cli(["--no-cache", "--fix", "scale.cu"], project, capsys)[0] == 0
    fixed = path.read_bytes()
    assert b"\n" not in fixed.replace(b"\r\n", b"")  # every newline is CRLF
    text = fixed.decode().replace("\r\n", "\n")
    assert text.startswith("#if defined(__HIP_PLATFORM_AMD__)\n#include <hip/hip_runtime.h>\n#else\n"
                           "#include <cuda_runtime.h>\n#endif\n")
    # The NVIDIA view (real unifdef when installed) is the original, byte for byte.
    import shutil

    if shutil.which("unifdef"):
        view = subprocess.run(["unifdef", "-U__HIP_PLATFORM_AMD__", str(path)], capture_output=True)
        assert view.stdout.replace(b"\r\n", b"\n").decode() == lf


def test_jobs_must_be_positive(project, capsys):
    code, _, err = run_cli(["-j", "0", "."], project, capsys)
    assert code == 2 and "at least 1" in err


def test_extend_select_adds_to_each_configs_selection_when_walking_a_folder(project, capsys):
    (project / "pyproject.toml").write_text('[tool.rocmlint]\nroot = true\nselect = ["ROC2"]\n')
    (project / "pkg").mkdir()
    (project / "pkg" / "mon.py").write_text(HAZARD)
    code, out, err = run_cli(["check", "--no-cache", "--output-format", "json", "."], project, capsys)
    assert code == 0 and json.loads(out) == []  # ROC103 is not selected by the config
    code, out, err = run_cli(["check", "--no-cache", "--output-format", "json", "--extend-select", "ROC103", "."],
                             project, capsys)
    assert code == 1, err
    assert [(d["code"], d["path"]) for d in json.loads(out)] == [("ROC103", "pkg/mon.py")]


def test_a_reader_that_leaves_early_gets_a_quiet_exit(tmp_path):
    """`rocmlint explain ... | head`: a closed pipe is not an internal error. The pipe's
    read end is closed before rocmlint writes, so its first write fails, every time."""
    (tmp_path / "k.cu").write_text("__device__ float f(float v) {\n"
                                   "  return v + __shfl_xor_sync(0xffffffff, v, 1);\n}\n")
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.Popen([sys.executable, "-m", "rocmlint", "explain", "--no-cache", "k.cu:2"], cwd=tmp_path,
                            stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141
    assert "internal error" not in err.decode() and "Traceback" not in err.decode()
