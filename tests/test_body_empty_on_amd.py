"""ROC304: `rocmlint explain` at a function empty on AMD shows its gates and their values."""
from __future__ import annotations

from test_cli import run_cli

SOURCE = ("__device__ float4 mma_tile(const half* a, float4 c) {\n"
          "  float4 d = c;\n"
          "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
          "  asm volatile(\"mma.sync ...\" : \"+f\"(d.x) : \"r\"(a[0]));\n"
          "#endif\n"
          "#if NVIDIA_EXTRA_PATH\n"
          "  d.y += 1.0f;\n"
          "#endif\n"
          "  return d;\n"
          "}\n")


def test_explain_shows_each_gate_and_its_value(tmp_path, capsys):
    (tmp_path / "rocmlint.toml").write_text('root = true\nnvidia-macros = ["NVIDIA_EXTRA_PATH"]\n')
    (tmp_path / "tile.cu").write_text(SOURCE)
    code, out, _err = run_cli(["explain", "--no-cache", "tile.cu:1"], tmp_path, capsys)
    assert code == 0
    assert "ROC304 body-empty-on-amd: REPORTED" in out and "lines 3-5" in out
    assert "gate at tile.cu:3:" in out and "gate at tile.cu:6:" in out
    assert "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  -> NOT taken on AMD" in out
    assert "#if NVIDIA_EXTRA_PATH  -> NOT taken on AMD" in out and "NVIDIA_EXTRA_PATH: undefined" in out


def test_an_unknown_gate_is_not_proof(tmp_path, capsys):
    (tmp_path / "rocmlint.toml").write_text("root = true\n")
    (tmp_path / "tile.cu").write_text(SOURCE.replace("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
                                                     "SOME_PROJECT_SWITCH"))
    _code, out, _err = run_cli(["check", "--no-cache", "--select", "ROC304", "tile.cu"], tmp_path, capsys)
    assert "All checks passed!" in out  # the AMD build may take that branch


def _roc304(code: str) -> list[tuple[int, str]]:
    from rocmlint.config import Settings
    from rocmlint.engine import analyse_buffer, rules_for

    found = analyse_buffer("k.cu", code.encode(), "cpp", Settings(), rules_for(("ROC304",), (), "cpp"))
    return [(f.line, f.message.split(":")[0]) for f in found]


def test_code_no_build_compiles_and_a_compiler_barrier_are_not_amd_gaps():
    # `#if 0` leaves NVIDIA's build without the code too.
    assert _roc304("__global__ void dump(int* out) {\n#if 0\n  out[0] = 1;\n#endif\n}\n") == []
    # An empty asm template with "+r" is a compiler barrier: it writes nothing.
    assert _roc304("__device__ void fence(unsigned& r) {\n#if defined(__CUDA_ARCH__)\n"
                   "  asm volatile(\"\" : \"+r\"(r) :: \"memory\");\n#endif\n}\n") == []
    # Leaving AMD out by name is still a silent no-op there: the function needs a trap or an error.
    excluded = "__global__ void histogram(int* out) {\n#ifndef __HIP_PLATFORM_AMD__\n  out[0] = 1;\n#endif\n}\n"
    assert _roc304(excluded) == [(1, "`histogram` is empty on AMD")]
    # An NVIDIA architecture test around a real write is the gap the rule exists for.
    mma = "__device__ void mma(float* d) {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n  d[0] = 1.f;\n#endif\n}\n"
    assert _roc304(mma) == [(1, "`mma` is empty on AMD")]
