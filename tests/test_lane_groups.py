"""The lane-group model (rocmlint/cpp/lanegroups.py): what a kernel assumes about lanes,
when its parts disagree, and that a fix leaves every lane group consistent."""
from __future__ import annotations

from pathlib import Path

import pytest

from rocmlint.config import Settings
from rocmlint.cpp.context import CppContext
from rocmlint.cpp.lane_facts import G32, WAVE
from rocmlint.cpp.lanegroups import lane_groups
from rocmlint.engine import analyse_buffer, rules_for
from rocmlint.runner import fix_buffer

SETTINGS = Settings()
WAVE_RULES = ("ROC204", "ROC205", "ROC208")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cpp"


def model(code: str, path: str = "k.hip"):
    return lane_groups(CppContext(path, code.encode(), SETTINGS))


def lint(code: str, path: str = "k.hip", select=WAVE_RULES):
    return analyse_buffer(path, code.encode(), "cpp", SETTINGS, rules_for(select, (), "cpp"))


def fix(code: str, path: str = "k.hip") -> str:
    return fix_buffer(code.encode(), "\n", path, "cpp", SETTINGS, rules_for(WAVE_RULES, (), "cpp"),
                      unsafe=True).buffer.decode()


LOGICAL_WARP = (
    "#include <hip/hip_runtime.h>\n"
    "__device__ float warp_sum(float v) {\n"
    "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);\n"
    "  return v;\n"
    "}\n"
    "__global__ void block_sum(const float* x, float* out) {\n"
    "  __shared__ float partial[32];\n"
    "  const int lane = threadIdx.x % 32;\n"
    "  const int warp = threadIdx.x / 32;\n"
    "  float v = warp_sum(x[blockIdx.x * blockDim.x + threadIdx.x]);\n"
    "  if (lane == 0) partial[warp] = v;\n"
    "  __syncthreads();\n"
    "  if (warp == 0) {\n"
    "    v = lane < blockDim.x / 32 ? partial[lane] : 0.f;\n"
    "    v = warp_sum(v);\n"
    "    if (lane == 0) out[blockIdx.x] = v;\n"
    "  }\n"
    "}\n"
)


def test_a_logical_32_lane_warp_is_consistent_and_silent():
    """Indices, warps per block and reductions all per 32 lanes: on a 64-lane wavefront
    lanes 0 and 32 each hold their own group's sum and write their own slot."""
    lanes = model(LOGICAL_WARP)
    sizes = {fact.size for function in lanes.functions for fact in function.facts}
    assert sizes == {G32}
    assert all(context.consistent for context in lanes.contexts) and lanes.verdicts == []
    assert lint(LOGICAL_WARP) == []


def test_one_wave_wide_vote_makes_the_same_kernel_inconsistent_and_moves_every_member():
    voting = LOGICAL_WARP.replace("  if (lane == 0) partial[warp] = v;\n",
                                  "  if (lane == 0) partial[warp] = v + __popcll(__ballot(v > 0.f));\n")
    found = {(f.code, f.line) for f in lint(voting)}
    # every 32-lane member of the kernel and of the helper it calls
    assert found == {("ROC204", 8), ("ROC204", 9), ("ROC204", 14), ("ROC205", 3)}
    fixed = fix(voting)
    assert "threadIdx.x % warpSize" in fixed and "threadIdx.x / warpSize" in fixed
    assert "blockDim.x / warpSize" in fixed and "o = warpSize / 2" in fixed  # never / 32 beside / warpSize
    assert lint(fixed) == [] and " 32;" not in fixed.split("partial[32];")[1]


def test_a_member_without_a_mechanical_form_leaves_the_whole_group_display_only():
    unrolled = ("#include <hip/hip_runtime.h>\n"
                "__global__ void k(const float* x, float* out) {\n"
                "  const int lane = threadIdx.x & 31;\n"
                "  float v = x[threadIdx.x];\n"
                "  v += __shfl_down(v, 16);\n  v += __shfl_down(v, 8);\n  v += __shfl_down(v, 4);\n"
                "  v += __shfl_down(v, 2);\n  v += __shfl_down(v, 1);\n"
                "  if (lane == 0) out[threadIdx.x / 32] = v + __any(v > 0.f);\n"
                "}\n")
    found = lint(unrolled)
    assert {(f.code, f.line) for f in found} == {("ROC204", 3), ("ROC204", 10), ("ROC205", 5)}
    assert all(f.fix is None for f in found)
    assert fix(unrolled) == unrolled


def test_a_helper_consistent_with_one_caller_is_not_blamed_for_another():
    code = ("#include <hip/hip_runtime.h>\n"
            "__device__ float half_sum(float v) {\n"
            "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);\n"
            "  return v;\n"
            "}\n"
            "__global__ void rows(const float* x, float* out) {\n"
            "  const int lane = threadIdx.x & 31;\n"
            "  const float v = half_sum(x[threadIdx.x]);\n"
            "  if (lane == 0) out[threadIdx.x >> 5] = v;\n"
            "}\n"
            "__global__ void waves(const float* x, float* out) {\n"
            "  const float v = half_sum(x[threadIdx.x]);\n"
            "  if (threadIdx.x % warpSize == 0) atomicAdd(out, v);\n"
            "}\n")
    found = lint(code)
    assert [(f.code, f.line) for f in found] == [("ROC208", 13)]
    assert "half_sum" in found[0].message and "reads the whole wavefront's result" in found[0].message


def test_branches_that_choose_by_wave_size_are_not_judged():
    code = ("#include <hip/hip_runtime.h>\n"
            "template <int width>\n"
            "__device__ int all_of(int x) {\n"
            "  if (width == warpSize) {\n"
            "    return __all(x);\n"
            "  }\n"
            "  for (int o = width / 2; o > 0; o >>= 1) x = __shfl_xor(x, o, width) && x;\n"
            "  return x;\n"
            "}\n"
            "__global__ void k(const int* x, int* out) {\n"
            "  const int lane = threadIdx.x % 32;\n"
            "  const int ok = all_of<32>(x[threadIdx.x]);\n"
            "  if (lane == 0) out[threadIdx.x / 32] = ok;\n"
            "}\n")
    assert lint(code) == []
    branch = model(code).functions[0]
    assert not [fact for fact in branch.facts if fact.kind == "vote"]


def test_data_layout_inside_a_wavefront_is_not_a_lane_group():
    code = ("#include <hip/hip_runtime.h>\n"
            "__global__ void store(const float* acc, float* c, int ldc) {\n"
            "  const int lane = __lane_id();\n"
            "  const int col = lane % 32;\n"
            "  const int half = lane / 32;\n"
            "  c[half * ldc + col] = acc[lane] + __any(acc[lane] > 0.f);\n"
            "}\n")
    assert lint(code) == []
    facts = [(fact.size, fact.kind) for fact in model(code).functions[0].facts]
    assert (G32, "index") not in facts and (WAVE, "vote") in facts


def test_a_wave_size_picked_in_the_device_pass_and_read_by_the_host():
    code = ("#include <hip/hip_runtime.h>\n"
            "#if defined(__GFX9__)\n#define TILE_WARP 64\n#else\n#define TILE_WARP 32\n#endif\n"
            "__global__ void k(int* o) { o[threadIdx.x] = threadIdx.x % TILE_WARP; }\n"
            "void launch(int* o, hipStream_t s) { k<<<1, 4 * TILE_WARP, 0, s>>>(o); }\n")
    found = lint(code)
    assert [(f.code, f.line) for f in found] == [("ROC208", 8)]
    assert "only the device pass" in found[0].message and found[0].fix is None


def test_explain_lists_the_facts_of_the_function_and_its_verdict():
    voting = LOGICAL_WARP.replace("  if (lane == 0) partial[warp] = v;\n",
                                  "  if (lane == 0) partial[warp] = v + __popcll(__ballot(v > 0.f));\n")
    lines = model(voting).explain(7)
    assert lines[0] == "lane groups of `block_sum` (line 6):"
    assert "    32: lane index for 32-lane groups (line 8: `threadIdx.x % 32`)" in lines
    assert "  wave: `__ballot` (line 11: `__ballot(v > 0.f)`)" in lines
    assert any("in `block_sum` and what it calls: INCONSISTENT" in line for line in lines)


def _unsafe_fixed_fixtures() -> list[Path]:
    return sorted(FIXTURES.rglob("*.unsafe-fixed.*"))


def _source_of(fixed: Path) -> Path:
    return fixed.with_name(fixed.name.replace(".unsafe-fixed", ""))


@pytest.mark.parametrize("fixed", _unsafe_fixed_fixtures(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_after_the_fix_every_lane_group_of_the_amd_build_is_consistent(fixed):
    """Every member of a group changed, or none: what the AMD build compiles of each fixed
    fixture (NVIDIA-only #else branches and wave-size-chosen branches aside) holds no
    disagreement but those the original reported without a fix."""
    source = _source_of(fixed)
    unfixed = {f.source_line.strip() for f in lint(source.read_text(), str(source)) if f.fix is None}
    ctx = CppContext(str(source), fixed.read_bytes(), SETTINGS)
    left = [v for v in lane_groups(ctx).verdicts if v.fact.text not in unfixed]
    assert left == [], [(v.fact.line + 1, v.kind, v.fact.what) for v in left]


def test_fixes_never_choose_a_wave_size_by_a_deprecated_macro_or_a_bare_64():
    """A 64 a fix writes stands only in a branch chosen by ``__GFX9__`` (wave64 targets), or
    in ``__launch_bounds__``, an upper bound where the largest wavefront is the right one."""
    import re

    for fixed in _unsafe_fixed_fixtures():
        source = _source_of(fixed)
        before = set(source.read_text().splitlines())
        ctx = CppContext(str(source), fixed.read_bytes(), SETTINGS)
        for number, line in enumerate(fixed.read_text().splitlines()):
            if line in before:
                continue
            assert "__AMDGCN_WAVEFRONT_SIZE" not in line, fixed.name
            if re.search(r"(?<![\w.])64\b", line.split("//")[0]) and "__launch_bounds__" not in line:
                assert ctx.pp.wave_size_aware(number), f"{fixed.name}:{number + 1}: {line}"


def test_a_wave_sized_lane_read_at_lanes_0_and_32_keeps_32_lane_groups():
    """Wave-sized indices read per 32 lanes: a 32-lane reduction is right (AMD-native style)."""
    code = ("#include <hip/hip_runtime.h>\n"
            "__global__ void k(const float* x, float* out) {\n"
            "  const int lane = threadIdx.x % warpSize;\n"
            "  float v = x[threadIdx.x];\n"
            "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);\n"
            "  if (lane == 0 || lane == 32) out[threadIdx.x / 32] = v;\n"
            "  if ((lane & 31) == 0) out[threadIdx.x / 32] += v;\n"
            "}\n")
    assert lint(code) == []
    reads = [fact.size for fact in model(code).functions[0].facts if fact.kind == "read"]
    assert reads == [G32, G32]
    # lane 0 of each wavefront alone: the 32-lane sum and the per-32 slots disagree with it
    assert sorted(f.code for f in lint(code.replace("lane == 0 || lane == 32", "lane == 0"))) == \
        ["ROC204", "ROC204", "ROC205"]


def test_an_up_sweep_guarded_on_its_offset_stays_in_its_group():
    code = ("#include <hip/hip_runtime.h>\n"
            "__global__ void k(float* x) {\n"
            "  const int lane = threadIdx.x % 32;\n"
            "  float v = x[threadIdx.x];\n"
            "  for (int d = 1; d < 32; d *= 2) {\n"
            "    float t = __shfl_up(v, d);\n"
            "    if ((threadIdx.x + 1) % (d * 2) == 0) v += t;\n"
            "  }\n"
            "  if (lane == 31) x[threadIdx.x / 32] = v;\n"
            "}\n")
    assert lint(code) == []
    unguarded = code.replace("    if ((threadIdx.x + 1) % (d * 2) == 0) v += t;\n", "    v += t;\n")
    assert [f.code for f in lint(unguarded)] == ["ROC208"]


def test_a_function_that_picks_values_by_half_of_the_wavefront_is_wave64_by_design():
    code = ("#include <hip/hip_runtime.h>\n"
            "__global__ void k(const float* a, const float* b, float* out) {\n"
            "  const int half_lane = threadIdx.x % 32;\n"
            "  const float lo = __shfl(a[threadIdx.x], half_lane ^ 1);\n"
            "  const float hi = __shfl(b[threadIdx.x], half_lane ^ 1);\n"
            "  out[threadIdx.x] = threadIdx.x < 32 ? lo : hi;\n"
            "}\n")
    assert lint(code) == []
    assert [f.code for f in lint(code.replace("threadIdx.x < 32 ? lo : hi", "lo + hi"))] == ["ROC208", "ROC208"]


def test_a_dispatch_on_32_and_64_is_no_runtime_guard():
    code = ("#include <cassert>\n#include <cstdio>\n"
            "template <int W> __device__ void body(float* x) { x[threadIdx.x] = W; }\n"
            "__global__ void k(float* x) {\n"
            "  if (warpSize == 32) {\n    body<32>(x);\n  } else if (warpSize == 64) {\n    body<64>(x);\n"
            "  } else {\n    printf(\"unsupported\\n\");\n    assert(false);\n  }\n"
            "}\n"
            "void need(int warp_size) {\n  if (warp_size != 32) abort();\n}\n")
    assert [(f.code, f.line) for f in lint(code, "k.cu", select=("ROC207",))] == [("ROC207", 15)]


def test_a_host_side_wave_size_chosen_in_a_directive_is_no_host_read():
    code = ("#include <hip/hip_runtime.h>\n"
            "#if defined(__gfx1100__) && defined(__HIP_DEVICE_COMPILE__)\n#define IS_WAVE32 1\n#endif\n"
            "__host__ __device__ constexpr int wave_size() {\n"
            "#if defined(__GFX9__) || !defined(__HIP_DEVICE_COMPILE__)\n  return 64;\n"
            "#elif defined(IS_WAVE32)\n  return 32;\n#else\n  return 64;\n#endif\n}\n"
            "__global__ void k(int* o) { o[threadIdx.x] = wave_size(); }\n"
            "void go(int* o) { k<<<1, 64>>>(o); }\n")
    assert lint(code, select=("ROC208",)) == []


def test_a_macro_that_drops_the_width_makes_a_width_less_shuffle_and_is_named():
    """A port's `#define __shfl(v, l, w) __shfl(v, l)` hides the width the call site spells:
    the shuffle spans the wavefront while its source lane is computed per 32."""
    code = (
        "#include <hip/hip_runtime.h>\n"
        "#define __shfl(value, lane, width) __shfl(value, lane)\n"
        "__global__ void shift_left(const short* in, short* out) {\n"
        "  const int lane = threadIdx.x % 32;\n"
        "  short v = in[threadIdx.x];\n"
        "  short prev = __shfl(v, lane - 1, 32);\n"
        "  out[threadIdx.x] = lane == 0 ? v : prev;\n"
        "}\n"
    )
    found = lint(code)
    assert [(f.code, f.line) for f in found] == [("ROC208", 6)]
    assert "(the macro at line 2 expands it to `__shfl(value, lane)`)" in found[0].message
    kept = code.replace("#define __shfl(value, lane, width) __shfl(value, lane)\n", "")
    assert lint(kept) == []  # the width the call spells, when nothing drops it, keeps 32-lane groups


HALVES = (
    "#include <hip/hip_runtime.h>\n"
    "__global__ void gated_pairs(const float* x, float* out) {\n"
    "  const int lane = threadIdx.x % 32;\n"
    "  float acc = x[threadIdx.x];\n"
    "  for (int mask = 8; mask >= 1; mask /= 2) acc += __shfl_xor(acc, mask);\n"
    "  {STEP}\n"
    "  if (lane == 0) out[threadIdx.x / 32] = {OUT};\n"
    "}\n"
)


def test_an_xor_exchange_between_16_lane_halves_is_not_a_reduction():
    """`other = __shfl_xor(acc, 16)` swaps the two 16-lane sums of each 32-lane group (xor 16
    never leaves its 32 lanes): nothing in it depends on the wave size."""
    exchange = HALVES.replace("{STEP}", "float other = __shfl_xor(acc, 16);").replace("{OUT}", "acc * other")
    assert lint(exchange) == []
    assert all(f.kind != "reduction" or f.size != G32 for fn in model(exchange).functions for f in fn.facts)
    # The same shuffle folded back through a temporary is the last step of a reduction.
    folded = HALVES.replace("{STEP}", "float other = __shfl_xor(acc, 16); acc += other;").replace("{OUT}", "acc")
    assert any(f.kind == "reduction" and f.size == G32 for fn in model(folded).functions for f in fn.facts)


NORM = (
    "#include <hip/hip_runtime.h>\n"
    "#define WARP_SIZE 32\n"
    "__global__ void row_norm(const float* x, float* y, int dim) {\n"
    "  __shared__ float sums[32];\n"
    "  const int warp = threadIdx.x / WARP_SIZE;\n"
    "  const int lane = threadIdx.x % WARP_SIZE;\n"
    "  const int warps = {WARPS};\n"
    "  float v = x[blockIdx.x * dim + threadIdx.x];\n"
    "  float s = v * v;\n"
    "  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_xor(s, o);\n"
    "  if (lane == 0) sums[warp] = s;\n"
    "  __syncthreads();\n"
    "  s = 0.f;\n"
    "  for (int i = 0; i < warps; ++i) s += sums[i];\n"
    "  y[blockIdx.x * dim + threadIdx.x] = v * rsqrtf(s / dim);\n"
    "}\n"
)


def test_a_loop_over_the_per_warp_slots_with_a_bound_the_groups_do_not_set_blocks_the_fix():
    """`warps = dim / 64` (two elements a thread) counts 32-lane warps in a way the model
    cannot follow: moving `/ WARP_SIZE` to the wavefront would leave the loop reading slots
    no warp wrote. The findings stay; the fix goes."""
    opaque = NORM.replace("{WARPS}", "(dim + 63) / 64")
    found = lint(opaque)
    assert {f.code for f in found} == {"ROC204"} and all(f.fix is None for f in found)
    assert fix(opaque) == opaque
    # warps per block kept in a variable is not followed either: still no fix (before, the fix
    # moved `/ WARP_SIZE` and `% WARP_SIZE` and left the loop reading half-filled slots)
    named = NORM.replace("{WARPS}", "blockDim.x / WARP_SIZE")
    assert fix(named) == named
    # the loop bounded by the group's own warps-per-block moves with the group
    tied = NORM.replace("{WARPS}", "0").replace("i < warps", "i < blockDim.x / WARP_SIZE")
    fixed = fix(tied)
    assert "threadIdx.x / warpSize" in fixed and "threadIdx.x % warpSize" in fixed
    assert "i < blockDim.x / warpSize" in fixed


# --- the pre-check: a file whose lane groups cannot be wave-sized is never modelled ---------
def _context_in(root: Path, files: dict[str, str], name: str = "k.cu") -> CppContext:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return CppContext(str(root / name), (root / name).read_bytes(), SETTINGS)


PER_32_ONLY = "__global__ void k(float* x) {\n  int lane = threadIdx.x % 32;\n  x[lane] = 0.f;\n}\n"


def test_lane_groups_that_cannot_be_wave_sized_skip_the_model(tmp_path):
    from rocmlint.cpp.lane_includes import needs_lane_model

    ctx = _context_in(tmp_path, {"k.cu": '#include "common.h"\n' + PER_32_ONLY,
                                 "common.h": '#include "types.h"\n#define ROWS 64\n',
                                 "types.h": "typedef float real;\n"})
    assert needs_lane_model(ctx)  # a header's 64 may be the wave size by a warp-named alias
    (tmp_path / "common.h").write_text('#include "types.h"\nstatic const char* kName = "k64";\n')
    ctx = CppContext(str(tmp_path / "k.cu"), (tmp_path / "k.cu").read_bytes(), SETTINGS)
    assert not needs_lane_model(ctx)


@pytest.mark.parametrize("files", [
    {"k.cu": "__device__ int lane() { return __lane_id(); }\n" + PER_32_ONLY},  # a wave lane here
    {"k.cu": "constexpr int kWarpLanes = 64;\n" + PER_32_ONLY},  # a warp-named 64
    {"k.cu": "#if defined(__GFX9__)\n#define LANES 64\n#else\n#define LANES 32\n#endif\n" + PER_32_ONLY},
    {"k.cu": '#include "reduce.inc"\n' + PER_32_ONLY,  # a helper with a shuffle joins its callers
     "reduce.inc": "__device__ float warp_sum(float v) { return v + __shfl_xor(v, 1); }\n"},
    {"k.cu": '#include "common.h"\n' + PER_32_ONLY,  # a constant two includes deep
     "common.h": '#include "config.h"\n', "config.h": "#define WARP_SIZE warpSize\n"},
], ids=["wave-lane", "const-64", "wave-size-branch", "included-helper", "included-constant"])
def test_anything_that_can_make_a_group_wave_sized_keeps_the_model(tmp_path, files):
    from rocmlint.cpp.lane_includes import needs_lane_model

    assert needs_lane_model(_context_in(tmp_path, files))


def test_a_project_macro_worth_the_wave_size_keeps_the_model_and_its_finding(tmp_path, capsys):
    """WARP_SIZE comes from a header the kernel does not include (the build force-includes
    it): only the project's macro table says it is the wave size."""
    from test_cli import run_cli

    tree = {"pyproject.toml": "[tool.rocmlint]\nroot = true\n",
            "CMakeLists.txt": "project(t LANGUAGES CXX)\nif(MY_HIP)\n  add_compile_definitions(MY_HIP_BUILD)\nendif()\n",
            "src/config.h": "#pragma once\n#ifdef MY_HIP_BUILD\n#include <hip/hip_runtime.h>\n#endif\n"
                            "#define WARP_SIZE warpSize\n",
            "src/strides.cu": "__global__ void strided(float* x) {\n  int lane = threadIdx.x % 32;\n"
                              "  for (int i = lane; i < 256; i += WARP_SIZE) x[i] = 0.f;\n}\n"}
    for rel, text in tree.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    from rocmlint.project import activate

    try:
        code, out, err = run_cli(["check", "--no-cache", "--select", "ROC204", "--output-format", "json", "."],
                                 tmp_path, capsys)
    finally:
        activate(None)  # the CLI leaves its model active: later tests lint lone buffers
    import json

    found = [(f["code"], f["path"].removeprefix("./"), f["line"]) for f in json.loads(out)]
    assert found == [("ROC204", "src/strides.cu", 2)], err


def test_word_and_constant_searches_match_the_plain_patterns():
    """``has_word`` and ``constant_definitions_of`` find by a literal first what the plain
    \\b-patterns (tried at every byte) find."""
    import re

    from rocmlint.cpp.lane_constants import constant_definitions_of
    from rocmlint.cpp.lexical import has_word

    texts = [b"myconst const int WS = 32;", b"const int WS=64;const int WS = 2;", b"constexpr WS{3}",
             b"xconst int WS = 1; const WS = 5;", b"WS", b"aWS WS_ WS", b"static constexpr unsigned kWarp = (64u);"]
    texts += [p.read_bytes() for p in sorted(FIXTURES.rglob("*")) if p.suffix in (".cu", ".cuh", ".hip", ".h")]
    found = 0
    for text in texts:
        for name in ("WS", "WARP_SIZE", "kWarp", "FULL_MASK", "lane", "N"):
            plain = re.compile(rb"\b(?:const|constexpr)\b[^;{}()=]*\b" + name.encode() +
                               rb"\s*(?:=\s*|\{\s*)([^;{}]+?)\s*[;}]")
            expected = [m.span() for m in plain.finditer(text)]
            assert [m.span() for m in constant_definitions_of(text, name)] == expected
            assert has_word(text, name.encode()) == bool(re.search(rb"\b" + name.encode() + rb"\b", text))
            found += len(expected)
    assert found > 5
    from rocmlint.cpp.lexical import word_matches

    for text in texts + [b"xif (a) if(b) elif (c) if constexpr (d)", b"ifif (x)", b"if("]:
        plain = [m.span() for m in re.finditer(rb"\bif\s*(?:constexpr\s*)?\(", text)]
        assert [m.span() for m in word_matches(re.compile(rb"if\s*(?:constexpr\s*)?\("), text)] == plain


def test_a_warps_first_thread_moves_with_its_warp_index_and_a_per_warp_stack_does_not():
    """``first = warp * WARP_SIZE`` is the first thread of the warp the index names: a group
    fix that moved ``warp`` alone pointed every warp's leader test at the wrong thread.
    ``warp * MAX_DEPTH`` (32 too) is where the warp's stack starts: data, left as it is."""
    code = (
        "#include <hip/hip_runtime.h>\n"
        "#define WARP_SIZE 32\n"
        "#define MAX_DEPTH 32\n"
        "__global__ void walk(const float* limit, int* hits) {\n"
        "  __shared__ int stack[MAX_DEPTH * 8];\n"
        "  const int warp = threadIdx.x / WARP_SIZE;\n"
        "  const int first = warp * WARP_SIZE;\n"
        "  const int top = warp * MAX_DEPTH;\n"
        "  stack[top] = 0;\n"
        "  if (__all(limit[threadIdx.x] > 0.f) && first == threadIdx.x) atomicAdd(hits, stack[top]);\n"
        "}\n"
    )
    fixed = fix(code)
    assert "threadIdx.x / warpSize" in fixed and "warp * warpSize" in fixed
    assert "warp * MAX_DEPTH" in fixed and "stack[MAX_DEPTH * 8]" in fixed
    assert [f.line for f in lint(code)] == [2, 6]  # the constant and the index; the first thread moves with them


SORT_THROUGH_A_HELPER = (
    "#define WARP_SIZE 32\n"
    "__device__ int shuffle_xor(int value, int mask, int width = WARP_SIZE) {\n"
    "  return __shfl_xor(value, mask, width);\n}\n"
    "__device__ void exchange(int& key, int mask, bool up) {\n"
    "  const int other = shuffle_xor(key, mask);\n"
    "  key = up ? min(key, other) : max(key, other);\n}\n"
    "__global__ void sort_pairs(int* keys, int* flags) {\n"
    "  const int lane = threadIdx.x % WARP_SIZE;\n"
    "  int key = keys[threadIdx.x];\n"
    "  for (int mask = 1; mask < 16; mask <<= 1) exchange(key, mask, (lane & mask) == 0);\n"
    "  if (__any(key < 0)) flags[blockIdx.x] = 1;\n"
    "  keys[threadIdx.x] = key;\n}\n")


def test_a_group_reached_through_a_helper_the_model_did_not_read_keeps_no_fix():
    """`exchange` has no lane text, so the model does not read it, yet it passes the kernel's
    lanes to a shuffle whose width defaults to 32: moving the lane index alone would split
    the sort. The finding stands, display-only; with a helper that reaches no modelled
    function, the group fix is offered as before."""
    found = [f for f in lint(SORT_THROUGH_A_HELPER) if f.code == "ROC204" and f.line == 10]
    assert len(found) == 1 and found[0].fix is None
    plain = SORT_THROUGH_A_HELPER.replace("const int other = shuffle_xor(key, mask);", "const int other = key ^ mask;")
    found = [f for f in lint(plain) if f.code == "ROC204" and f.line == 10]
    assert len(found) == 1 and found[0].fix is not None
    assert "threadIdx.x % warpSize" in fix(plain)


@pytest.mark.parametrize("text", [b"int n = WaveFrontSize;", b"wave_front_size", b"WAVEFRONT_SIZE", b"frontend only",
                                  b"x = __shfl_xor(v, 1);", b"cg::thread_block_tile<32> t;", b"#define W 64\n",
                                  b"plain code", b"front ... __ballot(p)", b""])
def test_the_wave_sized_pre_check_equals_its_patterns(text):
    from rocmlint.cpp import lane_includes

    expected = lane_includes._WAVE_SIZED_TEXT.search(text) is not None or \
        lane_includes._WAVEFRONT_SIZE_TEXT.search(text) is not None or lane_includes._defines_64(text)
    assert lane_includes._may_be_wave_sized(text) is expected


def test_the_wave_sized_pre_check_equals_its_patterns_on_the_fixtures():
    from rocmlint.cpp import lane_includes

    seen = set()
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        data = path.read_bytes()
        expected = lane_includes._WAVE_SIZED_TEXT.search(data) is not None or \
            lane_includes._WAVEFRONT_SIZE_TEXT.search(data) is not None or lane_includes._defines_64(data)
        assert lane_includes._may_be_wave_sized(data) is expected, path
        seen.add(expected)
    assert seen == {True, False}


_PLAIN_CONSTANT_64 = rb"const(?:expr)?\b[^;{}()=]*[={]\s*[(\s]*64[uUlL]*\b"


@pytest.mark.parametrize("text", [
    b"const int kWave = 64;", b"static constexpr unsigned kLanes{ 64u };", b"constexpr int w = (64);",
    b"constant = 64;", b"const_iterator it = 64;", b"myconst x = 64;", b"const int* p; x = 64;",
    b"const int n = 640;", b"const int n = 64 * 2;", b"int64_t x = 64;", b"const(x) = 64;",
    b"const auto lanes =\n  64;", b"x = 64; const int y = 1;", b"const T a = b, c = 64;", b"const", b"= 64", b"",
])
def test_the_constant_64_pre_check_equals_its_pattern(text):
    """Read from each value of 64 back to the keyword, the same answer as the forward pattern."""
    import re

    from rocmlint.cpp import lane_includes

    assert lane_includes._constant_64(text) is (re.search(_PLAIN_CONSTANT_64, text) is not None)


def test_the_constant_64_pre_check_equals_its_pattern_on_the_fixtures():
    import re

    from rocmlint.cpp import lane_includes

    seen = set()
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        data = path.read_bytes()
        expected = re.search(_PLAIN_CONSTANT_64, data) is not None
        assert lane_includes._constant_64(data) is expected, path
        seen.add(expected)
    assert seen == {True, False}


SHADOWED_REDUCTION = (
    "__device__ short warp_max(short v) {\n"
    "  int warpSize = 32;\n"
    "  for (int offset = warpSize / 2; offset > 0; offset /= 2) v = max(v, __shfl_down(v, offset));\n"
    "  return v;\n}\n"
    "__global__ void best(const short* x, short* out) {\n"
    "  __shared__ short tops[32];\n"
    "  int lane = threadIdx.x % 32;\n"
    "  int warp = threadIdx.x / 32;\n"
    "  short v = warp_max(x[threadIdx.x]);\n"
    "  if (lane == 0) tops[warp] = v;\n"
    "}\n")


def test_a_local_warp_size_is_that_variable_not_the_wave():
    """`int warpSize = 32;` in a helper (a hipified port's stand-in): its reduction from
    `warpSize / 2` covers 32 lanes, so the kernel's 32-lane lanes agree with it (lanes 0 and
    32 each read their own half). Read as the wave size, every index was a false alarm whose
    fix moved the kernel to 64-lane groups and left the reduction at 32 (HeCBench bsw)."""
    assert [f for f in lint(SHADOWED_REDUCTION) if f.code == "ROC204"] == []
    builtin = SHADOWED_REDUCTION.replace("  int warpSize = 32;\n", "")
    found = [f for f in lint(builtin) if f.code == "ROC204"]
    assert [f.line for f in found] == [7, 8] and all(f.fix is not None for f in found)


def test_a_parameter_named_warp_size_shadows_it_and_a_default_of_warp_size_does_not():
    by_parameter = SHADOWED_REDUCTION.replace("__device__ short warp_max(short v) {\n  int warpSize = 32;\n",
                                              "__device__ short warp_max(short v, int warpSize = 32) {\n")
    assert [f for f in lint(by_parameter) if f.code == "ROC204"] == []
    by_reference = by_parameter.replace("int warpSize = 32", "const int &warpSize = 32")  # the name under `&`
    assert [f for f in lint(by_reference) if f.code == "ROC204"] == []
    by_default = SHADOWED_REDUCTION.replace("__device__ short warp_max(short v) {\n  int warpSize = 32;\n",
                                            "__device__ short warp_max(short v, int width = warpSize) {\n")
    assert [f.line for f in lint(by_default) if f.code == "ROC204"] == [7, 8]


# --- data width: which lanes produced what a reduction folds ------------------------------
FOLDED = (
    "#include <hip/hip_runtime.h>\n"
    "__device__ float block_max(float* x, float val) {\n"
    "  const int tid = threadIdx.x;\n"
    "  x[tid] = val;\n"
    "  __syncthreads();\n"
    "  float m = val;\n"
    "  if (tid < warpSize) {\n"
    "    m = fmaxf(x[tid], x[tid + warpSize]);\n"
    "    for (int i = 16; i > 0; i >>= 1) m = fmaxf(m, __shfl_down(m, i));\n"
    "  }\n"
    "  return m;\n"
    "}\n"
)


def test_a_32_lane_reduction_of_a_whole_wavefronts_data_is_reported_with_its_evidence():
    """`tid < warpSize` and `x[tid + warpSize]`: 64 lanes hold the data on gfx9, and the
    shuffles from 16 bring lanes 0-31 to lane 0 only (AMD's fork of a PyTorch extension)."""
    found = lint(FOLDED)
    assert [(f.code, f.line) for f in found] == [("ROC205", 9)]
    assert "`tid < warpSize` at line 7, `x[tid + warpSize]` at line 8" in found[0].message
    assert "lane 0's result misses lanes 32-63" in found[0].message
    explained = "\n".join(model(FOLDED).explain(8))
    assert "wave: data of the whole wavefront (`tid < warpSize` at line 7, `x[tid + warpSize]` at line 8)" in explained
    assert "INCONSISTENT" in explained
    assert "for (int i = warpSize / 2; i > 0; i >>= 1)" in fix(FOLDED)
    # the fold under a test of the block's size (apex's `if (blockSize >= double_warp_size)`):
    # a branch picked by the block, not by the wave size, is judged like the rest
    by_block = FOLDED.replace("    m = fmaxf(x[tid], x[tid + warpSize]);\n",
                              "    const int double_warp_size = warpSize * 2;\n"
                              "    if (blockDim.x >= double_warp_size) m = fmaxf(x[tid], x[tid + warpSize]);\n")
    assert [(f.code, f.line) for f in lint(by_block)] == [("ROC205", 10)]


@pytest.mark.parametrize("guard", ["if (tid < 32) {", "if (threadIdx.x <= 31) {", "if (__lane_id() < 32) {"])
def test_a_32_lane_reduction_of_data_only_32_lanes_hold_stays_quiet(guard):
    """The first 32 lanes hold every value: a reduction from 16 folds all of it on any wave
    size, read at lane 0 of the wavefront or not."""
    code = FOLDED.replace("if (tid < warpSize) {", guard).replace("x[tid + warpSize]", "x[tid + 32]") \
        .replace("  return m;\n", "  if (__lane_id() == 0) x[0] = m;\n  return m;\n")
    assert lint(code) == []
    facts = [(f.size, f.kind) for f in model(code).functions[0].facts]
    assert (G32, "bounded") in facts and (G32, "reduction") not in facts
    # the same data with no bound on the lanes: the lane-0 read of the wavefront disagrees
    unbounded = code.replace(guard, "{")
    assert [f.code for f in lint(unbounded)] == ["ROC205"]


def test_an_early_exit_bounds_the_lanes_and_an_unknown_bound_leaves_the_width_unknown():
    early = FOLDED.replace("  float m = val;\n  if (tid < warpSize) {\n", "  if (tid >= 32) return val;\n  float m = val;\n  {\n") \
        .replace("x[tid + warpSize]", "x[tid + 32]").replace("  return m;\n", "  if (__lane_id() == 0) x[0] = m;\n  return m;\n")
    assert lint(early) == []
    # the per-warp partials of a block sum: `tid < warps` narrows the data to an unknown count
    partials = FOLDED.replace("m = fmaxf(x[tid], x[tid + warpSize]);", "m = tid < blockDim.x / warpSize ? x[tid] : 0.f;")
    assert lint(partials) == []


def test_wave_wide_data_passed_to_a_32_lane_helper_blames_the_helper():
    code = ("#include <hip/hip_runtime.h>\n"
            "__device__ float max16(float v) {\n"
            "  for (int i = 16; i > 0; i >>= 1) v = fmaxf(v, __shfl_down(v, i));\n"
            "  return v;\n"
            "}\n"
            "__global__ void k(const float* x, float* out) {\n"
            "  const int tid = threadIdx.x;\n"
            "  if (tid < warpSize) {\n"
            "    const float m = max16(fmaxf(x[tid], x[tid + warpSize]));\n"
            "    if (tid == 0) out[blockIdx.x] = m;\n"
            "  }\n"
            "}\n")
    found = lint(code)
    assert [(f.code, f.line) for f in found] == [("ROC205", 3)]
    assert "it folds data of the whole wavefront (`tid < warpSize` at line 8, `x[tid + warpSize]` at line 9)" \
        in found[0].message
    # data that is no fold and no bound: nothing is said about its width
    assert lint(code.replace("fmaxf(x[tid], x[tid + warpSize])", "x[tid]").replace("if (tid < warpSize) {", "{")) == []


# --- helper contracts -------------------------------------------------------------------
LONE_HELPER = (
    "#include <hip/hip_runtime.h>\n"
    "__device__ float warp_sum(float v) {\n"
    "  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down(v, offset);\n"
    "  return v;\n"
    "}\n"
)


def test_a_helper_with_no_caller_in_view_is_read_by_what_its_name_promises():
    found = lint(LONE_HELPER)
    assert [(f.code, f.line) for f in found] == [("ROC205", 3)]
    assert "the name `warp_sum` promises a whole warp's result" in found[0].message
    assert "offset = warpSize / 2" in fix(LONE_HELPER)
    documented = LONE_HELPER.replace("__device__ float warp_sum", "// Max of v over the wavefront.\n__device__ float fold")
    assert [f.code for f in lint(documented)] == ["ROC205"]
    assert "the comment above `fold`" in lint(documented)[0].message


@pytest.mark.parametrize("variant", [
    ("__device__ float warp_sum(float v) {", "template <int kWidth>\n__device__ float warp_sum(float v) {",
     "offset = 16", "offset = kWidth / 2"),  # a template width
    ("__device__ float warp_sum(float v) {", "__device__ float warp_sum(float v, int width = 32) {",
     "__shfl_down(v, offset)", "__shfl_down(v, offset, width)"),  # a width parameter
    ("__shfl_down(v, offset)", "__shfl_down(v, offset, 32)", "", ""),  # an explicit width of 32
    ("__device__ float warp_sum", "// Sum over the 32 lanes of a row.\n__device__ float warp_sum", "", ""),
    ("warp_sum", "row_sum", "", ""),  # a name that promises no warp
    ("__device__ float warp_sum(float v)", "__global__ void warp_sum(float* out, float v)", "return v;", "out[0] = v;"),
    ("  return v;\n}\n", "  return v;\n}\n__device__ float rows(float v) {\n  const int lane = threadIdx.x & 31;\n"
                         "  v = warp_sum(v);\n  return lane == 0 ? v : 0.f;\n}\n", "", ""),  # a caller in view decides
], ids=["template-width", "width-parameter", "explicit-width", "comment-says-32", "no-warp-in-name", "kernel",
        "caller-in-view"])
def test_a_helper_that_states_its_own_contract_or_has_callers_is_not_read_by_its_name(variant):
    code = LONE_HELPER
    for old, new in zip(variant[::2], variant[1::2]):
        if old:
            code = code.replace(old, new)
    assert lint(code) == []


def test_a_caller_in_a_file_that_includes_the_helper_decides(tmp_path, capsys):
    from test_cli import run_cli

    tree = {"rocmlint.toml": "root = true\n",
            "warp.cuh": LONE_HELPER,
            "rows.hip": '#include "warp.cuh"\n__global__ void rows(const float* x, float* out) {\n'
                        "  const int lane = threadIdx.x & 31;\n  const float v = warp_sum(x[threadIdx.x]);\n"
                        "  if (lane == 0) out[threadIdx.x >> 5] = v;\n}\n"}
    for rel, text in tree.items():
        (tmp_path / rel).write_text(text)
    from rocmlint.project import activate

    try:
        _code, out, _err = run_cli(["check", "--no-cache", "--select", "ROC205", "--output-format", "json", "."],
                                   tmp_path, capsys)
        import json

        assert json.loads(out) == []
        (tmp_path / "rows.hip").write_text('#include "warp.cuh"\n')  # the caller gone: the name decides
        _code, out, _err = run_cli(["check", "--no-cache", "--select", "ROC205", "--output-format", "json", "."],
                                   tmp_path, capsys)
        assert [(f["path"].removeprefix("./"), f["line"]) for f in json.loads(out)] == [("warp.cuh", 3)]
    finally:
        activate(None)


# --- safe fixes checked against the lane groups ------------------------------------------
LEADER_PER_32 = (
    "#include <hip/hip_runtime.h>\n"
    "#define FULL_MASK 0xffffffff\n"
    "__global__ void count(const float* x, int* out) {\n"
    "  const bool p = x[blockIdx.x * blockDim.x + threadIdx.x] > 0.f;\n"
    "  unsigned m = __ballot_sync(FULL_MASK, p);\n"
    "  if ((threadIdx.x & 31) == 0) atomicAdd(out, __popc(m));\n"
    "}\n"
)


def _all(code: str, path: str = "k.hip"):
    return lint(code, path, select=("ROC201", "ROC202", "ROC203", "ROC204", "ROC205", "ROC208", "ROC210"))


def _fixed(code: str, path: str, unsafe: bool) -> str:
    rules = rules_for(("ROC201", "ROC202", "ROC203", "ROC204", "ROC205", "ROC208", "ROC210"), (), "cpp")
    return fix_buffer(code.encode(), "\n", path, "cpp", SETTINGS, rules, unsafe=unsafe).buffer.decode()


def test_a_safe_fix_whose_value_a_32_lane_member_reads_moves_only_with_the_group():
    """Widening the mask and counting 64 bits, with the leader still chosen per 32 lanes,
    makes lanes 0 and 32 each add the whole wavefront's count: the fixes are offered only
    with the group's fix, as unsafe, and say which members move with them."""
    from rocmlint.model import Applicability

    found = {f.code: f for f in _all(LEADER_PER_32)}
    assert set(found) == {"ROC201", "ROC202", "ROC203", "ROC204"}
    for code in ("ROC201", "ROC202", "ROC203"):
        assert found[code].fix.applicability is Applicability.UNSAFE
        assert "together with the lane group of `count`: `threadIdx.x & 31` (line 6) moves to warpSize" \
            in found[code].fix.title
    assert _fixed(LEADER_PER_32, "k.hip", unsafe=False) == LEADER_PER_32  # never alone
    fixed = _fixed(LEADER_PER_32, "k.hip", unsafe=True)
    assert "uint64_t m = __ballot(p);" in fixed and "(threadIdx.x & (warpSize - 1)) == 0" in fixed
    assert "__popcll(m)" in fixed and _all(fixed) == []


def test_a_safe_fix_that_no_32_lane_member_reads_stays_safe():
    from rocmlint.model import Applicability

    per_wave = LEADER_PER_32.replace("(threadIdx.x & 31) == 0", "__lane_id() == 0")
    found = _all(per_wave)
    assert {f.code for f in found} == {"ROC201", "ROC202", "ROC203"}
    assert all(f.fix.applicability is Applicability.SAFE for f in found)
    # a 32-lane index elsewhere in the kernel that the mask never reaches ties nothing
    elsewhere = per_wave.replace("  unsigned m", "  out[1 + threadIdx.x % 32] = 0;\n  unsigned m")
    assert all(f.fix.applicability is Applicability.SAFE for f in _all(elsewhere) if f.code != "ROC204")


def test_a_tied_safe_fix_is_not_offered_where_the_group_has_no_mechanical_fix():
    unrolled = LEADER_PER_32.replace("  if ((threadIdx.x & 31) == 0)",
                                     "  float s = x[threadIdx.x];\n  s += __shfl_down(s, 16);\n  s += __shfl_down(s, 8);\n"
                                     "  s += __shfl_down(s, 4);\n  s += __shfl_down(s, 2);\n  s += __shfl_down(s, 1);\n"
                                     "  if ((threadIdx.x & 31) == 0) x[0] = s;\n  if ((threadIdx.x & 31) == 0)")
    found = {f.code: f for f in _all(unrolled)}
    assert found["ROC201"].fix is None and found["ROC202"].fix is None and found["ROC203"].fix is None
    assert _fixed(unrolled, "k.hip", unsafe=True) == unrolled


def test_a_mask_fix_on_a_broadcast_in_a_32_lane_design_comes_with_its_width():
    code = ("#define FULL_MASK 0xffffffff\n"
            "__device__ float row_max(float v) {\n"
            "  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));\n"
            "  return v;\n"
            "}\n"
            "__global__ void rows(const float* x, float* y) {\n"
            "  float m = row_max(x[threadIdx.x]);\n"
            "  m = __shfl_sync(FULL_MASK, m, 0);\n"
            "  y[threadIdx.x] = x[threadIdx.x] - m;\n"
            "}\n")
    broadcast = [f for f in _all(code, "k.cu") if f.code == "ROC203" and f.line == 8][0]
    assert "an explicit 32-lane width" in broadcast.fix.title
    fixed = _fixed(code, "k.cu", unsafe=True)
    assert "  m = __shfl(m, 0, 32);\n#else\n  m = __shfl_sync(FULL_MASK, m, 0);\n#endif\n" in fixed
    assert "__shfl_xor(v, o)" in fixed  # the reduction's own mask fix is safe: a logical 32-lane group
    # in one function too: the reduction's value reaches the broadcast, but the 32-lane members
    # are right in a 32-lane design; only the fix on the broadcast itself is tied
    from rocmlint.model import Applicability

    inline = ("#define FULL_MASK 0xffffffff\n"
              "__global__ void rows(const float* x, float* y) {\n"
              "  float m = x[threadIdx.x];\n"
              "  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL_MASK, m, o, 32));\n"
              "  m = __shfl_sync(FULL_MASK, m, 0);\n"
              "  y[threadIdx.x] = x[threadIdx.x] - m;\n"
              "}\n")
    masks = {f.line: f.fix.applicability for f in _all(inline, "k.cu") if f.code == "ROC203"}
    assert masks == {4: Applicability.SAFE, 5: Applicability.UNSAFE}


@pytest.mark.skipif(__import__("shutil").which("unifdef") is None, reason="unifdef is not installed")
def test_a_tied_fix_in_a_shared_file_leaves_the_nvidia_build_as_it_was():
    import subprocess

    shared = LEADER_PER_32.replace("#include <hip/hip_runtime.h>\n", "")
    fixed = _fixed(shared, "k.cu", unsafe=True)
    assert fixed != shared and "#if defined(__HIP_PLATFORM_AMD__)" in fixed

    def nvidia(text: str) -> bytes:
        return subprocess.run(["unifdef", "-U__HIP_PLATFORM_AMD__"], input=text.encode(), capture_output=True).stdout

    assert nvidia(fixed) == nvidia(shared)
    amd = subprocess.run(["unifdef", "-D__HIP_PLATFORM_AMD__"], input=fixed.encode(), capture_output=True).stdout
    assert b"(threadIdx.x & (warpSize - 1)) == 0" in amd and b"uint64_t m = __ballot(p);" in amd


def test_a_contexts_members_follow_the_order_of_the_calls():
    """Members in call order, not a set's (which followed the string hash seed: the wave-wide
    fact a message named changed between runs on HeCBench gc-hip)."""
    helpers = "".join(f"__device__ int vote_{n}(bool p) {{ return __any(p); }}\n" for n in "qwertyuiop")
    calls = " + ".join(f"vote_{n}(p)" for n in "poiuytrewq")
    code = ("#include <hip/hip_runtime.h>\n" + helpers +
            f"__global__ void k(const int* x, int* out) {{\n  const bool p = x[threadIdx.x] > 0;\n"
            f"  out[threadIdx.x % 32] = {calls};\n}}\n")
    lanes = model(code)
    kernel = next(f for f in lanes.functions if f.name == "k")
    assert list(kernel.calls) == [f"vote_{n}" for n in "poiuytrewq"]
    context = next(c for c in lanes.contexts if c.root is kernel)
    assert [m.name for m in context.members] == ["k"] + [f"vote_{n}" for n in "poiuytrewq"]


def test_a_dropped_mask_in_a_32_lane_reduction_read_per_wavefront_moves_with_the_reduction():
    """ROC210: `__shfl_down(0xffffffff, v, o)` with the mask dropped is the reduction from 16
    it was; read at lane 0 of the wavefront, its fix comes with the reduction's start."""
    from rocmlint.model import Applicability

    code = ("#include <hip/hip_runtime.h>\n"
            "__global__ void k(const float* x, float* out) {\n"
            "  float v = x[threadIdx.x];\n"
            "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down(0xffffffff, v, o);\n"
            "  if (__lane_id() == 0) atomicAdd(out, v);\n"
            "}\n")
    [dropped] = [f for f in _all(code) if f.code == "ROC210"]
    assert dropped.fix.applicability is Applicability.UNSAFE
    assert "`o = 16` (line 4) moves to warpSize with it" in dropped.fix.title
    assert "for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down(v, o);" in _fixed(code, "k.hip", unsafe=True)
    per_32 = code.replace("__lane_id() == 0", "(threadIdx.x & 31) == 0")
    assert [f.fix.applicability for f in _all(per_32) if f.code == "ROC210"] == [Applicability.SAFE]
