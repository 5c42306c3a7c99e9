"""Which files the manifest half reads, told by name (cheap: discovery asks for every file)."""
from __future__ import annotations

import os
import re

from ..lazy_re import lazy_compile
from ..platform_words import READERS

# A test module or a file under a test folder (root-relative, `/` separators).
TEST_PATH = r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.py$|conftest\.py$)"

# Each kind's file names; `requirements/` folders hold requirement files of any name.
_NAMES = (
    ("pyproject", re.compile(r"pyproject\.toml")),
    ("setup_cfg", re.compile(r"setup\.cfg")),
    ("requirements", re.compile(r"(?i)[\w.-]*(?:requirements|constraints|reqs)[\w.-]*\.(?:txt|in)")),
    ("conda", re.compile(r"(?i)(?:[\w.-]*environment[\w.-]*|conda[\w.-]*)\.ya?ml")),
    ("dockerfile", re.compile(r"(?i)(?:docker|container)file(?:\.[\w.-]+)?|[\w.-]+\.(?:docker|container)file")),
    ("shell", re.compile(r"(?i)[\w.-]+\.(?:sh|bash)")),
    ("cmake", re.compile(r"CMakeLists\.txt|[\w.-]+\.cmake")),
)
_REQUIREMENTS_FOLDER = lazy_compile(r"(?i)(?:requirements|reqs)")
_REQUIREMENTS_SUFFIX = lazy_compile(r"(?i)[\w.-]+\.(?:txt|in)")
# A file named for NVIDIA holds what NVIDIA machines install (requirements-cuda.txt,
# requirements/cu121.txt, Dockerfile.cuda); one named for another platform than ROCm
# (Intel XPU, Gaudi, NPUs, TPUs, CPU-only, macOS, Colab's NVIDIA GPUs) is never installed on
# a ROCm machine.
# Accelerators other than GPUs of either vendor, and NVIDIA-only products: code and files named
# for them never reach a ROCm machine.
OTHER_ACCELERATORS = ("xpu", "ipex", "npu", "hpu", "gaudi", "habana", "tpu", "neuron", "ascend", "mps", "metal",
                      # other GPU and accelerator vendors' back ends (Cambricon MLU, Moore Threads
                      # MUSA, Baidu Kunlunxin XPU, Iluvatar, MetaX, Enflame): code selected on their
                      # hardware only
                      "mlu", "cambricon", "musa", "mthreads", "kunlunxin", "kunlun", "iluvatar", "metax",
                      "enflame")
# (DCGM: the Data Center GPU Manager; NVML: its management library; ModelOpt: TensorRT's Model Optimizer)
NVIDIA_PRODUCTS = ("tensorrt", "trt", "trtllm", "jetson", "dcgm", "nvml", "pynvml", "modelopt")
# A library a CUDA backend calls: its C++ callers are what a port rewrites (MIOpen), not
# another backend; a Python module named for it is cuDNN-only code.
NVIDIA_LIBRARIES = ("cudnn",)
NOT_ROCM_CODE_NAME = lazy_compile(r"(?i)(?:^|[^a-z])(?:%s)(?:$|[^a-z])"
                                  % "|".join(OTHER_ACCELERATORS + NVIDIA_PRODUCTS + NVIDIA_LIBRARIES))
# C-family backends written in another GPU language: the HIP build never compiles them.
OTHER_GPU_LANGUAGES = ("sycl", "oneapi", "dpcpp")
NOT_ROCM_BACKEND_NAME = lazy_compile(r"(?i)(?:^|[^a-z])(?:%s)(?:$|[^a-z])"
                                     % "|".join(OTHER_ACCELERATORS + NVIDIA_PRODUCTS + OTHER_GPU_LANGUAGES))
_OTHER_PLATFORM_NAME = lazy_compile(
    r"(?i)(?:^|[^a-z])(?:cuda|cu\d{2,3}|nvidia|intel|%s"
    r"|cpu|mac|macos|darwin|windows|colab)(?:$|[^a-z])" % "|".join(OTHER_ACCELERATORS + NVIDIA_PRODUCTS
                                                                   + NVIDIA_LIBRARIES))
_ROCM_NAME = READERS["manifest"]  # amd64: the CPU


def manifest_kind(path: str | os.PathLike[str]) -> str | None:
    """'pyproject', 'setup_cfg', 'setup_py', 'requirements', 'conda', 'dockerfile', 'shell', 'cmake' or None."""
    name = os.path.basename(path)
    if name == "setup.py":
        return "setup_py"
    for kind, pattern in _NAMES:
        if pattern.fullmatch(name):
            return kind
    folder = os.path.basename(os.path.dirname(os.fspath(path)))
    if _REQUIREMENTS_FOLDER.fullmatch(folder) and _REQUIREMENTS_SUFFIX.fullmatch(name):
        return "requirements"
    return None


def _names(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The file's stem, then its folders (as given: a display path relative to the run)."""
    parts = os.fspath(path).replace(os.sep, "/").split("/")
    name = parts[-1]
    stem = name if name.lower().startswith(("dockerfile", "containerfile")) else name.split(".", 1)[0]
    return (stem, *parts[:-1])


def named_for_another_platform(path: str | os.PathLike[str]) -> bool:
    """The file's name (or a folder's) says it is for NVIDIA or another non-ROCm platform."""
    names = _names(path)
    if _ROCM_NAME.search(names[0]):
        return False
    return any(_OTHER_PLATFORM_NAME.search(part) for part in names)


def named_for_rocm(path: str | os.PathLike[str]) -> bool:
    return any(_ROCM_NAME.search(part) for part in _names(path))


def rocm_variants(folder: str) -> list[tuple[str, str]]:
    """(name, kind) of the manifests in ``folder`` named for ROCm (``requirements_amd.txt``,
    ``Dockerfile.rocm``), sorted: what makes a neighbour the NVIDIA variant."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    if _ROCM_NAME.search("\n".join(names)) is None:  # one search for the folder (a stem's match is a name's)
        return []
    found = []
    for name in names:
        kind = manifest_kind(os.path.join(folder, name)) if named_for_rocm(name) else None
        if kind:
            found.append((name, kind))
    return found
