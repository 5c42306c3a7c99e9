// lane_rank.hip: rank of each lane among the lanes of its wave with the same key,
// from 64-bit lane masks built by hand.
// Backs ROC202 (mask-op-32bit): `(1ull << lane) - 1`, never `(1 << lane) - 1`,
// which is undefined past lane 31 and loses the upper half of a wave64.
#include <random>

#include "harness.h"

constexpr int kBlock = 256;
constexpr int kKeys = 4;

__global__ void rank_by_key(const int* keys, int n, int* rank, int* peers) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int key = i < n ? keys[i] : -1;
  const unsigned lane = __lane_id();
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: a 32-bit lane mask
  // ruleid: ROC202
  const uint64_t lanes_below = (1u << lane) - 1;
#else
  const uint64_t lanes_below = (1ull << lane) - 1;
#endif
  for (int k = 0; k < kKeys; ++k) {
    const uint64_t same_key = __ballot(key == k);
    if (key == k) {
      rank[i] = __popcll(same_key & lanes_below);
      peers[i] = __popcll(same_key);
    }
  }
}

int main() {
  const int wave_size = runtime_wave_size();
  const int n = 1 << 16;
  std::mt19937 rng(202);
  std::uniform_int_distribution<int> key(0, kKeys - 1);
  std::vector<int> keys(n);
  for (int& k : keys) k = key(rng);

  // CPU: waves are consecutive runs of `wave_size` threads (blocks are whole waves).
  std::vector<int> want_rank(n), want_peers(n);
  for (int start = 0; start < n; start += wave_size) {
    int seen[kKeys] = {};
    for (int i = start; i < start + wave_size && i < n; ++i) want_rank[i] = seen[keys[i]]++;
    for (int i = start; i < start + wave_size && i < n; ++i) want_peers[i] = seen[keys[i]];
  }

  int* d_keys = to_device(keys);
  int* d_rank = device_zeros<int>(n);
  int* d_peers = device_zeros<int>(n);
  rank_by_key<<<(n + kBlock - 1) / kBlock, kBlock>>>(d_keys, n, d_rank, d_peers);
  finish_launch();
  const std::vector<int> rank = to_host(d_rank, n), peers = to_host(d_peers, n);

  Verdict verdict("lane_rank");
  for (int i = 0; i < n; ++i) {
    verdict.expect_equal("rank", i, rank[i], want_rank[i]);
    verdict.expect_equal("peers", i, peers[i], want_peers[i]);
  }
  CHECK_GPU(hipFree(d_keys));
  CHECK_GPU(hipFree(d_rank));
  CHECK_GPU(hipFree(d_peers));
  return verdict.finish(wave_size);
}
