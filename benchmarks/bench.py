"""Speed and memory of rocmlint against ruff, flake8 and semgrep on one real tree.

Default tree: the installed torch package (``pip install torch==2.13.0``): thousands of
real .py files and, under include/, thousands of C++/CUDA headers.

    python benchmarks/bench.py [--tree DIR] [--repeat 3]

Prints wall time (best of --repeat), files/s, MB/s, peak RSS and the ratios the
acceptance criteria name. Nothing here is asserted: it prints figures.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY_EXT = {".py", ".pyi"}
CPP_EXT = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl"}


def default_tree() -> Path | None:
    try:
        out = subprocess.run([sys.executable, "-c", "import torch, os; print(os.path.dirname(torch.__file__))"],
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else ""
    return Path(path) if path else None


def tree_stats(tree: Path, exts: set[str]) -> tuple[int, int]:
    files = size = 0
    for root, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in ("__pycache__",)]
        for name in names:
            if os.path.splitext(name)[1].lower() in exts:
                files += 1
                size += os.path.getsize(os.path.join(root, name))
    return files, size


def timed(cmd: list[str], cwd: Path, repeat: int, env: dict | None = None) -> tuple[float, float, int]:
    """Best wall time, peak RSS in MB (the process and its reaped children), exit code."""
    best, peak, code = float("inf"), 0.0, 0
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env if env is not None else os.environ)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        best = min(best, wall)
        peak = max(peak, usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
    return best, peak, code


def row(name: str, wall: float, files: int, size: int, rss: float, code: int) -> str:
    return (f"{name:<34} {wall:8.2f} s {files / wall:9.0f} files/s {size / wall / 1e6:7.1f} MB/s "
            f"{rss:7.0f} MB peak  exit {code}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-semgrep", action="store_true")
    args = parser.parse_args()
    tree = args.tree or default_tree()
    if tree is None or not tree.is_dir():
        print("no tree: pass --tree DIR or `pip install torch==2.13.0`", file=sys.stderr)
        return 2
    rocmlint = [sys.executable, "-m", "rocmlint"]
    exe = shutil.which("rocmlint", path=str(Path(sys.executable).parent))
    py_files, py_size = tree_stats(tree, PY_EXT)
    cpp_files, cpp_size = tree_stats(tree, CPP_EXT)
    print(f"tree: {tree}")
    print(f"  python: {py_files} files, {py_size / 1e6:.1f} MB;  c++/cuda: {cpp_files} files, {cpp_size / 1e6:.1f} MB")
    print(f"  cores: {os.cpu_count()}, best of {args.repeat}\n")

    cache = Path(tempfile.mkdtemp(prefix="rocmlint-bench-"))
    results = {}

    def run(name, cmd, files, size, repeat=args.repeat, cwd=cache, env=None):
        wall, rss, code = timed(cmd, cwd, repeat, env)
        results[name] = wall
        print(row(name, wall, files, size, rss, code))

    # Cold: no cache. Warm: cache filled by a first run in the same folder.
    run("rocmlint python (cold)", rocmlint + ["check", "--no-cache", "--select", "ROC1", "-q", str(tree)],
        py_files, py_size)
    run("rocmlint c++ (cold)", rocmlint + ["check", "--no-cache", "--select", "ROC2,ROC3", "-q",
                                           str(tree / "include")], cpp_files, cpp_size)
    run("rocmlint full tree (cold)", rocmlint + ["check", "--no-cache", "-q", str(tree)],
        py_files + cpp_files, py_size + cpp_size)
    timed(rocmlint + ["check", "-q", str(tree)], cache, 1)
    run("rocmlint full tree (cached)", rocmlint + ["check", "-q", str(tree)], py_files + cpp_files,
        py_size + cpp_size)
    if shutil.which("ruff"):
        run("ruff E9,F63,F7 (python)", ["ruff", "check", "--select", "E9,F63,F7", "--no-cache", "--exit-zero",
                                         "-q", str(tree)], py_files, py_size)
    if shutil.which("flake8"):
        run("flake8 -j2 E9 (python)", ["flake8", "-j2", "--select", "E9", "--exit-zero", str(tree)],
            py_files, py_size, repeat=1)
    semgrep = shutil.which("semgrep")
    if semgrep and not args.skip_semgrep:
        rule = cache / "ballot.yml"
        rule.write_text("rules:\n- id: ballot-sync\n  languages: [cpp]\n  severity: WARNING\n"
                        "  message: ballot\n  pattern: __ballot_sync(...)\n")
        run("semgrep __ballot_sync(...) (c++)", [semgrep, "--metrics=off", "--quiet", "--config", str(rule),
                                                   "--no-git-ignore", str(tree / "include")],
            cpp_files, cpp_size, repeat=1, env={**os.environ, "SEMGREP_SEND_METRICS": "off"})

    # Pre-commit latency: one clean Python file through the console script, median of 20.
    # Bytecode on: an installed package has its .pyc files (PYTHONDONTWRITEBYTECODE off).
    clean = cache / "clean.py"
    clean.write_text("import os\n\n\ndef main():\n    return os.getcwd()\n")
    single = ([exe] if exe else rocmlint) + ["check", "--no-cache", str(clean)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(single, cwd=cache, env=env, capture_output=True)  # writes the .pyc files
    walls = []
    for _ in range(20):
        start = time.perf_counter()
        subprocess.run(single, cwd=cache, env=env, capture_output=True)
        walls.append(time.perf_counter() - start)
    wall = sorted(walls)[len(walls) // 2]
    _, rss, code = timed(single, cache, 1, env)
    print(row("rocmlint one clean file (median)", wall, 1, clean.stat().st_size, rss, code))
    results["one clean file"] = wall

    print()
    def ratio(a, b, label):
        if a in results and b in results:
            print(f"{label:<44} {results[a] / results[b]:6.2f}x")
    ratio("rocmlint python (cold)", "ruff E9,F63,F7 (python)", "rocmlint python / ruff")
    ratio("rocmlint full tree (cold)", "ruff E9,F63,F7 (python)", "rocmlint full tree / ruff (python only)")
    ratio("flake8 -j2 E9 (python)", "rocmlint python (cold)", "flake8 / rocmlint python (speed-up)")
    ratio("rocmlint full tree (cached)", "rocmlint full tree (cold)", "cached / cold")
    ratio("semgrep __ballot_sync(...) (c++)", "rocmlint c++ (cold)", "semgrep / rocmlint c++ (speed-up)")
    print(f"{'one clean file (ms)':<44} {results['one clean file'] * 1000:6.0f}")
    shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
