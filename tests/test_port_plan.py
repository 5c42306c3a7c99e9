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
    assert ("serve/hopper_gemm.cu", 13, "ROC307") in listed
    assert [item for item in listed if item[0].startswith("serve/row_reduce")] == [
        ("serve/row_reduce.cu", 3, "ROC303"), ("serve/row_reduce.cu", 10, "ROC203")]
    verdict = next(f for f in json.loads(out) if f["code"] == "ROC307" and f["path"].endswith("hopper_gemm.cu"))
    assert "TMA descriptors and bulk tensor copies (lines 13, 14, 18, 22)" in verdict["message"]
    assert "wgmma (Hopper warpgroup MMA) (lines 28, 30)" in verdict["message"]


def test_a_header_only_rewrite_only_files_include_goes_with_them(project, capsys, monkeypatch):
    """serve/common/stage_ring.cuh is included by the Hopper GEMM alone, slot_bits.cuh only
    through it: each gets the verdict, naming its includer, and its line findings are folded;
    lane_math.cuh, which the row reduction includes too, keeps its line finding."""
    _code, out = run_cli(["check", "--no-cache", "--output-format", "json", "."], project, capsys, monkeypatch)
    by_file: dict[str, list] = {}
    for f in json.loads(out):
        by_file.setdefault(f["path"].removeprefix("./"), []).append(f)
    for header, includer in (("serve/common/stage_ring.cuh", "serve/hopper_gemm.cu"),
                             ("serve/common/slot_bits.cuh", "serve/common/stage_ring.cuh")):
        [verdict] = by_file[header]
        assert verdict["code"] == "ROC307" and verdict["line"] == 1 and verdict["mode"] == "port"
        assert f"included only by rewrite-only files ({includer})" in verdict["message"]
    assert [f["code"] for f in by_file["serve/common/lane_math.cuh"]] == ["ROC203"]
    _code, out = run_cli(["check", "--no-cache", "--show-all", "--output-format", "json", "."], project, capsys,
                         monkeypatch)
    shown = sorted(f["code"] for f in json.loads(out) if f["path"].endswith("stage_ring.cuh"))
    assert shown == ["ROC201", "ROC203", "ROC303", "ROC307"]


def test_a_header_checked_without_its_includers_keeps_its_line_findings(project, capsys, monkeypatch):
    _code, out = run_cli(["check", "--no-cache", "--output-format", "json", "serve/common/stage_ring.cuh"], project,
                         capsys, monkeypatch)
    assert sorted(f["code"] for f in json.loads(out)) == ["ROC201", "ROC203", "ROC303"]


def test_a_header_a_salvageable_file_also_includes_is_not_folded(project, capsys, monkeypatch):
    (project / "serve" / "row_reduce.cu").write_text(
        (project / "serve" / "row_reduce.cu").read_text().replace(
            '#include "common/lane_math.cuh"', '#include "common/lane_math.cuh"\n#include "common/stage_ring.cuh"'))
    _code, out = run_cli(["check", "--no-cache", "--output-format", "json", "."], project, capsys, monkeypatch)
    ring = sorted(f["code"] for f in json.loads(out) if f["path"].endswith("stage_ring.cuh"))
    assert ring == ["ROC201", "ROC203", "ROC303"]
    # slot_bits.cuh is reached only through stage_ring.cuh, which now stays: neither is folded
    assert [f["code"] for f in json.loads(out) if f["path"].endswith("slot_bits.cuh")] == ["ROC203"]


def test_its_line_findings_are_counted_and_show_all_lists_them(project, capsys, monkeypatch):
    _code, text = run_cli(["check", "--no-cache", "--no-show-source", "."], project, capsys, monkeypatch)
    assert "15 line findings in 3 rewrite-only files (ROC307) counted, not listed (`--show-all` lists them)." in text
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
    assert lines[2].startswith("7 files checked, ") and lines[2].endswith(
        ": 3 to rewrite, 1 need a look, 2 mechanical, 1 with nothing to do.")
    assert "| `serve` | 4 | 1 | 1 | 1 | 1 |" in out
    assert "| `serve/common` | 3 | 2 | 0 | 1 | 0 |" in out
    assert "- `serve/common/stage_ring.cuh`: included only by rewrite-only files (serve/hopper_gemm.cu)\n" in out
    assert "- `serve/hopper_gemm.cu`: TMA descriptors and bulk tensor copies (lines 13, 14, 18, 22); wgmma" in out
    assert "### Mechanical (`rocmlint check --fix`): 2 files\n\n- `serve/common/lane_math.cuh`: ROC203 x1\n" \
           "- `serve/row_reduce.cu`: ROC203 x1, ROC303 x1" in out
    assert "| ROC307 rewrite-not-port | 3 | 3 |" in out


def test_report_html_is_one_page_with_the_tree_coloured_by_verdict(project, tmp_path, capsys, monkeypatch):
    target = tmp_path / "plan.html"
    code, _out = run_cli(["report", "--no-cache", "--format", "html", "-o", str(target)], project, capsys,
                         monkeypatch)
    page = target.read_text()
    assert code == 0 and page.startswith("<!doctype html>") and "<script" not in page and "http" not in \
        page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    rects = [chunk for chunk in page.split("<rect")[1:]]
    assert len(rects) == 5
    assert any('fill="#c0392b"' in r and "serve/hopper_gemm.cu: rewrite" in r for r in rects)
    assert any('fill="#2e86c1"' in r and "serve/row_reduce.cu: mechanical" in r for r in rects)


def test_report_html_names_every_folder_whole(tmp_path, capsys, monkeypatch):
    """The chart's folder names are never cut, however long or however few files they hold."""
    (tmp_path / ".git").mkdir()
    deep = "kernels/attention/hopper_warp_specialized/epilogues/fused_rotary_positional_bias_variants"
    for folder, name in ((deep, "bias.cu"), ("a", "one.cu"), ("a/b", "two.cu"), ("tools", "three.cu")):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / name).write_text("__global__ void k(unsigned* m) { *m = __ballot_sync(0xffffffff, 1); }\n")
    for i in range(80):  # a folder of many files wraps its squares
        (tmp_path / "tools" / f"t{i}.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    target = tmp_path / "plan.html"
    run_cli(["report", "--no-cache", "--format", "html", "-o", str(target)], tmp_path, capsys, monkeypatch)
    page = target.read_text()
    svg = page[page.index("<svg"):page.index("</svg>")]
    labels = [chunk.split(">", 1)[1].split("<", 1)[0] for chunk in svg.split("<text")[1:]]
    assert labels == ["a", "a/b", deep, "tools"]
    width = int(svg.split('width="', 1)[1].split('"', 1)[0])
    assert width >= 7 * len(deep)
    assert svg.count("<rect") == 84


def _verdicts(tmp_path, capsys, monkeypatch, files: dict[str, str]) -> dict[str, str]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    _code, out = run_cli(["check", "--no-cache", "--output-format", "json", "."], tmp_path, capsys, monkeypatch)
    return {f["path"].removeprefix("./"): f["message"] for f in json.loads(out) if f["code"] == "ROC307"}


def test_nvshmem_is_a_blocker_in_device_code_only(tmp_path, capsys, monkeypatch):
    """A kernel built on NVSHMEM's device API is rewritten; host code that allocates symmetric
    memory and synchronises PEs (or a header that includes nvshmem.h) swaps libraries: ROC305."""
    verdicts = _verdicts(tmp_path, capsys, monkeypatch, {
        "put.cu": "#include <nvshmem.h>\n__global__ void push(float* dst, const float* src, int n, int pe) {\n"
                  "  nvshmemx_float_put_block(dst, src, n, pe);\n}\n"
                  "template <int N> __device__ __forceinline__ void quiet_all() { nvshmem_quiet(); }\n",
        "setup_pes.cc": "#include <nvshmem.h>\n#include <nvshmemx.h>\nvoid* symmetric(size_t bytes) {\n"
                        "  nvshmem_init();\n  void* p = nvshmem_malloc(bytes);\n  nvshmem_barrier_all();\n"
                        "  return p;\n}\n",
        "types.cuh": "#pragma once\n#include <nvshmem.h>\nstruct Peers { int my_pe; int n_pes; };\n",
    })
    assert list(verdicts) == ["put.cu"]
    assert "the NVSHMEM device API (lines 3, 5)" in verdicts["put.cu"]


def test_a_cluster_launch_attribute_set_on_the_host_is_no_blocker(tmp_path, capsys, monkeypatch):
    """Cluster dimensions in a launch configuration are dropped on AMD (ROC305 says so); a kernel
    that uses its cluster (`__cluster_dims__`, `this_cluster()`) is rewritten."""
    verdicts = _verdicts(tmp_path, capsys, monkeypatch, {
        "launch.cu": "void launch(cudaLaunchConfig_t* cfg, cudaLaunchAttribute* attr) {\n"
                     "  attr[0].id = cudaLaunchAttributeClusterDimension;\n  attr[0].val.clusterDim.x = 2;\n"
                     "  cfg->attrs = attr;\n}\n",
        "gather.cu": "__global__ void __cluster_dims__(2, 1, 1) gather(float* out) { out[0] = 1.f; }\n",
    })
    assert list(verdicts) == ["gather.cu"]
