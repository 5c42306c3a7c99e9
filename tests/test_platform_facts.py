"""Python platform facts as one model: platform variables and functions judged by the values
they hold or return on each platform, across modules; helpers that return early on ROCm;
names that state their platform; device-name tests; classes that refuse ROCm; modules of
other accelerators; and what `explain` shows of the chain."""
from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

from rocmlint.config import Settings
from rocmlint.project import Project
from rocmlint.project import python as model_module
from rocmlint.python import LANGUAGE
from rocmlint.python.gates import SOME, GateEvaluator, assigned_values, return_values, statement_facts

SETTINGS = Settings()


def context(code: str, path: str = "example.py"):
    return LANGUAGE.make_context(path, textwrap.dedent(code).encode(), SETTINGS)


def evaluator() -> GateEvaluator:
    from rocmlint.python.gates import dotted_name

    return GateEvaluator((), dotted_name, assume_gpu=True)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def reachable(ctx, needle: str) -> bool:
    return not ctx.nvidia_only(ctx.source.index(needle.encode()))


# Values -------------------------------------------------------------------------------
@pytest.mark.parametrize("expr, on_rocm, on_nvidia", [
    ('"hip" if torch.version.hip else "cuda"', {"hip"}, {"cuda"}),
    ('"hip" if torch.version.hip else ("cuda" if torch.cuda.is_available() else "cpu")', {"hip"}, {"cuda"}),
    ('torch.version.hip and "rocm" or "cuda"', {"rocm"}, {"cuda"}),
    ("torch.version.hip", {SOME}, {None}),
    ('"rocm" if torch.version.hip else backend()', {"rocm"}, None),
])
def test_possible_values_per_platform(expr, on_rocm, on_nvidia):
    node = ast.parse(expr, mode="eval").body
    ev = evaluator()
    assert ev.possible(node, True) == (None if on_rocm is None else frozenset(on_rocm))
    assert ev.possible(node, False) == (None if on_nvidia is None else frozenset(on_nvidia))


@pytest.mark.parametrize("condition, on_rocm, on_nvidia", [
    ('DEVICE == "cuda"', False, True),
    ('DEVICE != "hip"', False, True),
    ('DEVICE in ("xpu", "hip")', True, False),
    ('DEVICE not in ("xpu", "hip")', False, True),
    ('"hip" in DEVICE', True, False),
    ('DEVICE == other', None, None),
    ('DEVICE in SUPPORTED', None, None),
])
def test_comparisons_with_a_platform_variable_gate(condition, on_rocm, on_nvidia):
    ctx = context(f'import torch\nDEVICE = "hip" if torch.version.hip else "cuda"\nx = {condition}\n')
    expr = ctx.tree.body[2].value
    assert ctx.gates.value(expr, True) is on_rocm
    assert ctx.gates.value(expr, False) is on_nvidia


def test_a_function_returns_what_its_reachable_returns_give():
    function = ast.parse(textwrap.dedent('''
        def backend():
            if torch.version.hip is not None:
                return "rocm"
            if torch.xpu.is_available():
                return "xpu"
            return "cuda"
    ''')).body[0]
    assert return_values(function, evaluator(), True) == {"rocm"}
    assert return_values(function, evaluator(), False) == {"xpu", "cuda"}  # `torch.xpu.is_available()`: unknown
    early = ast.parse("def f():\n    if torch.version.hip:\n        raise NotImplementedError\n"
                      "    if fast:\n        return 1\n").body[0]
    assert return_values(early, evaluator(), True) == frozenset()  # never returns on ROCm
    assert return_values(early, evaluator(), False) == {1, None}  # or falls off the end


def test_a_module_level_name_bound_in_branches_takes_the_branch_of_each_platform():
    module = ast.parse(textwrap.dedent('''
        SYSTEM = None
        if torch.version.hip is not None:
            SYSTEM = "rocm"
        elif torch.version.cuda is not None:
            SYSTEM = "cuda"
        else:
            SYSTEM = "cpu"
    '''))
    assert assigned_values(module.body, "SYSTEM", evaluator(), True) == {"rocm"}
    assert assigned_values(module.body, "SYSTEM", evaluator(), False) == {"cuda", "cpu"}
    facts = dict(statement_facts(module.body[1], evaluator(), False))
    assert facts["SYSTEM"].rocm == {"rocm"} and facts["SYSTEM"].kind == "value"


# Reachability ---------------------------------------------------------------------------
def test_a_helper_that_returns_early_on_rocm_gates_the_rest_of_its_body():
    ctx = context('''
        import torch
        DEVICE_TYPE = "hip" if torch.version.hip else "cuda"

        def check_tma():
            if DEVICE_TYPE in ("xpu", "hip"):
                return False
            return torch.cuda.get_device_capability()[0] >= 9
    ''')
    assert not reachable(ctx, "return torch.cuda")
    assert reachable(ctx, "return False")


def test_a_function_returning_a_platform_string_gates_its_callers():
    ctx = context('''
        import torch

        def accelerator():
            if torch.version.hip:
                return "rocm"
            return "cuda"

        if accelerator() == "cuda":
            nvidia_path()
        else:
            rocm_path()
    ''')
    assert not reachable(ctx, "nvidia_path()") and reachable(ctx, "rocm_path()")


@pytest.mark.parametrize("test, nvidia_branch", [
    ('"MI300" in torch.cuda.get_device_name()', False),
    ('"AMD" in torch.cuda.get_device_name(0)', False),
    ('"H100" in torch.cuda.get_device_name()', True),
    ('"gfx94" in torch.cuda.get_device_properties(0).gcnArchName', False),
])
def test_device_name_tests(test, nvidia_branch):
    ctx = context(f"import torch\nif {test}:\n    tuned()\n")
    assert reachable(ctx, "tuned()") is not nvidia_branch
    assert ctx.gated(ctx.source.index(b"tuned()"))  # one platform decides: already handled


def test_a_name_that_states_rocm_decides_unless_its_definition_does():
    imported = context("from build_utils import rocm_build\nif rocm_build():\n    a()\nelse:\n    b()\n")
    assert reachable(imported, "a()") and not reachable(imported, "b()")
    assert not reachable(context("if not USE_ROCM:\n    b()\n"), "b()")
    # a definition that asks the build machine (env, compilers found) decides nothing itself:
    # the name says which build it means
    probing = context("import os, shutil\n\ndef rocm_build():\n    if os.environ.get('X_USE_ROCM') == '1':\n"
                      "        return True\n    return shutil.which('nvcc') is None\n\n"
                      "if rocm_build():\n    a()\nelse:\n    b()\n")
    assert reachable(probing, "a()") and not reachable(probing, "b()")
    decided = context("import torch\n\ndef rocm_build():\n    return torch.version.cuda is not None\n\n"
                      "if rocm_build():\n    a()\nelse:\n    b()\n")
    assert not reachable(decided, "a()") and reachable(decided, "b()")  # what it returns wins
    stub = context("def rocm_build():\n    return False\n\nif rocm_build():\n    a()\nelse:\n    b()\n")
    assert reachable(stub, "b()")  # one constant whatever the machine: the stub decides
    cuda_named = context("def use_cuda():\n    return DEVICE == 'cuda'\n\nif use_cuda():\n    a()\n")
    assert reachable(cuda_named, "a()")  # PyTorch's 'cuda' device is ROCm's too
    amd64 = context("if amd64:\n    b()\nelse:\n    c()\n")
    assert reachable(amd64, "b()") and reachable(amd64, "c()")  # not the word `amd`


def test_methods_of_a_class_whose_constructor_refuses_rocm_never_run_there():
    ctx = context('''
        import torch

        class Fp8Linear:
            def __init__(self):
                if torch.version.hip:
                    raise NotImplementedError("no ROCm kernels")
                self.ready = True

            def forward(self, x):
                return fp8_kernel(x)
    ''')
    assert not reachable(ctx, "fp8_kernel(x)")
    blockers = [str(e) for e in ctx.rocm_blockers(ctx.source.index(b"fp8_kernel"))]
    assert any("`Fp8Linear.__init__` raises on ROCm" in b for b in blockers)


# Across modules -------------------------------------------------------------------------
PROJECT = {
    "kit/__init__.py": "",
    "kit/device_type.py": '''
        import torch

        DEVICE_TYPE = "hip" if torch.version.hip else "cuda"


        def get_device_type():
            if torch.version.hip is not None:
                return "hip"
            return "cuda"
    ''',
    "kit/system.py": '''
        import torch

        SYSTEM = None
        if torch.version.hip is not None:
            SYSTEM = "rocm"
        else:
            SYSTEM = "cuda"
    ''',
    "kit/ops.py": '''
        import torch

        from kit.system import SYSTEM
        from . import device_type
        from .device_type import DEVICE_TYPE, get_device_type


        def a():
            if DEVICE_TYPE == "cuda":
                return "nvidia-a"


        def b():
            if get_device_type() != "hip":
                return "nvidia-b"


        def c():
            if SYSTEM == "cuda":
                return "nvidia-c"


        def d():
            if device_type.DEVICE_TYPE == "cuda":
                return "nvidia-d"
    ''',
}


def test_platform_variables_and_functions_gate_across_modules(tmp_path):
    _write(tmp_path, PROJECT)
    model = model_module.build_now(Project(tmp_path))
    assert model.helper("DEVICE_TYPE").fact.rocm == {"hip"}
    assert model.helper("get_device_type").fact.kind == "call"
    assert model.helper("SYSTEM").fact.rocm == {"rocm"}
    source = (tmp_path / "kit/ops.py").read_bytes()
    ctx = LANGUAGE.make_context(str(tmp_path / "kit/ops.py"), source, SETTINGS)
    ctx.project = Project(tmp_path, parts={"python": model})
    for name in ("a", "b", "c", "d"):
        assert not reachable(ctx, f'"nvidia-{name}"'), name
    verdict = model.explain(tmp_path / "kit/ops.py", 11)
    shown = [str(e) for e in verdict.evidence]
    assert verdict.value is False and any("kit/device_type.py:4" in e for e in shown), shown


def test_platform_facts_survive_the_summary_cache(tmp_path):
    _write(tmp_path, PROJECT)
    cache = tmp_path / ".cache"
    first = model_module.build_now(Project(tmp_path, cache_dir=cache))
    assert list(cache.glob("python-model-*.json"))
    second = model_module.build_now(Project(tmp_path, cache_dir=cache))
    assert {n: h.fact for n, h in second.helpers.items()} == {n: h.fact for n, h in first.helpers.items()}
    hip = model_module._values_from(json.loads(json.dumps(model_module._values_json(frozenset({SOME, None})))))
    assert hip == {SOME, None}


def test_a_name_bound_again_after_its_platform_block_decides_nothing(tmp_path):
    _write(tmp_path, {"m.py": 'import torch\nif torch.version.hip:\n    MODE = "rocm"\nelse:\n    MODE = "cuda"\n'
                              'MODE = read_config()\n'})
    assert model_module.build_now(Project(tmp_path)).helper("MODE") is None


def test_modules_of_other_accelerators_never_run_on_rocm(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/gaudi_kernels.py": "import torch\nx = 1\n",
                      "pkg/hpu_ops.py": "import habana_frameworks.torch.core as htcore\n",
                      "pkg/user.py": "from pkg.hpu_ops import htcore\n",
                      "pkg/backends/xpu/fused.py": "import torch\n", "pkg/common.py": "import torch\n"})
    model = model_module.build_now(Project(tmp_path))
    shown = {rel: model.module_verdict(tmp_path / rel) for rel in
             ("pkg/gaudi_kernels.py", "pkg/hpu_ops.py", "pkg/user.py", "pkg/backends/xpu/fused.py", "pkg/common.py")}
    assert shown["pkg/common.py"] is None
    assert all(v is not None and v.value is False for rel, v in shown.items() if rel != "pkg/common.py")
    assert "Intel Gaudi" in str(shown["pkg/hpu_ops.py"].evidence[0])
    assert "a module ROCm never loads" in str(shown["pkg/user.py"].evidence[0])


def test_a_helper_reads_its_own_local_names():
    ctx = context('''
        import torch

        def on_amd():
            has_rocm = torch.version.hip is not None
            return has_rocm

        def on_nvidia():
            found = torch.version.cuda is not None
            return found

        if on_amd():
            rocm_path()
        if on_nvidia():
            nvidia_path()
    ''')
    assert not reachable(ctx, "nvidia_path()")
    assert reachable(ctx, "rocm_path()") and ctx.gated(ctx.source.index(b"rocm_path()"))


def test_a_function_calling_an_nvidia_only_package_unconditionally_never_runs_on_rocm():
    ctx = context('''
        import torch

        if HAS_FA3:
            from flash_attn_interface import flash_attn_func as fa3


        def fp8_attention(q, k, v):
            q8 = q.to(torch.float8_e4m3fn)
            return fa3(q8, k, v)


        def attention(q, k, v):
            if HAS_FA3:
                return fa3(q, k, v)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
    ''')
    assert not reachable(ctx, "q8 = q.to")
    assert reachable(ctx, "return torch.nn.functional")  # FA3 is one choice among others there
    blockers = [str(e) for e in ctx.rocm_blockers(ctx.source.index(b"q8 = q.to"))]
    assert any("calls `fa3`, which only `flash_attn_interface.flash_attn_func` (NVIDIA only)" in b for b in blockers)


def test_a_module_name_set_from_a_platform_helper_elsewhere_is_a_platform_variable(tmp_path):
    _write(tmp_path, {
        "app/__init__.py": "",
        "app/state.py": "import torch\n\nmode = None\n\n\ndef pick(opts):\n    if opts.cpu:\n        m = 'cpu'\n"
                        "    elif torch.version.hip:\n        m = 'rocm'\n    else:\n        m = 'cuda'\n    return m\n",
        "app/boot.py": "from app import state\n\nstate.mode = state.pick(OPTS)\n",
    })
    model = model_module.build_now(Project(tmp_path))
    assert model.helper("pick").fact.rocm == {"cpu", "rocm"}
    mode = model.helper("mode")
    assert mode is not None and mode.fact.rocm == {"cpu", "rocm"} and mode.fact.nvidia == {"cpu", "cuda"}
    assert mode.path == "app/boot.py" and "set from `pick()`" in str(mode.evidence())
    # set from two helpers that differ: it decides nothing
    _write(tmp_path, {"app/third.py": "from app import state\n\nstate.mode = state.other_pick(OPTS)\n",
                      "app/state.py": (tmp_path / "app/state.py").read_text()
                      + "\n\ndef other_pick(opts):\n    return 'rocm' if torch.version.hip else 'nvidia'\n"})
    assert model_module.build_now(Project(tmp_path)).helper("mode") is None
