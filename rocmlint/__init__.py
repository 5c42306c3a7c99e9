"""rocmlint: find and fix CUDA-isms that break on AMD ROCm, without touching the NVIDIA path."""
__version__ = "0.1.0"
