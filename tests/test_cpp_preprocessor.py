"""#if gate evaluation under the AMD build configuration, and file kind."""
from __future__ import annotations

import pytest

from rocmlint.config import Settings
from rocmlint.cpp.context import CppContext
from rocmlint.cpp.preprocessor import Conditionals, Evaluator, gate_polarity

SETTINGS = Settings(rocm_macros=("GGML_USE_HIP",), nvidia_macros=("GGML_USE_CUDA",))


def conditionals(text: str) -> Conditionals:
    return Conditionals(text.encode(), SETTINGS.all_rocm_macros, SETTINGS.all_nvidia_macros, SETTINGS.gate_macro)


@pytest.mark.parametrize("expr,value", [
    ("defined(__HIP_PLATFORM_AMD__)", 1),
    ("!defined(USE_ROCM)", 0),
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", 0),
    ("__CUDA_ARCH__ >= 800", 0),
    ("defined(FOO)", None),
    ("defined(FOO) || defined(__HIPCC__)", 1),
    ("defined(FOO) && !defined(USE_ROCM)", 0),
    ("CUDA_VERSION >= 11000", None),
    ("(defined GGML_USE_HIP) && !(defined GGML_USE_CUDA)", 1),
    ("__has_include(<hip/hip_runtime.h>)", None),
    ("1 ? defined(__HIP__) : 0", 1),
    ("017 == 15 && 0x1Fu == 31 && 02 == 2 && 10UL == 10", 1),  # C literals: octal, hex, suffixes
    # C++'s alternative operator spellings
    ("defined(__HIP_PLATFORM_AMD__) and not defined(GGML_USE_CUDA)", 1),
    ("defined(FOO) or defined(__HIPCC__)", 1),
    ("__CUDA_ARCH__ >= 800 and defined(FOO)", 0),
    ("5 bitand 4 not_eq 0", 1),
    ("compl 0 == -1 and (6 xor 3) == 5 and (4 bitor 1) == 5", 1),
])
def test_evaluator_three_valued(expr, value):
    ev = Evaluator({m: 1 for m in SETTINGS.all_rocm_macros}, set(SETTINGS.all_nvidia_macros))
    assert ev.evaluate(expr) == value


def test_branches_nvidia_only_and_unknown():
    pp = conditionals(
        "a\n"                                   # 0
        "#ifndef USE_ROCM\n"                    # 1
        "nv\n"                                  # 2
        "#else\n"                               # 3
        "amd\n"                                 # 4
        "#endif\n"                              # 5
        "#if defined(__CUDA_ARCH__) && \\\n"    # 6
        "    __CUDA_ARCH__ >= 800\n"            # 7
        "sm80\n"                                # 8
        "#elif defined(FOO)\n"                  # 9
        "foo\n"                                 # 10
        "#else\n"                               # 11
        "rest\n"                                # 12
        "#endif\n"                              # 13
    )
    assert [pp.nvidia_only(i) for i in (0, 2, 4, 8, 10, 12)] == [False, True, False, True, False, False]
    assert pp.amd[10] is None and pp.amd[12] is None


def test_wave_size_aware_branches():
    pp = conditionals(
        "#if defined(__GFX9__)\nw64\n#else\nw32\n#endif\n"
        "#if __AMDGCN_WAVEFRONT_SIZE == 64\nx\n#endif\n"
        "#ifdef __gfx942__\ny\n#endif\nplain\n"
    )
    assert [pp.wave_size_aware(i) for i in (1, 3, 6, 9, 11)] == [True, True, True, True, False]


def test_gate_blocks_and_local_defines():
    pp = conditionals(
        "#if defined(__HIP_PLATFORM_AMD__)\namd\n#else\nnv\n#endif\n"
        "#if defined(USE_ROCM)\n#define MY_HIP 1\n#endif\n#ifdef MY_HIP\nmine\n#endif\n"
    )
    assert pp.gate_blocks[0].if_line == 0 and pp.gate_blocks[0].else_line == 2
    assert pp.in_gate_amd_branch(1) and not pp.in_gate_amd_branch(3) and pp.nvidia_only(3)
    assert pp.amd[10] is True


@pytest.mark.parametrize("kind,cond,polarity", [
    ("if", "defined(__HIP_PLATFORM_AMD__)", True), ("ifdef", "__HIP_PLATFORM_AMD__", True),
    ("ifndef", "__HIP_PLATFORM_AMD__", False), ("if", "!defined(__HIP_PLATFORM_AMD__)", False),
    ("if", "defined(__HIP_PLATFORM_AMD__) && X", None),
])
def test_gate_polarity(kind, cond, polarity):
    assert gate_polarity(kind, cond, "__HIP_PLATFORM_AMD__") is polarity


@pytest.mark.parametrize("path,text,hip_only", [
    ("k.hip", "", True),
    ("k.cu", "#include <hip/hip_runtime.h>\n", True),
    ("k.cu", "#include <hip/hip_runtime.h>\n#include <cuda_fp16.h>\n", False),
    ("k.cu", "#ifdef USE_ROCM\n#include <hip/hip_runtime.h>\n#endif\n", False),
    ("k.cuh", "#include <hip/hip_runtime.h>\n#ifdef __CUDA_ARCH__\n#endif\n", False),
    ("k.h", "#ifndef K_H\n#define K_H\n#include <hip/hip_runtime.h>\n#endif\n", True),
])
def test_file_kind(path, text, hip_only):
    ctx = CppContext(path, text.encode(), Settings())
    assert ctx.hip_only is hip_only
    assert ctx.gated is (not hip_only)
    assert CppContext(path, text.encode(), Settings(gate="always")).gated
    assert not CppContext(path, text.encode(), Settings(gate="never")).gated


def test_a_malformed_define_or_undef_names_no_macro_and_does_not_crash():
    source = b"#define (x) 1\n#undef (y)\n#ifdef FOO\nint a;\n#endif\n"
    pp = Conditionals(source, (), (), "__HIP_PLATFORM_AMD__")
    assert pp.macro_lines.get("") == [(0, "define"), (1, "undef")]
    assert not pp.nvidia_only(3)
