// runtime_wave_size.hip: a block reduction whose per-wave partials live in dynamic shared
// memory sized by the host from the device's wave size; device code reads warpSize at run
// time (it is not a constant expression from ROCm 7 on).
// Backs ROC204 (warp-size-hardcoded: `blockDim.x / 32` partials, of which a wave64 block
// writes half, and the host sizing them for 32-lane warps) and ROC207 (the host asks the
// device for its wave size, never assumes 32).
#include <random>

#include "harness.h"

constexpr int kBlock = 512;

__device__ float wave_sum(float value) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) value += __shfl_down(value, offset);
  return value;
}

// One partial per wave in `partials` (blockDim.x / warpSize floats of dynamic shared memory).
__global__ void block_sums(const float* in, float* sums) {
  extern __shared__ float partials[];
  const int lane = __lane_id();
  const int wave = threadIdx.x / warpSize;
  const float sum = wave_sum(in[blockIdx.x * blockDim.x + threadIdx.x]);
  if (lane == 0) partials[wave] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: 32-lane warps per block
    // todoruleid: ROC204
    const int waves = blockDim.x / 32;
#else
    const int waves = blockDim.x / warpSize;
#endif
    float total = 0.0f;
    for (int w = 0; w < waves; ++w) total += partials[w];
    sums[blockIdx.x] = total;
  }
}

int main() {
  const int wave_size = runtime_wave_size();  // the host asks the device
  const int blocks = 128;
  const int n = blocks * kBlock;
  std::mt19937 rng(2042);
  std::uniform_int_distribution<int> value(-64, 64);
  std::vector<float> in(n);
  for (float& v : in) v = static_cast<float>(value(rng));  // small integers: exact float sums
  std::vector<float> want(blocks, 0.0f);
  for (int i = 0; i < n; ++i) want[i / kBlock] += in[i];

  float* d_in = to_device(in);
  float* d_sums = device_zeros<float>(blocks);
#if defined(ROCMLINT_BEFORE)
  const size_t partial_bytes = (kBlock / 32) * sizeof(float);
#else
  const size_t partial_bytes = (kBlock / wave_size) * sizeof(float);
#endif
  block_sums<<<blocks, kBlock, partial_bytes>>>(d_in, d_sums);
  finish_launch();
  const std::vector<float> sums = to_host(d_sums, blocks);

  Verdict verdict("runtime_wave_size");
  for (int b = 0; b < blocks; ++b) verdict.expect_near("block_sum", b, sums[b], want[b], 0.0f);
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_sums));
  return verdict.finish(wave_size);
}
