// full_wave_mask.hip: "every lane of the wave" masks that are right on wave64,
// wave32 and NVIDIA, compared against ballots.
// Backs ROC203 (warp-mask-literal-32bit): 0xffffffff / ~0u is only the low half
// of a wave64, so `ballot == 0xffffffff` is never true there, and HIP's *_sync
// intrinsics reject a 32-bit mask; use a wave-sized 64-bit mask or the non-sync call.
#include <random>

#include "harness.h"

constexpr int kBlock = 256;

__device__ inline uint64_t full_wave_mask() {
  return warpSize >= 64 ? ~0ull : (1ull << warpSize) - 1;
}

// Per wave: 1 when every lane's value is positive, by ballot and by __all.
__global__ void all_positive(const int* in, int* by_ballot, int* by_all) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool positive = in[i] > 0;
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: "every lane" as a 32-lane mask
  // ruleid: ROC203
  const bool uniform = __ballot(positive) == 0xffffffff;
#else
  const bool uniform = __ballot(positive) == full_wave_mask();
#endif
  const int all_lanes = __all(positive);
  if (__lane_id() == 0) {
    by_ballot[i / warpSize] = uniform;
    by_all[i / warpSize] = all_lanes != 0;
  }
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 1 << 16;
  const int waves = n / wave_size;
  std::mt19937 rng(203);
  std::uniform_int_distribution<int> value(1, 100);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);
  // Every third wave fails only in its LAST lane: a 32-bit mask cannot see it on wave64.
  std::vector<int> want(waves, 1);
  for (int w = 0; w < waves; w += 3) {
    in[w * wave_size + wave_size - 1] = -1;
    want[w] = 0;
  }

  int* d_in = to_device(in);
  int* d_ballot = device_zeros<int>(waves);
  int* d_all = device_zeros<int>(waves);
  all_positive<<<n / kBlock, kBlock>>>(d_in, d_ballot, d_all);
  finish_launch();
  const std::vector<int> by_ballot = to_host(d_ballot, waves), by_all = to_host(d_all, waves);

  Verdict verdict("full_wave_mask");
  for (int w = 0; w < waves; ++w) {
    verdict.expect_equal("by_ballot", w, by_ballot[w], want[w]);
    verdict.expect_equal("by_all", w, by_all[w], want[w]);
  }
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_ballot));
  CHECK_GPU(hipFree(d_all));
  return verdict.finish(wave_size);
}
