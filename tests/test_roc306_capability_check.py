"""ROC306: compute-capability comparisons in C++ answered for the AMD GPUs' GCN/RDNA numbers."""
from __future__ import annotations

import pytest

from rocmlint.config import Settings
from rocmlint.engine import analyse_buffer, rules_for

DISPATCH = """\
void launch_gemm_sm90_tma();
void launch_gemm_generic();
void dispatch(const cudaDeviceProp& prop) {{
  if ({test}) {{
    launch_gemm_sm90_tma();
  }} else {{
    launch_gemm_generic();
  }}
}}
"""


def findings(code: str, path: str = "dispatch.cu") -> list[tuple[int, str]]:
    found = analyse_buffer(path, code.encode(), "cpp", Settings(select=("ROC306",)), rules_for(("ROC306",), (), "cpp"))
    return [(f.line, f.message) for f in found if f.code == "ROC306"]


# The evaluation table: which AMD GPUs take the NVIDIA architecture's side, and as what.
@pytest.mark.parametrize("test, said", [
    ("prop.major >= 9", "is true on every AMD GPU: the Hopper (SM 9.0+) path"),
    ("prop.major == 9", "is true on MI200 (gfx90a, 9.0), MI300 (gfx942, 9.4), MI350 (gfx950, 9.5): the Hopper (SM 9.0)"),
    ("prop.major == 9 && prop.minor == 0", "is true on MI200 (gfx90a, 9.0): the Hopper (SM 9.0) path"),
    ("prop.major * 10 + prop.minor >= 90", "is true on every AMD GPU: the Hopper (SM 9.0+) path"),
    ("prop.major * 100 + prop.minor * 10 >= 900", "is true on every AMD GPU: the Hopper (SM 9.0+) path"),
    ("prop.major >= 10", "is true on RDNA2 (gfx1030, 10.3), RDNA3 (gfx1100, 11.0), RDNA4 (gfx1200, 12.0): the "
                         "Blackwell (SM 10.0+) path"),
    ("prop.major == 12", "is true on RDNA4 (gfx1200, 12.0): the Blackwell (SM 12.0+) path"),
    ("prop.major < 9", "is false on every AMD GPU: the Hopper (SM 9.0+) path"),
    ("!(prop.major == 9 && prop.minor == 0)", "is false on MI200 (gfx90a, 9.0): the Hopper (SM 9.0) path"),
    ("prop.major * 10 + prop.minor >= 89", "tests FP8 but is true on MI200 (gfx90a, 9.0), RDNA2 (gfx1030, 10.3), "
                                           "RDNA3 (gfx1100, 11.0), which lack it"),
    # a condition that is not the capability's alone: its capability part is judged
    ("__CUDACC_VER_MAJOR__ >= 12 && prop.major >= 9", "is true on every AMD GPU: the Hopper (SM 9.0+) path"),
])
def test_which_amd_gpus_take_the_nvidia_side(test, said):
    found = findings(DISPATCH.format(test=test))
    assert len(found) == 1, found
    line, message = found[0]
    assert line == 4
    assert f"`{test}` {said}" in message, message
    assert "__HIP_PLATFORM_AMD__" in message and "gcnArchName" in message


@pytest.mark.parametrize("test", [
    "prop.major < 6",  # the same answer on every NVIDIA GPU it tests: not an architecture gate
    "prop.major >= 8",  # bf16 from 8.0, and the side names no NVIDIA-only feature: right on AMD
    "prop.major == 8",  # Ampere/Ada only: no AMD GPU takes it
    "prop.major == 7 && prop.minor == 5",
    "!is_hip && prop.major >= 9",  # the platform is decided in the same test
    "IS_NVIDIA_PLATFORM && prop.major >= 9",
    "strstr(prop.gcnArchName, \"gfx\") == nullptr && prop.major >= 9",
])
def test_quiet_where_no_amd_gpu_takes_an_nvidia_path(test):
    assert findings(DISPATCH.format(test=test).replace("launch_gemm_sm90_tma", "launch_gemm_fast")) == []


def test_an_nvidia_only_feature_on_the_side_amd_takes_is_reported_even_for_a_right_number():
    code = DISPATCH.format(test="prop.major >= 8").replace("launch_gemm_sm90_tma", "launchCpAsyncGemm")
    [(line, message)] = findings(code)
    assert "`prop.major >= 8` is true on every AMD GPU: the Ampere (SM 8.0+) path runs NVIDIA-only `Cp_Async`" \
        in message


def test_a_value_read_through_the_attribute_api_a_local_and_a_helper():
    code = """\
int sm_version(int dev) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major * 10 + minor;
}
void run(int dev) {
  int sm = sm_version(dev);
  if (sm >= 90) launch_wgmma_gemm();
  int cc = 0;
  cuDeviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (cc == 9) launch_wgmma_gemm();
}
"""
    found = findings(code)
    assert [line for line, _ in found] == [9, 12]
    assert "`sm >= 90` is true on every AMD GPU" in found[0][1]
    assert "`cc == 9` is true on MI200" in found[1][1]


def test_else_if_after_a_test_every_amd_gpu_passes_is_not_reached():
    code = """\
void dispatch(const cudaDeviceProp& prop) {
  if (prop.major >= 9) {
    launch_hopper();
  } else if (prop.major >= 8) {
    launch_ampere_cp_async();
  } else {
    TORCH_CHECK(prop.major * 10 + prop.minor >= 75, "needs Turing");
    launch_turing();
  }
}
"""
    assert [line for line, _ in findings(code)] == [2]


@pytest.mark.parametrize("code", [
    # printed, not compared
    "void show(const cudaDeviceProp& prop) { printf(\"sm_%d%d\\n\", prop.major, prop.minor); }\n",
    # the preprocessor's, not a run-time comparison (and hipcc never defines __CUDA_ARCH__)
    "__device__ void f(float* x) {\n#if __CUDA_ARCH__ >= 900\n  x[0] = 1.f;\n#else\n  x[0] = 0.f;\n#endif\n}\n",
    # under a platform #if
    "void f(const cudaDeviceProp& prop) {\n#ifdef USE_ROCM\n  if (prop.major >= 9) use_gfx9_path();\n#endif\n}\n",
    "void f(const cudaDeviceProp& prop) {\n#ifndef __HIP_PLATFORM_AMD__\n  if (prop.major >= 9) launch_tma();\n#endif\n}\n",
    # inside an if on the platform, or after one that returns
    "void f(const cudaDeviceProp& prop, bool on_rocm) {\n  if (!on_rocm) {\n    if (prop.major >= 9) launch_tma();\n"
    "  }\n}\n",
    "void f(const cudaDeviceProp& prop) {\n  if (is_amd_gpu()) {\n    launch_generic();\n    return;\n  }\n"
    "  if (prop.major >= 9) launch_tma();\n}\n",
    # only tuning numbers
    "int stages(const cudaDeviceProp& prop) { return prop.major >= 9 ? 4 : 2; }\n",
    "void f(const cudaDeviceProp& prop, int& tile) {\n  if (prop.major >= 9) {\n    tile = 128;\n  } else {\n"
    "    tile = 64;\n  }\n}\n",
    # a version struct that is not the device's
    "struct Version { int major, minor; };\nbool newer(const Version& v) { return v.major >= 9; }\n"
    "void f(cudaDeviceProp& prop) { cudaGetDeviceProperties(&prop, 0); }\n",
    # a file built on CUTLASS compiles for NVIDIA only (ROC302 reports it)
    "#include <cutlass/gemm/device/gemm.h>\nint main() {\n  cudaDeviceProp props;\n"
    "  if (props.major != 9) return 0;\n  return 1;\n}\n",
])
def test_quiet(code):
    assert findings(code) == []


def test_the_fixture_dispatcher():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "fixtures" / "cpp" / "capability_dispatch.cu"
    found = findings(path.read_text(), str(path))
    assert [line for line, _ in found] == [32, 45, 55, 74, 83]
