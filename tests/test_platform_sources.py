"""Platform sources (one test per entry of the table), the user's environment choices, NVIDIA-only
back ends, and ROC106 read by what a gate switches, across modules of one project."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from rocmlint.project import Project
from rocmlint.project import python as model_module
from rocmlint.python.gates import GateEvaluator, dotted_name, statement_facts
from rocmlint.python.platform_sources import PLATFORM_SOURCES, platform_values, user_choice
from rocmlint.python.switched import nvidia_feature, switched_code, tuning_only


def _facts(source: str) -> dict:
    """Module-level facts of a snippet, two passes (helpers calling helpers)."""
    module = ast.parse(textwrap.dedent(source))
    found: dict = {}
    for _ in range(2):
        evaluator = GateEvaluator((), dotted_name, lambda name, called: found.get(name), assume_gpu=True)
        for stmt in module.body:
            for name, fact in statement_facts(stmt, evaluator, False):
                found[name] = fact
    return found


# (source expression, values on ROCm, values on NVIDIA); None: unknown there.
SOURCE_CASES = {
    "Triton's active driver target backend": (
        "triton.runtime.driver.active.get_current_target().backend", {"hip"}, {"cuda"}),
    "the device's `gcnArchName` (ROCm only)": (
        "torch.cuda.get_device_properties(0).gcnArchName", {...}, None),
    "`hasattr(props, \"gcnArchName\")`": ('hasattr(props, "gcnArchName")', {True}, None),
    "a lookup of an NVIDIA-only tool (nvcc)": ('shutil.which("nvcc")', {None}, None),
    "the CUDA toolkit's location (`CUDA_HOME`)": ("torch.utils.cpp_extension.CUDA_HOME", {None}, None),
    "PyTorch's GPU build (`torch.backends.cuda.is_built()`, true on ROCm too)": (
        "torch.backends.cuda.is_built()", {True}, {True}),
    "the platform object's `current_platform.is_cuda()` (NVIDIA only)": (
        "current_platform.is_cuda()", {False}, {True}),
    "Apple's MPS back end of PyTorch": ("torch.backends.mps.is_available()", {False}, {False}),
    "the platform object's GPU vendor (`current_platform().vendor`)": (
        "current_platform().vendor", {"amd"}, {"nvidia"}),
    "the platform object's `is_nvidia` (NVIDIA only)": ("current_platform().is_nvidia", {False}, {True}),
}


def test_every_table_entry_has_a_case():
    assert {s.name for s in PLATFORM_SOURCES} == set(SOURCE_CASES)


@pytest.mark.parametrize("name", sorted(SOURCE_CASES))
def test_platform_source_values(name):
    text, rocm, nvidia = SOURCE_CASES[name]
    node = ast.parse(text, mode="eval").body
    source = platform_values(node, None)
    assert source is not None and source.name == name
    assert source.rocm == frozenset(rocm)
    assert source.nvidia == (None if nvidia is None else frozenset(nvidia))


def test_a_look_alike_is_no_platform_source():
    for text in ("config.backend", 'shutil.which("hipcc")', "props.name", 'os.environ.get("HOME")', "cpu.vendor",
                 "device.is_nvidia"):
        assert platform_values(ast.parse(text, mode="eval").body, None) is None


def test_constants_and_helpers_computed_from_sources():
    facts = _facts('''
        import shutil
        import triton
        IS_NVIDIA = triton.runtime.driver.active.get_current_target().backend == "cuda"
        def is_hip():
            return triton.runtime.driver.active.get_current_target().backend == "hip"
        def has_nvcc():
            return shutil.which("nvcc") is not None
        def on_amd_gpu():
            return "AMD" in torch.cuda.get_device_name()
    ''')
    assert facts["IS_NVIDIA"].meaning == "nvidia" and "Triton" in facts["IS_NVIDIA"].describe("IS_NVIDIA")
    assert facts["is_hip"].meaning == "rocm"
    assert facts["has_nvcc"].rocm == frozenset({False}) and facts["has_nvcc"].meaning == "nvidia"
    assert facts["on_amd_gpu"].rocm == frozenset({True})


def test_a_device_type_past_other_back_ends_is_still_the_platforms():
    facts = _facts('''
        import torch
        def device_type():
            if torch.backends.mps.is_available():
                return "mps"
            if not torch.backends.cuda.is_built():
                return "cpu"
            return "hip" if torch.version.hip else "cuda"
    ''')
    assert facts["device_type"].rocm == frozenset({"hip"})
    assert facts["device_type"].nvidia == frozenset({"cuda"})


def test_a_platform_name_mapped_through_a_literal_table():
    facts = _facts('''
        import triton
        def backend():
            try:
                return triton.runtime.driver.active.get_current_target().backend
            except RuntimeError:
                return "cpu"
        def vendor():
            device = backend()
            names = {"cuda": "nvidia", "hip": "amd", "xpu": "intel"}
            return names.get(device, device)
        VENDOR = vendor()
        VENDOR_BY_INDEX = {"cuda": "nvidia", "hip": "amd"}[triton.runtime.driver.active.get_current_target().backend]
        IS_NVIDIA = VENDOR == "nvidia"
        UNKNOWN = {"cuda": "nvidia"}.get(backend())
    ''')
    assert "amd" in facts["VENDOR"].rocm and "nvidia" not in facts["VENDOR"].rocm
    assert "nvidia" in facts["VENDOR"].nvidia and "amd" not in facts["VENDOR"].nvidia
    assert facts["VENDOR_BY_INDEX"].rocm == frozenset({"amd"}) and facts["VENDOR_BY_INDEX"].nvidia == frozenset({"nvidia"})
    assert facts["IS_NVIDIA"].rocm == frozenset({False})
    assert facts["UNKNOWN"].rocm == frozenset({None})  # a key the table lacks: `.get` gives None


def test_a_device_name_read_from_properties_kept_in_a_name():
    facts = _facts('''
        import torch
        def vendor():
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            if "AMD" in props.name:
                return "amd"
            return "nvidia"
    ''')
    assert facts["vendor"].rocm == frozenset({"amd"})


def test_an_unread_local_flag_decides_nothing():
    assert tuning_only(_switches('''
        def block_size():
            major, minor = torch.cuda.get_device_capability()
            is_sm90 = major == 9 and minor == 0
            return 128
    '''))


def test_an_environment_override_is_the_users_choice():
    facts = _facts('''
        import os
        import torch
        def device_type():
            forced = os.environ.get("FORCE_DEVICE")
            if forced == "cuda":
                return "cuda"
            if torch.version.hip is not None:
                return "hip"
            return "cuda"
        def toolkit_root():
            if os.environ.get("ROCM_PATH"):
                return "hip"
            return "cuda"
    ''')
    fact = facts["device_type"]
    assert fact.rocm == frozenset({"hip"}) and fact.nvidia == frozenset({"cuda"})
    assert "FORCE_DEVICE" in fact.describe("device_type")
    assert "toolkit_root" not in facts  # where the toolkit lives is the machine, not a choice
    assert user_choice(ast.parse('os.getenv("X") == "1"', mode="eval").body) == "X"
    assert user_choice(ast.parse('"FORCE_CUDA" in os.environ', mode="eval").body) == "FORCE_CUDA"
    assert user_choice(ast.parse('os.environ.get("CUDA_HOME")', mode="eval").body) is None


def _switches(source: str):
    from rocmlint.python.context import PythonContext
    from rocmlint.config import Settings

    text = textwrap.dedent(source)
    ctx = PythonContext("m.py", text.encode(), Settings(), ast.parse(text))
    compare = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Compare))
    return switched_code(ctx, ctx.path_to(compare))


def test_tuning_and_feature_sides_of_a_gate():
    tuning = _switches('''
        if torch.cuda.get_device_capability()[0] >= 9:
            num_stages, BLOCK = 4, 128
            print("fast path")
        else:
            num_stages = 2
    ''')
    assert tuning_only(tuning)
    flag = _switches('''
        HOPPER = torch.cuda.get_device_capability() >= (9, 0)
        if not HOPPER:
            run_plain()
        else:
            run_wgmma_kernel()
    ''')
    assert not tuning_only(flag) and nvidia_feature([n for s in flag for n in s.on]) == "wgmma"
    assert nvidia_feature([n for s in flag for n in s.off]) is None
    emulate = _switches('''
        if torch.cuda.get_device_capability() < (8, 9):
            emulate = True
    ''')
    assert not tuning_only(emulate)  # a flag is a feature switch, not a tuning value
    knobs = _switches('''
        if torch.cuda.get_device_capability()[0] == 9:
            opt_flags.update_constraints({"split_k": 1})
        elif torch.cuda.get_device_capability()[0] == 10:
            opt_flags.update_constraints({"is_persistent": True, "epilogue_subtile": 1}, num_warps=8)
    ''')
    assert tuning_only(knobs)  # a call handed only tuning knobs tunes, whatever it is named
    enable = _switches('''
        if torch.cuda.get_device_capability()[0] == 9:
            opt_flags.update_constraints({"split_k": 1}, use_tma=True)
    ''')
    assert not tuning_only(enable)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _roc106_lines(root: Path, rel: str) -> set[int]:
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "rocmlint", "--output-format", "json", "--no-cache",
                          "--select", "ROC106", "--exit-zero", rel], cwd=root, capture_output=True, text=True)
    return {f["line"] for f in json.loads(out.stdout)}


def test_platform_facts_cross_modules(tmp_path, monkeypatch):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/platform.py": '''\
            import os
            import torch
            import triton

            IS_NVIDIA = triton.runtime.driver.active.get_current_target().backend == "cuda"


            def _device_type():
                if os.environ.get("FORCE_DEVICE") == "cuda":
                    return "cuda"
                if torch.version.hip is not None:
                    return "rocm"
                return "cuda"


            DEVICE_TYPE = _device_type()
            ''',
        "pkg/ops.py": '''\
            import torch
            from .platform import DEVICE_TYPE, IS_NVIDIA


            def attention():
                if IS_NVIDIA and torch.cuda.get_device_capability() >= (9, 0):
                    return "fa3"
                return "fa2"


            def copy():
                if DEVICE_TYPE == "cuda":
                    if torch.cuda.get_device_capability() >= (9, 0):
                        return "tma"
                return "plain"


            def plain():
                if torch.cuda.get_device_capability() >= (9, 0):
                    return "tma"
                return "plain"
            ''',
    })
    monkeypatch.chdir(tmp_path)
    assert _roc106_lines(tmp_path, "pkg") == {19}
    model = model_module.build_now(Project(tmp_path))
    verdict = model.explain("pkg/ops.py", 14)
    assert verdict.value is False
    assert any("FORCE_DEVICE" in e.what for e in verdict.evidence)


def _lines(root: Path, rel: str, rule: str) -> set[int]:
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "rocmlint", "--output-format", "json", "--no-cache",
                          "--select", rule, "--exit-zero", rel], cwd=root, capture_output=True, text=True)
    return {f["line"] for f in json.loads(out.stdout)}


@pytest.mark.parametrize("text, expected", [
    ('os.environ["ARCH"] == "rocm"', ("ARCH", "rocm", True)),
    ('"cuda" in ARCH', ("ARCH", "nvidia", True)),
    ('os.getenv("ARCH", "").lower() not in ("hip", "rocm")', ("ARCH", "rocm", False)),
    ('os.environ.get("ARCH") != "nvidia"', ("ARCH", "nvidia", False)),
    ('os.environ.get("ARCH") in ("cuda", "rocm")', None),  # both platforms: names neither
    ('os.environ.get("ARCH") == "xpu"', None),
    ('os.environ.get("CUDA_HOME") == "cuda"', None),  # a toolkit's location, not a choice
    ('device == "rocm"', None),  # not read from the environment
])
def test_a_platform_the_user_names_in_an_environment_variable(text, expected):
    from rocmlint.python.platform_sources import platform_selection

    module = ast.parse(f"import os\nARCH = os.environ['ARCH']\nflag = {text}\n")
    bound = {"ARCH": module.body[1].value}
    compare = module.body[2].value
    assert platform_selection(compare, lambda name: bound.get(name.id)) == expected


def test_a_variable_compared_with_a_rocm_word_names_the_platform_in_every_module(tmp_path, monkeypatch):
    _write(tmp_path, {
        "ext/__init__.py": "",
        "ext/scan.py": '''\
            import os
            from torch.utils.cpp_extension import load

            ARCH = os.environ["SCAN_ARCH"]


            def build():
                if "rocm" in ARCH:
                    return load(name="scan", sources=["scan.cu"], extra_cuda_cflags=["-O3", "-ffast-math"])
                return load(name="scan", sources=["scan.cu"], extra_cuda_cflags=["-O3", "--use_fast_math"])
            ''',
        "ext/chunked.py": '''\
            import os
            from torch.utils.cpp_extension import load

            RUNNING = os.environ["SCAN_ARCH"]
            DEBUG_DEVICE = os.environ.get("SCAN_DEVICE", "cuda")


            def build():
                if "cuda" in RUNNING:
                    load(name="chunked", sources=["chunked.cu"], extra_cuda_cflags=["--use_fast_math"])
                if DEBUG_DEVICE == "cuda":
                    load(name="debug", sources=["debug.cu"], extra_cuda_cflags=["--use_fast_math"])
            ''',
    })
    monkeypatch.chdir(tmp_path)
    # Only the device type nobody compares with a ROCm word is left: "cuda" is ROCm's device too.
    assert _lines(tmp_path, "ext", "ROC109") == {12}
    model = model_module.build_now(Project(tmp_path))
    assert model.platform_variables() == {"SCAN_ARCH": "ext/scan.py:8"}


def test_an_optional_import_of_an_nvidia_only_package_fails_on_rocm():
    facts = _facts('''
        try:
            import flash_attn_interface
            HAS_HOPPER_FA = True
        except ImportError:
            HAS_HOPPER_FA = False

        def have_tensor_map_gemm():
            try:
                from deep_gemm import fp8_gemm_nt
                return True
            except ImportError:
                return False

        try:
            import flash_attn
            HAS_FA = True
        except ImportError:
            HAS_FA = False
    ''')
    assert facts["HAS_HOPPER_FA"].rocm == {False}
    assert facts["have_tensor_map_gemm"].rocm == {False} and facts["have_tensor_map_gemm"].meaning == "nvidia"
    assert "HAS_FA" not in facts  # flash-attn has ROCm builds: nothing to say


def test_ordering_a_value_that_is_none_on_rocm_never_holds_there():
    evaluator = GateEvaluator((), dotted_name, assume_gpu=True)
    test = ast.parse('torch.version.cuda >= "12.4"', mode="eval").body
    assert evaluator.value(test, True) is False and evaluator.value(test, False) is None


def test_code_after_a_call_that_raises_on_rocm_never_runs_there(tmp_path, monkeypatch):
    _write(tmp_path, {"build_ops.py": '''\
        import torch
        from torch.utils.cpp_extension import CUDA_HOME


        def nvcc_version():
            if CUDA_HOME is None:
                raise RuntimeError("CUDA_HOME is not set: cannot build the CUDA ops")
            return 12, 4


        def checked_version(strict):
            if strict:
                raise RuntimeError("strict builds are not supported")
            return 12, 4


        def check_toolkit():
            major, minor = nvcc_version()
            return torch.version.cuda.split(".")[0] == str(major)


        def check_strict():
            major, minor = checked_version(True)
            return torch.version.cuda.split(".")[0] == str(major)
        '''})
    monkeypatch.chdir(tmp_path)
    assert _lines(tmp_path, "build_ops.py", "ROC105") == {24}


@pytest.mark.parametrize("quantiser, reported", [
    ("float8_weight_only()", False),  # FP8 weights kept and cast up for the matmul: any GPU
    ("float8_dynamic_activation_float8_weight()", True),  # FP8 matmuls: MI200 has none
])
def test_an_assert_switches_what_follows_it(tmp_path, monkeypatch, quantiser, reported):
    _write(tmp_path, {"quant.py": f'''\
        import torch
        from torchao.quantization import float8_dynamic_activation_float8_weight, float8_weight_only


        class Fp8Method:
            def __init__(self):
                fp8_ready = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)
                assert fp8_ready, "FP8 needs compute capability 8.9"
                self.quantise = {quantiser}
        '''})
    monkeypatch.chdir(tmp_path)
    assert bool(_lines(tmp_path, "quant.py", "ROC106")) is reported


def test_availability_of_nvidia_only_technology_is_false_on_rocm():
    evaluator = GateEvaluator((), dotted_name, assume_gpu=True)

    def on_rocm(text):
        return evaluator.value(ast.parse(text, mode="eval").body, True)

    assert on_rocm("CUDA_CUTE_TMA_AVAILABLE") is False
    assert on_rocm("is_flashinfer_available()") is False
    assert on_rocm('hasattr(_C, "fused_logp_sm90")') is False
    assert on_rocm('unknown_flag and hasattr(ops, "cutlass_scaled_mm")') is False  # settles the `and`
    # Names that say nothing NVIDIA-only (or only "cuda", which PyTorch's ROCm build answers too)
    assert on_rocm("CUDA_EXT_AVAILABLE") is None
    assert on_rocm('hasattr(torch, "_grouped_mm")') is None
    assert on_rocm("cutlass_scaled_mm_supports_fp8(90)") is None  # no availability word
