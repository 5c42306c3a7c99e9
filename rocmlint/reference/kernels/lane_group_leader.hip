// lane_group_leader.hip: wave-aggregated atomics, one atomic per wave from its leader lane.
// Backs ROC204 (warp-size-hardcoded): the leader is lane 0 of the wave (__lane_id() == 0),
// not `(threadIdx.x & 31) == 0`, which makes lanes 0 and 32 both leaders on wave64 so that
// each adds the whole wave's count: a 64-bit ballot fix alone still counts twice there.
#include <random>

#include "harness.h"

constexpr int kBlock = 256;

// Counts the elements equal to `key`, in total and per wave.
__global__ void count_key(const int* in, int n, int key, int* total, int* per_wave) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t matches = __ballot(i < n && in[i] == key);
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: the first lane of each 32-lane warp leads
  // ruleid: ROC204
  const bool leader = (threadIdx.x & 31) == 0;
#else
  const bool leader = __lane_id() == 0;
#endif
  if (leader) {
    const int found = __popcll(matches);
    if (found) atomicAdd(total, found);
    atomicAdd(&per_wave[i / warpSize], found);
  }
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 1 << 16;
  const int waves = n / wave_size;
  const int key = 3;
  std::mt19937 rng(2041);
  std::uniform_int_distribution<int> value(0, 7);
  std::vector<int> in(n);
  for (int& v : in) v = value(rng);

  int want_total = 0;
  std::vector<int> want_per_wave(waves, 0);
  for (int i = 0; i < n; ++i)
    if (in[i] == key) {
      ++want_total;
      ++want_per_wave[i / wave_size];
    }

  int* d_in = to_device(in);
  int* d_total = device_zeros<int>(1);
  int* d_per_wave = device_zeros<int>(waves);
  count_key<<<n / kBlock, kBlock>>>(d_in, n, key, d_total, d_per_wave);
  finish_launch();
  const std::vector<int> per_wave = to_host(d_per_wave, waves);

  Verdict verdict("lane_group_leader");
  verdict.expect_equal("total", 0, to_host(d_total, 1)[0], want_total);
  for (int w = 0; w < waves; ++w) verdict.expect_equal("per_wave", w, per_wave[w], want_per_wave[w]);
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_total));
  CHECK_GPU(hipFree(d_per_wave));
  return verdict.finish(wave_size);
}
