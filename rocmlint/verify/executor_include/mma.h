// mma.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <mma.h> is not provided: warp matrix operations (wmma) cannot run on the CPU executor (docs/executor.md lists what it provides)"
