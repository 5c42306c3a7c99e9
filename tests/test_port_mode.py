"""Port or guard (design §2e): a project with no HIP build is checked as the port it is
waiting for; one with a HIP build keeps the CUDA-only files quiet unless --port names them.
Every C-family finding says which (JSON, SARIF, text summary), and files set aside are
counted, never hidden behind a bare "All checks passed!"."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import run_cli
from test_project_cpp import model_for, where, write_tree

from rocmlint.config import ConfigResolver
from rocmlint.cpp.preprocessor import Conditionals
from rocmlint.project import activate

KERNEL = """\
#include <cuda_runtime.h>
__global__ void count(const int* in, int n, int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned m = __ballot_sync(0xffffffff, i < n && in[i] > 0);
  if (threadIdx.x == 0) atomicAdd(out, __popc(m));
}
"""
# A CUDA backend behind an option that defaults to off, a SYCL backend that may target AMD
# (it names HIP, so the project has a model), and no HIP build anywhere.
NO_HIP_BUILD = {
    "CMakeLists.txt": """\
project(demo LANGUAGES CXX)
option(DEMO_BUILD_CUDA "cuda" OFF)
add_library(demo core.cpp)
if(DEMO_BUILD_CUDA)
  enable_language(CUDA)
  add_subdirectory(cuda)
endif()
if(DEMO_SYCL_TARGET STREQUAL "amd")
  target_compile_definitions(demo PRIVATE __HIP_PLATFORM_AMD__)
  target_sources(demo PRIVATE sycl/queue.cpp)
endif()
""",
    "cuda/CMakeLists.txt": "target_sources(demo PRIVATE count.cu)\n",
    "cuda/count.cu": KERNEL,
    "core.cpp": "int answer() { return 42; }\n",
    "sycl/queue.cpp": "#if defined(__HIP_PLATFORM_AMD__)\n#include <hip/hip_runtime.h>\n#endif\n",
}
# The same CUDA backend in a project whose HIP backend is a folder of its own.
WITH_HIP_BUILD = {
    **NO_HIP_BUILD,
    "CMakeLists.txt": NO_HIP_BUILD["CMakeLists.txt"] + """\
option(DEMO_BUILD_HIP "hip" OFF)
if(DEMO_BUILD_HIP)
  enable_language(HIP)
  add_subdirectory(hip)
endif()
""",
    "hip/CMakeLists.txt": "target_sources(demo PRIVATE count.hip)\n",
    "hip/count.hip": KERNEL.replace("<cuda_runtime.h>", "<hip/hip_runtime.h>").replace("unsigned m", "uint64_t m")
    .replace("__ballot_sync(0xffffffff, ", "__ballot(").replace("__popc", "__popcll"),
}


@pytest.fixture(autouse=True)
def no_active_project(monkeypatch):
    monkeypatch.setenv("ROCMLINT_DEBUG", "1")
    yield
    activate(None)


def check(root: Path, capsys, *args: str) -> tuple[int, str, str]:
    return run_cli(["check", "--no-cache", "--select", "ROC2,ROC3", *args], root, capsys)


def json_findings(root: Path, capsys, *args: str) -> list[dict]:
    code, out, err = check(root, capsys, "--output-format", "json", *args, ".")
    assert code in (0, 1), err
    return json.loads(out)


def test_a_project_with_no_hip_build_is_a_port_and_its_cuda_backend_is_reported(tmp_path, capsys):
    root = write_tree(tmp_path, NO_HIP_BUILD)
    model = model_for(root)
    assert model.facts.port and model.mode_of(root / "cuda/count.cu") == "port"
    assert model.file_verdict(root / "cuda/count.cu").value is True  # the port compiles the CUDA option
    found = json_findings(root, capsys)
    assert where(found) == {("ROC303", "cuda/count.cu", 1), ("ROC201", "cuda/count.cu", 4),
                            ("ROC203", "cuda/count.cu", 4), ("ROC202", "cuda/count.cu", 5)}
    assert {f["mode"] for f in found} == {"port"}


def test_a_project_with_a_hip_build_guards_its_cuda_only_backend(tmp_path, capsys):
    root = write_tree(tmp_path, WITH_HIP_BUILD)
    model = model_for(root)
    assert not model.facts.port and model.mode_of(root / "cuda/count.cu") == "guard"
    assert model.hip_build[0].what == "enable_language(HIP)"
    assert model.file_verdict(root / "cuda/count.cu").value is False
    assert json_findings(root, capsys) == []
    code, out, _ = check(root, capsys, ".")
    assert code == 0
    assert "All checks passed!" not in out
    assert "1 C-family file not compiled by the project's AMD build was not checked" in out


def test_port_names_a_folder_to_lint_as_a_port_where_the_hip_build_does_not_compile_it(tmp_path, capsys):
    root = write_tree(tmp_path, WITH_HIP_BUILD)
    found = json_findings(root, capsys, "--port", "cuda")
    assert ("ROC201", "cuda/count.cu", 4) in where(found) and {f["mode"] for f in found} == {"port"}
    (root / "pyproject.toml").write_text('[tool.rocmlint]\nport = ["cuda"]\n')
    assert where(json_findings(root, capsys)) == where(found)
    code, _out, err = check(root, capsys, "--port", "no/such/folder", ".")
    assert code == 2 and "--port: no such file or folder" in err


def test_a_file_named_on_the_command_line_outside_the_amd_build_gets_a_note_and_pre_commit_stays_quiet(
        tmp_path, capsys):
    root = write_tree(tmp_path, WITH_HIP_BUILD)
    code, out, err = check(root, capsys, "cuda/count.cu")
    assert code == 0
    assert "note: cuda/count.cu: not compiled by the project's AMD build" in err
    assert "was not checked for device hazards" in out
    code, out, err = check(root, capsys, "--force-exclude", "cuda/count.cu")
    assert code == 0 and "note:" not in err and out == "All checks passed!\n"


def test_sarif_and_the_text_summary_carry_the_mode(tmp_path, capsys):
    root = write_tree(tmp_path, NO_HIP_BUILD)
    code, out, _ = check(root, capsys, "--output-format", "sarif", ".")
    results = json.loads(out)["runs"][0]["results"]
    assert results and {r["properties"]["mode"] for r in results} == {"port"}
    _code, out, _ = check(root, capsys, ".")
    assert "Port mode: 4 findings are in CUDA code with no HIP build" in out


def test_explain_says_which_mode_applies_and_why(tmp_path, capsys):
    root = write_tree(tmp_path, WITH_HIP_BUILD)
    code, out, _ = run_cli(["explain", "--no-cache", "cuda/count.cu:4"], root, capsys)
    assert code == 0
    assert "mode: guard (the project has a HIP build: enable_language(HIP) (CMakeLists.txt:14)" in out
    assert "NOT compiled by the AMD build" in out
    code, out, _ = run_cli(["explain", "--no-cache", "--port", "cuda", "cuda/count.cu:4"], root, capsys)
    assert "mode: port (named by --port" in out and "AMD build compiles this line: yes" in out
    write_tree(root, NO_HIP_BUILD)
    (root / "hip/CMakeLists.txt").unlink()
    (root / "hip/count.hip").unlink()
    code, out, _ = run_cli(["explain", "--no-cache", "cuda/count.cu:4"], root, capsys)
    assert "mode: port (the project has no HIP build" in out


# --- names, templates, included files and other decided facts --------------------------
def test_a_lone_file_decides_a_macro_by_the_platform_its_name_states(tmp_path, capsys):
    source = (b"#ifdef GGML_USE_HIP\n#define FULL_MASK 0xffffffffffffffffull\n#else\n"
              b"__device__ bool all_of(bool x) { return __all_sync(0xffffffff, x); }\n#endif\n")
    settings = ConfigResolver().for_path(tmp_path)
    table = Conditionals(source, settings.all_rocm_macros, settings.all_nvidia_macros, settings.gate_macro)
    assert table.amd[3] is False  # the #else of a HIP switch
    (tmp_path / "lone.cu").write_bytes(source)
    code, out, _ = run_cli(["check", "--no-cache", "lone.cu"], tmp_path, capsys)
    assert code == 0 and "ROC203" not in out
    code, out, _ = run_cli(["explain", "--no-cache", "lone.cu:4"], tmp_path, capsys)
    assert "GGML_USE_HIP: defined by its name: its name says HIP/ROCm" in out


def test_template_macros_feed_the_model_and_rank_above_the_name(tmp_path):
    root = write_tree(tmp_path, {
        **WITH_HIP_BUILD,
        "CMakeLists.txt": WITH_HIP_BUILD["CMakeLists.txt"] + "set(DEMO_ENABLE_CUDA ON)\n"
                          "configure_file(config.h.in ${PROJECT_BINARY_DIR}/demo/config.h)\n",
        "config.h.in": "#cmakedefine DEMO_ENABLE_CUDA\n#cmakedefine DEMO_USE_HIP\n#cmakedefine01 DEMO_FEATURE\n"
                       "#if defined(DEMO_USE_HIP)\n#define DEMO_WAVE_AWARE\n#endif\n",
        "core.cpp": '#include "demo/config.h"\nint answer() { return 42; }\n',
    })
    model = model_for(root)
    cuda = model.macro("DEMO_ENABLE_CUDA")
    assert cuda.state is True and "configure_file() writes `#cmakedefine DEMO_ENABLE_CUDA`" in cuda.evidence[0].what
    hip = model.macro("DEMO_USE_HIP")  # written from a variable no file sets: the name decides
    assert hip.state is True and "by its name: no build file sets it" in hip.evidence[0].what
    assert hip.evidence[0].where == "config.h.in:2"
    written = model.macro("DEMO_FEATURE")  # written from a value nothing decides: unknown, and why
    assert written.state is None and written.evidence[0].where == "config.h.in:3"
    assert model.macro("DEMO_WAVE_AWARE").state is True  # the template's own #define, in the written header
    assert "demo/config.h" in model.files


def test_an_error_the_amd_build_reaches_keeps_the_file_out_of_it(tmp_path, capsys):
    root = write_tree(tmp_path, {
        **WITH_HIP_BUILD,
        "include/cuda_only.h": '#pragma once\n#if !defined(DEMO_ENABLE_CUDA)\n#error "CUDA backend only"\n#endif\n'
                               "#include <cuda_runtime.h>\n",
        "include/either.h": '#pragma once\n#if !defined(DEMO_ENABLE_CUDA) && !defined(DEMO_USE_HIP)\n'
                            '#error "no GPU backend"\n#endif\n#include <cuda_runtime.h>\n',
    })
    model = model_for(root)
    verdict = model.file_verdict(root / "include/cuda_only.h")
    assert verdict.value is False and "its #error fires in the AMD build" in verdict.evidence[0].what
    assert model.file_verdict(root / "include/either.h").value is True
    assert ("ROC303", "include/either.h", 5) in where(json_findings(root, capsys))


def test_a_file_reached_only_through_an_include_of_an_unusual_extension_is_in_the_model(tmp_path, capsys):
    root = write_tree(tmp_path, {
        **WITH_HIP_BUILD,
        "hip/ops.inc": '#include "ops.inc_fast"\n',
        "hip/ops.inc_fast": '__device__ unsigned lane() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); '
                            'return l; }\n',
        "hip/count.hip": WITH_HIP_BUILD["hip/count.hip"] + '#include "ops.inc"\n',
    })
    model = model_for(root)
    assert model.file_verdict(root / "hip/ops.inc_fast").value is True
    assert "hip/ops.inc_fast" in model.extra_stats
    assert ("ROC301", "hip/ops.inc_fast", 1) in where(json_findings(root, capsys))
    code, out, _ = run_cli(["explain", "--no-cache", "hip/ops.inc_fast:1"], root, capsys)
    assert code == 0 and "included from hip/ops.inc:1" in out


def test_code_in_an_argument_the_amd_definition_drops_is_not_compiled_there(tmp_path, capsys):
    root = write_tree(tmp_path, {
        **WITH_HIP_BUILD,
        "hip/select.h": "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define HIP_OR_CUDA(a, b) a\n"
                        "#else\n#define HIP_OR_CUDA(a, b) b\n#endif\n",
        "hip/count.hip": '#include "select.h"\n' + WITH_HIP_BUILD["hip/count.hip"] +
                         "__device__ float f(float v) {\n"
                         "  return HIP_OR_CUDA(__shfl_xor(v, 1), __shfl_xor_sync(0xffffffff, v, 1));\n}\n",
    })
    found = where(json_findings(root, capsys))
    assert not any(code == "ROC203" and path == "hip/count.hip" for code, path, _ in found)
    code, out, _ = run_cli(["explain", "--no-cache", "hip/count.hip:9"], root, capsys)
    assert "macro argument: HIP_OR_CUDA(a, b) -> a in the AMD build (hip/select.h:3) drops its argument b" in out


def test_a_path_into_a_folder_of_the_project_is_its_own_header_not_libcuxx(tmp_path, capsys):
    root = write_tree(tmp_path, {
        **WITH_HIP_BUILD,
        "cuda/components/reduce.cuh": "#pragma once\n",
        "tools/convert.hpp": '#include "cuda/components/sorting.cuh"\n#include <cuda/components/reduce.cuh>\n'
                             "#include <cuda/std/atomic>\n#include <cuda/unknown/thing.cuh>\n",
    })
    found = {(path, line) for code, path, line in where(json_findings(root, capsys)) if code == "ROC303"}
    # a file since removed from the project's cuda/ folder, and one in it: the project's own;
    # libcu++'s cuda/std, and a cuda/ path the project has no folder for: the toolkit's
    assert {line for path, line in found if path == "tools/convert.hpp"} == {3, 4}


# A PyTorch extension nobody built for AMD: PyTorch would hipify it on ROCm, but nothing in it
# names HIP or ROCm (a comment doing so is no build for AMD).
TORCH_EXTENSION = {
    "setup.py": """\
# CUDA only for now; a ROCm build is not planned.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name="ext", ext_modules=[CUDAExtension("ext", ["csrc/count.cu"],
      extra_compile_args={"nvcc": ["--use_fast_math", "-gencode", "arch=compute_80,code=sm_80"]})],
      cmdclass={"build_ext": BuildExtension})
""",
    "csrc/count.cu": KERNEL,
}


def test_a_torch_extension_nothing_names_hip_in_is_a_port_with_hipify_renames(tmp_path, capsys):
    root = write_tree(tmp_path, TORCH_EXTENSION)
    model = model_for(root)
    assert model.facts.port and model.mode_of(root / "csrc/count.cu") == "port"
    assert model.file_verdict(root / "csrc/count.cu").value is True  # nvcc-only flags: the port compiles them too
    assert "never built for AMD" in model.mode_lines(root / "csrc/count.cu")[0]
    found = json_findings(root, capsys)
    # <cuda_runtime.h> is renamed by the hipify PyTorch runs: no ROC303
    assert where(found) == {("ROC201", "csrc/count.cu", 4), ("ROC203", "csrc/count.cu", 4),
                            ("ROC202", "csrc/count.cu", 5)}
    assert {f["mode"] for f in found} == {"port"}


@pytest.mark.parametrize("mention", [
    ("setup.py", "import torch\nIS_ROCM = torch.version.hip is not None\n"),
    ("csrc/count.cu", "#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime.h>\n#endif\n"),
])
def test_a_torch_extension_that_names_hip_keeps_its_guards(tmp_path, capsys, mention):
    root = write_tree(tmp_path, TORCH_EXTENSION)
    rel, text = mention
    (root / rel).write_text(text + (root / rel).read_text())
    model = model_for(root)
    assert not model.facts.port and model.mode_of(root / "csrc/count.cu") == "guard"


def test_an_explicit_hipify_run_is_a_hip_build(tmp_path, capsys):
    root = write_tree(tmp_path, {**TORCH_EXTENSION, "setup.py": TORCH_EXTENSION["setup.py"].replace(
        "from setuptools import setup\n",
        "from setuptools import setup\nfrom torch.utils.hipify import hipify_python\n")})
    assert not model_for(root).facts.port
