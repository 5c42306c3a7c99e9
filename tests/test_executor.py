"""rocmlint verify --run: the CPU executor, on probe programs of its own and the reference library.

Every probe is a small HIP (or CUDA) program with a host check. The hazards fail at wave 64
and pass at wave 32, their fixes pass at both; the executor's own stops (deadlock, fault,
time limit, HIP's *_sync trap, warpSize in host code) and compile-time refusals carry a
message naming what happened. Builds are cached for the session (ROCMLINT_EXECUTOR_CACHE).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocmlint.reference import list_kernels
from rocmlint.verify.toolchain import find_host_compiler

pytestmark = pytest.mark.skipif(find_host_compiler()[0] is None, reason="no clang++ for the CPU executor")

HEADER = "#include <hip/hip_runtime.h>\n#include <cstdio>\n#include <vector>\n"

# Per-wave sums of 0, 1, 2, ... through a shuffle reduction read by lane 0.
REDUCE = HEADER + """
__global__ void wave_sums(const int* in, int* sums) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  for (int offset = FIRST_OFFSET; offset > 0; offset /= 2) v += __shfl_down(v, offset);
  if (__lane_id() == 0) sums[i / warpSize] = v;
}

int main() {
  int wave = 0;
  hipDeviceGetAttribute(&wave, hipDeviceAttributeWarpSize, 0);
  const int n = 1024, waves = n / wave;
  std::vector<int> in(n), sums(waves);
  for (int i = 0; i < n; ++i) in[i] = i;
  int *d_in, *d_sums;
  hipMalloc(&d_in, n * sizeof(int));
  hipMalloc(&d_sums, waves * sizeof(int));
  hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice);
  wave_sums<<<n / 256, 256>>>(d_in, d_sums);
  hipMemcpy(sums.data(), d_sums, waves * sizeof(int), hipMemcpyDeviceToHost);
  int bad = 0;
  for (int w = 0; w < waves; ++w) {
    int want = 0;
    for (int i = w * wave; i < (w + 1) * wave; ++i) want += i;
    bad += sums[w] != want;
  }
  printf("%s: %d of %d wave sums wrong\\n", bad ? "FAIL" : "PASS", bad, waves);
  return bad ? 1 : 0;
}
"""

# How many flags are set, counted from one ballot per wave.
BALLOT = HEADER + """
__global__ void count_flags(const int* flags, int* total) {
  const MASK_TYPE votes = __ballot(flags[blockIdx.x * blockDim.x + threadIdx.x] != 0);
  if (__lane_id() == 0) atomicAdd(total, POPCOUNT(votes));
}

int main() {
  const int n = 4096;
  std::vector<int> flags(n);
  int want = 0;
  for (int i = 0; i < n; ++i) want += flags[i] = (i * 7) % 3 == 0;
  int *d_flags, *d_total, total = 0;
  hipMalloc(&d_flags, n * sizeof(int));
  hipMalloc(&d_total, sizeof(int));
  hipMemcpy(d_flags, flags.data(), n * sizeof(int), hipMemcpyHostToDevice);
  hipMemset(d_total, 0, sizeof(int));
  count_flags<<<n / 256, 256>>>(d_flags, d_total);
  hipMemcpy(&total, d_total, sizeof(int), hipMemcpyDeviceToHost);
  printf("%s: %d flags counted, %d set\\n", total == want ? "PASS" : "FAIL", total, want);
  return total == want ? 0 : 1;
}
"""

# Rows of 32 values: an xor reduction inside each 32-lane group, then a broadcast of lane 0.
BROADCAST = HEADER + """
__global__ void row_max(const int* in, int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  for (int mask = 16; mask > 0; mask /= 2) v = max(v, __shfl_xor(v, mask, 32));
  out[i] = BROADCAST_CALL;
}

int main() {
  const int n = 2048;
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 37) % 101;
  int *d_in, *d_out;
  hipMalloc(&d_in, n * sizeof(int));
  hipMalloc(&d_out, n * sizeof(int));
  hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice);
  row_max<<<n / 128, 128>>>(d_in, d_out);
  hipMemcpy(out.data(), d_out, n * sizeof(int), hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    int want = 0;
    for (int j = i / 32 * 32; j < i / 32 * 32 + 32; ++j) want = want > in[j] ? want : in[j];
    bad += out[i] != want;
  }
  printf("%s: %d of %d row maxima wrong\\n", bad ? "FAIL" : "PASS", bad, n);
  return bad ? 1 : 0;
}
"""

# The documented semantics, checked against expectations written from HIP's documentation.
SEMANTICS = HEADER + """
constexpr int kChecks = 16;

__global__ void wave_semantics(int* out, int* counts) {
  const int t = threadIdx.x, n = blockDim.x;
  const int lane = __lane_id();
  int* o = out + t;
  o[0 * n] = __shfl(lane, 5, 8);
  o[1 * n] = __shfl(lane, 37);
  o[2 * n] = __shfl_up(lane, 3, 16);
  o[3 * n] = __shfl_down(lane, 5, 32);
  o[4 * n] = __shfl_xor(lane, 32);
  o[5 * n] = __shfl_xor(lane, 8, 8);
  o[6 * n] = static_cast<int>(__ballot(lane % 3 == 0) >> 32);
  o[7 * n] = __popcll(__ballot(1));
  int inside;
  if (lane < 10) {
    inside = __popcll(__activemask());
  } else {
    inside = -__popcll(__activemask());
  }
  o[8 * n] = inside;
  o[9 * n] = __popcll(__activemask());
  int odd = -1;
  if (lane & 1) odd = __shfl_xor(lane + 100, 1);  // reads an inactive (even) lane
  o[10 * n] = odd;
  o[11 * n] = __popcll(__lanemask_lt()) * 1000 + __popcll(__lanemask_gt());
  o[12 * n] = __popcll(__match_any(lane % 4));
  o[13 * n] = __syncthreads_count(t % 5 == 0);
  o[14 * n] = __any(lane == 3) * 10 + __all(lane < 1000);
  o[15 * n] = __shfl(static_cast<double>(lane) + 0.5, 1) == 1.5;
  if (t == 0) atomicAdd(counts, 1);
}

int main() {
  int wave = 0;
  hipDeviceGetAttribute(&wave, hipDeviceAttributeWarpSize, 0);
  const int n = 128;
  int *d_out, *d_count;
  hipMalloc(&d_out, kChecks * n * sizeof(int));
  hipMalloc(&d_count, sizeof(int));
  hipMemset(d_count, 0, sizeof(int));
  wave_semantics<<<3, n>>>(d_out, d_count);
  std::vector<int> out(kChecks * n);
  hipMemcpy(out.data(), d_out, out.size() * sizeof(int), hipMemcpyDeviceToHost);
  int blocks = 0;
  hipMemcpy(&blocks, d_count, sizeof(int), hipMemcpyDeviceToHost);
  int bad = blocks != 3;
  for (int t = 0; t < n; ++t) {
    const int lane = t % wave;
    unsigned long long high = 0;
    for (int l = 32; l < wave; ++l) high |= static_cast<unsigned long long>(l % 3 == 0) << (l - 32);
    const int want[kChecks] = {
        lane / 8 * 8 + 5,
        37 % wave,
        lane % 16 >= 3 ? lane - 3 : lane,
        lane % 32 + 5 < 32 ? lane + 5 : lane,
        wave == 64 ? lane ^ 32 : lane,
        (lane & 8) ? lane - 8 : lane,
        static_cast<int>(high),
        wave,
        lane < 10 ? 10 : -(wave - 10),
        wave,
        (lane & 1) ? 0 : -1,
        lane * 1000 + (wave - 1 - lane),
        wave / 4,
        (n + 4) / 5,
        11,
        1,
    };
    for (int c = 0; c < kChecks; ++c)
      if (out[c * n + t] != want[c] && bad++ < 8) printf("check %d, thread %d: got %d, want %d\\n", c, t, out[c * n + t], want[c]);
  }
  bad += __popc(0xF0F0u) != 8 || __ffs(0) != 0 || __ffs(8) != 4 || __ffsll(1ull << 40) != 41;
  bad += __clz(1) != 31 || __clz(0) != 32 || __clzll(1) != 63 || __brev(1u) != 0x80000000u;
  bad += __byte_perm(0x33221100u, 0x77665544u, 0x5140u) != 0x55114400u;
  printf("%s wave %d\\n", bad ? "FAIL" : "PASS", wave);
  return bad ? 1 : 0;
}
"""

# CUDA as hipify leaves it: runtime names, a 2-D launch, a kernel template deduced from its
# arguments, dynamic shared memory, *_sync shuffles with a 64-bit mask, __syncwarp.
CUDA_STYLE = """#include <cuda_runtime.h>
#include <cstdio>

template <typename T>
__global__ void scale_rows(T* data, T factor, int width) {
  extern __shared__ unsigned char raw[];
  T* row = reinterpret_cast<T*>(raw);
  const int x = threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  row[threadIdx.y * blockDim.x + x] = data[y * width + x] * factor;
  __syncthreads();
  T v = row[threadIdx.y * blockDim.x + (blockDim.x - 1 - x)];
  __syncwarp();
  const unsigned long long mask = __activemask();
  v += __shfl_down_sync(mask, v, 0);
  data[y * width + x] = v;
}

int main() {
  const int width = 16, height = 32;
  float* d = nullptr;
  float host[width * height];
  for (int i = 0; i < width * height; ++i) host[i] = static_cast<float>(i);
  if (cudaMalloc(&d, sizeof host) != cudaSuccess) return 2;
  cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice);
  scale_rows<<<dim3(1, height / 8), dim3(width, 8), width * 8 * sizeof(float)>>>(d, 0.5f, width);
  if (cudaGetLastError() != cudaSuccess) return 2;
  cudaDeviceSynchronize();
  cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(d);
  int bad = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) bad += host[y * width + x] != 2.0f * 0.5f * (y * width + width - 1 - x);
  printf("%s\\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
"""

GGL = HEADER + """
template <typename T, int kScale>
__global__ void scaled_copy(const T* in, T* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;  // the tail's lanes exit before the barrier: exited threads do not hold it
  __syncthreads();
  out[i] = in[i] * kScale;
}

int main() {
  const int n = 1000;
  std::vector<int> in(n, 3), out(n);
  int *d_in, *d_out;
  hipMalloc(&d_in, n * sizeof(int));
  hipMalloc(&d_out, n * sizeof(int));
  hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(scaled_copy<int, 4>), dim3((n + 255) / 256), dim3(256), 0, 0, d_in, d_out, n);
  const bool launched = hipGetLastError() == hipSuccess;
  hipLaunchKernelGGL(HIP_KERNEL_NAME(scaled_copy<int, 4>), dim3(1), dim3(2048), 0, 0, d_in, d_out, n);
  const bool refused = hipGetLastError() == hipErrorInvalidConfiguration;
  hipMemcpy(out.data(), d_out, n * sizeof(int), hipMemcpyDeviceToHost);
  int bad = !launched || !refused;
  for (int v : out) bad += v != 12;
  printf("%s\\n", bad ? "FAIL" : "PASS");
  return bad;
}
"""

MACROS = HEADER + """
int main() {
  hipDeviceProp_t prop;
  hipGetDeviceProperties(&prop, 0);
#if defined(__GFX9__) && defined(__gfx942__)
  const char* family = "gfx9";
#elif defined(__GFX11__) && defined(__gfx1100__)
  const char* family = "gfx11";
#else
  const char* family = "none";
#endif
#if defined(__HIP_PLATFORM_AMD__) && defined(__HIPCC__) && defined(__HIP__) && !defined(__CUDA_ARCH__)
  const char* view = "amd";
#else
  const char* view = "other";
#endif
  printf("macro %d family %s view %s arch %s warp %d\\n", __AMDGCN_WAVEFRONT_SIZE, family, view, prop.gcnArchName,
         prop.warpSize);
  return 3;
}
"""

DEADLOCK = HEADER + """
__global__ void first_warp_waits(int* out) {
  if (threadIdx.x < 32) __syncthreads();
  out[threadIdx.x] = 1;
  __syncthreads();
}

int main() {
  int* d;
  hipMalloc(&d, 256 * sizeof(int));
  first_warp_waits<<<1, 256>>>(d);
  printf("PASS\\n");
  return 0;
}
"""

FAULT = HEADER + """
__global__ void write_through(int* out) { out[threadIdx.x] = 1; }

int main(int argc, char**) {
  int* nowhere = reinterpret_cast<int*>(static_cast<uintptr_t>(argc) * 16);  // not a constant: never folded
  write_through<<<1, 64>>>(nowhere);
  return 0;
}
"""

STACK = HEADER + """
__device__ int deep(int n) {
  volatile char frame[512];
  frame[0] = static_cast<char>(n);
  return n == 0 ? 0 : deep(n - 1) + frame[0];
}
__global__ void recurse(int* out) { out[threadIdx.x] = deep(100000); }

int main() {
  int* d;
  hipMalloc(&d, 64 * sizeof(int));
  recurse<<<1, 64>>>(d);
  return 0;
}
"""

HOST_WARPSIZE = HEADER + """
int main() {
  const int waves_per_block = 256 / warpSize;
  printf("%d\\n", waves_per_block);
  return 0;
}
"""

SYNC_MASK_64 = HEADER + """
__global__ void vote(const int* in, unsigned long long* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long votes = __ballot_sync(0xffffffffull, in[i] > 0);
  if (__lane_id() == 0) out[i / warpSize] = votes;
}

int main() {
  int wave = 0;
  hipDeviceGetAttribute(&wave, hipDeviceAttributeWarpSize, 0);
  std::vector<int> in(64, 1);
  int* d_in;
  unsigned long long* d_out;
  hipMalloc(&d_in, 64 * sizeof(int));
  hipMalloc(&d_out, 2 * sizeof(unsigned long long));
  hipMemcpy(d_in, in.data(), 64 * sizeof(int), hipMemcpyHostToDevice);
  vote<<<1, 64>>>(d_in, d_out);
  unsigned long long votes = 0;
  hipMemcpy(&votes, d_out, sizeof votes, hipMemcpyDeviceToHost);
  printf("votes %llx\\n", votes);
  return votes == 0xffffffffull ? 0 : 1;
}
"""

# Block 0 waits for block 1: blocks run one after another here, so it never ends.
SPIN = HEADER + """
__global__ void wait_for_next_block(volatile int* flag) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    while (*flag == 0) {
    }
  }
  if (blockIdx.x == 1 && threadIdx.x == 0) *flag = 1;
}

int main() {
  int* d;
  hipMalloc(&d, sizeof(int));
  hipMemset(d, 0, sizeof(int));
  wait_for_next_block<<<2, 64>>>(d);
  return 0;
}
"""

# A block sum whose last 32 values are reduced through volatile shared memory with no
# __syncwarp: right where the lanes of a wave access memory in lockstep, as on AMD GPUs.
LOCKSTEP = HEADER + """
__device__ void last_warp(volatile int* s, int t) {
  s[t] += s[t + 32];
  s[t] += s[t + 16];
  s[t] += s[t + 8];
  s[t] += s[t + 4];
  s[t] += s[t + 2];
  s[t] += s[t + 1];
}

__global__ void block_sums(const int* in, int* out) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int stride = 128; stride > 32; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t < 32) last_warp(s, t);
  if (t == 0) out[blockIdx.x] = s[0];
}

int main() {
  const int blocks = 16, n = blocks * 256;
  std::vector<int> in(n), out(blocks);
  for (int i = 0; i < n; ++i) in[i] = i % 17;
  int *d_in, *d_out;
  hipMalloc(&d_in, n * sizeof(int));
  hipMalloc(&d_out, blocks * sizeof(int));
  hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice);
  block_sums<<<blocks, 256>>>(d_in, d_out);
  hipMemcpy(out.data(), d_out, blocks * sizeof(int), hipMemcpyDeviceToHost);
  int bad = 0;
  for (int b = 0; b < blocks; ++b) {
    int want = 0;
    for (int i = b * 256; i < (b + 1) * 256; ++i) want += in[i];
    bad += out[b] != want;
  }
  printf("%s\\n", bad ? "FAIL" : "PASS");
  return bad;
}
"""

# Programs the executor refuses at compile time, each with the words its message must hold.
REFUSED = {
    "sync_mask_32bit.hip": (HEADER + "__global__ void k(float* v) { v[0] = __shfl_down_sync(0xffffffff, v[0], 1); }\n"
                            "int main() { return 0; }\n", ["mask of a *_sync function must be a 64-bit integer"]),
    "warpsize_bound.hip": (HEADER + "__global__ void k(float* v) { __shared__ float row[warpSize]; row[0] = 1; "
                           "v[0] = row[0]; }\nint main() { return 0; }\n", ["warpSize", "ROC206"]),
    "warpsize_assert.hip": (HEADER + "static_assert(warpSize == 64, \"wave64 only\");\nint main() { return 0; }\n",
                            ["static assertion", "warpSize", "ROC206"]),
    "half.hip": ("#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\nint main() { return 0; }\n",
                 ["hip/hip_fp16.h", "not provided"]),
    "ptx.cu": ("__global__ void k(unsigned* out) { unsigned lane; asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane)); "
               "out[0] = lane; }\nint main() { return 0; }\n", ["inline assembly", "ROC301"]),
    "bad_launch.hip": (HEADER + "__global__ void k() {}\nint main() { k<<<1, 1(); return 0; }\n",
                       ["bad_launch.hip:5: error: no '>>>' closes this '<<<'"]),
}


# Out of bounds: a two-level scan's scratch sized for 32-lane waves (2 x 32), indexed by the
# first warpSize threads at 2 * tid - lane + warpSize; dynamic shared memory read past what the
# launch asked for on 64 lanes; a buffer written one block past its end.
SCRATCH_2X32 = HEADER + """
__global__ void scan_pairs(const int* in, int* out) {
  __shared__ int scratch[64];
  const int lane = threadIdx.x % warpSize;
  if (threadIdx.x < warpSize) scratch[2 * threadIdx.x - lane + warpSize] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) out[0] = scratch[warpSize];
}
int main() {
  int *in, *out;
  hipMalloc(&in, 256 * sizeof(int));
  hipMalloc(&out, sizeof(int));
  hipMemset(in, 0, 256 * sizeof(int));
  scan_pairs<<<1, 256>>>(in, out);
  hipDeviceSynchronize();
  return 0;
}
"""

DYNAMIC_SHARED = HEADER + """
__global__ void stage(const float* in, float* out) {
  extern __shared__ float tile[];
  tile[threadIdx.x + warpSize] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}
int main() {
  float *in, *out;
  hipMalloc(&in, 256 * sizeof(float));
  hipMalloc(&out, 256 * sizeof(float));
  hipMemset(in, 0, 256 * sizeof(float));
  stage<<<1, 256, (256 + 32) * sizeof(float)>>>(in, out);
  hipDeviceSynchronize();
  return 0;
}
"""

# The scan scratch reached through a helper's pointer (no extent for -fsanitize=array-bounds to
# see): 2 x 40 slots, written up to 2 * 64 - 1 by a 64-lane wave.
POINTER_OVERRUN = HEADER + """
__device__ void scan_step(volatile int* slots, int value) {
  int at = 2 * threadIdx.x - (threadIdx.x & (warpSize - 1)) + warpSize;
  slots[at] = value;
}
__global__ void scan_slots(const int* in, int* out) {
  __shared__ int slots[80];
  if (threadIdx.x < warpSize) scan_step(slots, in[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = slots[warpSize];
}
int main() {
  int *in, *out;
  hipMalloc(&in, 256 * sizeof(int));
  hipMalloc(&out, sizeof(int));
  hipMemset(in, 0, 256 * sizeof(int));
  scan_slots<<<1, 256>>>(in, out);
  hipDeviceSynchronize();
  return 0;
}
"""

BUFFER_OVERRUN = HEADER + """
__global__ void fill(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
int main() {
  int* out;
  hipMalloc(&out, 1000 * sizeof(int));
  fill<<<4, 256>>>(out);
  hipDeviceSynchronize();
  return 0;
}
"""

PROBES = {
    "reduce16.hip": REDUCE.replace("FIRST_OFFSET", "16"),
    "reduce16_fixed.hip": REDUCE.replace("FIRST_OFFSET", "warpSize / 2"),
    "ballot32.hip": BALLOT.replace("MASK_TYPE", "unsigned").replace("POPCOUNT", "__popc"),
    "ballot32_fixed.hip": BALLOT.replace("MASK_TYPE", "unsigned long long").replace("POPCOUNT", "__popcll"),
    "broadcast.hip": BROADCAST.replace("BROADCAST_CALL", "__shfl(v, 0)"),
    "broadcast_fixed.hip": BROADCAST.replace("BROADCAST_CALL", "__shfl(v, 0, 32)"),
    "semantics.hip": SEMANTICS,
    "cuda_style.cu": CUDA_STYLE,
    "ggl.hip": GGL,
    "macros.hip": MACROS,
    "deadlock.hip": DEADLOCK,
    "fault.hip": FAULT,
    "stack.hip": STACK,
    "host_warpsize.hip": HOST_WARPSIZE,
    "sync_mask_64.hip": SYNC_MASK_64,
    "lockstep.hip": LOCKSTEP,
    "scratch_2x32.hip": SCRATCH_2X32,
    "dynamic_shared.hip": DYNAMIC_SHARED,
    "buffer_overrun.hip": BUFFER_OVERRUN,
    "pointer_overrun.hip": POINTER_OVERRUN,
    **{name: text for name, (text, _words) in REFUSED.items()},
}


@pytest.fixture(scope="session")
def executor_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("executor-cache")


def verify_run(*args: str, cache: Path, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "ROCMLINT_EXECUTOR_CACHE": str(cache)}
    return subprocess.run([sys.executable, "-m", "rocmlint.verify", "--run", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def rows_by_target(done: subprocess.CompletedProcess) -> dict[tuple[str, int], dict]:
    assert "Traceback" not in done.stderr, done.stderr
    return {(Path(row["target"]).name, row["wave"]): row for row in json.loads(done.stdout)}


@pytest.fixture(scope="session")
def probes(tmp_path_factory, executor_cache) -> dict[tuple[str, int], dict]:
    folder = tmp_path_factory.mktemp("probes")
    for name, text in PROBES.items():
        (folder / name).write_text(text)
    done = verify_run(*sorted(PROBES), "--output-format", "json", "--time-limit", "30", cache=executor_cache,
                      cwd=folder)
    return rows_by_target(done)


@pytest.mark.parametrize("hazard", ["reduce16", "ballot32", "broadcast"])
def test_hazards_fail_at_64_and_pass_at_32_and_their_fixes_pass_at_both(probes, hazard):
    before = {wave: probes[f"{hazard}.hip", wave] for wave in (64, 32)}
    after = {wave: probes[f"{hazard}_fixed.hip", wave] for wave in (64, 32)}
    assert before[64]["outcome"] == "fail" and before[64]["status"] == 1, before[64]
    assert "FAIL" in before[64]["output"]
    assert before[32]["outcome"] == "pass", before[32]
    assert after[64]["outcome"] == "pass" and after[32]["outcome"] == "pass", after


def test_wave_semantics_match_hips_documentation(probes):
    for wave in (64, 32):
        row = probes["semantics.hip", wave]
        assert row["outcome"] == "pass", row["output"]
        assert f"PASS wave {wave}" in row["output"]


def test_lanes_of_a_wave_access_memory_in_lockstep(probes):
    for wave in (64, 32):
        assert probes["lockstep.hip", wave]["outcome"] == "pass", probes["lockstep.hip", wave]


def test_cuda_style_program_runs_as_hipify_would_leave_it(probes):
    for wave in (64, 32):
        assert probes["cuda_style.cu", wave]["outcome"] == "pass", probes["cuda_style.cu", wave]
        assert probes["ggl.hip", wave]["outcome"] == "pass", probes["ggl.hip", wave]


def test_each_wave_size_sees_its_target_macros(probes):
    assert probes["macros.hip", 64]["output"] == "macro 64 family gfx9 view amd arch gfx942 warp 64\n"
    assert probes["macros.hip", 32]["output"] == "macro 32 family gfx11 view amd arch gfx1100 warp 32\n"
    assert probes["macros.hip", 64]["status"] == 3 and probes["macros.hip", 64]["outcome"] == "fail"


@pytest.mark.parametrize("probe, words", [
    ("deadlock.hip", ["deadlock", "32 thread(s) at __syncthreads (", "deadlock.hip:6", "224 thread(s)",
                      "deadlock.hip:8", "first_warp_waits"]),
    ("fault.hip", ["memory access fault", "write_through", "block (0,0,0), thread (0,0,0)"]),
    ("stack.hip", ["stack overflow", "ROCMLINT_STACK_KB", "recurse"]),
    ("host_warpsize.hip", ["warpSize read by host code", "hipDeviceGetAttribute", "in host code"]),
])
def test_stops_carry_a_message_and_a_nonzero_status(probes, probe, words):
    for wave in (64, 32):
        row = probes[probe, wave]
        assert row["outcome"] == "stopped" and row["status"] == 70, row
        for word in words:
            assert word in row["reason"], (word, row["reason"])
    assert "PASS" not in probes["deadlock.hip", 64]["output"]


def test_an_index_past_an_arrays_extent_stops_the_run_at_the_wave_size_that_reaches_it(probes):
    row = probes["scratch_2x32.hip", 64]
    assert row["outcome"] == "stopped" and row["status"] == 70, row
    for word in ("out of bounds: index 64 of 'int[64]' at scratch_2x32.hip:8:", "kernel scan_pairs",
                 "thread (0,0,0)"):
        assert word in row["reason"], (word, row["reason"])
    assert probes["scratch_2x32.hip", 32]["outcome"] == "pass", probes["scratch_2x32.hip", 32]
    shared = probes["dynamic_shared.hip", 64]
    assert shared["outcome"] == "stopped" and "out of bounds: byte offset 1152 of dynamic shared memory, " \
        "1152 bytes at launch" in shared["reason"], shared
    assert probes["dynamic_shared.hip", 32]["outcome"] == "pass"
    through_pointer = probes["pointer_overrun.hip", 64]
    assert through_pointer["outcome"] == "stopped" and "out of bounds: a 4-byte access at byte offset 320 of " \
        "__shared__ `slots` of scan_slots (320 bytes), past its end through a pointer at pointer_overrun.hip:" \
        in through_pointer["reason"] and "thread (16,0,0)" in through_pointer["reason"], through_pointer
    assert probes["pointer_overrun.hip", 32]["outcome"] == "pass"
    for wave in (64, 32):  # a buffer overrun does not depend on the wave size
        row = probes["buffer_overrun.hip", wave]
        assert row["outcome"] == "stopped" and "out of bounds: byte offset 4000 of a device buffer of 4000 bytes" \
            in row["reason"] and "kernel fill" in row["reason"], row


def test_sync_mask_of_32_lanes_traps_on_wave64_as_hip_does(probes):
    row = probes["sync_mask_64.hip", 64]
    assert row["outcome"] == "stopped"
    assert "lane 32 calls it with mask 0x00000000ffffffff, which leaves it out" in row["reason"]
    assert "thread (32,0,0)" in row["reason"]
    assert probes["sync_mask_64.hip", 32]["outcome"] == "pass"


def test_without_ndebug_check_the_mask_keeps_only_its_lanes(tmp_path, executor_cache):
    (tmp_path / "sync_mask_64.hip").write_text(SYNC_MASK_64)
    done = verify_run("sync_mask_64.hip", "-D", "NDEBUG", "--wave", "64", "--output-format", "json",
                      cache=executor_cache, cwd=tmp_path)
    row = rows_by_target(done)["sync_mask_64.hip", 64]
    assert row["outcome"] == "pass" and "votes ffffffff" in row["output"], row


@pytest.mark.parametrize("program", sorted(REFUSED))
def test_unsupported_code_is_refused_at_compile_time_with_a_message_naming_it(probes, program):
    for wave in (64, 32):
        row = probes[program, wave]
        assert row["outcome"] == "no-build", row
        for word in REFUSED[program][1]:
            assert word in row["reason"], (word, row["reason"])


def test_block_waiting_for_a_later_block_is_stopped_by_the_time_limit(tmp_path, executor_cache):
    (tmp_path / "spin.hip").write_text(SPIN)
    done = verify_run("spin.hip", "--wave", "64", "--time-limit", "1", "--output-format", "json",
                      cache=executor_cache, cwd=tmp_path, timeout=120)
    row = rows_by_target(done)["spin.hip", 64]
    assert row["outcome"] == "stopped" and "time limit of 1 s" in row["reason"]
    assert "wait_for_next_block" in row["reason"] and "block (0,0,0), thread (0,0,0)" in row["reason"]
    assert done.returncode == 1


def test_ucontext_fibers_give_the_same_results(tmp_path, executor_cache):
    (tmp_path / "semantics.hip").write_text(SEMANTICS)
    done = verify_run("semantics.hip", "-D", "ROCMLINT_EXECUTOR_UCONTEXT", "--output-format", "json",
                      cache=executor_cache, cwd=tmp_path)
    rows = rows_by_target(done)
    assert rows["semantics.hip", 64]["outcome"] == "pass" and rows["semantics.hip", 32]["outcome"] == "pass"


def test_one_program_at_one_wave_prints_its_output_and_exits_with_its_status(tmp_path, executor_cache):
    (tmp_path / "macros.hip").write_text(MACROS)
    done = verify_run("macros.hip", "--wave", "32", cache=executor_cache, cwd=tmp_path)
    assert done.returncode == 3
    assert done.stdout == "macro 32 family gfx11 view amd arch gfx1100 warp 32\n"


def test_several_runs_print_each_output_then_a_table(tmp_path, executor_cache):
    (tmp_path / "macros.hip").write_text(MACROS)
    done = verify_run("macros.hip", cache=executor_cache, cwd=tmp_path)
    assert done.returncode == 1
    assert "=== macros.hip at wave 64: exit 3 ===\nmacro 64" in done.stdout
    assert re.search(r"macros\.hip\s+FAIL\s+FAIL\s+passes at both: UNEXPECTED", done.stdout)


def test_reused_builds_come_from_the_cache(tmp_path, executor_cache):
    (tmp_path / "macros.hip").write_text(MACROS)
    first = rows_by_target(verify_run("macros.hip", "--output-format", "json", cache=executor_cache, cwd=tmp_path))
    again = rows_by_target(verify_run("macros.hip", "--output-format", "json", cache=executor_cache, cwd=tmp_path))
    assert again["macros.hip", 64]["cached_build"] and again["macros.hip", 32]["cached_build"]
    assert first["macros.hip", 64]["output"] == again["macros.hip", 64]["output"]
    fresh = rows_by_target(verify_run("macros.hip", "--no-cache", "--output-format", "json", cache=executor_cache,
                                      cwd=tmp_path))
    assert not fresh["macros.hip", 64]["cached_build"]


def test_launch_in_a_header_is_refused_with_a_note(tmp_path, executor_cache):
    (tmp_path / "launch.cuh").write_text("#pragma once\n__global__ void k(int* p) { p[threadIdx.x] = 1; }\n"
                                         "inline void launch(int* p) { k<<<1, 64>>>(p); }\n")
    (tmp_path / "main.hip").write_text(HEADER + '#include "launch.cuh"\nint main() { launch(nullptr); }\n')
    row = rows_by_target(verify_run("main.hip", "--wave", "64", "--output-format", "json", cache=executor_cache,
                                    cwd=tmp_path))["main.hip", 64]
    assert row["outcome"] == "no-build" and "launch.cuh:3" in row["reason"]
    assert "rewritten in the program's own file only" in row["reason"]


def test_args_reach_the_program(tmp_path, executor_cache):
    (tmp_path / "echo.hip").write_text(HEADER + 'int main(int argc, char** argv) {\n'
                                       '  for (int i = 1; i < argc; ++i) printf("[%s]", argv[i]);\n'
                                       '  return argc;\n}\n')
    done = verify_run("echo.hip", "--wave", "64", "--args", "1 'two words'", cache=executor_cache, cwd=tmp_path)
    assert done.stdout == "[1][two words]" and done.returncode == 3


def test_a_damaged_precompiled_prelude_is_built_around(tmp_path):
    cache = tmp_path / "cache"
    (tmp_path / "macros.hip").write_text(MACROS)
    assert verify_run("macros.hip", "--wave", "64", cache=cache, cwd=tmp_path).returncode == 3
    [prelude] = cache.glob("*.pch")
    prelude.write_bytes(b"not a precompiled header")
    for binary in cache.glob("*.exe"):
        binary.unlink()
    done = verify_run("macros.hip", "--wave", "64", cache=cache, cwd=tmp_path)
    assert done.returncode == 3 and done.stdout.startswith("macro 64"), done.stderr


@pytest.mark.parametrize("args, message", [
    (["--wave", "48"], "--wave takes 64, 32 or 64,32"),
    (["--cuda"], "--run takes neither --cuda nor --offload-arch"),
    (["missing.hip"], "no such file: missing.hip"),
    (["--kernel", "nope"], "unknown reference kernel(s): nope"),
    (["--args", "'unclosed"], "--args: No closing quotation"),
])
def test_bad_arguments_exit_2_with_a_message(tmp_path, executor_cache, args, message):
    done = verify_run(*args, cache=executor_cache, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_no_clang_exits_2_with_the_packages_to_install(tmp_path, executor_cache):
    env = {**os.environ, "PATH": str(tmp_path), "ROCMLINT_EXECUTOR_CACHE": str(executor_cache)}
    env.pop("ROCM_PATH", None)
    done = subprocess.run([sys.executable, "-m", "rocmlint.verify", "--run"], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "no clang++ found for the CPU executor" in done.stderr


@pytest.fixture(scope="session")
def library(executor_cache) -> subprocess.CompletedProcess:
    return verify_run("--output-format", "json", cache=executor_cache)


def test_reference_library_runs_before_and_after_as_declared(library):
    assert library.returncode == 0, library.stdout[-3000:] + library.stderr
    rows = json.loads(library.stdout)
    kernels = list_kernels()
    assert len(kernels) >= 10
    assert {(row["target"], row["form"], row["wave"]) for row in rows} == {
        (kernel.name, form, wave) for kernel in kernels for form in ("before", "after") for wave in (64, 32)}
    for row in rows:
        assert row["as_expected"], row
        if row["form"] == "after":
            assert row["outcome"] == "pass"
    wave_hazards = [row for row in rows if row["form"] == "before" and row["target"] != "ptx_idioms"]
    assert all(row["outcome"] in ("fail", "stopped") for row in wave_hazards if row["wave"] == 64)
    assert all(row["outcome"] == "pass" for row in wave_hazards if row["wave"] == 32)


def test_reference_library_text_report(executor_cache):
    done = verify_run("--kernel", "wave_reduce,ptx_idioms", cache=executor_cache)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"wave_reduce\s+before\s+FAIL\s+PASS\s+fails at 64, passes at 32: ok", done.stdout)
    assert re.search(r"wave_reduce\s+after\s+PASS\s+PASS\s+passes at both: ok", done.stdout)
    assert re.search(r"ptx_idioms\s+before\s+NO-BUILD\s+NO-BUILD\s+does not build at both: ok", done.stdout)
    assert "4 programs, 8 runs: 8 as expected, 0 not" in done.stdout
