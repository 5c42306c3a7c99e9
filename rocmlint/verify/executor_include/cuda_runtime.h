// cuda_runtime.h: the rocmlint CPU executor's runtime (see rocmlint_executor.h).
#include "rocmlint_executor.h"
