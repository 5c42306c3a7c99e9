"""Speed of the CPU executor (``rocmlint verify --run``): compile and run apart, then the library.

    python benchmarks/executor_speed.py [--blocks 8] [--threads 256] [--rounds 4] [--repeat 3]
    python benchmarks/executor_speed.py --hecbench-size [--jobs 1,2,16] [--repeat 1]

The program: ``blocks`` x ``threads`` lanes, each doing ``rounds`` xor butterflies and
shfl_down reductions over the whole wave (12 shuffles a round at wave 64, 10 at wave 32)
plus a ballot, checked on the host. Printed, each the best of ``repeat`` (the machine is
shared): the precompiled prelude's build (once per flags and wave size, then cached), the
program's compile and link with the prelude warm, its run at wave 64 and 32 (process start
included), the same run with ucontext fibers instead of the x86-64 stack switch, and the
whole ``verify --run`` (13 kernels, before and after, both sizes) with a cold and a warm
cache. Then why fibers: the cost of one meeting of a 64-lane wave (a shuffle) in the executor,
beside a meeting of 64 OS threads at a pthread barrier, the other way to run lanes.

``--hecbench-size``: one launch of 65,536 blocks x 256 threads (a ballot counted with an atomic
and a shared-memory block reduction, checked on the host) at each wave size, its blocks split
over 1, 2 ... processes (``ROCMLINT_JOBS``, what ``verify --run`` sets from the cores it has),
and what the bounds checks cost: the same run built without ``-fsanitize=array-bounds`` and
without the static ``__shared__`` table.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rocmlint.verify.executor import Executor, Program
from rocmlint.verify.toolchain import find_host_compiler

PROGRAM = """#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>

constexpr int kRounds = {rounds};

__global__ void shuffle_rounds(const int* in, int* out) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  for (int round = 0; round < kRounds; ++round) {{
    int m = v;
    for (int mask = warpSize / 2; mask > 0; mask /= 2) m = max(m, __shfl_xor(m, mask));
    int s = v;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) s += __shfl_down(s, offset);
    v = (m + __shfl(s, 0)) % 1000 + round;
  }}
  out[i] = v + __popcll(__ballot(v & 1));
}}

int main() {{
  int wave = 0;
  hipDeviceGetAttribute(&wave, hipDeviceAttributeWarpSize, 0);
  const int n = {blocks} * {threads};
  std::vector<int> in(n), out(n), want(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 1009;
  for (int w = 0; w < n / wave; ++w) {{  // the same computation, one wave at a time
    std::vector<int> v(in.begin() + w * wave, in.begin() + (w + 1) * wave);
    for (int round = 0; round < kRounds; ++round) {{
      int m = v[0], s = 0;
      for (int x : v) m = x > m ? x : m, s += x;
      for (int& x : v) x = (m + s) % 1000 + round;
    }}
    int odd = 0;
    for (int x : v) odd += x & 1;
    for (int l = 0; l < wave; ++l) want[w * wave + l] = v[l] + odd;
  }}
  int *d_in, *d_out;
  hipMalloc(&d_in, n * sizeof(int));
  hipMalloc(&d_out, n * sizeof(int));
  hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice);
  shuffle_rounds<<<{blocks}, {threads}>>>(d_in, d_out);
  hipMemcpy(out.data(), d_out, n * sizeof(int), hipMemcpyDeviceToHost);
  const bool ok = out == want;
  printf("%s\\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}}
"""


HECBENCH_SIZE = """#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>
__global__ void vote_and_sum(const int* in, int* block_sums, unsigned long long* odd) {
  __shared__ int partial[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[i];
  const unsigned long long votes = __ballot(v & 1);
  if (threadIdx.x % warpSize == 0) atomicAdd(odd, (unsigned long long)__popcll(votes));
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) block_sums[blockIdx.x] = partial[0];
}
int main() {
  const int blocks = 65536, threads = 256, n = blocks * threads;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 2654435761u) >> 20 & 1023;
  int *d_in, *d_sums;
  unsigned long long* d_odd;
  hipMalloc(&d_in, n * sizeof(int));
  hipMalloc(&d_sums, blocks * sizeof(int));
  hipMalloc(&d_odd, sizeof *d_odd);
  hipMemset(d_odd, 0, sizeof *d_odd);
  hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice);
  vote_and_sum<<<blocks, threads>>>(d_in, d_sums, d_odd);
  std::vector<int> sums(blocks);
  unsigned long long odd = 0, want_odd = 0;
  hipMemcpy(sums.data(), d_sums, blocks * sizeof(int), hipMemcpyDeviceToHost);
  hipMemcpy(&odd, d_odd, sizeof odd, hipMemcpyDeviceToHost);
  long long errors = 0;
  for (int b = 0; b < blocks; ++b) {
    long long sum = 0;
    for (int t = 0; t < threads; ++t) sum += in[b * threads + t], want_odd += in[b * threads + t] & 1;
    errors += sum != sums[b];
  }
  errors += odd != want_odd;
  printf("%s\\n", errors ? "FAIL" : "PASS");
  return errors != 0;
}
"""

MEETINGS = 2000
FIBER_MEETINGS = """#include <hip/hip_runtime.h>
#include <cstdio>
#include <ctime>
__global__ void meet(int* out, int rounds) {{
  int v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) v = __shfl_xor(v, 1);
  out[threadIdx.x] = v;
}}
int main() {{
  int* d;
  hipMalloc(&d, 64 * sizeof(int));
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  meet<<<1, 64>>>(d, {meetings});
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.9f\\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
}}
""".format(meetings=MEETINGS)
THREAD_MEETINGS = """#include <pthread.h>
#include <cstdio>
#include <ctime>
static pthread_barrier_t barrier;
static void* lane(void*) {{
  for (int r = 0; r < {meetings}; ++r) pthread_barrier_wait(&barrier);
  return nullptr;
}}
int main() {{
  pthread_barrier_init(&barrier, nullptr, 64);
  pthread_t threads[64];
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (pthread_t& t : threads) pthread_create(&t, nullptr, lane, nullptr);
  for (pthread_t& t : threads) pthread_join(t, nullptr);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.9f\\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
}}
""".format(meetings=MEETINGS)


def _best(repeat: int, task) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.monotonic()
        value = task()
        best = min(best, time.monotonic() - start)
    return best, value


def _library(cache: Path) -> float:
    env = {**os.environ, "ROCMLINT_EXECUTOR_CACHE": str(cache)}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "rocmlint.verify", "--run"], capture_output=True, text=True,
                          env=env)
    elapsed = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"verify --run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


def _hecbench_size(compiler, args) -> None:
    import rocmlint.verify.executor as executor_module
    from rocmlint.runner import usable_cpus

    cores = usable_cpus()
    jobs = [int(j) for j in args.jobs.split(",")] if args.jobs else sorted({1, cores})
    with tempfile.TemporaryDirectory(prefix="executor-hecbench-") as scratch:
        folder = Path(scratch)
        source = folder / "vote_and_sum.hip"
        source.write_text(HECBENCH_SIZE)
        program = Program(source, source.name)
        print(f"65,536 blocks x 256 threads, a ballot and a block reduction; {cores} cores here; "
              f"{compiler.describe()}; best of {args.repeat}")
        for count in jobs:
            executor = Executor(compiler, folder, folder / "cache", time_limit_s=600, run_jobs=count)
            builds = executor.build(program)
            for wave in (64, 32):
                seconds, result = _best(args.repeat, lambda: executor.run(program, wave, builds[wave]))
                print(f"  wave {wave}, blocks over {count:>2} process(es) ({getattr(result, 'outcome', '?')}): "
                      f"{seconds:7.2f} s")
        # The bounds checks: -fsanitize=array-bounds and the static __shared__ table, both off.
        executor = Executor(compiler, folder, folder / "cache", time_limit_s=600, run_jobs=1)
        checked = executor.build(program, (64,))[64]
        flags = executor_module.COMPILE_FLAGS
        executor_module.COMPILE_FLAGS = tuple(f for f in flags if f != "-fsanitize=array-bounds")
        try:
            unchecked = executor.build(program, (64,))[64]
        finally:
            executor_module.COMPILE_FLAGS = flags
        env = {**executor.environment(64), "ROCMLINT_JOBS": "1"}
        runs = {}
        for label, build, table in (("with bounds checks", checked, executor._shared_arrays(checked.executable)),
                                    ("without", unchecked, "")):
            runs[label], _ = _best(args.repeat, lambda: subprocess.run(
                [str(build.executable)], env={**env, "ROCMLINT_SHARED_ARRAYS": table}, capture_output=True))
        print(f"  bounds checks at wave 64, one process: {runs['with bounds checks']:.2f} s with, "
              f"{runs['without']:.2f} s without ({runs['with bounds checks'] / runs['without']:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-library", action="store_true", help="only the program")
    parser.add_argument("--hecbench-size", action="store_true",
                        help="only the 65,536 x 256 launch: split over --jobs processes, and the bounds checks' cost")
    parser.add_argument("--jobs", default=None, help="comma list of process counts (default: 1 and the cores here)")
    args = parser.parse_args()
    compiler, _rejected = find_host_compiler()
    if compiler is None:
        sys.exit("no clang++ for the CPU executor")
    if args.hecbench_size:
        _hecbench_size(compiler, args)
        return
    shuffles = {64: 12 * args.rounds + 2, 32: 10 * args.rounds + 2}
    with tempfile.TemporaryDirectory(prefix="executor-speed-") as scratch:
        folder = Path(scratch)
        source = folder / "shuffle_rounds.hip"
        source.write_text(PROGRAM.format(blocks=args.blocks, threads=args.threads, rounds=args.rounds))
        program = Program(source, source.name)
        fibers = Program(source, "ucontext", ("-DROCMLINT_EXECUTOR_UCONTEXT",))

        def fresh_build(target: Program, with_cache: Path | None):
            return Executor(compiler, Path(tempfile.mkdtemp(dir=folder)), with_cache).build(target, (64, 32))

        warm_cache = folder / "warm"

        def build_with_prelude_cached():
            builds = fresh_build(program, warm_cache)
            for binary in warm_cache.glob("*.exe"):  # keep the precompiled prelude, not the program
                binary.unlink()
            return builds

        cold, _ = _best(args.repeat, lambda: fresh_build(program, None))
        build_with_prelude_cached()
        compile_only, _ = _best(args.repeat, build_with_prelude_cached)
        executor = Executor(compiler, folder, warm_cache)
        builds = executor.build(program)
        ucontext_builds = executor.build(fibers)
        print(f"program: {args.blocks} blocks x {args.threads} threads, {shuffles[64]} shuffles and votes a lane "
              f"at wave 64 ({shuffles[32]} at 32); {compiler.describe()}; best of {args.repeat}")
        print(f"  build, nothing cached (prelude precompiled, -E at both sizes, compile, link): {cold:6.2f} s")
        print(f"  build, prelude cached (-E at both sizes, compile, link):                     {compile_only:6.2f} s")
        for wave in (64, 32):
            for label, target, built in (("stack switch", program, builds), ("ucontext", fibers, ucontext_builds)):
                seconds, result = _best(args.repeat, lambda: executor.run(target, wave, built[wave]))
                outcome = getattr(result, "outcome", "?")
                print(f"  run at wave {wave}, {label:<12} ({outcome}):{' ' * 38}{seconds:6.2f} s")
        print(f"one meeting of a 64-lane wave (best of {args.repeat} runs of {MEETINGS}):")
        meet = folder / "meet.hip"
        meet.write_text(FIBER_MEETINGS)
        for label, target in (("fibers, stack switch", Program(meet, "meet")),
                              ("fibers, ucontext", Program(meet, "meet", ("-DROCMLINT_EXECUTOR_UCONTEXT",)))):
            built = executor.build(target, (64,))[64]
            seconds = min(float(executor.run(target, 64, built).output) for _ in range(args.repeat))
            print(f"  {label:<28} {seconds / MEETINGS * 1e6:8.2f} us")
        threads = folder / "threads.cpp"
        threads.write_text(THREAD_MEETINGS)
        subprocess.run([compiler.clang, "-O2", "-pthread", str(threads), "-o", str(folder / "threads")], check=True)
        seconds = min(float(subprocess.run([str(folder / "threads")], capture_output=True, text=True,
                                           check=True).stdout) for _ in range(args.repeat))
        print(f"  {'64 OS threads, pthread_barrier':<28} {seconds / MEETINGS * 1e6:8.2f} us")
    if not args.skip_library:
        with tempfile.TemporaryDirectory(prefix="executor-library-") as cache:
            cold_library = _library(Path(cache))
            warm_library = _library(Path(cache))
        print(f"verify --run, the whole reference library: cold cache {cold_library:.1f} s, warm {warm_library:.1f} s")


if __name__ == "__main__":
    main()
