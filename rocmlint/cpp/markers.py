"""Literals whose absence shows a file holds no GPU code (prefilter for rules whose
patterns alone, like `% 32`, match in most C++ files)."""

GPU_CODE_MARKERS: tuple[bytes, ...] = (
    b"__global__", b"__device__", b"_DEVICE", b"threadIdx", b"__shfl", b"__ballot",
    b"__activemask", b"warp", b"Warp", b"WARP", b"wave", b"Wave", b"WAVE", b"lane_id",
    b"laneid", b"<<<", b"hip_runtime",
)

# The wave-wide operations (shuffles, votes, lane masks), as their names begin: the lane-group
# pre-checks and the device-code test all read this one list.
WAVE_OPERATIONS: tuple[bytes, ...] = (b"__shfl", b"__ballot", b"__any", b"__all", b"__activemask", b"__lanemask")

# Compile-time wave size on AMD: gfx9 (CDNA) is wave64, RDNA wave32 (ROCm/pytorch #2360).
WAVE64_MACRO = "__GFX9__"
