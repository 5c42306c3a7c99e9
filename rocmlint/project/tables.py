"""Facts about third-party toolkits the project model starts from (overridden by the
project's own #defines and build files)."""
from __future__ import annotations

from ..cpp import cuda_headers
from ..cpp.platform_names import NVIDIA_TOOLKIT_MACROS, NVIDIA_TOOLKIT_PREFIXES, nvidia_toolkit_macro
from ..lazy_re import lazy_compile

__all__ = ["NVIDIA_TOOLKIT_MACROS", "NVIDIA_TOOLKIT_PREFIXES", "nvidia_toolkit_macro", "HIP_RUNTIME_HEADER",
           "hipify_maps"]

# Headers whose inclusion means "this is the HIP build".
HIP_RUNTIME_HEADER = lazy_compile(r"^hip/(?:hip_runtime(?:_api)?|hip_fp16|hip_bf16|hip_common|amd_detail/\w+)\.h$")

# What hipify writes for a CUDA header: the table ROC303 reads too (rocmlint/cpp/cuda_headers.py).
hipify_maps = cuda_headers.hipify_maps
