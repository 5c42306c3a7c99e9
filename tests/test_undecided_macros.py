"""Which macros a finding's path depends on (issue 37 item 6): a header's own include guard is
never one of them, wherever the guard stands after a ``#pragma once``."""
from __future__ import annotations

import json
from pathlib import Path
import pytest

from rocmlint.cpp.preprocessor import Conditionals, directives, include_guard
from test_project_fixtures import run_cli

GUARDED = """{pragma}
#ifndef _tile_gemm_cuh
  #define _tile_gemm_cuh
  #include <cuda_runtime.h>

__device__ inline unsigned lane_id() {{
  unsigned id;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}}
#endif
"""


@pytest.mark.parametrize("pragma", ["", "#pragma once\n", "#pragma once\n#pragma GCC system_header\n",
                                    '#include "hip/hip_runtime.h"\n'])  # hipify's first line
def test_a_guard_after_pragmas_is_the_include_guard(pragma):
    text = GUARDED.format(pragma=pragma).encode()
    assert include_guard(directives(text)) == "_tile_gemm_cuh"
    pp = Conditionals(text, (), (), "__HIP_PLATFORM_AMD__")
    guard = pp.header_guard()
    assert guard is not None and guard.branches[0].condition.strip() == "_tile_gemm_cuh"


@pytest.mark.parametrize("text", [
    b"#pragma once\n#ifndef A\n#define B\n#endif\n",  # defines another macro than it tests: a switch
    b"#include <x.h>\n#ifndef A\n#define A 1\n#endif\nint a;\n#if B\nint b;\n#endif\n",  # a default, closed early
])
def test_a_switch_is_not_taken_for_a_guard(text):
    assert include_guard(directives(text)) is None


def test_findings_in_a_header_guarded_after_pragma_once_depend_on_no_macro(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "gemm.cuh").write_text(GUARDED.format(pragma="#pragma once\n"))
    _code, out = run_cli(["check", "--no-cache", "--exit-zero", "--output-format", "json", "."], tmp_path, capsys,
                         monkeypatch)
    found = json.loads(out)
    assert sorted(f["code"] for f in found) == ["ROC301", "ROC303"]
    assert all(f["unknown_macros"] == [] for f in found)
    _code, out = run_cli(["check", "--no-cache", "--exit-zero", "."], tmp_path, capsys, monkeypatch)
    assert "[if " not in out and "could not decide" not in out


def test_text_output_ranks_the_remaining_undecided_macro(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    source = GUARDED.format(pragma="#pragma once\n").replace("__device__ inline", "#if TILE_FAST_LANE\n__device__ inline")
    (tmp_path / "gemm.cuh").write_text(source.replace("  return id;\n}\n", "  return id;\n}\n#endif\n"))
    _code, out = run_cli(["check", "--no-cache", "--exit-zero", "."], tmp_path, capsys, monkeypatch)
    assert "[if TILE_FAST_LANE]" in out and "_tile_gemm_cuh" not in out
    assert '  TILE_FAST_LANE: 1 finding' in out


DEVICE_HEADER = """#pragma once
#include <{runtime}>

#ifdef __CUDACC__
__device__ inline unsigned int tally_votes(bool hit) {{
  unsigned int votes = __ballot(hit);
  return votes;
}}
#endif
"""


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _found(tree: Path, capsys, monkeypatch) -> list[tuple[str, str, int, list[str]]]:
    _code, out = run_cli(["check", "--no-cache", "--exit-zero", "--output-format", "json", "."], tree, capsys,
                         monkeypatch)
    return [(f["code"], f["path"], f["line"], f["unknown_macros"]) for f in json.loads(out)]


def test_cudacc_is_undefined_where_the_hip_build_runs_no_hipify(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path, {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(tally LANGUAGES CXX HIP)\n"
                          "add_library(tally src/count.hip)\ntarget_include_directories(tally PUBLIC include)\n",
        "include/tally/device.h": DEVICE_HEADER.format(runtime="hip/hip_runtime.h"),
        "src/count.hip": '#include "tally/device.h"\n\n__global__ void count(const int* k, unsigned long long* out) {\n'
                         "  out[threadIdx.x] = __ballot(k[threadIdx.x] > 0);\n}\n",
    })
    assert _found(tree, capsys, monkeypatch) == []  # clang compiling HIP never defines __CUDACC__
    _code, out = run_cli(["explain", "include/tally/device.h:6"], tree, capsys, monkeypatch)
    assert "#ifdef __CUDACC__  -> NOT taken on AMD" in out
    assert "runs no hipify, and clang compiling HIP does not define __CUDACC__" in out


def test_cudacc_is_defined_in_a_file_hipify_rewrites(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path, {
        "setup.py": "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                    'setup(name="tally", ext_modules=[CUDAExtension("tally", ["csrc/count.cu"])],\n'
                    '      cmdclass={"build_ext": BuildExtension})\n',
        "csrc/device.cuh": DEVICE_HEADER.format(runtime="cuda_runtime.h"),
        "csrc/count.cu": '#include "device.cuh"\n\n__global__ void count(const int* k, unsigned int* out) {\n'
                         "  out[threadIdx.x] = tally_votes(k[threadIdx.x] > 0);\n}\n",
    })
    assert _found(tree, capsys, monkeypatch) == [("ROC201", "csrc/device.cuh", 6, []),
                                                 ("ROC201", "csrc/device.cuh", 7, [])]
    _code, out = run_cli(["explain", "csrc/device.cuh:6"], tree, capsys, monkeypatch)
    assert "#ifdef __CUDACC__  -> taken on AMD" in out and "hipify rewrites __CUDACC__ to __HIPCC__" in out


def test_cudacc_is_defined_in_a_port(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path, {"csrc/device.cuh": DEVICE_HEADER.format(runtime="cuda_runtime.h")})
    found = _found(tree, capsys, monkeypatch)
    assert [f for f in found if f[0] == "ROC201"] == [("ROC201", "csrc/device.cuh", 6, []),
                                                      ("ROC201", "csrc/device.cuh", 7, [])]
    _code, out = run_cli(["explain", "csrc/device.cuh:6"], tree, capsys, monkeypatch)
    assert "__CUDACC__: defined in a port: hipify rewrites __CUDACC__ to __HIPCC__" in out


def test_a_wave_size_selection_is_no_configuration_question(tmp_path, capsys, monkeypatch):
    # the branch is chosen per gfx target: `rocm-macros = ["TALLY_WAVE_SIZE"]` would settle nothing
    tree = _tree(tmp_path, {"csrc/vote.hip": """#include <hip/hip_runtime.h>

#if TALLY_WAVE_SIZE == 64
#include <cuda_fp16.h>
#elif TALLY_WAVE_SIZE == 32
#include <cuda_bf16.h>
#endif

#if TALLY_FAST_PATH
__device__ unsigned int tally_fast(bool hit) {
  unsigned int votes = __ballot(hit);
  return __popc(votes);
}
#endif
"""})
    found = _found(tree, capsys, monkeypatch)
    assert [(f[0], f[2], f[3]) for f in found] == [("ROC303", 4, []), ("ROC303", 6, []),
                                                   ("ROC201", 11, ["TALLY_FAST_PATH"]),
                                                   ("ROC202", 12, ["TALLY_FAST_PATH"])]


def test_a_compiler_query_is_no_configuration_question(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path, {"csrc/vote.hip": """#include <hip/hip_runtime.h>

#if __has_builtin(__match_any_sync) && TALLY_MATCH
__device__ unsigned int peers(int key) {
  unsigned int votes = __ballot(key > 0);
  return votes;
}
#endif
"""})
    assert [(f[0], f[3]) for f in _found(tree, capsys, monkeypatch)] == [("ROC201", ["TALLY_MATCH"])] * 2


def test_an_alternative_operator_spelling_is_no_macro_to_ask_about(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path, {
        "k.cu": "#if LIB_API_LEVEL >= 3 and not defined(LIB_NO_VOTE)\n"
                "__global__ void k(unsigned* m) { *m = __ballot_sync(0xffffffff, threadIdx.x & 1); }\n#endif\n",
    })
    assert {tuple(macros) for _code, _path, _line, macros in _found(tree, capsys, monkeypatch)} == {
        ("LIB_API_LEVEL", "LIB_NO_VOTE")}
