"""Which macros a finding's path depends on (issue 37 item 6): a header's own include guard is
never one of them, wherever the guard stands after a ``#pragma once``."""
from __future__ import annotations

import json
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


@pytest.mark.parametrize("pragma", ["", "#pragma once\n", "#pragma once\n#pragma GCC system_header\n"])
def test_a_guard_after_pragmas_is_the_include_guard(pragma):
    text = GUARDED.format(pragma=pragma).encode()
    assert include_guard(directives(text)) == "_tile_gemm_cuh"
    pp = Conditionals(text, (), (), "__HIP_PLATFORM_AMD__")
    guard = pp.header_guard()
    assert guard is not None and guard.branches[0].condition.strip() == "_tile_gemm_cuh"


def test_a_switch_after_pragma_once_is_not_taken_for_a_guard():
    # defines another macro than the one it tests: a switch, not a guard
    assert include_guard(directives(b"#pragma once\n#ifndef A\n#define B\n#endif\n")) is None


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
