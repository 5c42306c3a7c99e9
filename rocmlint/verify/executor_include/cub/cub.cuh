// cub/cub.cuh: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <cub/cub.cuh> is not provided: CUB cannot run on the CPU executor (docs/executor.md lists what it provides)"
