"""ROC304: `rocmlint explain` at a function empty on AMD shows its gates and their values."""
from __future__ import annotations

from test_cli import run_cli

SOURCE = ("__device__ float4 mma_tile(const half* a, float4 c) {\n"
          "  float4 d = c;\n"
          "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
          "  asm volatile(\"mma.sync ...\" : \"+f\"(d.x) : \"r\"(a[0]));\n"
          "#endif\n"
          "#if NVIDIA_EXTRA_PATH\n"
          "  d.y += 1.0f;\n"
          "#endif\n"
          "  return d;\n"
          "}\n"
          "__global__ void tiles(const half* a, float4* c) { c[threadIdx.x] = mma_tile(a, c[threadIdx.x]); }\n")


def test_explain_shows_each_gate_and_its_value(tmp_path, capsys):
    (tmp_path / "rocmlint.toml").write_text('root = true\nnvidia-macros = ["NVIDIA_EXTRA_PATH"]\n')
    (tmp_path / "tile.cu").write_text(SOURCE)
    code, out, _err = run_cli(["explain", "--no-cache", "tile.cu:1"], tmp_path, capsys)
    assert code == 0
    assert "ROC304 body-empty-on-amd: REPORTED" in out and "lines 3-5" in out
    assert "gate at tile.cu:3:" in out and "gate at tile.cu:6:" in out
    assert "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  -> NOT taken on AMD" in out
    assert "#if NVIDIA_EXTRA_PATH  -> NOT taken on AMD" in out and "NVIDIA_EXTRA_PATH: undefined" in out


def test_an_unknown_gate_is_not_proof(tmp_path, capsys):
    (tmp_path / "rocmlint.toml").write_text("root = true\n")
    (tmp_path / "tile.cu").write_text(SOURCE.replace("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
                                                     "SOME_PROJECT_SWITCH"))
    _code, out, _err = run_cli(["check", "--no-cache", "--select", "ROC304", "tile.cu"], tmp_path, capsys)
    assert "All checks passed!" in out  # the AMD build may take that branch


def _roc304(code: str) -> list[tuple[int, str]]:
    from rocmlint.config import Settings
    from rocmlint.engine import analyse_buffer, rules_for

    found = analyse_buffer("k.cu", code.encode(), "cpp", Settings(), rules_for(("ROC304",), (), "cpp"))
    return [(f.line, f.message.split(":")[0]) for f in found]


def test_code_no_build_compiles_and_a_compiler_barrier_are_not_amd_gaps():
    # `#if 0` leaves NVIDIA's build without the code too.
    assert _roc304("__global__ void dump(int* out) {\n#if 0\n  out[0] = 1;\n#endif\n}\n") == []
    # An empty asm template with "+r" is a compiler barrier: it writes nothing.
    assert _roc304("__device__ void fence(unsigned& r) {\n#if defined(__CUDA_ARCH__)\n"
                   "  asm volatile(\"\" : \"+r\"(r) :: \"memory\");\n#endif\n}\n") == []
    # Leaving AMD out by name is still a silent no-op there: the function needs a trap or an error.
    excluded = "__global__ void histogram(int* out) {\n#ifndef __HIP_PLATFORM_AMD__\n  out[0] = 1;\n#endif\n}\n" \
        "void count(int* out) { histogram<<<1, 64>>>(out); }\n"
    assert _roc304(excluded) == [(1, "`histogram` is empty on AMD")]
    # An NVIDIA architecture test around a real write is the gap the rule exists for.
    mma = "__device__ void mma(float* d) {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n  d[0] = 1.f;\n#endif\n}\n" \
        "__global__ void tile(float* d) { mma(d); }\n"
    assert _roc304(mma) == [(1, "`mma` is empty on AMD")]


GATE = "#if defined(__CUDA_ARCH__)\n"


def _outside(code: str) -> set[int]:
    """1-based lines of the #if directives the text filter puts outside every function."""
    from rocmlint.checks.cpp.roc304_body_empty_on_amd import _outside_functions
    from rocmlint.config import Settings
    from rocmlint.cpp.context import CppContext

    return {line + 1 for line in _outside_functions(CppContext("k.cu", code.encode(), Settings()))[0]}


def test_gates_around_whole_declarations_are_known_without_a_parse():
    code = ("#include <cuda.h>\n"
            "namespace tiles {\n" + GATE + "__device__ void mma(float* d) { d[0] = 1.f; }\n#endif\n"  # 3
            'extern "C" {\n' + GATE + "int host_count;\n#endif\n}\n"  # 7
            "struct Tile : Base<int> {\n  int rows;\npublic:\n" + GATE + "  float4 acc;\n#endif\n};\n"  # 14
            "/* { a brace in a comment */ const char* s = \"}\";\n"
            "#define OPEN_BLOCK { \\\n  }\n"
            + GATE + "__device__ void scale(float* x) { x[0] = 2.f; }\n#endif\n"  # 21
            "}  // namespace tiles\n")
    assert _outside(code) == {3, 7, 14, 21}


def test_gates_that_may_sit_in_a_function_are_left_to_the_parse():
    inside = "__device__ void f(float* d) {\n" + GATE + "  d[0] = 1.f;\n#endif\n}\n"
    header = "__device__ void f(float* d)\n" + GATE + "  __attribute__((noinline))\n#endif\n{ d[0] = 1.f; }\n"
    initialiser = "struct S {\n  int a;\n  S() :\n" + GATE + "  a(1)\n#endif\n  {}\n};\n"
    local_class = "void f() {\n  struct L {\n" + GATE + "    int x;\n#endif\n  };\n}\n"
    lambda_ = "auto g = [](float* d) {\n" + GATE + "  d[0] = 1.f;\n#endif\n};\n"
    returns_struct = "struct Pair make() {\n" + GATE + "  return {};\n#endif\n}\n"
    for code in (inside, header, initialiser, local_class, lambda_, returns_struct):
        assert _outside(code) == set(), code
    # Braces that balance only across branches: the whole file is left to the parse.
    split = "namespace n {\n#if A\nvoid f() {\n#else\nvoid f(int) {\n#endif\n}\n" + GATE + "int x;\n#endif\n}\n"
    assert _outside(split) == set()
    # An #if splitting a declaration: what follows is left to the parse, which may recover
    # from it by wrapping the next lines in a function (CUTLASS's SIMT epilogue does this).
    mid = "struct S {\n  using P = Shape<0, 4\n#if SCALAR\n  + 1\n#endif\n  >;\n" + GATE + "  int y;\n#endif\n};\n"
    assert _outside(GATE + "int x;\n#endif\n" + mid) == {1}


def test_a_file_whose_gates_all_sit_between_declarations_is_not_parsed():
    from rocmlint.config import Settings
    from rocmlint.cpp.context import CppContext
    from rocmlint.registry import all_rules

    code = "namespace tiles {\n" + GATE + "__device__ void mma(float* d) { d[0] = 1.f; }\n#endif\n}\n"
    ctx = CppContext("k.cu", code.encode(), Settings())
    all_rules()["ROC304"]().check(ctx)
    assert "tree" not in ctx.__dict__ and not ctx.findings
    assert _roc304(code.replace("namespace tiles {\n", "__device__ void mma2(float* d) {\n") +
                   "__global__ void k(float* d) { mma2(d); }\n") == [(1, "`mma2` is empty on AMD")]


def test_a_file_whose_dead_chains_hold_only_directives_needs_no_code_view():
    """A chain of #defines and comments takes no line from a function: nothing else is read.
    A continued #define's next line is read as a line of code, as `_empty_on_amd` reads it."""
    from rocmlint.config import Settings
    from rocmlint.cpp.context import CppContext
    from rocmlint.registry import all_rules

    def reads_code(code: str) -> bool:
        ctx = CppContext("k.cu", code.encode(), Settings())
        all_rules()["ROC304"]().check(ctx)
        return "ROC304-code" in ctx.cache

    switches = ("__device__ void mma(float* d) { d[0] = 1.f; }\n" + GATE +
                "// arch switches\n#define TILES_SM80_ENABLED 1\n\n#  define TILES_ASYNC_COPY 1\n#endif\n")
    assert not reads_code(switches)
    assert reads_code(switches.replace("#define TILES_SM80_ENABLED 1\n", "#define TILES_SM80_ENABLED \\\n  1\n"))
    assert reads_code(switches.replace("// arch switches\n", "  d_global = 1;\n"))


def _roc304_messages(code: str, path: str = "k.cu") -> list[tuple[int, str]]:
    from rocmlint.config import Settings
    from rocmlint.engine import analyse_buffer, rules_for

    found = analyse_buffer(path, code.encode(), "cpp", Settings(), rules_for(("ROC304",), (), "cpp"))
    return [(f.line, f.message) for f in found]


MMA = ("__device__ float4 mma(const unsigned* a, float4 c) {\n  float4 d = c;\n"
       "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
       "  asm volatile(\"mma.sync ...\" : \"+f\"(d.x), \"+f\"(d.y) : \"r\"(a[0]));\n#endif\n  return d;\n}\n")


def test_only_functions_the_amd_build_calls_or_launches_are_reported():
    """An empty body matters where the AMD build runs it: a call in code it compiles (named
    in the message), or an entry point exported to callers out of view."""
    assert _roc304_messages(MMA) == []  # nothing calls it
    called = MMA + "__global__ void tile(const unsigned* a, float4* c) { c[0] = mma(a, c[0]); }\n"
    [(line, message)] = _roc304_messages(called)
    assert line == 1 and message.endswith("and the AMD build calls it at line 8")
    # a launch only the NVIDIA path makes, and a call from an NVIDIA-only kernel, are no use on AMD
    nvidia_only = MMA + ("#if !defined(__HIP_PLATFORM_AMD__)\n"
                         "__global__ void tile(const unsigned* a, float4* c) { c[0] = mma(a, c[0]); }\n#endif\n")
    assert _roc304_messages(nvidia_only) == []
    launched = ("__global__ void fill_sm75(float* out) {\n#if __CUDA_ARCH__ >= 750\n  out[threadIdx.x] = 1.f;\n"
                "#endif\n}\nvoid fill(float* out) {\n#ifdef __HIP_PLATFORM_AMD__\n  hipMemset(out, 0, 4);\n#else\n"
                "  fill_sm75<<<1, 32>>>(out);\n#endif\n}\n")
    assert _roc304_messages(launched) == []
    [(line, message)] = _roc304_messages(launched.replace("  hipMemset(out, 0, 4);\n", "  fill_sm75<<<1, 64>>>(out);\n"))
    assert line == 1 and message.endswith("and the AMD build launches it at line 8")
    # a prototype is no call; an exported entry point is called from out of view
    assert _roc304_messages("__device__ float4 mma(const unsigned* a, float4 c);\n" + MMA) == []
    exported = 'extern "C" ' + MMA
    assert "exported entry point" in _roc304_messages(exported)[0][1]


def test_statements_outside_the_gates_are_code():
    # a macro invocation tree-sitter reads as a declaration
    kokkos_style = ("template <class T>\n__host__ __device__ T swap_bytes(\n    T x) noexcept {\n"
                    "  IF_DEVICE_PASS((return ::impl::swap_bytes_device(x);))\n"
                    "  IF_HOST_PASS((return ::impl::swap_bytes_host(x);))\n"
                    "#if defined(__NVCOMPILER) && defined(__CUDA_ARCH__)\n  return T();\n#endif\n}\n"
                    "__global__ void k(int* x) { x[0] = swap_bytes(x[0]); }\n")
    assert _roc304_messages(kokkos_style) == []
    # the same function with a statement that is no code (a declaration) is empty on AMD
    declared = kokkos_style.replace("  IF_DEVICE_PASS((return ::impl::swap_bytes_device(x);))\n"
                                    "  IF_HOST_PASS((return ::impl::swap_bytes_host(x);))\n", "  T y;\n")
    assert [line for line, _ in _roc304_messages(declared)] == [2]
    # a value computed from inputs the gated check only reads
    functor = ("struct or_bits {\n  __device__ unsigned operator()(unsigned a, unsigned b) const {\n"
               "#ifndef __HIP_PLATFORM_AMD__\n    assert((a & b) == 0);\n#endif\n    return a | b;\n  }\n};\n"
               "__global__ void k(unsigned* x) { x[0] = or_bits()(x[1], x[2]); }\n")
    assert _roc304_messages(functor) == []
    # the same return where the gated code writes what it returns is the gap
    writes = functor.replace("assert((a & b) == 0);", "a = __brev(a);")
    assert [line for line, _ in _roc304_messages(writes)] == [2]
    assert "the AMD build calls `or_bits` at line 9" in _roc304_messages(writes)[0][1]


def test_a_headers_callers_are_found_in_the_files_that_include_it(tmp_path, capsys):
    """A header's function is used where a file that includes it calls it in code the AMD
    build compiles; a header nothing in view includes is an interface (reported), and one
    whose includers never call the function is not."""
    import json

    from rocmlint.project import activate

    (tmp_path / "rocmlint.toml").write_text("root = true\n")
    (tmp_path / "tiles.cuh").write_text(MMA)
    hip = "#include <hip/hip_runtime.h>\n"  # a project with a HIP build: the model knows who includes what
    (tmp_path / "main.cu").write_text(hip + '#include "tiles.cuh"\n__global__ void tile(const unsigned* a, float4* c) {\n'
                                      "  c[0] = mma(a, c[0]);\n}\n")

    def found() -> list[tuple[str, int, str]]:
        _code, out, _err = run_cli(["check", "--no-cache", "--select", "ROC304", "--output-format", "json", "."],
                                   tmp_path, capsys)
        return [(f["path"].removeprefix("./"), f["line"], f["message"]) for f in json.loads(out)]

    try:
        [(path, line, message)] = found()
        assert (path, line) == ("tiles.cuh", 1) and message.endswith("the AMD build calls it at main.cu:4")
        (tmp_path / "main.cu").write_text(hip + '#include "tiles.cuh"\n__global__ void tile(float4* c) { c[0].x = 1.f; }\n')
        assert found() == []
        (tmp_path / "main.cu").write_text(hip + "__global__ void tile(float4* c) { c[0].x = 1.f; }\n")
        [(path, _line, message)] = found()
        assert path == "tiles.cuh" and message.endswith("it sits in a header whose callers are out of view")
    finally:
        activate(None)


def test_a_kernel_launched_from_another_translation_unit_is_used(tmp_path, capsys):
    """kernels.hip defines the kernel, ops.hip launches it through a declaration in a header
    (hipLaunchKernelGGL((k<T, 16>), ...), as hipify writes it): the launch is found in the
    project's other files; commented out, or on the NVIDIA path only, it is not."""
    import json

    from rocmlint.project import activate

    kernel = ("#include <hip/hip_runtime.h>\ntemplate <typename T, int BITS>\n"
              "__global__ void gemm_device(int n, T* out) {\n#if __CUDA_ARCH__ >= 750\n  out[threadIdx.x] = T(BITS);\n"
              "#endif\n}\ntemplate __global__ void gemm_device<float, 16>(int, float*);\n")
    launch = ('#include <hip/hip_runtime.h>\n#include "kernels.h"\nvoid gemm_host(int n, float* out) {\n'
              "  {LAUNCH}\n}\n")
    (tmp_path / "rocmlint.toml").write_text("root = true\n")
    (tmp_path / "kernels.hip").write_text(kernel)
    (tmp_path / "kernels.h").write_text("template <typename T, int BITS> __global__ void gemm_device(int n, T* out);\n")

    def found(call: str) -> list[str]:
        (tmp_path / "ops.hip").write_text(launch.replace("{LAUNCH}", call))
        _code, out, _err = run_cli(["check", "--no-cache", "--select", "ROC304", "--output-format", "json", "."],
                                   tmp_path, capsys)
        return [f["message"].rsplit(", and ", 1)[-1] for f in json.loads(out)]

    try:
        assert found("hipLaunchKernelGGL((gemm_device<float, 16>), dim3(1), dim3(64), 0, 0, n, out);") == \
            ["the AMD build launches it at ops.hip:4"]
        assert found("// gemm_device<float, 16><<<1, 64>>>(n, out);") == []
        assert found("\n#ifndef __HIP_PLATFORM_AMD__\n  gemm_device<float, 16><<<1, 64>>>(n, out);\n#endif") == []
    finally:
        activate(None)


def test_a_specialisation_is_called_by_its_templates_name():
    code = ("template <typename T> __device__ void mma16(float* d, const T* a);\n"
            "template <>\n__device__ void mma16<float>(float* d, const float* a) {\n"
            "#if __CUDA_ARCH__ >= 800\n  d[0] = a[0];\n#endif\n}\n"
            "template <typename T> __global__ void k(float* d, const T* a) { mma16<T>(d, a); }\n")
    [(line, message)] = _roc304_messages(code)
    assert line == 3 and message.endswith("and the AMD build calls it at line 8")


def test_a_cached_result_that_searched_other_files_for_call_sites_stands_until_one_changes(tmp_path, capsys):
    """The call-site search read the project's other files: the result is stored with one
    fact for all of them (every C-family file's stat), so a warm run checks one digest, and
    an edit that adds the launch elsewhere re-checks the kernel's file."""
    import json
    import os

    from rocmlint.project import activate

    kernel = ("#include <hip/hip_runtime.h>\n__global__ void scale(float* out) {\n#if __CUDA_ARCH__ >= 800\n"
              "  out[threadIdx.x] *= 2.f;\n#endif\n}\n")
    (tmp_path / "rocmlint.toml").write_text("root = true\n")
    (tmp_path / "kernels.hip").write_text(kernel)
    (tmp_path / "ops.hip").write_text("#include <hip/hip_runtime.h>\nvoid nothing() {}\n")

    def found() -> list[str]:
        _code, out, _err = run_cli(["check", "--select", "ROC304", "--output-format", "json", "."], tmp_path, capsys)
        return [f["path"].removeprefix("./") for f in json.loads(out)]

    try:
        assert found() == []  # no launch anywhere: nothing the AMD build uses is empty
        entries = json.loads(next((tmp_path / ".rocmlint_cache").glob("results-*.json")).read_text())
        facts = entries[str(tmp_path / "kernels.hip")][6]
        assert [kind for kind, _key, _value in facts].count("c-family") == 1
        assert not any(kind == "file-content" for kind, _key, _value in facts)
        assert found() == []  # warm
        (tmp_path / "ops.hip").write_text("#include <hip/hip_runtime.h>\n__global__ void scale(float* out);\n"
                                          "void run(float* out) { scale<<<1, 64>>>(out); }\n")
        os.utime(tmp_path / "ops.hip", (1, 1))  # a new stat whatever the clock's resolution
        assert found() == ["kernels.hip"]
    finally:
        activate(None)


def test_a_block_that_runs_code_on_amd_is_judged_without_a_parse():
    """The text shows a call or a control statement beside the gate: the function does
    something on AMD, so no parse is needed to know it is not empty."""
    from rocmlint.config import Settings
    from rocmlint.cpp.context import CppContext
    from rocmlint.registry import all_rules

    busy = ("__device__ void store(float* d, float x) {\n  d[0] = scale(x);\n" + GATE
            + "  d[1] = x;\n#endif\n}\n__global__ void k(float* d) { store(d, 1.f); }\n")
    ctx = CppContext("k.cu", busy.encode(), Settings())
    all_rules()["ROC304"]().check(ctx)
    assert "tree" not in ctx.__dict__ and not ctx.findings
    # `sizeof` and a C cast are no calls: still a shell, still reported
    shell = ("__device__ float4 pick(float4 c) {\n  float4 d = c;\n  const int n = (int)sizeof(float4);\n" + GATE
             + "  d.x = 1.f;\n#endif\n  return d;\n}\n__global__ void k(float4* c) { c[0] = pick(c[0]); }\n")
    assert _roc304(shell) == [(1, "`pick` is empty on AMD")]


def test_a_head_that_declares_nothing_is_read_in_one_pass():
    """`auto k = kernel<...>;` after a kernel declared with `__launch_bounds__(256)` and many
    qualifiers: the declaration-head pattern has one reading per text, so a head that is not
    a declaration fails at once (a word split anywhere made this take minutes)."""
    from rocmlint.cpp.call_sites import _DECLARATION_HEAD, _declared_at

    qualifiers = " ".join(f"__attr_{i}__" for i in range(30))
    head = f"template <typename A, int B> {qualifiers} __launch_bounds__(256) void ".encode()
    assert _DECLARATION_HEAD.fullmatch(head) is None
    assert _DECLARATION_HEAD.fullmatch(b"template <typename T, int N> static inline Tile<Row<T, N>> const& ")
    code = b"__global__ void __launch_bounds__((256)) gemm(float* d);\nvoid run() {\n  auto k =\n    gemm;\n}\n"
    assert _declared_at(code, code.index(b"gemm")) and not _declared_at(code, code.rindex(b"gemm"))
