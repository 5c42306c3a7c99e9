"""A big run builds the project model from the workers' summaries (``runner.run_deferred``):
files are read once, only the files a rule needs the model for wait for it, and the results
are those of a run that built the model first."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_project_cpp import TOY, write_tree

from rocmlint import runner
from rocmlint.config import ConfigResolver
from rocmlint.discovery import discover
from rocmlint.project import LazyPart, Project, activate

PLAIN_KERNEL = "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n"
PY_HELPER = "import torch\n\n\ndef on_amd():\n    return torch.version.hip is not None\n"
PY_GATED = "import torch\nfrom helpers import on_amd\nif not on_amd():\n    v = torch.version.cuda.split('.')\n"
PY_BARE = "import torch\nv = torch.version.cuda.split('.')\n"
PY_CLEAN = "import os\nprint(os.getcwd())\n"
ORIGINAL_GET = LazyPart.get
ORIGINAL_PARALLEL = runner.run_parallel
ORIGINAL_RUN_JOB = runner.run_job


@pytest.fixture(autouse=True)
def no_active_project():
    yield
    activate(None)


def _tree(tmp_path: Path, dual: bool) -> Path:
    files = dict(TOY) if dual else {"src/rowmax.cu": TOY["src/rowmax.cu"].replace('#include "common.cuh"\n', "")
                                    .replace('#include "cp-async.cuh"\n', "")}
    for n in range(30):  # well above the parallel threshold
        files[f"src/plain{n:02d}.cu"] = PLAIN_KERNEL
        files[f"py/clean{n:02d}.py"] = PY_CLEAN
    files.update({"py/helpers.py": PY_HELPER, "py/gated.py": PY_GATED, "py/bare.py": PY_BARE,
                  "pyproject.toml": "[tool.rocmlint]\nroot = true\n"})
    return write_tree(tmp_path, files)


def _run(root: Path, jobs: int, monkeypatch) -> tuple[list, dict[str, int], list[int]]:
    """Findings, how many worker summaries each part was built from, and how many files each
    pass checked (a pool's queue, or the files the parent checked itself)."""
    known: dict[str, int] = {}

    def recording_get(part):
        if not part.built:
            language = next(name for name, p in project.parts.items() if p is part)
            known[language] = len(part.known)
        return ORIGINAL_GET(part)

    pools: list[int] = []

    def recording_parallel(todo, workers, batch_size=runner.BATCH_SIZE, while_waiting=None):
        todo = list(todo)
        pools.append(len(todo))
        return ORIGINAL_PARALLEL(todo, workers, batch_size, while_waiting)

    in_parent: list[str] = []

    def recording_run_job(job):
        in_parent.append(job.target.display)  # a worker appends to its own copy
        return ORIGINAL_RUN_JOB(job)

    monkeypatch.chdir(root)  # findings name files relative to the working folder, as the CLI does
    monkeypatch.setattr(runner, "run_job", recording_run_job)
    monkeypatch.setattr(LazyPart, "get", recording_get)
    monkeypatch.setattr(runner, "run_parallel", recording_parallel)
    resolver = ConfigResolver(extend_select=("ROC108",))  # opt-in, one of the samples
    project = Project(root, resolver.for_path(root))
    project.prepare(["cpp", "python"])
    results = runner.run(discover([str(root)], resolver, cwd=root), use_cache=False, jobs=jobs, project=project)
    found = sorted((r.display, f.code, f.span.start, f.message) for r in results for f in r.findings)
    if in_parent:
        pools.append(len(in_parent))
    return found, known, pools


def test_two_passes_find_what_a_model_built_first_finds(tmp_path, monkeypatch):
    root = _tree(tmp_path, dual=True)
    serial, serial_known, serial_pools = _run(root, 1, monkeypatch)
    parallel, known, pools = _run(root, 2, monkeypatch)
    assert parallel == serial and serial
    assert serial_known == {"cpp": 0, "python": 0}  # serial: each part reads for itself
    # The workers summarised every C-family and Python file for the model...
    c_files = sum(1 for p in root.rglob("*") if p.suffix in (".cu", ".cuh", ".h"))
    assert known == {"cpp": c_files, "python": 33}
    # ... and only the files with a rule's anchor waited for it: not the 60 plain ones.
    first, second = pools
    assert first == c_files + 33 + 1 and second < 10  # every file once (and pyproject.toml), then a few


def test_the_workers_summaries_come_prepared_and_the_model_keeps_them(tmp_path, monkeypatch):
    """A worker makes each C-family summary with what the solve keeps (conditions, guard,
    HIP and CUDA marks, signature): the model holds those objects, and they equal what the
    parent would make from the same directives."""
    from rocmlint.project import cpp, summaries

    root = _tree(tmp_path, dual=True)
    made: list = []
    loaded: dict = {}
    load = summaries.load_summaries

    def recording_load(*args, **kwargs):
        known = args[3] if len(args) > 3 else kwargs.get("known")
        made.extend((known or {}).values())
        out = load(*args, **kwargs)
        loaded.update(out)
        return out

    monkeypatch.setattr(cpp, "load_summaries", recording_load)
    found, known, _ = _run(root, 2, monkeypatch)
    assert found and known["cpp"] == len(made) > 0
    assert all(isinstance(s, summaries.Summary) and {"conditions", "guard", "hip", "cuda", "signature"} <= s.__dict__.keys()
               for s in made)
    assert {id(s) for s in made} <= {id(s) for s in loaded.values()}  # kept, not made again
    for rel, summary in loaded.items():
        again = summaries.Summary(summaries.summarise((root / rel).read_bytes()))
        assert (summary.conditions, summary.guard, summary.hip, summary.cuda, summary.signature) == \
            (again.conditions, again.guard, again.hip, again.cuda, again.signature), rel
    assert any(s.hip for s in loaded.values()) and any(s.conditions for s in loaded.values())


def test_the_build_files_are_read_while_the_first_pass_runs(tmp_path, monkeypatch):
    """The model's inputs other than the summaries are read by the parent while the workers
    of the first pass read the files (on a tree that names HIP), not before they start."""
    from rocmlint.project import cpp

    root = _tree(tmp_path, dual=True)
    events: list[str] = []
    read_build_facts, run_pools = cpp._read_build_facts, runner._run_pools

    def recording_read(*args, **kwargs):
        events.append("build files")
        return read_build_facts(*args, **kwargs)

    def recording_pools(*args, **kwargs):
        events.append("pool")
        try:
            return run_pools(*args, **kwargs)
        finally:
            events.append("pool done")

    monkeypatch.setattr(cpp, "_read_build_facts", recording_read)
    monkeypatch.setattr(runner, "_run_pools", recording_pools)
    found, _, _ = _run(root, 2, monkeypatch)
    assert found
    assert events[:3] == ["pool", "build files", "pool done"] and events.count("build files") == 1


def test_a_cuda_only_tree_is_checked_in_one_pass(tmp_path, monkeypatch):
    root = _tree(tmp_path, dual=False)
    serial, _, _ = _run(root, 1, monkeypatch)
    parallel, known, pools = _run(root, 2, monkeypatch)
    assert parallel == serial and any(code.startswith("ROC2") for _, code, _, _ in serial)
    # No HIP anywhere: the C++ part is settled as None before the first pass (nothing is
    # summarised for it, no .cu file waits); only Python files with anchors wait.
    assert "cpp" not in known and known["python"] == 33
    assert len(pools) == 2 and pools[1] <= 3


def test_cached_results_keep_the_model_facts_they_used(tmp_path, monkeypatch):
    from test_project_cpp import HIP_VENDOR

    from rocmlint.cache import Cache

    root = _tree(tmp_path, dual=True)
    cache_dir = tmp_path / "cache"
    monkeypatch.chdir(root)

    def check(use_cache: bool) -> list:
        resolver = ConfigResolver(extend_select=("ROC108",))  # opt-in, one of the samples
        project = Project(root, resolver.for_path(root), cache_dir=cache_dir if use_cache else None)
        project.prepare(["cpp", "python"])
        results = runner.run(discover([str(root)], resolver, cwd=root), use_cache=use_cache, jobs=2,
                             cache_dir=cache_dir, project=project)
        return sorted((r.display, f.code, f.span.start) for r in results for f in r.findings)

    cold = check(True)  # two passes, results stored
    assert cold == check(False) and any(code == "ROC205" for _, code, _ in cold)
    used_model = {Path(path).name: runner.MODEL_KEY in entry[3] for path, entry in Cache(cache_dir).entries.items()}
    # Only results the model's facts went into carry them in their key.
    assert used_model["rowmax.cu"] and used_model["gated.py"]
    assert not used_model["plain00.cu"] and not used_model["clean00.py"]
    assert check(True) == cold  # warm
    # The AMD vendor header no longer defines __CUDA_ARCH__: the PTX under
    # `#if defined(__CUDA_ARCH__)` in rowmax.cu is NVIDIA-only now, and the cached result of
    # rowmax.cu, a file nobody edited, must not survive.
    assert any(code == "ROC301" and path.endswith("rowmax.cu") for path, code, _ in cold)
    (root / "src/vendors/hip.h").write_text(HIP_VENDOR.replace("#define __CUDA_ARCH__ 1300\n", ""))
    edited = check(True)
    assert edited == check(False)
    assert not any(code == "ROC301" and path.endswith("rowmax.cu") for path, code, _ in edited)


def _cached_checker(root: Path, cache_dir: Path, jobs: int = 1):
    def check(use_cache: bool) -> list:
        resolver = ConfigResolver(extend_select=("ROC108",))  # opt-in, one of the samples
        project = Project(root, resolver.for_path(root), cache_dir=cache_dir if use_cache else None)
        project.prepare(["cpp", "python"])
        results = runner.run(discover([str(root)], resolver, cwd=root), use_cache=use_cache, jobs=jobs,
                             cache_dir=cache_dir, project=project)
        return sorted((r.display, f.code, f.line) for r in results for f in r.findings)
    return check


def _edit(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))  # a new mtime, whatever the clock's grain


@pytest.mark.parametrize("files,edited,after", [
    # Python: a function called only under a CUDA gate gets an ungated caller in another file.
    ({"a.py": "import torch\n\n\ndef enable_tf32():\n    torch.backends.cuda.matmul.allow_tf32 = True\n\n\n"
              "if torch.version.cuda is not None:\n    enable_tf32()\n",
      "b.py": "import torch\n"},
     "b.py", "import torch\nfrom a import enable_tf32\n\nenable_tf32()\n"),
])
def test_a_cached_result_does_not_outlive_a_fact_it_read_in_another_file(tmp_path, monkeypatch, files, edited, after):
    root = tmp_path / "proj"
    for rel, text in {"pyproject.toml": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.chdir(root)
    check = _cached_checker(root, tmp_path / "cache")
    assert check(True) == check(False) == []
    _edit(root / edited, after)
    assert check(True) == check(False) != []


def test_a_tree_with_nothing_to_model_is_judged_once_then_cached(tmp_path, monkeypatch):
    """No HIP anywhere: the first run reads the C-family files to know it, the second reads
    none of them for the model (the verdict is cached like a built model)."""
    from rocmlint.project import cpp

    root = _tree(tmp_path, dual=False)
    monkeypatch.chdir(root)
    calls = []
    original = cpp.mentions_hip
    monkeypatch.setattr(cpp, "mentions_hip", lambda *a: calls.append(1) or original(*a))
    check = _cached_checker(root, tmp_path / "cache", jobs=2)
    first = check(True)
    assert calls == [1]
    assert check(True) == first and calls == [1]
