"""The Python half's gate analysis: which platform reaches what, and the NVIDIA view."""
from __future__ import annotations

import ast
import textwrap

import pytest

from rocmlint.config import Settings
from rocmlint.python.gates import GateEvaluator
from rocmlint.python import LANGUAGE

SETTINGS = Settings()


def context(code: str, settings: Settings = SETTINGS):
    return LANGUAGE.make_context("example.py", textwrap.dedent(code).encode(), settings)


def offset_of(ctx, needle: str) -> int:
    index = ctx.source.find(needle.encode())
    assert index >= 0, needle
    return index


def view(code: str) -> bytes:
    return LANGUAGE.nvidia_view(textwrap.dedent(code).encode(), "example.py", SETTINGS)


# Gate expressions --------------------------------------------------------------------
@pytest.mark.parametrize("condition, on_rocm, on_nvidia", [
    ("IS_ROCM", True, False),
    ("is_hip()", True, False),
    ("current_platform.is_rocm()", True, False),
    ("utils.IS_ROCM", True, False),
    ("torch.version.hip", True, False),
    ("torch.version.hip is not None", True, False),
    ("torch.version.hip is None", False, True),
    ("bool(torch.version.hip)", True, False),
    ("not bool(torch.version.hip)", False, True),
    ("bool(fast)", None, None),
    ("None is not torch.version.hip", True, False),
    ("not IS_ROCM", False, True),
    ('hasattr(torch.version, "hip") and torch.version.hip is not None', True, False),
    ("IS_ROCM and fast", None, False),
    ("IS_ROCM or fast", True, None),
    ("not IS_ROCM and fast", False, None),
    ("torch.version.cuda", False, None),  # None on ROCm; CPU-only builds lack it too
    ("fast", None, None),
    ("torch.cuda.is_available()", True, True),  # reachability: hazards matter where a GPU runs the code
])
def test_gate_values(condition, on_rocm, on_nvidia):
    ctx = context(f"import torch\nx = {condition}\n")
    expr = ctx.tree.body[1].value
    assert ctx.gates.value(expr, True) is on_rocm
    assert ctx.gates.value(expr, False) is on_nvidia


def test_views_never_assume_a_gpu():
    """The NVIDIA view folds platform tests only: `torch.cuda.is_available()` stays unknown."""
    ctx = context("import torch\nx = torch.cuda.is_available()\n")
    plain = GateEvaluator(ctx.gates.gate_names, ctx.qualname)
    assert plain.value(ctx.tree.body[1].value, True) is None


def test_aliased_torch_and_configured_gate_names():
    ctx = context("import torch as T\nx = T.version.hip is not None\ny = ON_MI300\n",
                  Settings(rocm_gate_names=("ON_MI300",)))
    assert ctx.gates.is_gate_expression(ctx.tree.body[1].value)
    assert ctx.gates.is_gate_expression(ctx.tree.body[2].value)


def test_module_level_gate_variable_becomes_a_gate():
    ctx = context("""
        import torch
        _on_amd = torch.version.hip is not None
        if not _on_amd:
            x = 1
    """)
    assert ctx.nvidia_only(offset_of(ctx, "x = 1"))


def test_a_gate_variable_bound_to_bool_of_the_hip_version_gates_a_function_below_it():
    ctx = context("""
        import torch
        HIP_BUILD = bool(torch.version.hip)
        def cuda_version():
            if HIP_BUILD:
                return None
            else:
                return torch.version.cuda.split(".")
    """)
    assert ctx.nvidia_only(offset_of(ctx, "return torch.version.cuda"))
    assert not ctx.nvidia_only(offset_of(ctx, "return None"))


# Reachability ---------------------------------------------------------------------------
REACH = """
import torch
from utils import IS_ROCM

a = 0
if IS_ROCM:
    b = 0
else:
    c = 0
if not IS_ROCM:
    d = 0
e = 1 if IS_ROCM else 2
f = IS_ROCM and g0
h = IS_ROCM or h0
if torch.version.hip is None:
    i = 0
elif fast:
    j = 0


def early():
    if IS_ROCM:
        return None
    k = 0


def early_else():
    if not torch.version.hip:
        pass
    else:
        raise RuntimeError
    m = 0


def loop():
    for x in items:
        if IS_ROCM:
            continue
        n = 0
    o = 0
"""


@pytest.mark.parametrize("needle, nvidia_only, rocm_only", [
    ("a = 0", False, False),
    ("b = 0", False, True),
    ("c = 0", True, False),
    ("d = 0", True, False),
    ("1 if", False, True),
    ("2\n", True, False),
    ("g0", False, True),
    ("h0", True, False),
    ("i = 0", True, False),
    ("j = 0", False, True),
    ("k = 0", True, False),
    ("m = 0", True, False),
    ("n = 0", True, False),
    ("o = 0", False, False),
])
def test_reachability(needle, nvidia_only, rocm_only):
    ctx = context(REACH)
    at = offset_of(ctx, needle)
    assert ctx.nvidia_only(at) is nvidia_only
    assert ctx.rocm_only(at) is rocm_only


def test_engine_drops_findings_in_nvidia_only_code():
    from rocmlint.engine import active_rules, analyse_buffer

    code = textwrap.dedent("""
        import torch
        if torch.version.hip:
            pass
        else:
            m = torch.compile(m, mode="reduce-overhead")
        n = torch.compile(n, mode="reduce-overhead")
    """).encode()
    settings = Settings(select=("ROC101",))
    findings = analyse_buffer("x.py", code, "python", settings, active_rules(settings, "python"))
    assert [(f.code, f.line) for f in findings] == [("ROC101", 7)]


# Positions -------------------------------------------------------------------------------
def test_node_path_descends_by_position_including_decorators():
    ctx = context("""
        import torch


        @torch.compile(mode="max-autotune")
        def f(x):
            return x
    """)
    path = ctx.node_path(offset_of(ctx, "max-autotune"))
    kinds = [type(n).__name__ for n in path]
    assert kinds == ["Module", "FunctionDef", "Call", "keyword", "Constant"]
    assert ctx.text(ctx.span_of(path[-1])) == '"max-autotune"'


def test_spans_are_utf8_byte_offsets():
    ctx = context('s = "héllo wörld"; t = "reduce-overhead"\n')
    node = ctx.node_at(offset_of(ctx, "reduce-overhead"))
    assert isinstance(node, ast.Constant) and node.value == "reduce-overhead"
    assert ctx.text(ctx.span_of(node)) == '"reduce-overhead"'


def test_comments_are_not_nodes():
    ctx = context("x = 1  # torch.compile(m, mode='reduce-overhead')\n")
    assert ctx.string_at(_span(ctx, "reduce-overhead")) is None
    docstring = context('"""Use mode="reduce-overhead" on NVIDIA."""\n')
    assert docstring.string_at(_span(docstring, "reduce-overhead")).value.startswith("Use")


def _span(ctx, needle):
    from rocmlint.model import Span

    start = offset_of(ctx, needle)
    return Span(start, start + len(needle))


@pytest.mark.parametrize("source, expected", [
    ("import torch as T\nT.compile", "torch.compile"),
    ("from torch import compile as tc\ntc", "torch.compile"),
    ("import torch._inductor.config as inductor_config\ninductor_config.triton.cudagraphs",
     "torch._inductor.config.triton.cudagraphs"),
    ("from torch._inductor import config\nconfig.max_autotune", "torch._inductor.config.max_autotune"),
    ("import torch.nn\ntorch.compile", "torch.compile"),
    ("def f():\n    from torch import compile as c2\n    return c2", "torch.compile"),
])
def test_import_alias_resolution(source, expected):
    ctx = context(source + "\n")
    last = ctx.tree.body[-1]
    expr = last.value if isinstance(last, ast.Expr) else last.body[-1].value
    assert ctx.qualname(expr) == expected


def test_module_constant_resolution():
    ctx = context('MODE = "reduce-overhead"\nOPTS: dict = {"mode": MODE}\n')
    assert ctx.module_assignment("MODE").value == "reduce-overhead"
    assert isinstance(ctx.module_assignment("OPTS"), ast.Dict)
    assert ctx.module_assignment("missing") is None


def test_syntax_errors_and_parse_failure_span():
    from rocmlint.languages import ParseFailure

    assert LANGUAGE.syntax_errors(b"x = 1\n", "x.py") == 0
    assert LANGUAGE.syntax_errors(b"def f(:\n", "x.py") == 1
    with pytest.raises(ParseFailure) as info:
        LANGUAGE.make_context("x.py", b"x = 1\ny = (\n", SETTINGS)
    assert info.value.span is not None


def test_syntax_error_is_reported_as_roc001():
    from rocmlint.engine import active_rules, analyse_buffer

    settings = Settings()
    findings = analyse_buffer("x.py", b'mode = "reduce-overhead"\ndef f(:\n', "python", settings,
                              active_rules(settings, "python"))
    assert [f.code for f in findings] == ["ROC001"]


@pytest.mark.parametrize("statement, version", [
    ("type Vector = list[float]", (3, 12)),
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]", (3, 12)),
    ("class Box[T]:\n    pass", (3, 12)),
    ("try:\n    pass\nexcept ValueError, TypeError:\n    pass", (3, 14)),
])
def test_newer_python_syntax_names_the_version_it_needs(statement, version):
    import sys

    from rocmlint.languages import ParseFailure

    if sys.version_info >= version:
        pytest.skip("this interpreter reads it")
    with pytest.raises(ParseFailure) as info:
        LANGUAGE.make_context("x.py", f"import torch\n{statement}\n".encode(), SETTINGS)
    assert f"syntax of Python {version[0]}.{version[1]}" in str(info.value)
    with pytest.raises(ParseFailure) as plain:
        LANGUAGE.make_context("x.py", b"import torch\ndef f(:\n    pass\n", SETTINGS)
    assert "syntax of Python" not in str(plain.value)


# The NVIDIA view -----------------------------------------------------------------------------
ORIGINAL = """
import os
import torch
import pynvml

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:512"
torch.backends.cuda.matmul.allow_tf32 = True
m = torch.compile(m, mode="reduce-overhead")
"""

CORRECTLY_FIXED = """
import os
import torch
try:
    import pynvml
except ImportError:
    pynvml = None
IS_ROCM = hasattr(torch.version, "hip") and torch.version.hip is not None

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "" if IS_ROCM else "max_split_size_mb:512"
if not IS_ROCM:
    torch.backends.cuda.matmul.allow_tf32 = True
m = torch.compile(m, mode="default" if IS_ROCM else "reduce-overhead")
"""


def test_nvidia_view_accepts_gated_fixes():
    assert view(CORRECTLY_FIXED) == view(ORIGINAL)


@pytest.mark.parametrize("broken", [
    # the NVIDIA side of the conditional changed
    CORRECTLY_FIXED.replace('else "reduce-overhead"', 'else "default"'),
    # the ROCm gate is inverted: NVIDIA now loses the TF32 flag
    CORRECTLY_FIXED.replace("if not IS_ROCM:", "if IS_ROCM:"),
    # ungated rewrite
    ORIGINAL.replace('"reduce-overhead"', '"default"'),
    # the import was guarded and its fallback does more than bind None
    CORRECTLY_FIXED.replace("pynvml = None", "pynvml = load_stub()"),
    # a statement that is not the gate definition survives folding
    CORRECTLY_FIXED.replace("IS_ROCM = hasattr", "torch.set_num_threads(4)\nIS_ROCM = hasattr"),
    # a gate assignment that is not a bare name binding is code, not the gate
    CORRECTLY_FIXED.replace("IS_ROCM = hasattr", "cfg.IS_ROCM = hasattr"),
])
def test_nvidia_view_rejects_changes_to_the_nvidia_path(broken):
    assert view(broken) != view(ORIGINAL)


def test_nvidia_view_with_preexisting_gates_on_both_sides():
    before = """
        import torch
        IS_ROCM = torch.version.hip is not None
        if IS_ROCM:
            mode = "default"
        else:
            mode = "max-autotune"
        t = torch.compile(t, mode="reduce-overhead")
    """
    after = before.replace('mode="reduce-overhead"', 'mode="default" if IS_ROCM else "reduce-overhead"')
    assert view(after) == view(before)
    assert b"max-autotune" in view(before) and b"'default'" not in view(before)


def test_nvidia_view_folds_early_exit_and_extension_gate_import():
    before = "from torch.utils.cpp_extension import CUDAExtension\nflags = ['-O3', '--use_fast_math']\n"
    after = ("from torch.utils.cpp_extension import CUDAExtension\n"
             "from torch.utils.cpp_extension import IS_HIP_EXTENSION\n"
             "flags = ['-O3'] if IS_HIP_EXTENSION else ['-O3', '--use_fast_math']\n")
    assert view(after) == view(before)


def test_engine_fix_proof_uses_nvidia_view():
    """End to end: the applier accepts the rules' fixes, and its proof trips on a bad edit."""
    from rocmlint.engine import active_rules, analyse_buffer
    from rocmlint.fixers.apply import FixRejected, fix_to_fixpoint
    from rocmlint.model import Edit, Fix, Span

    settings = Settings(select=("ROC1",))
    rules = active_rules(settings, "python")
    source = textwrap.dedent(ORIGINAL).encode()

    def analyse(buffer):
        return analyse_buffer("x.py", buffer, "python", settings, rules)

    outcome = fix_to_fixpoint(source, analyse, unsafe=False, newline="\n",
                              syntax_errors=lambda b: LANGUAGE.syntax_errors(b, "x.py"),
                              nvidia_view=lambda b: LANGUAGE.nvidia_view(b, "x.py", settings))
    assert b'mode="default" if IS_ROCM else "reduce-overhead"' in outcome.buffer
    assert not [f for f in analyse(outcome.buffer) if f.fixable]

    def wrong(buffer):
        findings = analyse(buffer)
        if buffer != source:
            return []
        start = buffer.index(b'"reduce-overhead"')
        for finding in findings:
            finding.fix = Fix((Edit(Span(start, start + 17), '"default"'),), "ungated")
        return findings

    with pytest.raises(FixRejected):
        fix_to_fixpoint(source, wrong, unsafe=False, newline="\n",
                        syntax_errors=lambda b: LANGUAGE.syntax_errors(b, "x.py"),
                        nvidia_view=lambda b: LANGUAGE.nvidia_view(b, "x.py", settings))
