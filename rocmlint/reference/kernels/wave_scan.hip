// wave_scan.hip: inclusive prefix sum across a wave with __shfl_up (Hillis-Steele).
// Backs ROC205 (shuffle-reduction-fixed-width): the loop runs while the distance
// is below warpSize and passes no width of 32, so a wave64 scans all 64 lanes.
#include <random>

#include "harness.h"

constexpr int kBlock = 256;

__device__ int wave_inclusive_scan(int value) {
  const int lane = __lane_id();
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: a 32-lane scan
  // todoruleid: ROC205
  for (int distance = 1; distance < 32; distance *= 2) {
#else
  for (int distance = 1; distance < warpSize; distance *= 2) {
#endif
    const int from_below = __shfl_up(value, distance);
    if (lane >= distance) value += from_below;
  }
  return value;
}

__global__ void scan_waves(const int* in, int n, int* prefix, int* wave_totals) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int scanned = wave_inclusive_scan(i < n ? in[i] : 0);
  if (i < n) prefix[i] = scanned;
#if defined(ROCMLINT_BEFORE)
  // ruleid: ROC204, ROC208
  const int total = __shfl(scanned, 31);
#else
  const int total = __shfl(scanned, warpSize - 1);  // the last lane holds the wave total
#endif
  if (__lane_id() == 0) wave_totals[i / warpSize] = total;
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 1 << 16;
  const int waves = n / wave_size;
  std::mt19937 rng(2050);
  std::uniform_int_distribution<int> value(-100, 100);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);

  std::vector<int> want_prefix(n), want_total(waves);
  for (int i = 0; i < n; ++i) {
    want_prefix[i] = in[i] + (i % wave_size ? want_prefix[i - 1] : 0);
    want_total[i / wave_size] = want_prefix[i];
  }

  int* d_in = to_device(in);
  int* d_prefix = device_zeros<int>(n);
  int* d_totals = device_zeros<int>(waves);
  scan_waves<<<n / kBlock, kBlock>>>(d_in, n, d_prefix, d_totals);
  finish_launch();
  const std::vector<int> prefix = to_host(d_prefix, n), totals = to_host(d_totals, waves);

  Verdict verdict("wave_scan");
  for (int i = 0; i < n; ++i) verdict.expect_equal("prefix", i, prefix[i], want_prefix[i]);
  for (int w = 0; w < waves; ++w) verdict.expect_equal("wave_total", w, totals[w], want_total[w]);
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_prefix));
  CHECK_GPU(hipFree(d_totals));
  return verdict.finish(wave_size);
}
