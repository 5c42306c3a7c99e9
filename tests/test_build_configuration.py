"""The AMD build a project would have (design §2e): a HIP build read from the build files,
the port configuration where there is none, configuration-header templates read as the
build writes them, the platform a switch's name states, and the Makefiles that call hipcc."""
from __future__ import annotations

import textwrap

import pytest

from rocmlint.cpp.platform_names import CUDA, HIP, HIP_ON_NVIDIA, OTHER_GPU, switch_platform, value_by_name
from rocmlint.project import cmake, makefile, meson
from rocmlint.project.templates import as_header, is_template, substitute, template_lines


def dedent(files: dict[str, str]) -> dict[str, str]:
    return {rel: textwrap.dedent(text) for rel, text in files.items()}


def uses(found) -> dict[str, bool | None]:
    return {u.path: u.cond.value for u in found}


def template_values(found) -> dict[str, list[tuple[str | None, bool | None]]]:
    return {macro: [(value, cond.value) for value, cond, _why in entries] for macro, entries in found.items()}


# --- names ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, platform", [
    ("USE_HIP", HIP), ("GGML_USE_HIP", HIP), ("KOKKOS_ENABLE_HIP", HIP), ("PROJ_USE_ROCM", HIP),
    ("X_HIP_PLATFORM_AMD", HIP), ("GINKGO_HIP_PLATFORM_HCC", HIP), ("KOKKOS_ARCH_AMD_GPU", HIP),
    ("KOKKOS_ENABLE_CUDA", CUDA), ("X_BUILD_CUDA", CUDA), ("HAVE_CUDA_H", CUDA), ("AMREX_USE_CUPTI", CUDA),
    ("MY_USE_CUDA_GRAPHS", CUDA), ("GINKGO_HIP_PLATFORM_NVCC", HIP_ON_NVIDIA), ("X_HIP_PLATFORM_NVIDIA", HIP_ON_NVIDIA),
    ("AMREX_USE_SYCL", OTHER_GPU), ("MLX_BUILD_METAL", OTHER_GPU), ("X_USE_CUDAUVM_NVEC", CUDA),
    ("GGML_USE_HIPBLAS", HIP), ("RAJA_BACKENDS_CUDA", CUDA), ("X_BACKEND_HIP", HIP),
    ("CUDA_VERSION", None), ("MLX_CUDA_SM_80_ENABLED", None), ("__CUDA_ARCH__", None), ("USE_FAST_MATH", None),
    ("HIP_VERSION_MAJOR", None),
])
def test_the_platform_a_switch_name_states(name, platform):
    assert switch_platform(name) == platform


def test_a_cuda_switch_is_off_in_a_guarded_build_and_on_in_a_port():
    assert value_by_name("X_ENABLE_CUDA", port=False) is False
    assert value_by_name("X_ENABLE_CUDA", port=True) is True
    assert value_by_name("X_USE_HIP", port=False) is True and value_by_name("X_USE_HIP", port=True) is True
    # HIP's NVIDIA platform and another vendor's backend: off in every AMD build
    assert value_by_name("X_HIP_PLATFORM_NVCC", port=True) is False
    assert value_by_name("X_USE_SYCL", port=True) is False
    assert value_by_name("X_TILE_SIZE", port=True) is None


# --- templates --------------------------------------------------------------------------
def test_template_names_and_the_lines_a_build_writes():
    assert is_template("include/x/config.hpp.in") and is_template("config.h.in") and is_template("AMReX_Config.H.in")
    assert not is_template("setup.cfg.in") and not is_template("Doxyfile.in")
    text = textwrap.dedent("""\
        #pragma once
        #cmakedefine X_ENABLE_CUDA
        #  cmakedefine X_TILE @X_TILE_SIZE@
        #cmakedefine01 X_HIP_PLATFORM_NVCC
        #define X_VERSION "${PROJECT_VERSION}"
        #define X_PLAIN 3
        #mesondefine HAVE_HIP
        #undef HAVE_CUDA
    """)
    lines = [(t.kind, t.macro, t.rest, t.line) for t in template_lines(text)]
    assert lines == [("cmakedefine", "X_ENABLE_CUDA", "", 2), ("cmakedefine", "X_TILE", "@X_TILE_SIZE@", 3),
                     ("cmakedefine01", "X_HIP_PLATFORM_NVCC", "", 4), ("define", "X_VERSION", '"${PROJECT_VERSION}"', 5),
                     ("mesondefine", "HAVE_HIP", "", 7), ("undef", "HAVE_CUDA", "", 8)]
    assert template_lines(text)[1].variables() == ["X_TILE_SIZE"]
    assert substitute("@A@ + ${B}", {"A": "1", "B": "2"}.get) == "1 + 2"
    assert substitute("@A@ + ${C}", {"A": "1"}.get) is None
    header = as_header(text)
    assert b"cmakedefine" not in header and b"mesondefine" not in header and b"#define X_PLAIN 3" in header
    assert header.count(b"\n") == text.count("\n")  # the written lines leave their line numbers in place


def test_cmake_configure_file_writes_each_macro_from_the_variable_at_that_point():
    facts = cmake.read(dedent({
        "CMakeLists.txt": """
            project(demo VERSION 2.5.0)
            option(X_BUILD_CUDA "cuda" ${X_HAS_CUDA})
            option(X_BUILD_HIP "hip" ${X_HAS_HIP})
            if(X_BUILD_HIP)
              enable_language(HIP)
              set(X_HIP_PLATFORM_NVCC 0)
              if(CMAKE_HIP_COMPILER_ID STREQUAL "NVIDIA")
                set(X_HIP_PLATFORM_NVCC 1)
              endif()
              add_subdirectory(hip)
            endif()
            if(X_BUILD_CUDA)
              enable_language(CUDA)
              add_subdirectory(cuda)
            endif()
            set(X_TILE 64)
            configure_file(include/x/config.h.in ${PROJECT_BINARY_DIR}/include/x/config.h)
        """}), templates={"include/x/config.h.in": textwrap.dedent("""
            #cmakedefine X_BUILD_CUDA
            #cmakedefine X_BUILD_HIP
            #cmakedefine01 X_HIP_PLATFORM_NVCC
            #cmakedefine X_TILE_SIZE @X_TILE@
            #define X_FEATURES @X_UNSET_FEATURES@
        """)})
    found = template_values(facts.template_defines)
    assert found["X_BUILD_CUDA"] == [("", False)]  # its branch does only CUDA work
    assert found["X_BUILD_HIP"] == [("", True)]
    assert found["X_HIP_PLATFORM_NVCC"] == [("1", False), ("0", True)]  # HIP's compiler is clang on AMD
    assert found["X_TILE_SIZE"] == [("64", None)]  # no X_TILE_SIZE variable: undecided
    assert found["X_FEATURES"] == [(None, True)]  # defined, to a value not known
    assert facts.generated_from == {"include/x/config.h": "include/x/config.h.in"}
    assert "cuda" in facts.dead_dirs and "hip" not in facts.dead_dirs


def test_cmake_an_if_not_branch_that_builds_a_stub_does_not_outvote_the_switch_itself():
    facts = cmake.read(dedent({"CMakeLists.txt": """
        option(X_BUILD_CUDA "cuda" ${X_HAS_CUDA})
        if(X_BUILD_CUDA)
          enable_language(CUDA)
          add_subdirectory(cuda)
        endif()
        if(NOT X_BUILD_CUDA)
          add_library(x_cuda cuda_hooks.cpp)
        endif()
    """}))
    assert "cuda" in facts.dead_dirs
    assert uses(facts.uses) == {"cuda_hooks.cpp": True}


def test_cmake_another_vendors_backend_is_not_the_rocm_build():
    facts = cmake.read(dedent({"CMakeLists.txt": """
        option(X_BUILD_SYCL "sycl" OFF)
        if(X_BUILD_SYCL)
          add_subdirectory(dpcpp)
        endif()
        if(X_BACKEND STREQUAL "sycl")
          add_library(x_sycl queue.cpp)
        endif()
    """}))
    assert "dpcpp" in facts.dead_dirs
    assert uses(facts.uses) == {"queue.cpp": False}


def test_cmake_a_variable_set_from_one_no_file_sets_is_unknown_not_empty():
    facts = cmake.read(dedent({"CMakeLists.txt": """
        set(X_WITH_EXTRAS ${WITH_EXTRAS})
        if(X_WITH_EXTRAS)
          add_library(x_extras extras.cpp)
        endif()
    """}))
    assert uses(facts.uses) == {"extras.cpp": None}


def test_cmake_foreach_over_a_list_no_file_sets_runs_zero_times():
    files = {"CMakeLists.txt": """
        foreach(target IN LISTS EXTERNAL_TARGETS)
          add_executable(example_${target} examples/bench.cu)
        endforeach()
        set(MINE a b)
        foreach(item ${MINE})
          add_executable(x_${item} tools/${item}.cpp)
        endforeach()
        foreach(item ${COMPUTED})
          add_executable(y_${item} other/run.cpp)
        endforeach()
        set(${PREFIX}COMPUTED x)
    """}
    found = cmake.read(dedent(files)).uses
    assert uses(found) == {"examples/bench.cu": False, "tools/a.cpp": True, "tools/b.cpp": True}
    reason = next(u for u in found if u.path == "examples/bench.cu").evidence.what
    assert "EXTERNAL_TARGETS, a list no build file sets" in reason
    # build-options gives the list: the loop runs
    assert uses(cmake.read(dedent(files), {"EXTERNAL_TARGETS": "one"}).uses)["examples/bench.cu"] is True


def test_cmake_hip_build_evidence_and_its_absence():
    hip = cmake.read(dedent({"CMakeLists.txt": """
        message(STATUS "HIP is not supported yet")
        if(WITH_GPU)
          enable_language(HIP)
        endif()
    """}))
    assert [e.what for e in hip.hip_build] == ["enable_language(HIP)"]
    sycl_for_amd = cmake.read(dedent({"CMakeLists.txt": """
        message(STATUS "building for HIP")
        target_compile_definitions(x PRIVATE __HIP_PLATFORM_AMD__)
        target_link_libraries(x PRIVATE amdhip64)
    """}))
    assert sycl_for_amd.hip_build == []  # linking the HIP runtime from SYCL compiles nothing as HIP


def test_cmake_port_configuration_takes_the_cuda_branches():
    files = dedent({"CMakeLists.txt": """
        option(X_BUILD_CUDA "cuda" OFF)
        set(X_BACKEND "cpu" CACHE STRING "cpu or cuda")
        if(X_BUILD_CUDA)
          enable_language(CUDA)
          add_subdirectory(backend/cuda)
          add_compile_definitions(X_USE_CUDA)
        endif()
        if(X_BACKEND STREQUAL "cuda")
          add_library(x_gpu gpu.cu)
        endif()
    """})
    guarded, port = cmake.read(files), cmake.read(files, port=True)
    assert "backend/cuda" in guarded.dead_dirs and "backend/cuda" not in port.dead_dirs
    assert uses(guarded.uses) == {"gpu.cu": False} and uses(port.uses) == {"gpu.cu": True}
    assert port.definitions["X_USE_CUDA"][0][1].value is True


# --- meson ------------------------------------------------------------------------------
def test_meson_configuration_data_written_through_a_template():
    facts = meson.read(dedent({"meson.build": """
        conf = configuration_data()
        conf.set('HAVE_HIP', true)
        conf.set10('X_HIP_PLATFORM_NVCC', false)
        conf.set('X_TILE', 32)
        conf.set('X_USE_CUDA', get_option('cuda'))
        if get_option('cuda')
          conf.set('HAVE_CUBLAS', true)
          nvcc = find_program('nvcc')
        endif
        configure_file(input: 'config.h.in', output: 'config.h', configuration: conf)
        configure_file(output: 'all.h', configuration: conf)
    """}), templates={"config.h.in": "#mesondefine HAVE_HIP\n#mesondefine X_HIP_PLATFORM_NVCC\n#mesondefine HAVE_CUBLAS\n"})
    found = template_values(facts.template_defines)
    assert found["HAVE_HIP"] == [("", True), ("", True)]  # through the template, and written whole
    assert found["X_HIP_PLATFORM_NVCC"][:2] == [("1", False), ("0", True)]
    assert found["HAVE_CUBLAS"][0] == ("", False)  # set only under the CUDA option, off on ROCm
    assert found["X_TILE"] == [("32", True)]  # no input: every entry is written
    assert facts.generated_from == {"config.h": "config.h.in"}
    assert facts.hip_build == []


def test_meson_port_configuration_takes_the_cuda_options():
    files = dedent({"meson.build": """
        if get_option('cuda')
          nvcc = find_program('nvcc')
          executable('k', 'kernels.cu')
        endif
    """})
    assert uses(meson.read(files).uses) == {"kernels.cu": False}
    assert uses(meson.read(files, port=True).uses) == {"kernels.cu": True}


# --- Makefiles --------------------------------------------------------------------------
def test_makefile_recipes_that_call_hipcc_compile_their_sources_for_amd():
    found, evidence, _hipified = makefile.read(dedent({
        "bench-hip/Makefile": """
            CC = $(ROCM_PATH)/bin/hipcc
            SRC = main.cu kernels.cu
            OBJ = $(SRC:.cu=.o)
            program: $(OBJ)
            \t$(CC) $(OBJ) -o $@
            %.o: %.cu kernels.h
            \t$(CC) $(CFLAGS) -c $< -o $@
        """,
        "tools/Makefile": """
            SRC = $(wildcard *.cpp)
            tool: $(SRC)
            \thipcc -O2 $^ -o $@
        """,
        "bench-cuda/Makefile": """
            NVCC = nvcc
            main.o: main.cu
            \t$(NVCC) -c main.cu
        """,
    }))
    assert {(u.path, u.glob) for u in found} >= {("bench-hip/main.cu", ""), ("bench-hip/kernels.cu", ""),
                                                  ("tools/*.cpp", "GLOB")}
    assert not any(u.path.startswith("bench-cuda/") for u in found)
    assert all(u.cond.value is True for u in found)
    assert [e.where for e in evidence] == ["bench-hip/Makefile:5", "tools/Makefile:3"]


def test_makefile_pattern_rules_that_run_hipify_map_a_folder_to_its_hip_copy():
    _uses, _evidence, hipified = makefile.read(dedent({"make.gen.hip": """
        HIPIFY ?= tools/hipify-perl
        kernels_hip/%.hip.cpp: kernels/%.cu
        \t@mkdir -p $(dir $@)
        \t$(HIPIFY) $< > $@
        docs_out/%.html: docs/%.md
        \tpandoc $< -o $@
    """}))
    assert [(source, output, why.where) for source, output, why in hipified] == [
        ("kernels", "kernels_hip", "make.gen.hip:3")]  # (dedent keeps the text's leading newline)
    assert makefile.is_makefile("make.inc") and makefile.is_makefile("Makefile.internal")
    assert not makefile.is_makefile("makeup.txt")
