"""ROC301-ROC303 read the text and the #if stack only; wave-size design rules in AMD-only code."""
from __future__ import annotations


import pytest

from rocmlint.config import Settings
from rocmlint.cpp.lexical import NonCode
from rocmlint.cpp.ptx import is_ptx, read_asm
from rocmlint.engine import analyse_buffer, rules_for

SETTINGS = Settings()


def lint(code: str, path: str = "k.cu", select=("ROC2", "ROC3")):
    return analyse_buffer(path, code.encode(), "cpp", SETTINGS, rules_for(select, (), "cpp"))


def codes(code: str, **kw) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint(code, **kw)]


def test_non_code_spans():
    src = (b'int a; // c \\\nstill comment\nconst char* s = "x // y"; /* block\n asm( */ int b;\n'
           b'auto r = R"d(raw " // )d"; int c;\n')
    spans = NonCode(src)
    assert not spans.covers(src.index(b"int a"))
    assert spans.covers(src.index(b"still"))  # a line comment continued by a backslash
    assert spans.covers(src.index(b"x // y"))
    assert spans.covers(src.index(b"asm("))
    assert not spans.covers(src.index(b"int b"))
    assert spans.covers(src.index(b"raw"))
    assert not spans.covers(src.index(b"int c"))


# The spans as the plain (not unrolled) alternation finds them: what NonCode must agree with.
_PLAIN_NOT_CODE = (
    rb"//[^\n]*(?:(?:(?<=\\)|(?<=\\\r))\n[^\n]*)*"
    rb"|/\*.*?(?:\*/|\Z)"
    rb"|\"(?:[^\"\\\n]|\\.)*\""
    rb"|'(?:[^'\\\n]|\\.)*'"
)


@pytest.mark.parametrize("src", [
    b"/* a ** b ***/ x /***/ y /* unterminated ** ",
    b"/* ends in stars **",
    b'"esc \\" /* not */ still" code "" \'\\\'\' \'"\' /**/',
    b'"continued \\\n line" x "open on its line\n y = 1; // c\\\r\n still',
    b"'unterminated\n /* c */ 'x' \"a\\\\\" b",
    b'R"d(raw */ "" )d" /* c */ u8R"(x)" // z',
    b"x \"a\"\"b\"'c'/**//* d */\"e\"// f",  # spans that touch: one ends where the next starts
])
def test_non_code_spans_agree_with_the_plain_pattern_in_any_query_order(src):
    """The unrolled pattern finds what the plain alternation finds, and the spans read as
    far as a query reaches answer every offset as the whole file's would, asked in any order."""
    import random
    import re

    prefix = rb'(?:u8|[uUL])?R"([^()\\\s"]{0,16})\(.*?\)\1"|' if b'R"' in src else b""
    plain = [m.span() for m in re.compile(prefix + _PLAIN_NOT_CODE, re.DOTALL).finditer(src)]
    expected = [any(a <= offset < b for a, b in plain) for offset in range(len(src) + 1)]
    whole = NonCode(src)
    assert [whole.covers(offset) for offset in range(len(src) + 1)] == expected
    assert list(zip(whole.starts, whole.ends)) == plain
    offsets = list(range(len(src) + 1))
    random.Random(len(src)).shuffle(offsets)
    lazy = NonCode(src)
    assert {offset: lazy.covers(offset) for offset in offsets} == dict(enumerate(expected))
    for offset in range(len(src) + 1):  # first question of a fresh reader, at every offset
        assert NonCode(src).covers(offset) == expected[offset]


@pytest.mark.parametrize("template,ptx", [
    ("mov.u32 %0, %%laneid;", True),
    ("{ .reg .pred p; setp.ne.b32 p, %1, 0; selp.u32 %0, 1, 0, p; }", True),
    ("cp.async.cg.shared.global [%0], [%1], 16;", True),
    ("@p bra.uni DONE;", True),
    ("llvm.amdgcn.raw.buffer.atomic.add.i32", False),
    ("s_waitcnt lgkmcnt(0)", False),
    ("v_mov_b32 %0, %1", False),
    ("ds_bpermute_b32 %0, %1, %2", False),
    ("movl %1, %0", False),
    ("fence.acq_rel.gpu;", True),  # no operands: the suffixes say PTX
    ("max.NaN.f32 %0, %1, %2;", True),
    ("mov.v4.u32 {%0, %1, %2, _}, %%nclusterid;", True),
    ("mov.m.x m0, x0, 0xFF", False),  # RISC-V vector-mask move: a dotted mnemonic, not PTX
    ("fmadd.ps f13, f22, f12, f20", False),
    ("", False),
])
def test_is_ptx(template, ptx):
    assert is_ptx(template) is ptx


def test_read_asm_joins_literals_and_numbers_operands():
    src = b'asm volatile(\n  "{\\n"\n  "  prmt.b32 %0, %1, %2, %3;\\n"\n  "}\\n"\n  : "=r"(out) : "r"(a), "r"(f(b, c)), "r"(s));\n'
    asm = read_asm(src, 0)
    assert asm is not None and asm.closed
    assert asm.template == "{ prmt.b32 %0, %1, %2, %3; }"
    assert asm.operands == ["out", "a", "f(b, c)", "s"]
    assert src[asm.span.end - 1 : asm.span.end] == b")"


def test_commented_out_code_is_not_reported():
    code = ("//#include <mma.h>\n"
            "/* #include <cuda_fp16.h> */\n"
            "// asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(x));\n"
            "/*\n  asm volatile(\"membar.gl;\");\n*/\n"
            "// using G = cutlass::gemm::device::Gemm<float>;\n"
            "const char* hint = \"cutlass::half_t\";\n")
    assert codes(code) == []


def test_asm_labels_and_gcn_assembly_are_not_ptx():
    code = ('__device__ int add_i32(int v, int4 r, int o, int s, int g) __asm("llvm.amdgcn.raw.buffer.atomic.add.i32");\n'
            '__device__ void wait() { asm volatile("s_waitcnt lgkmcnt(0)" ::: "memory"); }\n'
            '__device__ int perm(int a, int l) { int r; asm volatile("ds_bpermute_b32 %0, %1, %2" : "=v"(r) : "v"(l), "v"(a)); return r; }\n')
    assert codes(code) == []


def test_one_roc301_finding_per_asm_block():
    code = ('__device__ void mma(unsigned* d, const unsigned* a) {\n'
            '  asm volatile(\n'
            '      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "\n'
            '      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\\n"\n'
            '      "ld.shared.b32 %4, [%6];\\n"\n'
            '      "cvt.rn.f16x2.f32 %5, %4, %4;\\n"\n'
            '      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])\n'
            '      : "r"(a[0]), "r"(a[1]), "r"(a[2]));\n'
            '}\n')
    assert codes(code) == [(2, "ROC301")]


def test_roc302_once_per_file_with_a_count():
    code = ('#include "cutlass/numeric_types.h"\n'
            '#include <cute/tensor.hpp>\n'
            'using H = cutlass::half_t;\n'
            '// cutlass::bfloat16_t in a comment\n'
            'using Layout = cute::Layout<int>;\n'
            'struct mycutlass { };\n')
    findings = lint(code, select=("ROC302",))
    assert [(f.line, f.code) for f in findings] == [(1, "ROC302")]
    assert "(3 more uses in this file)" in findings[0].message


def test_text_rules_never_parse(monkeypatch):
    import rocmlint.cpp.context as context

    def no_parse(*_args):
        raise AssertionError("ROC301-ROC303 parsed the file")

    monkeypatch.setattr(context, "parse", no_parse)
    code = ('#include <cuda_fp16.h>\n#include "cutlass/gemm/gemm.h"\n'
            '__device__ void fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }\n'
            'using G = cutlass::gemm::GemmShape<128, 128, 32>;\n')
    assert sorted(codes(code, select=("ROC3",))) == [(1, "ROC303"), (2, "ROC302"), (3, "ROC301")]


def test_unrolled_butterfly_stops_or_continues():
    stops = ("__device__ float s(float v) {\n  v += __shfl_xor_sync(0xffffffffu, v, 1);\n"
             "  v += __shfl_xor_sync(0xffffffffu, v, 2);\n  v += __shfl_xor_sync(0xffffffffu, v, 4);\n"
             "  v += __shfl_xor_sync(0xffffffffu, v, 8);\n  v += __shfl_xor_sync(0xffffffffu, v, 16);\n"
             "  return v;\n}\n"
             "__global__ void k(float* o) {\n  const float t = s(o[threadIdx.x]);\n"
             "  if (__lane_id() == 0) o[blockIdx.x] = t;\n}\n")
    findings = [f for f in lint(stops, select=("ROC205",))]
    assert [(f.line, f.code) for f in findings] == [(6, "ROC205")]
    assert "stops at offset 16" in findings[0].message and "`__lane_id() == 0`" in findings[0].message
    goes_on = stops.replace("  return v;", "  v += __shfl_xor_sync(0xffffffffu, v, 32);\n  return v;")
    assert codes(goes_on, select=("ROC205",)) == []
    alone = stops[:stops.index("__global__")]  # no caller reads it as a wavefront's: consistent
    assert codes(alone, select=("ROC205",)) == []


def test_runtime_guard_against_named_constant_and_compile_time_checks():
    code = ("#include <cstdlib>\nconstexpr int kWarp = 32;\n"
            "void need(const cudaDeviceProp& prop) {\n  if (prop.warpSize != kWarp) abort();\n}\n"
            "template <int G> __device__ void g() {\n"
            "  if constexpr (G == 32) { static_assert(warp_size == 32, \"x\"); return; }\n}\n")
    assert codes(code, select=("ROC207",)) == [(4, "ROC207")]


def test_logical_lines_skip_block_comments_and_join_continuations():
    from rocmlint.cpp.preprocessor import logical_lines

    src = (b"/* license\n#if 0\n*/ int x;  # not a directive\n#if A \\\n  && B  // why\n"
           b"int y; /* open\n#endif\n*/\n  #  endif\r\n")
    assert list(logical_lines(src)) == [(3, 4, b"#if A    && B  "), (8, 8, b"  #  endif")]
    # many '#' on one line (token pasting, a continuation holding '#'), a comment opened by a
    # directive, `//*` (the first slash stays), no newline at the end
    src = (b"#define CAT(a, b) a##b /* paste\n#undef CAT\n */ #x\n#define S(x) #x \\\n  # x ## y\n"
           b"#if 1 //* c */\n#endif")
    assert list(logical_lines(src)) == [(0, 0, b"#define CAT(a, b) a##b "), (3, 4, b"#define S(x) #x    # x ## y"),
                                        (5, 5, b"#if 1 / "), (6, 6, b"#endif")]


def test_template_branches_taken_only_without_the_rocm_gate_are_nvidia_only():
    from rocmlint.cpp.templating import nvidia_only_lines

    src = (b"{%- if is_rocm %}\nA\n{%- else %}\nN\n{%- endif %}\n"       # 0-4
           b"{% if not is_rocm %}\nN\n{% else %}\nA\n{% endif %}\n"      # 5-9
           b"{%- if not is_rocm and dense %}\nN\n{%- elif x %}\nX\n{%- endif %}\n"  # 10-14
           b"{% if is_rocm or x %}\nX\n{% else %}\nX\n{% endif %}\n")    # 15-19
    assert nvidia_only_lines(src, ["is_rocm"]) == {3, 6, 11}
    kernel = ("{%- if is_rocm %}\n__device__ unsigned f(bool p) {\n  unsigned long long m = __ballot(p);\n"
              "  return __popcll(m);\n}\n"
              "{%- else %}\n__device__ unsigned f(bool p) {\n  unsigned m = __ballot_sync(0xffffffffu, p);\n"
              "  return __popc(m);\n}\n{%- endif %}\n")
    assert codes(kernel, select=("ROC201", "ROC202", "ROC203")) == []  # only the non-ROCm branch is wrong
    broken = kernel.replace("unsigned long long m = __ballot(p)", "unsigned m = __ballot(p)")
    assert codes(broken, select=("ROC201",)) == [(3, "ROC201")]  # the ROCm branch is judged like any code
