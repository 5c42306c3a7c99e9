"""Cache soundness, differentially: random edits (seeded) to the headers, kernels and build
files of a small dual-platform project; after each edit a cached run must report exactly what a run
without the cache reports. A cached result must rest on every outside fact it read:
another header's #define bodies, shims, includes, build-file definitions, file existence."""
from __future__ import annotations

import os
import random
from pathlib import Path

from rocmlint.config import ConfigResolver
from rocmlint.discovery import discover
from rocmlint.project import Project, find_root
from rocmlint.runner import run

EDITS = 220
SEED = 20261124

KERNELS = {
    # ROC204 reads WARP_SIZE's body from config.h; ROC203 asks for the shim of __shfl_xor_sync;
    # ROC301/ROC304 sit under HAS_MMA, derived in config.h; ROC303 asks whether a local header
    # of the toolkit's name exists and whether the build hipifies.
    "src/reduce.cu": ('#include "common.cuh"\n'
                      "__device__ float warp_sum(float x) {\n"
                      "  for (int m = 1; m < 64; m <<= 1) x += __shfl_xor_sync(0xffffffff, x, m);\n"
                      "  return x;\n}\n"
                      "__global__ void lanes(int* out) { out[threadIdx.x] = threadIdx.x % WARP_SIZE; }\n"
                      # ROC207 reads WARP_SIZE's body (another header's) to know the check is against 32
                      "void require_warps(const cudaDeviceProp& prop) {\n"
                      "  if (prop.warpSize != WARP_SIZE) throw std::runtime_error(\"unsupported warp size\");\n}\n"),
    "src/tiles.cu": ('#include "common.cuh"\n#include "vector_types.h"\n#include <cub/cub.cuh>\n'
                     "__device__ float4 mma(const unsigned* a, float4 c) {\n  float4 d = c;\n"
                     "#ifdef HAS_MMA\n  asm volatile(\"mma.sync.aligned.m16n8k16 ...\" : \"+f\"(d.x) : \"r\"(a[0]));\n"
                     "#endif\n  return d;\n}\n"
                     "__global__ void rows(float* y) { y[threadIdx.x / WARP_SIZE] = 0.f; }\n"),
    # No wave-wide text: the lane-group model runs only while WARP_SIZE may be the wave size
    # (its body in config.h, two includes deep, and the project's macro table).
    "src/strides.cu": ('#include "common.cuh"\n'
                       "__global__ void strided(float* x) {\n  int lane = threadIdx.x % 32;\n"
                       "  for (int i = lane; i < 256; i += WARP_SIZE) x[i] = 0.f;\n}\n"),
}
COMMON = ['#include "config.h"', '#include "shims.h"']
CONFIG_CHOICES = {
    "warp": ["#define WARP_SIZE 32", "#define WARP_SIZE 64", "#define WARP_SIZE (32)", "", "#define WARP_SIZE 16",
             "#define WARP_SIZE warpSize"],
    "mma": ["#ifndef USE_ROCM\n#define HAS_MMA\n#endif", "#define HAS_MMA", "", "#if defined(MY_HIP_BUILD)\n#else\n#define HAS_MMA\n#endif"],
    "hip": ["#ifdef MY_HIP_BUILD\n#include <hip/hip_runtime.h>\n#endif", ""],
}
SHIM_CHOICES = ["#ifdef USE_ROCM\n#define __shfl_xor_sync(mask, v, o) __shfl_xor(v, o)\n#endif",
                "#define __shfl_xor_sync(mask, v, o) __shfl_xor(v, o, 64)", "",
                "#define __shfl_xor_sync(mask, v, o) __shfl_xor_sync((unsigned long long)(mask), v, o)"]
CMAKE_CHOICES = ["", 'if(MY_HIP)\n  add_compile_definitions(MY_HIP_BUILD)\nendif()\n',
                 'if(MY_HIP)\n  add_compile_definitions(MY_HIP_BUILD WARP_SIZE=64)\nendif()\n',
                 "hipify_sources(src)\n"]


class Tree:
    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        self.config = {key: choices[0] for key, choices in CONFIG_CHOICES.items()}
        self.shim = SHIM_CHOICES[0]
        self.common = list(COMMON)
        self.cmake = CMAKE_CHOICES[1]
        self.local_header = False
        self.clock = 1_700_000_000_000_000_000
        (root / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
        # Kernel edits: code lines added after the #include (no directive moves: the stored
        # model is kept) and a #define toggled on top (directives move: it is rebuilt).
        self.padding = {rel: 0 for rel in KERNELS}
        self.local_define = {rel: False for rel in KERNELS}
        for rel in KERNELS:
            self.write_kernel(rel)
        self.flush()

    def write_kernel(self, rel: str) -> None:
        head, _, body = KERNELS[rel].partition("\n")
        define = "#define LOCAL_TILE 8\n" if self.local_define[rel] else ""
        self.write(rel, define + head + "\n" + "static int spare_slot;\n" * self.padding[rel] + body)

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.clock += 10_000_000  # a later mtime for each write, as edits seconds apart have
        os.utime(path, ns=(self.clock, self.clock))

    def flush(self) -> None:
        self.write("src/config.h", "#pragma once\n" + "\n".join(v for v in self.config.values() if v) + "\n")
        self.write("src/shims.h", "#pragma once\n" + self.shim + "\n")
        self.write("src/common.cuh", "#pragma once\n" + "\n".join(self.common) + "\n")
        self.write("CMakeLists.txt", "project(tiles LANGUAGES CXX)\n" + self.cmake)
        local = self.root / "src" / "vector_types.h"
        if self.local_header:
            if not local.exists():
                self.write("src/vector_types.h", "struct float4_ { float x, y, z, w; };\n")
        elif local.exists():
            local.unlink()

    def edit(self) -> str:
        kind = self.rng.choice(["config", "config", "shim", "include", "cmake", "local-header", "kernel-code",
                                "kernel-directive"])
        if kind in ("kernel-code", "kernel-directive"):
            rel = self.rng.choice(sorted(KERNELS))
            if kind == "kernel-code":
                self.padding[rel] = (self.padding[rel] + 1) % 3
            else:
                self.local_define[rel] = not self.local_define[rel]
            self.write_kernel(rel)
            return kind
        if kind == "config":
            key = self.rng.choice(sorted(CONFIG_CHOICES))
            self.config[key] = self.rng.choice(CONFIG_CHOICES[key])
        elif kind == "shim":
            self.shim = self.rng.choice(SHIM_CHOICES)
        elif kind == "include":
            line = self.rng.choice(COMMON)
            if line in self.common:
                self.common.remove(line)
            else:
                self.common.append(line)
        elif kind == "cmake":
            self.cmake = self.rng.choice(CMAKE_CHOICES)
        else:
            self.local_header = not self.local_header
        self.flush()
        return kind


def findings(root: Path, use_cache: bool) -> list[tuple]:
    old = Path.cwd()
    os.chdir(root)
    try:
        resolver = ConfigResolver()
        settings = resolver.for_path(".")
        project = Project(find_root(["."]), settings, cache_dir=root / ".rocmlint_cache" if use_cache else None)
        project.prepare(["cpp"])
        results = run(discover(["."], resolver), "check", use_cache=use_cache, jobs=1, project=project,
                      build_fixes=False)
    finally:
        os.chdir(old)
    return sorted((f.path, f.line, f.code, f.message) for r in results for f in r.findings)


def test_cached_runs_equal_uncached_runs_over_random_header_edits(tmp_path, monkeypatch):
    from rocmlint.project import cpp_cache

    described = []  # whether a changed kernel's directives stayed put: the stored model was kept
    original = cpp_cache._still_described
    monkeypatch.setattr(cpp_cache, "_still_described", lambda *a: described.append(original(*a)) or described[-1])
    rng = random.Random(SEED)
    tree = Tree(tmp_path, rng)
    previous = findings(tmp_path, use_cache=True)
    changed = 0
    strided = set()  # whether the wave-sized stride was reported, over the edits
    for step in range(EDITS):
        kind = tree.edit()
        cached = findings(tmp_path, use_cache=True)
        fresh = findings(tmp_path, use_cache=False)
        assert cached == fresh, f"edit {step} ({kind}, seed {SEED}): the cached run differs from --no-cache"
        changed += cached != previous
        previous = cached
        strided.add(any(path.endswith("strides.cu") and code == "ROC204" for path, _line, code, _m in cached))
    # the edits reach the results: the test is not comparing two constant answers
    assert changed >= EDITS // 5, changed
    assert strided == {True, False}  # the lane-group pre-check's facts were exercised both ways
    assert set(described) == {True, False}  # the stored model was kept over kernel edits, and dropped
