"""What the project's own packaging requires wherever ROCm runs: a package named as a required
dependency (not an extra or a group; its marker reaches Linux) of the top-level pyproject.toml,
setup.py, setup.cfg or requirements.txt. A top-level requirement file named for ROCm
(`requirements_rocm.txt`) that leaves the package out says the AMD install goes without it.

Code that imports a package its project requires everywhere needs it by design: on ROCm the
user installs the ROCm build of it, as the project asks.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..manifest.kinds import manifest_kind, rocm_variants
from ..model import ParseFailure

DEPENDENCY_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt")


def dependency_files(root: Path) -> list[str]:
    """The top-level files whose requirements are read (what results depend on, for the fingerprint)."""
    found = [name for name in DEPENDENCY_FILES if os.path.isfile(root / name)]
    return found + [name for name, kind in rocm_variants(str(root)) if kind == "requirements" and name not in found]


def required_everywhere(root: Path, package: str) -> str | None:
    """Where the top-level packaging requires ``package`` on every platform ROCm runs on
    ("pyproject.toml: [project] dependencies"), or None. ``package``: its canonical name."""
    wanted = package
    where = None
    for name in DEPENDENCY_FILES:
        where = where or _requires(root / name, wanted)
    if where is None:
        return None
    for name, kind in rocm_variants(str(root)):
        if kind == "requirements" and _requires(root / name, wanted) is None:
            return None  # the AMD install leaves it out
    return where


def _requires(path: Path, wanted: str) -> str | None:
    from packaging.utils import canonicalize_name

    from ..manifest.context import read_manifest
    from ..manifest.requirement import marker_reaches_rocm
    from ..manifest.text import Located

    kind = manifest_kind(path)
    if kind is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if wanted.split("-")[0].encode() not in data.lower():
        return None  # (most files never name it: no parse)
    try:
        manifest = read_manifest(kind, Located(data), str(path))
    except ParseFailure:
        return None
    for dependency in manifest.dependencies:
        requirement = dependency.requirement
        if (not dependency.optional and canonicalize_name(requirement.name) == wanted
                and marker_reaches_rocm(requirement.marker)):
            return f"{path.name}: {dependency.where}"
    return None
