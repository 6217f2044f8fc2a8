//===- CudaDevice.h - CUDA device layer internals, exposed for tests ------===//
#ifndef TILE_LIB_RUNTIME_CUDADEVICE_H
#define TILE_LIB_RUNTIME_CUDADEVICE_H

#include "Device.h"

#include <vector>

namespace tile::rt::cuda {

/// kernelParams[j] = (char *)args[arg] + offset: one entry per CUDA kernel
/// parameter (docs/bundle.md, "The CUDA kernel ABI").
struct ParamRef {
  uint32_t arg;
  uint32_t offset;
};
constexpr size_t kMaxKernelParams = 1024;
/// The kernelParams plan of `plan`: per tensor param of rank r, 3 + 2r
/// entries (allocated, aligned, offset, sizes, strides); per scalar, one.
tile_status buildParamPlan(const KernelPlan &plan, std::vector<ParamRef> &out,
                           std::string &error);
/// Flattens the CPU-ABI `args` into `kernelParams` (n = plan size).
inline void flattenParams(const ParamRef *plan, size_t n, void *const *args,
                          void **kernelParams) {
  for (size_t j = 0; j < n; ++j)
    kernelParams[j] = static_cast<char *>(args[plan[j].arg]) + plan[j].offset;
}

} // namespace tile::rt::cuda

#endif // TILE_LIB_RUNTIME_CUDADEVICE_H
