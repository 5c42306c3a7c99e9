// warp_vote.hip: wave votes (__any, __all, ballot counts, highest voting lane)
// kept in 64-bit masks.
// Backs ROC201 (ballot-mask-truncated) and ROC202 (mask-op-32bit: __popcll and
// __clzll on the mask; `31 - __clz(mask)` misses lanes 32..63).
#include <random>

#include "harness.h"

constexpr int kBlock = 256;

__global__ void vote(const int* in, int threshold, int* any_out, int* all_out, int* count_out,
                     int* highest_out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool above = in[i] > threshold;
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: the ballot in 32 bits
  // ruleid: ROC201
  const unsigned votes = __ballot(above);
#else
  const uint64_t votes = __ballot(above);
#endif
  const int any_lane = __any(above);
  const int all_lanes = __all(above);
  if (__lane_id() == 0) {
    const int wave = i / warpSize;
    any_out[wave] = any_lane != 0;
    all_out[wave] = all_lanes != 0;
#if defined(ROCMLINT_BEFORE)
    // ruleid: ROC202
    count_out[wave] = __popc(votes);
    // ruleid: ROC202
    highest_out[wave] = votes ? 31 - __clz(votes) : -1;
#else
    count_out[wave] = __popcll(votes);
    highest_out[wave] = votes ? 63 - __clzll(static_cast<long long>(votes)) : -1;
#endif
  }
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 1 << 16;
  const int waves = n / wave_size;
  const int threshold = 990;
  std::mt19937 rng(2010);
  std::uniform_int_distribution<int> value(0, 999);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);
  for (int w = 0; w < waves; w += 7)  // some waves where every lane votes
    for (int lane = 0; lane < wave_size; ++lane) in[w * wave_size + lane] = 999;

  std::vector<int> want_any(waves, 0), want_all(waves, 1), want_count(waves, 0), want_highest(waves, -1);
  for (int i = 0; i < n; ++i) {
    const int w = i / wave_size;
    const bool above = in[i] > threshold;
    want_any[w] |= above;
    want_all[w] &= above;
    want_count[w] += above;
    if (above) want_highest[w] = i % wave_size;
  }

  int* d_in = to_device(in);
  int* d_any = device_zeros<int>(waves);
  int* d_all = device_zeros<int>(waves);
  int* d_count = device_zeros<int>(waves);
  int* d_highest = device_zeros<int>(waves);
  vote<<<n / kBlock, kBlock>>>(d_in, threshold, d_any, d_all, d_count, d_highest);
  finish_launch();
  const std::vector<int> any = to_host(d_any, waves), all = to_host(d_all, waves),
                         count = to_host(d_count, waves), highest = to_host(d_highest, waves);

  Verdict verdict("warp_vote");
  for (int w = 0; w < waves; ++w) {
    verdict.expect_equal("any", w, any[w], want_any[w]);
    verdict.expect_equal("all", w, all[w], want_all[w]);
    verdict.expect_equal("count", w, count[w], want_count[w]);
    verdict.expect_equal("highest_lane", w, highest[w], want_highest[w]);
  }
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_any));
  CHECK_GPU(hipFree(d_all));
  CHECK_GPU(hipFree(d_count));
  CHECK_GPU(hipFree(d_highest));
  return verdict.finish(wave_size);
}
