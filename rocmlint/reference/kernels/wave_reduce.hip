// wave_reduce.hip: wave-size-agnostic shuffle reductions (sum with __shfl_down,
// max with a __shfl_xor butterfly).
// Backs ROC204 (warp-size-hardcoded: lanes and waves come from __lane_id() and
// warpSize, not `% 32` / `/ 32`) and ROC205 (shuffle-reduction-fixed-width: the
// first offset is warpSize / 2, not 16, so lanes 32..63 are summed on wave64).
#include <algorithm>
#include <climits>
#include <random>

#include "harness.h"

constexpr int kBlock = 256;

// Lane 0 ends up with the sum of the wave.
__device__ int wave_sum(int value) {
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: a 32-lane reduction, read at lane 0 as the wave's sum
  // ruleid: ROC205
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down(value, offset);
#else
  for (int offset = warpSize / 2; offset > 0; offset /= 2) value += __shfl_down(value, offset);
#endif
  return value;
}

// Every lane ends up with the maximum of the wave.
__device__ int wave_max(int value) {
#if defined(ROCMLINT_BEFORE)
  // todoruleid: ROC205
  for (int lane_mask = 16; lane_mask > 0; lane_mask /= 2)
#else
  for (int lane_mask = warpSize / 2; lane_mask > 0; lane_mask /= 2)
#endif
    value = max(value, __shfl_xor(value, lane_mask));
  return value;
}

__global__ void reduce_waves(const int* in, int n, int* wave_sums, int* wave_maxes) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int wave = i / warpSize;
  const int sum = wave_sum(i < n ? in[i] : 0);
  const int maximum = wave_max(i < n ? in[i] : INT_MIN);
  if (__lane_id() == 0) {
    wave_sums[wave] = sum;
    wave_maxes[wave] = maximum;
  }
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 1 << 16;
  const int waves = n / wave_size;
  std::mt19937 rng(205);
  std::uniform_int_distribution<int> value(-1000, 1000);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);

  std::vector<int> want_sum(waves, 0), want_max(waves, INT_MIN);
  for (int i = 0; i < n; ++i) {
    want_sum[i / wave_size] += in[i];
    want_max[i / wave_size] = std::max(want_max[i / wave_size], in[i]);
  }

  int* d_in = to_device(in);
  int* d_sums = device_zeros<int>(waves);
  int* d_maxes = device_zeros<int>(waves);
  reduce_waves<<<n / kBlock, kBlock>>>(d_in, n, d_sums, d_maxes);
  finish_launch();
  const std::vector<int> sums = to_host(d_sums, waves), maxes = to_host(d_maxes, waves);

  Verdict verdict("wave_reduce");
  for (int w = 0; w < waves; ++w) {
    verdict.expect_equal("wave_sum", w, sums[w], want_sum[w]);
    verdict.expect_equal("wave_max", w, maxes[w], want_max[w]);
  }
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_sums));
  CHECK_GPU(hipFree(d_maxes));
  return verdict.finish(wave_size);
}
