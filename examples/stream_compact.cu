// Keep the positive values of a buffer, one warp at a time (CUDA-first version).
#include <cuda_runtime.h>
#include <cstdint>

#define WARP_SIZE 32
#define FULL_MASK 0xffffffff

__global__ void keep_positive(const float* in, float* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % WARP_SIZE;
    bool keep = i < n && in[i] > 0.0f;
    unsigned int ballot = __ballot_sync(FULL_MASK, keep);
    int rank = __popc(ballot & ((1u << lane) - 1));
    int base = 0;
    if (lane == 0) base = atomicAdd(count, __popc(ballot));
    base = __shfl_sync(FULL_MASK, base, 0);
    if (keep) out[base + rank] = in[i];
}

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

// One total per wavefront: its first lane adds what the reduction left there.
__global__ void sum_positive(const float* in, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum(i < n && in[i] > 0.0f ? in[i] : 0.0f);
    if (threadIdx.x % warpSize == 0) atomicAdd(total, v);
}
