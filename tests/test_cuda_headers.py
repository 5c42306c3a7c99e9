"""The CUDA-only header table (rocmlint/cpp/cuda_headers.py): checked against the header
map hipify itself uses, covered by a fixture line per header, and the one table both ROC303
and the project model read."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from rocmlint.cpp import cuda_headers
from rocmlint.cpp.cuda_headers import CUDA_HEADERS, counterpart, hipify_maps, lookup
from rocmlint.project import tables

from test_cli import run_cli

# In a folder of its own: the AMD view still names headers with no ROCm counterpart (reported,
# never fixed), so the fixed-fixture build tests (fixtures/cpp/*) leave it out.
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "cpp" / "toolkit" / "toolkit_includes.cuh"


def torch_include_map() -> dict[str, str]:
    """torch's ``CUDA_INCLUDE_MAP`` (torch/utils/hipify/cuda_to_hip_mappings.py: the table
    torch.utils.hipify and hipify_torch rewrite includes with), read with ``ast``: torch is
    the ``hipify-map`` extra (the CPU wheel, installed by CI), never imported here."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        if os.environ.get("CI"):
            pytest.fail("torch (the hipify-map extra's torch==2.13.0) is not installed: CI must check the header table")
        pytest.skip("torch not installed: pip install -e '.[hipify-map]' to check the table against hipify's map")
    source = Path(spec.origin).parent / "utils" / "hipify" / "cuda_to_hip_mappings.py"
    module = ast.parse(source.read_text(encoding="utf-8"))
    names: dict[str, str] = {}  # module-level string constants (an `x if fbcode else y`: y)
    mapping: dict[str, str] = {}

    def text(node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.IfExp):
            return text(node.orelse)
        raise AssertionError(f"unexpected entry in torch's include map: {ast.dump(node)}")

    for statement in module.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            continue
        name = statement.targets[0].id
        if name == "CUDA_INCLUDE_MAP":
            call = statement.value
            assert isinstance(call, ast.Call) and isinstance(call.args[0], ast.List)
            for item in call.args[0].elts:
                assert isinstance(item, ast.Tuple)
                mapping[_bare(text(item.elts[0]))] = _bare(text(item.elts[1]))
        elif isinstance(statement.value, (ast.Constant, ast.IfExp)):
            try:
                names[name] = text(statement.value)
            except (AssertionError, KeyError):
                pass
    assert len(mapping) > 40, "torch's include map was not found where expected"
    return mapping


def _bare(header: str) -> str:
    """``include <cuda.h`` / ``<nccl.h>`` -> the header name."""
    return re.sub(r'^(?:include\s*)?[<"]|[>"]$', "", header)


def test_every_header_hipify_maps_is_in_the_table_with_the_same_target():
    for cuda, hip in torch_include_map().items():
        probe = cuda if "." in cuda.rpartition("/")[2] else cuda + "/execution_policy.h"  # a folder
        entry = lookup(probe)
        assert entry is not None, f"<{cuda}> is missing from rocmlint/cpp/cuda_headers.py"
        assert entry.hipify, f"hipify rewrites <{cuda}>: its entry must say hipify=True"
        expected = hip if probe == cuda else hip + probe[len(cuda):]
        assert hipify_maps(probe) == expected, cuda


def test_the_table_claims_no_hipify_rename_that_hipify_lacks():
    torch_map = torch_include_map()
    for entry in CUDA_HEADERS:
        if entry.hipify:
            key = entry.cuda.rstrip("/")
            assert key in torch_map, f"<{entry.cuda}> says hipify=True but hipify leaves it"
            assert torch_map[key] == entry.hip.rstrip("/"), entry.cuda  # type: ignore[union-attr]


def test_one_table_serves_roc303_and_the_project_model():
    assert tables.hipify_maps is cuda_headers.hipify_maps
    assert hipify_maps("cub/warp/warp_reduce.cuh") is None  # hipify leaves it: ROC303 reports it
    assert counterpart("cub/warp/warp_reduce.cuh") == "hipcub/hipcub.hpp"
    assert counterpart("thrust/system/cuda/execution_policy.h") == "thrust/system/hip/execution_policy.h"
    assert lookup("cuda/std/atomic").cuda == "cuda/std/"  # the longest folder wins
    assert lookup("hip/hip_runtime.h") is None and lookup("cuda/") is None


def test_every_entry_has_a_fixture_line_that_fires():
    text = FIXTURE.read_text()
    fired = re.findall(r"#include <([^>]+)>  // ruleid: ROC303", text)
    covered = {lookup(header) for header in fired}
    missing = [entry.cuda for entry in CUDA_HEADERS if entry not in covered]
    assert not missing, f"add a fixture line to {FIXTURE.name} for: {missing}"
    # and each fires with its table entry's advice (the fixture harness checks where)
    for entry in CUDA_HEADERS:
        assert entry.hip is not None or not entry.hipify


def run_json(tmp_path: Path, capsys, *paths: str) -> list[dict]:
    _code, out, _err = run_cli(["--no-cache", "--select", "ROC303", "--output-format", "json", *paths], tmp_path, capsys)
    return json.loads(out)


def test_messages_name_the_counterpart_or_say_there_is_none(tmp_path, capsys):
    (tmp_path / "k.cu").write_text("#include <nvtx3/nvtx3.hpp>\n#include <cudnn_frontend.h>\n"
                                   "#include <cooperative_groups/reduce.h>\n")
    found = run_json(tmp_path, capsys, "k.cu")
    by_line = {f["line"]: f for f in found}
    assert "use <roctracer/roctx.h>" in by_line[1]["message"] and by_line[1]["fix"]["applicability"] == "safe"
    assert "no ROCm counterpart, gate the code" in by_line[2]["message"] and by_line[2]["fix"] is None
    assert by_line[3]["fix"]["applicability"] == "unsafe"  # only recent ROCm releases have it


def test_a_project_header_with_a_toolkit_name_is_not_reported(tmp_path, capsys):
    (tmp_path / "vector_types.h").write_text("struct float3_ { float x, y, z; };\n")
    (tmp_path / "k.cu").write_text('#include "vector_types.h"\n#include <vector_types.h>\n')
    assert [f["line"] for f in run_json(tmp_path, capsys, "k.cu")] == [2]  # the <...> one is the toolkit's
