// cuda.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <cuda.h> is not provided: the CUDA driver API cannot run on the CPU executor (docs/executor.md lists what it provides)"
