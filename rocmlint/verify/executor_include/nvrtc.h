// nvrtc.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <nvrtc.h> is not provided: run-time compilation (nvrtc) cannot run on the CPU executor (docs/executor.md lists what it provides)"
