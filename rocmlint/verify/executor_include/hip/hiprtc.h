// hip/hiprtc.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <hip/hiprtc.h> is not provided: run-time compilation (hiprtc) cannot run on the CPU executor (docs/executor.md lists what it provides)"
