"""Python fixes built with libcst (rocmlint.fixers.python_cst): merged gate blocks, gate
placement, comments and line wrapping kept, and libcst imported only for fixable files."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.python import LANGUAGE
from rocmlint.runner import fix_buffer

SETTINGS = Settings(select=("ROC1", "ROC108"))  # ROC108 (opt-in) is the sample hazard
RULES = active_rules(SETTINGS, "python")
GATE_LINE = 'IS_ROCM = hasattr(torch.version, "hip") and torch.version.hip is not None'


def fixed(code: str, path: str = "x.py", unsafe: bool = False) -> str:
    buffer = textwrap.dedent(code).lstrip("\n").encode()
    outcome = fix_buffer(buffer, "\n", path, "python", SETTINGS, RULES, unsafe=unsafe)
    assert LANGUAGE.nvidia_view(outcome.buffer, path, SETTINGS) == LANGUAGE.nvidia_view(buffer, path, SETTINGS)
    assert analyse_buffer(path, outcome.buffer, "python", SETTINGS, RULES) == [] or unsafe
    return outcome.buffer.decode()


# Merged blocks ------------------------------------------------------------------------------
def test_adjacent_statements_of_two_rules_share_one_block_with_their_comments():
    out = fixed("""
        import torch
        import torch._inductor.config as inductor_config

        # Ampere and newer: TF32 matmuls
        torch.backends.cuda.matmul.allow_tf32 = True
        # cuDNN too
        torch.backends.cudnn.allow_tf32 = True  # faster convs
        inductor_config.triton.cudagraphs = True
    """)
    assert out == textwrap.dedent(f"""\
        import torch
        import torch._inductor.config as inductor_config

        {GATE_LINE}

        # Ampere and newer: TF32 matmuls
        if not IS_ROCM:
            torch.backends.cuda.matmul.allow_tf32 = True
            # cuDNN too
            torch.backends.cudnn.allow_tf32 = True  # faster convs
            inductor_config.triton.cudagraphs = True
    """)


def test_a_blank_line_ends_a_block():
    out = fixed("""
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True

        torch.backends.cudnn.allow_tf32 = True
    """)
    assert out.count("if not IS_ROCM:") == 2


def test_a_statement_joins_the_gate_block_just_above():
    out = fixed("""
        import torch

        IS_ROCM = torch.version.hip is not None


        def setup():
            if not IS_ROCM:
                torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
    """)
    assert out.endswith("""
def setup():
    if not IS_ROCM:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
""")


def test_a_suppressed_statement_splits_the_run():
    out = fixed("""
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True  # noqa: ROC108
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
        torch.backends.cuda.matmul.allow_tf32 = True
    """)
    assert out.endswith("""
if not IS_ROCM:
    torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True  # noqa: ROC108
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
if not IS_ROCM:
    torch.backends.cuda.matmul.allow_tf32 = True
""")


def test_findings_in_one_block_share_one_edit():
    code = b"import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = True\n"
    first, second = analyse_buffer("x.py", code, "python", SETTINGS, RULES)
    assert first.fix.edits == second.fix.edits


# Gate placement ---------------------------------------------------------------------------
def test_gate_goes_after_docstring_future_imports_and_the_import_block():
    out = fixed('''
        """Trainer."""
        from __future__ import annotations

        import os

        import torch
        # sorted by hand
        from torch import nn
        torch.backends.cudnn.allow_tf32 = True
    ''')
    assert out == textwrap.dedent(f'''\
        """Trainer."""
        from __future__ import annotations

        import os

        import torch
        # sorted by hand
        from torch import nn

        {GATE_LINE}
        if not IS_ROCM:
            torch.backends.cudnn.allow_tf32 = True
    ''')


# Line wrapping ------------------------------------------------------------------------------
def test_a_call_that_outgrows_the_line_is_split_like_black():
    out = fixed("""
        import functools

        import torch

        compile_step = functools.partial(torch.compile, mode="max-autotune", dynamic=False, fullgraph=True)
    """)
    assert out.endswith("""
compile_step = functools.partial(
    torch.compile,
    mode="max-autotune-no-cudagraphs" if IS_ROCM else "max-autotune",
    dynamic=False,
    fullgraph=True,
)
""")


def test_a_call_whose_arguments_fit_one_line_keeps_them_together():
    out = fixed("""
        import torch

        compiled = torch.compile(model_forward_with_a_long_name, mode="reduce-overhead")
    """)
    assert out.endswith("""
compiled = torch.compile(
    model_forward_with_a_long_name, mode="default" if IS_ROCM else "reduce-overhead"
)
""")


def test_a_long_line_of_arguments_in_a_split_call_gets_one_per_line():
    out = fixed("""
        import torch

        def build(model):
            return torch.compile(
                model,
                options=None, mode="reduce-overhead", dynamic=False, fullgraph=True, backend="inductor",
            )
    """)
    assert out.endswith("""
    return torch.compile(
        model,
        options=None,
        mode="default" if IS_ROCM else "reduce-overhead",
        dynamic=False,
        fullgraph=True,
        backend="inductor",
    )
""")


def test_a_call_already_split_after_its_bracket_gets_one_argument_per_line():
    out = fixed("""
        import torch

        def build(model):
            compiled = torch.compile(
                model_forward_with_a_much_longer_name, mode="max-autotune"
            )
            return compiled
    """)
    assert out.endswith("""
    compiled = torch.compile(
        model_forward_with_a_much_longer_name,
        mode="max-autotune-no-cudagraphs" if IS_ROCM else "max-autotune",
    )
    return compiled
""")


def test_indentation_step_comes_from_code_not_from_a_docstring():
    out = fixed('''
        """Benchmarks.

        Usage:
          python bench.py
        """
        import torch


        def build(model):
            return torch.compile(model_with_a_rather_long_name, mode="reduce-overhead", fullgraph=True)
    ''')
    assert out.endswith("""
    return torch.compile(
        model_with_a_rather_long_name,
        mode="default" if IS_ROCM else "reduce-overhead",
        fullgraph=True,
    )
""")


def test_the_call_split_is_the_one_holding_the_value():
    out = fixed("""
        import torch

        def check(inp, weight):
            _ = torch.compile(torch.nn.functional.linear, mode="max-autotune")(inp, weight_with_long_name)
    """)
    assert out.endswith("""
    _ = torch.compile(
        torch.nn.functional.linear,
        mode="max-autotune-no-cudagraphs" if IS_ROCM else "max-autotune",
    )(inp, weight_with_long_name)
""")


def test_a_right_hand_side_with_an_operator_is_parenthesized_and_the_last_bracket_split_first():
    # One file each: ROC107 reports one inline FP8 use per file (the others repeat it).
    out = fixed("""
        import torch

        def scales(x, weight_max_value):
            bytes_per_output_element = torch.finfo(torch.float8_e4m3fn).bits / 8
            return bytes_per_output_element
    """, unsafe=True)
    assert out.endswith("""
    bytes_per_output_element = (
        torch.finfo(torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn).bits / 8
    )
    return bytes_per_output_element
""")
    out = fixed("""
        import torch

        def scales(x, weight_max_value):
            out = x.view(torch.float8_e4m3fn).to(cast_dtype.bfloat16_or_some_other_long)
            return out
    """, unsafe=True)
    assert out.endswith("""
    out = x.view(torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn).to(
        cast_dtype.bfloat16_or_some_other_long
    )
    return out
""")


def test_an_operator_right_hand_side_still_too_long_is_split_at_its_operators():
    out = fixed("""
        import torch

        def scales(weight_max_absolute_value):
            weight_scale_factor = weight_max_absolute_value / torch.finfo(torch.float8_e4m3fn).max
            return weight_scale_factor
    """, unsafe=True)
    assert out.endswith("""
    weight_scale_factor = (
        weight_max_absolute_value
        / torch.finfo(torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn).max
    )
    return weight_scale_factor
""")


def test_a_short_result_is_left_on_one_line():
    out = fixed('import torch\n\nm = torch.compile(m, mode="reduce-overhead")\n')
    assert 'm = torch.compile(m, mode="default" if IS_ROCM else "reduce-overhead")\n' in out


def test_configured_line_length_is_respected(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 140\n")
    source = tmp_path / "pkg" / "train.py"
    source.parent.mkdir()
    line = 'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:512,expandable_segments:True"'
    wide = fixed(f"import os\n\nimport torch\n\n{line}\n", path=str(source))
    narrow = fixed(f"import os\n\nimport torch\n\n{line}\n")
    assert '= "expandable_segments:True" if IS_ROCM else "max_split_size_mb:512' in wide
    assert '= (\n    "expandable_segments:True"\n    if IS_ROCM\n    else "max_split_size_mb:512' in narrow


def test_edits_are_byte_spans_after_non_ascii_text():
    out = fixed('import torch\n\n# Größe: 🚀\nm = torch.compile(m, mode="reduce-overhead")  # schnell\n')
    assert out.endswith('# Größe: 🚀\nm = torch.compile(m, mode="default" if IS_ROCM else "reduce-overhead")'
                        '  # schnell\n')


# libcst only when a fix is built ----------------------------------------------------------
def _imports_libcst(tmp_path, code: str, *options: str) -> tuple[bool, int]:
    target = tmp_path / "mod.py"
    target.write_text(code)
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", "--extend-select", "ROC108", *options,
                           str(target)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    imported = any(line.split("|")[-1].strip() == "libcst" for line in proc.stderr.splitlines())
    return imported, proc.returncode


GATED_STATEMENT = "import torch\n\ntorch.backends.cudnn.allow_tf32 = True\n"


def test_clean_and_display_only_runs_never_import_libcst(tmp_path):
    clean = "import os\n\n\ndef main():\n    return os.getcwd()\n"
    display_only = "import torch\n\nCUDA_MAJOR = int(torch.version.cuda.split('.')[0])\n"
    for options in ((), ("--output-format", "json")):
        assert _imports_libcst(tmp_path, clean, *options) == (False, 0)
        assert _imports_libcst(tmp_path, display_only, *options) == (False, 1)


def test_a_fix_that_is_shown_or_applied_imports_libcst(tmp_path):
    assert _imports_libcst(tmp_path, GATED_STATEMENT, "--output-format", "json") == (True, 1)
    assert _imports_libcst(tmp_path, GATED_STATEMENT, "--fix") == (True, 0)


def test_a_text_report_counts_fixes_without_building_them(tmp_path):
    assert _imports_libcst(tmp_path, GATED_STATEMENT) == (False, 1)
    target = tmp_path / "mod.py"
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", "--extend-select", "ROC108",
                           str(target)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert "ROC108 [*]" in proc.stdout and "1 fixable with `--fix`" in proc.stdout


def test_a_fix_run_builds_unsafe_fixes_only_with_unsafe_fixes(tmp_path):
    long_unsafe = ("import torch\n\nscale = amax_to_scale_with_a_long_name(amax_history, torch.float8_e4m3fn, "
                   "round_scales_to_power_of_2)\n")
    assert _imports_libcst(tmp_path, long_unsafe, "--fix") == (False, 1)
    assert _imports_libcst(tmp_path, long_unsafe, "--fix", "--unsafe-fixes") == (True, 0)


def test_a_gated_value_that_fits_its_line_needs_no_libcst(tmp_path):
    fits = 'import torch\n\nm = torch.compile(m, mode="reduce-overhead")\n'
    assert _imports_libcst(tmp_path, fits, "--output-format", "json") == (False, 1)


def test_cached_text_results_do_not_serve_a_json_report(tmp_path):
    import json

    (tmp_path / "mod.py").write_text("import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
                                     "torch.backends.cudnn.allow_tf32 = True\n")

    def check(*options):
        return subprocess.run([sys.executable, "-m", "rocmlint", "check", "--extend-select", "ROC108", *options, "mod.py"],
                              capture_output=True, text=True, cwd=tmp_path).stdout

    check()  # fills the cache with unbuilt fixes
    report = json.loads(check("--output-format", "json"))
    edits = [e["content"] for finding in report for e in finding["fix"]["edits"]]
    assert any(e.startswith("if not IS_ROCM:\n    torch.backends.cuda.matmul") for e in edits)


def test_an_unbuilt_fix_is_never_applied():
    from rocmlint.fixers.apply import applicable

    code = b"import torch\n\ntorch.backends.cudnn.allow_tf32 = True\n"
    (unbuilt,) = analyse_buffer("x.py", code, "python", SETTINGS, RULES, build_fixes=False)
    (built,) = analyse_buffer("x.py", code, "python", SETTINGS, RULES)
    assert unbuilt.fixable and not applicable(unbuilt, unsafe=True)
    assert applicable(built, unsafe=False)


def test_a_failing_fix_builder_drops_the_fix_not_the_finding(monkeypatch):
    from rocmlint.fixers import python_cst

    def broken(*args):
        raise AttributeError("builder bug")

    monkeypatch.setattr(python_cst, "wrap_statements", broken)
    code = b"import torch\n\ntorch.backends.cudnn.allow_tf32 = True\n"
    (finding,) = analyse_buffer("x.py", code, "python", SETTINGS, RULES)
    assert finding.code == "ROC108" and finding.fix is None
    monkeypatch.setenv("ROCMLINT_DEBUG", "1")
    with pytest.raises(AttributeError, match="builder bug"):
        analyse_buffer("x.py", code, "python", SETTINGS, RULES)
