"""The project's files, found by one walk that every model part shares: C-family sources
and headers, build files, Python modules, each with its (mtime, size) for cache keys."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

from ..config import DEFAULT_EXCLUDES
from ..evidence import Evidence
from .makefile import is_makefile
from .templates import is_template

C_FAMILY_EXTENSIONS = frozenset({
    ".c", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".cuh", ".hip", ".h", ".hh", ".hpp", ".hxx",
    ".inl", ".inc", ".ipp", ".tcc", ".cuinl",
})
BUILD_FILE_NAMES = frozenset({"CMakeLists.txt", "setup.py", "meson.build"})
_TEMPLATE_EXTENSIONS = frozenset({".in", ".cmakein"})  # .h.cmake templates are build files already
_SKIP_DIRS = frozenset(p for p in DEFAULT_EXCLUDES if "*" not in p)

Stats = dict  # root-relative path -> (mtime_ns, size)


@dataclass(frozen=True)
class ProjectFiles:
    c_family: Stats
    build: Stats  # CMakeLists.txt, *.cmake, setup.py, meson.build, Makefiles, config-header templates
    python: Stats
    docker: Stats = field(default_factory=dict)  # Dockerfiles and Containerfiles (the GPUs images are built for)


def walk(root: str, extra_c_family: frozenset[str] = frozenset()) -> ProjectFiles:
    """Every file of the project a model part reads, in one walk (symlinked folders and
    the default excludes left out); sorted, so nothing depends on the file system's order.
    ``extra_c_family``: more C-family extensions (the configuration's ``extension`` table)."""
    c_family_extensions = C_FAMILY_EXTENSIONS | extra_c_family
    c_family: Stats = {}
    build: Stats = {}
    python: Stats = {}
    docker: Stats = {}
    pending = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):  # no symlink loops
                    if name not in _SKIP_DIRS and not name.startswith(".") and not name.endswith(".egg-info"):
                        pending.append((prefix + name + "/", entry.path))
                    continue
                ext = os.path.splitext(name)[1].lower()
                into = c_family if ext in c_family_extensions else \
                    build if (name in BUILD_FILE_NAMES or ext == ".cmake" or is_makefile(name)
                              or (ext in _TEMPLATE_EXTENSIONS and is_template(name))) else None
                if into is not None:
                    st = entry.stat()
                    into[prefix + name] = (st.st_mtime_ns, st.st_size)
                if ("ocker" in name or "ontainer" in name) and _is_container_file(name):
                    st = entry.stat()
                    docker[prefix + name] = (st.st_mtime_ns, st.st_size)
                if ext == ".py":  # setup.py is a build file and a Python module
                    st = entry.stat()
                    python[prefix + name] = (st.st_mtime_ns, st.st_size)
            except OSError:
                continue  # vanished or a dangling link: not part of the project
    return ProjectFiles(dict(sorted(c_family.items())), dict(sorted(build.items())), dict(sorted(python.items())),
                        dict(sorted(docker.items())))


def _is_container_file(name: str) -> bool:
    """`Dockerfile`, `Dockerfile.rocm`, `rocm.Dockerfile`, `Containerfile`."""
    lowered = name.lower()
    return lowered.startswith(("dockerfile", "containerfile")) or lowered.endswith(".dockerfile")


@lru_cache(maxsize=8192)
def _names_other_platform(name: str, compiled: bool) -> bool:
    """One folder or file stem (memoised: every file of a folder asks for its folders' names)."""
    from ..manifest.kinds import NOT_ROCM_BACKEND_NAME, NOT_ROCM_CODE_NAME

    return (NOT_ROCM_BACKEND_NAME if compiled else NOT_ROCM_CODE_NAME).search(name) is not None


def named_for_other_platform(rel: str, compiled: bool = False) -> Evidence | None:
    """A folder or file named for an accelerator other than GPUs or for an NVIDIA-only product
    (`backends/gaudi/`, `tpu_worker.py`, `trtllm_rollout/`, `backends/tensorrt/`): the project
    keeps that platform's code there, which no ROCm build runs or compiles (weaker evidence:
    the name). ``compiled``: said of C-family code, where a file named for cuDNN is part of
    the CUDA backend a port rewrites."""
    parts = rel.split("/")
    for index, part in enumerate(parts):
        stem = part.rsplit(".", 1)[0] if index == len(parts) - 1 else part
        if _names_other_platform(stem, compiled):
            where = "/".join(parts[: index + 1]) + ("/" if index < len(parts) - 1 else "")
            kinds = "another accelerator, an NVIDIA-only product" + (" or another GPU language" if compiled else "")
            return Evidence(f"`{where}` is named for a platform other than ROCm ({kinds}): the ROCm build never "
                            f"{'compiles' if compiled else 'runs'} it (weaker evidence: its name)", rel)
    return None
