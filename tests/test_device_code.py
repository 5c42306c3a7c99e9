"""Device code read from the text (rocmlint/cpp/device_code.py): lanes, warp masks and
wave-wide operations exist only there, so ROC203 and ROC204's lane-group model skip host
files (and their parse)."""
from __future__ import annotations

import json

import pytest
from test_cli import run_cli

from rocmlint.config import Settings
from rocmlint.cpp.context import CppContext
from rocmlint.cpp.device_code import has_device_code
from rocmlint.engine import analyse_buffer, rules_for
from rocmlint.project import activate


@pytest.mark.parametrize("code, device", [
    ("__global__ void k(float* x) { x[0] = 0; }\n", True),
    ("CUTLASS_DEVICE void f() {}\n", True),
    ("CK_TILE_HOST_DEVICE int g() { return 1; }\n", True),
    ("__DEVICE__ int h() { return 1; }\n", True),
    ("DEVICE_INLINE int h() { return 1; }\n", True),
    ("int f(int i) { return threadIdx.x + i; }\n", True),
    ("void launch() { k<<<1, 64>>>(); }\n", True),
    # host code that only names devices, or writes device words in strings and comments
    ("int n = clGetDeviceInfo(d, CL_DEVICE_TYPE_GPU, 0, 0, 0) + GGML_VK_MAX_DEVICES;\n", False),
    ('const char* env = getenv("GGML_OPENCL_DEVICE"); // __global__ in OpenCL C\n', False),
    ('const char* src = "__kernel void k() { int t = threadIdx.x; }";\n', False),
    ("int plan(int tid) { return tid % 32; }\n", False),
])
def test_device_code_is_read_from_code_not_from_strings_or_comments(code, device):
    assert has_device_code(CppContext("k.cpp", code.encode(), Settings())) is device


def _roc203(code: str, path: str):
    return [(f.code, f.line) for f in analyse_buffer(path, code.encode(), "cpp", Settings(),
                                                     rules_for(("ROC203",), (), "cpp"))]


def test_a_host_function_ending_in_sync_takes_no_warp_mask():
    host = "#include <cstdint>\nvoid queue_sync(uint32_t mask, int id);\nvoid flush(int id) { queue_sync(0xffffffff, id); }\n"
    assert _roc203(host, "q.cpp") == []
    device = host.replace("void flush", "__device__ void flush")
    assert _roc203(device, "q.cu") == [("ROC203", 3)]


def test_a_project_macro_that_is_a_device_qualifier_marks_device_code(tmp_path, capsys):
    """`KERNEL` is `__global__` in another header of the project: the file using it is device
    code, known from the project model (and recorded, so an edit of the header re-checks it)."""
    (tmp_path / "rocmlint.toml").write_text("root = true\n")
    (tmp_path / "qualifiers.h").write_text("#pragma once\n#include <hip/hip_runtime.h>\n#define KERNEL __global__\n")
    (tmp_path / "sync.h").write_text("#pragma once\nvoid lanes_sync(unsigned mask, int v);\n")
    (tmp_path / "k.cpp").write_text('#include "qualifiers.h"\n#include "sync.h"\n'
                                    "KERNEL void k(int v) { lanes_sync(0xffffffff, v); }\n")
    try:
        code, out, _err = run_cli(["check", "--no-cache", "--select", "ROC203", "--output-format", "json", "."],
                                  tmp_path, capsys)
    finally:
        activate(None)
    assert code == 1 and [(f["code"], f["line"]) for f in json.loads(out)] == [("ROC203", 3)]
