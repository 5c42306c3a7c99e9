// hip/hip_fp16.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <hip/hip_fp16.h> is not provided: half-precision types (__half, __half2) cannot run on the CPU executor (docs/executor.md lists what it provides)"
