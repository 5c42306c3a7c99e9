"""rocmlint over whole public repositories, as a new user runs it: reliability per tree.

For each tree: the files rocmlint analysed, its findings, internal errors (ROC003, with
where the traceback ends), findings that differ between ``-j 1`` and the default worker
count, and the 10 slowest files. Then, on a copy, ``--fix --unsafe-fixes``: fixes refused
(counted by reason), internal errors under --fix, C/C++/CUDA files whose NVIDIA view under
the real ``unifdef -U__HIP_PLATFORM_AMD__`` changed (benchmarks/fix_roundtrip.py; files
rocmlint fixes without a gate, HIP-only ones, have no NVIDIA build and are listed apart),
Python files that parsed before the fix and no longer do, and files a second fix run would
still change.

The trees must be on disk: CI has no network, so this does not run there. Public
repositories come as bare git snapshots (``git clone --bare URL G``; in an agent session
the ``fetch`` tool gives ``/work/.mirror/<owner>+<name>/repo``); export the newest commit
with

    mkdir -p trees/ggml && git --git-dir=G archive HEAD | tar -x -C trees/ggml

(a snapshot that lacks some large blobs fails partway: leave their folder out with the
pathspec ``git --git-dir=G archive HEAD -- . ':!media'``). Then

    python benchmarks/real_repos.py trees/ao trees/FBGEMM trees/composable_kernel \\
        trees/cutlass trees/ggml [--json report.json] [--no-fix]

Run it with the Python rocmlint is installed in. Exit 1 when any tree has an internal
error, a -j disagreement, an NVIDIA-view mismatch or a Python file broken by the fix.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import CPP_EXT, PY_EXT  # noqa: E402
from fix_roundtrip import changed_files, nvidia_mismatches  # noqa: E402

INTERNAL_ERROR = "ROC003"
_CRASH = re.compile(r"^rocmlint: internal error on (.+?) \(file not checked; please report\): (.*)$")
_FRAME = re.compile(r'^\s*File "(.+?)", line (\d+), in (\S+)')
_REFUSED = re.compile(r"^rocmlint: error: (.+?): fix not applied: (.*)$")


@dataclass
class TreeReport:
    tree: str
    files: int = 0
    findings: int = 0
    by_code: dict[str, int] = field(default_factory=dict)
    internal_errors: list[dict] = field(default_factory=list)  # path, error, where (file:line)
    jobs_disagreements: list[str] = field(default_factory=list)
    slowest: list[tuple[str, float]] = field(default_factory=list)
    check_seconds_j1: float = 0.0
    check_seconds_default: float = 0.0
    fix_seconds: float = 0.0
    fixed_files: int = 0
    refused: dict[str, int] = field(default_factory=dict)  # reason -> count
    refused_files: list[str] = field(default_factory=list)
    fix_internal_errors: list[dict] = field(default_factory=list)
    nvidia_mismatches: list[str] = field(default_factory=list)
    ungated_cpp_fixed: list[str] = field(default_factory=list)  # HIP-only: no NVIDIA view to keep
    python_broken: list[str] = field(default_factory=list)
    second_fix_changes: list[str] = field(default_factory=list)

    @property
    def bad(self) -> bool:
        return bool(self.internal_errors or self.fix_internal_errors or self.jobs_disagreements
                    or self.nvidia_mismatches or self.python_broken)


def crashes(findings: list[dict], stderr: str) -> list[dict]:
    """Internal errors: the ROC003 findings of a JSON report (so none can go uncounted),
    each with the innermost frame of its traceback from stderr (ROCMLINT_DEBUG=1)."""
    where: dict[str, str] = {}
    current = None
    for line in stderr.splitlines():
        match = _CRASH.match(line)
        if match:
            current = match.group(1)
            continue
        frame = _FRAME.match(line)
        if frame and current is not None:
            site = f"{frame.group(1)}:{frame.group(2)} ({frame.group(3)})"
            where[current] = re.sub(r"^.*?/(rocmlint|checks|fixers)/", r"\1/", site)
    return [{"path": f["path"], "error": f["message"], "where": where.get(f["path"], "")}
            for f in findings if f["code"] == INTERNAL_ERROR]


def check_one_worker(tree: Path) -> tuple[str, str, dict[str, float], float]:
    """`rocmlint check -j 1` in this process (the CLI's own code path), timing every file."""
    from rocmlint import cli, runner

    timings: dict[str, float] = {}
    plain_job = runner.run_job

    def timed_job(job):
        start = time.perf_counter()
        try:
            return plain_job(job)
        finally:
            timings[job.target.display] = time.perf_counter() - start

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    runner.run_job = timed_job
    start = time.perf_counter()
    try:
        os.chdir(tree)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli.main(["check", "--no-cache", "-j", "1", "--output-format", "json", "--exit-zero", "."])
    finally:
        os.chdir(cwd)
        runner.run_job = plain_job
    return out.getvalue(), err.getvalue(), timings, time.perf_counter() - start


def rocmlint(tree: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rocmlint", "check", "--no-cache", *args, "."], cwd=tree,
                          capture_output=True, text=True, env={**os.environ, "ROCMLINT_DEBUG": "1"})
    return done, time.perf_counter() - start


def _finding_keys(output: str) -> Counter:
    return Counter((f["path"], f["line"], f["column"], f["code"], f["message"]) for f in json.loads(output))


def disagreements(one: str, default: str) -> list[str]:
    if one == default:
        return []
    a, b = _finding_keys(one), _finding_keys(default)
    if a == b:
        return ["same findings, different output bytes (order or fix details)"]
    only_one = [f"-j 1 only: {k[0]}:{k[1]}:{k[2]} {k[3]}" for k in sorted((a - b).elements())]
    only_default = [f"default only: {k[0]}:{k[1]}:{k[2]} {k[3]}" for k in sorted((b - a).elements())]
    return only_one + only_default


def _parses(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    return True


def _reason(message: str) -> str:
    """A refusal's reason without its file-specific details (line numbers, counts)."""
    return re.sub(r"\d+", "N", message.splitlines()[0])[:160]


def _ungated(path: Path) -> bool:
    """Fixed without a gate (rocmlint takes it for HIP-only, or config ``gate = "never"``):
    no NVIDIA build sees it, so the unifdef oracle does not apply; listed for a human."""
    from rocmlint.config import ConfigResolver
    from rocmlint.languages import get_language

    settings = ConfigResolver().for_path(path)
    return get_language("cpp").nvidia_view(path.read_bytes(), str(path), settings) == b""


def fix_copy(tree: Path, report: TreeReport) -> None:
    work = Path(tempfile.mkdtemp(prefix="rocmlint-real-")) / tree.name
    try:
        shutil.copytree(tree, work, symlinks=True)
        done, report.fix_seconds = rocmlint(work, "--fix", "--unsafe-fixes", "--exit-zero", "--output-format", "json")
        report.fix_internal_errors = crashes(json.loads(done.stdout), done.stderr)
        refused = [m.groups() for m in map(_REFUSED.match, done.stderr.splitlines()) if m]
        report.refused = dict(Counter(_reason(message) for _path, message in refused).most_common())
        report.refused_files = sorted(f"{path}: {message}" for path, message in refused)
        cpp = changed_files(tree, work, CPP_EXT)
        python = changed_files(tree, work, PY_EXT)
        report.fixed_files = len(cpp) + len(python)
        gated = [(before, after) for before, after in cpp if not _ungated(before)]
        report.ungated_cpp_fixed = [str(after.relative_to(work)) for before, after in cpp if _ungated(before)]
        report.nvidia_mismatches = [str(p.relative_to(work)) for p in nvidia_mismatches(gated)]
        report.python_broken = [str(after.relative_to(work)) for before, after in python
                                if _parses(before.read_bytes()) and not _parses(after.read_bytes())]
        again, _ = rocmlint(work, "--diff", "--unsafe-fixes", "-q")
        report.second_fix_changes = re.findall(r"^\+\+\+ b/(.+)$", again.stdout, re.MULTILINE)
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)


def measure(tree: Path, fix: bool) -> TreeReport:
    report = TreeReport(tree=str(tree))
    os.environ["ROCMLINT_DEBUG"] = "1"  # tracebacks for the in-process run too
    one, err, timings, report.check_seconds_j1 = check_one_worker(tree)
    report.files = len(timings)
    findings = json.loads(one)
    report.internal_errors = crashes(findings, err)
    report.findings = len(findings)
    report.by_code = dict(sorted(Counter(f["code"] for f in findings).items()))
    report.slowest = sorted(timings.items(), key=lambda kv: -kv[1])[:10]
    default, report.check_seconds_default = rocmlint(tree, "--output-format", "json", "--exit-zero")
    report.jobs_disagreements = disagreements(one, default.stdout)
    if fix:
        fix_copy(tree, report)
    return report


def table(reports: list[TreeReport], fix: bool) -> str:
    head = ["tree", "files", "findings", "internal errors", "-j 1 vs default", "check s (-j1 / default)"]
    if fix:
        head += ["fixed files (HIP-only)", "refused fixes", "NVIDIA-view mismatches", "py broken by fix",
                 "2nd fix changes", "fix s"]
    rows = [head]
    for r in reports:
        row = [Path(r.tree).name, str(r.files), str(r.findings),
               str(len(r.internal_errors)) + (f" (+{len(r.fix_internal_errors)} in --fix)"
                                              if r.fix_internal_errors else ""),
               str(len(r.jobs_disagreements)), f"{r.check_seconds_j1:.1f} / {r.check_seconds_default:.1f}"]
        if fix:
            row += [f"{r.fixed_files} ({len(r.ungated_cpp_fixed)})", str(sum(r.refused.values())), str(len(r.nvidia_mismatches)),
                    str(len(r.python_broken)), str(len(r.second_fix_changes)), f"{r.fix_seconds:.1f}"]
        rows.append(row)
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * len(head))
    return "\n".join(lines)


def details(r: TreeReport) -> str:
    out = [f"\n## {Path(r.tree).name}", f"findings by rule: {r.by_code}"]
    for title, errors in (("internal errors", r.internal_errors), ("internal errors under --fix",
                                                                    r.fix_internal_errors)):
        for e in errors:
            out.append(f"{title}: {e['path']}: {e['error']}  [{e['where']}]")
    out += [f"-j disagreement: {line}" for line in r.jobs_disagreements[:20]]
    out += [f"refused x{n}: {reason}" for reason, n in r.refused.items()]
    out += [f"refused: {line}" for line in r.refused_files[:20]]
    out += [f"fixed without a gate (HIP-only): {path}" for path in r.ungated_cpp_fixed[:20]]
    out += [f"NVIDIA view changed: {path}" for path in r.nvidia_mismatches]
    out += [f"Python no longer parses: {path}" for path in r.python_broken]
    out += [f"second fix still changes: {path}" for path in r.second_fix_changes[:20]]
    out.append("slowest: " + ", ".join(f"{path} {seconds:.2f}s" for path, seconds in r.slowest))
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--no-fix", dest="fix", action="store_false", help="check only")
    parser.add_argument("--json", type=Path, help="also write the full report here")
    args = parser.parse_args()
    if args.fix and shutil.which("unifdef") is None:
        print("--fix needs unifdef on PATH (apt-get install unifdef), or pass --no-fix", file=sys.stderr)
        return 2
    reports = []
    for tree in args.trees:
        if not tree.is_dir():
            print(f"not a folder: {tree}", file=sys.stderr)
            return 2
        reports.append(measure(tree.resolve(), args.fix))
        print(details(reports[-1]), flush=True)
    print()
    print(table(reports, args.fix))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=2) + "\n")
    return 1 if any(r.bad for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
