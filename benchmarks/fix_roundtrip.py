"""`rocmlint --fix --unsafe-fixes` over a real tree, checked by an independent oracle.

Copies the tree (default: the installed torch package's include/ folder), fixes the copy,
then compares `unifdef -U__HIP_PLATFORM_AMD__` of every changed C/C++/CUDA file with the
same view of the original: the NVIDIA build must see exactly what it saw before. Prints
how many files changed, how many fixes were refused, the time, and any mismatch.

    python benchmarks/fix_roundtrip.py [--tree DIR]
"""
from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import CPP_EXT, default_tree  # noqa: E402


def nvidia_view(path: Path) -> bytes:
    # unifdef exits 1 when it changed something: only the output matters here.
    return subprocess.run(["unifdef", "-U__HIP_PLATFORM_AMD__", str(path)], capture_output=True).stdout


def changed_files(original: Path, fixed: Path, extensions: set[str]) -> list[tuple[Path, Path]]:
    """(original, fixed) pairs of the files with these extensions that the fix changed."""
    changed = []
    for path in sorted(fixed.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.suffix.lower() in extensions:
            before = original / path.relative_to(fixed)
            if not filecmp.cmp(before, path, shallow=False):
                changed.append((before, path))
    return changed


def nvidia_mismatches(changed: list[tuple[Path, Path]]) -> list[Path]:
    """The fixed files whose NVIDIA view (unifdef -U__HIP_PLATFORM_AMD__) is not the original's."""
    return [fixed for original, fixed in changed if nvidia_view(original) != nvidia_view(fixed)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path)
    args = parser.parse_args()
    torch_dir = default_tree()
    tree = args.tree or (torch_dir / "include" if torch_dir else None)
    if tree is None or not tree.is_dir() or shutil.which("unifdef") is None:
        print("need a tree (--tree or torch installed) and unifdef", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="rocmlint-fix-")) / "tree"
    shutil.copytree(tree, work, symlinks=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", "--fix", "--unsafe-fixes",
                           "--exit-zero", "."], cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - start
    refused = [line for line in proc.stderr.splitlines() if "fix not applied" in line]
    changed = changed_files(tree, work, CPP_EXT)
    mismatches = [str(p.relative_to(work)) for p in nvidia_mismatches(changed)]
    print(f"tree: {tree}")
    print(f"--fix --unsafe-fixes: {wall:.2f} s, exit {proc.returncode}, {len(changed)} C++ files changed, "
          f"{len(refused)} fixes refused")
    print(f"NVIDIA view (unifdef -U__HIP_PLATFORM_AMD__) differs in {len(mismatches)} of {len(changed)} files")
    for line in refused[:10] + mismatches[:10]:
        print("  " + line)
    shutil.rmtree(work.parent, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
