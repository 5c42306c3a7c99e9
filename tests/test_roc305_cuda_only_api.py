"""ROC305 cuda-only-api: the table of CUDA APIs HIP lacks, its fixtures, its messages."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fixture_harness import ROOT, analyse_fixture
from rocmlint.config import Settings
from rocmlint.cpp import cuda_only_apis as table
from rocmlint.engine import analyse_buffer, rules_for
from rocmlint.literals import required_literals
from rocmlint.registry import all_rules

SETTINGS = Settings()
FIXTURES = [ROOT / "fixtures" / "cpp" / name for name in ("nvshmem_allreduce.cu", "hopper_tiles.cu",
                                                         "dlpack_bridge.cpp")]
_NAMED = re.compile(r"`([^`]+)`")


def lint(code: str, path: str = "k.cu", select=("ROC305",)):
    return analyse_buffer(path, code.encode(), "cpp", SETTINGS, rules_for(select, (), "cpp"))


def messages(code: str, **kw) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in lint(code, **kw) if f.code == "ROC305"]


def _named(message: str) -> list[str]:
    """The names a finding reports: the first, and those after "also on this line"."""
    head, _, also = message.partition("; also on this line: ")
    return [_NAMED.search(head).group(1)] + _NAMED.findall(also)  # type: ignore[union-attr]


def test_the_rule_is_registered():
    rule = all_rules()["ROC305"]
    assert (rule.name, rule.language) == ("cuda-only-api", "cpp")


def test_every_table_entry_is_exercised_by_the_fixtures():
    found: set[str] = set()
    for path in FIXTURES:
        *_rest, findings = analyse_fixture(path)
        for finding in findings:
            if finding.code != "ROC305":
                continue
            if "(cluster_group member" in finding.message:
                found.add("cluster.sync()")
            for name in _named(finding.message):
                entry = table.lookup(name)
                if entry is not None:
                    found.add(entry.cuda)
    assert sorted({e.cuda for e in table.CUDA_ONLY_APIS} - found) == []


def test_every_entry_has_a_counterpart_or_none_and_says_what_it_is():
    names = [e.cuda for e in table.CUDA_ONLY_APIS]
    assert len(names) == len(set(names))
    for entry in table.CUDA_ONLY_APIS:
        assert entry.what and entry.regex, entry.cuda
        assert entry.rocm is None or entry.rocm.strip(), entry.cuda
        said = table.message(entry, entry.cuda)
        if entry.rocm is None:
            assert "has no ROCm counterpart: this code needs a rewrite for AMD" in said
        else:
            assert "is the ROCm counterpart" in said
        re.compile(entry.regex)


def test_every_entry_starts_with_a_literal_character():
    """So that ``re`` skips to the pattern's first characters (a leading ``\\b`` or look-behind is
    tried at every byte): each top-level branch of the rule's pattern starts with a literal."""
    import sys

    if sys.version_info >= (3, 11):
        from re import _constants as C  # type: ignore[attr-defined]
        from re import _parser as P  # type: ignore[attr-defined]
    else:
        import sre_constants as C
        import sre_parse as P
    for entry in table.CUDA_ONLY_APIS:
        if entry.via:
            continue
        parsed = P.parse(entry.regex)
        branches = parsed.data[0][1][1] if parsed.data[0][0] is C.BRANCH and len(parsed.data) == 1 else [parsed.data]
        for branch in branches:
            assert list(branch)[0][0] is C.LITERAL, entry.cuda


def test_every_searched_entry_has_prefilter_factors():
    for entry in table.CUDA_ONLY_APIS:
        if not entry.via:
            assert required_literals(entry.regex, re.MULTILINE), entry.cuda
    rule = all_rules()["ROC305"]
    literals = rule.literals()
    assert literals and all(len(word) >= 6 for word in literals)
    plain = (b"__global__ void k(float* x) { __syncthreads(); x[threadIdx.x] *= 2.f; }\n"
             b"#include <cuda_runtime.h>\nauto s = at::cuda::getCurrentCUDAStream();\n")
    assert not any(word in plain for word in literals), "ordinary CUDA code passes ROC305's prefilter"


def test_the_intrinsics_are_absent_from_the_installed_hip_headers():
    hip = Path("/usr/include/hip")
    if not (hip / "hip_version.h").exists():
        pytest.skip("no HIP headers installed")
    text = "\n".join(p.read_text(errors="replace") for p in hip.rglob("*.h")
                     if "nvidia_detail" not in p.parts and "nvcc_detail" not in p.parts)
    for name in ("__heq2_mask", "__hne2_mask", "__hlt2_mask", "__hle2_mask", "__hgt2_mask", "__hge2_mask",
                 "__hequ2_mask", "__hgtu2_mask", "__stcs", "__stcg", "__stwb", "__stwt", "__ldlu", "__ldcv",
                 "__nanosleep", "__grid_constant__", "__cluster_dims__", "labeled_partition", "this_cluster"):
        assert re.search(r"\b" + re.escape(name) + r"\b", text) is None, f"HIP defines {name}"
        assert table.lookup(name) is not None, name


def test_nvshmem_messages_name_the_rocshmem_counterpart():
    code = ("__global__ void put(float* dst, const float* src, size_t n, int pe) {\n"
            "  nvshmem_putmem(dst, src, n, pe);\n"
            "  nvshmemx_putmem_nbi_warp(dst, src, n, pe);\n"
            "  nvshmemx_float_sum_reduce_block(NVSHMEM_TEAM_WORLD, dst, src, n);\n"
            "}\n")
    found = messages(code)
    assert [line for line, _ in found] == [2, 3, 4]
    assert found[0][1].startswith("`nvshmem_putmem` (NVSHMEM API): rocSHMEM's `rocshmem_putmem` is the ROCm "
                                  "counterpart")
    assert "`rocshmem_putmem_nbi_wave`" in found[1][1]
    assert "`rocshmem_float_sum_reduce_wg`" in found[2][1]
    assert found[2][1].endswith("; also on this line: `NVSHMEM_TEAM_WORLD`")


def test_names_without_counterpart_say_a_rewrite_is_needed():
    [(_, message)] = messages("int tiles(int n) { return ::cuda::ceil_div(n, 128); }\n")
    assert message.startswith("`cuda::ceil_div` (libcu++ integer helper (<cuda/cmath>)) has no ROCm "
                              "counterpart: this code needs a rewrite for AMD")
    [(_, message)] = messages("__global__ void k(const __grid_constant__ P p) {}\n")
    assert message.startswith("`__grid_constant__` (kernel parameter qualifier (sm_70+)) has no ROCm counterpart")
    [(_, message)] = messages("__device__ void w() { __nanosleep(100); }\n")
    assert "`__builtin_amdgcn_s_sleep(n)` is the ROCm counterpart" in message


def test_libcudacxx_names_only_in_the_cuda_namespace():
    code = ("auto s = at::cuda::getCurrentCUDAStream();\n"
            "thrust::cuda::par.on(s);\n"
            "c10::cuda::atomic_ref_like x;\n"
            "cuda::std::array<int, 4> a;\n"
            "::cuda::std::span<int> b;\n")
    # one finding a file for the library swap, at its first use, counting the others
    assert [line for line, _ in messages(code)] == [4]
    assert "libhipcxx's `cuda::std::array`" in messages(code)[0][1]
    assert messages(code)[0][1].endswith("(1 more use in this file)")


def test_include_lines_are_left_to_roc303():
    code = "#include <cuda/std/atomic>\n#include <cuda/pipeline>\ncuda::std::atomic<int> hits;\n"
    found = [(f.line, f.code) for f in lint(code, select=("ROC303", "ROC305"))]
    assert found == [(1, "ROC303"), (2, "ROC303"), (3, "ROC305")]


def test_nvidia_only_branches_comments_and_strings_are_not_reported():
    code = ("#if defined(__HIP_PLATFORM_AMD__)\n"
            "  rocshmem_barrier_all();\n"
            "#else\n"
            "  nvshmem_barrier_all();\n"
            "#endif\n"
            "#ifdef __CUDA_ARCH__\n"
            "  __stcs(p, v);\n"
            "#endif\n"
            "// nvshmem_quiet();\n"
            "const char* why = \"needs nvshmem_init\";\n")
    assert messages(code) == []


def test_a_name_the_file_defines_for_amd_is_not_reported():
    shim = ("#ifdef __HIP_PLATFORM_AMD__\n"
            "static __device__ inline unsigned __hgt2_mask(__half2 a, __half2 b) { return 0u; }\n"
            "#endif\n"
            "__device__ unsigned m(__half2 a, __half2 b) { return __hgt2_mask(a, b); }\n")
    assert messages(shim) == []
    nvidia_shim = shim.replace("#ifdef __HIP_PLATFORM_AMD__", "#ifndef __HIP_PLATFORM_AMD__")
    assert [line for line, _ in messages(nvidia_shim)] == [4]


def test_one_finding_per_line_names_the_others():
    [(_, message)] = messages("__global__ void __cluster_dims__(2, 1, 1) k(const __grid_constant__ P p) {}\n")
    assert message.startswith("`__cluster_dims__`")
    assert message.endswith("; also on this line: `__grid_constant__`")


def test_cluster_members_are_found_through_their_variable():
    code = ("__global__ void k(float* out) {\n"
            "  auto cl = cooperative_groups::this_cluster();\n"
            "  unsigned r = cl.block_rank();\n"
            "  cl.sync();\n"
            "  g.sync();\n"
            "}\n")
    found = messages(code)
    assert [line for line, _ in found] == [2, 3, 4]
    assert found[2][1].startswith("`cl.sync()` (cluster_group member, thread-block clusters (sm_90)) has no ROCm")


def test_dlpack_checks_and_names():
    code = ("bool a(const DLTensor& t) {\n  return t.device.device_type == kDLCUDA;\n}\n"
            "void b(DLTensor* t) {\n  t->device = DLDevice{kDLCUDA, 0};\n}\n"
            "bool c(const DLTensor& t) {\n  return t.device.device_type == kDLCUDA ||\n"
            "         t.device.device_type == kDLROCM;\n}\n")
    found = messages(code)
    assert [line for line, _ in found] == [2, 5]
    assert found[0][1] == ("`kDLCUDA` (DLPack device type): `kDLROCM` is the ROCm counterpart (a ROCm tensor reports "
                           "`kDLROCM`: accept it too)")
    assert "name that there" in found[1][1]
    fixes = [f.fix for f in lint(code) if f.fix is not None]
    assert len(fixes) == 1 and fixes[0].applicability.value == "unsafe"


def test_roc305_reads_the_text_only(monkeypatch):
    import rocmlint.cpp.context as context

    def no_parse(*_args):
        raise AssertionError("ROC305 parsed the file")

    monkeypatch.setattr(context, "parse", no_parse)
    code = (ROOT / "fixtures" / "cpp" / "hopper_tiles.cu").read_text()
    assert len(messages(code)) > 20


def test_a_name_the_project_declares_with_the_librarys_prefix_is_not_the_library(tmp_path, capsys, monkeypatch):
    """A wrapper declared in one of the project's headers (`nvshmem_create_tensor`), a member
    and a parameter named `nvshmem_team*` are the project's; the NVSHMEM calls beside them are
    reported, and so is a name a vendored `nvshmem*.h` declares."""
    from test_project_fixtures import run_cli

    (tmp_path / ".git").mkdir()
    (tmp_path / "include" / "shm").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "include" / "shm" / "tensors.h").write_text(
        "#pragma once\n#include <vector>\n#include \"nvshmem_fake.h\"\n"
        "std::vector<float*> nvshmem_create_tensor(size_t bytes, int copies);\n")
    (tmp_path / "include" / "shm" / "nvshmem_fake.h").write_text("void* nvshmem_align(size_t a, size_t b);\n")
    (tmp_path / "src" / "ops.cc").write_text(
        '#include "../include/shm/tensors.h"\n'
        "struct Op {\n"
        "  nvshmem_team_t nvshmem_team;\n"
        "  explicit Op(int nvshmem_team_ /* 0: NVSHMEM_TEAM_WORLD */) : nvshmem_team((nvshmem_team_t)nvshmem_team_) {}\n"
        "  void run(size_t n) {\n"
        "    auto bufs = nvshmem_create_tensor(n, 2);\n"
        "    void* p = nvshmem_align(64, n);\n"
        "    nvshmem_barrier_all();\n"
        "  }\n"
        "};\n")
    _code, out = run_cli(["check", "--no-cache", "--select", "ROC305", "--output-format", "json", "."], tmp_path,
                         capsys, monkeypatch)
    assert sorted((f["line"], _named(f["message"])[0]) for f in json.loads(out)) == [
        (3, "nvshmem_team_t"), (4, "nvshmem_team_t"), (7, "nvshmem_align"), (8, "nvshmem_barrier_all")]
