"""The C++ project model: what the AMD build compiles, macro values with evidence, shims,
hipify, build files, compile_commands.json, explain, and bad input."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_cli import run_cli

from rocmlint.config import ConfigResolver, Settings
from rocmlint.cpp.preprocessor import Conditionals
from rocmlint.project import Project, activate, find_root

# A small dual-platform project in the style of a GPU backend with vendor headers.
COMMON = """\
#pragma once
#include <cstdint>
#if defined(TOY_USE_HIP)
#include "vendors/hip.h"
#else
#include "vendors/cuda.h"
#endif

#define WARP_LANES 32

#if !defined(TOY_USE_HIP) && CUDART_VERSION >= 11070
#define TOY_USE_CUB
#endif

#if !defined(TOY_USE_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define CP_ASYNC_AVAILABLE
#endif
"""
HIP_VENDOR = """\
#pragma once
#include <hip/hip_runtime.h>
#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)
#define __CUDA_ARCH__ 1300
"""
CUDA_VENDOR = """\
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
"""
CP_ASYNC = """\
#pragma once
#include "common.cuh"

static __device__ void cp_async_wait() {
#ifdef CP_ASYNC_AVAILABLE
    asm volatile("cp.async.wait_all;");
#endif
}
"""
KERNEL = """\
#include "common.cuh"
#include "cp-async.cuh"
#ifdef TOY_USE_CUB
#include <cub/cub.cuh>
#endif

__global__ void row_max(const float * x, float * dst) {
    float v = x[threadIdx.x];
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset, 32));
    }
#if defined(__CUDA_ARCH__)
    asm volatile("bar.sync 1, 64;");
#endif
    if (threadIdx.x % warpSize == 0) dst[blockIdx.x] = v;
}
"""
TOY = {
    "src/common.cuh": COMMON,
    "src/vendors/hip.h": HIP_VENDOR,
    "src/vendors/cuda.h": CUDA_VENDOR,
    "src/cp-async.cuh": CP_ASYNC,
    "src/rowmax.cu": KERNEL,
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(autouse=True)
def no_active_project(monkeypatch):
    monkeypatch.setenv("ROCMLINT_DEBUG", "1")  # a model bug raises here instead of a warning
    yield
    activate(None)  # the CLI leaves its model active: later tests lint lone buffers


def findings(root: Path, capsys, *extra) -> list[dict]:
    code, out, err = run_cli(["check", "--no-cache", "--output-format", "json", "--select", "ROC2,ROC3",
                              *extra, "."], root, capsys)
    assert code in (0, 1), err
    return json.loads(out)


def model_for(root: Path, settings: Settings | None = None, **kw):
    project = Project(root, settings or ConfigResolver().for_path(root), **kw)
    project.prepare(["cpp"])
    return project.part("cpp")


def where(found: list[dict]) -> set[tuple[str, str, int]]:
    return {(f["code"], f["path"].removeprefix("./"), f["line"]) for f in found}


@pytest.fixture
def toy(tmp_path):
    return write_tree(tmp_path, TOY)


# --- macro values and reachability ------------------------------------------------------
def test_rocm_macro_inferred_from_the_branch_that_includes_the_hip_vendor_header(toy):
    model = model_for(toy)
    fact = model.macro("TOY_USE_HIP")
    assert fact.state is True
    assert fact.evidence[0].where == "src/common.cuh:4"


def test_derived_macro_defined_only_under_a_condition_false_on_amd_is_undefined(toy):
    model = model_for(toy)
    fact = model.macro("CP_ASYNC_AVAILABLE", toy / "src/cp-async.cuh")
    assert fact.state is False
    assert fact.evidence[0].where == "src/common.cuh:16"
    assert model.macro("TOY_USE_CUB").state is False


def test_project_redefinition_overrides_the_nvidia_table(toy):
    model = model_for(toy)
    fact = model.macro("__CUDA_ARCH__", toy / "src/rowmax.cu")
    assert (fact.state, fact.value) == (True, 1300)
    assert fact.evidence[0].where == "src/vendors/hip.h:4"
    assert model.macro("CUDART_VERSION").state is False  # table: never defined on AMD


def test_header_only_behind_an_nvidia_include_is_not_in_the_amd_build(toy):
    model = model_for(toy)
    verdict = model.file_verdict(toy / "src/vendors/cuda.h")
    assert verdict.value is False
    assert verdict.evidence[0].where == "src/common.cuh:6"
    assert model.file_verdict(toy / "src/vendors/hip.h").value is True
    chain = model.include_chain(toy / "src/vendors/hip.h")
    assert chain[-1] == ("src/common.cuh", 4)


def test_project_model_drops_what_the_amd_build_never_sees_and_keeps_recall(toy, capsys):
    found = where(findings(toy, capsys))
    # vendors/cuda.h, the CUB include and the cp.async PTX are NVIDIA-only; the shim drops the mask.
    assert not any(path == "src/vendors/cuda.h" for _, path, _ in found)
    assert ("ROC303", "src/rowmax.cu", 4) not in found
    assert ("ROC301", "src/cp-async.cuh", 6) not in found
    assert ("ROC203", "src/rowmax.cu", 10) not in found
    # hip.h defines __CUDA_ARCH__ for AMD: this PTX is compiled there (hidden before).
    assert ("ROC301", "src/rowmax.cu", 13) in found


def test_without_the_model_the_same_tree_reports_the_nvidia_only_code(toy, capsys):
    from rocmlint.engine import active_rules, analyse_buffer

    settings = Settings()
    rules = active_rules(settings, "cpp")
    buffer = (toy / "src/vendors/cuda.h").read_bytes()
    assert [f.code for f in analyse_buffer("cuda.h", buffer, "cpp", settings, rules)] == ["ROC303", "ROC303"]


def test_json_findings_carry_the_evidence(toy, capsys):
    found = findings(toy, capsys)
    ptx = next(f for f in found if f["code"] == "ROC301" and f["line"] == 13)
    text = "\n".join(ptx["evidence"])
    assert "#if defined(__CUDA_ARCH__)" in text and "src/vendors/hip.h:4" in text


def test_shim_reports_the_dropped_mask(toy):
    shim = model_for(toy).shim("__shfl_xor_sync")
    assert shim is not None and shim.drops(0) and not shim.drops(1)
    assert shim.where == "src/vendors/hip.h:3"


def test_file_own_defines_still_win_in_order(toy):
    model = model_for(toy)
    source = b"#undef TOY_USE_HIP\n#ifdef TOY_USE_HIP\nx\n#endif\n#define CP_ASYNC_AVAILABLE\n#ifdef CP_ASYNC_AVAILABLE\ny\n#endif\n"
    path = toy / "src" / "extra.cu"
    path.write_bytes(source)
    pp = Conditionals(source, (), (), "__HIP_PLATFORM_AMD__", model.resolver(toy / "src/rowmax.cu"))
    assert pp.nvidia_only(2) and not pp.nvidia_only(6)


def test_macro_defined_only_in_a_dead_branch_is_undefined_in_the_same_file():
    source = (b"#ifdef __CUDA_ARCH__\n#define USE_PTX\n#endif\n"
              b"#ifdef USE_PTX\nasm(\"x\");\n#endif\n")
    settings = Settings()
    pp = Conditionals(source, settings.all_rocm_macros, settings.all_nvidia_macros, settings.gate_macro)
    assert pp.nvidia_only(4)


def test_cuda_only_code_without_hip_anywhere_has_no_model_and_is_reported_as_before(tmp_path, capsys):
    write_tree(tmp_path, {"bench/main.cu": "#include <cuda_fp16.h>\n#if CUDA_VERSION >= 11000\n"
                                           "__device__ void f() { asm(\"membar.gl;\"); }\n#endif\n"})
    assert model_for(tmp_path) is None
    found = where(findings(tmp_path, capsys))
    assert found == {("ROC303", "bench/main.cu", 1), ("ROC301", "bench/main.cu", 3)}


@pytest.mark.parametrize("cmake, read, amd", [
    ("project(bench LANGUAGES CXX CUDA)\nif(CMAKE_SYSTEM_PROCESSOR MATCHES \"AMD64\")\nendif()\n", False, False),
    # a ROCm switch that compiles nothing as HIP is no HIP build (design §2e): nothing to model
    ("project(bench LANGUAGES CXX CUDA)\nif(USE_ROCM)\n  add_compile_definitions(BENCH_HIP)\nendif()\n", True, False),
    ("project(bench LANGUAGES CXX CUDA)\nif(USE_ROCM)\n  enable_language(HIP)\nendif()\n", True, True),
    ("project(bench LANGUAGES CXX CUDA)\nif(GPU STREQUAL \"amd\")\nendif()\n", True, False),
])
def test_build_files_that_name_no_amd_build_are_not_interpreted(tmp_path, monkeypatch, cmake, read, amd):
    """No HIP in the sources and no word by which a build reader recognises an AMD build
    (HIP, ROCm, amd, a torch extension) in the build files: nothing to model, known without
    interpreting them (a big CUDA tree's CMake took most of a second)."""
    import rocmlint.project.cpp as project_cpp

    calls = []
    real = project_cpp._read_build_facts
    monkeypatch.setattr(project_cpp, "_read_build_facts", lambda *a, **k: calls.append(1) or real(*a, **k))
    write_tree(tmp_path, {"CMakeLists.txt": cmake, "src/k.cu": HAZARD})
    assert (model_for(tmp_path) is not None) == amd
    assert bool(calls) == read


# --- build files --------------------------------------------------------------------
CMAKE_TOP = """\
set(BUILD_VARIANT_CUDA "cuda")
if(TARGET_NAME STREQUAL "hstu")
  if(NOT BUILD_VARIANT STREQUAL BUILD_VARIANT_CUDA)
    message(FATAL_ERROR "hstu needs CUDA")
  endif()
  add_subdirectory(hopper)
elseif(TARGET_NAME STREQUAL "main")
  add_subdirectory(main)
endif()
"""
CMAKE_MAIN = """\
file(GLOB_RECURSE main_cuda_only src/cutlass_ext/*.cu)
file(GLOB main_gpu src/*.cu src/fmha/fmha_*.cu)
gpu_library(NAME main GPU_SRCS ${main_gpu} CUDA_SPECIFIC_SRCS ${main_cuda_only} HIP_SPECIFIC_SRCS)
"""
CMAKE_HIP = """\
enable_language(HIP)
find_package(hip REQUIRED)
add_compile_definitions(TOYLIB_USE_HIP)
target_compile_definitions(toylib PRIVATE TOYLIB_HIP_VERSION=6)
"""
CMAKE_BACKEND = """\
find_package(CUDAToolkit)
if (CUDAToolkit_FOUND)
  file(GLOB SRCS "*.cu")
endif()
"""
HAZARD = "__global__ void k(unsigned *o) { o[0] = __ballot_sync(0xffffffff, 1); }\n"
HIP_MARK = "#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime.h>\n#endif\n"


def test_cmake_fatal_error_unless_cuda_makes_a_folder_nvidia_only(tmp_path):
    write_tree(tmp_path, {"CMakeLists.txt": CMAKE_TOP, "hopper/k.cu": HAZARD, "main/src/a.cu": HIP_MARK + HAZARD,
                          "main/src/b.hip": HIP_MARK})  # the project has a HIP build (design §2e)
    model = model_for(tmp_path)
    verdict = model.file_verdict(tmp_path / "hopper/k.cu")
    assert verdict.value is False and verdict.evidence[0].where == "CMakeLists.txt:6"
    assert model.file_verdict(tmp_path / "main/src/a.cu").value is True


def test_cmake_cuda_specific_sources_and_filtered_globs(tmp_path):
    write_tree(tmp_path, {
        "main/CMakeLists.txt": CMAKE_MAIN, "main/src/a.cu": HIP_MARK + HAZARD,
        "main/src/cutlass_ext/deep/g.cu": HAZARD, "main/src/fmha/fmha_fwd.cu": HAZARD,
        "main/src/fmha/example.cu": HAZARD,
    })
    model = model_for(tmp_path)
    assert model.file_verdict(tmp_path / "main/src/cutlass_ext/deep/g.cu").value is False
    assert model.file_verdict(tmp_path / "main/src/fmha/fmha_fwd.cu").value is True
    unbuilt = model.file_verdict(tmp_path / "main/src/fmha/example.cu")
    assert unbuilt.value is False and "fmha_*.cu" in unbuilt.evidence[0].what


def test_cuda_toolkit_switch_is_not_an_nvidia_only_source_list(tmp_path):
    # A CUDA backend's CMakeLists whose sources a HIP CMakeLists elsewhere compiles too.
    write_tree(tmp_path, {"cuda/CMakeLists.txt": CMAKE_BACKEND, "cuda/k.cu": HIP_MARK + HAZARD})
    assert model_for(tmp_path).file_verdict(tmp_path / "cuda/k.cu").value is True


def test_hip_only_cmakelists_defines_macros_for_the_amd_build(tmp_path):
    write_tree(tmp_path, {"hip/CMakeLists.txt": CMAKE_HIP, "src/a.cu": HIP_MARK + HAZARD})
    model = model_for(tmp_path)
    fact = model.macro("TOYLIB_USE_HIP")
    assert fact.state is True and fact.evidence[0].where == "hip/CMakeLists.txt:3"
    assert (model.macro("TOYLIB_HIP_VERSION").state, model.macro("TOYLIB_HIP_VERSION").value) == (True, 6)


# --- hipify -------------------------------------------------------------------------
SETUP = "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\nsetup(ext_modules=[CUDAExtension('x', ['k.cu'])])\n"
HIPIFIED = "#include <cuda_runtime.h>\n#include <cuda/pipeline>\n__global__ void k() {}\n"


def test_hipify_auto_from_a_torch_extension_keeps_only_unmappable_headers(tmp_path, capsys):
    write_tree(tmp_path, {"setup.py": SETUP, "k.cu": HIPIFIED})
    assert where(findings(tmp_path, capsys)) == {("ROC303", "k.cu", 2)}
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nhipify = false\n")
    assert where(findings(tmp_path, capsys)) == {("ROC303", "k.cu", 1), ("ROC303", "k.cu", 2)}


def test_hipify_covers_the_headers_and_cpp_sources_of_a_torch_extension(tmp_path, capsys):
    """torch's hipify rewrites the sources and the headers they include, not only .cu/.cuh."""
    header = "#pragma once\n#include <cuda_runtime.h>\n#include <cublas_v2.h>\n"
    source = '#include "ctx.h"\n#include <cuda_fp16.h>\nvoid launch() {}\n'
    write_tree(tmp_path, {"setup.py": SETUP, "csrc/ctx.h": header, "csrc/ops.cpp": source, "k.cu": HIPIFIED})
    assert where(findings(tmp_path, capsys)) == {("ROC303", "k.cu", 2)}


def test_an_extension_build_in_a_helper_setup_py_imports_hipifies_too(tmp_path, capsys):
    """setup.py often leaves the extension build to the project's own module (`from
    op_builder import Builder`): that module's CUDAExtension or hipify call counts."""
    setup = "from setuptools import setup\nfrom op_builder.base import Builder\nsetup(ext_modules=Builder().ext())\n"
    builder = ("import os\n\n\nclass Builder:\n    def ext(self):\n"
               "        from torch.utils.cpp_extension import CUDAExtension\n"
               "        return [CUDAExtension('ops', ['csrc/k.cu'])]\n")
    files = {"setup.py": setup, "op_builder/__init__.py": "", "op_builder/base.py": builder,
             "csrc/k.cu": HIPIFIED, "csrc/ctx.h": "#pragma once\n#include <cuda_runtime.h>\n"}
    write_tree(tmp_path, files)
    assert where(findings(tmp_path, capsys)) == {("ROC303", "csrc/k.cu", 2)}
    model = model_for(tmp_path)
    assert model.hipified(tmp_path / "csrc/ctx.h").evidence[0].where == "op_builder/base.py:6"
    # Without the extension build in the helper, nothing says the sources are hipified.
    (tmp_path / "op_builder/base.py").write_text("class Builder:\n    def ext(self):\n        return []\n")
    assert where(findings(tmp_path, capsys)) == {("ROC303", "csrc/k.cu", 1), ("ROC303", "csrc/k.cu", 2),
                                                 ("ROC303", "csrc/ctx.h", 2)}


def test_a_python_only_build_leaves_sources_no_python_file_names_unbuilt(tmp_path, capsys):
    """setup.py and the modules around it name every source they compile (an extension's
    list, a JIT ``load(sources=...)``): a kernel no Python file names is in no build, until
    another build system (CMake) could compile it."""
    ptx = "__global__ void k() { asm volatile(\"membar.gl;\"); }\n"
    files = {"setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"
                         "import torch\nIS_HIP = torch.version.hip is not None\n"
                         "ext = CUDAExtension('ops', ['csrc/built.cu'])\n",
             "pkg/jit.py": "from torch.utils.cpp_extension import load\n"
                           "mod = load('jit_ops', sources=['csrc/jit_only.cu'])\n",
             "csrc/built.cu": ptx, "csrc/jit_only.cu": ptx, "csrc/attic/old.cu": ptx}
    write_tree(tmp_path, files)
    expected = {("ROC301", "csrc/built.cu", 1), ("ROC301", "csrc/jit_only.cu", 1)}
    assert where(findings(tmp_path, capsys)) == expected
    # A Makefile that only wraps pip and cleans folders compiles nothing itself
    (tmp_path / "Makefile").write_text("install:\n\tpython3 -m pip install .\nclean:\n\trm -r build/ || true\n")
    assert where(findings(tmp_path, capsys)) == expected
    # one that compiles a source could build the rest
    (tmp_path / "Makefile").write_text("old.o: csrc/attic/old.cu\n\tnvcc -c $< -o $@\n")
    assert ("ROC301", "csrc/attic/old.cu", 1) in where(findings(tmp_path, capsys))
    (tmp_path / "Makefile").unlink()
    (tmp_path / "CMakeLists.txt").write_text("add_subdirectory(csrc/attic)\n")
    assert ("ROC301", "csrc/attic/old.cu", 1) in where(findings(tmp_path, capsys))


def test_a_source_the_build_leaves_out_of_a_folder_it_lists_by_name_is_not_compiled(tmp_path, capsys):
    """CMake names kernels/'s sources one by one: a source beside them that no build file names
    is in no build (nor the header only it includes). Any doubt keeps it compiled: a list the
    reader cannot resolve, a ``${name}.cu`` spelled from words, a glob of its folder, a Python
    file or a script beside it naming it, a Makefile that compiles its folder, a meson build,
    an include from a compiled source."""
    ptx = '#include "only_old.h"\n__global__ void k() { asm volatile("membar.gl;"); }\n'
    files = {"CMakeLists.txt": "project(p LANGUAGES CXX HIP)\nadd_library(p kernels/new.cu)\n",
             "kernels/new.cu": ptx.replace("only_old.h", "old_impl.cu"), "kernels/old.cu": ptx,
             "kernels/only_old.h": "__device__ void f() { asm volatile(\"membar.cta;\"); }\n",
             "kernels/old_impl.cu": "__device__ void g() { asm volatile(\"membar.gl;\"); }\n",
             "tools/probe.cu": ptx.replace("only_old.h", "hip/hip_runtime.h")}
    write_tree(tmp_path, files)
    compiled = {("ROC301", "kernels/new.cu", 2), ("ROC301", "kernels/old_impl.cu", 1),  # through its includer
                ("ROC301", "tools/probe.cu", 2)}  # no source of tools/ is named: as before
    unbuilt = {("ROC301", "kernels/old.cu", 2), ("ROC301", "kernels/only_old.h", 1)}
    assert where(findings(tmp_path, capsys)) == compiled
    assert "names its folder's sources one by one" in \
        model_for(tmp_path).file_verdict(tmp_path / "kernels/old.cu").evidence[0].what
    doubts = [
        "add_library(p kernels/new.cu)\nfile(STRINGS list.txt MORE)\nadd_library(q ${MORE})\n",
        "add_library(p kernels/new.cu)\nadd_library(q kernels/${VARIANT}.cu)\n",
        "add_library(p kernels/new.cu)\nforeach(v ${VARIANTS})\n  add_library(q_${v} kernels/${v}.cu)\nendforeach()\n",
        "function(kernels)\n  add_library(x ${ARGN})\nendfunction()\nkernels(kernels/new.cu ${GENERATED})\n",
        "add_library(p kernels/new.cu)\nfile(GLOB MORE kernels/*.cu)\nadd_library(q ${MORE})\n",
        "add_library(p kernels/new.cu)\nset(OLD old)\n",
    ]
    for cmake in doubts:
        (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\n" + cmake)
        assert where(findings(tmp_path, capsys)) == compiled | unbuilt, cmake
    (tmp_path / "CMakeLists.txt").write_text(files["CMakeLists.txt"])
    others = {"jit.py": "load('old', sources=['kernels/old.cu'])\n", "kernels/build_old.sh": "nvcc -c old.cu\n",
              "kernels/Makefile": "%.o: %.cu\n\tnvcc -c $< -o $@\n",  # may compile any source of its folder
              "meson.build": "project('p', 'cpp')\n"}  # meson lists are not read here: no verdict
    for named_by, text in others.items():
        (tmp_path / named_by).write_text(text)
        assert where(findings(tmp_path, capsys)) == compiled | unbuilt, named_by
        (tmp_path / named_by).unlink()
    assert where(findings(tmp_path, capsys)) == compiled


def test_code_named_for_an_nvidia_product_or_another_gpu_language_is_no_amd_code_unless_a_build_switch_decides(tmp_path, capsys):
    """A TensorRT backend (its own CMake project, configured only on CUDA machines) is not
    ported to ROCm: its folder's name says whose code it is where no build condition decides.
    A project with no HIP build at all (no model) reads the name too."""
    nvml = "#include <nvml.h>\nint gpus();\n"
    (tmp_path / ".git").mkdir()
    write_tree(tmp_path, {"backends/trtllm/CMakeLists.txt": "project(trt LANGUAGES CXX CUDA)\n"
                                                             "add_library(trt csrc/backend.cpp)\n",
                          "backends/trtllm/csrc/backend.cpp": "#include \"hardware.hpp\"\n",
                          "backends/trtllm/csrc/hardware.hpp": nvml,
                          "backends/cuda/probe.cu": nvml})
    assert where(findings(tmp_path, capsys)) == {("ROC303", "backends/cuda/probe.cu", 1)}  # no model: a port
    code, out, _ = run_cli(["explain", "--no-cache", "backends/trtllm/csrc/hardware.hpp:1"], tmp_path, capsys)
    assert code == 0 and "`backends/trtllm/` is named for a platform other than ROCm" in out
    # with a HIP build elsewhere in the project (guard mode), the name still decides
    write_tree(tmp_path, {"kernels/setup.py": "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                                              "setup(ext_modules=[CUDAExtension('k', ['k.cu'])])\n",
                          "kernels/k.cu": "#ifdef USE_ROCM\n#include <hip/hip_runtime.h>\n#endif\n"})
    assert where(findings(tmp_path, capsys)) == {("ROC303", "backends/cuda/probe.cu", 1)}
    # a switch of the build decides instead of the name
    (tmp_path / "CMakeLists.txt").write_text("option(WITH_TRT \"TensorRT\" ON)\nif(WITH_TRT)\n"
                                             "  add_library(trt backends/trtllm/csrc/backend.cpp)\nendif()\n")
    assert ("ROC303", "backends/trtllm/csrc/hardware.hpp", 1) in where(findings(tmp_path, capsys))
    # a SYCL translation helper no build names, reaching a CUDA header: another GPU language's code
    write_tree(tmp_path, {"dev_tools/oneapi/trick/groups.hpp": "#include \"../../../backends/cuda/groups.cuh\"\n",
                          "backends/cuda/groups.cuh": "#include <cooperative_groups.h>\n"})
    assert not any(path.endswith("groups.cuh") for _code, path, _line in where(findings(tmp_path, capsys)))


def test_an_angle_include_searches_the_folders_cmake_adds_to_the_include_path(tmp_path, capsys):
    """`#include <ops.cuh>` under `#if BUILD_CUDA` with `csrc` on the include path: the CUDA
    header is reached only where the ROCm build never goes, not a translation unit of its own."""
    write_tree(tmp_path, {
        "CMakeLists.txt": "project(q LANGUAGES CXX HIP)\noption(BUILD_CUDA \"\" OFF)\n"
                          "add_library(q csrc/api.cpp csrc/ops.hip)\n"
                          "target_include_directories(q PUBLIC csrc ${ROCM_PATH}/include $<INSTALL_INTERFACE:include>)\n",
        "csrc/api.cpp": "#if BUILD_CUDA\n#include <ops.cuh>\n#endif\n#if BUILD_HIP\n#include <ops_hip.cuh>\n#endif\n",
        "csrc/ops.cuh": "#include <cublas_v2.h>\n",
        "csrc/ops_hip.cuh": "#include <hipblas/hipblas.h>\n",
        "csrc/ops.hip": "#include <ops_hip.cuh>\n"})
    assert where(findings(tmp_path, capsys)) == set()
    (tmp_path / "CMakeLists.txt").write_text("project(q LANGUAGES CXX HIP)\nadd_library(q csrc/api.cpp csrc/ops.hip)\n")
    assert ("ROC303", "csrc/ops.cuh", 1) in where(findings(tmp_path, capsys))  # unresolved: its own unit


def test_hipify_config_value_is_checked(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nhipify = \"sometimes\"\n")
    (tmp_path / "k.cu").write_text(HIPIFIED)
    code, _, err = run_cli(["check", "--no-cache", "."], tmp_path, capsys)
    assert code == 2 and "'hipify' must be" in err


# --- compile_commands.json ------------------------------------------------------------
def test_compile_commands_units_and_defines(toy, capsys):
    build = toy / "build-rocm"
    build.mkdir()
    (toy / "src/other.cu").write_text(HAZARD)
    (build / "compile_commands.json").write_text(json.dumps([{
        "directory": str(build), "file": str(toy / "src/rowmax.cu"),
        "command": f"hipcc -DTOY_USE_HIP -DTOY_LEVEL=3 -I{toy}/src -c {toy}/src/rowmax.cu",
    }]))
    model = model_for(toy, compile_commands=str(build))
    assert model.macro("TOY_LEVEL").value == 3 and model.macro("TOY_USE_HIP").state is True
    assert model.file_verdict(toy / "src/other.cu").value is False  # in no unit's closure
    assert model.file_verdict(toy / "src/cp-async.cuh").value is True
    found = where(findings(toy, capsys, "-p", "build-rocm"))
    assert not any(path == "src/other.cu" for _, path, _ in found)


@pytest.mark.parametrize("content,message", [
    (None, "no compile_commands.json"),
    ("{not json", "not valid JSON"),
    ('{"file": "a.cu"}', "expected a list"),
    ('[{"file": "a.cu", "directory": "."}]', "neither 'arguments' nor 'command'"),
])
def test_bad_compile_commands_is_a_clear_error(toy, capsys, content, message):
    build = toy / "build-rocm"
    build.mkdir()
    if content is not None:
        (build / "compile_commands.json").write_text(content)
    code, _, err = run_cli(["check", "--no-cache", "-p", "build-rocm", "."], toy, capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_compile_commands_from_config(toy, capsys):
    (toy / "pyproject.toml").write_text('[tool.rocmlint]\ncompile-commands = "nowhere"\n')
    code, _, err = run_cli(["check", "--no-cache", "."], toy, capsys)
    assert code == 2 and "no compile_commands.json at" in err


# --- robustness ---------------------------------------------------------------------
def test_include_cycle_does_not_hang(tmp_path):
    write_tree(tmp_path, {
        "a.h": "#pragma once\n#include \"b.h\"\n#ifdef __HIP_PLATFORM_AMD__\n#endif\n",
        "b.h": "#pragma once\n#include \"a.h\"\n",
        "c.h": "#include \"d.h\"\n", "d.h": "#include \"c.h\"\n#include <hip/hip_runtime.h>\n",
        "main.cu": "#include \"a.h\"\n",
    })
    start = time.perf_counter()
    model = model_for(tmp_path)
    assert time.perf_counter() - start < 5
    assert model.file_verdict(tmp_path / "b.h").value is True
    assert model.file_verdict(tmp_path / "c.h").value is None  # reached by no unit: unknown


def test_unreadable_files_are_skipped_with_no_facts(tmp_path, capsys):
    write_tree(tmp_path, TOY)
    (tmp_path / "src" / "folder.h").mkdir()  # a folder named like a header
    (tmp_path / "src" / "dangling.cuh").symlink_to(tmp_path / "missing.cuh")
    model = model_for(tmp_path)
    assert model.macro("TOY_USE_HIP").state is True
    code, _, err = run_cli(["check", "--no-cache", "."], tmp_path, capsys)
    assert code in (0, 1) and "Traceback" not in err and "internal error" not in err


def test_macro_defined_a_thousand_ways_is_defined_with_unknown_value(tmp_path):
    lines = ["#include <hip/hip_runtime.h>"]
    for i in range(1000):
        lines += [f"#if VARIANT == {i}", f"#define TILE {i}", "#endif"]
    lines += ["#define LANES 64", "#define LANES 32"]
    write_tree(tmp_path, {"tile.h": "\n".join(lines) + "\n",
                          "use.cu": "#include \"tile.h\"\n#if TILE > 2\nx\n#endif\n"})
    start = time.perf_counter()
    model = model_for(tmp_path)
    assert time.perf_counter() - start < 5
    assert model.macro("TILE", tmp_path / "use.cu").state is None  # VARIANT unknown
    fact = model.macro("LANES", tmp_path / "use.cu")
    assert (fact.state, fact.value) == (True, None)


# --- cache and fingerprints -----------------------------------------------------------
def test_fingerprint_changes_only_for_files_reading_the_edited_macro(toy):
    (toy / "src/plain.cu").write_text("#include <hip/hip_runtime.h>\n__global__ void k() {}\n")
    before = model_for(toy)
    fp = {p: before.fingerprint_for(toy / p) for p in ("src/cp-async.cuh", "src/plain.cu")}
    common = toy / "src/common.cuh"
    common.write_text(common.read_text().replace("!defined(TOY_USE_HIP) && defined(__CUDA_ARCH__)",
                                                 "defined(TOY_USE_HIP)"))
    after = model_for(toy)
    assert after.macro("CP_ASYNC_AVAILABLE").state is True
    assert after.fingerprint_for(toy / "src/cp-async.cuh") != fp["src/cp-async.cuh"]
    assert after.fingerprint_for(toy / "src/plain.cu") == fp["src/plain.cu"]


def test_warm_model_comes_from_the_cache(toy, tmp_path_factory, monkeypatch):
    from rocmlint.project import cpp, cpp_cache

    cache = tmp_path_factory.mktemp("cache")
    built = []
    original = cpp._build
    monkeypatch.setattr(cpp, "_build", lambda *a, **k: built.append(1) or original(*a, **k))
    first = model_for(toy, cache_dir=cache)
    second = model_for(toy, cache_dir=cache)
    assert len(built) == 1
    assert second.macro("TOY_USE_HIP").state is first.macro("TOY_USE_HIP").state is True
    # An edit that leaves every directive where it was keeps the model (what a pre-commit
    # run after editing a kernel's code sees)...
    (toy / "src/cp-async.cuh").write_text(CP_ASYNC + "static __device__ int spare;\n")
    kept = model_for(toy, cache_dir=cache)
    assert len(built) == 1 and kept.macro("CP_ASYNC_AVAILABLE").state is first.macro("CP_ASYNC_AVAILABLE").state
    # ...and is stored under the new stats: the next run reads no file to know it.
    monkeypatch.setattr(cpp_cache, "_still_described", lambda *a: pytest.fail("the edited file was read again"))
    model_for(toy, cache_dir=cache)
    monkeypatch.undo()
    monkeypatch.setattr(cpp, "_build", lambda *a, **k: built.append(1) or original(*a, **k))
    # A directive moved, a file added: rebuilt.
    (toy / "src/cp-async.cuh").write_text("\n" + CP_ASYNC)
    model_for(toy, cache_dir=cache)
    assert len(built) == 2
    (toy / "src/extra.cu").write_text("__global__ void k() {}\n")
    model_for(toy, cache_dir=cache)
    assert len(built) == 3


def test_a_rebuilt_model_reads_unchanged_build_files_from_the_cache(toy, tmp_path_factory, monkeypatch, capsys):
    from rocmlint.project import cpp

    cache = tmp_path_factory.mktemp("cache")
    cmake = toy / "CMakeLists.txt"
    cmake.write_text("if(TOY_HIP)\n  enable_language(HIP)\n  add_compile_definitions(TOY_TILE=64)\nendif()\n")
    reads = []
    original = cpp.read_cmake_files
    monkeypatch.setattr(cpp, "read_cmake_files", lambda *a, **k: reads.append(1) or original(*a, **k))
    first = model_for(toy, cache_dir=cache)
    assert "TOY_TILE" in first.facts.amd_defines
    (toy / "src/cp-async.cuh").write_text("\n" + CP_ASYNC)  # a directive moves: the model is rebuilt
    second = model_for(toy, cache_dir=cache)
    assert len(reads) == 1
    assert second.facts.amd_defines.keys() == first.facts.amd_defines.keys()
    cmake.write_text(cmake.read_text() + "# touched\n")
    model_for(toy, cache_dir=cache)
    assert len(reads) == 2
    # A reader that failed warns on every run: its partial facts are not kept.
    monkeypatch.delenv("ROCMLINT_DEBUG")
    monkeypatch.setattr(cpp, "read_cmake_files", lambda *a, **k: reads.append(1) or 1 / 0)
    cmake.write_text(cmake.read_text() + "# again\n")
    model_for(toy, cache_dir=cache)
    (toy / "src/cp-async.cuh").write_text(CP_ASYNC)
    model_for(toy, cache_dir=cache)
    assert len(reads) == 4
    assert capsys.readouterr().err.count("CMake files not read") == 2


# --- explain ------------------------------------------------------------------------
def test_explain_prints_the_chain_that_decides_a_line(toy, capsys):
    code, out, _ = run_cli(["explain", "--no-cache", "src/cp-async.cuh:6"], toy, capsys)
    assert not (toy / ".rocmlint_cache").exists()
    assert code == 0
    assert "AMD build compiles this line: no" in out
    assert "#ifdef CP_ASYNC_AVAILABLE  -> NOT taken on AMD" in out
    assert "CP_ASYNC_AVAILABLE: undefined" in out and "src/common.cuh:16" in out
    assert "translation unit: src/rowmax.cu" in out
    assert "ROC301 inline-ptx:" in out and "the AMD build never compiles this line" in out


def test_explain_names_the_shim(toy, capsys):
    code, out, _ = run_cli(["explain", "src/rowmax.cu:10"], toy, capsys)
    assert code == 0 and "shim: __shfl_xor_sync" in out and "drops mask" in out
    assert "ROC203 warp-mask-literal-32bit: silent" in out


@pytest.mark.parametrize("location,message", [("src/rowmax.cu", "expected PATH:LINE"),
                                               ("nope.cu:3", "no such file"),
                                               ("src/rowmax.cu:999", "has 17 lines")])
def test_explain_bad_locations(toy, capsys, location, message):
    code, _, err = run_cli(["explain", location], toy, capsys)
    assert code == 2 and message in err


def test_explain_drops_what_check_drops(tmp_path, capsys):
    """`explain` asks the engine why a finding is dropped: a 32-bit mask inside a branch that
    picks code by wave size is silent in `check`, and `explain` says so instead of "REPORTED";
    a consistent 32-lane kernel is silent, and `explain` shows its lane groups."""
    write_tree(tmp_path, {"k.cu": "#include <hip/hip_runtime.h>\n__global__ void k(float* o) {\n"
                                  "  float v = o[threadIdx.x];\n#if !defined(__GFX9__)\n"
                                  "  v += __shfl_xor_sync(0xffffffff, v, 1);\n#endif\n"
                                  "  const int lane = threadIdx.x % 32;\n"
                                  "  for (int d = 16; d > 0; d >>= 1) v += __shfl_down(v, d);\n"
                                  "  if (lane == 0) o[threadIdx.x / 32] = v;\n}\n"})
    code, out, _ = run_cli(["check", "--no-cache", "k.cu"], tmp_path, capsys)
    assert code == 0
    code, out, _ = run_cli(["explain", "--no-cache", "k.cu:5"], tmp_path, capsys)
    assert code == 0 and "ROC203 warp-mask-literal-32bit: dropped: inside a branch that picks code by wave size" in out
    assert "REPORTED" not in out
    code, out, _ = run_cli(["explain", "--no-cache", "k.cu:7"], tmp_path, capsys)
    assert code == 0 and "lane groups of `k`" in out and "in `k` and what it calls: consistent" in out
    assert "32: lane index for 32-lane groups (line 7: `threadIdx.x % 32`)" in out
    assert "32: a shuffle reduction from offset 16 (32 lanes) (line 8" in out


def test_explain_on_setup_py_and_on_unparsable_python(tmp_path, capsys):
    write_tree(tmp_path, {"setup.py": "from setuptools import setup\nsetup(install_requires=['cupy-cuda12x'])\n",
                          "bad.py": "def f(:\n    pass\n"})
    code, out, err = run_cli(["explain", "--no-cache", "setup.py:2"], tmp_path, capsys)
    assert code == 0 and "internal error" not in out + err
    code, _, err = run_cli(["explain", "--no-cache", "bad.py:1"], tmp_path, capsys)
    assert code == 2 and "cannot parse" in err


def test_find_root_is_the_projects_not_the_working_folders(tmp_path):
    write_tree(tmp_path, {"proj/src/sub/CMakeLists.txt": "", "proj/src/sub/a.cu": ""})
    assert find_root(["src/sub/a.cu"], cwd=str(tmp_path / "proj")) == tmp_path / "proj" / "src" / "sub"
    # A file with no build file above it belongs to the working folder's tree...
    write_tree(tmp_path, {"loose/x/a.cu": "", "loose/y/b.h": ""})
    assert find_root(["x/a.cu"], cwd=str(tmp_path / "loose")) == tmp_path / "loose"
    # A nested package (its own setup.py) belongs to the project above it.
    write_tree(tmp_path, {"proj/setup.py": "", "proj/src/sub/setup.py": ""})
    assert find_root([str(tmp_path / "proj/src/sub/a.cu")], cwd="/") == tmp_path / "proj"
    (tmp_path / "proj" / "src" / ".git").mkdir()
    assert find_root([str(tmp_path / "proj/src/sub/a.cu")], cwd="/") == tmp_path / "proj" / "src"


def test_a_model_failure_is_a_warning_and_files_are_linted_one_by_one(toy, capsys, monkeypatch):
    from rocmlint.project import cpp

    monkeypatch.delenv("ROCMLINT_DEBUG", raising=False)
    monkeypatch.setattr(cpp, "_solve", lambda model: 1 / 0)
    code, out, err = run_cli(["check", "--no-cache", "--output-format", "json", "--select", "ROC3", "."], toy, capsys)
    assert code == 1 and "warning: no project model (ZeroDivisionError" in err
    assert ("ROC303", "src/vendors/cuda.h", 3) in where(json.loads(out))  # judged on its own, as before


def test_nested_config_macros_and_default_nvidia_macros_still_apply_with_a_model(toy, capsys):
    write_tree(toy, {
        "src/extra/pyproject.toml": '[tool.rocmlint]\nrocm-macros = ["EXTRA_ON_AMD"]\n',
        "src/extra/k.cu": "#include <hip/hip_runtime.h>\n#ifndef EXTRA_ON_AMD\n__device__ void f() { asm(\"membar.gl;\"); }\n"
                          "#endif\n#ifdef USE_CUDA\n__device__ void g() { asm(\"membar.gl;\"); }\n#endif\n",
    })
    found = where(findings(toy, capsys))
    assert not any(path == "src/extra/k.cu" for _, path, _ in found)


def test_amd_only_code_through_a_macro_derived_from_the_rocm_macro(toy):
    from rocmlint.cpp.context import CppContext

    common = toy / "src/common.cuh"
    common.write_text(common.read_text() + "#if defined(TOY_USE_HIP) && defined(__gfx942__)\n#define TOY_MFMA\n#endif\n")
    source = (b'#include "common.cuh"\n#ifdef TOY_MFMA\nint lane = threadIdx.x % 32;\n#endif\n'
              b'#ifdef __CUDA_ARCH__\nint a;\n#endif\nint shared;\n')
    (toy / "src/mfma.cu").write_bytes(source)
    model = model_for(toy)
    assert model.amd_only_macro("TOY_MFMA") and not model.amd_only_macro("__CUDA_ARCH__")
    assert model.nvidia_file("src/vendors/hip.h") is False and model.nvidia_file("src/vendors/cuda.h") is True
    assert model.hip_only(toy / "src/vendors/hip.h") and not model.hip_only(toy / "src/common.cuh")
    activate(Project(toy, parts={"cpp": model}))
    ctx = CppContext(str(toy / "src/mfma.cu"), source, Settings())
    offsets = [source.index(text) for text in (b"int lane", b"int a;", b"int shared")]
    assert [ctx.nvidia_only(o) for o in offsets] == [False, False, False]  # hip.h defines __CUDA_ARCH__
    assert ctx.wave_size_aware(offsets[0])  # TOY_MFMA selects by architecture (__gfx942__)




def test_project_macro_that_selects_by_architecture_makes_a_wave_size_aware_branch(toy, capsys):
    write_tree(toy, {
        "src/arch.h": "#pragma once\n#include <hip/hip_runtime.h>\n#if defined(__gfx908__) || defined(__gfx942__)\n"
                      "#define TOY_CDNA\n#endif\n#if defined(TOY_USE_HIP) && defined(TOY_CDNA)\n#define TOY_MFMA\n#endif\n",
        "src/tile.cu": '#include "arch.h"\n__global__ void k(int *o) {\n#if defined(TOY_MFMA)\n'
                       "    o[0] = threadIdx.x % 32;\n#else\n    o[0] = threadIdx.x % 32;\n#endif\n}\n",
    })
    model = model_for(toy)
    assert model.arch_macro("TOY_MFMA") and model.arch_macro("TOY_CDNA") and not model.arch_macro("TOY_USE_CUB")
    assert not any(path == "src/tile.cu" for _, path, _ in where(findings(toy, capsys)))


def test_constants_defined_in_another_header_are_visible_to_rules(toy):
    from rocmlint.cpp.context import CppContext

    model = model_for(toy)
    assert model.macro_body("WARP_LANES", toy / "src/rowmax.cu") == ("32", "src/common.cuh:9")
    assert model.macro_body("CP_ASYNC_AVAILABLE") is None  # only where the AMD build never goes
    activate(Project(toy, parts={"cpp": model}))
    ctx = CppContext(str(toy / "src/rowmax.cu"), (toy / "src/rowmax.cu").read_bytes(), Settings())
    assert ctx.macro_value("WARP_LANES") == "32"


def test_compile_commands_flags_apply_per_unit(toy):
    build = toy / "build-rocm"
    build.mkdir()
    (toy / "src/other.cu").write_text('#include "cp-async.cuh"\n')
    (build / "compile_commands.json").write_text(json.dumps([
        {"directory": str(build), "file": str(toy / "src/rowmax.cu"),
         "arguments": ["hipcc", "-DTOY_USE_HIP", "-DTOY_TILE=64", "-c", str(toy / "src/rowmax.cu")]},
        {"directory": str(build), "file": str(toy / "src/other.cu"),
         "arguments": ["hipcc", "-DTOY_USE_HIP", "-DTOY_TILE=32", "-c", str(toy / "src/other.cu")]},
    ]))
    model = model_for(toy, compile_commands=str(build))
    assert model.macro("TOY_TILE").state is True and model.macro("TOY_TILE").value is None  # differs by unit
    assert model.macro("TOY_TILE", toy / "src/rowmax.cu").value == 64
    fact = model.macro("TOY_TILE", toy / "src/other.cu")
    assert fact.value == 32 and "command line of src/other.cu" in fact.evidence[0].what


def test_hip_sources_make_a_project_dual_platform(tmp_path):
    write_tree(tmp_path, {"k.hip": "__global__ void k() {}\n", "common.h": "#define LANES 64\n"})
    assert model_for(tmp_path) is not None


def test_sarif_results_carry_the_evidence_and_stay_valid(toy, capsys):
    from test_sarif import SCHEMA_PATH

    code, out, err = run_cli(["check", "--no-cache", "--output-format", "sarif", "--select", "ROC301", "."], toy, capsys)
    assert code == 1, err
    log = json.loads(out)
    result = log["runs"][0]["results"][0]
    assert "src/vendors/hip.h:4" in "\n".join(result["properties"]["evidence"])
    if SCHEMA_PATH.is_file():
        import jsonschema

        jsonschema.Draft4Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))).validate(log)


def test_rocm_native_project_is_judged_like_a_port(tmp_path, capsys):
    # Written for ROCm (HIP everywhere, no CUDA path anywhere) or hipified beside a CUDA
    # original: who wrote it decides nothing. 32-lane lanes meeting a ballot are a hazard in both.
    kernel = ("#include <hip/hip_runtime.h>\n"
              "__global__ void k(unsigned* out, float* v) {\n"
              "  int lane = threadIdx.x % 32;\n"
              "  unsigned votes = __ballot(v[lane] > 0.f);\n"
              "  out[lane] = votes;\n"
              "}\n")
    write_tree(tmp_path, {"include/ops/reduce.hpp": kernel})
    model = model_for(tmp_path)
    assert model is not None and model.rocm_native and model.hip_only(tmp_path / "include/ops/reduce.hpp")
    native = {code for code, _, _ in where(findings(tmp_path, capsys))}
    write_tree(tmp_path, {"cuda/reduce.cu": "#include <cuda_runtime.h>\n"})
    assert not model_for(tmp_path).rocm_native
    ported = {code for code, _, _ in where(findings(tmp_path, capsys))} - {"ROC303"}  # cuda_runtime.h
    assert native == ported == {"ROC201", "ROC204"}


def test_evidence_does_not_depend_on_hash_order_or_worker_count(toy):
    # A header many units include: the chain shown as evidence must be the same in every run.
    for index in range(12):
        (toy / f"src/unit{index:02d}.cu").write_text('#include "common.cuh"\n#include "cp-async.cuh"\n'
                                                     "__global__ void k(int* o) { o[threadIdx.x % 32] = 1; }\n")
    import os
    import subprocess
    import sys

    outputs = set()
    for seed, jobs in (("1", "1"), ("2", "2"), ("3", "1")):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", "--exit-zero", "-j", jobs,
                               "--output-format", "json", "."], cwd=toy, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert any(f["evidence"] for f in json.loads(done.stdout))
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_octal_macro_values_do_not_stop_the_model(tmp_path):
    # Version macros written with a leading zero (`#define MINOR 02`) are C octal literals.
    write_tree(tmp_path, {"include/version.h": "#pragma once\n#define LIB_MINOR 02\n#define LIB_PATCH 010\n",
                          "src/k.cu": '#include "../include/version.h"\n#include <hip/hip_runtime.h>\n'
                                      "#if LIB_MINOR == 2 && LIB_PATCH == 8\n#define NEW_API 1\n#endif\n"})
    model = model_for(tmp_path)
    assert model is not None
    assert model.macro("NEW_API", tmp_path / "src/k.cu").state is not False


def test_a_header_the_build_generates_is_the_projects_own(tmp_path, capsys):
    """configure_file writes nccl.h from a template: `#include "nccl.h"` reads the project's
    generated API header, not NVIDIA's; the toolkit's own headers are still reported."""
    write_tree(tmp_path, {
        "CMakeLists.txt": "project(comm LANGUAGES CXX HIP)\nadd_library(comm src/init.cc)\n"
                          "configure_file(src/nccl.h.in ${PROJECT_BINARY_DIR}/include/nccl.h)\n",
        "src/nccl.h.in": "#define COMM_VERSION @VERSION@\n",
        "src/init.cc": '#include "nccl.h"\n#include <cuda_runtime.h>\n#include <hip/hip_runtime.h>\nint init() { return 0; }\n',
    })
    assert where(findings(tmp_path, capsys)) == {("ROC303", "src/init.cc", 2)}
    (tmp_path / "CMakeLists.txt").write_text("project(comm LANGUAGES CXX HIP)\nadd_library(comm src/init.cc)\n")
    assert where(findings(tmp_path, capsys)) == {("ROC303", "src/init.cc", 1), ("ROC303", "src/init.cc", 2)}


GENERATOR_HEADER = """#pragma once
#define LOAD_ACQUIRE(name) \\
  __device__ inline unsigned name(const unsigned* p) { unsigned v; \\
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
LOAD_ACQUIRE(load_acquire_sm70)
#endif
"""


def test_a_macro_body_is_judged_where_it_is_expanded(tmp_path, capsys):
    """PTX in a generator macro expanded only under an NVIDIA architecture test is not in the
    AMD build, unless a file that includes the header expands it too."""
    write_tree(tmp_path, {"sync.cuh": GENERATOR_HEADER,
                          "wait.cu": HIP_MARK + '#include "sync.cuh"\n__global__ void k() {}\n'})
    assert where(findings(tmp_path, capsys)) == set()
    (tmp_path / "wait.cu").write_text(HIP_MARK + '#include "sync.cuh"\nLOAD_ACQUIRE(load_acquire)\n')
    assert where(findings(tmp_path, capsys)) == {("ROC301", "sync.cuh", 4)}


def test_a_shim_inside_an_include_guard_reaches_the_headers_its_includer_reads_next(tmp_path, capsys):
    """`#ifndef COMPAT_H / #define COMPAT_H` is undefined where the header is read: the
    shim under `#if defined(USE_ROCM)` inside it is the AMD build's, for a header that
    the same source includes after it (and that does not include the shim itself)."""
    root = write_tree(tmp_path, {
        "setup.py": "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n",
        "ext/compat.cuh": "#ifndef COMPAT_H\n#define COMPAT_H\n#if defined(USE_ROCM)\n"
                          "#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)\n#endif\n#endif\n",
        "ext/reduce.cuh": "__device__ float row_sum(float v) {\n"
                          "  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);\n"
                          "  return v;\n}\n",
        "ext/kernels.cu": "#include <hip/hip_runtime.h>\n#include \"compat.cuh\"\n#include \"reduce.cuh\"\n"
                          "__global__ void k(float* x) { x[threadIdx.x] = row_sum(x[threadIdx.x]); }\n",
    })
    shim = model_for(root).shim("__shfl_xor_sync")
    assert shim is not None and shim.drops(0) and shim.where == "ext/compat.cuh:4"
    assert [f for f in findings(root, capsys) if f["code"] == "ROC203"] == []


def test_a_guarded_header_is_compiled_where_it_is_included_and_its_guard_is_no_evidence(tmp_path, capsys):
    root = write_tree(tmp_path, {
        "CMakeLists.txt": "project(p LANGUAGES HIP)\nadd_library(p src/kernel.hip)\n",
        "src/common.h": "#ifndef PROJECT_COMMON_H_\n#define PROJECT_COMMON_H_\n#include <cuda_fp16.h>\n#endif\n",
        "src/kernel.hip": "#include <hip/hip_runtime.h>\n#include \"common.h\"\n__global__ void k() {}\n",
    })
    code, out, _err = run_cli(["explain", "--no-cache", "src/common.h:3"], root, capsys)
    assert code == 0 and "AMD build compiles this line: yes" in out
    assert "#if stack: none" in out and "PROJECT_COMMON_H_" not in out
    [finding] = [f for f in findings(root, capsys) if f["path"].endswith("common.h")]
    assert not any("PROJECT_COMMON_H_" in line for line in finding["evidence"])


def test_a_hipify_custom_map_named_by_the_build_renames_headers_hipify_alone_would_not(tmp_path, capsys):
    root = write_tree(tmp_path, {
        "setup.py": "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                    "from tools.hip import run_hipify\n",
        "tools/__init__.py": "",
        "tools/hip.py": "def run_hipify(base_dir):\n"
                        "    hipify(project_directory=base_dir, custom_map_list=base_dir / 'hip_header_map.json')\n",
        "hip_header_map.json": '{"custom_map": {"<cuda_fp8.h>": "\\"amd_detail/hip_float8.h\\"", "cudaStream_t": "x"}}',
        "csrc/quant.cu": "#include <cuda_fp8.h>\n#include <cudnn.h>\n__global__ void q() {}\n",
    })
    found = where(findings(root, capsys))
    # <cuda_fp8.h> is renamed by the project's map; hipify has no name for <cudnn.h>
    assert found == {("ROC303", "csrc/quant.cu", 2)}
    code, out, _err = run_cli(["explain", "--no-cache", "csrc/quant.cu:1"], root, capsys)
    assert "hipify: <cuda_fp8.h> becomes <amd_detail/hip_float8.h>" in out
    # the map is part of the model's key: editing it changes the next cached run
    cached = ["check", "--output-format", "json", "--select", "ROC303", "."]
    code, out, _err = run_cli(cached, root, capsys)
    assert {(f["path"], f["line"]) for f in json.loads(out)} == {("csrc/quant.cu", 2)}
    (root / "hip_header_map.json").write_text('{"custom_map": {}}')
    code, out, _err = run_cli(cached, root, capsys)
    assert {(f["path"], f["line"]) for f in json.loads(out)} == {("csrc/quant.cu", 1), ("csrc/quant.cu", 2)}


def test_a_small_run_summarises_the_files_in_a_second_process_for_the_same_model(tmp_path, monkeypatch):
    """With a core to spare, a run too small for workers summarises the C-family files in a
    forked process while it reads the build files; the model is the one a single process builds."""
    import os

    from rocmlint.project import cpp, summaries

    root = write_tree(tmp_path / "tree", TOY)
    log = tmp_path / "summarised-by"
    summary_directives = cpp.summary_directives

    def logged(*args, **kwargs):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return summary_directives(*args, **kwargs)

    monkeypatch.setattr(cpp, "summary_directives", logged)
    monkeypatch.setattr(summaries, "summary_directives", logged)
    alone = model_for(root, jobs=1)
    assert log.read_text().split() == [str(os.getpid())]
    log.unlink()
    shared = model_for(root, jobs=2)
    by = log.read_text().split()
    assert len(by) == 1 and by != [str(os.getpid())]
    assert shared.files.keys() == alone.files.keys() and shared.reach == alone.reach
    assert shared.inferred == alone.inferred and shared.shims == alone.shims and shared.roots == alone.roots


def test_a_platform_switch_inferred_as_defined_on_amd_is_a_flag_of_value_1(tmp_path, capsys):
    """`-DPROJ_USE_HIP` and define_macros ("PROJ_USE_HIP", "1") both make it 1: `#if
    PROJ_USE_HIP` is taken on AMD like `#ifdef PROJ_USE_HIP`."""
    root = write_tree(tmp_path, {
        "src/backend.h": "#ifndef PROJ_USE_HIP\n#include <cuda_runtime.h>\n#else\n#include <hip/hip_runtime.h>\n#endif\n",
        "src/rand.h": "#if PROJ_USE_HIP\n#include <hiprand/hiprand.h>\n#elif !defined(PROJ_NO_GPU)\n#include <curand.h>\n"
                      "#endif\n",
        "src/rand.cpp": "#include \"backend.h\"\n#include \"rand.h\"\nint seed() { return 1; }\n",
    })
    assert where(findings(root, capsys)) == set()
    code, out, _err = run_cli(["explain", "--no-cache", "src/rand.h:4"], root, capsys)
    assert "AMD build compiles this line: no" in out


def test_sources_a_setup_helper_adds_only_off_rocm_are_not_in_the_amd_build(tmp_path, capsys):
    root = write_tree(tmp_path, {
        "setup.py": "from torch.utils.cpp_extension import BuildExtension\nfrom build_tools.ext import make\n"
                    "setup(ext_modules=[make(Path('te/csrc'))], cmdclass={'build_ext': BuildExtension})\n",
        "build_tools/__init__.py": "",
        "build_tools/ext.py": "from torch.utils.cpp_extension import CUDAExtension\n"
                              "def use_rocm():\n    return bool(os.getenv('USE_ROCM'))\n"
                              "def make(csrc):\n    sources = [csrc / 'ops' / 'norm.cu']\n"
                              "    if not use_rocm():\n        sources.extend([csrc / 'comm' / 'ring.cu'])\n"
                              "    return CUDAExtension('te', sources=[str(s) for s in sources])\n",
        "te/csrc/ops/norm.cu": "#include <hip/hip_runtime.h>\n__global__ void norm() {}\n",
        "te/csrc/comm/ring.cu": "__device__ void fence() { asm volatile(\"fence.acq_rel.sys;\"); }\n",
    })
    assert where(findings(root, capsys)) == set()
    code, out, _err = run_cli(["explain", "--no-cache", "te/csrc/comm/ring.cu:1"], root, capsys)
    assert "NOT compiled by the AMD build" in out and "build_tools/ext.py" in out


@pytest.mark.parametrize("directive,hip", [
    ("#include <hip/hip_runtime.h>", True), ('#include "vendors/hip/x.h"', True), ("#include <chip/x.h>", False),
    ("#if defined(USE_ROCM)", True), ("#ifdef USE_ROCM_KERNELS", False), ("#if MY_USE_ROCM", False),
    ("#ifdef __HIPCC__", True), ("#if __AMDGCN__", True), ("#include <cuda_runtime.h>", False),
])
def test_a_summary_names_hip_where_a_word_says_so(directive, hip):
    from rocmlint.project.summaries import Summary, summarise

    assert Summary(summarise(f"{directive}\nint x;\n#endif\n".encode())).hip is hip


@pytest.mark.parametrize("rounds", [4, 5])
def test_a_default_set_under_its_own_ifndef_is_the_value_the_amd_build_gets(tmp_path, monkeypatch, rounds):
    """`#ifndef LIB_USE_AMD_DPP` / `#define LIB_USE_AMD_DPP 1`: a name that reads as an AMD
    switch once made the solver flip the default between dead and live each round, so the
    answer depended on the round limit's parity."""
    import rocmlint.project.cpp as cpp_model
    monkeypatch.setattr(cpp_model, "MAX_ROUNDS", rounds)
    root = write_tree(tmp_path, {
        "include/lib/config.h": "#pragma once\n#define LIB_MAX_THREADS 256\n\n#ifndef LIB_USE_AMD_DPP\n"
                                "#define LIB_USE_AMD_DPP 1\n#endif\n",
        "include/lib/reduce.h": "#pragma once\n#include \"config.h\"\n#if LIB_USE_AMD_DPP\nint dpp_reduce();\n#endif\n",
        "src/reduce.cpp": "#include \"lib/reduce.h\"\nint f() { return 0; }\n",
        "CMakeLists.txt": "project(lib LANGUAGES CXX HIP)\nadd_library(lib src/reduce.cpp)\n"
                          "target_include_directories(lib PUBLIC include)\n",
    })
    model = model_for(root)
    own = model.macro("LIB_USE_AMD_DPP", root / "include/lib/config.h")
    assert own.state is False and "its own default" in own.evidence[0].what
    seen = model.macro("LIB_USE_AMD_DPP", root / "include/lib/reduce.h")
    assert (seen.state, seen.value) == (True, 1)
    assert seen.evidence[0].where == "include/lib/config.h:5"
