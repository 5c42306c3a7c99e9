"""Port mode as a port plan (issue 38): a file built on NVIDIA machinery with nothing on AMD to map
to gets one rewrite-not-port verdict (ROC307) naming its blockers, its line findings counted and
not listed; a salvageable file beside it keeps its line findings. fixtures/port_plan/ is a
CUDA-only project (no HIP build: port mode)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rocmlint.cpp.rewrite_blockers import BLOCKERS
from test_project_fixtures import run_cli

PORT_PLAN = Path(__file__).resolve().parent.parent / "fixtures" / "port_plan"


@pytest.fixture
def project(tmp_path) -> Path:
    tree = tmp_path / "serve_project"
    shutil.copytree(PORT_PLAN, tree)
    (tree / ".git").mkdir()
    return tree


def test_the_rewrite_only_file_gets_one_verdict_naming_its_blockers(project, capsys, monkeypatch):
    _code, out = run_cli(["check", "--no-cache", "--output-format", "json", "."], project, capsys, monkeypatch)
    listed = sorted((f["path"].removeprefix("./"), f["line"], f["code"]) for f in json.loads(out))
    assert listed == [("serve/hopper_gemm.cu", 11, "ROC307"),
                      ("serve/row_reduce.cu", 3, "ROC303"), ("serve/row_reduce.cu", 9, "ROC203")]
    verdict = next(f for f in json.loads(out) if f["code"] == "ROC307")
    assert "TMA descriptors and bulk tensor copies (lines 11, 12, 16, 20)" in verdict["message"]
    assert "wgmma (Hopper warpgroup MMA) (lines 26, 28)" in verdict["message"]


def test_its_line_findings_are_counted_and_show_all_lists_them(project, capsys, monkeypatch):
    _code, text = run_cli(["check", "--no-cache", "--no-show-source", "."], project, capsys, monkeypatch)
    assert "11 line findings in 1 rewrite-only file (ROC307) counted, not listed (`--show-all` lists them)." in text
    _code, out = run_cli(["check", "--no-cache", "--show-all", "--output-format", "json", "."], project, capsys,
                         monkeypatch)
    codes = sorted(f["code"] for f in json.loads(out) if f["path"].endswith("hopper_gemm.cu"))
    assert codes == ["ROC201", "ROC203", "ROC301", "ROC301", "ROC301", "ROC303", "ROC303", "ROC305", "ROC305", "ROC305",
                     "ROC305", "ROC307"]


def test_explain_gives_each_files_verdict(project, capsys, monkeypatch):
    _code, rewrite = run_cli(["explain", "serve/hopper_gemm.cu:40"], project, capsys, monkeypatch)
    assert "file verdict: rewrite, not port (ROC307): built on TMA descriptors" in rewrite
    _code, port = run_cli(["explain", "serve/row_reduce.cu:9"], project, capsys, monkeypatch)
    assert "file verdict: port (no NVIDIA-only machinery: its line findings are the porting work)" in port


def test_a_blocker_in_a_comment_or_in_the_nvidia_branch_gives_no_verdict(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(
        "// a wgmma path would go here (CUtensorMap descriptors)\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
        "__device__ void fence() { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); }\n"
        "#endif\n"
        "__global__ void scale(float* x) { x[threadIdx.x] *= 2.f; }\n")
    _code, out = run_cli(["check", "--no-cache", "--output-format", "json", "."], tmp_path, capsys, monkeypatch)
    assert all(f["code"] != "ROC307" for f in json.loads(out))


def test_every_blocker_names_what_an_amd_version_is_built_on():
    assert len({b.label for b in BLOCKERS}) == len(BLOCKERS)
    assert all(b.instead for b in BLOCKERS)


# ----- rocmlint report ---------------------------------------------------------------------------

def test_report_markdown_gives_each_file_its_verdict(project, capsys, monkeypatch):
    (project / "serve" / "scale.cu").write_text("__global__ void scale(float* x) { x[threadIdx.x] *= 2.f; }\n")
    (project / "serve" / "ballot.cu").write_text(
        "__global__ void k(int* out) {\n  int lanes = __ballot(out[threadIdx.x] > 0) & 31;\n"
        "  if (threadIdx.x % warpSize == 0) out[threadIdx.x] = lanes;\n}\n")
    code, out = run_cli(["report", "--no-cache", "--title", "serve"], project, capsys, monkeypatch)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "## Port plan: serve"
    assert lines[2].startswith("4 files checked, ") and lines[2].endswith(
        ": 1 to rewrite, 1 need a look, 1 mechanical, 1 with nothing to do.")
    assert "| `serve` | 4 | 1 | 1 | 1 | 1 |" in out
    assert "- `serve/hopper_gemm.cu`: TMA descriptors and bulk tensor copies (lines 11, 12, 16, 20); wgmma" in out
    assert "### Mechanical (`rocmlint check --fix`): 1 file\n\n- `serve/row_reduce.cu`: ROC203 x1, ROC303 x1" in out
    assert "| ROC307 rewrite-not-port | 1 | 1 |" in out


def test_report_html_is_one_page_with_the_tree_coloured_by_verdict(project, tmp_path, capsys, monkeypatch):
    target = tmp_path / "plan.html"
    code, _out = run_cli(["report", "--no-cache", "--format", "html", "-o", str(target)], project, capsys,
                         monkeypatch)
    page = target.read_text()
    assert code == 0 and page.startswith("<!doctype html>") and "<script" not in page and "http" not in \
        page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    rects = [chunk for chunk in page.split("<rect")[1:]]
    assert len(rects) == 2
    assert any('fill="#c0392b"' in r and "serve/hopper_gemm.cu: rewrite" in r for r in rects)
    assert any('fill="#2e86c1"' in r and "serve/row_reduce.cu: mechanical" in r for r in rects)
