// harness.h: host-side helpers shared by the reference tests (not a kernel).
// Exit codes: 0 PASS, 1 FAIL (wrong result), 2 runtime error (no GPU, API failure).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "vendor.h"

#define CHECK_GPU(call)                                                          \
  do {                                                                           \
    hipError_t status_ = (call);                                                 \
    if (status_ != hipSuccess) {                                                 \
      std::fprintf(stderr, "ERROR %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   hipGetErrorString(status_));                                  \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)

// Host code must ask the device: the wave size is 64 on CDNA, 32 on RDNA and NVIDIA.
inline int runtime_wave_size() {
  int device = 0;
  int wave_size = 0;
  CHECK_GPU(hipGetDevice(&device));
  CHECK_GPU(hipDeviceGetAttribute(&wave_size, hipDeviceAttributeWarpSize, device));
  return wave_size;
}

template <typename T>
T* to_device(const std::vector<T>& host) {
  T* device = nullptr;
  CHECK_GPU(hipMalloc(&device, host.size() * sizeof(T)));
  CHECK_GPU(hipMemcpy(device, host.data(), host.size() * sizeof(T), hipMemcpyHostToDevice));
  return device;
}

template <typename T>
T* device_zeros(size_t count) {
  T* device = nullptr;
  CHECK_GPU(hipMalloc(&device, count * sizeof(T)));
  CHECK_GPU(hipMemset(device, 0, count * sizeof(T)));
  return device;
}

template <typename T>
std::vector<T> to_host(const T* device, size_t count) {
  std::vector<T> host(count);
  CHECK_GPU(hipMemcpy(host.data(), device, count * sizeof(T), hipMemcpyDeviceToHost));
  return host;
}

inline void finish_launch() {
  CHECK_GPU(hipGetLastError());
  CHECK_GPU(hipDeviceSynchronize());
}

// Counts mismatches and prints the first few, then the verdict line.
class Verdict {
 public:
  explicit Verdict(const char* test) : test_(test) {}

  template <typename T>
  void expect_equal(const char* what, size_t index, T got, T want) {
    if (got == want) return;
    if (++mismatches_ <= 5)
      std::printf("  mismatch %s[%zu]: got %lld, want %lld\n", what, index,
                  static_cast<long long>(got), static_cast<long long>(want));
  }

  // Floating-point results: equal within a relative tolerance.
  void expect_near(const char* what, size_t index, float got, float want, float tolerance) {
    const float scale = want < 0 ? -want : want;
    const float diff = got > want ? got - want : want - got;
    if (diff <= tolerance * (scale > 1.0f ? scale : 1.0f)) return;
    if (++mismatches_ <= 5) std::printf("  mismatch %s[%zu]: got %g, want %g\n", what, index, got, want);
  }

  int finish(int wave_size) const {
    std::printf("%s %s (%s, wave size %d)%s\n", mismatches_ ? "FAIL" : "PASS", test_,
                ROCMLINT_VENDOR_NAME, wave_size, mismatches_ ? ": results differ from the CPU" : "");
    return mismatches_ ? 1 : 0;
  }

 private:
  const char* test_;
  long mismatches_ = 0;
};
