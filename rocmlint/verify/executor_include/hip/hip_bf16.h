// hip/hip_bf16.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <hip/hip_bf16.h> is not provided: bfloat16 types (__hip_bfloat16) cannot run on the CPU executor (docs/executor.md lists what it provides)"
