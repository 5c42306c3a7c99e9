"""The manifest half: readers map parsed values to the right bytes, rules see what pip installs."""
from __future__ import annotations

from pathlib import Path

import pytest

from rocmlint.config import ConfigResolver, Settings
from rocmlint.discovery import discover
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.languages import ParseFailure, language_for
from rocmlint.manifest import LANGUAGE
from rocmlint.manifest.kinds import manifest_kind, named_for_another_platform
from rocmlint.manifest.requirement import marker_reaches_rocm
from rocmlint.runner import fix_buffer


def deps(name: str, text: str):
    ctx = LANGUAGE.make_context(name, text.encode(), Settings())
    return [(ctx.text(d.span), d.optional) for d in ctx.manifest.dependencies], ctx


def findings(name: str, text: str, select: str = "ROC4"):
    settings = Settings(select=(select,))
    rules = active_rules(settings, language_for(name), Path(name))
    return analyse_buffer(name, text.encode(), language_for(name), settings, rules)


@pytest.mark.parametrize("name,kind", [
    ("pyproject.toml", "pyproject"), ("requirements-dev.txt", "requirements"), ("requirements/cuda.txt", "requirements"),
    ("dev-requirements.in", "requirements"), ("constraints.txt", "requirements"), ("setup.cfg", "setup_cfg"),
    ("setup.py", "setup_py"), ("environment.yml", "conda"), ("conda-gpu.yaml", "conda"), ("Dockerfile", "dockerfile"),
    ("docker/Dockerfile.rocm", "dockerfile"), ("serve.dockerfile", "dockerfile"), ("launch.sh", "shell"),
    ("MANIFEST.in", None), ("config.toml", None), ("notes.txt", None), ("data/train.yaml", None), ("train.py", None),
])
def test_manifest_kinds_by_name(name, kind):
    assert manifest_kind(name) == kind


@pytest.mark.parametrize("path,other", [
    ("requirements-cuda.txt", True), ("requirements/cu121.txt", True), ("docker/Dockerfile.cuda", True),
    ("backends/gaudi/server/requirements.txt", True), ("requirements/xpu.txt", True),
    ("requirements-rocm.txt", False), ("requirements.txt", False), ("requirements-dev.txt", False),
    ("cuda/requirements-rocm.txt", False), ("examples/requirements_colab.txt", True),
    ("requirements_macos_amd64.txt", True), ("requirements_amd.txt", False),  # amd64 is the CPU
])
def test_files_named_for_another_platform(path, other):
    assert named_for_another_platform(path) is other


@pytest.mark.parametrize("rel,nvidia_only", [
    ("tools/dcgm/monitor.py", True), ("analyzer/tb_dcgm_types/device.py", True), ("utils/nvml_power.py", True),
    ("numa/numa-set-pynvml.py", True),
    ("quantizers/modelopt/quantizer.py", True), ("backends/trtllm_rollout/worker.py", True),
    ("utils/power.py", False), ("models/modeling_llama.py", False), ("kernels/amd/attention.py", False),
])
def test_code_named_for_an_nvidia_only_product(rel, nvidia_only):
    from rocmlint.project.tree import named_for_other_platform

    assert (named_for_other_platform(rel) is not None) is nvidia_only


def test_pyproject_spans_follow_their_table_when_a_string_repeats():
    text = ('[project]\nname = "x"\ndependencies = ["numpy", "torch>=2.4"]\n\n'
            '[project.optional-dependencies]\ncuda = ["numpy", "cupy-cuda12x"]\n')
    found, ctx = deps("pyproject.toml", text)
    assert found == [("numpy", False), ("torch>=2.4", False), ("numpy", True), ("cupy-cuda12x", True)]
    third = ctx.manifest.dependencies[2]
    assert ctx.lines.position(third.span.start)[0] == 6


def test_pyproject_spans_are_bytes_after_non_ascii_text():
    text = '[project]\ndescription = "Entraînement rapide ✓"\ndependencies = ["torch==2.5.1+cu121"]\n'
    found, _ = deps("pyproject.toml", text)
    assert found == [("torch==2.5.1+cu121", False)]


def test_poetry_bare_version_is_an_exact_pin_and_optional_flag_is_read():
    text = ('[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "2.3.1"\n'
            'cupy-cuda12x = {version = "^13", optional = true}\n')
    _, ctx = deps("pyproject.toml", text)
    got = {str(d.requirement): d.optional for d in ctx.manifest.dependencies}
    assert got == {"torch==2.3.1": False, "cupy-cuda12x": True}


def test_uv_explicit_index_is_required_when_a_source_uses_it_on_linux():
    text = ('[project]\nname = "x"\ndependencies = ["torch>=2.6"]\n\n[[tool.uv.index]]\nname = "cu128"\n'
            'url = "https://download.pytorch.org/whl/cu128"\nexplicit = true\n\n'
            '[tool.uv.sources]\ntorch = [{ index = "cu128", marker = "sys_platform == \'linux\'" }]\n')
    assert [f.line for f in findings("pyproject.toml", text)] == [7]
    windows_only = text.replace("sys_platform == 'linux'", "sys_platform == 'win32'")
    assert findings("pyproject.toml", windows_only) == []


def test_requirements_continuations_options_and_comments():
    text = ("--index-url https://download.pytorch.org/whl/cu121\n"
            "torch==2.5.1 \\\n    --hash=sha256:abc  # pinned\n-e ./local\nnumpy>=1.26  # ok\n")
    found, ctx = deps("requirements.txt", text)
    assert found == [("torch==2.5.1", False), ("numpy>=1.26", False)]
    assert [ctx.text(i.span) for i in ctx.manifest.indexes] == ["https://download.pytorch.org/whl/cu121"]


def test_setup_cfg_and_setup_py_read_install_requires_and_extras():
    cfg = "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    numpy\n    triton==3.0.0\n\n" \
          "[options.extras_require]\ncuda = cupy-cuda12x\n"
    assert deps("setup.cfg", cfg)[0] == [("numpy", False), ("triton==3.0.0", False), ("cupy-cuda12x", True)]
    py = 'from setuptools import setup\nREQ = ["flash-attn"]\nsetup(install_requires=REQ, extras_require={"x": ["jax[cuda12]"]})\n'
    assert deps("setup.py", py)[0] == [('"flash-attn"', False), ('"jax[cuda12]"', True)]


def test_setup_py_is_read_by_both_halves():
    text = ('from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n'
            'setup(install_requires=["torch==2.4.0"],\n'
            '      ext_modules=[CUDAExtension("k", ["k.cu"], extra_compile_args={"nvcc": ["-Xptxas=-v"]})])\n')
    settings = Settings(select=("ROC109", "ROC402"))
    rules = active_rules(settings, "python", Path("setup.py"))
    codes = sorted(f.code for f in analyse_buffer("setup.py", text.encode(), "python", settings, rules))
    assert codes == ["ROC109", "ROC402"]
    # Other Python files never run the manifest rules.
    assert {r.code for r in active_rules(settings, "python", Path("train.py"))} == {"ROC109"}


def test_dockerfile_spans_across_continuation_lines():
    text = ("FROM rocm/pytorch:latest\nRUN apt-get update && \\\n    pip3 install --no-cache-dir \\\n"
            "      'xformers==0.0.28+cu121' numpy && echo done\n")
    result = findings("Dockerfile", text)
    assert [(f.line, f.column, f.end_column) for f in result] == [(4, 8, 30)]


def test_dockerfile_lines_are_numbered_by_newlines_only():
    """A form feed in a comment is not a line end for Docker: the RUN line after it is found."""
    text = "FROM rocm/pytorch:latest\n# page \x0c break\nRUN pip install cupy-cuda12x\n"
    assert [(f.code, f.line) for f in findings("Dockerfile", text)] == [("ROC401", 3)]


def test_invalid_manifests_are_parse_errors_not_crashes():
    assert [f.code for f in findings("pyproject.toml", "[project\ndependencies = ['cupy-cuda12x']\n")] == ["ROC001"]
    assert [f.code for f in findings("environment.yml", "dependencies: [cudatoolkit\n  - : :\n")] == ["ROC001"]
    with pytest.raises(ParseFailure):
        LANGUAGE.make_context("setup.cfg", b"[options\ninstall_requires = cupy-cuda12x\n", Settings())


@pytest.mark.parametrize("marker,reaches", [
    (None, True), ("sys_platform == 'linux'", True), ("sys_platform == 'win32'", False),
    ("platform_system == 'Darwin'", False), ("python_version >= '3.10'", True), ("extra == 'cuda'", False),
    ("platform_machine == 'x86_64' and sys_platform != 'darwin'", True),
])
def test_markers_that_exclude_rocm_machines(marker, reaches):
    assert marker_reaches_rocm(marker) is reaches


def test_exact_torch_pins_are_reported_once_per_manifest():
    text = "torch==2.4.0\ntorchvision==0.19.0\ntorchaudio==2.4.0\n"
    result = findings("requirements.txt", text, "ROC402")
    assert len(result) == 1 and "`torchvision==0.19.0`" in result[0].message


def test_moving_into_an_existing_cuda_extra_keeps_the_nvidia_install():
    text = ('[project]\nname = "x"\ndependencies = ["numpy", "cupy-cuda12x>=13", "einops"]\n\n'
            '[project.optional-dependencies]\ncuda = ["nvidia-ml-py"]\n')
    settings = Settings(select=("ROC401",))
    rules = active_rules(settings, "manifest", Path("pyproject.toml"))
    outcome = fix_buffer(text.encode(), "\n", "pyproject.toml", "manifest", settings, rules, unsafe=True)
    assert outcome.buffer.decode() == ('[project]\nname = "x"\ndependencies = ["numpy", "einops"]\n\n'
                                       '[project.optional-dependencies]\ncuda = ["cupy-cuda12x>=13", "nvidia-ml-py"]\n')
    assert LANGUAGE.nvidia_view(outcome.buffer, "pyproject.toml", settings) == \
        LANGUAGE.nvidia_view(text.encode(), "pyproject.toml", settings)


def test_nvidia_view_sees_a_dropped_requirement():
    before = b'[project]\nname = "x"\ndependencies = ["numpy", "cupy-cuda12x"]\n'
    after = b'[project]\nname = "x"\ndependencies = ["numpy"]\n'
    moved = after + b'\n[project.optional-dependencies]\ncuda = ["cupy-cuda12x"]\n'
    view = LANGUAGE.nvidia_view
    assert view(after, "pyproject.toml", Settings()) != view(before, "pyproject.toml", Settings())
    assert view(moved, "pyproject.toml", Settings()) == view(before, "pyproject.toml", Settings())


def test_discovery_finds_manifests_by_name(tmp_path):
    for name in ("pyproject.toml", "requirements/cuda.txt", "docker/Dockerfile", "scripts/run.sh", "MANIFEST.in",
                 "config.toml", "README.md"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[project]\n" if name.endswith(".toml") else "x\n")
    found = {t.display for t in discover([str(tmp_path)], ConfigResolver(), cwd=tmp_path)}
    assert found == {"pyproject.toml", "requirements/cuda.txt", "docker/Dockerfile", "scripts/run.sh"}


def test_flash_attn_import_in_flash_attn_itself_or_behind_a_check_is_not_reported():
    settings = Settings(select=("ROC110",))
    rules = active_rules(settings, "python")
    own = analyse_buffer("flash_attn/modules/mha.py", b"from flash_attn.ops import rms_norm\n", "python",
                         settings, rules)
    behind = analyse_buffer("model.py", b"HAS_FA = True\nif HAS_FA:\n    import flash_attn\n", "python",
                            settings, rules)
    plain = analyse_buffer("model.py", b"from flash_attn.ops import rms_norm\n", "python", settings, rules)
    assert (own, behind, [f.code for f in plain]) == ([], [], ["ROC110"])


def test_fallback_fix_only_where_every_call_fits():
    settings = Settings(select=("ROC110",))
    rules = active_rules(settings, "python")
    fits = b"from flash_attn import flash_attn_func\n\ny = flash_attn_func(q, k, v, causal=True)\n"
    window = b"from flash_attn import flash_attn_func\n\ny = flash_attn_func(q, k, v, window_size=(8, 0))\n"
    applicability = [analyse_buffer("m.py", src, "python", settings, rules)[0].fix.applicability.value
                     for src in (fits, window)]
    assert applicability == ["unsafe", "display-only"]


def test_shell_lines_inside_a_vendor_check_are_not_reported():
    text = ("if command -v rocm-smi >/dev/null; then\n  echo rocm\nelse\n"
            "  export TORCHINDUCTOR_MAX_AUTOTUNE=1\nfi\nTORCHINDUCTOR_MAX_AUTOTUNE_GEMM=1 python bench.py\n")
    assert [f.line for f in findings("run.sh", text, "ROC111")] == [6]


def test_bare_wheel_url_lines_are_read_with_their_marker():
    text = ("https://example.org/releases/llama_cpp_binaries-0.1.0+cu124-py3-none-linux_x86_64.whl; "
            "platform_system == \"Linux\"\n"
            "https://example.org/releases/llama_cpp_binaries-0.1.0+cu124-py3-none-win_amd64.whl; "
            "platform_system == \"Windows\"\n")
    assert [(f.code, f.line) for f in findings("requirements.txt", text)] == [("ROC401", 1)]


def test_a_manifest_with_a_rocm_variant_beside_it_is_the_nvidia_one(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("cupy-cuda12x\n")
    monkeypatch.chdir(tmp_path)
    assert [f.code for f in findings("requirements.txt", "cupy-cuda12x\n")] == ["ROC401"]
    (tmp_path / "requirements_amd.txt").write_text("cupy-rocm-6-0\n")
    assert findings("requirements.txt", "cupy-cuda12x\n") == []
    assert [f.code for f in findings("requirements_amd.txt", "cupy-cuda12x\n")] == ["ROC401"]


def test_pip_freeze_output_is_a_lock_file_for_exact_pins():
    frozen = "".join(f"package{i}==1.{i}.0\n" for i in range(20)) + "torch==2.7.0\n"
    assert findings("requirements.txt", frozen, "ROC402") == []
    loose = "".join(f"package{i}>=1.{i}\n" for i in range(20)) + "torch==2.7.0\n"
    assert [f.line for f in findings("requirements.txt", loose, "ROC402")] == [21]


def test_locks_hold_cuda_only_when_named_for_rocm():
    lock = "# This file was autogenerated by uv via the following command:\nnvidia-cublas-cu12==12.6.4.1\n"
    assert findings("requirements.txt", lock, "ROC401") == []
    assert [f.line for f in findings("requirements_rocm.txt", lock, "ROC401")] == [2]


def test_a_new_rocm_variant_invalidates_the_cached_result(tmp_path, monkeypatch):
    from rocmlint.cli import main

    (tmp_path / "requirements.txt").write_text("cupy-cuda12x\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "-q", "requirements.txt"]) == 1
    (tmp_path / "requirements-rocm.txt").write_text("cupy-rocm-6-0\n")
    assert main(["check", "-q", "requirements.txt"]) == 0


def test_a_one_line_shell_if_closes_on_its_own_line():
    text = ('if [ -e /dev/kfd ]; then echo "AMD GPU"; fi\nexport TORCHINDUCTOR_MAX_AUTOTUNE=1\n'
            'if [ -e /dev/kfd ]; then export TORCHINDUCTOR_MAX_AUTOTUNE=0; fi\n')
    assert [f.line for f in findings("run.sh", text, "ROC111")] == [2]


# pip lines as pip reads them, includes, pip sections, sources -----------------------------
def test_several_requirements_on_a_line_and_options_after_them():
    text = "torch==2.1.2+cu118 torchvision==0.16.2+cu118 --extra-index-url https://download.pytorch.org/whl/cu118\n"
    found, ctx = deps("requirements.txt", text)
    assert found == [("torch==2.1.2+cu118", False), ("torchvision==0.16.2+cu118", False)]
    assert [ctx.text(i.span) for i in ctx.manifest.indexes] == ["https://download.pytorch.org/whl/cu118"]
    assert [f.column for f in findings("requirements.txt", text, "ROC401")] == [1, 20, 64]
    # A requirement with spaces inside stays one requirement; a path stays nothing.
    assert deps("requirements.txt", 'torch >= 2.4 ; python_version < "3.13"\n./vendor/pkg\n')[0] == [
        ('torch >= 2.4 ; python_version < "3.13"', False)]


def test_a_hand_written_pinned_file_with_an_index_is_not_pip_freeze_output():
    pins = "".join(f"pkg{i}=={i}.0\n" for i in range(20))
    assert deps("requirements.txt", pins + "torch==2.4.0\n")[1].manifest.lock  # pip freeze
    text = "--extra-index-url https://download.pytorch.org/whl/cu121\n" + pins + "torch==2.4.0\n"
    assert not deps("requirements.txt", text)[1].manifest.lock
    assert [(f.code, f.line) for f in findings("requirements.txt", text)] == [("ROC401", 1), ("ROC402", 22)]


def _lint(root: Path, name: str) -> list:
    from rocmlint.cli import main  # noqa: F401 - the command line path is tested elsewhere
    from rocmlint.project import Project, activate

    project = Project(root)
    activate(project)
    try:
        settings = Settings(select=("ROC4",))
        path = root / name
        return analyse_buffer(str(path), path.read_bytes(), "manifest", settings,
                              active_rules(settings, "manifest", path))
    finally:
        activate(None)


def test_includes_are_followed_inside_the_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "requirements.txt").write_text(
        "-r requirements-cuda.txt\n-r missing.txt\n-r dev.txt\n-r ../outside.txt\n-r https://example.org/r.txt\n"
        "-c requirements-cuda.txt\nnumpy\n")
    (tmp_path / "requirements-cuda.txt").write_text("cupy-cuda12x\n--extra-index-url https://pypi.nvidia.com\n")
    (tmp_path / "dev.txt").write_text("-r requirements.txt\npytest\n")
    found = _lint(tmp_path, "requirements.txt")
    assert [(f.code, f.line) for f in found] == [("ROC401", 1)]  # `-c` installs nothing by itself
    assert "cupy-cuda12x" in found[0].message and "pypi.nvidia.com" in found[0].message
    from rocmlint.manifest.context import ManifestContext
    from rocmlint.project import Project, activate

    activate(Project(tmp_path))
    try:
        ctx = ManifestContext(str(tmp_path / "requirements.txt"), (tmp_path / "requirements.txt").read_bytes(),
                              Settings())
        problems = {i.chain[-1]: i.problem for i in ctx.included if i.line.path != "requirements-cuda.txt" or
                not i.line.constraints}
    finally:
        activate(None)
    assert problems["missing.txt"] == "does not exist: not followed"
    assert problems["../outside.txt"] == "outside the project: not followed"
    assert problems["https://example.org/r.txt"] == "a URL: not followed"
    assert problems["requirements.txt"].startswith("already included (a cycle: requirements.txt -> dev.txt ->")
    assert problems["dev.txt"] == "" and problems["requirements-cuda.txt"] == ""


def test_an_included_file_that_changes_invalidates_the_cached_result(tmp_path, monkeypatch):
    from rocmlint.cli import main

    (tmp_path / "requirements.txt").write_text("-r requirements-cuda.txt\nnumpy\n")
    (tmp_path / "requirements-cuda.txt").write_text("numpy\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "-q", "requirements.txt"]) == 0
    (tmp_path / "requirements-cuda.txt").write_text("cupy-cuda12x\n")
    assert main(["check", "-q", "requirements.txt"]) == 1


def test_explain_shows_what_an_include_line_pulls_in(tmp_path, monkeypatch, capsys):
    from rocmlint.cli import main

    (tmp_path / "requirements.txt").write_text("-r gone.txt\nnumpy\n")
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "--no-cache", "requirements.txt:1"]) == 0
    out = capsys.readouterr().out
    assert "installed on ROCm machines: yes" in out
    assert "include requirements.txt -> gone.txt (requirements.txt:1): does not exist: not followed" in out


def test_conda_pip_items_are_requirement_file_lines():
    text = ("name: x\ndependencies:\n  - python=3.11\n  - pytorch=2.3.1\n  - pip:\n"
            "      - torch==2.3.1\n      - \"torchaudio==2.3.1+cu121 --extra-index-url https://download.pytorch.org/whl/cu121\"\n")
    found = findings("environment.yml", text)
    assert [(f.code, f.line) for f in found] == [("ROC402", 6), ("ROC401", 7), ("ROC401", 7)]  # not conda's pytorch


def test_uv_url_sources_and_poetry_sources_used_by_required_dependencies():
    uv = ('[project]\nname = "x"\ndependencies = ["triton"]\n\n[tool.uv.sources]\n'
          'triton = { url = "https://download.pytorch.org/whl/cu124/triton-3.1.0%2Bcu124-cp311-cp311-linux_x86_64.whl" }\n')
    assert [f.line for f in findings("pyproject.toml", uv, "ROC401")] == [6]
    poetry = ('[tool.poetry.dependencies]\npython = "^3.10"\ntorch = { version = "^2.3", source = "cu121" }\n\n'
              '[[tool.poetry.source]]\nname = "cu121"\nurl = "https://download.pytorch.org/whl/cu121"\n'
              'priority = "explicit"\n')
    assert [f.line for f in findings("pyproject.toml", poetry, "ROC401")] == [7]
    optional = poetry.replace('source = "cu121" }', 'source = "cu121", optional = true }')
    assert findings("pyproject.toml", optional, "ROC401") == []


def test_exact_pins_of_packages_whose_wheels_fix_a_cuda_torch():
    text = '[project]\nname = "x"\ndependencies = ["xformers==0.0.28.post1", "vllm>=0.6"]\n'
    found = findings("pyproject.toml", text, "ROC402")
    assert [f.line for f in found] == [3] and "require one exact CUDA build of torch" in found[0].message
    assert findings("pyproject.toml", text.replace("==0.0.28.post1", ">=0.0.28"), "ROC402") == []


def test_a_lock_named_for_rocm_must_not_pin_pypi_torch():
    lock = "# This file was autogenerated by uv via the following command:\ntorch==2.7.0\ntriton==3.3.0\n"
    assert findings("requirements.txt", lock, "ROC402") == []  # any other lock records what it resolved
    found = findings("requirements_rocm.txt", lock, "ROC402")
    assert [f.line for f in found] == [2] and "`triton==3.3.0`" in found[0].message
    rocm_torch = findings("requirements_rocm.txt", lock.replace("2.7.0", "2.7.0+rocm6.3"), "ROC402")
    assert [f.line for f in rocm_torch] == [3] and "torch==" not in rocm_torch[0].message  # the ROCm build is fine


def test_conda_pytorch_beside_a_cuda_toolkit_is_a_cuda_build():
    text = "name: x\nchannels:\n  - pytorch\ndependencies:\n  - cudatoolkit=11.3\n  - pytorch=1.11.0\n  - numpy\n"
    assert [f.line for f in findings("environment.yml", text, "ROC401")] == [5, 6]
    cpu_only = text.replace("  - cudatoolkit=11.3\n", "")
    assert findings("environment.yml", cpu_only, "ROC401") == []
