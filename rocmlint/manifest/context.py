"""What manifest rules see of a file: its kind, dependencies and package indexes."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property

from ..lazy_re import lazy_compile
from ..rule import FileContext
from .kinds import manifest_kind, named_for_another_platform, named_for_rocm, rocm_variants
from .model import Include, Manifest
from .text import Located

# Includes nested deeper than this are not followed (pip has no limit; real files use one or two).
MAX_INCLUDE_DEPTH = 8


@dataclass(frozen=True)
class Included:
    """A requirement file a `-r`/`-c` line of this file pulls in (``line``), directly or through
    other includes (``chain``: the paths followed), with its contents or why it was not read."""

    line: Include
    chain: tuple[str, ...]
    manifest: "Manifest | None"
    problem: str = ""
    source: bytes = b""

    def line_of(self, offset: int) -> int:
        return self.source.count(b"\n", 0, offset) + 1

    @property
    def path(self) -> str:
        return self.chain[-1]

# A Dockerfile builds one image for one platform: it matters here when that is ROCm.
_ROCM_TEXT = lazy_compile(rb"(?i)rocm|(?<![a-z])hip(?![a-z])|amdgpu|gfx9\d\d")


class ManifestContext(FileContext):
    language = "manifest"

    def __init__(self, path: str, source: bytes, settings) -> None:
        super().__init__(path, source, settings)
        self.kind = manifest_kind(path) or "shell"
        self.located = Located(source)

    @cached_property
    def manifest(self) -> Manifest:
        """Dependencies and indexes; raises ParseFailure for a file its parser rejects."""
        return read_manifest(self.kind, self.located, self.path)

    @cached_property
    def included(self) -> list[Included]:
        """The files this requirement file's `-r`/`-c` lines pull in, followed depth-first, each
        once; a missing file, a cycle, a URL or a path outside the project is not followed and
        says why (``problem``, shown by `rocmlint explain`)."""
        if self.kind != "requirements":
            return []
        found: list[Included] = []
        here = os.path.abspath(self.path)
        root = os.path.abspath(str(self.project.root)) if self.project is not None else ""
        if not here.startswith(root + os.sep):
            root = os.path.dirname(here)  # a lone file: its folder is what can be seen
        self._follow(self.manifest.includes, here, root, (os.path.relpath(here, root),), None, found, {here})
        return found

    def _follow(self, includes: list[Include], including: str, root: str, chain: tuple[str, ...],
                top: "Include | None", found: list[Included], seen: set[str]) -> None:
        from . import requirements_file

        for include in includes:
            line = top or include
            target = os.path.normpath(os.path.join(os.path.dirname(including), include.path))
            rel = os.path.relpath(target, root).replace(os.sep, "/")
            if re.match(r"[a-z+]+://", include.path):
                found.append(Included(line, chain + (include.path,), None, "a URL: not followed"))
            elif rel.startswith("../") or os.path.isabs(rel):
                found.append(Included(line, chain + (include.path,), None, "outside the project: not followed"))
            elif rel in chain or (target == including and rel == chain[-1]):
                found.append(Included(line, chain + (rel,), None,
                                      "already included (a cycle: " + " -> ".join(chain + (rel,)) + "): not followed again"))
            elif target in seen:
                found.append(Included(line, chain + (rel,), None, "already followed from another line"))
            elif len(chain) > MAX_INCLUDE_DEPTH:
                found.append(Included(line, chain + (rel,), None, "included too deep: not followed"))
            else:
                if not os.path.exists(target):
                    found.append(Included(line, chain + (rel,), None, "does not exist: not followed"))
                    continue
                try:
                    with open(target, "rb") as handle:
                        data = handle.read()
                except OSError as exc:
                    found.append(Included(line, chain + (rel,), None,
                                          f"cannot be read ({exc.strerror or exc}): not followed"))
                    continue
                manifest = requirements_file.read(Located(data), constraints=include.constraints)
                found.append(Included(line, chain + (rel,), manifest, source=data))
                seen.add(target)
                self._follow(manifest.includes, target, root, chain + (rel,), line, found, seen)

    @cached_property
    def for_nvidia_only(self) -> bool:
        """No ROCm machine installs this file: it is named for NVIDIA or another platform
        (requirements-cuda.txt, requirements/xpu.txt), a ROCm variant sits beside it, or it
        is a Dockerfile that does not build a ROCm image (its name, base image or commands
        never mention ROCm)."""
        if named_for_another_platform(self.path) or self._has_rocm_variant():
            return True
        if self.kind == "dockerfile":
            return not (named_for_rocm(self.path) or _ROCM_TEXT.search(self.source))
        return False

    def _has_rocm_variant(self) -> bool:
        """The project ships a ROCm variant beside this file (requirements.txt next to
        requirements_amd.txt, Dockerfile next to Dockerfile.rocm): this one is the NVIDIA one."""
        if named_for_rocm(self.path):
            return False
        return any(kind == self.kind for _name, kind in rocm_variants(os.path.dirname(self.path) or "."))


def read_manifest(kind: str, located: Located, path: str) -> Manifest:
    """A manifest of ``kind`` read with its ecosystem's parser; raises ParseFailure for a file
    the parser rejects."""
    from . import conda, dockerfile, pyproject, requirements_file, setuptools_files

    if kind == "pyproject":
        return pyproject.read(located)
    if kind == "requirements":
        return requirements_file.read(located, constraints="constraint" in path.lower())
    if kind == "setup_cfg":
        return setuptools_files.read_cfg(located)
    if kind == "setup_py":
        return setuptools_files.read_setup_py(located)
    if kind == "conda":
        return conda.read(located)
    if kind == "dockerfile":
        return dockerfile.read(located)
    return Manifest([], [])
