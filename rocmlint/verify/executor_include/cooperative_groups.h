// cooperative_groups.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <cooperative_groups.h> is not provided: cooperative groups (thread_block, tiled_partition) cannot run on the CPU executor (docs/executor.md lists what it provides)"
