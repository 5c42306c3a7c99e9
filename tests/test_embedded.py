"""CUDA source in Python strings (rocmlint/python/embedded.py, literal_text.py): which
strings are kernels, exact Python positions, suppressions both ways, fixes written back
into their literals, and the NVIDIA-isolation proof per kernel."""
from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest

from fixture_harness import ROOT, fixture_files, python_comment_lines
from rocmlint.cli import main
from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer, selected_languages
from rocmlint.languages import get_language
from rocmlint.model import apply_edits
from rocmlint.python import PythonContext, parse
from rocmlint.python.embedded import find_kernels
from rocmlint.python.literal_text import (FIELD, Token, apply_layer, escape_for_token, parse_literal,
                                          read_literal, scan_tokens)
from rocmlint.runner import fix_buffer

SETTINGS = Settings()
RULES = active_rules(SETTINGS, "python")
PYTHON = get_language("python")
SHFL = "__shfl_sync(0xffffffff, v, 0)"


def findings(source: str, path: str = "k.py"):
    return analyse_buffer(path, source.encode(), "python", SETTINGS, RULES)


def at(source: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based (line, column) of the nth occurrence of ``needle`` in the Python text."""
    offset = -1
    for _ in range(nth + 1):
        offset = source.index(needle, offset + 1)
    line = source.count("\n", 0, offset) + 1
    return line, offset - (source.rfind("\n", 0, offset) + 1) + 1


def fixed(source: str, unsafe: bool = False) -> str:
    outcome = fix_buffer(source.encode(), "\n", "k.py", "python", SETTINGS, RULES, unsafe=unsafe)
    return outcome.buffer.decode()


def kernel_strings(source: str) -> list[str]:
    """Every str constant of a module, as ast reads it (an oracle independent of the mapper)."""
    return [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def unifdef(text: str) -> bytes:
    return subprocess.run(["unifdef", "-U__HIP_PLATFORM_AMD__"], input=text.encode(), capture_output=True).stdout


# Reading literals ---------------------------------------------------------------------------------
LITERALS = [
    r'"plain"', r"'it\'s'", r'"tab\tnew\nline\\"', r'r"raw\n\"kept"', '"""tri\nple "q" ok"""',
    r'"\x41\101\u00e9\N{GREEK SMALL LETTER ALPHA}"', '"é—ü"', '("a" "b"\n  # comment\n  r"\\c")',
    'f"{{x}} {y!r:>{w}} }}"', 'rf"\\d{{1}}{z}"', '"line\\\ncontinued"', "'''a\r\nb'''",
]


@pytest.mark.parametrize("literal", LITERALS)
def test_decoded_value_maps_each_character_to_its_source(literal):
    data = f"x = {literal}\n".encode()
    node = ast.parse(data.decode()).body[0].value
    lines = data.splitlines(keepends=True)
    start = sum(map(len, lines[: node.lineno - 1])) + node.col_offset
    end = sum(map(len, lines[: node.end_lineno - 1])) + node.end_col_offset
    read = read_literal(data, start, end, node)
    assert read is not None and read.exact
    expected = node.value if isinstance(node, ast.Constant) else \
        "".join(v.value if isinstance(v, ast.Constant) else FIELD for v in node.values)
    assert "".join(u.text for u in read.units) == expected
    for unit in read.units:
        written = data[unit.start:unit.end].decode()
        if unit.text == FIELD:
            assert written.startswith("{") and written.endswith("}")
        elif written.startswith("\\") or written.startswith("{{") or written.startswith("}}") or "\r" in written:
            continue  # an escape: several bytes for one character
        else:
            assert written == unit.text


def test_a_value_the_reader_cannot_explain_sits_at_the_literal_start():
    data = b'x = "abc"\n'
    fake = ast.Constant("something else")
    read = read_literal(data, 4, 9, fake)
    assert read is not None and not read.exact
    assert {(u.start, u.end) for u in read.units} == {(4, 4)}
    assert read_literal(b'x = b"abc"\n', 4, 10, ast.Constant(b"abc")) is None
    assert scan_tokens(b'b"abc"', 0, 6) is None


@pytest.mark.parametrize("prefix,quote", [("", '"'), ("", "'"), ("", '"""'), ("f", '"'), ("f", "'''"), ("r", '"""')])
@pytest.mark.parametrize("text", ['extern "C" int a;\n', "x = '\\\\'; // \\n\n", "{ a[0] = 1; }\n", 'q = "";',
                                  "\x01\x7f tab\tend\r", 'ends with quote "'])
def test_text_written_into_a_token_reads_back_or_is_refused(prefix, quote, text):
    token = Token(0, 0, 0, 0, prefix, quote)
    body = escape_for_token(text, token)
    source = f"{prefix}{quote}{body}{quote}".encode()
    node = parse_literal(source)
    read = read_literal(source, 0, len(source), node) if node is not None else None
    value = "".join(u.text for u in read.units) if read is not None and read.exact else None
    if prefix == "r":
        assert value in (text, None) or value != text  # raw literals cannot hold everything: read back, refused
        return
    assert value == text


def _layered(text: str, layer: str) -> str:
    data = repr(text).encode()
    node = ast.parse(data.decode(), mode="eval").body
    units = read_literal(data, 0, len(data), node).units
    return "".join(u.text for u in apply_layer(units, layer))


def test_template_layers_collapse_escapes_and_turn_fields_into_placeholders():
    assert _layered("f() {{ a[{i}] = {v:{w}}; }}", "format") == f"f() {{ a[{FIELD}] = {FIELD}; }}"
    assert _layered("%(n)d %% %s %-5.2f %", "percent") == f"{FIELD} % {FIELD} {FIELD} %"
    assert _layered("$T x = $$5 + ${n};", "template") == f"{FIELD} x = $5 + {FIELD};"


# Which strings are kernels ------------------------------------------------------------------------
def kernels(source: str):
    data = source.encode()
    return find_kernels(PythonContext("k.py", data, SETTINGS, parse(data)))


def test_constructors_are_found_through_import_aliases_keywords_and_lists():
    source = (
        "import cupy as cp\nfrom cupy import RawKernel, _core\nfrom torch.utils import cpp_extension\n"
        "from torch.utils.cpp_extension import load_inline as li\nfrom mylib import RawModule\n"
        "a = cp.RawKernel('A', 'a')\nb = RawKernel(code='B', name='b')\nc = _core.RawModule(code='C')\n"
        "d = cpp_extension.load_inline('d', cpp_sources='D1', cuda_sources=['D2', 'D3'])\n"
        "e = li('e', 'E1', 'E2')\nf = RawModule(code='not cupy')\ng = cp.RawKernel(*args)\n"
        "h = cp.ElementwiseKernel('T x', 'T y', 'y = x', 'h', preamble='H')\n"
        "from cupy.cuda import compile_with_cache\ni = compile_with_cache(source='I')\n"
        "from torch.cuda import jiterator\nj = jiterator._create_jit_fn('J')\n"
    )
    found = [(k.constructor, k.slot.keyword, k.text.data.decode().split("\n", 1)[1]) for k in kernels(source)]
    assert found == [
        ("cupy.RawKernel", "code", "A"), ("cupy.RawKernel", "code", "B"), ("cupy._core.RawModule", "code", "C"),
        ("torch.utils.cpp_extension.load_inline", "cpp_sources", "D1"),
        ("torch.utils.cpp_extension.load_inline", "cuda_sources", "D2"),
        ("torch.utils.cpp_extension.load_inline", "cuda_sources", "D3"),
        ("torch.utils.cpp_extension.load_inline", "cpp_sources", "E1"),
        ("torch.utils.cpp_extension.load_inline", "cuda_sources", "E2"),
        ("cupy.ElementwiseKernel", "operation",
         'extern "C" __global__ void __rocmlint_snippet() {\ny = x;\n}\n'),
        ("cupy.ElementwiseKernel", "preamble", "H"),
        ("cupy.cuda.compile_with_cache", "source", "I"),
        ("torch.cuda.jiterator._create_jit_fn", "code_string", "J"),
    ]


def test_names_bound_once_concatenations_and_templates_make_the_text():
    source = (
        "import cupy\nHEAD = '#define N 4\\n'\nBODY = HEAD + '''int f() {{ return {n}; }}\n'''\n"
        "k = cupy.RawKernel(BODY.format(n=3), 'f')\n"
        "TWICE = 'a'\nTWICE = 'b'\nt = cupy.RawKernel(TWICE, 't')\n"
        "j = cupy.RawKernel('\\n'.join(['int a;', 'int b;']), 'j')\n"
    )
    texts = [k.text.data.decode() for k in kernels(source)]
    assert texts[0] == "#include <cstdint>\n#define N 4\nint f() { return __rocmlint_field0__; }\n"
    assert texts[1] == "#include <cstdint>\nint a;\nint b;"
    assert len(texts) == 2  # TWICE is bound twice: its text is not known, nothing to lint


def test_strings_that_reach_no_kernel_constructor_stay_silent_however_cuda_like():
    source = (
        '"""Module docs: v = __shfl_sync(0xffffffff, v, 0) is the usual broadcast."""\n'
        "import logging\nimport cupy\n"
        f"SNIPPET = 'int f(int v) {{ return {SHFL}; }}'\n"
        f"logging.info('launching: {SHFL}')\n"
        "def helper():\n"
        f"    '''{SHFL}'''\n"
        "    return cupy.asarray([1])\n"
    )
    assert findings(source) == []


def test_only_the_text_rocm_compiles_is_checked():
    source = (
        "import cupy\nimport torch\nIS_ROCM = torch.version.hip is not None\n"
        f"AMD = 'int f(int v) {{ return __shfl(v, 0); }}'\nNV = 'int f(int v) {{ return {SHFL}; }}'\n"
        "k = cupy.RawKernel(AMD if IS_ROCM else NV, 'f')\n"
        "if not IS_ROCM:\n"
        f"    n = cupy.RawKernel('int g(int v) {{ return {SHFL}; }}', 'g')\n"
        "from pycuda.compiler import SourceModule\n"
        f"m = SourceModule('int h(int v) {{ return {SHFL}; }}')\n"
    )
    assert findings(source) == []


# Positions and messages ---------------------------------------------------------------------------
def test_findings_sit_at_exact_python_positions_through_escapes_and_concatenation():
    source = (
        "import cupy\n"
        "k = cupy.RawKernel(\"int f(float v) {\\n\\tv = __shfl_sync(0xffffffff, v, 0);\\n\"\n"
        "                   r'''\n"
        "__device__ float g(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
        "''', 'f')\n"
    )
    found = [(f.code, f.line, f.column, f.end_column) for f in findings(source)]
    line1, col1 = at(source, "0xffffffff")
    line2, col2 = at(source, "0xffffffff", 1)
    assert found == [("ROC203", line1, col1, col1 + 10), ("ROC203", line2, col2, col2 + 10)]


def test_a_reduction_from_16_in_a_string_reaches_the_cpp_rules():
    """The shape the wave-size rules judge (their verdicts are being reworked): the kernel
    is handed to the C++ rules whole; positions are checked through ROC203's."""
    source = (
        "import cupy\nSRC = r'''\n__device__ float warp_sum(float v) {\n"
        "    for (int offset = 16; offset > 0; offset /= 2)\n"
        "        v += __shfl_down_sync(0xffffffff, v, offset);\n    return v;\n}\n'''\n"
        "k = cupy.RawModule(code=SRC)\n"
    )
    [kernel] = kernels(source)
    assert b"for (int offset = 16; offset > 0; offset /= 2)" in kernel.text.data
    roc203 = [(f.line, f.column) for f in findings(source) if f.code == "ROC203"]
    assert roc203 == [at(source, "0xffffffff")]


def test_messages_name_python_lines_and_template_fields():
    source = (
        "import cupy\nT = '''\n__global__ void k(int* o) {{\n"
        "    unsigned m = __ballot_sync(0xffffffffffffffffull, o[{lane}] > 0);\n"
        "    o[0] = __popc(m);\n}}\n'''\nk = cupy.RawKernel(T.format(lane=1), 'k')\n"
    )
    by_code = {f.code: f for f in findings(source)}
    ballot_line = at(source, "__ballot_sync")[0]
    assert f"on line {ballot_line}" in by_code["ROC201"].message
    assert f"on line {ballot_line}" in by_code["ROC202"].message
    assert "__rocmlint_field" not in by_code["ROC201"].message + by_code["ROC202"].message


# Suppressions -------------------------------------------------------------------------------------
def test_noqa_on_the_python_line_and_nolint_inside_the_kernel_both_suppress():
    source = (
        "import cupy\n"
        f"a = cupy.RawKernel('int f(int v) {{ return {SHFL}; }}', 'f')  # noqa: ROC203\n"
        f"b = cupy.RawKernel('int g(int v) {{ return {SHFL}; }} // NOLINT(ROC203)', 'g')\n"
        f"c = cupy.RawKernel('// NOLINTNEXTLINE(ROC203)\\nint h(int v) {{ return {SHFL}; }}', 'h')\n\n"
        f"d = cupy.RawKernel('int i(int v) {{ return {SHFL}; }}', 'i')  # noqa: ROC201\n"
    )
    assert [(f.code, f.line) for f in findings(source)] == [("ROC203", 6)]


# Fixes --------------------------------------------------------------------------------------------
def test_a_fix_inside_a_string_gates_the_kernel_and_keeps_its_nvidia_view():
    source = (
        "import cupy\nSRC = '''\n__global__ void k(float* x) {\n"
        "    float v = x[threadIdx.x];\n    v = __shfl_sync(0xffffffff, v, 0);\n    x[threadIdx.x] = v;\n}\n'''\n"
        "k = cupy.RawKernel(SRC, 'k')\n"
    )
    out = fixed(source)
    assert "#if defined(__HIP_PLATFORM_AMD__)\n    v = __shfl(v, 0);\n#else\n" in out
    before, after = kernel_strings(source), kernel_strings(out)
    assert len(before) == len(after)
    assert [unifdef(s) for s in before] == [unifdef(s) for s in after]
    assert PYTHON.nvidia_view(out.encode(), "k.py", SETTINGS) == PYTHON.nvidia_view(source.encode(), "k.py", SETTINGS)
    assert findings(out) == []


def test_one_token_per_line_stays_so_and_escapes_are_written_in_the_literals_style():
    source = (
        "import cupy\nk = cupy.RawKernel(\n"
        "    \"__global__ void k(float* x) {\\n\"\n"
        "    \"    printf(\\\"%d\\\\n\\\", 1);\\n\"\n"
        f"    \"    x[0] = {SHFL.replace('v', 'x[0]')};\\n\"\n"
        "    \"}\\n\",\n    'k')\n"
    )
    out = fixed(source)
    assert '    "#if defined(__HIP_PLATFORM_AMD__)\\n"\n    "    x[0] = __shfl(x[0], 0);\\n"\n    "#else\\n"\n' in out
    assert kernel_strings(out)[0].count("printf(\"%d\\n\", 1);") == 1  # the neighbour line as it was
    assert [unifdef(s) for s in kernel_strings(source)] == [unifdef(s) for s in kernel_strings(out)]


def test_f_string_fields_are_copied_into_both_branches_and_the_proof_holds():
    source = (
        "import cupy\ndef make(w):\n    src = f'''\n__global__ void k(unsigned* o) {{\n"
        "    unsigned b = __ballot_sync(0xffffffffffffffffull, threadIdx.x < {w});\n    o[0] = b;\n}}\n'''\n"
        "    return cupy.RawKernel(src, 'k')\n"
    )
    out = fixed(source)
    assert out.count("threadIdx.x < {w}") == 2 and "uint64_t b" in out
    assert PYTHON.nvidia_view(out.encode(), "k.py", SETTINGS) == PYTHON.nvidia_view(source.encode(), "k.py", SETTINGS)


def test_the_proof_catches_a_kernel_edit_outside_a_gate():
    source = f"import cupy\nk = cupy.RawKernel('int f(int v) {{ return {SHFL}; }}', 'f')\n"
    tampered = source.replace("0xffffffff", "0xffffffffffffffffull")
    view = PYTHON.nvidia_view(source.encode(), "k.py", SETTINGS)
    assert PYTHON.nvidia_view(tampered.encode(), "k.py", SETTINGS) != view
    broken = source.replace("return", "return (")
    assert PYTHON.new_syntax_errors(source.encode(), broken.encode(), "k.py", SETTINGS) > 0


def test_no_fix_where_the_text_cannot_be_written_back():
    source = (
        "import cupy\nfrom elsewhere import PRELUDE\n"
        f"r = cupy.ReductionKernel('T x', 'T y', '{SHFL.replace('v', 'x')}', 'a + b', 'y = a', '0', 'r')\n"
        f"p = cupy.RawKernel(PRELUDE + 'int f(int v) {{ return {SHFL}; }}', 'f')\n"
    )
    result = findings(source)
    assert [(f.code, f.line) for f in result] == [("ROC203", 3), ("ROC203", 4)]
    assert all(f.fix is None for f in result)  # a macro-pasted expression; a line start known only at run time


def test_a_crlf_module_keeps_its_line_endings_after_a_fix(tmp_path, capsys):
    path = tmp_path / "k.py"
    path.write_bytes(b"import cupy\r\nk = cupy.RawKernel(r'''\r\n__global__ void k(int* o) {\r\n"
                     b"    o[0] = __shfl_sync(0xffffffff, o[0], 0);\r\n}\r\n''', 'k')\r\n")
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert main(["check", "--no-cache", "--fix", "k.py"]) == 0
    finally:
        os.chdir(old)
    data = path.read_bytes()
    assert b"#if defined(__HIP_PLATFORM_AMD__)\r\n    o[0] = __shfl(o[0], 0);\r\n#else\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")


@pytest.mark.parametrize("path", [p for p in fixture_files() if p.parent.name == "embedded"], ids=lambda p: p.name)
def test_fixture_kernels_keep_their_nvidia_view_by_the_real_unifdef(path):
    """An oracle independent of the mapper: every string ast reads in the fixed fixture,
    folded by unifdef, equals the original's."""
    for kind in (".fixed", ".unsafe-fixed"):
        expected = path.with_name(f"{path.stem}{kind}{path.suffix}")
        if not expected.exists():
            continue
        before, after = kernel_strings(path.read_text()), kernel_strings(expected.read_text())
        assert len(before) == len(after)
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        assert changed, f"{expected.name} changes no string"
        for a, b in changed:
            assert "#if defined(__HIP_PLATFORM_AMD__)" in b
            assert unifdef(a) == unifdef(b)


def test_fixture_annotations_inside_strings_belong_to_their_own_line():
    text = "x = '''\n#include <a.h>  // ruleid: ROC303\n'''\n# ruleid: ROC101\ny = 1\n"
    assert python_comment_lines(text) == {4}


# The engine's trigger and the command line --------------------------------------------------------
def test_files_without_a_trigger_word_never_reach_the_kernel_finder(monkeypatch):
    import rocmlint.python.embedded as embedded

    calls = []
    monkeypatch.setattr(embedded, "lint_kernels", lambda *a, **k: calls.append(a) or [])
    analyse_buffer("k.py", f"x = '{SHFL}'\n".encode(), "python", SETTINGS, RULES)
    assert calls == []
    analyse_buffer("k.py", b"import cupy\nk = cupy.RawKernel('int a;', 'a')\n", "python", SETTINGS, RULES)
    assert len(calls) == 1


def test_selecting_cpp_rules_also_reads_python_files(tmp_path, capsys):
    assert "python" in selected_languages(("ROC203",), ())
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    (tmp_path / "k.py").write_text(f"import cupy\nk = cupy.RawKernel('int f(int v) {{ return {SHFL}; }}', 'f')\n")
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        code = main(["check", "--no-cache", "--select", "ROC203", "--output-format", "json", "."])
        out = capsys.readouterr().out
        where = at((tmp_path / "k.py").read_text(), "0xffffffff")
        assert code == 1 and [(d["path"], d["line"], d["column"]) for d in json.loads(out)] == [("k.py", *where)]
        assert json.loads(out)[0]["evidence"][0].startswith("kernel source compiled at run time by cupy.RawKernel")
        main(["check", "--no-cache", "--output-format", "sarif", "k.py"])
        result = json.loads(capsys.readouterr().out)["runs"][0]["results"][0]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == where
        main(["check", "--no-cache", "--diff", "k.py"])
        diff = capsys.readouterr().out
        assert diff.startswith("--- a/k.py") and "+k = cupy.RawKernel('#if defined(__HIP_PLATFORM_AMD__)\\n" in diff
        main(["explain", "k.py:2"])
        explained = capsys.readouterr().out
        assert "compiled at run time by cupy.RawKernel (code, k.py:2)" in explained
        assert "ROC203 warp-mask-literal-32bit: REPORTED" in explained
    finally:
        os.chdir(old)


def test_explain_and_check_agree_on_headers_hipify_renames_in_load_inline(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    (tmp_path / "ext.py").write_text(
        "from torch.utils.cpp_extension import load_inline\n"
        "SRC = \"\"\"\n#include <cuda_runtime.h>\n#include <cuda/barrier>\n__global__ void k() {}\n\"\"\"\n"
        "ext = load_inline('ext', cpp_sources='', cuda_sources=SRC)\n")
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        main(["check", "--no-cache", "--select", "ROC303", "--output-format", "json", "ext.py"])
        assert [d["line"] for d in json.loads(capsys.readouterr().out)] == [4]  # hipify has no <cuda/barrier>
        main(["explain", "ext.py:3"])
        assert "ROC303 cuda-only-header: dropped: hipify renames this header" in capsys.readouterr().out
        main(["explain", "ext.py:4"])
        assert "ROC303 cuda-only-header: REPORTED" in capsys.readouterr().out
    finally:
        os.chdir(old)


def test_a_fix_applied_twice_is_a_no_op():
    source = (ROOT / "fixtures/python/embedded/sparse_rowsum.py").read_text()
    once = fixed(source)
    assert fixed(once) == once
    assert apply_edits(once.encode(), []) == once.encode()


def _filler(count: int) -> str:
    return "".join(f"def helper_{i}(x):\n    total = x\n    for k in range(10):\n        total += k * {i}\n"
                   f"    return total\n\n\n" for i in range(count))


def test_a_big_module_is_read_around_its_kernel_calls(monkeypatch):
    """A module past the skeleton's size keeps what the kernel call needs: the module-level
    source string, the alias an import binds (`build` calls a renamed `load_inline`) and the
    function that calls it; the hundreds of other functions are not parsed."""
    import rocmlint.python as python_front_end

    source = ("from torch.utils.cpp_extension import load_inline as build\n"
              f"KERNEL = '''__global__ void k(float* v) {{ v[0] = {SHFL}; }}'''\n\n\n"
              + _filler(150) +
              "def compile_kernels():\n    return build(name='k', cpp_sources='', cuda_sources=KERNEL)\n")
    assert len(source) > 12_000
    parsed: list[int] = []
    original = python_front_end.parse
    monkeypatch.setattr(python_front_end, "parse", lambda data: parsed.append(len(data)) or original(data))
    found = [(f.code, f.line) for f in findings(source) if f.code.startswith("ROC2")]
    assert found == [("ROC203", 2)]
    assert parsed and max(parsed) < len(source) // 4  # the helpers were blanked before the parse
    from rocmlint.python.embedded import constructor_anchors
    from rocmlint.python.skeleton import skeleton

    kept = skeleton(source.encode(), constructor_anchors(source.encode()))
    assert kept is not None and b"helper_7" not in kept and b"def compile_kernels" in kept


def test_a_trigger_inside_another_word_calls_no_kernel_and_parses_nothing(monkeypatch):
    import rocmlint.python as python_front_end

    monkeypatch.setattr(python_front_end, "parse", lambda data: pytest.fail("parsed"))
    assert findings("def my_load_inline_wrapper():\n    return 1\n") == []
