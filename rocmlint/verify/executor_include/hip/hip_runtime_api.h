// hip/hip_runtime_api.h: the rocmlint CPU executor's runtime (see rocmlint_executor.h).
#include "../rocmlint_executor.h"
