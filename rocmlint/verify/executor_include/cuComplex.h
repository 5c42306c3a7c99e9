// cuComplex.h: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <cuComplex.h> is not provided: complex types (cuFloatComplex) cannot run on the CPU executor (docs/executor.md lists what it provides)"
