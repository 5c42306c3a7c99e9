"""Witnesses (issue 40): `verify --run --compare` runs a program at 64 and at 32 lanes and compares
what it copies back; `check --witness` marks the wave-size findings with what that run showed.
The probe programs (fixtures/witness/) check nothing themselves."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from rocmlint.cli import main
from rocmlint.verify.compare import CopyRecord, compare, ordinal, read_log
from rocmlint.verify.executor import Program, RunResult
from rocmlint.verify.toolchain import find_host_compiler
from test_project_fixtures import run_cli
from test_sarif import SCHEMA_PATH as SARIF_SCHEMA

WITNESS = Path(__file__).resolve().parent.parent / "fixtures" / "witness"
needs_clang = pytest.mark.skipif(find_host_compiler()[0] is None, reason="no clang++ for the CPU executor")


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("witness")
    for path in WITNESS.glob("*.hip"):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="module")
def executor_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("executor-cache")


def compare_cli(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ROCMLINT_EXECUTOR_CACHE": str(cache)}
    return subprocess.run([sys.executable, "-m", "rocmlint", "verify", "--run", "--compare", *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


@needs_clang
def test_a_program_whose_copies_differ_at_64_lanes_is_a_witness_naming_the_kernel(programs, executor_cache):
    done = compare_cli("wave_counts.hip", cwd=programs, cache=executor_cache)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        "wave_counts.hip: WITNESS: copy to the host at wave_counts.hip:21 (1st time) differs at byte 0 of 16: "
        "43 (float 6.025583e-44, 0x0000002b) at wave 64, 86 (float 1.205117e-43, 0x00000056) at wave 32; "
        "kernels since the copy before: count_flags")


@needs_clang
def test_the_fixed_twin_and_a_printed_timer_are_no_witness(programs, executor_cache):
    done = compare_cli("wave_counts_fixed.hip", "timed_sum.hip", "--output-format", "json", cwd=programs,
                       cache=executor_cache)
    assert done.returncode == 0, done.stdout + done.stderr
    by_name = {row["target"]: row for row in json.loads(done.stdout)}
    assert by_name["wave_counts_fixed.hip"]["witness"] is None
    assert by_name["wave_counts_fixed.hip"]["notes"] == []
    assert by_name["wave_counts_fixed.hip"]["copies"] == {"64": 1, "32": 1}
    assert by_name["wave_counts_fixed.hip"]["launched"] == ["count_flags"]
    timed = by_name["timed_sum.hip"]
    assert timed["witness"] is None and timed["status"] == {"64": 0, "32": 0}
    assert len(timed["notes"]) == 1 and "the program's own output differs (line 1:" in timed["notes"][0]


@needs_clang
def test_a_stop_at_one_wave_size_is_a_witness_of_the_exit_status(tmp_path, executor_cache):
    (tmp_path / "overrun.hip").write_text(
        "#include <hip/hip_runtime.h>\n"
        "__global__ void fill(int* out) {\n  __shared__ int slots[32];\n"
        "  slots[threadIdx.x % warpSize] = 1;\n  out[threadIdx.x] = slots[0];\n}\n"
        "int main() {\n  int* out;\n  hipMalloc(&out, 64 * sizeof(int));\n  fill<<<1, 64>>>(out);\n"
        "  hipDeviceSynchronize();\n  return 0;\n}\n")
    done = compare_cli("overrun.hip", "--output-format", "json", cwd=tmp_path, cache=executor_cache)
    assert done.returncode == 1
    witness = json.loads(done.stdout)[0]["witness"]
    assert witness["what"] == "status" and "exit status 70 at wave 64" in witness["message"]
    assert "out of bounds: index 32" in witness["message"] and "0 at wave 32 (exit 0)" in witness["message"]


@needs_clang
def test_managed_memory_read_after_a_synchronize_is_compared(tmp_path, executor_cache):
    (tmp_path / "managed.hip").write_text(
        "#include <hip/hip_runtime.h>\n#include <cstdio>\n"
        "__global__ void lanes(int* out) { out[threadIdx.x] = __lane_id(); }\n"
        "int main() {\n  int* out;\n  hipMallocManaged(&out, 64 * sizeof(int));\n  lanes<<<1, 64>>>(out);\n"
        "  hipDeviceSynchronize();\n  printf(\"%d\\n\", out[40]);\n  return 0;\n}\n")
    done = compare_cli("managed.hip", "--output-format", "json", cwd=tmp_path, cache=executor_cache)
    witness = json.loads(done.stdout)[0]["witness"]
    assert done.returncode == 1 and witness["what"] == "copy" and witness["site"] == "managed.hip:8"
    assert witness["offset"] == 128 and witness["values"]["64"].startswith("32 ") and \
        witness["values"]["32"].startswith("0 ") and witness["kernels"] == ["lanes"]


def test_compare_needs_programs_and_both_wave_sizes(tmp_path):
    for args, message in ((["--compare"], "--compare needs the programs"),
                          (["--compare", "--wave", "64", "x.hip"], "leave out --wave")):
        (tmp_path / "x.hip").write_text("int main() { return 0; }\n")
        done = subprocess.run([sys.executable, "-m", "rocmlint", "verify", "--run", *args], capture_output=True,
                              text=True, cwd=tmp_path, timeout=60)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


# ----- the comparison itself, on logs written here ---------------------------------------------

def _run(wave: int, status: int = 0, output: str = "", message: str | None = None) -> RunResult:
    return RunResult(Program(Path("p.hip"), "p.hip"), wave, "pass" if status == 0 else "stopped", status, output,
                     message)


def _record(site: str, data: bytes, nth: int = 1, kernels: tuple[str, ...] = ("k",)) -> CopyRecord:
    return CopyRecord("copy", site, nth, kernels, data)


def test_a_log_cut_off_by_the_end_of_a_run_keeps_its_whole_records(tmp_path):
    log = tmp_path / "copies.log"
    log.write_bytes(b"copy a.hip:3 1 4 k1,k2\n\x01\x02\x03\x04copy a.hip:3 2 8 -\n\x00\x00")
    assert read_log(log) == [CopyRecord("copy", "a.hip:3", 1, ("k1", "k2"), b"\x01\x02\x03\x04")]
    assert read_log(tmp_path / "missing.log") == []


def test_runs_that_copy_from_different_places_or_a_different_number_of_times_differ():
    runs = {64: _run(64), 32: _run(32)}
    diverged = compare("p.hip", runs, {64: [_record("p.hip:9", b"a")], 32: [_record("p.hip:12", b"a")]})
    assert diverged.witness is not None and diverged.witness.what == "copies"
    assert "p.hip:9 at wave 64 and p.hip:12 at wave 32" in diverged.witness.message
    longer = compare("p.hip", runs, {64: [_record("p.hip:9", b"a")], 32: [_record("p.hip:9", b"a"),
                                                                            _record("p.hip:9", b"b", 2)]})
    assert longer.witness is not None and "1 copies to the host at wave 64, 2 at wave 32" in longer.witness.message


def test_a_difference_deep_in_a_large_copy_is_found_at_its_byte():
    wide = bytearray(1 << 20)
    narrow = bytearray(wide)
    narrow[700_001] = 5
    found = compare("p.hip", {64: _run(64), 32: _run(32)}, {64: [_record("p.hip:9", bytes(wide))],
                                                            32: [_record("p.hip:9", bytes(narrow))]})
    assert found.witness is not None and found.witness.offset == 700_001
    assert found.witness.values == {64: "0 (float 0, 0x00000000)", 32: "1280 (float 1.793662e-42, 0x00000500)"}


def test_identical_copies_with_different_output_are_a_note_not_a_witness():
    found = compare("p.hip", {64: _run(64, output="took 3 ms\n"), 32: _run(32, output="took 4 ms\n")},
                    {64: [_record("p.hip:9", b"x")], 32: [_record("p.hip:9", b"x")]})
    assert found.witness is None and found.notes == [
        "the program's own output differs (line 1: 'took 3 ms' at wave 64, 'took 4 ms' at wave 32): not a witness, "
        "nothing it copied back differs"]


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]


# ----- check --witness ----------------------------------------------------------------------------

@needs_clang
def test_check_witness_marks_findings_in_the_kernels_the_run_reached(programs, capsys, monkeypatch):
    code, out = run_cli(["check", "--no-cache", "--witness", "two_kernels.hip", "--output-format", "json"], programs,
                        capsys, monkeypatch)
    assert code == 1
    marks = sorted((f["line"], f["code"], f["witness"]["status"]) for f in json.loads(out))
    assert marks == [(7, "ROC201", "witnessed"), (8, "ROC202", "witnessed"),
                     (14, "ROC201", "not witnessed"), (15, "ROC202", "not witnessed")]
    _code, text = run_cli(["check", "--no-cache", "--witness", "two_kernels.hip", "--no-show-source"], programs,
                          capsys, monkeypatch)
    assert text.splitlines()[-1] == ("Witness run of two_kernels.hip at 64 and 32 lanes: 2 finding(s) witnessed, "
                                     "2 not witnessed (the run did not reach them or did not differ), 0 not run.")


@needs_clang
def test_check_witness_sarif_validates_and_carries_the_witness(programs, capsys, monkeypatch):
    _code, out = run_cli(["check", "--no-cache", "--witness", "wave_counts.hip", "--output-format", "sarif"], programs,
                         capsys, monkeypatch)
    log = json.loads(out)
    if SARIF_SCHEMA.is_file():  # shared/ sits beside the repository (test_sarif says so when it does not)
        jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    witnesses = [r["properties"]["witness"] for r in log["runs"][0]["results"]]
    assert len(witnesses) == 2 and all(w["status"] == "witnessed" and "count_flags" in w["detail"]
                                       for w in witnesses)


@needs_clang
def test_explain_says_whether_the_run_witnesses_the_line(programs, capsys, monkeypatch):
    _code, out = run_cli(["explain", "two_kernels.hip:15", "--witness", "two_kernels.hip"], programs, capsys,
                         monkeypatch)
    assert "witness: ROC202 not witnessed: not reached: no kernel the run launched (block_flags) reaches this code" in out


def test_a_program_that_does_not_build_leaves_its_findings_not_run(tmp_path, capsys, monkeypatch):
    (tmp_path / "broken.hip").write_text(
        "#include <hip/hip_runtime.h>\n__global__ void k(int* out) {\n  unsigned m = __ballot(out[threadIdx.x]);\n"
        "  out[threadIdx.x] = __popc(m);\n}\nint main() { return undefined_name; }\n")
    _code, out = run_cli(["check", "--no-cache", "--witness", "broken.hip", "--output-format", "json"], tmp_path,
                         capsys, monkeypatch)
    assert {f["witness"]["status"] for f in json.loads(out)} == {"not run"}


@pytest.mark.parametrize("args, message", [
    (["--args", "1"], "--args and --time-limit go with --witness PROGRAM"),
    (["--witness", "missing.hip"], "--witness: no such file: missing.hip"),
    (["--witness", "p.hip", "--fix"], "run it without --fix or --diff"),
])
def test_witness_usage_errors(tmp_path, capsys, monkeypatch, args, message):
    (tmp_path / "p.hip").write_text("int main() { return 0; }\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", *args]) == 2
    assert message in capsys.readouterr().err


@needs_clang
def test_a_program_that_refuses_a_wave_size_leaves_its_findings_not_run(tmp_path, capsys, monkeypatch):
    (tmp_path / "only32.hip").write_text(
        "#include <hip/hip_runtime.h>\n#include <cstdio>\n"
        "__global__ void k(int* out) {\n  unsigned m = __ballot(out[threadIdx.x] > 0);\n  out[threadIdx.x] = __popc(m);\n}\n"
        "int main() {\n  int wave = 0;\n  hipDeviceGetAttribute(&wave, hipDeviceAttributeWarpSize, 0);\n"
        "  if (wave != 32) { printf(\"Wave size must be 32\\n\"); return 1; }\n"
        "  int* out;\n  hipMalloc(&out, 64 * sizeof(int));\n  hipMemset(out, 0, 64 * sizeof(int));\n"
        "  k<<<1, 64>>>(out);\n  hipDeviceSynchronize();\n  return 0;\n}\n")
    _code, out = run_cli(["check", "--no-cache", "--witness", "only32.hip", "--output-format", "json"], tmp_path,
                         capsys, monkeypatch)
    marks = {(f["witness"]["status"], f["witness"]["detail"]) for f in json.loads(out)}
    assert marks == {("not run", "the program ends at wave 64 before any kernel runs (exit 1: Wave size must be 32)")}
