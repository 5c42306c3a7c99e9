"""CUDA-only headers and their ROCm counterparts: one maintained table, read by ROC303 (what
to report, what to include instead) and by the project model (which headers hipify renames
before the AMD build).

Each entry names a header (or a folder of headers, ending in ``/``), the HIP/ROCm header a
port includes instead (None: there is none, the code that uses it must be gated), whether
torch's hipify (``torch.utils.hipify``, ``hipify_torch``: what PyTorch extensions and CMake
projects run) writes exactly that header itself, and a short note. The hipify column is
checked against the mapping torch ships (``tests/test_cuda_headers.py``); the counterparts
hipify does not write follow HIPIFY's own table (hipify-clang) and the HIP documentation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class CudaHeader:
    cuda: str  # a header as #include names it, or a folder prefix ending in "/"
    hip: str | None  # the ROCm header to include instead; None: no counterpart, gate the code
    note: str = ""
    hipify: bool = False  # torch's hipify rewrites the include to ``hip`` (a folder: its prefix)
    recent: bool = False  # the counterpart exists in recent ROCm releases only (fix: unsafe)

    @property
    def folder(self) -> bool:
        return self.cuda.endswith("/")


def _hipified(*pairs: str, hip: str, note: str = "") -> list[CudaHeader]:
    return [CudaHeader(cuda, hip, note, hipify=True) for cuda in pairs]


_RUNTIME = "the HIP runtime header declares the same API with hip* names"
_RAND = "hipRAND (hiprand_* device functions)"
_CUB = "hipCUB: one header for all of CUB"

CUDA_HEADERS: tuple[CudaHeader, ...] = (
    # CUDA runtime, driver API and toolkit headers
    CudaHeader("cuda.h", "hip/hip_runtime.h", "driver API (cu*): HIP declares hipDrv*/hipModule* in its runtime header",
               hipify=True),
    CudaHeader("cuda_runtime.h", "hip/hip_runtime.h", _RUNTIME, hipify=True),
    CudaHeader("cuda_runtime_api.h", "hip/hip_runtime_api.h", _RUNTIME, hipify=True),
    CudaHeader("cuda_profiler_api.h", "hip/hip_runtime_api.h", "hipProfilerStart/Stop", hipify=True),
    CudaHeader("channel_descriptor.h", "hip/channel_descriptor.h", hipify=True),
    CudaHeader("device_functions.h", "hip/device_functions.h", hipify=True),
    CudaHeader("driver_types.h", "hip/driver_types.h", hipify=True),
    CudaHeader("library_types.h", "hip/library_types.h", hipify=True),
    CudaHeader("vector_types.h", "hip/hip_vector_types.h", hipify=True),
    CudaHeader("cuda_texture_types.h", "hip/hip_texture_types.h", hipify=True),
    CudaHeader("cuComplex.h", "hip/hip_complex.h", "hipFloatComplex / hipDoubleComplex", hipify=True),
    CudaHeader("device_launch_parameters.h", "hip/hip_runtime.h", "threadIdx and friends come with the HIP runtime"),
    CudaHeader("math_constants.h", "hip/hip_math_constants.h", "HIP_PI and friends (CUDART_* renamed)"),
    CudaHeader("cuda_fp16.h", "hip/hip_fp16.h", "__half, __half2", hipify=True),
    CudaHeader("cuda_bf16.h", "hip/hip_bf16.h", "__hip_bfloat16 (__nv_bfloat16 renamed)", hipify=True),
    CudaHeader("cuda_fp8.h", "hip/hip_fp8.h", "the fp8 types: gfx942 uses the FNUZ encodings, gfx950 the OCP ones"),
    CudaHeader("cuda_fp4.h", "hip/hip_fp4.h", "fp4 types", recent=True),
    # cooperative groups
    CudaHeader("cooperative_groups.h", "hip/hip_cooperative_groups.h", hipify=True),
    CudaHeader("cooperative_groups/reduce.h", "hip/cooperative_groups/hip_reduce.h",
               "cg::reduce; older ROCm releases have none: gate the code there", recent=True),
    CudaHeader("cooperative_groups/scan.h", "hip/cooperative_groups/hip_scan.h",
               "cg::inclusive_scan / exclusive_scan; older ROCm releases have none", recent=True),
    CudaHeader("cooperative_groups/memcpy_async.h", None, "asynchronous copies to shared memory: no HIP counterpart"),
    # asynchronous copies, libcu++ (cuda::std, cuda::atomic, cuda::pipeline ...), WMMA
    CudaHeader("cuda_pipeline.h", None, "cp.async pipelines: no HIP counterpart"),
    CudaHeader("cuda_pipeline_primitives.h", None, "__pipeline_memcpy_async: no HIP counterpart"),
    CudaHeader("cuda/pipeline", None, "libcu++ pipelines: no HIP counterpart"),
    CudaHeader("cuda/atomic", None, "libcu++ cuda::atomic: HIP's atomic functions or std::atomic_ref"),
    CudaHeader("cuda/std/", None, "libcu++ cuda::std: the standard header of the same name in host code"),
    CudaHeader("cuda/", None, "libcu++ (cuda::barrier, cuda::annotated_ptr ...): no ROCm header of that name"),
    CudaHeader("mma.h", "rocwmma/rocwmma.hpp", "WMMA fragments: rocWMMA's API is close, not identical"),
    # NVRTC, NVTX, NVML
    CudaHeader("nvrtc.h", "hip/hiprtc.h", "run-time compilation: hiprtc* functions", hipify=True),
    CudaHeader("nvToolsExt.h", "roctracer/roctx.h", "NVTX ranges: roctxRangePush/Pop", hipify=True),
    CudaHeader("nvtx3/nvtx3.hpp", "roctracer/roctx.h", "NVTX ranges: roctxRangePush/Pop", hipify=True),
    CudaHeader("nvtx3/", "roctracer/roctx.h", "NVTX ranges: roctxRangePush/Pop"),
    CudaHeader("nvToolsExtCuda.h", "roctracer/roctx.h", "NVTX: roctx has no CUDA-object naming"),
    CudaHeader("nvToolsExtCudaRt.h", "roctracer/roctx.h", "NVTX: roctx has no CUDA-object naming"),
    CudaHeader("nvml.h", "rocm_smi/rocm_smi.h", "device management: ROCm SMI (amd_smi in current ROCm)", hipify=True),
    # math libraries
    *_hipified("cublas.h", "cublas_v2.h", hip="hipblas/hipblas.h", note="hipBLAS"),
    CudaHeader("cublas_api.h", "hipblas/hipblas.h", "hipBLAS"),
    CudaHeader("cublasLt.h", "hipblaslt/hipblaslt.h", "hipBLASLt: matmul descriptors differ in detail", hipify=True),
    CudaHeader("cublasXt.h", None, "multi-GPU BLAS: no ROCm counterpart"),
    *_hipified("curand_kernel.h", "curand_discrete.h", "curand_discrete2.h", "curand_globals.h", "curand_lognormal.h",
               "curand_mrg32k3a.h", "curand_mtgp32.h", "curand_mtgp32_kernel.h", "curand_normal.h",
               "curand_normal_static.h", "curand_philox4x32_x.h", "curand_poisson.h", "curand_precalc.h",
               "curand_uniform.h", hip="hiprand/hiprand_kernel.h", note=_RAND),
    CudaHeader("curand.h", "hiprand/hiprand.h", "hipRAND host API", hipify=True),
    CudaHeader("curand_mtgp32_host.h", "hiprand/hiprand_mtgp32_host.h", _RAND, hipify=True),
    CudaHeader("curand_mtgp32dc_p_11213.h", "rocrand/rocrand_mtgp32_11213.h", "rocRAND's MTGP32 parameters",
               hipify=True),
    CudaHeader("cusparse.h", "hipsparse/hipsparse.h", "hipSPARSE", hipify=True),
    CudaHeader("cusparse_v2.h", "hipsparse/hipsparse.h", "hipSPARSE"),
    CudaHeader("cusparseLt.h", "hipsparselt/hipsparselt.h", "hipSPARSELt", hipify=True),
    CudaHeader("cufft.h", "hipfft/hipfft.h", "hipFFT", hipify=True),
    CudaHeader("cufftXt.h", "hipfft/hipfftXt.h", "hipFFT", hipify=True),
    CudaHeader("cufftw.h", "hipfft/hipfftw.h", "hipFFT's FFTW interface"),
    *[CudaHeader(name, "hipsolver/hipsolver.h", "hipSOLVER") for name in
      ("cusolverDn.h", "cusolverSp.h", "cusolverRf.h", "cusolverMg.h", "cusolver_common.h")],
    CudaHeader("cudnn.h", "miopen/miopen.h", "MIOpen: a different API, port the calls"),
    CudaHeader("cudnn_frontend.h", None, "cuDNN's graph API: no ROCm counterpart (MIOpen's API differs)"),
    # collectives and transports
    CudaHeader("nccl.h", "rccl/rccl.h", "RCCL keeps NCCL's API", hipify=True),
    CudaHeader("tensorpipe/tensorpipe_cuda.h", "tensorpipe/tensorpipe_hip.h", "TensorPipe's HIP channels",
               hipify=True),
    # CUB and Thrust's CUDA back end
    *_hipified("cub/cub.cuh", "cub/util_allocator.cuh", "cub/config.cuh", "cub/util_ptx.cuh", "cub/util_type.cuh",
               "cub/block/block_reduce.cuh", "cub/block/block_raking_layout.cuh", "cub/block/block_load.cuh",
               "cub/block/block_store.cuh", "cub/block/block_scan.cuh", "cub/device/device_run_length_encode.cuh",
               "cub/device/device_radix_sort.cuh", "cub/device/device_reduce.cuh", "cub/device/device_scan.cuh",
               "cub/device/device_select.cuh", hip="hipcub/hipcub.hpp", note=_CUB),
    CudaHeader("cub/", "hipcub/hipcub.hpp", _CUB),
    CudaHeader("thrust/system/cuda/", "thrust/system/hip/", "rocThrust's back end: thrust::hip::par", hipify=True),
)


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, CudaHeader], tuple[CudaHeader, ...]]:
    exact = {h.cuda: h for h in CUDA_HEADERS if not h.folder}
    folders = tuple(sorted((h for h in CUDA_HEADERS if h.folder), key=lambda h: -len(h.cuda)))
    return exact, folders


def lookup(header: str) -> CudaHeader | None:
    """The entry for an included header: its own, else the longest folder holding it."""
    exact, folders = _index()
    found = exact.get(header)
    if found is not None:
        return found
    for entry in folders:
        if header.startswith(entry.cuda) and len(header) > len(entry.cuda):
            return entry
    return None


def counterpart(header: str) -> str | None:
    """The ROCm header to include instead of ``header`` (a folder entry maps its prefix)."""
    entry = lookup(header)
    if entry is None or entry.hip is None:
        return None
    return entry.hip + header[len(entry.cuda):] if entry.folder and entry.hip.endswith("/") else entry.hip


def hipify_maps(header: str) -> str | None:
    """The header torch's hipify writes in place of ``header``, or None when it leaves it."""
    entry = lookup(header)
    return counterpart(header) if entry is not None and entry.hipify else None


def include_pattern() -> str:
    """A regex over ``#include`` lines naming a header of the table."""
    names = sorted((re.escape(h.cuda) + (r"[\w/.+-]+" if h.folder else "") for h in CUDA_HEADERS),
                   key=len, reverse=True)
    return r"#[ \t]*include[ \t]*[<\"](?:" + "|".join(names) + r")[>\"]"


def literal_names() -> tuple[bytes, ...]:
    """Strings one of which every match of ``include_pattern`` holds (the prefilter's): each
    name after its opening ``<`` or ``"`` (a bare ``cuda/`` is in every ``ATen/cuda/`` path)."""
    keys = {opening + h.cuda for h in CUDA_HEADERS for opening in '<"'}
    minimal = {k for k in keys if not any(o != k and o in k for o in keys)}
    return tuple(sorted(k.encode() for k in minimal))
