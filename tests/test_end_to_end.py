"""What a user does: lint the example project, fix it, build the fixed kernels for AMD."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def rocmlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_reference_kernels_flag_exactly_their_before_forms():
    """The library shows the correct patterns: rocmlint flags only the CUDA-isms of the
    ``ROCMLINT_BEFORE`` branches, each where a ``ruleid`` annotation says (``todoruleid``: a
    known gap, promoted once it fires)."""
    from fixture_harness import read_annotations

    proc = rocmlint("check", "--no-cache", "--output-format", "json", str(ROOT / "rocmlint" / "reference"),
                    cwd=ROOT)
    fired: dict[str, set[tuple[int, str]]] = {}
    for finding in json.loads(proc.stdout):
        fired.setdefault(Path(finding["path"]).name, set()).add((finding["line"], finding["code"]))
    for kernel in sorted((ROOT / "rocmlint" / "reference" / "kernels").glob("*.hip")):
        annotations = read_annotations(kernel.read_text(), "//")
        found = fired.get(kernel.name, set())
        assert found == annotations.ruleid, f"{kernel.name}: fired {sorted(found)}, annotated {sorted(annotations.ruleid)}"
        assert not found & annotations.todo, f"{kernel.name}: todoruleid now fires, promote it"
    assert set(fired) <= {kernel.name for kernel in (ROOT / "rocmlint" / "reference" / "kernels").glob("*.hip")}


def test_example_project_fix_then_amd_build(tmp_path):
    project = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", project)
    if shutil.which("clang++-19") is not None:
        # Before the fix the AMD build fails: that is what the fix is for.
        unfixed = rocmlint("verify", "--offload-arch", "gfx942", "--output-format", "json", "stream_compact.cu",
                           cwd=project)
        assert unfixed.returncode == 1 and json.loads(unfixed.stdout)[0]["built"] is False
    before = json.loads(rocmlint("check", "--no-cache", "--output-format", "json", ".", cwd=project).stdout)
    codes = {f["code"] for f in before}
    assert {"ROC101", "ROC102", "ROC103", "ROC201", "ROC202", "ROC203", "ROC204", "ROC205", "ROC208",
            "ROC303"} <= codes
    assert "ROC108" not in codes  # opt-in: the TF32 switches are reported when asked for
    fixed = rocmlint("check", "--no-cache", "--fix", "--unsafe-fixes", "--extend-select", "ROC108", ".", cwd=project)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "#if defined(__HIP_PLATFORM_AMD__)" in (project / "stream_compact.cu").read_text()
    # Adjacent gated statements share one block; the comment above them stays above.
    assert ("    # TF32 matmuls and convolutions on Ampere and newer\n    if not IS_ROCM:\n"
            "        torch.backends.cuda.matmul.allow_tf32 = True\n"
            "        torch.backends.cudnn.allow_tf32 = True\n") in (project / "train.py").read_text()
    if shutil.which("clang++-19") is None:
        pytest.skip("clang-19 not installed: cannot build the AMD view")
    built = rocmlint("verify", "--offload-arch", "gfx942,gfx1100", "--output-format", "json",
                     "stream_compact.cu", cwd=project)
    rows = json.loads(built.stdout)
    assert built.returncode == 0, built.stdout + built.stderr
    assert {(r["arch"], r["built"], r["wavefront_size"]) for r in rows} == {("gfx942", True, 64),
                                                                            ("gfx1100", True, 32)}
