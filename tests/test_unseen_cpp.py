"""Mechanisms for projects nobody here had read (issue 37): a switch decided by what it
guards, a generated copy reported once, a mask chosen per wave size, and findings that name the
one macro that would settle them. The fixture projects are under fixtures/unseen/."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from rocmlint.cpp.preprocessor import Conditionals
from test_project_fixtures import run_cli

UNSEEN = Path(__file__).resolve().parent.parent / "fixtures" / "unseen"
SARIF_SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sarif-schema-2.1.0.json"


def project(name: str, tmp_path: Path) -> Path:
    tree = tmp_path / name
    shutil.copytree(UNSEEN / name, tree)
    (tree / ".git").mkdir()
    return tree


def findings(tree: Path, capsys, monkeypatch) -> list[dict]:
    _code, out = run_cli(["check", "--no-cache", "--exit-zero", "--output-format", "json", "."], tree, capsys,
                         monkeypatch)
    return json.loads(out)


def test_tessel_reports_only_its_real_hazards(tmp_path, capsys, monkeypatch):
    tree = project("tessel", tmp_path)
    found = sorted((f["path"].removeprefix("./"), f["line"], f["code"]) for f in findings(tree, capsys, monkeypatch))
    assert found == [
        ("src/device/gpu_device.h", 18, "ROC201"),  # a 32-bit ballot: real at 64 lanes
        ("src/device/gpu_device.h", 19, "ROC202"),
        ("src/device/legacy_mask.h", 13, "ROC203"),  # the 64-lane branch's mask names 32 lanes
    ]


def test_a_switch_is_decided_by_the_headers_its_branch_and_its_sibling_include(tmp_path, capsys, monkeypatch):
    tree = project("tessel", tmp_path)
    _code, out = run_cli(["explain", "src/device/blas_bridge.h:4"], tree, capsys, monkeypatch)
    assert "AMD build compiles this line: no" in out
    # the name says nothing of a platform: the included headers decide
    assert "TESSEL_RUNTIME_ALPHA: undefined (undefined on AMD by what it guards: its branch includes " \
           "<cublas_v2.h>; the sibling branch (#elif defined(TESSEL_RUNTIME_BETA)) includes " \
           "<hipblas/hipblas.h>" in out
    _code, out = run_cli(["explain", "src/device/gpu_device.h:4"], tree, capsys, monkeypatch)
    assert "AMD build compiles this line: no" in out and "TESSEL_USING_CUDA: undefined" in out


def test_a_generated_copy_is_reported_once_on_its_source(tmp_path, capsys, monkeypatch):
    tree = project("tessel", tmp_path)
    found = findings(tree, capsys, monkeypatch)
    assert not [f for f in found if "tessel_all.h" in f["path"]]
    # the copy alone still gets its findings: the source is what makes it a twin
    (tree / "src" / "device" / "gpu_device.h").unlink()
    again = findings(tree, capsys, monkeypatch)
    assert {(f["code"], f["line"]) for f in again if "tessel_all.h" in f["path"]} == {("ROC201", 21), ("ROC202", 22)}


def test_a_mask_defined_for_32_lane_waves_is_right_there():
    text = ("#if LIB_WARP_SIZE == 64\n#define M 1\n#elif LIB_WARP_SIZE == 32\n#define M 2\n#else\n"
            "#error no\n#endif\n#ifdef __GFX9__\nint a;\n#else\nint b;\n#endif\n#if defined(USE_X)\nint c;\n#endif\n")
    pp = Conditionals(text.encode(), (), (), "__HIP_PLATFORM_AMD__")
    assert pp.wave_sizes_at(1) == {64}
    assert pp.wave_sizes_at(3) == {32}
    assert pp.wave_sizes_at(5) == frozenset()  # the #error branch: no wave size reaches it
    assert pp.wave_sizes_at(8) == {64} and pp.wave_sizes_at(10) == {32}
    assert pp.wave_sizes_at(13) == {32, 64}


def test_findings_name_the_undecided_macro_in_every_format(tmp_path, capsys, monkeypatch):
    tree = project("undecided", tmp_path)
    found = findings(tree, capsys, monkeypatch)
    assert [(f["code"], f["unknown_macros"]) for f in found] == [("ROC201", ["SPARSEQ_FAST_VOTE"]),
                                                                 ("ROC202", ["SPARSEQ_FAST_VOTE"])]
    _code, out = run_cli(["check", "--no-cache", "."], tree, capsys, monkeypatch)
    assert "stored in 32-bit `unsigned int`: lanes 32-63 of a wave64 are lost [if SPARSEQ_FAST_VOTE]" in out
    assert "2 findings sit under `#if` conditions rocmlint could not decide" in out
    assert '  SPARSEQ_FAST_VOTE: 2 findings  -> rocm-macros = ["SPARSEQ_FAST_VOTE"]' in out
    _code, out = run_cli(["check", "--no-cache", "--exit-zero", "--output-format", "sarif", "."], tree, capsys,
                         monkeypatch)
    sarif = json.loads(out)
    if SARIF_SCHEMA.exists():
        jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    assert [r["properties"]["unknownMacros"] for r in sarif["runs"][0]["results"]] == [["SPARSEQ_FAST_VOTE"]] * 2
    _code, out = run_cli(["explain", "reduce.cu:6"], tree, capsys, monkeypatch)
    assert "undecided: SPARSEQ_FAST_VOTE" in out


@pytest.mark.parametrize("setting, expected", [("nvidia-macros", 0), ("rocm-macros", 2)])
def test_the_suggested_line_settles_the_question(tmp_path, capsys, monkeypatch, setting, expected):
    tree = project("undecided", tmp_path)
    (tree / "pyproject.toml").write_text(f'[tool.rocmlint]\n{setting} = ["SPARSEQ_FAST_VOTE"]\n')
    found = findings(tree, capsys, monkeypatch)
    assert len(found) == expected and all(f["unknown_macros"] == [] for f in found)


def test_a_back_end_selected_by_value_takes_the_number_of_its_hip_branch():
    from rocmlint.project.sibling_switches import infer_sibling_switches
    from rocmlint.project.summaries import Summary, summarise

    header = (b"#if (FFTLIB_BACKEND == 0)\n#include <vulkan/vulkan.h>\n"
              b"#elif (FFTLIB_BACKEND == 1)\n#include <cuda.h>\n#include <nvrtc.h>\n"
              b"#elif (FFTLIB_BACKEND == 2)\n#include <hip/hip_runtime.h>\n#include <hip/hiprtc.h>\n#endif\n"
              b"#if defined(FFTLIB_ON_B)\n#include <hip/hip_runtime.h>\n#elif defined(FFTLIB_ON_A)\n"
              b"#include <cufft.h>\n#endif\n")
    found = infer_sibling_switches({"fft.h": Summary(summarise(header))})
    assert {m: found[m][:2] for m in found} == {"FFTLIB_BACKEND": (True, 2), "FFTLIB_ON_B": (True, 1),
                                                "FFTLIB_ON_A": (False, None)}
    assert "`FFTLIB_BACKEND == 2` includes <hip/hip_runtime.h>, <hip/hiprtc.h>" in found["FFTLIB_BACKEND"][2].what


def test_a_switch_a_sibling_header_derives_from_cuda_arch_is_off_in_a_port(tmp_path, capsys, monkeypatch):
    tree = project("rivulet", tmp_path)
    found = [(f["path"].removeprefix("./"), f["line"], f["code"], f["mode"]) for f in findings(tree, capsys, monkeypatch)]
    assert found == [("csrc/async_copy.cuh", 4, "ROC304", "port"), ("csrc/gather.cu", 1, "ROC303", "port")]
    rivulet = findings(tree, capsys, monkeypatch)[0]
    assert "the AMD build calls it at gather.cu:8" in rivulet["message"]
    # the header is read for the answer: a change to it changes a warm run's result
    _code, out = run_cli(["check", "--exit-zero", "--output-format", "json", "."], tree, capsys, monkeypatch)
    assert len(json.loads(out)) == 2  # stored in the cache
    arch = tree / "csrc" / "arch_config.cuh"
    arch.write_text(arch.read_text().replace("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", "#if 1"))
    _code, out = run_cli(["check", "--exit-zero", "--output-format", "json", "."], tree, capsys, monkeypatch)
    assert sorted(f["code"] for f in json.loads(out)) == ["ROC301", "ROC301", "ROC303"]


def test_sources_no_build_compiles_are_set_aside_with_the_reason(tmp_path, capsys, monkeypatch):
    tree = project("plaza", tmp_path)
    found = sorted((f["path"].removeprefix("./"), f["line"], f["code"]) for f in findings(tree, capsys, monkeypatch))
    assert found == [("src/scan.hip", 5, "ROC201"), ("src/scan.hip", 6, "ROC202")]
    _code, out = run_cli(["check", "--no-cache", "."], tree, capsys, monkeypatch)
    assert "2 C-family files not compiled by the project's AMD build were not checked" in out
    _code, out = run_cli(["explain", "examples/demo_reduce.cu:1"], tree, capsys, monkeypatch)
    assert "file(GLOB demo_srcs ... demo_*.cu) lists it, but no target the ROCm build configures compiles that list" \
        in out
    _code, out = run_cli(["explain", "tools/bandwidth/bandwidth.cu:5"], tree, capsys, monkeypatch)
    assert "the Makefile compiles bandwidth.cpp from this folder; bandwidth.cu is not one of them" in out
    # named by the build, the same file is checked again
    (tree / "tools" / "bandwidth" / "Makefile").write_text(
        "bandwidth: bandwidth.cu\n\thipcc -O2 $^ -o $@\n")
    again = {(f["path"].removeprefix("./"), f["code"]) for f in findings(tree, capsys, monkeypatch)}
    assert ("tools/bandwidth/bandwidth.cu", "ROC301") in again


def test_opencl_kernels_a_cpp_file_includes_are_not_read_as_cuda(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    kernel = ("#ifdef NVIDIA\n__device__ void fence() { asm volatile(\"membar.gl;\"); }\n#endif\n"
              "__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n")
    (tmp_path / "histogram.cl").write_text(kernel)
    (tmp_path / "histogram.inc").write_text(kernel)
    (tmp_path / "learner.cpp").write_text('const char* source =\n#include "histogram.cl"\n;\n#include "histogram.inc"\n')
    found = {f["path"].removeprefix("./") for f in findings(tmp_path, capsys, monkeypatch)}
    assert found == {"histogram.inc"}  # the OpenCL file is left to the OpenCL compiler


def test_a_switch_the_makefile_sets_only_beside_an_nvidia_arch_flag_is_off_in_a_port(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "common.mk").write_text(
        "NVCCFLAGS := -O3 -std=c++20 -DLIB_TRACE\n"
        "ifeq ($(GPU),H100)\nNVCCFLAGS += -DLIB_HOPPER -gencode arch=compute_90a,code=sm_90a\n"
        "else\nNVCCFLAGS += -DLIB_AMPERE -arch=sm_80\nendif\n")
    (tmp_path / "fence.cuh").write_text(
        "#ifdef LIB_HOPPER\n__device__ void fence() { asm volatile(\"fence.proxy.async;\"); }\n#endif\n"
        "#ifdef LIB_TRACE\n__device__ void mark() { asm volatile(\"membar.cta;\"); }\n#endif\n"
        "#ifdef LIB_AMPERE\n__device__ void wait() { asm volatile(\"cp.async.wait_all;\"); }\n#endif\n")
    found = sorted((f["line"], f["code"], tuple(f["unknown_macros"])) for f in findings(tmp_path, capsys, monkeypatch))
    # LIB_HOPPER and LIB_AMPERE come only with an NVIDIA architecture: off in the AMD build, no
    # question; LIB_TRACE comes with every build, but port mode asks rather than reads the Makefile
    assert found == [(5, "ROC301", ("LIB_TRACE",))]
