"""What the manifest readers hand to rules: dependencies and package indexes with their spans."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..model import Span

if TYPE_CHECKING:
    from packaging.requirements import Requirement


@dataclass(frozen=True)
class Dependency:
    requirement: "Requirement"  # parsed by packaging (Poetry tables are converted first)
    span: Span  # the requirement as written (a TOML/YAML string's content, a line's requirement)
    optional: bool  # an extra or a group: installed only when asked for
    where: str  # the section, for messages: "[project] dependencies"
    conda_spec: str | None = None  # a conda package: the spec as written (not PEP 508)
    pip_options: frozenset[str] = frozenset()  # options of the `pip install` command (Dockerfiles)


@dataclass(frozen=True)
class PackageIndex:
    url: str
    span: Span
    optional: bool
    where: str


@dataclass(frozen=True)
class Include:
    """`-r other.txt` / `-c constraints.txt` in a requirement file: the path as written."""

    path: str
    span: Span
    constraints: bool  # `-c`: versions only, installs nothing by itself


@dataclass
class Manifest:
    dependencies: list[Dependency]
    indexes: list[PackageIndex]
    lock: bool = False  # a lock or constraints file: exact pins are its purpose
    includes: list[Include] = field(default_factory=list)
