// lane_group_broadcast.hip: a logical 32-lane group that stays correct on any wave size.
// Each 32 lanes own one row of 64 values (two per lane): the row maximum and sum come
// from an xor butterfly over width 32, and the broadcast from the group's first lane
// passes width 32 too, so on a 64-lane wavefront lanes 32-63 read their own group.
// Backs ROC208 (wave-size-mismatch: a width-less __shfl(v, 0) after a 32-lane reduction
// hands lanes 32-63 the other row's value) and ROC205 (a 32-lane reduction is right
// where every lane-group member is per 32 lanes).
#include <cfloat>
#include <cmath>
#include <random>

#include "harness.h"

constexpr int kGroup = 32;  // lanes per row: a data layout, the same on every wave size
constexpr int kRowLength = 2 * kGroup;
constexpr int kBlock = 256;

__device__ float group_max(float v) {
  for (int mask = kGroup / 2; mask > 0; mask /= 2) v = fmaxf(v, __shfl_xor(v, mask, kGroup));
  return v;
}

__device__ float group_sum(float v) {
  for (int mask = kGroup / 2; mask > 0; mask /= 2) v += __shfl_xor(v, mask, kGroup);
  return v;
}

// Softmax over rows of 64 values.
__global__ void softmax_rows(const float* x, float* y, int rows) {
  const int item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= rows * kGroup) return;
  const float a = x[2 * item];
  const float b = x[2 * item + 1];
  // The butterfly already leaves the maximum in every lane of the group; the broadcast
  // from the group's lane 0 is what ports write, and with width 32 it stays in the group.
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: a width-less broadcast reads lane 0 of the whole wave
  // todoruleid: ROC208
  const float m = __shfl(group_max(fmaxf(a, b)), 0);
  const float ea = expf(a - m);
  const float eb = expf(b - m);
  // todoruleid: ROC208
  const float s = __shfl(group_sum(ea + eb), 0);
#else
  const float m = __shfl(group_max(fmaxf(a, b)), 0, kGroup);
  const float ea = expf(a - m);
  const float eb = expf(b - m);
  const float s = __shfl(group_sum(ea + eb), 0, kGroup);
#endif
  y[2 * item] = ea / s;
  y[2 * item + 1] = eb / s;
}

int main() {
  const int wave_size = runtime_wave_size();
  const int rows = 1 << 12;
  const int n = rows * kRowLength;
  std::mt19937 rng(208);
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  std::vector<float> x(n);
  for (float& v : x) v = value(rng);

  std::vector<float> want(n);
  for (int r = 0; r < rows; ++r) {
    float m = -FLT_MAX;
    for (int c = 0; c < kRowLength; ++c) m = std::fmax(m, x[r * kRowLength + c]);
    float s = 0.0f;
    for (int c = 0; c < kRowLength; ++c) s += std::exp(x[r * kRowLength + c] - m);
    for (int c = 0; c < kRowLength; ++c) want[r * kRowLength + c] = std::exp(x[r * kRowLength + c] - m) / s;
  }

  float* d_x = to_device(x);
  float* d_y = device_zeros<float>(n);
  softmax_rows<<<(rows * kGroup + kBlock - 1) / kBlock, kBlock>>>(d_x, d_y, rows);
  finish_launch();
  const std::vector<float> y = to_host(d_y, n);

  Verdict verdict("lane_group_broadcast");
  for (int i = 0; i < n; ++i) verdict.expect_near("softmax", i, y[i], want[i], 1e-5f);
  CHECK_GPU(hipFree(d_x));
  CHECK_GPU(hipFree(d_y));
  return verdict.finish(wave_size);
}
