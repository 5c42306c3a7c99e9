"""Large launches split over worker processes (issue 40 item 3): the same output, results and
stops as the sequential run, real atomics across processes, and programs whose kernels could
write program memory (a `__device__` variable) kept in one process."""
from __future__ import annotations

from pathlib import Path

import pytest

from rocmlint.verify.executor import Executor, Program, writes_program_memory
from rocmlint.verify.toolchain import find_host_compiler

COMPILER = find_host_compiler()[0]
pytestmark = pytest.mark.skipif(COMPILER is None, reason="no clang++ for the CPU executor")

# 512 blocks x 128 threads (past the executor's threshold for splitting a launch): a block sum,
# a global atomic total, a printf from some blocks, and an optional stop in block STOP_BLOCK.
PROGRAM = """#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>
__global__ void sums(const int* in, int* block_sums, unsigned long long* total, float* float_total) {
  __shared__ int partial[128];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = in[i];
  __syncthreads();
  for (int stride = 64; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  atomicAdd(total, (unsigned long long)in[i]);
  atomicAdd(float_total, 1.0f);
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = partial[0];
    if (blockIdx.x % 64 == 0) printf("block %d: %d\\n", blockIdx.x, partial[0]);
    if ((int)blockIdx.x == STOP_BLOCK) __builtin_trap();
  }
}
int main() {
  const int blocks = 512, threads = 128, n = blocks * threads;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i % 7;
  int *d_in, *d_sums; unsigned long long* d_total; float* d_float;
  hipMalloc(&d_in, n * sizeof(int)); hipMalloc(&d_sums, blocks * sizeof(int));
  hipMalloc(&d_total, 8); hipMalloc(&d_float, 4);
  hipMemset(d_total, 0, 8); hipMemset(d_float, 0, 4);
  hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice);
  sums<<<blocks, threads>>>(d_in, d_sums, d_total, d_float);
  std::vector<int> got(blocks); unsigned long long total = 0; float float_total = 0;
  hipMemcpy(got.data(), d_sums, blocks * sizeof(int), hipMemcpyDeviceToHost);
  hipMemcpy(&total, d_total, 8, hipMemcpyDeviceToHost);
  hipMemcpy(&float_total, d_float, 4, hipMemcpyDeviceToHost);
  long long want = 0, errors = 0;
  for (int b = 0; b < blocks; ++b) {
    int s = 0;
    for (int t = 0; t < threads; ++t) s += in[b * threads + t];
    want += s;
    errors += got[b] != s;
  }
  printf("total %llu (want %lld), float total %.0f, %lld wrong blocks\\n", total, want, float_total, errors);
  return errors != 0 || (long long)total != want || float_total != n;
}
"""


def run(tmp_path: Path, text: str, jobs: int, name: str = "program.hip"):
    (tmp_path / name).write_text(text)
    executor = Executor(COMPILER, tmp_path, None, 120, run_jobs=jobs)
    program = Program(tmp_path / name, name)
    build = executor.build(program, (64,))[64]
    return executor.run(program, 64, build), build


def test_a_split_launch_prints_and_computes_what_the_sequential_run_does(tmp_path):
    sequential, _ = run(tmp_path, PROGRAM.replace("STOP_BLOCK", "-1"), 1)
    split, build = run(tmp_path, PROGRAM.replace("STOP_BLOCK", "-1"), 3)
    assert build.parallel_safe
    assert sequential.outcome == "pass" and split.outcome == "pass", split.output
    assert split.output == sequential.output
    assert "total 196603 (want 196603), float total 65536, 0 wrong blocks" in split.output


def test_a_stop_in_a_late_block_ends_the_split_run_as_it_ends_the_sequential_one(tmp_path):
    sequential, _ = run(tmp_path, PROGRAM.replace("STOP_BLOCK", "300"), 1)
    split, _ = run(tmp_path, PROGRAM.replace("STOP_BLOCK", "300"), 3)
    assert sequential.outcome == split.outcome == "stopped"
    assert split.message == sequential.message and "block (300,0,0)" in split.message
    assert split.output == sequential.output  # the blocks before it printed, none after


PROCESSES = """#include <hip/hip_runtime.h>
#include <unistd.h>
#include <cstdio>
__global__ void where(int* pids) { if (threadIdx.x == 0) pids[blockIdx.x] = (int)getpid(); }
int main() {
  int* pids;
  hipMalloc(&pids, 512 * sizeof(int));
  where<<<512, 128>>>(pids);
  int first = 0, last = 0;
  hipMemcpy(&first, pids, sizeof(int), hipMemcpyDeviceToHost);
  hipMemcpy(&last, pids + 511, sizeof(int), hipMemcpyDeviceToHost);
  printf("%s\\n", first == last ? "one process" : "split");
  return 0;
}
"""


@pytest.mark.parametrize("jobs, expected", [(1, "one process"), (3, "split")])
def test_a_large_launch_is_split_only_when_jobs_allow(tmp_path, jobs, expected):
    result, _ = run(tmp_path, PROCESSES, jobs)
    assert result.output.strip() == expected


def test_device_variables_keep_a_program_in_one_process(tmp_path):
    text = PROGRAM.replace("STOP_BLOCK", "-1").replace(
        "__global__ void sums", "__device__ unsigned long long launches;\n__global__ void sums")
    result, build = run(tmp_path, text, 3)
    assert not build.parallel_safe and result.outcome == "pass"


@pytest.mark.parametrize("text, writes", [
    ("__device__ int counter;", True),
    ("static __device__ float table[64];", True),
    ("__managed__ int flag = 0;", True),
    ("__device__ __forceinline__ int twice(int a) { return 2 * a; }", False),
    ("__device__ int\\nhelper(int x);", False),
    ("__constant__ float weights[16];", False),
])
def test_which_programs_write_program_memory(text, writes):
    assert writes_program_memory(text.replace("\\\\n", "\\n")) is writes
