"""rocmlint verify: reference library builds, wave sizes, failures, GPU probing, flags.

Runs on Debian with clang-19, lld-19, llvm-19, libamdhip64-dev and rocm-device-libs and no
GPU. GPU presence is faked only through a ``rocminfo`` stub on PATH.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.reference import list_kernels
from rocmlint.verify.compile_flags import flags_for, kept_flags
from rocmlint.verify.targets import DEFAULT_TARGETS, resolve_targets
from rocmlint.verify.toolchain import find_toolchain

HAVE_TOOLCHAIN = find_toolchain().toolchain is not None
needs_toolchain = pytest.mark.skipif(not HAVE_TOOLCHAIN, reason="no HIP-capable clang installed")

ROCMINFO_NO_AGENT = """#!/bin/sh
echo 'ROCk module is NOT loaded, possibly no GPU devices'
exit 1
"""
ROCMINFO_GFX90A = """#!/bin/sh
cat <<'EOF'
ROCk module version 6.8 is loaded
HSA Agents
*******
Agent 1
*******
  Name:                    AMD EPYC 7763 64-Core Processor
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx90a
  Marketing Name:          AMD Instinct MI210
  Device Type:             GPU
  Wavefront Size:          64(0x40)
EOF
"""


def _stub_dir(tmp: Path, rocminfo: str) -> Path:
    folder = tmp / "stub-bin"
    folder.mkdir(exist_ok=True)
    stub = folder / "rocminfo"
    stub.write_text(rocminfo)
    stub.chmod(0o755)
    return folder


def run_verify(*args: str, path_prefix: Path | None = None, path: str | None = None,
               cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ROCM_PATH", "HIP_PATH")}
    env["PATH"] = path if path is not None else os.environ.get("PATH", "")
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env['PATH']}"
    return subprocess.run([sys.executable, "-m", "rocmlint.verify", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600)


def json_rows(done: subprocess.CompletedProcess) -> list[dict]:
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def library_report(tmp_path_factory) -> tuple[int, list[dict]]:
    """The whole library for the six default targets, built once, with no GPU agent."""
    stubs = _stub_dir(tmp_path_factory.mktemp("no-agent"), ROCMINFO_NO_AGENT)
    done = run_verify("--offload-arch", ",".join(DEFAULT_TARGETS), "--output-format", "json",
                      path_prefix=stubs)
    return done.returncode, json_rows(done)


def _after_form(path: Path) -> str:
    """The kernel as `rocmlint verify` builds it: its ROCMLINT_BEFORE branches dropped."""
    done = subprocess.run(["unifdef", "-UROCMLINT_BEFORE", str(path)], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("unifdef") is None, reason="unifdef not installed")
def test_reference_library_is_complete():
    kernels = {kernel.name: kernel.path for kernel in list_kernels()}
    assert len(kernels) >= 10
    for required in ("ballot_compaction", "lane_rank", "wave_reduce", "wave_scan", "wave_size_constexpr",
                     "full_wave_mask", "ptx_idioms", "lane_group_broadcast", "lane_group_leader",
                     "per_wave_shared", "runtime_wave_size", "warp_sync_mask", "warp_vote"):
        assert required in kernels
    for name, path in kernels.items():
        text = path.read_text()
        assert re.search(r"Backs ROC\d{3}", text), f"{name}: header must name the rule(s) it backs"
        assert '#include "harness.h"' in text and "int main()" in text
        assert "#if defined(ROCMLINT_BEFORE)" in text, f"{name}: needs its before form (the CUDA-ism)"
        code = re.sub(r"//[^\n]*", "", _after_form(path))
        assert "ROCMLINT_BEFORE" not in code, name
        assert "__AMDGCN_WAVEFRONT_SIZE" not in code, name
        assert not re.search(r"\basm\b|__asm__", code), f"{name}: no inline assembly on the HIP side"
    assert (path.parent / "vendor.h").is_file()


@needs_toolchain
def test_library_builds_for_default_targets_with_right_wave_sizes(library_report):
    status, rows = library_report
    assert status == 0
    kernels = sorted(kernel.name for kernel in list_kernels())
    assert sorted({(r["target"], r["arch"]) for r in rows}) == sorted(
        (k, a) for k in kernels for a in DEFAULT_TARGETS)
    for row in rows:
        assert row["built"], row
        expected = 64 if row["arch"].startswith("gfx9") else 32
        assert row["wavefront_size"] == expected, row
        assert row["wavefront_from"] in ("code-object notes", "assembly metadata")


@needs_toolchain
def test_runs_skipped_with_reason_when_rocminfo_reports_no_agent(library_report):
    _, rows = library_report
    for row in rows:
        assert row["ran"] is None and row["passed"] is None
        assert "rocminfo reports no gfx agent" in row["reason"]


@needs_toolchain
def test_gpu_agent_whose_run_fails_is_reported_failed(tmp_path):
    stubs = _stub_dir(tmp_path, ROCMINFO_GFX90A)
    done = run_verify("--offload-arch", "gfx90a,gfx1100", "--kernel", "wave_reduce",
                      "--output-format", "json", path_prefix=stubs)
    rows = {row["arch"]: row for row in json_rows(done)}
    assert done.returncode == 1
    on_agent = rows["gfx90a"]
    assert on_agent["built"] and on_agent["passed"] is False and on_agent["ran"] is not None
    assert on_agent["reason"]
    elsewhere = rows["gfx1100"]
    assert elsewhere["ran"] is None and "no gfx1100 GPU" in elsewhere["reason"]


@needs_toolchain
def test_broken_file_reports_compiler_message(tmp_path):
    include = tmp_path / "inc"
    include.mkdir()
    (include / "scale.h").write_text("#define SCALE 3\n")
    good = tmp_path / "good.cu"
    good.write_text('#include "scale.h"\n#ifndef NEEDED\n#error NEEDED not defined\n#endif\n'
                    "__global__ void scale(int* p) { p[threadIdx.x] *= SCALE; }\n")
    broken = tmp_path / "broken.cu"
    broken.write_text("__global__ void broken(int* p) { p[0] = undeclared_value; }\n")
    done = run_verify(str(good), str(broken), "--offload-arch", "gfx942", "-I", str(include),
                      "-D", "NEEDED=1", "--output-format", "json")
    rows = {Path(row["target"]).name: row for row in json_rows(done)}
    assert done.returncode == 1
    assert rows["good.cu"]["built"] and rows["good.cu"]["wavefront_size"] == 64
    assert rows["good.cu"]["ran"] is None and rows["good.cu"]["reason"]
    assert not rows["broken.cu"]["built"]
    assert "undeclared_value" in rows["broken.cu"]["reason"] and "error" in rows["broken.cu"]["reason"]


@needs_toolchain
def test_compile_commands_flags_are_read_never_executed(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "lanes.h").write_text("#define LANES_PER_ITEM 2\n")
    source = tmp_path / "kernel.cu"
    source.write_text('#include "lanes.h"\n#if FROM_DB != 1\n#error FROM_DB missing\n#endif\n'
                      "__global__ void k(int* p) { p[threadIdx.x] = LANES_PER_ITEM; }\n")
    pwned = tmp_path / "pwned"
    command = f"nvcc -Iinc -DFROM_DB=1 -c kernel.cu -o kernel.o; touch {shlex.quote(str(pwned))}"
    (tmp_path / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(tmp_path), "file": "kernel.cu", "command": command}]))
    done = run_verify(str(source), "-p", str(tmp_path), "--offload-arch", "gfx1100",
                      "--output-format", "json", cwd=tmp_path)
    rows = json_rows(done)
    assert done.returncode == 0, rows
    assert rows[0]["target"] == "kernel.cu" and rows[0]["built"] and rows[0]["wavefront_size"] == 32
    assert not pwned.exists()


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cpp"


# Fixtures whose fixed AMD view needs a newer HIP than Debian's 5.2: names ROCm headers
# that it lacks (the toolkit header table maps to current ROCm names) or keeps CUDA's
# *_sync intrinsics (declared by HIP 6.2+): checked by their annotations (and, for programs,
# by running them on the CPU executor: tests/test_fixes_run.py) only.
_NOT_BUILT = ("toolkit/", "programs/per_warp_slots.")


def _final_fixed_fixtures() -> list[Path]:
    """Per fixture, the file `check --fix --unsafe-fixes` produces (unsafe-fixed, else fixed)."""
    chosen: dict[str, Path] = {}
    for path in sorted(FIXTURES.rglob("*.fixed.*")) + sorted(FIXTURES.rglob("*.unsafe-fixed.*")):
        if path.relative_to(FIXTURES).as_posix().startswith(_NOT_BUILT):
            continue
        chosen[str(path.parent / path.name.split(".")[0])] = path
    return list(chosen.values())


@needs_toolchain
@pytest.mark.skipif(not _final_fixed_fixtures(), reason="no fixed C++ fixtures")
def test_fixed_cpp_fixtures_build_for_gfx942_and_gfx1100():
    shims = FIXTURES / "shims"
    include = ["-I", str(shims)] if shims.is_dir() else []
    done = run_verify(*map(str, _final_fixed_fixtures()), *include, "--offload-arch", "gfx942,gfx1100",
                      "--output-format", "json")
    failures = [f"{row['target']} [{row['arch']}]: {row['reason']}" for row in json_rows(done)
                if not row["built"]]
    assert not failures, "\n".join(failures)
    assert done.returncode == 0


def test_kept_flags_drop_everything_but_include_and_define_options(tmp_path):
    argv = shlex.split("nvcc -Iinc -I /abs -isystem sys -include pre.h -DA=1 -D B -UC -std=c++17 "
                       "-O3 -Xcompiler -fPIC -o out.o -c k.cu; rm -rf /")
    assert kept_flags(argv, "/proj") == [
        "-I", "/proj/inc", "-I", "/abs", "-isystem", "/proj/sys", "-include", "pre.h",
        "-D", "A=1", "-D", "B", "-U", "C", "-std=c++17"]
    entries = [{"directory": str(tmp_path), "file": "a.cu", "arguments": ["clang++", "-DX", "a.cu"]}]
    assert flags_for(tmp_path / "a.cu", entries) == ["-D", "X"]
    assert flags_for(tmp_path / "a.cuh", entries) == ["-D", "X"]  # a header: same folder's flags
    assert flags_for(tmp_path / "other" / "b.cu", entries) is None


def test_targets_come_from_cli_then_config_then_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_stub_dir(tmp_path, ROCMINFO_NO_AGENT)))
    assert resolve_targets("gfx942, gfx1100", ("gfx90a",), []) == (["gfx942", "gfx1100"], "--offload-arch")
    assert resolve_targets(None, ("gfx90a",), []) == (["gfx90a"], "config offload-arch")
    assert resolve_targets(None, (), []) == (list(DEFAULT_TARGETS), "defaults")


def test_no_toolchain_exits_2_with_package_hint(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    done = run_verify("--offload-arch", "gfx942", path=str(empty))
    assert done.returncode == 2
    assert "libamdhip64-dev" in done.stderr and "clang-19" in done.stderr
    assert "Traceback" not in done.stderr


# --cuda without a HIP compiler: a stub nvcc and nvidia-smi, and nothing else, on PATH ------

NVCC_STUB = """#!/bin/sh
# Records its arguments; "builds" by writing a tiny shell script where -o points.
# The binary built from wave_scan fails its test; a file named broken.cu does not compile.
out=""; src=""; prev=""
for arg in "$@"; do
  [ "$prev" = "-o" ] && out="$arg"
  case "$arg" in *.hip|*.cu) src="$arg";; esac
  prev="$arg"
done
echo "$@" >> "${0%/*}/nvcc.log"
case "$src" in *broken.cu) echo "$src(1): error: identifier \\"undeclared_value\\" is undefined" >&2; exit 1;; esac
case "$src" in
  *wave_scan.hip) printf '#!/bin/sh\\necho "FAIL: lane 5 got 4"\\nexit 1\\n' > "$out";;
  *) printf '#!/bin/sh\\necho PASS\\n' > "$out";;
esac
/bin/chmod +x "$out"
"""
NVIDIA_SMI_STUB = """#!/bin/sh
echo 9.0
"""
OLD_CLANG_STUB = """#!/bin/sh
echo "Ubuntu clang version 16.0.6"
"""


def _cuda_only_path(tmp: Path) -> str:
    """A PATH with the stubs and a clang too old for HIP, as on an H100 box with CUDA 13."""
    folder = tmp / "cuda-bin"
    folder.mkdir()
    for name, text in (("nvcc", NVCC_STUB), ("nvidia-smi", NVIDIA_SMI_STUB), ("clang++-16", OLD_CLANG_STUB)):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return str(folder)


def test_cuda_without_hip_compiler_builds_and_runs_the_cuda_side(tmp_path):
    path = _cuda_only_path(tmp_path)
    done = run_verify("--cuda", "--offload-arch", "gfx942,gfx1100", "--kernel", "wave_reduce,wave_scan",
                      "--output-format", "json", path=path)
    rows = {(row["target"], row["arch"]): row for row in json_rows(done)}
    assert set(rows) == {(k, a) for k in ("wave_reduce", "wave_scan") for a in ("gfx942", "gfx1100", "sm_90")}
    for kernel in ("wave_reduce", "wave_scan"):
        for arch in ("gfx942", "gfx1100"):
            amd = rows[kernel, arch]
            assert not amd["built"] and amd["build_skipped"] and amd["ran"] is None
            assert amd["reason"] == (f"not built: no HIP-capable clang found (passed over: {path}/clang++-16 "
                                     "(clang 16: need 17 or newer))")
    passed, failed = rows["wave_reduce", "sm_90"], rows["wave_scan", "sm_90"]
    assert passed["built"] and passed["wavefront_size"] == 32 and passed["ran"] and passed["passed"] is True
    assert failed["built"] and failed["passed"] is False and "FAIL: lane 5 got 4" in failed["reason"]
    assert done.returncode == 1  # the failing CUDA test, not the skipped AMD builds
    log = (Path(path) / "nvcc.log").read_text()
    assert "-arch=sm_90" in log and "wave_reduce.hip" in log


def test_cuda_without_hip_compiler_text_report_and_clean_exit(tmp_path):
    done = run_verify("--cuda", "--offload-arch", "gfx942", "--kernel", "wave_reduce",
                      path=_cuda_only_path(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "toolchain: none, AMD builds skipped: no HIP-capable clang found" in done.stdout
    assert "libamdhip64-dev" in done.stdout  # how to get one
    assert re.search(r"wave_reduce\s+gfx942\s+skip\b", done.stdout)
    assert re.search(r"wave_reduce\s+sm_90\s+yes\s+32\s+cuda\s+PASS", done.stdout)
    assert "2 builds: 1 built, 0 not built, 1 skipped (no compiler); runs: 1 passed" in done.stdout


def test_cuda_is_not_ignored_for_files(tmp_path):
    include = tmp_path / "inc"
    include.mkdir()
    good, broken = tmp_path / "good.cu", tmp_path / "broken.cu"
    good.write_text("__global__ void k(int* p) { p[threadIdx.x] = 1; }\n")
    broken.write_text("__global__ void k(int* p) { p[0] = undeclared_value; }\n")
    path = _cuda_only_path(tmp_path)
    done = run_verify(str(good), str(broken), "--cuda", "--offload-arch", "gfx942", "-I", str(include),
                      "-D", "NEEDED=1", "--output-format", "json", path=path, cwd=tmp_path)
    rows = {(row["target"], row["arch"]): row for row in json_rows(done)}
    assert set(rows) == {(f, a) for f in ("good.cu", "broken.cu") for a in ("gfx942", "sm_90")}
    assert rows["good.cu", "gfx942"]["build_skipped"] and rows["broken.cu", "gfx942"]["build_skipped"]
    assert rows["good.cu", "sm_90"]["built"] and rows["good.cu", "sm_90"]["ran"] is None
    assert not rows["broken.cu", "sm_90"]["built"] and "undeclared_value" in rows["broken.cu", "sm_90"]["reason"]
    assert done.returncode == 1
    compile_line = next(line for line in (Path(path) / "nvcc.log").read_text().splitlines() if "good.cu" in line)
    assert f"-I {include}" in compile_line and "-D NEEDED=1" in compile_line and " -c " in compile_line
    assert "USE_ROCM" not in compile_line  # the NVIDIA view: no AMD gating macros


@pytest.mark.skipif(os.access("/usr/local/cuda/bin/nvcc", os.X_OK), reason="nvcc is found in /usr/local/cuda")
def test_cuda_with_neither_compiler_exits_2(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    done = run_verify("--cuda", "--offload-arch", "gfx942", path=str(empty))
    assert done.returncode == 2 and "no HIP-capable clang found" in done.stderr


def test_cuda_skips_hip_only_files_with_the_reason(tmp_path):
    # A .hip file or a hipified copy has no NVIDIA build: nvcc must not be asked to compile it.
    hip_copy = tmp_path / "compact.cu"
    hip_copy.write_text("#include <hip/hip_runtime.h>\n__global__ void k(int* p) { p[threadIdx.x] = 1; }\n")
    shared = tmp_path / "shared.cu"
    shared.write_text("__global__ void k(int* p) { p[threadIdx.x] = 1; }\n")
    path = _cuda_only_path(tmp_path)
    done = run_verify(str(hip_copy), str(shared), "--cuda", "--offload-arch", "gfx942", "--output-format", "json",
                      path=path, cwd=tmp_path)
    rows = {(row["target"], row["arch"]): row for row in json_rows(done)}
    assert rows["compact.cu", "sm_90"]["build_skipped"]
    assert rows["compact.cu", "sm_90"]["reason"] == "not built: HIP-only file: it has no NVIDIA build"
    assert rows["shared.cu", "sm_90"]["built"]
    assert "compact.cu" not in (Path(path) / "nvcc.log").read_text()
    assert done.returncode == 0, done.stdout + done.stderr
