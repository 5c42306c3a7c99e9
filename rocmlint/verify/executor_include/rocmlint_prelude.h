// rocmlint_prelude.h: what `rocmlint verify --run` includes before a program, precompiled
// once per wave size and flags: the runtime, and the standard headers test programs use
// (so a program sees them even where it forgot to include them).
#include "hip/hip_runtime.h"

#pragma clang attribute push(__attribute__((no_sanitize("thread"))), apply_to = function)
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>
#pragma clang attribute pop
