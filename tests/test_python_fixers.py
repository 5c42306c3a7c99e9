"""Gated-fix builders (rocmlint.fixers.python_gate) and whole-file fixes of the Python rules."""
from __future__ import annotations

import ast
import textwrap

import pytest

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.fixers import python_gate
from rocmlint.model import Applicability, apply_edits
from rocmlint.python import LANGUAGE
from rocmlint.runner import fix_buffer

SETTINGS = Settings(select=("ROC1", "ROC108"))  # ROC108 is opt-in
RULES = active_rules(SETTINGS, "python")


def lint(code: str):
    return analyse_buffer("x.py", textwrap.dedent(code).encode(), "python", SETTINGS, RULES)


def fixed(code: str, unsafe: bool = False) -> str:
    buffer = textwrap.dedent(code).encode()
    outcome = fix_buffer(buffer, "\n", "x.py", "python", SETTINGS, RULES, unsafe=unsafe)
    assert LANGUAGE.nvidia_view(outcome.buffer, "x.py", SETTINGS) == LANGUAGE.nvidia_view(buffer, "x.py", SETTINGS)
    return outcome.buffer.decode()


def context_with_hits(code: str):
    """A context whose anchors are every rule's matches, as the engine sets them."""
    from rocmlint.model import Span

    source = textwrap.dedent(code).encode()
    ctx = LANGUAGE.make_context("x.py", source, SETTINGS)
    ctx._hits = {r.code: [Span(m.start(), m.end()) for m in r.compiled_pattern().finditer(source)] for r in RULES}
    return ctx


# The gate plan ------------------------------------------------------------------------------
def test_gate_inserted_after_the_last_import_before_first_use():
    ctx = context_with_hits("""
        import os
        import torch
        from torch import nn

        m = torch.compile(m, mode="reduce-overhead")
        import late_module
    """)
    plan = python_gate.gate_plan(ctx)
    assert plan.expression == "IS_ROCM" and plan.applicability is Applicability.SAFE
    (edit,) = plan.edits
    assert edit.content == '\nIS_ROCM = hasattr(torch.version, "hip") and torch.version.hip is not None\n'
    assert ctx.source[: edit.span.start].endswith(b"from torch import nn\n")


def test_env_set_before_import_torch_uses_the_device_gate_unsafely():
    out = fixed("""
        import os
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128,expandable_segments:True"
        import torch
    """, unsafe=True)
    assert out.splitlines()[1:4] == [
        "import os", "", 'IS_ROCM = os.path.exists("/dev/kfd")']
    assert '    "expandable_segments:True"\n    if IS_ROCM\n    else "max_split_size_mb:128' in out
    # and without --unsafe-fixes nothing changes
    findings = lint('import os\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"\n')
    assert [f.fix.applicability for f in findings] == [Applicability.UNSAFE]


@pytest.mark.parametrize("header, expression", [
    ("import torch\nfrom utils import IS_ROCM\n", "IS_ROCM"),
    ("import torch\nfrom vllm.utils import is_hip\n", "is_hip()"),
    ("import torch\n_IS_ROCM = torch.version.hip is not None\n", "_IS_ROCM"),
    ("import torch\n\ndef is_rocm():\n    return bool(torch.version.hip)\n", "is_rocm()"),
])
def test_existing_gates_are_reused(header, expression):
    ctx = context_with_hits(header + 'm = torch.compile(m, mode="reduce-overhead")\n')
    plan = python_gate.gate_plan(ctx)
    assert plan.expression == expression and plan.edits == ()


def test_configured_gate_name_is_reused():
    settings = Settings(select=("ROC1", "ROC108"), rocm_gate_names=("ON_AMD",))
    code = b'import torch\nfrom platform_utils import ON_AMD\nm = torch.compile(m, mode="reduce-overhead")\n'
    rules = active_rules(settings, "python")
    (finding,) = analyse_buffer("x.py", code, "python", settings, rules)
    assert [e.content for e in finding.fix.edits] == ['"default" if ON_AMD else "reduce-overhead"']


def test_no_sound_gate_means_no_fix():
    (finding,) = lint('subprocess.run(cmd, env={"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64"})\n')
    assert finding.code == "ROC102" and finding.fix is None


def test_two_fixes_insert_identical_gate_definitions():
    findings = lint("""
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
        m = torch.compile(m, mode="reduce-overhead")
    """)
    assert len(findings) == 2
    insertions = [{e for e in f.fix.edits if e.span.start == e.span.end} for f in findings]
    assert insertions[0] == insertions[1] and len(insertions[0]) == 1


def test_gate_insertion_at_end_of_file_without_newline():
    out = fixed("import torch\ntorch.backends.cudnn.allow_tf32 = True")
    assert out == ('import torch\n\nIS_ROCM = hasattr(torch.version, "hip") and torch.version.hip is not None\n'
                   "if not IS_ROCM:\n    torch.backends.cudnn.allow_tf32 = True")


# Statement shapes -----------------------------------------------------------------------------
def test_wrap_keeps_multiline_strings_and_moves_continuations():
    from rocmlint.fixers import python_cst

    ctx = context_with_hits('''
        import torch


        def setup():
            torch.backends.cuda.matmul.allow_tf32 = bool(
                """yes
        really""")  # keep
    ''')
    stmt = ctx.tree.body[1].body[0]
    edit = python_cst.wrap_statements(ctx, [stmt], "not G")
    assert edit.content == ('    if not G:\n'
                            '        torch.backends.cuda.matmul.allow_tf32 = bool(\n'
                            '            """yes\n'
                            'really""")  # keep')
    rewritten = apply_edits(ctx.source, [edit])
    ast.parse(rewritten)
    assert '"""yes\nreally"""' in rewritten.decode()


def test_user_text_that_looks_like_a_placeholder_survives():
    out = fixed('import torch\ngate = 1\nm = torch.compile(m, mode=f"reduce-overhead")  # {gate}\n'
                'x = torch.compile(x, mode="reduce-overhead" if f"{gate}" else "default")\n')
    assert 'if f"{gate}" else "default"' in out and "# {gate}" in out


def test_wrap_refuses_statements_sharing_a_line():
    ctx = context_with_hits("import torch\nx = 1; torch.backends.cudnn.allow_tf32 = True\n")
    assert python_gate.wrap_statement_edit(ctx, ctx.tree.body[2]) is None


def test_wrap_with_tabs():
    out = fixed("import torch\nif ready:\n\ttorch.backends.cudnn.allow_tf32 = True\n")
    assert "if ready:\n\tif not IS_ROCM:\n\t\ttorch.backends.cudnn.allow_tf32 = True\n" in out


def test_import_guard_of_multiline_from_import():
    out = fixed("""
        from pynvml import (
            nvmlInit,
            nvmlShutdown as shutdown,
        )
    """)
    assert out == textwrap.dedent("""
        try:
            from pynvml import (
                nvmlInit,
                nvmlShutdown as shutdown,
            )
        except ImportError:
            nvmlInit = None
            shutdown = None
    """)


@pytest.mark.parametrize("code", [
    "import os, pynvml\n",          # guarding would hide a missing os
    "from pynvml import *\n",        # nothing to bind to None
])
def test_import_guard_not_offered(code):
    (finding,) = lint(code)
    assert finding.code == "ROC103" and finding.fix is None


# Rules end to end ------------------------------------------------------------------------------
def test_roc101_every_form_is_fixed_once_and_relints_clean():
    code = """
        import functools
        import torch as T
        from torch import compile as tc

        MODE = "reduce-overhead"
        OPTS = dict(mode="max-autotune")
        a = tc(f, mode=MODE)
        b = T.compile(g, **OPTS)
        c = functools.partial(T.compile, **{"mode": "reduce-overhead"})
    """
    assert [f.line for f in lint(code)] == [6, 7, 10]
    out = fixed(code)
    assert 'MODE = "default" if IS_ROCM else "reduce-overhead"' in out
    assert 'OPTS = dict(mode="max-autotune-no-cudagraphs" if IS_ROCM else "max-autotune")' in out
    assert out.count("IS_ROCM = hasattr") == 1
    assert lint(out) == []


def test_roc101_constant_used_only_under_an_nvidia_gate_is_quiet():
    assert lint("""
        import torch
        MODE = "reduce-overhead"
        if not torch.version.hip:
            m = torch.compile(m, mode=MODE)
    """) == []


def test_roc102_every_setter():
    code = """
        import os
        import subprocess
        import torch

        os.environ["PYTORCH_HIP_ALLOC_CONF"] = "max_split_size_mb:1"
        os.environ.update({"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:2"})
        os.environ.update(PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:3")
        os.putenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:4")
        conf = "max_split_size_mb:5," + "roundup_power2_divisions:4"
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
        subprocess.Popen(cmd, env=dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=f"max_split_size_mb:{n}"))
        os.environ["OTHER"] = "max_split_size_mb:6"
    """
    findings = lint(code)
    assert [f.line for f in findings] == [6, 7, 8, 9, 10, 12]
    assert [f.fix is not None for f in findings] == [True, True, True, True, False, True]
    out = fixed(code)
    assert 'os.putenv("PYTORCH_CUDA_ALLOC_CONF", "" if IS_ROCM else "max_split_size_mb:4")' in out
    assert [f.line for f in lint(out)] == [12]  # the concatenation stays reported, unfixed (one line lower)


def test_rules_ignore_code_only_rocm_runs():
    assert lint("""
        import torch
        if torch.version.hip:
            import pynvml
            torch.backends.cuda.matmul.allow_tf32 = True
            m = torch.compile(m, mode="max-autotune")
    """) == []


def test_rules_ignore_code_only_rocm_runs_all_rules():
    assert lint("""
        import torch
        if torch.version.hip:
            torch._inductor.config.triton.cudagraphs = True
            dt = torch.float8_e4m3fn
            ok = torch.cuda.get_device_capability() >= (9, 4)
    """) == []


def test_an_import_guard_libcst_cannot_build_is_not_applied_as_plain_text(monkeypatch):
    from rocmlint.fixers import python_cst

    settings = Settings(select=("ROC103",))
    source = b"import os\nimport pynvml\n"
    assert analyse_buffer("m.py", source, "python", settings, active_rules(settings, "python"))[0].fix is not None
    monkeypatch.setattr(python_cst, "guard_import", lambda *args: None)
    [finding] = analyse_buffer("m.py", source, "python", settings, active_rules(settings, "python"))
    assert finding.fix is None


def test_the_plain_text_guard_keeps_continuation_lines_and_binds_each_name_once():
    from rocmlint.fixers.python_gate import _guard_text

    assert _guard_text("    from a import (\n        b,\n    )", ["b", "b"]) == (
        "    try:\n        from a import (\n            b,\n        )\n    except ImportError:\n        b = None")
