"""Speed and memory of the C++ project model on one real tree.

    python benchmarks/project_model.py --tree /work/trees/cpp/fbgemm [--file REL] [--repeat 5]

Prints: the cold model build (no cache, in this process) in seconds per 1,000 C-family
files; a single-file `rocmlint check` inside the tree with a warm cache (median); and the
wall time and peak RSS of a cold whole-tree C++ check. The tree is copied to a temporary
folder first (the warm run writes .rocmlint_cache there). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cold_model(tree: Path) -> tuple[float, int]:
    from rocmlint.config import ConfigResolver
    from rocmlint.project import Project

    start = time.perf_counter()
    project = Project(tree, ConfigResolver().for_path(tree))
    project.prepare(["cpp"])
    part = project.part("cpp")  # the part is built on first use
    wall = time.perf_counter() - start
    return wall, len(part.files) if part is not None else 0


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def pick_file(tree: Path) -> str:
    for folder, _, names in sorted(os.walk(tree)):
        for name in sorted(names):
            if name.endswith(".cu"):
                return os.path.relpath(os.path.join(folder, name), tree)
    raise SystemExit("no .cu file in the tree")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--file", help="file for the single-file run (relative to the tree)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    exe = shutil.which("rocmlint", path=str(Path(sys.executable).parent)) or "rocmlint"
    with tempfile.TemporaryDirectory(prefix="rocmlint-model-") as tmp:
        tree = Path(tmp) / args.tree.name
        shutil.copytree(args.tree, tree, symlinks=True)
        walls = []
        files = 0
        for _ in range(args.repeat):
            wall, files = cold_model(tree)
            walls.append(wall)
        best = min(walls)
        print(f"tree: {args.tree} ({files} C-family files in the model), cores: {os.cpu_count()}")
        print(f"cold model build       {best:7.3f} s   {best / max(files, 1) * 1000:6.3f} s per 1,000 files")
        rel = args.file or pick_file(tree)
        single = [exe, "check", "-q", "--exit-zero", rel]
        timed(single, tree)  # fills the model and result caches
        warm = [timed(single, tree)[0] for _ in range(max(args.repeat, 5))]
        print(f"single file, warm      {statistics.median(warm) * 1000:7.0f} ms  ({rel})")
        wall, rss = timed([exe, "check", "--no-cache", "-q", "--exit-zero", "--select", "ROC2,ROC3", "."], tree)
        print(f"whole tree c++, cold   {wall:7.2f} s   peak {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
