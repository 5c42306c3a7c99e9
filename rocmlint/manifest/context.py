"""What manifest rules see of a file: its kind, dependencies and package indexes."""
from __future__ import annotations

import os
import re
from functools import cached_property

from ..rule import FileContext
from .kinds import manifest_kind, named_for_another_platform, named_for_rocm, rocm_variants
from .model import Manifest
from .text import Located

# A Dockerfile builds one image for one platform: it matters here when that is ROCm.
_ROCM_TEXT = re.compile(rb"(?i)rocm|(?<![a-z])hip(?![a-z])|amdgpu|gfx9\d\d")


class ManifestContext(FileContext):
    language = "manifest"

    def __init__(self, path: str, source: bytes, settings) -> None:
        super().__init__(path, source, settings)
        self.kind = manifest_kind(path) or "shell"
        self.located = Located(source)

    @cached_property
    def manifest(self) -> Manifest:
        """Dependencies and indexes; raises ParseFailure for a file its parser rejects."""
        from . import conda, dockerfile, pyproject, requirements_file, setuptools_files

        kind = self.kind
        if kind == "pyproject":
            return pyproject.read(self.located)
        if kind == "requirements":
            return requirements_file.read(self.located, constraints="constraint" in self.path.lower())
        if kind == "setup_cfg":
            return setuptools_files.read_cfg(self.located)
        if kind == "setup_py":
            return setuptools_files.read_setup_py(self.located)
        if kind == "conda":
            return conda.read(self.located)
        if kind == "dockerfile":
            return dockerfile.read(self.located)
        return Manifest([], [])

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
