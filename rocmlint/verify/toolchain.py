"""Find a clang that compiles HIP for AMD GPUs, its HIP headers and device libraries.

Order: a ROCm install (``ROCM_PATH``, ``hipconfig --rocmpath``, ``/opt/rocm``) with its
amdclang++/clang++, then a system ``clang++-N`` (N >= 17) on PATH with HIP headers
(Debian/Ubuntu ``libamdhip64-dev``). hipcc is never used: Debian's picks the NVIDIA
platform when nvcc is on PATH.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

MIN_CLANG_MAJOR = 17
DEFAULT_ROCM_ROOTS = ("/opt/rocm",)
SYSTEM_HIP_ROOTS = ("/usr", "/usr/local")
DEBIAN_PACKAGES = "clang-19 lld-19 llvm-19 libamdhip64-dev rocm-device-libs"
MISSING_TOOLCHAIN_HINT = (
    "no HIP-capable clang found: install ROCm (and set ROCM_PATH or put hipconfig on PATH), "
    f"or on Debian/Ubuntu: apt-get install {DEBIAN_PACKAGES} "
    f"(a clang++-N with N >= {MIN_CLANG_MAJOR} on PATH plus the HIP headers)"
)
PROBE_TIMEOUT_S = 20
DEFAULT_TIME_LIMIT_S = 60.0


@dataclass(frozen=True)
class Toolchain:
    clang: str
    clang_major: int
    origin: str                    # "ROCm at /opt/rocm" or "system clang"
    hip_root: str                  # holds include/hip/hip_runtime.h
    hip_version: str
    rocm_root: str | None = None   # set for a real ROCm install
    device_lib_dir: str | None = None
    readelf: str | None = None

    @property
    def hip_flags(self) -> list[str]:
        """Where clang finds the HIP headers (and, for ROCm, everything else)."""
        root = self.rocm_root or (self.hip_root if self.hip_root != "/usr" else None)
        return [f"--rocm-path={root}"] if root else []

    @property
    def device_lib_flags(self) -> list[str]:
        if self.device_lib_dir and not self.rocm_root:
            return [f"--rocm-device-lib-path={self.device_lib_dir}"]
        return []

    def can_link(self, arch: str) -> bool:
        """Whether device libraries exist for ``arch`` (Debian's ROCm 5.2 ones stop at gfx1036)."""
        if self.device_lib_dir is None:
            return self.rocm_root is not None  # a ROCm install knows its own libraries
        isa = arch.split(":")[0].removeprefix("gfx")
        return Path(self.device_lib_dir, f"oclc_isa_version_{isa}.bc").is_file()

    def describe(self) -> str:
        libs = self.device_lib_dir or ("from ROCm" if self.rocm_root else "none")
        return (f"{self.clang} (clang {self.clang_major}, {self.origin}); HIP {self.hip_version} "
                f"headers in {self.hip_root}/include/hip; device libraries: {libs}")


@dataclass
class Discovery:
    toolchain: Toolchain | None
    rocm_roots: list[str] = field(default_factory=list)  # also where rocminfo may live
    rejected: list[str] = field(default_factory=list)    # why candidates were passed over

    def missing_message(self) -> str:
        lines = [MISSING_TOOLCHAIN_HINT]
        lines += [f"  passed over: {why}" for why in self.rejected]
        return "\n".join(lines)


def _output(argv: list[str], env: dict[str, str] | None = None) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def clang_major(clang: str) -> int | None:
    text = _output([clang, "--version"])
    match = re.search(r"clang version (\d+)", text or "")
    return int(match.group(1)) if match else None


def rocm_roots(env: Mapping[str, str] | None = None) -> list[str]:
    """Candidate ROCm install roots, most explicit first, existing ones only."""
    variables = os.environ if env is None else env
    roots = [variables.get("ROCM_PATH", ""), variables.get("HIP_PATH", "")]
    hipconfig = shutil.which("hipconfig", path=variables.get("PATH"))
    if hipconfig:
        roots.append((_output([hipconfig, "--rocmpath"]) or "").strip())
    roots += DEFAULT_ROCM_ROOTS
    unique: list[str] = []
    for root in roots:
        if root and os.path.isdir(root) and root not in unique:
            unique.append(root)
    return unique


def _hip_version(root: str) -> str:
    try:
        text = Path(root, "include/hip/hip_version.h").read_text(errors="replace")
    except OSError:
        return "unknown"
    numbers = []
    for part in ("MAJOR", "MINOR"):
        match = re.search(rf"HIP_VERSION_{part}\s+(\d+)", text)
        if match is None:
            return "unknown"
        numbers.append(match.group(1))
    return ".".join(numbers)


def _has_hip_headers(root: str) -> bool:
    return Path(root, "include/hip/hip_runtime.h").is_file()


def _device_lib_dir(roots: list[str], major: int) -> str | None:
    patterns = [f"{root}/amdgcn/bitcode" for root in roots]
    patterns += [f"{root}/llvm/lib/clang/*/lib/amdgcn/bitcode" for root in roots]
    patterns += ["/usr/lib/*/amdgcn/bitcode", f"/usr/lib/llvm-{major}/lib/clang/*/lib/amdgcn/bitcode"]
    for pattern in patterns:
        for candidate in sorted(glob.glob(pattern)):
            if Path(candidate, "ockl.bc").is_file():
                return candidate
    return None


def _readelf_beside(clang: str, env: dict[str, str]) -> str | None:
    """llvm-readelf of the same LLVM: next to the clang (or its real path), same -N suffix."""
    suffix = re.search(r"(-\d+)$", clang)
    names = [f"llvm-readelf{suffix.group(1)}"] if suffix else []
    names.append("llvm-readelf")
    for directory in dict.fromkeys([Path(clang).parent, Path(os.path.realpath(clang)).parent]):
        for name in names:
            if os.access(directory / name, os.X_OK):
                return str(directory / name)
    return shutil.which(names[0], path=env.get("PATH"))


def _rocm_clang(root: str) -> str | None:
    for relative in ("llvm/bin/amdclang++", "llvm/bin/clang++", "bin/amdclang++"):
        candidate = Path(root, relative)
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _system_clangs(env: dict[str, str]) -> list[str]:
    """clang++-N and clang++ on PATH, newest versioned name first."""
    found: dict[str, int] = {}
    for directory in env.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(directory or ".")
        except OSError:
            continue
        for name in names:
            match = re.fullmatch(r"clang\+\+(?:-(\d+))?", name)
            path = os.path.join(directory, name)
            if match and path not in found and os.access(path, os.X_OK):
                found[path] = int(match.group(1) or 0)
    return sorted(found, key=lambda path: -found[path])


def _recent_clang_major(clang: str, rejected: list[str]) -> int | None:
    """The clang's major version when recent enough, else None with the reason added to ``rejected``."""
    major = clang_major(clang)
    if major is None or major < MIN_CLANG_MAJOR:
        rejected.append(f"{clang} (clang {major or '?'}: need {MIN_CLANG_MAJOR} or newer)")
        return None
    return major


def find_toolchain(env: dict[str, str] | None = None) -> Discovery:
    env = dict(os.environ if env is None else env)
    rejected: list[str] = []
    roots = rocm_roots(env)
    for root in roots:
        clang = _rocm_clang(root)
        if clang is None or not _has_hip_headers(root):
            continue
        major = clang_major(clang)
        if major is None:
            rejected.append(f"{clang} (does not run)")
            continue
        return Discovery(Toolchain(
            clang=clang, clang_major=major, origin=f"ROCm at {root}", hip_root=root,
            hip_version=_hip_version(root), rocm_root=root,
            device_lib_dir=_device_lib_dir([root], major), readelf=_readelf_beside(clang, env),
        ), roots, rejected)

    hip_roots = [root for root in [*roots, *SYSTEM_HIP_ROOTS] if _has_hip_headers(root)]
    for clang in _system_clangs(env):
        major = _recent_clang_major(clang, rejected)
        if major is None:
            continue
        if not hip_roots:
            rejected.append(f"{clang} (no HIP headers: install libamdhip64-dev)")
            continue
        return Discovery(Toolchain(
            clang=clang, clang_major=major, origin="system clang", hip_root=hip_roots[0],
            hip_version=_hip_version(hip_roots[0]),
            device_lib_dir=_device_lib_dir(roots, major), readelf=_readelf_beside(clang, env),
        ), roots, rejected)
    return Discovery(None, roots, rejected)


@dataclass(frozen=True)
class HostCompiler:
    """A clang++ that builds programs for the CPU executor (``verify --run``): plain host C++."""
    clang: str
    clang_major: int
    readelf: str | None   # lists the undefined thread-local symbols: `extern __shared__` arrays

    def describe(self) -> str:
        return f"{self.clang} (clang {self.clang_major})"


HOST_COMPILER_HINT = (f"no clang++ found for the CPU executor: install clang (a clang++-N with N >= {MIN_CLANG_MAJOR} "
                      "on PATH; Debian/Ubuntu: apt-get install clang-19 llvm-19)")


def find_host_compiler(env: dict[str, str] | None = None) -> tuple[HostCompiler | None, list[str]]:
    """A ROCm install's clang, else the newest clang++-N on PATH; and why others were passed over."""
    env = dict(os.environ if env is None else env)
    rejected: list[str] = []
    candidates = [clang for root in rocm_roots(env) if (clang := _rocm_clang(root))] + _system_clangs(env)
    for clang in candidates:
        major = _recent_clang_major(clang, rejected)
        if major is None:
            continue
        readelf = _readelf_beside(clang, env) or shutil.which("readelf", path=env.get("PATH"))
        return HostCompiler(clang, major, readelf), rejected
    return None, rejected
