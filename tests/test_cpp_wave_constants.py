"""What a 32 means (ROC204) and when `warpSize` is the builtin (ROC206): names, uses, fixes."""
from __future__ import annotations

import pytest

from rocmlint.config import Settings
from rocmlint.engine import analyse_buffer, rules_for
from rocmlint.model import Applicability
from rocmlint.runner import fix_buffer

SETTINGS = Settings()


def lint(code: str, path: str = "k.cu", select=("ROC204", "ROC206")):
    return analyse_buffer(path, code.encode(), "cpp", SETTINGS, rules_for(select, (), "cpp"))


def fix(code: str, path: str = "k.cu", select=("ROC204", "ROC206")) -> str:
    outcome = fix_buffer(code.encode(), "\n", path, "cpp", SETTINGS, rules_for(select, (), "cpp"), unsafe=True)
    return outcome.buffer.decode()


@pytest.mark.parametrize("name,said", [
    ("M_Warp_Tile", "data"), ("N_Warp_Tile", "data"), ("threads_per_row", "data"), ("kElemsPerWarp", "data"),
    ("NUM_WARPS", "data"), ("WARP_M", "data"), ("kWarpSize", "warp"), ("WARP_SIZE", "warp"), ("WS", "warp"),
    ("THREADS_PER_WARP", "warp"), ("NumThreadsPerWarp", "warp"), ("NumThreadsPerWarpGroup", "data"), ("kWaveSize", "warp"), ("C10_WARP_SIZE", "warp"), ("NT", None),
])
def test_name_says(name, said):
    from rocmlint.cpp.constant_uses import name_says

    assert name_says(name) == said


def test_tile_sizes_named_after_the_warp_are_not_warp_sizes():
    code = ("#include <hip/hip_runtime.h>\n"
            "constexpr int M_Warp_Tile = 32;\n"
            "constexpr int N_Warp_Tile = 32;\n"
            "__global__ void t(float* c) { c[threadIdx.x / M_Warp_Tile * N_Warp_Tile + threadIdx.x % N_Warp_Tile] = 0; }\n")
    assert lint(code, "t.hip") == []
    assert fix(code, "t.hip") == code


HOST_LAUNCH = (
    "static const int WS = 32;\n"
    "__global__ void lanes(const int* keep, int* out) {\n"
    "  const int lane = threadIdx.x % WS;\n"
    "  out[threadIdx.x] = __popcll(__ballot(keep[threadIdx.x]) & ((1ull << lane) - 1));\n"
    "}\n"
    "void launch(const int* keep, int* out, int blocks) {\n"
    "  lanes<<<blocks, 24 * WS>>>(keep, out);\n"
    "}\n"
)


@pytest.mark.parametrize("path", ["k.cu", "k.hip"])
def test_a_constant_host_code_reads_moves_only_at_its_lane_uses(path):
    findings = lint(HOST_LAUNCH, path)
    assert [(f.code, f.line) for f in findings] == [("ROC204", 1), ("ROC204", 3)]
    definition = findings[0]
    assert definition.fix is None and "line 3" in definition.message and "host code reads it (line 7)" in \
        definition.message and "hipDeviceAttributeWarpSize" in definition.message
    fixed = fix(HOST_LAUNCH, path)
    assert "threadIdx.x % warpSize;" in fixed  # the kernel's lane group moved
    assert "static const int WS = 32;\n" in fixed and "lanes<<<blocks, 24 * WS>>>" in fixed  # host keeps its 32
    assert "__GFX9__" not in fixed and "64" not in fixed  # never a device-only value where host reads


SPLIT = (
    "#include <hip/hip_runtime.h>\n"
    "static const int WS = 32;  // warp size and bits per int\n"
    "static const unsigned MSB = 1u << (WS - 1);\n"
    "static const unsigned Mask = (1u << (WS / 2)) - 1;\n"
    "__global__ void k(const unsigned* w, int* o) {\n"
    "  const int lane = threadIdx.x % WS;\n"
    "  if ((w[0] & MSB) && __any(lane == 0)) o[lane] = w[1] & Mask;\n"
    "}\n"
)


def test_a_warp_and_word_size_constant_keeps_its_word_uses():
    fixed = fix(SPLIT, "k.hip")
    assert "threadIdx.x % warpSize;" in fixed
    assert "static const int WS = 32;" in fixed and "1u << (WS - 1)" in fixed and "(1u << (WS / 2)) - 1" in fixed
    assert lint(fixed, "k.hip") == []  # one lane group, all wave-sized: consistent


def test_a_warp_and_word_size_constant_in_a_shared_file_keeps_nvidia_lines():
    shared = SPLIT.replace("#include <hip/hip_runtime.h>\n", "")
    fixed = fix(shared)
    assert "#if defined(__HIP_PLATFORM_AMD__)\n  const int lane = threadIdx.x % warpSize;\n#else\n" \
           "  const int lane = threadIdx.x % WS;\n#endif\n" in fixed
    assert lint(fixed) == []


def test_a_lane_stride_of_32_over_a_wavefront_lane():
    """A lane of the whole wavefront stepping by 32: lanes 32-63 and the next step of lanes
    0-31 read the same elements."""
    code = ("static const int NT = 32;\n"
            "__global__ void s(const float* in, float* out, int n) {\n"
            "  float acc = 0.f;\n"
            "  for (int i = __lane_id(); i < n; i += NT) acc += in[i];\n"
            "  out[threadIdx.x] = acc;\n"
            "}\n")
    found = lint(code)
    assert [(f.code, f.line) for f in found] == [("ROC204", 1), ("ROC204", 4)]
    assert "a lane stride of 32" in found[1].message and "`__lane_id()`" in found[1].message
    assert "i += warpSize" in fix(code)


def test_host_clamp_of_queried_warp_size():
    code = ("__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
            "int lanes(int dev) {\n"
            "  int n = 0;\n"
            "  hipDeviceGetAttribute(&n, hipDeviceAttributeWarpSize, dev);\n"
            "  int threads = std::min(256, 32);\n"
            "  return std::min(n, 32) + threads;\n"
            "}\n")
    assert [(f.code, f.line) for f in lint(code)] == [("ROC204", 6)]


@pytest.mark.parametrize("call, reported", [
    ("std::min<int>(prop.warpSize, 32)", True),
    ("MIN((int)prop.warpSize, 32)", True),
    ("min(/* (cap) */ prop.warpSize, 32)", True),
    ("::min(prop.warpSize, 32)", True),
    ("pick(prop.warpSize, 32)", False),
    ("pick(std::min(prop.warpSize, 64), 32)", False),
])
def test_host_clamp_is_read_from_the_call_before_any_parse(call, reported):
    """The text before ``, 32)`` rules out most candidates (no parse); what it keeps is judged
    on the tree as before."""
    from rocmlint.checks.cpp.roc204_warp_size_hardcoded import _may_be_min_call

    code = ("__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
            f"int lanes(const hipDeviceProp_t& prop) {{\n  return {call};\n}}\n")
    assert [(f.code, f.line) for f in lint(code)] == ([("ROC204", 3)] if reported else [])
    comma = code.rindex(", 32)")
    assert _may_be_min_call(code.encode(), comma) is (reported or "/*" in call)


SHADOWED = (
    "#include <hip/hip_runtime.h>\n"
    "__device__ float tree(float v) {\n"
    "  constexpr int warpSize = 64;\n"
    "  __shared__ float lanes[warpSize];\n"
    "  static_assert(warpSize == 64, \"\");\n"
    "  lanes[threadIdx.x % warpSize] = v;\n"
    "  return lanes[0];\n"
    "}\n"
    "template <int warpSize> struct Lanes { float buf[warpSize]; };\n"
    "struct Cfg { static constexpr int warpSize = 64; float slots[warpSize]; };\n"
    "__global__ void k(float* o) { __shared__ float s[warpSize]; o[0] = s[0]; }\n"
)


def test_declaration_named_warpsize_shadows_the_builtin():
    findings = lint(SHADOWED, "k.hip")
    assert [(f.code, f.line) for f in findings] == [("ROC206", 11)]
    fixed = fix(SHADOWED, "k.hip")
    assert "constexpr int warpSize = 64;" in fixed and "int 64" not in fixed


def test_constexpr_function_returning_warpsize():
    code = ("#include <hip/hip_runtime.h>\n"
            "__device__ constexpr int lanes() { return warpSize; }\n"
            "__host__ __device__ constexpr int both() { return warpSize; }\n"
            "__device__ int runtime() { return warpSize; }\n")
    findings = lint(code, "k.hip")
    assert [(f.line, f.fix.applicability) for f in findings] == [(2, Applicability.UNSAFE),
                                                                 (3, Applicability.DISPLAY_ONLY)]
    assert "#if defined(__GFX9__)\n__device__ constexpr int lanes() { return 64; }\n#else\n" in fix(code, "k.hip")


def test_literal_in_a_branch_chosen_by_a_tile_dimension_is_that_dimension():
    code = ("template <int I, int J> struct tile {\n"
            "  static __device__ int get_i() {\n"
            "    if constexpr (I == 32 && J == 4) {\n"
            "      return threadIdx.x % 32;\n"
            "    } else {\n"
            "      return threadIdx.x % 16;\n"
            "    }\n"
            "  }\n"
            "};\n"
            "__global__ void k(int* o, int num_consumers) {\n"
            "  if (num_consumers == 32) o[threadIdx.x] = threadIdx.x % 32 + __popcll(__ballot(1));\n"
            "  o[0] = tile<32, 4>::get_i() + __popcll(__ballot(1));\n"
            "}\n")
    assert [(f.code, f.line) for f in lint(code)] == [("ROC204", 11)]


def test_literal_in_the_other_branch_of_a_tile_dimension_test_is_still_judged():
    code = ("template <int K> __device__ int lane_of() {\n"
            "  if constexpr (K == 32) { return 0; }\n"
            "  else { return threadIdx.x % 32; }\n"
            "}\n"
            "__global__ void k(int* o) { o[lane_of<16>()] = __popcll(__ballot(1)); }\n")
    assert [(f.code, f.line) for f in lint(code)] == [("ROC204", 3)]


def test_no_wave_size_choice_where_host_code_reads_the_value():
    """build_fix itself refuses a __GFX9__ choice (device pass only) in host code."""
    from rocmlint.cpp.context import CppContext
    from rocmlint.fixers.cpp_gate import build_fix
    from rocmlint.model import Edit, Span

    source = b"__global__ void k(int* o) { o[0] = 32; }\nint threads() { return 8 * 32; }\n"
    ctx = CppContext("k.cu", source, SETTINGS)
    for at, expected in ((source.index(b"32"), Applicability.UNSAFE),
                         (source.rindex(b"32"), Applicability.DISPLAY_ONLY)):
        node = ctx.root.named_descendant_for_byte_range(at, at + 2)
        literal = Span(at, at + 2)
        fix = build_fix(ctx, node, [], "t", Applicability.UNSAFE,
                        wave_variants=([Edit(literal, "64")], [Edit(literal, "32")]))
        assert fix is not None and fix.applicability is expected


@pytest.mark.parametrize("name", ["WARPSIZE", "WAVESIZE", "WavefrontSize"])
def test_one_word_warp_size_names_say_warp(name):
    from rocmlint.cpp.constant_uses import name_says

    assert name_says(name) == "warp"


# Each kernel reads lane 31 as the last lane of its 32-lane group, and also votes across the
# whole wavefront.
@pytest.mark.parametrize("code,line,text", [
    ("__global__ void k(int *out) {\n  int lane = threadIdx.x % 32;\n  if (lane == 31) out[0] = __any(1);\n}\n",
     3, "`lane == 31` (the last lane of 32)"),
    ("__global__ void k(float *out, float v) {\n  float s = 0.f;\n"
     "  for (int i = 0; i <= 31; ++i) s += __shfl(v, i) * __any(s > 0.f);\n  out[0] = s;\n}\n",
     3, "`i <= 31` (a loop over 32 lanes)"),
    ("__global__ void k(float *out) {\n  int l = (blockIdx.x * blockDim.x + threadIdx.x) & 31;\n"
     "  if (l == 31) out[0] = __all(1);\n}\n", 3, "`l == 31` (the last lane of 32)"),
])
def test_lane_31_and_lane_loops_are_members_of_the_lane_group(code, line, text):
    assert [(f.line, f.message.split(" assumes")[0]) for f in lint(code, select=("ROC204",))
            if f.line == line] == [(line, text)]


def test_a_return_type_named_device_does_not_make_a_host_function_device_code():
    template = ("#define WARP_SIZE 32\nstruct {T} {{ int n; }};\n"
                "__global__ void k(int *out) {{ out[threadIdx.x / WARP_SIZE] = __any(1); }}\n"
                "{T} make_buffer(int n) {{ {T} b{{n * WARP_SIZE}}; return b; }}\n")
    messages = [[f.message for f in lint(template.format(T=name), select=("ROC204",))]
                for name in ("Buffer", "DeviceBuffer")]
    assert messages[0] == messages[1] and "host code reads it (line 4)" in messages[0][0]


def test_a_tile_size_macro_counts_as_its_amd_value():
    """`tiled_partition<TILE>` with TILE 64 on AMD makes wave-sized groups there."""
    code = ("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
            "#ifdef __HIP_PLATFORM_AMD__\n#define TILE 64\n#else\n#define TILE 32\n#endif\n"
            "__global__ void k(int *out) {\n  auto tile = cg::tiled_partition<TILE>(cg::this_thread_block());\n"
            "  int lane = threadIdx.x % 32;\n  out[lane] = tile.thread_rank();\n}\n")
    assert [f.line for f in lint(code, select=("ROC204",))] == [10]
    assert lint(code.replace("#define TILE 64", "#define TILE 32"), select=("ROC204",)) == []
