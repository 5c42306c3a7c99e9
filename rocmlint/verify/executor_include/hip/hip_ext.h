// hip/hip_ext.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <hip/hip_ext.h> is not provided: the HIP extensions (hipExtLaunchKernel) cannot run on the CPU executor (docs/executor.md lists what it provides)"
