"""Results never depend on -j: every file is checked and fixed, whatever the worker count."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.runner import PARALLEL_THRESHOLD

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
COPIES = 6  # of every fixture: well above PARALLEL_THRESHOLD and the pool's chunk size


def _originals() -> list[Path]:
    """The annotated fixtures themselves (not their expected .fixed files)."""
    return [path for path in sorted(FIXTURES.glob("*/*.*"))
            if path.is_file() and ".fixed." not in path.name and ".unsafe-fixed." not in path.name]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("jobs") / "tree"
    for copy in range(COPIES):
        for original in _originals():
            target = root / f"part{copy:02d}" / original.parent.name / original.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(original, target)
    shims = FIXTURES / "cpp" / "shims"
    if shims.is_dir():
        shutil.copytree(shims, root / "shims")
    (root / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    return root


def _one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def rocmlint(cwd: Path, *args: str, single_cpu: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", *args, "."], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          preexec_fn=_one_cpu if single_cpu else None)


# The default on a one-CPU machine is one worker: run it with the affinity of one CPU.
VARIANTS = {"-j 1": (["-j", "1"], False), "-j 2": (["-j", "2"], False), "default": ([], False)}
if hasattr(os, "sched_setaffinity"):
    VARIANTS["default on one CPU"] = ([], True)


def test_tree_is_larger_than_any_batch(tree):
    files = [p for p in tree.rglob("*") if p.is_file() and p.suffix != ".toml"]
    assert len(files) > 2 * max(PARALLEL_THRESHOLD, 32) + 4


def test_findings_identical_for_every_worker_count(tree):
    outputs = {}
    for name, (args, single_cpu) in VARIANTS.items():
        done = rocmlint(tree, "--output-format", "json", *args, single_cpu=single_cpu)
        assert done.returncode == 1, (name, done.stderr)
        outputs[name] = done.stdout
    reference = outputs["-j 2"]
    findings = json.loads(reference)
    # Every copy of every fixture with findings is reported, Python and C++ alike.
    per_original = {(Path(f["path"]).parts[1], Path(f["path"]).name) for f in findings}
    for part, name in per_original:
        reported = {Path(f["path"]).parts[0] for f in findings
                    if Path(f["path"]).parts[1] == part and Path(f["path"]).name == name}
        assert len(reported) == COPIES, (part, name, sorted(reported))
    assert {"python", "cpp"} <= {part for part, _ in per_original}
    for name, output in outputs.items():
        assert output == reference, f"{name} differs from -j 2"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_fixed_trees_identical_for_every_worker_count(tree, tmp_path):
    snapshots, summaries = {}, {}
    for name, (args, single_cpu) in VARIANTS.items():
        work = tmp_path / name.replace(" ", "_")
        shutil.copytree(tree, work)
        done = rocmlint(work, "--fix", "--unsafe-fixes", "--exit-zero", *args, single_cpu=single_cpu)
        assert done.returncode == 0, (name, done.stderr)
        snapshots[name], summaries[name] = _snapshot(work), done.stdout
    reference = snapshots["-j 2"]
    changed = {path for path, data in reference.items() if data != (tree / path).read_bytes()}
    originals_fixed = {Path(path).name for path in changed}
    assert len(changed) == COPIES * len(originals_fixed) and len(originals_fixed) >= 4
    for name in VARIANTS:
        assert snapshots[name] == reference, f"{name}: fixed tree differs from -j 2"
        assert summaries[name] == summaries["-j 2"], name


SLOW_RULE = """
import sys, time
from rocmlint.cli import main
from rocmlint.registry import all_rules

rule = all_rules()["ROC103"]
plain = rule.check

def check(self, ctx):
    time.sleep(0.25)  # a slow file
    return plain(self, ctx)

rule.check = check
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX process groups")
def test_ctrl_c_stops_a_parallel_run_at_once(tmp_path):
    import signal
    import time

    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    for index in range(160):  # 20 s of work for two workers
        (tmp_path / f"mon{index:03d}.py").write_text("import pynvml\n")
    process = subprocess.Popen([sys.executable, "-c", SLOW_RULE, "check", "--no-cache", "-j", "2", "."],
                               cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    time.sleep(2)
    start = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    try:
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130
    assert time.monotonic() - start < 5, "the queued files were still being checked after Ctrl-C"
    assert "rocmlint: interrupted" in err and "Traceback" not in err


def test_jobs_go_to_the_pool_in_ordered_batches():
    from rocmlint.runner import BATCH_SIZE, batches

    jobs = list(range(2 * BATCH_SIZE + 3))
    grouped = list(batches(iter(jobs), BATCH_SIZE))
    assert [len(batch) for batch in grouped] == [BATCH_SIZE, BATCH_SIZE, 3]
    assert [job for batch in grouped for job in batch] == jobs
    assert list(batches([], BATCH_SIZE)) == []


def test_a_pool_run_leaves_the_callers_collector_as_it_found_it(tree):
    """The parent pauses its cyclic collector and freezes its heap for the workers while a
    pool runs (speed); a program calling the runner gets both back as they were."""
    import gc

    from rocmlint.config import ConfigResolver
    from rocmlint.discovery import discover
    from rocmlint.runner import run

    targets = list(discover([str(tree)], ConfigResolver(None)))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    results = run(targets, use_cache=False, jobs=2)
    assert len(results) == len(targets) and not any(r.internal_error for r in results)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        run(targets[:PARALLEL_THRESHOLD + 1], use_cache=False, jobs=2)
        assert not gc.isenabled()  # a caller's own choice is kept too
    finally:
        gc.enable()


def test_a_job_sends_its_rules_as_codes_and_a_worker_keeps_one_set_of_them():
    import pickle
    from pathlib import Path

    from rocmlint.config import Settings
    from rocmlint.discovery import Target
    from rocmlint.engine import active_rules
    from rocmlint.runner import Job

    settings = Settings()
    rules = active_rules(settings, "cpp")
    job = Job(Target(Path("k.cu"), "k.cu", settings, "cpp"), "cpp", rules, "check")
    first, second = pickle.loads(pickle.dumps(job)), pickle.loads(pickle.dumps(job))
    assert first.rules is second.rules and first.rules is not rules
    assert [type(r) for r in first.rules] == [type(r) for r in rules] and first.target == job.target
