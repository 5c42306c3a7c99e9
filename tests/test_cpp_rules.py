"""C++ rules on broken trees, data-flow chains, and the gated-fix shape."""
from __future__ import annotations

from pathlib import Path

from rocmlint.config import Settings
from rocmlint.cpp.treesitter import count_errors, parse
from rocmlint.engine import analyse_buffer, rules_for
from rocmlint.runner import fix_buffer

SETTINGS = Settings()
ROOT = Path(__file__).resolve().parent.parent


def lint(code: str, path: str = "k.cu", select=("ROC2", "ROC3")):
    return analyse_buffer(path, code.encode(), "cpp", SETTINGS, rules_for(select, (), "cpp"))


def fix(code: str, path: str = "k.cu", unsafe: bool = False, select=("ROC2", "ROC3")) -> str:
    outcome = fix_buffer(code.encode(), "\n", path, "cpp", SETTINGS, rules_for(select, (), "cpp"), unsafe=unsafe)
    return outcome.buffer.decode()


BROKEN = (
    "#define KERNEL_ATTR __global__ __launch_bounds__(256) EXTRA_ATTR(1)\n"
    "KERNEL_ATTR EXTRA_ATTR(2) void vote(const int* in, int* out) {\n"
    "  unsigned mask = __ballot_sync(0xffffffff, in[threadIdx.x] > 0);\n"
    "  out[0] = __popc(mask);\n"
    "}\n"
)


def test_hazards_found_in_function_with_error_nodes():
    assert count_errors(parse(BROKEN.encode(), "k.cu").root_node) > 0
    codes = sorted(f.code for f in lint(BROKEN))
    assert codes == ["ROC201", "ROC202", "ROC203"]


def test_chain_reported_once_per_operation_with_source():
    code = (
        "__device__ int rank(bool p, int lane) {\n"
        "  auto votes = __ballot_sync(0xffffffffu, p);\n"
        "  auto mine = votes & ~(~0ull << lane);\n"
        "  unsigned low = mine;\n"
        "  return __popc(low) + __popc(mine);\n"
        "}\n"
    )
    findings = [f for f in lint(code) if f.code in ("ROC201", "ROC202")]
    assert [(f.code, f.line) for f in findings] == [("ROC201", 4), ("ROC202", 5), ("ROC202", 5)]
    assert all("`__ballot_sync` on line 2" in f.message for f in findings)


def test_word_size_32_is_not_warp_size():
    code = (
        "#define BITS 32\n"
        "const int kWordBits = 32;\n"
        "__device__ bool bit(const unsigned* w, int i) { return (w[i / BITS] >> (i & 31)) & 1; }\n"
        "__device__ int popcount(unsigned x) { return __popc(x); }\n"
    )
    assert lint(code) == []


def test_adjacent_hazards_merge_into_one_block_and_second_fix_is_noop():
    code = (
        "#include <cstdint>\n"
        "__device__ int slot(bool keep, int lane) {\n"
        "  unsigned ballot = __ballot_sync(0xffffffff, keep);\n"
        "  unsigned lower = (1u << lane) - 1;\n"
        "  return __popc(ballot & lower);\n"
        "}\n"
    )
    fixed = fix(code)
    assert fixed.count("#if defined(__HIP_PLATFORM_AMD__)") == 1
    assert "  uint64_t ballot = __ballot(keep);\n  uint64_t lower = (1ull << lane) - 1;\n" \
           "  return __popcll(ballot & lower);\n#else\n" in fixed
    assert fix(fixed) == fixed
    assert count_errors(parse(fixed.encode(), "k.cu").root_node) == 0


def test_cstdint_added_behind_the_gate_when_missing():
    code = "__global__ void k(unsigned* out) {\n  unsigned m = __ballot_sync(0xffffffff, threadIdx.x > 3);\n  out[0] = m;\n}\n"
    fixed = fix(code, select=("ROC201",))
    assert fixed.startswith("#if defined(__HIP_PLATFORM_AMD__)\n#include <cstdint>\n#endif\n")


def test_multi_line_statement_gated_whole():
    code = (
        "__device__ float f(float v) {\n"
        "  v += __shfl_xor_sync(0xffffffff,\n"
        "                       v, 1);\n"
        "  return v;\n"
        "}\n"
    )
    fixed = fix(code)
    assert "#if defined(__HIP_PLATFORM_AMD__)\n  v += __shfl_xor(v, 1);\n#else\n  v += __shfl_xor_sync(0xffffffff,\n" \
           "                       v, 1);\n#endif\n" in fixed


def test_hip_only_file_is_rewritten_directly():
    code = "#include <hip/hip_runtime.h>\n__device__ int c(bool p) { auto m = __ballot(p); return __popc(m); }\n"
    assert fix(code, path="k.hip") == code.replace("__popc(", "__popcll(")


def test_never_emits_deprecated_wavefront_macro_or_bare_64():
    code = (
        "#define WARP_SIZE 32\n"
        "__global__ void k(float* out) {\n"
        "  int lane = threadIdx.x % WARP_SIZE;\n"
        "  float v = out[threadIdx.x];\n"
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
        "  if (lane == 0) out[blockIdx.x] = v + __popcll(__ballot(v > 0.f));\n"
        "}\n"
    )
    fixed = fix(code, unsafe=True)
    assert "threadIdx.x % warpSize" in fixed and "o = warpSize / 2" in fixed  # the whole group moved
    assert "__AMDGCN_WAVEFRONT_SIZE" not in fixed and "64" not in fixed


def test_commented_out_define_is_not_reported():
    assert lint("// #define C10_WARP_SIZE 32\n/* #define WARP_SIZE 32 */\n") == []


def test_typed_descendants_match_the_tree_walk():
    """A type set is walked in Python until a query pays for its compiling, then queried:
    both give the same nodes in the same order (broken trees and every fixture)."""
    from tree_sitter import QueryCursor

    from rocmlint.cpp import context as cpp_context
    from rocmlint.cpp.context import CppContext

    texts = [BROKEN + "__device__ int f(int a) { int b = a; b = a + 1; return b; }\n"]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "fixtures" / "cpp").rglob("*"))
              if p.suffix in (".cu", ".cuh", ".hip", ".h")]
    type_sets = [{"declaration", "parameter_declaration", "assignment_expression", "return_statement", "call_expression"},
                 {"function_definition"}, {"identifier"}, {"binary_expression", "assignment_expression", "call_expression"},
                 {"if_statement", "conditional_expression"}, {"init_declarator", "assignment_expression"}]
    compared = 0
    for text in texts:
        ctx = CppContext("k.cu", text.encode(), SETTINGS)
        for types in type_sets:
            query = cpp_context._type_query(ctx.tree.language, frozenset(types))
            queried = sorted(QueryCursor(query).captures(ctx.root).get("n", []), key=lambda n: (n.start_byte, -n.end_byte))
            walked = list(ctx._walk(ctx.root, types))
            assert [n.id for n in queried] == [n.id for n in walked]
            compared += bool(walked)
    assert compared > 20
    big = CppContext("k.cu", ("int g(int a) { return a + 1; }\n" * 3000).encode(), SETTINGS)
    types = frozenset({"return_statement"})
    cpp_context._WALKED.pop(types, None)
    assert not cpp_context._cheaper_to_walk(types, big.root)  # 30,000 nodes: compile the query
    assert len(list(big.descendants(big.root, types))) == 3000


UNROLLED = (
    "#define CUTLASS_PRAGMA_UNROLL _Pragma(\"unroll\")\n"
    "__global__ void strided(const float* in, float* out, int n) {\n"
    "  float acc = 0.f;\n"
    "  CUTLASS_PRAGMA_UNROLL\n"
    "  for (int i = threadIdx.x % 32; i < n; i += blockDim.x) {\n"
    "    acc += in[i];\n"
    "  }\n"
    "  out[threadIdx.x] = acc + __popcll(__ballot(acc > 0.f));\n"
    "}\n"
)
INITIALISER = (
    "#define CUTE_HOST_DEVICE __host__ __device__\n"
    "struct LaneInfo {\n"
    "  int lane;\n"
    "  CUTE_HOST_DEVICE\n"
    "  LaneInfo(int tid)\n"
    "      : lane(tid % 32) {\n"
    "    if (__any(lane == 0)) lane += 0;\n"
    "  }\n"
    "};\n"
)


def test_gate_copying_an_unparsable_macro_line_is_applied_as_a_whole_loop():
    assert count_errors(parse(UNROLLED.encode(), "k.cu").root_node) > 0
    fixed = fix(UNROLLED, unsafe=True, select=("ROC204",))
    assert fixed == UNROLLED.replace(
        "  CUTLASS_PRAGMA_UNROLL\n",
        "#if defined(__HIP_PLATFORM_AMD__)\n  CUTLASS_PRAGMA_UNROLL\n"
        "  for (int i = threadIdx.x % warpSize; i < n; i += blockDim.x) {\n    acc += in[i];\n  }\n"
        "#else\n  CUTLASS_PRAGMA_UNROLL\n", 1).replace("  }\n  out[", "  }\n#endif\n  out[", 1)


def test_gate_around_macro_before_initialiser_list_is_applied():
    assert count_errors(parse(INITIALISER.encode(), "k.cu").root_node) > 0
    fixed = fix(INITIALISER, unsafe=True, select=("ROC204",))
    assert ": lane(tid % warpSize) {" in fixed and fixed.count("CUTE_HOST_DEVICE\n") == 2
    assert fixed.index("#endif") > fixed.index("    if (__any(lane == 0)) lane += 0;\n  }\n#else")


def test_a_fix_that_breaks_one_build_view_still_counts_as_new_errors():
    from rocmlint.languages import get_language

    original = b"int f() { return 1; }\nint g() { return 2; }\n"
    broken = (b"#if defined(__HIP_PLATFORM_AMD__)\nint f() { return 1;\n#else\nint f() { return 1; }\n#endif\n"
              b"int g() { return 2; }\n")
    assert get_language("cpp").new_syntax_errors(original, broken, "k.cu", SETTINGS) > 0
    copied = b"#define U _Pragma(\"unroll\")\nvoid h() {\n  U\n  for (int i = 0; i < 4; ++i) {\n  }\n}\n"
    gated = copied.replace(b"  U\n", b"#if defined(__HIP_PLATFORM_AMD__)\n  U\n  for (int i = 0; i < 8; ++i) {\n  }\n"
                                     b"#else\n  U\n", 1).replace(b"  }\n}\n", b"  }\n#endif\n}\n")
    assert get_language("cpp").new_syntax_errors(copied, gated, "k.cu", SETTINGS) == 0


def test_adjacent_gate_blocks_merge_in_the_round_that_makes_them():
    """Three hazards on consecutive lines: one block, and one analysis after the fixes
    (a second round per merge used to re-analyse the whole file)."""
    from rocmlint.fixers.apply import fix_to_fixpoint
    from rocmlint.languages import get_language

    code = ("__global__ void k(int* o) {\n"
            "  int lane = threadIdx.x % 32;\n"
            "  int warp = threadIdx.x / 32;\n"
            "  int last = threadIdx.x & 31;\n"
            "  o[threadIdx.x] = lane + warp + last + __popcll(__ballot(lane));\n"
            "}\n")
    rules = rules_for(("ROC204",), (), "cpp")
    calls = []

    def analyse(buffer: bytes):
        calls.append(buffer)
        return analyse_buffer("k.cu", buffer, "cpp", SETTINGS, rules)

    lang = get_language("cpp")
    outcome = fix_to_fixpoint(code.encode(), analyse, unsafe=True, newline="\n",
                              syntax_errors=lambda b: lang.syntax_errors(b, "k.cu"),
                              nvidia_view=lambda b: lang.nvidia_view(b, "k.cu", SETTINGS))
    fixed = outcome.buffer.decode()
    assert fixed.count("#if defined(__HIP_PLATFORM_AMD__)") == 1
    assert ("#if defined(__HIP_PLATFORM_AMD__)\n  int lane = threadIdx.x % warpSize;\n"
            "  int warp = threadIdx.x / warpSize;\n") in fixed
    assert len(calls) == 2 and outcome.findings == []
