// per_wave_shared.hip: per-wave shared-memory arrays sized for every wave size:
// lane-indexed rows hold the largest wave (64), wave-indexed arrays hold the most
// waves a block can have (block / 32).
// Backs ROC204 (warp-size-hardcoded): `__shared__ float buf[32]` per warp
// overflows on wave64, and `[block / 64]` overflows on wave32.
#include <random>

#include "harness.h"

constexpr int kBlock = 256;
constexpr int kLargestWave = 64;
constexpr int kSmallestWave = 32;  // NOLINT(ROC204): bounds the waves per block, never a lane count
constexpr int kMostWavesPerBlock = kBlock / kSmallestWave;

// Reverses the values inside each wave through shared memory, and sums each block.
__global__ void reverse_waves_and_sum(const int* in, int* reversed, int* block_totals) {
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: a row per 32-lane warp
  // todoruleid: ROC204
  __shared__ int lane_rows[kMostWavesPerBlock][32];
#else
  __shared__ int lane_rows[kMostWavesPerBlock][kLargestWave];
#endif
  __shared__ int wave_partials[kMostWavesPerBlock];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = __lane_id();
  const int wave = threadIdx.x / warpSize;
  const int value = in[i];

  lane_rows[wave][lane] = value;
  int sum = value;
  for (int offset = warpSize / 2; offset > 0; offset /= 2) sum += __shfl_down(sum, offset);
  if (lane == 0) wave_partials[wave] = sum;
  __syncthreads();

  reversed[i] = lane_rows[wave][warpSize - 1 - lane];
  if (wave == 0) {  // one wave folds the partials: there are at most warpSize of them
    const int waves = blockDim.x / warpSize;
    int total = lane < waves ? wave_partials[lane] : 0;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) total += __shfl_down(total, offset);
    if (lane == 0) block_totals[blockIdx.x] = total;
  }
}

int main() {
  const int wave_size = runtime_wave_size();
  const int blocks = 256;
  const int n = blocks * kBlock;
  std::mt19937 rng(2040);
  std::uniform_int_distribution<int> value(-1000, 1000);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);

  std::vector<int> want_reversed(n), want_total(blocks, 0);
  for (int i = 0; i < n; ++i) {
    const int wave_start = i - i % wave_size;
    want_reversed[i] = in[wave_start + wave_size - 1 - i % wave_size];
    want_total[i / kBlock] += in[i];
  }

  int* d_in = to_device(in);
  int* d_reversed = device_zeros<int>(n);
  int* d_totals = device_zeros<int>(blocks);
  reverse_waves_and_sum<<<blocks, kBlock>>>(d_in, d_reversed, d_totals);
  finish_launch();
  const std::vector<int> reversed = to_host(d_reversed, n), totals = to_host(d_totals, blocks);

  Verdict verdict("per_wave_shared");
  for (int i = 0; i < n; ++i) verdict.expect_equal("reversed", i, reversed[i], want_reversed[i]);
  for (int b = 0; b < blocks; ++b) verdict.expect_equal("block_total", b, totals[b], want_total[b]);
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_reversed));
  CHECK_GPU(hipFree(d_totals));
  return verdict.finish(wave_size);
}
