"""C++/CUDA/HIP rules (ROC2xx wave size, ROC3xx vendor code)."""
