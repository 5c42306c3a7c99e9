"""Speed and memory of rocmlint against ruff (and semgrep, when installed) on real trees.

    python benchmarks/bench.py [TREE ...] [--rocmlint EXE ...] [--repeat 3]
        [--cu FILE] [--py FILE] [--skip-semgrep]

TREE: folders to check (default: the installed torch package, ``pip install torch==2.13.0``).
Each tree is checked by every ``--rocmlint`` executable (default: the one next to this
Python) cold (``--no-cache``) and warm (a second run with the cache the first one filled),
and by ruff on the same tree, all in one run so the ratios compare like with like. The
builds alternate run by run (each with its own cache folder), and each later build's line
gives its ratio to the first's: best and median of the alternating runs. Then one
file at a time (pre-commit latency): ``--cu`` (default: a .cu file inside a ggml tree among
TREEs) and ``--py`` (default: a small clean file), cold, warm, and warm just after an edit
(on a copy of the file's tree in the scratch folder). Peak memory is the largest
sum of the resident sizes of the process and its workers, sampled during one extra run.

Nothing is written into the checkout or the trees: every command runs in a temporary folder,
which holds the caches and the byte-code (``PYTHONPYCACHEPREFIX``: start-up is measured with
compiled byte-code, as an installed package has it, without a ``__pycache__`` in the
checkout). Nothing here is asserted: it prints figures.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PY_EXT = {".py", ".pyi"}
CPP_EXT = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl"}
RUFF_RULES = "E9,F63,F7"  # syntax errors and a few checks: ruff's cheapest honest full pass
SEMGREP_TIMEOUT_S = 300
CLEAN_PY = "import os\n\n\ndef main():\n    return os.getcwd()\n"


def default_tree() -> Path | None:
    try:
        out = subprocess.run([sys.executable, "-c", "import torch, os; print(os.path.dirname(torch.__file__))"],
                             check=False, capture_output=True, text=True, timeout=120,
                             env=child_env(Path(tempfile.gettempdir())))
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else ""
    return Path(path) if path else None


def child_env(scratch: Path) -> dict[str, str]:
    """The environment of every measured command: byte-code and caches in ``scratch``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    env["RUFF_CACHE_DIR"] = str(scratch / "ruff-cache")
    return env


def tree_stats(tree: Path, exts: set[str]) -> tuple[int, int]:
    files = size = 0
    for root, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git")]
        for name in names:
            if os.path.splitext(name)[1].lower() in exts:
                files += 1
                size += os.path.getsize(os.path.join(root, name))
    return files, size


class Runner:
    """Runs commands in one scratch folder with the bench's environment."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.env = child_env(scratch)

    def wall(self, cmd: list[str], timeout: float | None = None, cwd: Path | None = None) -> tuple[float, int]:
        """Wall time and exit code of one run (code -1: it timed out)."""
        start = time.perf_counter()
        try:
            code = subprocess.run(cmd, cwd=cwd or self.scratch, env=self.env, stdout=subprocess.DEVNULL,
                                  check=False, stderr=subprocess.DEVNULL, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = -1
        return time.perf_counter() - start, code

    def walls(self, cmd: list[str], repeat: int) -> list[float]:
        return [self.wall(cmd)[0] for _ in range(repeat)]

    def best(self, cmd: list[str], repeat: int) -> float:
        return min(self.walls(cmd, repeat))

    def median(self, cmd: list[str], repeat: int) -> float:
        return statistics.median(self.walls(cmd, repeat))

    def alternating(self, runs: list[tuple[list[str], Path]], repeat: int) -> list[list[float]]:
        """Wall times of several commands (each in its own folder), taken in turn round by
        round, so that a slow phase of the machine falls on every build alike."""
        walls: list[list[float]] = [[] for _ in runs]
        for _ in range(repeat):
            for n, (cmd, cwd) in enumerate(runs):
                walls[n].append(self.wall(cmd, cwd=cwd)[0])
        return walls

    def peak_memory_mb(self, cmd: list[str]) -> tuple[float, float]:
        """The largest sums over the process and its descendants (workers included), sampled
        every 20 ms from /proc, of resident sizes and of proportional sizes (PSS: a page the
        forked workers share with the parent counts once, not once per process); elsewhere
        the process's own peak resident size, twice."""
        proc = subprocess.Popen(cmd, cwd=self.scratch, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        peak = [0, 0]
        if os.path.isdir("/proc/self"):
            def sample() -> None:
                while proc.poll() is None:
                    rss, pss = _tree_memory_kb(proc.pid)
                    peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
                    time.sleep(0.02)
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            proc.wait()
            sampler.join()
        else:
            _, _, usage = os.wait4(proc.pid, 0)
            peak = [usage.ru_maxrss, usage.ru_maxrss]
        return peak[0] / 1024, peak[1] / 1024


def _tree_memory_kb(pid: int) -> tuple[int, int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    members, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in members:
                members.add(child)
                frontier.append(child)
    rss = pss = 0
    for member in members:
        try:
            with open(f"/proc/{member}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return rss, pss


def rocmlint_label(exe: str, all_exes: list[str]) -> str:
    if len(all_exes) == 1:
        return "rocmlint"
    return f"rocmlint[{all_exes.index(exe)}]"


def bench_trees(runner: Runner, trees: list[Path], exes: list[str], repeat: int) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    for n, exe in enumerate(exes):
        if len(exes) > 1:
            print(f"rocmlint[{n}] = {exe}")
    print(f"\n{'tree':<28} {'files py/c++':>13} {'tool':<12} {'cold s':>8} {'warm s':>8} {'warm/cold':>9} "
          f"{'cold/ruff':>9} {'peak MB':>8} {'PSS MB':>7}")
    totals: dict[str, list[float]] = {}
    for tree in trees:
        py = tree_stats(tree, PY_EXT)[0]
        cpp = tree_stats(tree, CPP_EXT)[0]
        ruff_cold = None
        if ruff:
            cmd = [ruff, "check", "--select", RUFF_RULES, "--exit-zero", "-q", str(tree)]
            ruff_cold = runner.best(cmd + ["--no-cache"], repeat)
            runner.wall(cmd)
            ruff_warm = runner.best(cmd, repeat)
            print(f"{tree.name[:28]:<28} {py:>6}/{cpp:<6} {'ruff':<12} {ruff_cold:8.2f} {ruff_warm:8.2f} "
                  f"{ruff_warm / ruff_cold:9.2f} {1:9.2f} {'':>8}")
            totals.setdefault("ruff", [0.0, 0.0])
            totals["ruff"][0] += ruff_cold
            totals["ruff"][1] += ruff_warm
        # One folder (and so one cache) per build; cold runs of the builds alternate, then warm ones.
        folders = [runner.scratch / f"build-{n}" for n in range(len(exes))]
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        cmds = [[exe, "check", "--exit-zero", "-q", str(tree)] for exe in exes]
        colds = runner.alternating([(cmd + ["--no-cache"], folder) for cmd, folder in zip(cmds, folders)], repeat)
        for cmd, folder in zip(cmds, folders):
            runner.wall(cmd, cwd=folder)  # fills the build's cache
        warms = runner.alternating(list(zip(cmds, folders)), repeat)
        for n, exe in enumerate(exes):
            label = rocmlint_label(exe, exes)
            cold, warm = min(colds[n]), min(warms[n])
            peak, proportional = runner.peak_memory_mb(cmds[n] + ["--no-cache"])
            ratio = f"{cold / ruff_cold:9.1f}x" if ruff_cold else f"{'-':>9}"
            versus = ""
            if n:  # this build against the first, best and median of the alternating runs
                versus = (f"  vs [0]: cold {cold / min(colds[0]):.2f}x (median "
                          f"{statistics.median(colds[n]) / statistics.median(colds[0]):.2f}x), warm "
                          f"{warm / min(warms[0]):.2f}x (median {statistics.median(warms[n]) / statistics.median(warms[0]):.2f}x)")
            print(f"{'':<28} {'':>13} {label:<12} {cold:8.2f} {warm:8.2f} {warm / cold:9.2f} {ratio} {peak:8.0f} "
                  f"{proportional:7.0f}{versus}")
            totals.setdefault(label, [0.0, 0.0])
            totals[label][0] += cold
            totals[label][1] += warm
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    if len(trees) > 1:
        ruff_total = totals.get("ruff", [0.0])[0]
        for label, (cold, warm) in totals.items():
            ratio = f"{cold / ruff_total:9.1f}x" if ruff_total else f"{'-':>9}"
            print(f"{'all trees':<28} {'':>13} {label:<12} {cold:8.2f} {warm:8.2f} {warm / cold:9.2f} {ratio}")


def bench_single_files(runner: Runner, files: list[Path], trees: list[Path], exes: list[str], repeat: int) -> None:
    """One file per run, as a pre-commit hook runs: median of several runs, cold, warm (nothing
    changed since the last run) and after an edit (warm cache, the file just changed: what a
    hook sees), on a copy of the file's tree: a code line added, then a ``#define`` added (the
    C++ model is re-solved)."""
    print(f"\n{'single file':<40} {'tool':<12} {'cold ms':>8} {'warm ms':>8} {'edit ms':>8} {'#define ms':>10}")
    cache = runner.scratch / ".rocmlint_cache"
    for path in files:
        tree = next((t for t in trees if path.is_relative_to(t)), None)
        copy = runner.scratch / "edited" / (tree.name if tree is not None else path.stem)
        if tree is not None:
            shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git", ".rocmlint_cache", "__pycache__"))
            edited = copy / path.relative_to(tree)
        else:  # a loose file (the clean .py): alone in its folder
            copy.mkdir(parents=True)
            edited = copy / path.name
            shutil.copyfile(path, edited)
        original = edited.read_bytes()
        comment = b"#" if path.suffix in PY_EXT else b"//"
        for exe in exes:
            cmd = [exe, "check", "--exit-zero", "-q", str(path)]
            runner.wall(cmd + ["--no-cache"])  # compiles the byte-code into the scratch prefix
            cold = runner.median(cmd + ["--no-cache"], repeat)
            shutil.rmtree(cache, ignore_errors=True)
            runner.wall(cmd)
            warm = runner.median(cmd, repeat)
            shutil.rmtree(cache, ignore_errors=True)
            edit_cmd = [exe, "check", "--exit-zero", "-q", str(edited)]
            figures = []
            for change in (lambda n: original + comment + b" edited %d\n" % n,
                           lambda n: b"#define ROCMLINT_BENCH_EDIT %d\n" % n + original if comment == b"//"
                           else original + b"# edited %d\n" % n):
                edited.write_bytes(original)
                runner.wall(edit_cmd)  # the cache holds the tree as it was
                walls = []
                for n in range(repeat):
                    edited.write_bytes(change(n))
                    walls.append(runner.wall(edit_cmd)[0])
                figures.append(statistics.median(walls))
            edited.write_bytes(original)
            shutil.rmtree(cache, ignore_errors=True)
            print(f"{str(path)[-40:]:<40} {rocmlint_label(exe, exes):<12} {cold * 1000:8.0f} {warm * 1000:8.0f} "
                  f"{figures[0] * 1000:8.0f} {figures[1] * 1000:10.0f}")
        shutil.rmtree(copy, ignore_errors=True)


def bench_semgrep(runner: Runner, trees: list[Path], exes: list[str]) -> None:
    semgrep = shutil.which("semgrep")
    if semgrep is None:
        print("\nsemgrep: not installed, skipped")
        return
    rule = runner.scratch / "ballot.yml"
    rule.write_text("rules:\n- id: ballot-sync\n  languages: [cpp]\n  severity: WARNING\n"
                    "  message: ballot\n  pattern: __ballot_sync(...)\n")
    print(f"\n{'semgrep __ballot_sync(...) vs rocmlint ROC2,ROC3':<48} {'semgrep s':>9} {'rocmlint s':>10}")
    for tree in trees:
        wall, code = runner.wall([semgrep, "--metrics=off", "--disable-version-check", "--quiet", "--config",
                                  str(rule), "--no-git-ignore", "--timeout", "30", str(tree)],
                                 timeout=SEMGREP_TIMEOUT_S)
        ours = runner.wall([exes[-1], "check", "--no-cache", "--exit-zero", "-q", "--select", "ROC2,ROC3",
                            str(tree)])[0]
        shown = f"{wall:9.2f}" if code != -1 else f"{'>' + str(SEMGREP_TIMEOUT_S):>9}"
        print(f"{tree.name[:48]:<48} {shown} {ours:10.2f}")


def own_project(tree: Path, scratch: Path) -> Path:
    """The tree as a project of its own. A tree inside another project (the installed torch
    package in a checkout's .venv) is linted as part of that project: the model rocmlint
    builds is the outer project's, not the tree's. Such a tree is measured on a copy in the
    scratch folder (without compiled libraries, which no linter reads), and the bench says so."""
    try:
        from rocmlint.project import RootFinder
    except ImportError:
        sys.exit("bench.py: run it with a Python that has rocmlint installed (it asks rocmlint where "
                 "each tree's project root is), e.g. .venv/bin/python benchmarks/bench.py")

    root, _vcs = RootFinder().root_of(str(tree))
    if root is None or Path(root).resolve() == tree:
        return tree
    copy = scratch / "trees" / tree.name
    if not copy.exists():
        print(f"note: {tree} lies inside the project at {root}; measuring a copy of it as its own project")
        shutil.copytree(tree, copy, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", ".rocmlint_cache", "*.so", "*.so.*"))
    return copy


def find_ggml_cu(trees: list[Path]) -> Path | None:
    for tree in trees:
        if "ggml" in tree.name:
            found = sorted((tree / "src" / "ggml-cuda").glob("*.cu")) if (tree / "src" / "ggml-cuda").is_dir() else []
            found = found or sorted(tree.rglob("*.cu"))
            if found:
                return found[0]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="*", type=Path, help="trees to check (default: the installed torch package)")
    parser.add_argument("--rocmlint", action="append", default=[], metavar="EXE",
                        help="rocmlint executable to measure; repeat to compare builds in one run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best for trees, median for files)")
    parser.add_argument("--cu", type=Path, help="a C++/CUDA file for the single-file figures")
    parser.add_argument("--py", type=Path, help="a Python file for the single-file figures")
    parser.add_argument("--skip-semgrep", action="store_true")
    parser.add_argument("--no-trees", action="store_true", help="single-file figures only")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.trees] or [t for t in [default_tree()] if t is not None]
    missing = [str(t) for t in trees if not t.is_dir()]
    if not trees or missing:
        print(f"no tree: {', '.join(missing) or 'pass TREE or `pip install torch==2.13.0`'}", file=sys.stderr)
        return 2
    exes = args.rocmlint or [shutil.which("rocmlint", path=str(Path(sys.executable).parent)) or "rocmlint"]
    print(f"cores: {os.cpu_count()}, {args.repeat} runs per figure")
    scratch = Path(tempfile.mkdtemp(prefix="rocmlint-bench-"))
    try:
        runner = Runner(scratch)
        trees = [own_project(tree, scratch) for tree in trees]
        if not args.no_trees:
            bench_trees(runner, trees, exes, args.repeat)
        clean = scratch / "clean.py"
        clean.write_text(CLEAN_PY)
        singles = [f for f in (args.cu or find_ggml_cu(trees), args.py or clean) if f is not None]
        bench_single_files(runner, [Path(f).resolve() for f in singles], trees, exes, max(args.repeat, 5))
        if not args.skip_semgrep:
            bench_semgrep(runner, trees, exes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
