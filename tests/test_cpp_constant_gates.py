"""C++ gates on HIP-only constants (rocmlint/cpp/constant_gates.py): the branch or the
template specialisation the AMD build never takes is NVIDIA-only; other conditions are not."""
from __future__ import annotations

import textwrap

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer

KERNEL = textwrap.dedent("""\
    #if defined(USE_ROCM)
    #include <hip/hip_runtime.h>
    constexpr bool kOnRocm = true;
    #else
    constexpr bool kOnRocm = false;
    #endif
    constexpr int kTile = 32;

    template <bool Rocm> struct Vote;
    template <> struct Vote<false> {
      __device__ static unsigned all(bool p) { return __ballot_sync(0xffffffff, p); }
    };
    template <> struct Vote<true> {
      __device__ static unsigned long long all(bool p) { return __ballot(p); }
    };
    __device__ unsigned long long vote(bool p) { return Vote<kOnRocm>::all(p); }

    __device__ float reduce(float v) {
      if (kOnRocm) {
        return v;
      } else {
        return v + __shfl_xor_sync(0xffffffff, v, 1);
      }
    }

    __device__ float tile(float v) {
      if constexpr (kTile > 16) {
        return v;
      } else {
        return v + __shfl_xor_sync(0xffffffff, v, 1);
      }
    }
""")


def lines(code: str) -> set[tuple[int, str]]:
    settings = Settings()
    found = analyse_buffer("k.cu", code.encode(), "cpp", settings, active_rules(settings, "cpp"))
    return {(f.line, f.code) for f in found}


def test_branches_and_specialisations_not_taken_on_amd_are_silent_other_constants_are_not():
    found = lines(KERNEL)
    assert not any(line == 11 for line, _ in found)  # Vote<false>: every use picks kOnRocm, true on AMD
    assert not any(line == 22 for line, _ in found)  # the else of if (kOnRocm)
    assert (30, "ROC203") in found  # kTile says nothing about the platform: judged as before


def test_the_nvidia_view_of_the_constant_is_not_silenced():
    flipped = KERNEL.replace("constexpr bool kOnRocm = true;", "constexpr bool kOnRocm = false;", 1) \
                    .replace("#else\nconstexpr bool kOnRocm = false;", "#else\nconstexpr bool kOnRocm = true;", 1)
    found = lines(flipped)
    assert (22, "ROC203") in found and (11, "ROC203") in found


def test_constant_definitions_match_a_plain_scan_of_the_pattern():
    """The scan tries the pattern only where a match can start; it finds what
    ``_CONSTANT.finditer`` finds, on every fixture and the awkward layouts below."""
    from pathlib import Path

    from rocmlint.cpp.constant_gates import _CONSTANT, constant_definitions

    def plain(text: str) -> dict:
        out: dict = {}
        for m in _CONSTANT.finditer(text):
            line = text.count("\n", 0, m.start(1))
            out.setdefault(m.group(1), []).append((line, (m.group(2) or m.group(3) or "").strip()))
        return out

    texts = [
        "const int a = 1;",
        "static const int a = 1;const int b = 2;\n  constexpr bool c{true};",
        "{const int a = 1;}; static inline constexpr auto d = sizeof(int);\n",
        "int f(const int x) { const unsigned n = x; return n; }\n",
        "\n\n\t  static constexpr int64_t big = 1 << 40;\nconst\nint\nsplit = 3;\n",
        "x; const float no = 1.f; const size_t yes = 4;",
        "#define W 32\nconstexpr int W2 = W * 2; ; ;const int last = 9;",
    ]
    for path in sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*")):
        if path.is_file() and path.suffix in (".cu", ".cuh", ".hip", ".h", ".cpp", ".hpp"):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    assert any(plain(text) for text in texts)
    for text in texts:
        assert constant_definitions(text) == plain(text), text[:120]


def test_condition_names_are_the_cpp_ifs_to_their_closing_parenthesis():
    """What decides whether a file is parsed for C++ gates: every name a C++ ``if`` reads,
    whatever follows it; ``#if (...)`` lines are the preprocessor's and count for nothing."""
    from rocmlint.cpp.constant_gates import _condition_names

    source = (b"#if (__CUDA_ARCH__ >= 800)\n#  if (defined(OTHER))\n#endif\n#endif\n"
              b"void f(int i) {\n  if (kIsRocm) ++i;\n  if ((a && b) ||\n      ns::IS_HIP) { g(); }\n"
              b"  if constexpr (int n = h(); n < LIMIT) return;\n  else if (last) {}\n  verif (zzz);\n}\n")
    names = _condition_names(source)
    assert {"kIsRocm", "a", "b", "IS_HIP", "n", "h", "LIMIT", "last"} <= names
    assert not {"__CUDA_ARCH__", "OTHER", "defined", "ns", "g", "zzz"} & names


def test_constants_are_not_read_where_no_platform_macro_is_named():
    """Without a project model a constant gates a branch only if its value or its #if stack
    reads a configured platform macro: a file naming none skips reading its constants."""
    from rocmlint.cpp.constant_gates import ConstantGates
    from rocmlint.cpp.context import CppContext

    body = "void f(int* x) {\n  if (kFast)\n    x[0] = 1;\n  else\n    x[0] = 2;\n}\n"
    plain = "constexpr bool kFast = true;\n" + body
    gates = ConstantGates(CppContext("k.cu", plain.encode(), Settings()))
    assert not gates.active and "definitions" not in gates.__dict__ and gates.reason(5) is None
    gated = "#ifdef __HIP_PLATFORM_AMD__\nconstexpr bool kFast = true;\n#else\nconstexpr bool kFast = false;\n#endif\n" + body
    gates = ConstantGates(CppContext("k.cu", gated.encode(), Settings()))
    assert gates.active and "definitions" in gates.__dict__
    assert gates.reason(9) is not None and gates.reason(7) is None  # the else is NVIDIA's


def test_no_more_than_max_headers_are_read_for_constants_even_from_one_includer(tmp_path, monkeypatch):
    """A header of a thousand #includes (an op-per-file API header) is searched only up to
    MAX_HEADERS files for a condition's constants, not through every one it names."""
    from rocmlint.cpp import constant_gates
    from rocmlint.cpp.constant_gates import MAX_HEADERS, ConstantGates
    from rocmlint.cpp.context import CppContext

    many = MAX_HEADERS + 20
    (tmp_path / "ops.h").write_text("".join(f'#include "op{n}.h"\n' for n in range(many)))
    for n in range(many):
        (tmp_path / f"op{n}.h").write_text(f"constexpr int kOp{n} = {n};\n")
    source = '#include "ops.h"\nvoid f(int* x) {\n  if (kOnAmd)\n    x[0] = 1;\n}\n'
    read: list[str] = []
    header_info = constant_gates._header_info

    def counting(path):
        read.append(path)
        return header_info(path)

    monkeypatch.setattr(constant_gates, "_header_info", counting)
    ConstantGates(CppContext(str(tmp_path / "k.cu"), source.encode(), Settings()))
    assert len(read) == MAX_HEADERS  # ops.h and the first op headers, then no more
