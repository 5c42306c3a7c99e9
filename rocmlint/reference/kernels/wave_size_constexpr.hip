// wave_size_constexpr.hip: a compile-time wave size for device code without
// __AMDGCN_WAVEFRONT_SIZE (deprecated in clang) and without `warpSize` in constant
// expressions (not constexpr from ROCm 7), with the host asking the device at run time.
// Backs ROC206 (warpsize-constexpr-use).
#include <random>

#include "harness.h"

// Device passes: GCN and CDNA (gfx6..gfx9) run wave64, RDNA (gfx10+) wave32 by
// default, NVIDIA 32. The host pass sees none of these macros: host code must use
// runtime_wave_size() instead of kDeviceWaveSize.
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: the warp size of NVIDIA GPUs
// todoruleid: ROC204
constexpr int kDeviceWaveSize = 32;
#elif defined(__GFX9__) || defined(__GFX8__) || defined(__GFX7__) || defined(__GFX6__)
constexpr int kDeviceWaveSize = 64;
#elif defined(__gfx900__) || defined(__gfx906__) || defined(__gfx908__) || \
    defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx942__)
constexpr int kDeviceWaveSize = 64;  // compilers older than the __GFXn__ family macros
#else
constexpr int kDeviceWaveSize = 32;
#endif

// Launch bounds and block sizes shared with the host: fixed, valid for any wave size.
constexpr int kBlock = 256;
constexpr int kLargestWave = 64;
static_assert(kBlock % kLargestWave == 0, "a block must hold whole waves of any size");

__global__ void __launch_bounds__(kBlock)
block_sums(const int* in, int* block_totals, int* waves_per_block, int* wave_size_mismatch) {
  constexpr int kWavesPerBlock = kBlock / kDeviceWaveSize;  // a constant: sizes shared memory
  __shared__ int wave_partials[kWavesPerBlock];

  // -mwavefrontsize64 on RDNA would break the family rule: detect it, never guess.
  if (threadIdx.x == 0 && warpSize != kDeviceWaveSize) atomicExch(wave_size_mismatch, 1);

  int value = in[blockIdx.x * kBlock + threadIdx.x];
  for (int offset = kDeviceWaveSize / 2; offset > 0; offset /= 2) value += __shfl_down(value, offset);
  const int wave = threadIdx.x / kDeviceWaveSize;
  if (threadIdx.x % kDeviceWaveSize == 0) wave_partials[wave] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
#pragma unroll
    for (int w = 0; w < kWavesPerBlock; ++w) total += wave_partials[w];
    block_totals[blockIdx.x] = total;
    waves_per_block[blockIdx.x] = kWavesPerBlock;
  }
}

int main() {
  const int wave_size = runtime_wave_size();  // host: ask the device
  const int blocks = 512;
  const int n = blocks * kBlock;
  std::mt19937 rng(206);
  std::uniform_int_distribution<int> value(-1000, 1000);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);
  std::vector<int> want_total(blocks, 0);
  for (int i = 0; i < n; ++i) want_total[i / kBlock] += in[i];

  int* d_in = to_device(in);
  int* d_totals = device_zeros<int>(blocks);
  int* d_waves = device_zeros<int>(blocks);
  int* d_mismatch = device_zeros<int>(1);
  block_sums<<<blocks, kBlock>>>(d_in, d_totals, d_waves, d_mismatch);
  finish_launch();
  const std::vector<int> totals = to_host(d_totals, blocks), waves = to_host(d_waves, blocks);

  Verdict verdict("wave_size_constexpr");
  verdict.expect_equal("device_wave_size_mismatch", 0, to_host(d_mismatch, 1)[0], 0);
  for (int b = 0; b < blocks; ++b) {
    verdict.expect_equal("block_total", b, totals[b], want_total[b]);
    verdict.expect_equal("waves_per_block", b, waves[b], kBlock / wave_size);
  }
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_totals));
  CHECK_GPU(hipFree(d_waves));
  CHECK_GPU(hipFree(d_mismatch));
  return verdict.finish(wave_size);
}
