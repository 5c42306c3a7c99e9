// cuda_bf16.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <cuda_bf16.h> is not provided: bfloat16 types (__nv_bfloat16) cannot run on the CPU executor (docs/executor.md lists what it provides)"
