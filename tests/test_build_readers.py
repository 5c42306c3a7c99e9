"""The build-file readers, each on the constructs it must follow (never running anything):
CMake (rocmlint/project/cmake.py), setup.py (pybuild.py), meson.build (meson.py)."""
from __future__ import annotations

import textwrap

from rocmlint.project import cmake, meson, pybuild


def uses(found) -> dict[str, bool | None]:
    return {u.path: u.cond.value for u in found}


def cmake_facts(files: dict[str, str], options=None):
    return cmake.read({rel: textwrap.dedent(text) for rel, text in files.items()}, options)


def test_cmake_selector_learned_from_what_its_branches_do():
    facts = cmake_facts({"CMakeLists.txt": """
        set(GPU_BACKEND "none" CACHE STRING "gpu backend")
        if(GPU_BACKEND STREQUAL "accel_a")
          enable_language(CUDA)
          set(SRCS a.cu)
          add_definitions(-DLIB_ACCEL_A)
        elseif(GPU_BACKEND STREQUAL "accel_b")
          enable_language(HIP)
          set(SRCS b.hip)
          add_definitions(-DLIB_ACCEL_B)
        endif()
        add_library(lib common.cpp ${SRCS})
    """})
    # Neither value names a platform: the branches' work decides (accel_b is ROCm's).
    assert uses(facts.uses) == {"common.cpp": True, "a.cu": False, "b.hip": True}
    assert facts.definitions["LIB_ACCEL_A"][0][1].value is False
    assert facts.definitions["LIB_ACCEL_B"][0][1].value is True


def test_cmake_build_options_override_what_is_learned():
    files = {"CMakeLists.txt": """
        option(WITH_EXTRAS "extras" OFF)
        if(WITH_EXTRAS)
          add_library(extras extras.cpp)
        endif()
    """}
    assert uses(cmake_facts(files).uses) == {"extras.cpp": None}
    assert uses(cmake_facts(files, {"WITH_EXTRAS": "OFF"}).uses) == {"extras.cpp": False}


def test_cmake_functions_foreach_parent_scope_and_subdirectories():
    facts = cmake_facts({
        "cmake/helpers.cmake": """
            function(collect_sources out)
              file(GLOB found ${ARGN})
              set(${out} ${found} PARENT_SCOPE)
            endfunction()
        """,
        "CMakeLists.txt": """
            include(cmake/helpers.cmake)
            option(BUILD_CUDA_BACKEND "cuda" OFF)
            if(BUILD_CUDA_BACKEND)
              find_package(CUDAToolkit REQUIRED)
              add_subdirectory(cuda)
            endif()
            add_subdirectory(kernels)
        """,
        "cuda/CMakeLists.txt": "add_library(cuda_backend backend.cu)\n",
        "kernels/CMakeLists.txt": """
            collect_sources(KERNELS src/*.cpp)
            foreach(t fast small)
              add_library(kern_${t} ${KERNELS})
            endforeach()
        """,
    })
    found = uses(facts.uses)
    assert found["kernels/src/*.cpp"] is True  # the glob ran in the caller's folder
    assert found["cuda/backend.cu"] is False and "cuda" in facts.dead_dirs


def test_cmake_nested_subdirectories_and_a_stub_named_for_a_platforms_absence():
    facts = cmake_facts({
        "CMakeLists.txt": """
            option(LIB_BUILD_CUDA "cuda backend" OFF)
            option(LIB_BUILD_ROCM "rocm backend" OFF)
            if(LIB_BUILD_CUDA)
              enable_language(CUDA)
            endif()
            if(LIB_BUILD_ROCM)
              enable_language(HIP)
            endif()
            add_subdirectory(lib)
        """,
        "lib/CMakeLists.txt": """
            add_library(core core.cpp)
            if(LIB_BUILD_CUDA)
              add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/backend/cuda)
            else()
              target_sources(core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/backend/cuda/no_cuda.cpp)
            endif()
            if(LIB_BUILD_ROCM)
              add_subdirectory(backend/rocm)
            endif()
        """,
        "lib/backend/cuda/CMakeLists.txt": "target_sources(core PRIVATE device.cu)\n",
        "lib/backend/rocm/CMakeLists.txt": "target_sources(core PRIVATE device.hip)\n",
    })
    # add_subdirectory below a subfolder resolves against that folder once; the else's stub
    # (no_cuda.cpp, in the cuda folder) does not make the CUDA switch a ROCm one
    assert uses(facts.uses) == {"lib/core.cpp": True, "lib/backend/cuda/device.cu": False,
                                "lib/backend/cuda/no_cuda.cpp": True, "lib/backend/rocm/device.hip": True}


def test_cmake_fatal_error_certain_in_a_block_ends_it_and_toolkit_found_stays_unknown():
    facts = cmake_facts({"CMakeLists.txt": """
        if(TARGET_KIND STREQUAL "experimental")
          if(NOT VARIANT STREQUAL "cuda")
            message(FATAL_ERROR "experimental needs CUDA")
          endif()
          add_library(exp exp.cu)
        endif()
        find_package(CUDAToolkit)
        if(CUDAToolkit_FOUND)
          add_library(found found.cu)
        endif()
    """})
    found = uses(facts.uses)
    assert found["exp.cu"] is False
    assert found["found.cu"] is None  # another build file may compile it for HIP


def test_cmake_cuda_only_keyword_of_a_helper_and_helper_globs():
    facts = cmake_facts({"CMakeLists.txt": """
        gpu_library(NAME x GPU_SRCS src/*.cu CUDA_SPECIFIC_SRCS src/cutlass/*.cu HIP_SPECIFIC_SRCS)
    """})
    found = {(u.path, u.glob): u.cond.value for u in facts.uses}
    assert found == {("src/*.cu", "GLOB"): True, ("src/cutlass/*.cu", "GLOB"): False}


SETUP_CHAIN = '''
import glob, os, torch
from torch.utils.cpp_extension import CUDAExtension, CppExtension

def get_extensions():
    root = os.path.join("pkg", "csrc")
    sources = glob.glob(os.path.join(root, "*.cpp"))
    cuda_sources = glob.glob(os.path.join(root, "**", "*.cu"), recursive=True)
    extension = CppExtension
    if (torch.cuda.is_available() and torch.version.cuda is not None) or os.getenv("FORCE_CUDA") == "1":
        extension = CUDAExtension
        sources += cuda_sources
        flags = ["--use_fast_math", "--extended-lambda"]
    elif torch.version.hip and os.getenv("PKG_CK", "1") == "1":
        extension = CUDAExtension
        sources += [f"pkg/csrc/hip/attn_{kind}.hip" for kind in ("fwd", "bwd")]
    gen = [f"gen/kernel_{d}_sm90.cu" for d in (64, 128)]
    return [extension("pkg._C", sorted(sources) + (gen if os.getenv("SM90") else []))]
'''


def test_setup_py_cuda_branch_before_the_rocm_branch_and_generated_lists():
    found = {(u.path, u.glob): u.cond.value for u in pybuild.read("setup.py", SETUP_CHAIN)}
    assert found[("pkg/csrc/*.cpp", "GLOB")] is True
    assert found[("pkg/csrc/*.cu", "GLOB_RECURSE")] is False  # the branch passing nvcc-only flags
    assert found[("pkg/csrc/hip/attn_*.hip", "GLOB")] is None  # the ROCm branch, under a user's choice
    assert found[("gen/kernel_*_sm90.cu", "GLOB")] is True


def test_setup_py_that_never_tests_for_rocm_and_passes_nvcc_flags_builds_for_cuda_alone():
    script = ("from torch.utils.cpp_extension import CUDAExtension\n"
              "ext = CUDAExtension('x', ['x.cu'], extra_compile_args={'nvcc': ['-gencode', 'arch=compute_90a,code=sm_90a']})\n")
    assert uses(pybuild.read("sub/setup.py", script)) == {"sub/x.cu": False}
    assert uses(pybuild.read("setup.py", "from torch.utils.cpp_extension import CUDAExtension\n"
                                         "ext = CUDAExtension('x', ['x.cu'])\n")) == {"x.cu": True}


OP_BUILDERS = """
from .builder import CUDAOpBuilder


class SparseAttnBuilder(CUDAOpBuilder):
    def is_compatible(self):
        return not self.is_rocm_pytorch()

    def sources(self):
        base = ["csrc/sparse/bindings.cpp"]
        if self.is_rocm_pytorch():
            return base + ["csrc/sparse/attn_hip.cu"]
        if self.cuda_major() >= 12:
            return base + ["csrc/sparse/attn_sm90.cu"]
        return base + ["csrc/sparse/attn.cu"]


class RandomLtdBuilder(CUDAOpBuilder):
    def sources(self):
        raise NotImplementedError("built on demand")
"""


def test_op_builder_sources_early_returns_decide_the_platform():
    found: dict[str, bool | None] = {}
    for use in pybuild.read_builders("ops/op_builder/sparse.py", OP_BUILDERS, folder="ops"):
        found[use.path] = found.get(use.path) or use.cond.value  # built if any return builds it
    # relative to the folder of the setup.py importing the builders; after `if is_rocm: return`
    # the rest runs only for CUDA; the undecided CUDA-version test stays on CUDA's side
    assert found == {"ops/csrc/sparse/bindings.cpp": True, "ops/csrc/sparse/attn_hip.cu": True,
                     "ops/csrc/sparse/attn_sm90.cu": False, "ops/csrc/sparse/attn.cu": False}


def test_op_builder_reader_ignores_modules_without_sources_and_bad_syntax():
    assert pybuild.read_builders("op_builder/x.py", "def sources(:\n", folder="") == []
    assert pybuild.read_builders("op_builder/x.py", "X = ['a.cu']\n", folder="") == []


OTHER_BUILDERS = """
import os
from .builder import CUDAOpBuilder
from .xpu.builder import SYCLOpBuilder


class TileAttnBuilder(CUDAOpBuilder):
    def __init__(self):
        self.cutlass_path = os.environ.get("CUTLASS_PATH")

    def is_compatible(self, verbose=False):
        if self.cutlass_path is None:
            return False
        return super().is_compatible(verbose)

    def sources(self):
        src = "csrc/tile_attn"
        return [f"{src}/attn.cpp", f"{src}/attn_fwd.cu"]


class PackedGemmBuilder(CUDAOpBuilder):
    def is_compatible(self, verbose=False):
        try:
            import cutlass
        except ImportError:
            return False
        return True

    def sources(self):
        return ["csrc/packed/gemm.cu"]


class XpuAdamBuilder(SYCLOpBuilder):
    def sources(self):
        return ["csrc/xpu/adam.dp.cpp"]


class PlainBuilder(CUDAOpBuilder):
    def sources(self):
        return [f"csrc/plain/{name}.cu" for name in ("a", "b")]
"""


def test_op_builders_that_need_cutlass_or_build_for_another_accelerator_are_not_the_amd_builds():
    found = {u.path: (u.glob, u.cond.value) for u in pybuild.read_builders("op_builder/ops.py", OTHER_BUILDERS, "")}
    assert found == {
        # the folder bound in sources() is read into the f-strings: exact paths, not globs
        "csrc/tile_attn/attn.cpp": ("", False), "csrc/tile_attn/attn_fwd.cu": ("", False),
        "csrc/packed/gemm.cu": ("", False),  # `import cutlass` or False
        "csrc/xpu/adam.dp.cpp": ("", False),  # a SYCL builder
        "csrc/plain/*.cu": ("GLOB", True),  # an unknown field stays a pattern
    }
    why = next(u for u in pybuild.read_builders("op_builder/ops.py", OTHER_BUILDERS, "") if u.path.endswith("attn.cpp"))
    assert "TileAttnBuilder.is_compatible() needs CUTLASS" in why.evidence.what


def test_setup_helpers_reach_the_builders_of_sub_packages(tmp_path):
    from rocmlint.project.buildfiles import setup_helpers

    (tmp_path / "op_builder" / "xpu").mkdir(parents=True)
    for rel in ("op_builder/__init__.py", "op_builder/fused.py", "op_builder/xpu/__init__.py",
                "op_builder/xpu/adam.py"):
        (tmp_path / rel).write_text("")
    helpers = setup_helpers(str(tmp_path), {"setup.py": "from op_builder import ALL_OPS\n"})
    assert set(helpers) == {"op_builder/__init__.py", "op_builder/fused.py", "op_builder/xpu/__init__.py",
                            "op_builder/xpu/adam.py"}


def test_meson_selector_in_an_and_chain_and_definitions():
    facts = meson.read({"meson.build": textwrap.dedent("""
        project('p', 'cpp')
        srcs = ['main.cc']
        if get_option('gpu_a') and nvcc.found()
          add_project_arguments('-DP_GPU_A', language : 'cpp')
          srcs += files('a/kernels.cu')
        endif
        if get_option('gpu_b')
          deps = [dependency('hip')]
          srcs += 'b/kernels.hip'
        endif
        executable('p', srcs)
    """)})
    assert uses(facts.uses) == {"main.cc": True, "a/kernels.cu": False, "b/kernels.hip": True}
    assert facts.definitions["P_GPU_A"][0][1].value is False


def test_hipify_output_folders_named_in_cmake_and_setup_py():
    facts = cmake_facts({"CMakeLists.txt": """
        if(USE_ROCM)
          hipify(CUDA_SOURCE_DIR ${PROJECT_SOURCE_DIR}/csrc HIP_SOURCE_DIR ${PROJECT_SOURCE_DIR}/hip_out)
        endif()
    """})
    assert [(s, o) for s, o, _ in facts.hipify_outputs] == [("csrc", "hip_out")]
    _uses, outputs = pybuild.read_build("pkg/setup.py", "from torch.utils.hipify import hipify_python\n"
                                        "hipify_python.hipify(project_directory='.', output_directory='gen/hip')\n")
    assert [(s, o) for s, o, _ in outputs] == [("pkg", "pkg/gen/hip")]


def test_cmake_branch_on_text_read_from_a_file_parses_data_and_selects_no_platform():
    facts = cmake_facts({"CMakeLists.txt": """
        file(READ version.mk version_text)
        if("${version_text}" MATCHES "CUDA_LIB_MAJOR *:= *([0-9]*)")
          set(NCCL_LIKE_MAJOR ${CMAKE_MATCH_1})
        else()
          message(FATAL_ERROR "no version")
        endif()
        add_library(comm comm.cc)
        configure_file(src/comm.h.in ${PROJECT_BINARY_DIR}/include/comm_api.h)
    """})
    # The branch sets a variable with a CUDA-ish name: parsing a version, not CUDA work, so the
    # else's FATAL_ERROR is not certain and the rest of the file is still the ROCm build's.
    assert uses(facts.uses) == {"comm.cc": True}
    assert list(facts.generated) == ["include/comm_api.h"]
    assert facts.generated["include/comm_api.h"].where == "CMakeLists.txt:9"


def test_cmake_hipify_run_by_a_custom_command_hipifies_the_folder():
    facts = cmake_facts({"CMakeLists.txt": """
        find_program(hipify-perl_executable hipify-perl)
        set(SRC_FILES src/init.cc src/device/all_reduce.cu)
        foreach(SRC_FILE ${SRC_FILES})
          add_custom_command(OUTPUT ${HIP_DIR}/${SRC_FILE}
            COMMAND ${hipify-perl_executable} -quiet-warnings ${SRC_FILE} -o ${HIP_DIR}/${SRC_FILE})
        endforeach()
    """, "tools/CMakeLists.txt": "add_custom_target(docs COMMAND doxygen)\n"})
    assert set(facts.hipify_dirs) == {""}
    assert "add_custom_command" in facts.hipify_dirs[""].what


def test_meson_configure_file_output_is_a_generated_header():
    facts = meson.read({"meson.build": "configure_file(input: 'cfg.h.in', output: 'nccl.h', configuration: conf)\n"})
    assert list(facts.generated) == ["nccl.h"]


def test_cmake_branches_that_disagree_on_a_selector_teach_nothing_and_the_value_decides():
    facts = cmake_facts({
        "CMakeLists.txt": """
            add_library(gen gen.cpp)
            if(HIP_COMPILER STREQUAL "nvcc")
              set_source_files_properties(${gen_HIP_SRCS} PROPERTIES LANGUAGE CUDA)
              target_link_libraries(gen hip::device)
            endif()
            if(HIP_COMPILER STREQUAL "nvcc")
              enable_language(CUDA)
            endif()
            add_subdirectory(bench)
        """,
        "bench/CMakeLists.txt": """
            function(add_bench src)
              get_filename_component(target ${src} NAME_WE)
              add_executable(${target} ${src})
            endfunction()
            add_bench(bench_gen.cpp)
            if(HIP_COMPILER STREQUAL "nvcc")
              add_bench(bench_vendor.cpp)
            endif()
        """})
    # The first branch looks like ROCm work (hip::device, a *_HIP_SRCS list), the second like
    # CUDA work: contradictory lessons are dropped and "nvcc" names NVIDIA's compiler.
    assert uses(facts.uses) == {"gen.cpp": True, "bench/bench_gen.cpp": True, "bench/bench_vendor.cpp": False}


def test_cmake_a_backend_selector_equal_to_hip_is_the_rocm_choice_and_switches_follow_it():
    facts = cmake_facts({"CMakeLists.txt": """
        set(COMPUTE_BACKEND "cpu" CACHE STRING "cpu, cuda, hip or xpu")
        if(${COMPUTE_BACKEND} STREQUAL "cuda")
          set(BUILD_CUDA ON)
          set(BUILD_HIP OFF)
        elseif(${COMPUTE_BACKEND} STREQUAL "hip")
          set(BUILD_CUDA OFF)
          set(BUILD_HIP ON)
        else()
          set(BUILD_CUDA OFF)
          set(BUILD_HIP OFF)
        endif()
        set(GPU_FILES ops.cu kernels.cu)
        if(BUILD_CUDA)
          list(APPEND SRC_FILES ${GPU_FILES} mma_sm80.cu)
        elseif(BUILD_HIP)
          list(APPEND SRC_FILES ${GPU_FILES})
        elseif(BUILD_HIP_CPU)
          list(APPEND SRC_FILES cpu_emulation.cpp)
        endif()
        add_library(ops common.cpp ${SRC_FILES})
    """})
    found: dict[str, set] = {}
    for use in facts.uses:
        found.setdefault(use.path, set()).add(use.cond.value)
    # The hip branch is taken, so BUILD_CUDA is OFF: mma_sm80.cu is the NVIDIA build's alone.
    assert found == {"common.cpp": {True}, "ops.cu": {False, True}, "kernels.cu": {False, True},
                     "mma_sm80.cu": {False}, "cpu_emulation.cpp": {False}}


def test_cmake_the_switch_around_a_platform_choice_is_on_in_the_rocm_build():
    facts = cmake_facts({"CMakeLists.txt": """
        option(WITH_GPU "GPU indexes" OFF)
        option(WITH_ROCM "build the GPU part with HIP" OFF)
        if(WITH_GPU)
          if(WITH_ROCM)
            enable_language(HIP)
            add_definitions(-DGPU_IS_HIP)
          else()
            enable_language(CUDA)
          endif()
          add_library(gpu_index index.cu)
        else()
          add_library(gpu_index index_stub.cpp)
        endif()
        if(WITH_BENCH)
          add_executable(bench bench.cpp)
        endif()
    """})
    # WITH_GPU holds the choice between HIP and CUDA: the ROCm build is a GPU build.
    assert facts.definitions["GPU_IS_HIP"][0][1].value is True
    assert uses(facts.uses) == {"index.cu": True, "index_stub.cpp": False, "bench.cpp": None}


HELPER_BUILD = """
from pathlib import Path
from torch.utils.cpp_extension import CUDAExtension
from .utils import rocm_build


def pytorch_extension(csrc: Path):
    sources = [csrc / "common.cpp", csrc / "ops" / "gemm.cu"]
    if not rocm_build():
        sources.extend([csrc / "comm" / "ring_ptx.cu", csrc / "comm" / "ring_host.cpp"])
    else:
        sources.append(Path("extras") / "hip_glue.cpp")
    return CUDAExtension("ext", sources=[str(s) for s in sources])
"""


def test_a_build_helper_function_with_pathlib_joins_and_list_growth():
    found = {(u.path, u.glob): u.cond.value for u in pybuild.read("build_tools/torch_ext.py", HELPER_BUILD)}
    assert found == {
        # a folder known only at run time: a bare name is dropped, a path with folders matches by its end
        ("ops/gemm.cu", "SUFFIX"): True,
        ("comm/ring_ptx.cu", "SUFFIX"): False, ("comm/ring_host.cpp", "SUFFIX"): False,
        ("build_tools/extras/hip_glue.cpp", ""): True,
    }


def test_suffix_uses_decide_files_whose_path_ends_so():
    from rocmlint.project.buildfiles import BuildFacts, merge_build_facts

    facts = BuildFacts()
    merge_build_facts(facts, pybuild.read("build_tools/torch_ext.py", HELPER_BUILD), {})
    assert facts.nvidia_source("te/pytorch/csrc/comm/ring_ptx.cu") is not None
    assert facts.nvidia_source("te/pytorch/csrc/ops/gemm.cu") is None
    assert facts.nvidia_source("other/ring_ptx.cu") is None  # its folder differs


def test_cmake_keyword_arguments_from_parse_argv_and_a_quoted_source_list():
    """A helper that takes `SOURCES ...` through cmake_parse_arguments(PARSE_ARGV 1 ...) and
    hands "${GPU_SOURCES}" (one quoted argument) to the library command: each source keeps
    the condition it was listed under, so one appended only for CUDA is not the ROCm build's."""
    facts = cmake_facts({
        "cmake/ext.cmake": """
            function(define_ext NAME)
              cmake_parse_arguments(PARSE_ARGV 1 EXT "SHARED" "LANGUAGE" "SOURCES;FLAGS")
              add_library(${NAME} MODULE "${EXT_SOURCES}")
            endfunction()
        """,
        "CMakeLists.txt": """
            include(cmake/ext.cmake)
            if(HIP_FOUND)
              set(GPU_LANG "HIP")
              enable_language(HIP)
            else()
              set(GPU_LANG "CUDA")
            endif()
            set(EXT_SRC "csrc/norm.cu" "csrc/bindings.cpp")
            if(GPU_LANG STREQUAL "CUDA")
              list(APPEND EXT_SRC "csrc/tensor_core_gemm.cu")
            endif()
            define_ext(_ops LANGUAGE ${GPU_LANG} SOURCES ${EXT_SRC} FLAGS -O3)
        """,
    })
    found = uses(facts.uses)
    assert found["csrc/norm.cu"] is True and found["csrc/bindings.cpp"] is True
    assert found["csrc/tensor_core_gemm.cu"] is False
    assert not any(";" in path for path in found)


def test_cmake_lists_stay_distinct_however_they_grow():
    """`list(APPEND)` onto a list already made distinct reads only what it adds: the result
    is the one of deduplicating the whole list, cut at MAX_ITEMS, whichever way it grew."""
    from rocmlint.project.cmake import MAX_ITEMS, Item, _distinct

    first = _distinct([Item(f"src/{n % 7}.cu") for n in range(20)])
    assert [i.text for i in first] == [f"src/{n}.cu" for n in range(7)]
    added = [Item("src/3.cu"), Item("src/new.cu"), Item("src/new.cu", glob="GLOB"), Item("src/new.cu")]
    grown = _distinct(added, first)
    assert grown == _distinct(list(first) + added)
    assert [(i.text, i.glob) for i in grown[7:]] == [("src/new.cu", ""), ("src/new.cu", "GLOB")]
    assert list(first) == [Item(f"src/{n}.cu") for n in range(7)]  # the list it grew from is left as it was
    full = _distinct([Item(f"f{n}.cu") for n in range(MAX_ITEMS + 5)])
    assert len(full) == MAX_ITEMS and _distinct([Item("late.cu")], full) == full
    # the reader's own lists: appended to thousands of times
    facts = cmake.read({"CMakeLists.txt": "set(SRCS a.cu)\n" + "list(APPEND SRCS a.cu b.cu)\n" * 3000
                        + "add_library(k ${SRCS})\n"})
    assert sorted({u.path for u in facts.uses if u.path.endswith(".cu")}) == ["a.cu", "b.cu"]
