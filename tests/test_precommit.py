"""The pre-commit hooks, run by the real `pre-commit try-repo` against a throwaway git repository.

pre-commit builds a virtualenv and pip-installs rocmlint from a copy of this working tree
(tracked and untracked-but-not-ignored files, committed into a temporary repository, so
uncommitted work is what gets tested). That needs PyPI and takes a minute or two the
first time.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.model import Applicability
from rocmlint.registry import all_rules

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / ".pre-commit-hooks.yaml"


def git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(["git", "-c", "user.name=rocmlint-test", "-c", "user.email=test@example.invalid",
                           "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def fixable_hazard():
    """A Python example whose every finding `--fix` repairs with safe fixes."""
    from rocmlint.config import Settings
    from rocmlint.engine import analyse_buffer

    for rule in all_rules().values():
        if rule.language != "python" or rule.fix_applicability is not Applicability.SAFE:
            continue
        for example in rule.examples()[1]:
            if example.expected is None or example.unsafe:
                continue
            settings = Settings()
            rules = tuple(r() for r in all_rules().values() if r.language == "python")
            if not analyse_buffer("x.py", example.expected.encode(), "python", settings, rules):
                return rule, example
    pytest.skip("no Python rule with a safe fix registered yet")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This working tree, committed into a fresh git repository."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: cannot list the working tree's files")
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                            timeout=60, check=True).stdout.decode().split("\0")
    dest = tmp_path_factory.mktemp("rocmlint-src")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "snapshot of the working tree", cwd=dest)
    return dest


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(hook_repo: Path, project: Path, home: Path) -> subprocess.CompletedProcess:
    """Both hooks in manifest order (check, then fix): one virtualenv build per call."""
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", NO_COLOR="1")
    env.pop("PIP_REQUIRE_VIRTUALENV", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "--all-files",
                           "--verbose", "--color", "never"],
                          cwd=project, capture_output=True, text=True, timeout=900, env=env)


def hook_sections(output: str) -> dict[str, str]:
    """Each hook's report, keyed by hook id (from `- hook id: ...`)."""
    sections: dict[str, str] = {}
    current: list[str] = []
    for line in output.splitlines():
        if line.startswith("rocmlint") and line.rstrip().endswith(("Passed", "Failed", "Skipped")):
            current = [line]
            continue
        if line.startswith("- hook id: "):
            sections[line.split(": ", 1)[1].strip()] = current  # the list keeps growing below
        current.append(line)
    return {k: "\n".join(v) for k, v in sections.items()}


def test_check_hook_fails_and_fix_hook_repairs(hook_repo, pre_commit_home, tmp_path):
    rule, example = fixable_hazard()
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    hazard = project / "train.py"
    hazard.write_text(example.code, encoding="utf-8")
    (project / "README.txt").write_text("not code\n", encoding="utf-8")
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "hazard", cwd=project)

    first = try_repo(hook_repo, project, pre_commit_home)
    output = first.stdout + first.stderr
    print(first.stdout)
    assert first.returncode == 1, output
    hooks = hook_sections(first.stdout)
    assert set(hooks) == {"rocmlint", "rocmlint-fix"}, output
    check, fix = hooks["rocmlint"], hooks["rocmlint-fix"]
    # The check hook fails, names the rule and the file, and modifies nothing.
    assert check.splitlines()[0].endswith("Failed") and "exit code: 1" in check
    assert "train.py:" in check and rule.code in check
    assert "files were modified" not in check
    # The fix hook repairs the file with rocmlint's safe fix.
    assert fix.splitlines()[0].endswith("Failed") and "files were modified by this hook" in fix
    assert hazard.read_text(encoding="utf-8") == example.expected

    second = try_repo(hook_repo, project, pre_commit_home)
    print(second.stdout)
    assert second.returncode == 0, second.stdout + second.stderr
    hooks = hook_sections(second.stdout)
    assert all(text.splitlines()[0].endswith("Passed") for text in hooks.values()), second.stdout
    assert hazard.read_text(encoding="utf-8") == example.expected


def test_hooks_select_python_cpp_cuda_and_hip_files(tmp_path, monkeypatch):
    """pre-commit's own file classification (types, types_or and files AND together)."""
    from pre_commit.clientlib import load_manifest
    from pre_commit.commands.run import Classifier

    wanted = ["a.py", "b.pyi", "c.cpp", "d.h", "e.cu", "f.cuh", "g.hip", "h.hpp", "i.cc", "j.cxx", "sub/k.HIP",
              "scripts/run_training", "build.sh", "pyproject.toml", "requirements-dev.txt", "docker/Dockerfile.rocm",
              "environment.yml", "setup.cfg"]
    unwanted = ["notes.txt", "data.json", "image.png", "config.toml", "MANIFEST.in"]
    for name in wanted + unwanted:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".png"):
            path.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
        elif name == "scripts/run_training":
            path.write_text("#!/usr/bin/env python3\nprint('hi')\n")
        else:
            path.write_text("x\n")
    monkeypatch.chdir(tmp_path)
    hooks = load_manifest(str(HOOKS))
    assert {h["id"] for h in hooks} == {"rocmlint", "rocmlint-fix"}
    for hook in hooks:
        hook_ns = type("Hook", (), {k: hook[k] for k in ("files", "exclude", "types", "types_or", "exclude_types")})
        selected = set(Classifier(wanted + unwanted).filenames_for_hook(hook_ns))
        assert set(wanted) <= selected, f"{hook['id']} misses {sorted(set(wanted) - selected)}"
        assert not selected & set(unwanted), sorted(selected & set(unwanted))
        assert hook["language"] == "python" and hook["require_serial"] is False
    by_id = {h["id"]: h for h in hooks}
    assert by_id["rocmlint-fix"]["entry"].split() == ["rocmlint", "check", "--fix", "--force-exclude"]
    assert by_id["rocmlint"]["entry"].split() == ["rocmlint", "check", "--force-exclude"]
    assert "--unsafe-fixes" not in by_id["rocmlint-fix"]["entry"] + " ".join(by_id["rocmlint-fix"]["args"])
    assert "--fix" not in by_id["rocmlint"]["entry"]
