// vendor.h: lets one kernel source build as HIP for AMD (clang -x hip, hipcc)
// and as CUDA (nvcc). Kernels are written against HIP names that exist from
// HIP 5 to HIP 7; under nvcc this header maps them to their CUDA equivalents.
// Debian's HIP 5.2 NVIDIA-side headers do not build with CUDA 13, hence our own.
#pragma once

#include <cstdint>

#if defined(__HIP__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define ROCMLINT_VENDOR_NAME "HIP"

#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define ROCMLINT_VENDOR_NAME "CUDA"

typedef cudaError_t hipError_t;
#define hipSuccess cudaSuccess
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipGetDevice cudaGetDevice
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemset cudaMemset
#define hipMemcpy cudaMemcpy
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost

namespace rocmlint_vendor {
// A CUDA warp always has 32 lanes; HIP's non-sync intrinsics act on the
// whole (converged) wave, so the CUDA side passes every lane.
constexpr unsigned kWholeWarp = 0xffffffffu;

// __ballot_sync returns 32 bits: widen so callers keep one 64-bit mask type.
__device__ inline unsigned long long ballot(int predicate) {
  return static_cast<unsigned long long>(__ballot_sync(kWholeWarp, predicate));
}
__device__ inline int any(int predicate) { return __any_sync(kWholeWarp, predicate); }
__device__ inline int all(int predicate) { return __all_sync(kWholeWarp, predicate); }

template <typename T>
__device__ inline T shfl(T value, int src_lane, int width = warpSize) {
  return __shfl_sync(kWholeWarp, value, src_lane, width);
}
template <typename T>
__device__ inline T shfl_up(T value, unsigned delta, int width = warpSize) {
  return __shfl_up_sync(kWholeWarp, value, delta, width);
}
template <typename T>
__device__ inline T shfl_down(T value, unsigned delta, int width = warpSize) {
  return __shfl_down_sync(kWholeWarp, value, delta, width);
}
template <typename T>
__device__ inline T shfl_xor(T value, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(kWholeWarp, value, lane_mask, width);
}

// CUDA has no __lane_id()/__lanemask_lt(): read the PTX special registers
// (this branch is NVIDIA-only, where PTX is the native idiom).
__device__ inline unsigned lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
__device__ inline unsigned long long lanemask_lt() {
  unsigned mask;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}
}  // namespace rocmlint_vendor

// Defined after cuda_runtime.h so CUDA's own declarations stay untouched.
#define __ballot rocmlint_vendor::ballot
#define __any rocmlint_vendor::any
#define __all rocmlint_vendor::all
#define __shfl rocmlint_vendor::shfl
#define __shfl_up rocmlint_vendor::shfl_up
#define __shfl_down rocmlint_vendor::shfl_down
#define __shfl_xor rocmlint_vendor::shfl_xor
#define __lane_id rocmlint_vendor::lane_id
#define __lanemask_lt rocmlint_vendor::lanemask_lt
// __popcll, __ffsll, __clzll, __ldg, __byte_perm, __threadfence: same names in CUDA.

#else
#error "vendor.h: compile as HIP (clang -x hip, hipcc) or CUDA (nvcc -x cu)"
#endif
