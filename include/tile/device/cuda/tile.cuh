// tile.cuh - the whole CUDA device library of tile's generated CUDA C++, for
// compiling a `cuda` section's kernel part with an include path
// (nvcc -I<prefix>/include). tilec prepends the three files' text to each
// generated source instead, so NVRTC needs none.
#pragma once
#include "types.cuh"
#include "memref.cuh"
#include "intrinsics.cuh"
