// hip/hip_complex.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <hip/hip_complex.h> is not provided: complex types (hipFloatComplex) cannot run on the CPU executor (docs/executor.md lists what it provides)"
