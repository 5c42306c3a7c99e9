// ballot_compaction.hip: stream compaction with one wave ballot and 64-bit popcounts.
// Backs ROC201 (ballot-mask-truncated: the ballot is kept in a 64-bit mask) and
// ROC202 (mask-op-32bit: __popcll / __ffsll on it, never __popc / __ffs).
// On wave64 a 32-bit mask drops lanes 32..63: their elements would vanish.
#include <algorithm>
#include <random>

#include "harness.h"

constexpr int kBlock = 256;

// Keeps the positive elements of `in`; each wave claims its slice of `out` with
// a single atomic and its lanes write in lane order.
__global__ void compact_positive(const int* in, int n, int* out, int* out_count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool keep = i < n && in[i] > 0;
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: the ballot in 32 bits, 32-bit mask operations
  // ruleid: ROC201
  const unsigned votes = __ballot(keep);
  if (votes == 0) return;
  // ruleid: ROC202
  const int leader = __ffs(votes) - 1;
  int base = 0;
  // ruleid: ROC202
  if (static_cast<int>(__lane_id()) == leader) base = atomicAdd(out_count, __popc(votes));
  base = __shfl(base, leader);
  // ruleid: ROC201, ROC202
  if (keep) out[base + __popc(votes & static_cast<unsigned>(__lanemask_lt()))] = in[i];
#else
  const uint64_t votes = __ballot(keep);
  if (votes == 0) return;  // uniform across the wave

  // __ffsll has signed and unsigned overloads in HIP: pass unsigned long long, not uint64_t.
  const int leader = __ffsll(static_cast<unsigned long long>(votes)) - 1;
  int base = 0;
  if (static_cast<int>(__lane_id()) == leader) base = atomicAdd(out_count, __popcll(votes));
  base = __shfl(base, leader);
  if (keep) out[base + __popcll(votes & __lanemask_lt())] = in[i];
#endif
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 100003;  // not a multiple of any wave: the tail wave is partial
  std::mt19937 rng(201);
  std::uniform_int_distribution<int> value(-50, 50);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);

  std::vector<int> want;
  for (int v : in)
    if (v > 0) want.push_back(v);

  int* d_in = to_device(in);
  int* d_out = device_zeros<int>(n);
  int* d_count = device_zeros<int>(1);
  compact_positive<<<(n + kBlock - 1) / kBlock, kBlock>>>(d_in, n, d_out, d_count);
  finish_launch();
  const int count = to_host(d_count, 1)[0];
  std::vector<int> got = to_host(d_out, std::min(std::max(count, 0), n));

  // Waves finish in any order: compare as multisets.
  Verdict verdict("ballot_compaction");
  verdict.expect_equal("count", 0, count, static_cast<int>(want.size()));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  for (size_t k = 0; k < std::min(got.size(), want.size()); ++k)
    verdict.expect_equal("sorted_out", k, got[k], want[k]);
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_out));
  CHECK_GPU(hipFree(d_count));
  return verdict.finish(wave_size);
}
