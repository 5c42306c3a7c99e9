"""Run a rocmlint over a pinned corpus (benchmarks/heldout_corpus.toml by default) and print totals.

    python benchmarks/heldout.py --rocmlint EXE --half tune|held|all --work DIR --out DIR [--corpus TOML] [--show-all]
    python benchmarks/heldout.py --compare OUT_BEFORE OUT_AFTER [--half ...] [--corpus TOML]

Corpora: heldout_corpus.toml (issues 37-39: dual, cuda-only and python projects),
python_heldout.toml and python_heldout3-13.toml (issue 39: further sets of ROCm-aware Python
projects; each set's read is python_heldout*_read.tsv, python_heldout13 read per half) and
port_heldout.toml (issue 38: a second set of CUDA-only projects); each is split by the rule its
header states, fixed before any run.

Each project is exported at its pinned commit from the bare mirror the search tool's ``fetch``
made (``/work/.mirror/<owner>+<name>/repo``, or ``--mirrors``) into ``WORK/<owner>+<name>``
(an empty ``.git`` folder marks it a repository root, as a clone would), then checked with zero
configuration (``--no-cache --exit-zero --output-format json``); the findings are saved as
``OUT/<owner>+<name>.json``. Nothing from the trees is executed. Prints one row a project:
files, findings, per-rule counts, how many are port-mode findings and how many carry an
undecided macro, and seconds. With ``--show-all`` the line findings of rewrite-only files (ROC307)
are saved too, and each row says how many of them ``check`` would fold (``folded``).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.10, where tomli (a dependency there) is the same reader
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent / "heldout_corpus.toml"
MIRRORS = Path("/work/.mirror")
TIMEOUT_S = 900


def load_corpus(path: Path = CORPUS) -> list[dict]:
    with open(path, "rb") as fh:
        return list(tomllib.load(fh)["project"])


def selected(projects: list[dict], half: str) -> list[dict]:
    return [p for p in projects if half == "all" or p["half"] == half]


def slug(repo: str) -> str:
    return repo.replace("/", "+")


def export(project: dict, mirrors: Path, work: Path) -> Path | None:
    tree = work / slug(project["repo"])
    git_dir = mirrors / slug(project["repo"]) / "repo"
    if (tree / ".git").is_dir():
        if not git_dir.is_dir() or complete(tree, git_dir, project["commit"]):
            return tree
        print(f"{project['repo']}: the exported tree lacks files of its commit: exporting it again", file=sys.stderr)
        shutil.rmtree(tree)
    if not git_dir.is_dir():
        print(f"{project['repo']}: not fetched: use the fetch tool", file=sys.stderr)
        return None
    tree.mkdir(parents=True, exist_ok=True)
    # large media the mirror left out make `git archive` stop: export the source paths only
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", project["commit"], "--", ".",
                              ":(exclude)*.gif", ":(exclude)*.png", ":(exclude)*.jpg", ":(exclude)*.mp4",
                              ":(exclude)*.pdf"], capture_output=True, check=False)
    if archive.returncode:  # another large file is absent (`docs/build.tar`): name the present ones
        present = present_paths(git_dir, project["commit"])
        for start in range(0, len(present), 2000):  # in batches: a long list passes the argument limit
            part = subprocess.run(["git", "--git-dir", str(git_dir), "archive", project["commit"], "--",
                                   *present[start:start + 2000]], capture_output=True, check=False)
            subprocess.run(["tar", "-x", "-C", str(tree)], input=part.stdout, check=False)
    else:
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=False)
    (tree / ".git").mkdir(exist_ok=True)
    return tree


REWRITE_CODE = "ROC307"


def folded(findings: list[dict]) -> int:
    """Findings ``check`` folds: the line findings of files with a rewrite-not-port verdict
    (present only in a ``--show-all`` run)."""
    rewrite = {f["path"] for f in findings if f["code"] == REWRITE_CODE}
    return sum(1 for f in findings if f.get("path") in rewrite and f["code"] != REWRITE_CODE)


_MEDIA = (".gif", ".png", ".jpg", ".mp4", ".pdf")  # left out of an export on purpose


def complete(tree: Path, git_dir: Path, commit: str) -> bool:
    """Every file of ``commit`` that the mirror holds is in the exported tree (an export by an
    older version of this script stopped at the first file the mirror lacked)."""
    return all(os.path.lexists(tree / path) for path in present_paths(git_dir, commit)
               if not path.lower().endswith(_MEDIA))


def present_paths(git_dir: Path, commit: str) -> list[str]:
    """The files of ``commit`` whose contents the mirror holds."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=False).stdout.decode("utf-8", "replace")
    entries = [line.split("\t", 1) for line in listing.split("\0") if "\t" in line]
    blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
    checked = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch-check=%(objectname)"],
                             input="".join(f"{sha}\n" for sha, _ in blobs), capture_output=True, text=True,
                             check=False).stdout.splitlines()
    return [path for (sha, path), answer in zip(blobs, checked) if answer == sha]


def summarise(findings: list[dict]) -> dict:
    totals = {"total": len(findings), "by_rule": dict(sorted(Counter(f["code"] for f in findings).items())),
              "port": sum(1 for f in findings if f.get("mode") == "port"),
              "uncertain": sum(1 for f in findings if f.get("unknown_macros"))}
    hidden = folded(findings)
    if hidden:
        totals["folded"] = hidden
    return totals


def run_one(exe: str, project: dict, tree: Path, show_all: bool = False) -> tuple[list[dict], float]:
    target = tree / project["subdir"] if project.get("subdir") else tree
    start = time.perf_counter()
    done = subprocess.run([exe, "check", str(target), "--output-format", "json", "--no-cache", "--exit-zero"]
                          + (["--show-all"] if show_all else []),
                          cwd=tree, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    seconds = time.perf_counter() - start
    try:
        return json.loads(done.stdout or "[]"), seconds
    except json.JSONDecodeError:
        print(f"{project['repo']}: rocmlint printed no JSON (exit {done.returncode}): {done.stderr[-300:]}",
              file=sys.stderr)
        return [], seconds


def row(project: dict, totals: dict, seconds: float | None = None) -> str:
    rules = " ".join(f"{code}x{n}" for code, n in totals["by_rule"].items())
    timing = f"{seconds:6.1f}s" if seconds is not None else ""
    fold = f" folded {totals['folded']:>4}" if totals.get("folded") else ""
    return (f"{project['repo']:<34} {project['category']:<9} {project['half']:<4} {totals['total']:>5} "
            f"port {totals['port']:>4} uncertain {totals['uncertain']:>4}{fold} {timing}  {rules}")


def compare_rows(projects: list[dict], before: Path, after: Path) -> list[str]:
    lines = []
    for project in projects:
        name = slug(project["repo"]) + ".json"
        a = summarise(json.loads((before / name).read_text())) if (before / name).exists() else None
        b = summarise(json.loads((after / name).read_text())) if (after / name).exists() else None
        if a is None or b is None:
            lines.append(f"{project['repo']:<34} missing output")
            continue
        fold = f", folded {a.get('folded', 0)} -> {b.get('folded', 0)}" if a.get("folded") or b.get("folded") else ""
        lines.append(f"{project['repo']:<34} {project['category']:<9} {project['half']:<4} "
                     f"{a['total']:>5} -> {b['total']:<5} (uncertain after: {b['uncertain']}{fold})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rocmlint", help="the rocmlint executable to run")
    parser.add_argument("--half", choices=("tune", "held", "all"), default="tune")
    parser.add_argument("--work", type=Path, default=Path("/work/heldout/trees"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the pinned corpus (a TOML file)")
    parser.add_argument("--show-all", action="store_true",
                        help="also save the line findings of rewrite-only files (counted as folded)")
    args = parser.parse_args(argv)
    projects = selected(load_corpus(args.corpus), args.half)
    if args.compare:
        print("\n".join(compare_rows(projects, *args.compare)))
        return 0
    if not args.rocmlint or not args.out:
        parser.error("--rocmlint and --out are needed to run")
    args.out.mkdir(parents=True, exist_ok=True)
    for project in projects:
        tree = export(project, args.mirrors, args.work)
        if tree is None:
            continue
        findings, seconds = run_one(args.rocmlint, project, tree, args.show_all)
        (args.out / (slug(project["repo"]) + ".json")).write_text(json.dumps(findings, indent=1))
        print(row(project, summarise(findings), seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
