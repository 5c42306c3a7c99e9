"""``rocmlint verify``: prove that the reference kernels and fixed files build for gfx
targets (reading each build's wavefront size) and run where a GPU exists."""
