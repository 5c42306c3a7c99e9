"""The Python project model: gate helpers by what they return, NVIDIA-only modules and
components, `explain` with evidence, the summary cache, and the rules that use it."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rocmlint.project import Project
from rocmlint.project import python as model_module
from rocmlint.python.capability import judge

HELPERS = '''\
import torch


def on_amd():
    return torch.version.hip is not None


def sm100_or_newer():
    return torch.version.cuda is not None and torch.cuda.get_device_capability() >= (10, 0)


def has_fast_fp8():
    return sm100_or_newer() and torch.cuda.device_count() > 0


def gpu_ready():
    return torch.cuda.is_available()


def amd_unsupported(reason):
    def wrap(fn):
        def run(*args):
            if on_amd():
                import pytest
                pytest.skip(reason)
            return fn(*args)
        return run
    return wrap
'''


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _model(root: Path, cache_dir: Path | None = None):
    return model_module.build_now(Project(root, cache_dir=cache_dir))


def test_helpers_are_found_by_what_they_return(tmp_path):
    _write(tmp_path, {"pkg/platform.py": HELPERS, "pkg/__init__.py": ""})
    model = _model(tmp_path)
    kinds = {name: getattr(model.helper(name), "kind", None) for name in
             ("on_amd", "sm100_or_newer", "has_fast_fp8", "amd_unsupported", "gpu_ready")}
    assert kinds == {"on_amd": "rocm", "sm100_or_newer": "nvidia",
                     "has_fast_fp8": "nvidia",  # one level of helper calls
                     "amd_unsupported": "skip",  # a skip decorator by its definition
                     "gpu_ready": None}
    assert model.helper("on_amd").evidence().where == "pkg/platform.py:4"


def test_a_name_with_two_meanings_decides_nothing(tmp_path):
    _write(tmp_path, {"a.py": "import torch\ndef probe():\n    return torch.version.hip is not None\n",
                      "b.py": "import torch\ndef probe():\n    return torch.version.cuda is not None\n"})
    assert _model(tmp_path).helper("probe") is None


def test_nvidia_only_modules_direct_and_through_project_imports(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/kernels.py": "import torch\nimport cutlass.cute as cute\n",
        "pkg/wrapper.py": "from pkg.kernels import run\nfrom . import other\n",
        "pkg/relative.py": "from .kernels import run\n",
        "pkg/optional.py": "try:\n    import cutlass\nexcept ImportError:\n    cutlass = None\n",
        "pkg/other.py": "import torch\n",
    })
    model = _model(tmp_path)
    assert set(model.nvidia_only) == {"pkg/kernels.py", "pkg/wrapper.py", "pkg/relative.py"}
    assert model.nvidia_only["pkg/kernels.py"].where == "pkg/kernels.py:2"
    assert "pkg/kernels.py:2" in model.nvidia_only["pkg/wrapper.py"].what


def test_cuda_only_component_in_a_dual_platform_project(tmp_path):
    files = {
        "setup.py": "import os\nUSE_ROCM = os.environ.get('USE_ROCM') == '1'  # builds for hip too\n",
        "pkg/ext/setup.py": 'flags = ["-gencode", "arch=compute_90,code=sm_90"]\n',
        "pkg/ext/ops.py": "import torch\nFP8 = torch.float8_e4m3fn\n",
    }
    _write(tmp_path, files)
    verdict = _model(tmp_path).module_verdict(tmp_path / "pkg/ext/ops.py")
    assert verdict is not None and verdict.value is False
    assert verdict.evidence[0].where == "pkg/ext/setup.py:1" and "setup.py:2" in verdict.evidence[0].what
    # A project whose build supports no AMD GPU is being ported: nothing is excused.
    (tmp_path / "setup.py").write_text("flags = ['-gencode']\n")
    assert _model(tmp_path).module_verdict(tmp_path / "pkg/ext/ops.py") is None


def test_explain_gives_the_deciding_gate_with_file_and_line(tmp_path, monkeypatch):
    _write(tmp_path, {
        "platform.py": HELPERS,
        "test_fp8.py": '''\
            import pytest
            import torch
            from platform import sm100_or_newer, amd_unsupported


            @pytest.mark.skipif(not sm100_or_newer(), reason="SM100")
            def test_a():
                dt = torch.float8_e4m3fn


            @amd_unsupported("no FP8 on this path")
            def test_b():
                dt = torch.float8_e4m3fn


            def test_c():
                dt = torch.float8_e4m3fn
            ''',
        "cute_kernels.py": "import cutlass\nX = 1\n",
    })
    monkeypatch.chdir(tmp_path)
    model = _model(tmp_path)
    a = model.explain("test_fp8.py", 8)
    assert a.value is False and a.evidence[0].where == "test_fp8.py:6"
    assert "sm100_or_newer" in a.evidence[0].what
    b = model.explain("test_fp8.py", 13)
    assert b.value is False and b.evidence[0].where == "test_fp8.py:11"
    assert model.explain("test_fp8.py", 17).value is True
    c = model.explain("cute_kernels.py", 2)
    assert c.value is False and c.evidence[0].where == "cute_kernels.py:1"


def test_summaries_are_cached_by_content(tmp_path, monkeypatch):
    _write(tmp_path, {"platform.py": HELPERS, "other.py": "import torch\n"})
    cache = tmp_path / ".cache"
    calls = []
    real = model_module.summarize
    monkeypatch.setattr(model_module, "summarize", lambda rel, src: calls.append(rel) or real(rel, src))
    first = _model(tmp_path, cache)
    assert sorted(calls) == ["other.py", "platform.py"]
    calls.clear()
    second = _model(tmp_path, cache)
    assert calls == []  # warm: nothing re-read into a summary
    assert second.helpers.keys() == first.helpers.keys() and second.definitions == first.definitions
    (tmp_path / "other.py").write_text("import torch\ndef on_gpu_amd():\n    return torch.version.hip is not None\n")
    third = _model(tmp_path, cache)
    assert calls == ["other.py"] and third.helper("on_gpu_amd").kind == "rocm"


def _check(root: Path, *paths: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", "--exit-zero", "--select", "ROC1",
                          "--output-format", "json", *paths], cwd=root, capture_output=True, text=True)
    assert "internal error" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def _findings_in_project(root: Path, code: str, files: dict[str, str]) -> list[dict]:
    """``code``'s findings in a one-repository project made of ``files``."""
    (root / ".git").mkdir()
    _write(root, files)
    return [f for f in _check(root, ".") if f["code"] == code]


def test_rules_ask_the_model_for_helpers_defined_in_other_files(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": "",
        "platform.py": HELPERS,
        "train.py": '''\
            import torch
            from platform import on_amd, sm100_or_newer


            def toolkit():
                if not on_amd():
                    return torch.version.cuda.split(".")


            def fp8():
                if sm100_or_newer():
                    dt = torch.float8_e4m3fn
                    return dt
            ''',
    })
    assert _check(tmp_path, "train.py") == []
    (tmp_path / "platform.py").write_text("def on_amd():\n    return False\n\n\ndef sm100_or_newer():\n    return True\n")
    assert sorted(f["code"] for f in _check(tmp_path, "train.py")) == ["ROC105", "ROC107"]


@pytest.mark.parametrize("comparison, wrong", [
    ("cap() >= (9, 0)", "every AMD GPU"),
    ("cap() == (9, 0)", "MI200 (gfx90a)"),
    ("cap() >= (8, 9)", "MI200 (gfx90a), RDNA2 (gfx1030), RDNA3 (gfx1100)"),
    ("cap() >= (10, 0)", "RDNA2 (gfx1030), RDNA3 (gfx1100), RDNA4 (gfx1200)"),
    ("cap()[0] == 12", "RDNA4 (gfx1200)"),
    ("cap()[0] * 10 + cap()[1] >= 90", "every AMD GPU"),
    ("cap()[0] > 8 or (cap()[0] == 8 and cap()[1] >= 9)", "MI200 (gfx90a), RDNA2 (gfx1030), RDNA3 (gfx1100)"),
    ("cap() >= (8, 0)", None),  # bf16: right on every AMD GPU
    ("cap() >= (7, 0)", None),  # fp16
    ("cap()[0] < 8", None),
    ("cap() != (10, 0)", None),  # no AMD GPU reports 10.0
])
def test_capability_comparisons_judged_on_the_amd_table(comparison, wrong):
    expr = ast.parse(comparison.replace("cap()", "torch.cuda.get_device_capability()"), mode="eval").body
    verdict = judge(expr, lambda name: None)
    assert verdict is not None
    if wrong is None:
        assert verdict.wrong == ()
    else:
        assert verdict.describe().endswith(f"wrong on {wrong}")


def test_roc106_names_the_amd_gpus_in_its_message(tmp_path):
    _write(tmp_path, {"k.py": "import torch\nif torch.cuda.get_device_capability() == (9, 0):\n    hopper()\n"
                               "if torch.cuda.get_device_capability() >= (8, 0):\n    bf16()\n"
                               "major, minor = torch.cuda.get_device_capability()\n"
                               "FP8 = major > 8 or (major == 8 and minor >= 9)\n"})
    findings = _check(tmp_path, "k.py")
    assert [(f["code"], f["line"]) for f in findings] == [("ROC106", 2), ("ROC106", 6)]
    assert "MI200 (gfx90a)" in findings[0]["message"] and "SM 9.0" in findings[0]["message"]
    assert "tests FP8 but is wrong on MI200 (gfx90a), RDNA2 (gfx1030), RDNA3 (gfx1100):" in findings[1]["message"]


def test_the_model_is_built_only_when_a_rule_asks(tmp_path):
    """A run over files without anchors (pre-commit on a clean file) never scans the project."""
    from rocmlint.config import Settings
    from rocmlint.engine import lint_file
    from rocmlint.project import activate

    _write(tmp_path, {"platform.py": HELPERS, "clean.py": "import os\nprint(os.getcwd())\n",
                      "gated.py": "import torch\nfrom platform import on_amd\nif not on_amd():\n"
                                  "    v = torch.version.cuda.split('.')\n"})
    project = Project(tmp_path, Settings(select=("ROC1",)))
    project.prepare(["python"])
    lazy = project.parts["python"]
    activate(project)
    try:
        assert lint_file(tmp_path / "clean.py", "clean.py", project.settings).findings == []
        assert not lazy.built
        assert lint_file(tmp_path / "gated.py", "gated.py", project.settings).findings == []
        assert lazy.built and project.part("python").helper("on_amd").kind == "rocm"
    finally:
        activate(None)


def test_code_only_the_nvidia_build_calls_is_not_reported(tmp_path, monkeypatch):
    """The call chain decides: a private helper called only under `if not on_amd():` (or a
    name used only there) runs only on NVIDIA; one more call from shared code makes it a hazard."""
    body = '''\
        import torch
        from platform import on_amd


        def _quantize(x):
            fp8 = torch.float8_e4m3fn
            return x.to(fp8)


        def run(x):
            if not on_amd():
                return _quantize(x)
            return x
        '''
    _write(tmp_path, {"pyproject.toml": "", "platform.py": HELPERS, "q.py": body})
    assert _check(tmp_path, "q.py") == []
    monkeypatch.chdir(tmp_path)
    verdict = _model(tmp_path).explain("q.py", 6)
    assert verdict.value is False and verdict.evidence[0].where == "q.py:5"
    (tmp_path / "q.py").write_text(textwrap.dedent(body) + "\n\nSHARED = _quantize(torch.ones(1))\n")
    assert [f["line"] for f in _check(tmp_path, "q.py")] == [6]


@pytest.mark.parametrize("text,rocm", [
    (b"# The wheel is shipped for each chip; ownership stays with the user\n", False),
    (b"from torch.utils.cpp_extension import IS_HIP_EXTENSION\n", True),
    (b"if torch.version.hip:\n    pass\n", True),
    (b"CC = 'hipcc'\n", True),
    (b"ROCM_HOME = os.environ.get('ROCM_PATH')\n", True),
])
def test_a_setup_py_builds_for_rocm_only_when_it_names_hip_or_rocm_as_a_word(text, rocm):
    from rocmlint.project.python import summarize

    flags = b"ext = CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': ['-gencode', 'arch=compute_90']})\n"
    summary = summarize("setup.py", text + flags)
    assert (summary.rocm_build != 0, summary.cuda_build != 0) == (rocm, not rocm)


@pytest.mark.parametrize("test,written_for_amd", [
    ("cap < (9, 5)", True), ("sm == 94", True), ("cap in ((9, 4), (9, 5))", True), ("cap >= (9, 0)", False),
    ("cap == (10, 3)", False), ("cap >= ((9, 4), {1: 2})", False), ("cap == ({1},)", False),
])
def test_a_number_only_amd_gpus_report_marks_a_test_written_for_amd(test, written_for_amd):
    from rocmlint.python.capability import names_amd_capability

    assert names_amd_capability(ast.parse(test, mode="eval").body, lambda name: None) is written_for_amd


def test_flash_attn_in_tests_benchmarks_examples_and_scripts_is_their_dependency(tmp_path):
    importing = "import torch\nfrom flash_attn import flash_attn_func\n\n\ndef run(q, k, v):\n    return flash_attn_func(q, k, v)\n"
    program = importing + "\n\nif __name__ == '__main__':\n    run(1, 2, 3)\n"
    _write(tmp_path, {"pkg/__init__.py": "from . import runner\n", "pkg/attention.py": importing,
                      "tests/test_attention.py": importing, "bench/compare.py": importing,
                      "scripts/bench_attention.py": importing, "pkg/tests_util.py": importing,
                      "tools/throughput_packing.py": program, "pkg/runner.py": program,
                      # an example op built on flash-attn, imported by the example that shows it
                      "examples/ring_attention/core/ring_impl.py": importing,
                      "examples/ring_attention/ring.py": "from .core.ring_impl import run\n" + importing,
                      "pkg/examples_util.py": importing})
    found = _check(tmp_path, ".")
    # A script nothing imports runs with flash-attn; one the package imports is a module others load.
    assert sorted(f["path"] for f in found if f["code"] == "ROC110") == [
        "pkg/attention.py", "pkg/examples_util.py", "pkg/runner.py", "pkg/tests_util.py"]


@pytest.mark.parametrize("imported, nvidia_only", [
    ("from flashinfer.mla import trtllm_batch_decode_with_kv_cache_mla", True),
    ("from flashinfer.mla import BatchMLAPagedAttentionWrapper", False),
    # the project's own module that asks whether TensorRT-LLM is usable loads everywhere
    ("from attn.trtllm_usable import trtllm_usable", False),
])
def test_a_module_importing_tensorrt_llm_kernels_never_loads_on_rocm(tmp_path, imported, nvidia_only):
    _write(tmp_path, {"attn/__init__.py": "", "attn/trtllm_usable.py": "def trtllm_usable():\n    return False\n",
                      "attn/mla_decode.py": f"""\
        import torch
        {imported}


        def supported():
            return torch.cuda.get_device_capability()[0] >= 10
        """, "attn/backend.py": "from attn.mla_decode import supported\n"})
    model = _model(tmp_path)
    for rel in ("attn/mla_decode.py", "attn/backend.py"):  # and what imports it at module level
        assert (model.module_verdict(tmp_path / rel) is not None) is nvidia_only
    assert (_check(tmp_path, ".") == []) is nvidia_only


@pytest.mark.parametrize("named, reported", [
    # kernels and an image for gfx950 and gfx1250 only: OCP E4M3 is their format
    ({"kern/ops/gfx950/__init__.py": "ARCH = 'gfx950'\n", "docker/Dockerfile.amd": "FROM runner:rocm7-gfx950\n"},
     False),
    ({"kern/ops/gfx950/__init__.py": "# gfx950 and gfx1250 (MI355X, MI450)\n"}, False),
    # an image built for MI300, or a Python file naming MI300X beside its gfx target: FNUZ there
    ({"kern/ops/gfx950/__init__.py": "ARCH = 'gfx950'\n", "Dockerfile.rocm": "ENV PYTORCH_ROCM_ARCH=gfx942\n"}, True),
    ({"kern/ops/gfx950/__init__.py": "", "kern/ops/gfx942/__init__.py": ""}, True),
    ({"docker/Dockerfile": "FROM rocm/pytorch:latest  # MI300X and MI355X\n"}, True),
    # a module that special-cases some GPUs (`arch in ("gfx1100", "gfx1201")`) says nothing of the rest
    ({"kern/rdna.py": "RDNA = ('gfx1100', 'gfx1201')\n"}, True),
    ({}, True),  # no AMD GPU named: MI300 may run it
])
def test_fp8_format_follows_the_amd_gpus_the_project_names(tmp_path, named, reported):
    found = _findings_in_project(tmp_path, "ROC107", {**named, "kern/__init__.py": "", "kern/quant.py":
                                 "import torch\n\n\ndef quantize(x, scale):\n    q = (x / scale).to(torch.float8_e4m3fn)\n"
                                 "    return torch._scaled_mm(q, q.t(), scale, scale)\n"})
    assert bool(found) is reported


@pytest.mark.parametrize("skip, reported", [
    ('deep_gemm = pytest.importorskip("deep_gemm")', False),  # skipped on ROCm: nothing after runs there
    ('kern_ext = pytest.importorskip("kern.sm90_ext")', False),  # a project module the ROCm build never loads
    ('np = pytest.importorskip("numpy")', True),
])
def test_importorskip_of_an_nvidia_only_module_skips_on_rocm(tmp_path, skip, reported):
    (tmp_path / ".git").mkdir()
    _write(tmp_path, {"kern/__init__.py": "", "kern/sm90_ext.py": "import cutlass\n", "tests/test_pdl.py": f"""\
        import pytest
        import torch

        {skip}


        def test_pdl_chain():
            if torch.cuda.get_device_capability()[0] < 9:
                pytest.skip("needs SM90")
            run_wgmma_chain()
        """})
    found = [f for f in _check(tmp_path, ".") if f["code"] == "ROC106"]
    assert bool(found) is reported


@pytest.mark.parametrize("platform_test, reported", [
    ('if current_platform().vendor != "nvidia":\n        return False', False),
    ('platform = current_platform()\n    if not platform.is_nvidia:\n        return False', False),
    ('if current_platform().device_count < 1:\n        return False', True),
])
def test_the_platform_objects_vendor_decides_on_rocm(tmp_path, platform_test, reported):
    _write(tmp_path, {"kern/__init__.py": "", "kern/route.py": f"""\
import torch

from kern.platform import current_platform


def use_tcgen05_route():
    {platform_test}
    return torch.cuda.get_device_capability() >= (10, 0)
"""})
    found = [f for f in _check(tmp_path, ".") if f["code"] == "ROC106"]
    assert bool(found) is reported


def test_a_failed_import_of_an_nvidia_only_submodule_is_none_on_rocm(tmp_path):
    _write(tmp_path, {"kern/__init__.py": "", "kern/thirdparty/__init__.py": "",
                      "kern/thirdparty/deep_gemm.py": "import deep_gemm\n", "kern/model.py": """\
import torch

try:
    from kern.thirdparty import deep_gemm
except ImportError:
    deep_gemm = None


def warmup():
    if deep_gemm is None:
        return
    if torch.cuda.get_device_capability()[0] < 10:
        return
    deep_gemm.warmup_tcgen05()
"""})
    assert [f for f in _check(tmp_path, ".") if f["code"] == "ROC106"] == []


@pytest.mark.parametrize("packaging, quiet", [
    ({"pyproject.toml": '[project]\nname = "zoo"\ndependencies = ["torch", "flash-attn>=2.6"]\n'}, True),
    ({"requirements.txt": "torch\nflash_attn==2.8.3\n"}, True),
    ({"setup.py": "from setuptools import setup\nsetup(name='zoo', install_requires=['flash-attn'])\n"}, True),
    # a marker ROCm machines (Linux) still meet keeps it required
    ({"pyproject.toml": '[project]\nname = "zoo"\ndependencies = ["flash-attn; platform_machine == \'x86_64\'"]\n'},
     True),
    # an extra, a Windows-only marker, or an AMD requirement file that leaves it out: optional on ROCm
    ({"pyproject.toml": '[project]\nname = "zoo"\n[project.optional-dependencies]\nfa = ["flash-attn"]\n'}, False),
    ({"pyproject.toml": '[project]\nname = "zoo"\ndependencies = ["flash-attn; sys_platform == \'win32\'"]\n'},
     False),
    ({"requirements.txt": "flash-attn\n", "requirements_rocm.txt": "torch\n"}, False),
    ({}, False),
])
def test_flash_attn_the_project_requires_everywhere_is_its_dependency(tmp_path, packaging, quiet):
    found = _findings_in_project(tmp_path, "ROC110", {**packaging, "zoo/__init__.py": "", "zoo/attention.py":
                                 "import torch\nfrom flash_attn import flash_attn_func\n\n\ndef run(q, k, v):\n"
                                 "    return flash_attn_func(q, k, v)\n"})
    assert (found == []) is quiet


@pytest.mark.parametrize("cmake, rocm_aware, quiet", [
    ("project(fastkern LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\n", True, True),
    ("project(fastkern LANGUAGES CXX)\nfind_package(CUDAToolkit REQUIRED)\n", True, True),
    # a build that names HIP serves ROCm too
    ("project(fastkern LANGUAGES CXX)\nif(USE_ROCM)\n  find_package(hip REQUIRED)\nelse()\n"
     "  find_package(CUDAToolkit REQUIRED)\nendif()\n", True, False),
    # a project that never tests for ROCm is being ported: its CUDA-only parts are the work
    ("project(fastkern LANGUAGES CXX CUDA)\n", False, False),
])
def test_a_cuda_only_cmake_component_never_runs_on_rocm(tmp_path, cmake, rocm_aware, quiet):
    (tmp_path / ".git").mkdir()  # one repository: the component's pyproject.toml is not the root
    _write(tmp_path, {
        "app/__init__.py": "",
        "app/platform.py": "import torch\n\nON_ROCM = torch.version.hip is not None\n" if rocm_aware else "",
        "fastkern/CMakeLists.txt": cmake,
        "fastkern/pyproject.toml": "[project]\nname = 'fastkern'\n",
        "fastkern/python/fastkern/__init__.py": "",
        "fastkern/python/fastkern/gemm.py": "import torch\n\n\ndef use_fp8_gemm():\n"
                                             "    return torch.cuda.get_device_capability() >= (8, 9)\n",
    })
    found = [f for f in _check(tmp_path, ".") if f["code"] == "ROC106"]
    assert (found == []) == quiet, found


@pytest.mark.parametrize("archs, reported", [
    ("gfx1100;gfx1101;gfx1200;gfx1201", False),  # RDNA only: OCP E4M3 (gfx12) or emulated
    ("gfx90a;gfx942;gfx1201", True),  # MI300 (gfx942) takes FNUZ
    (None, True),  # no AMD target named: MI300 may run it
])
def test_fp8_format_follows_the_amd_gpus_the_build_names(tmp_path, archs, reported):
    (tmp_path / ".git").mkdir()
    setup = "from setuptools import setup\n"
    if archs is not None:
        setup += f"import os\n\nHIP_ARCHS = os.environ.get('HIP_ARCHS', '{archs}')\n"
    _write(tmp_path, {
        "setup.py": setup + "setup(name='fp8kit')\n",
        "fp8kit/__init__.py": "",
        "fp8kit/quant.py": "import torch\n\n\ndef quantize(x, scale):\n"
                           "    q = (x / scale).to(torch.float8_e4m3fn)\n"
                           "    return torch._scaled_mm(q, q.t(), scale, scale)\n",
    })
    found = [f for f in _check(tmp_path, ".") if f["code"] == "ROC107"]
    assert bool(found) is reported


_FUSER_PROBE = """\
def fuser_version():
    try:
        import {module}
    except ImportError:
        return None
    return {module}.version()
"""


@pytest.mark.parametrize("probed, reported", [("nvfuser", False), ("nvfuser_direct", False), ("triton", True)])
def test_a_sibling_skip_mark_that_skips_on_rocm_settles_a_capability_skip(tmp_path, probed, reported):
    # nvFuser has no ROCm build: the probe returns None there, so the first mark skips the test
    # on ROCm whatever the capability mark says. A probe of a package ROCm has decides nothing.
    # (The marks are handed to a test factory, as a tuple.)
    marks = ("pytest.mark.skipif(fuser_version() is None, reason='needs the fuser'), "
             "pytest.mark.skipif(torch.cuda.get_device_capability()[0] < 9, reason='needs compute capability 9.0')")
    found = _findings_in_project(tmp_path, "ROC106", {
        "fuser/__init__.py": "", "fuser/probe.py": _FUSER_PROBE.format(module=probed),
        "tests/test_fuser.py": "import pytest\nimport torch\n\nfrom fuser.probe import fuser_version\n\n\n"
                               f"@instantiate(decorators=({marks}))\ndef test_tma_load():\n    run_tma_kernel()\n"})
    assert [f["line"] for f in found] == ([7] if reported else [])


_TOOLKIT_VERSION = """\
import subprocess

import torch.utils.cpp_extension


def installed_cuda_version():
    cuda_home = torch.utils.cpp_extension.CUDA_HOME
    if cuda_home is None:
        {without_toolkit}
    output = subprocess.check_output([cuda_home + "/bin/nvcc", "-V"], universal_newlines=True)
    return tuple(int(part) for part in output.split("release ")[1].split(",")[0].split("."))
"""


@pytest.mark.parametrize("without_toolkit, reported", [
    ("raise RuntimeError('CUDA_HOME does not exist, unable to compile CUDA op(s)')", False),
    ("return (0, 0)", True),  # returns on ROCm too: the code after the call runs there
])
def test_a_helper_of_another_module_that_raises_on_rocm_ends_the_rocm_path(tmp_path, without_toolkit, reported):
    found = _findings_in_project(tmp_path, "ROC105", {
        "ops/__init__.py": "", "ops/builder.py": _TOOLKIT_VERSION.format(without_toolkit=without_toolkit),
        "ops/moe.py": "import torch\n\nfrom .builder import installed_cuda_version\n\n\ndef compatible():\n"
                      "    if torch.cuda.is_available():\n        major, _ = installed_cuda_version()\n"
                      "        return major == int(torch.version.cuda.split('.')[0])\n    return False\n"})
    assert [f["line"] for f in found] == ([9] if reported else [])


@pytest.mark.parametrize("package, reported", [("deep_gemm", False), ("magi_attention", False), ("einops", True)])
def test_find_spec_of_an_nvidia_only_package_is_none_on_rocm(tmp_path, package, reported):
    found = _findings_in_project(tmp_path, "ROC106", {"attn.py": f"""\
import importlib.util

import torch

HAS_KERNELS = importlib.util.find_spec("{package}") is not None


def attention(q):
    if HAS_KERNELS and torch.cuda.get_device_capability()[0] == 9:
        return hopper_wgmma_attention(q)
    return q
"""})
    assert [f["line"] for f in found] == ([9] if reported else [])


_ARCH = "import torch\n\n\ndef is_hopper():\n    return torch.cuda.get_device_capability()[0] == 9\n"


@pytest.mark.parametrize("caller, reported", [
    # the answer reaches an NVIDIA-only kernel on MI200/MI300 (which report 9.x)
    ("def attention(q):\n    if is_hopper():\n        return wgmma_attention(q)\n    return q\n", True),
    # only asked where an NVIDIA-only library is present: never on ROCm
    ("import importlib.util\n\nHAS_MAGI = importlib.util.find_spec('magi_attention') is not None\n\n\n"
     "def attention(q):\n    if HAS_MAGI and is_hopper():\n        return wgmma_attention(q)\n    return q\n", False),
    # only picks a tile size
    ("def tiles():\n    block_m = 128 if is_hopper() else 64\n    return block_m\n", False),
])
@pytest.mark.parametrize("imported_through", ["module", "package"])
def test_a_predicate_is_judged_by_its_callers_in_other_modules(tmp_path, caller, reported, imported_through):
    # `common/__init__.py` re-exports the predicate; the caller imports it from the package
    source = "common" if imported_through == "package" else "common.arch"
    found = _findings_in_project(tmp_path, "ROC106", {
        "common/__init__.py": "from .arch import is_hopper\n", "common/arch.py": _ARCH,
        "model/__init__.py": "", "model/dit.py": f"from {source} import is_hopper\n\n\n{caller}"})
    assert [(f["path"], f["line"]) for f in found] == ([("common/arch.py", 5)] if reported else [])


def test_a_cached_predicate_result_is_checked_again_when_a_caller_in_another_module_changes(tmp_path):
    _write(tmp_path, {"common/__init__.py": "", "common/arch.py": _ARCH, "model/__init__.py": "",
                      "model/dit.py": "from common.arch import is_hopper\n\n\n"
                                      "def attention(q):\n    if is_hopper():\n        return wgmma_attention(q)\n    return q\n"})
    (tmp_path / ".git").mkdir()

    def cached_findings() -> list:
        out = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--exit-zero", "--select", "ROC106",
                              "--output-format", "json", "."], cwd=tmp_path, capture_output=True, text=True)
        return [(f["path"], f["line"]) for f in json.loads(out.stdout)]

    assert cached_findings() == [("common/arch.py", 5)]
    time.sleep(0.01)
    (tmp_path / "model/dit.py").write_text("from common.arch import is_hopper\n\n\n"
                                           "def tiles():\n    return 128 if is_hopper() else 64\n")
    assert cached_findings() == []  # arch.py itself did not change: its stored result rested on dit.py
