// warp_sync_mask.hip: a butterfly maximum over the whole wave, whatever its size, with the
// shuffle that needs no mask (HIP's non-sync __shfl_xor acts on the wave's active lanes).
// Backs ROC203 (warp-mask-literal-32bit): HIP 6.2+ takes 64-bit masks only, and a 64-bit
// 0xffffffff names lanes 0-31: on wave64 lanes 32-63 call __shfl_xor_sync with a mask that
// leaves them out, which HIP traps on (in a build without NDEBUG).
#include <climits>
#include <random>

#include "harness.h"

constexpr int kBlock = 256;

__device__ int wave_max(int value) {
  for (int lane_mask = warpSize / 2; lane_mask > 0; lane_mask /= 2) {
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism, widened to compile: the 32-lane full mask
    // todoruleid: ROC203
    value = max(value, __shfl_xor_sync(0xffffffffull, value, lane_mask));
#else
    value = max(value, __shfl_xor(value, lane_mask));
#endif
  }
  return value;
}

__global__ void wave_maxima(const int* in, int* maxima) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int maximum = wave_max(in[i]);
  if (__lane_id() == 0) maxima[i / warpSize] = maximum;
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 1 << 15;
  const int waves = n / wave_size;
  std::mt19937 rng(2030);
  std::uniform_int_distribution<int> value(-100000, 100000);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);
  std::vector<int> want(waves, INT_MIN);
  for (int i = 0; i < n; ++i) want[i / wave_size] = std::max(want[i / wave_size], in[i]);

  int* d_in = to_device(in);
  int* d_maxima = device_zeros<int>(waves);
  wave_maxima<<<n / kBlock, kBlock>>>(d_in, d_maxima);
  finish_launch();
  const std::vector<int> maxima = to_host(d_maxima, waves);

  Verdict verdict("warp_sync_mask");
  for (int w = 0; w < waves; ++w) verdict.expect_equal("wave_max", w, maxima[w], want[w]);
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_maxima));
  return verdict.finish(wave_size);
}
