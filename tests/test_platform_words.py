"""One module answers "does this word name a platform" for both halves; each reader bounds a
word its own way on purpose, and these cases pin the differences (rocmlint/platform_words.py)."""
from __future__ import annotations

import pytest

from rocmlint.platform_words import CUDA, HIP, HIP_ON_NVIDIA, OTHER_GPU, names_platform, switch_platform

CASES = [
    # (reader, text, names a platform)
    ("python-gate", "is_hip", True),
    ("python-gate", "on_amd", True),
    ("python-gate", "IS_ROCM", True),
    ("python-gate", "amd64_wheel", False),  # amd runs into a digit: the CPU
    ("python-gate", "shipping", False),
    ("python-gate", "mi300x_tuning", False),  # an MI name is no gate
    ("manifest", "requirements_rocm.txt", True),
    ("manifest", "docker/mi300x/requirements.txt", True),  # a file or folder named for an MI GPU
    ("manifest", "requirements_macos_amd64.txt", False),  # amd64 is the CPU
    ("manifest", "requirements-amd.txt", True),
    ("manifest", "chip_list.txt", False),
    ("manifest", "tasks/rocmbench/test_gemm.py", True),  # a compound that starts with rocm
    ("manifest", "tasks/trocm/test_gemm.py", False),
    ("python-build", "use_rocm", True),
    ("python-build", "IS_HIP_EXTENSION", True),
    ("python-build", "build_for_amd", False),  # in a build script amd names CPUs too
    ("python-build", "hipify", False),
    ("cmake-hip", "hipify_torch", True),
    ("cmake-hip", "target_link_libraries(x roc::rocprim)", True),
    ("cmake-hip", "shipping_list", False),
    ("cmake-cuda", "find_package(CUDAToolkit)", True),
    ("cmake-cuda", "add_library(stub no_cuda.cpp)", False),  # named for the platform's absence
    ("cmake-cuda", "nvtx3", True),
    ("cmake-other", "add_subdirectory(sycl)", True),
    ("cmake-other", "metallic_paint", False),
]


@pytest.mark.parametrize("reader, text, expected", CASES)
def test_each_reader_bounds_platform_words_its_own_way(reader, text, expected):
    assert names_platform(text, reader) is expected


@pytest.mark.parametrize("name, platform", [
    ("GGML_USE_HIP", HIP),
    ("LIB_USING_HIP", HIP),  # USING is a switch word
    ("LIB_USING_CUDA", CUDA),
    ("KOKKOS_ENABLE_CUDA", CUDA),
    ("RAJA_BACKENDS_CUDA", CUDA),
    ("USE_HIPBLAS", HIP),  # a word that starts with HIP names HIP's part
    ("USE_CUDAUVM_NVEC", CUDA),
    ("GINKGO_HIP_PLATFORM_NVCC", HIP_ON_NVIDIA),
    ("SK_HIP_PLATFORM_AMD", HIP),
    ("ENABLE_SYCL", OTHER_GPU),
    ("TESSEL_RUNTIME_ALPHA", None),  # says nothing: what the switch guards must decide
    ("CUDA_VERSION", None),
])
def test_a_switch_name_states_its_platform(name, platform):
    assert switch_platform(name) == platform


def test_every_reader_has_cases():
    from rocmlint.platform_words import READERS

    assert {reader for reader, _, _ in CASES} == set(READERS)
    assert all(any(r == reader and e for r, _, e in CASES) and any(r == reader and not e for r, _, e in CASES)
               for reader in READERS)
