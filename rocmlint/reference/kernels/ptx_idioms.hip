// ptx_idioms.hip: portable replacements for the inline PTX idioms rocmlint rewrites.
// Backs ROC301 (inline-ptx):
//   mov.u32 %0, %%laneid;   -> __lane_id()
//   ld.global.nc.*          -> __ldg(ptr)
//   prmt.b32                -> __byte_perm(x, y, selector)
//   membar.gl               -> __threadfence()
//   bar.sync 0              -> __syncthreads()
// expect before: wave64=no-build wave32=no-build
#include <random>

#include "harness.h"

constexpr int kBlock = 256;
constexpr unsigned kByteSwap = 0x0123;    // bytes 3,2,1,0 of x
constexpr unsigned kInterleave = 0x5140;  // x.b0, y.b0, x.b1, y.b1

__device__ unsigned int blocks_done = 0;

// Host reference of __byte_perm for selector nibbles 0..7 (byte k of y is k + 4).
unsigned byte_perm_reference(unsigned x, unsigned y, unsigned selector) {
  const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned result = 0;
  for (int k = 0; k < 4; ++k) {
    const unsigned source = (selector >> (4 * k)) & 7u;
    result |= static_cast<unsigned>((bytes >> (8 * source)) & 0xffu) << (8 * k);
  }
  return result;
}

// Also sums `in` with the last-block pattern: a block publishes its partial,
// fences, and the block that finishes last adds up every partial.
__global__ void ptx_free(const unsigned* in, unsigned* lanes, unsigned* swapped,
                         unsigned* interleaved, unsigned* partials, unsigned* total) {
  __shared__ unsigned block_sum;
  __shared__ bool is_last_block;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned x = __ldg(&in[i]);
  const unsigned y = __ldg(&in[(i + 1) % (gridDim.x * blockDim.x)]);
#if defined(ROCMLINT_BEFORE)  // the CUDA-ism: PTX, which no AMD build accepts
  unsigned lane;
  // ruleid: ROC301
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  lanes[i] = lane;
#else
  lanes[i] = __lane_id();
#endif
  swapped[i] = __byte_perm(x, 0u, kByteSwap);
  interleaved[i] = __byte_perm(x, y, kInterleave);

  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  atomicAdd(&block_sum, x & 0xffu);
  __syncthreads();
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_sum;
    __threadfence();  // the partial is visible device-wide before the count says so
    is_last_block = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (is_last_block && threadIdx.x == 0) {
    unsigned sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += static_cast<volatile unsigned*>(partials)[b];
    *total = sum;
    blocks_done = 0;
  }
}

int main() {
  const int wave_size = runtime_wave_size();
  const int blocks = 256;
  const int n = blocks * kBlock;
  std::mt19937 rng(301);
  std::vector<unsigned> in(n);
  for (unsigned& v : in) v = rng();

  unsigned* d_in = to_device(in);
  unsigned* d_lanes = device_zeros<unsigned>(n);
  unsigned* d_swapped = device_zeros<unsigned>(n);
  unsigned* d_interleaved = device_zeros<unsigned>(n);
  unsigned* d_partials = device_zeros<unsigned>(blocks);
  unsigned* d_total = device_zeros<unsigned>(1);
  ptx_free<<<blocks, kBlock>>>(d_in, d_lanes, d_swapped, d_interleaved, d_partials, d_total);
  finish_launch();
  const std::vector<unsigned> lanes = to_host(d_lanes, n), swapped = to_host(d_swapped, n),
                              interleaved = to_host(d_interleaved, n);

  Verdict verdict("ptx_idioms");
  unsigned want_total = 0;
  for (int i = 0; i < n; ++i) {
    const unsigned x = in[i], y = in[(i + 1) % n];
    want_total += x & 0xffu;
    verdict.expect_equal("lane_id", i, lanes[i], static_cast<unsigned>(i % wave_size));
    verdict.expect_equal("byte_swap", i, swapped[i], byte_perm_reference(x, 0u, kByteSwap));
    verdict.expect_equal("interleave", i, interleaved[i], byte_perm_reference(x, y, kInterleave));
  }
  verdict.expect_equal("total", 0, to_host(d_total, 1)[0], want_total);
  CHECK_GPU(hipFree(d_in));
  CHECK_GPU(hipFree(d_lanes));
  CHECK_GPU(hipFree(d_swapped));
  CHECK_GPU(hipFree(d_interleaved));
  CHECK_GPU(hipFree(d_partials));
  CHECK_GPU(hipFree(d_total));
  return verdict.finish(wave_size);
}
