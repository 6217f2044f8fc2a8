//===- Device.h - Device layer interface ----------------------------------===//
//
// A DeviceModule is a kernel's device code loaded for one target: it runs
// grids, provides the built-in output allocator and resolves host-side
// entry points (the native wrapper). The CPU implementation loads host.so;
// the CUDA one (CudaDevice.cpp: driver API through dlopen("libcuda.so.1"),
// cubin / PTX sections, native.so for the wrapper) plugs in here without
// touching the launch logic in Launch.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_DEVICE_H
#define TILE_LIB_RUNTIME_DEVICE_H

#include "Metadata.h"
#include "tile/Runtime/Bundle.h"

#include <memory>
#include <string>
#include <vector>

namespace tile::rt {

class DeviceModule {
public:
  virtual ~DeviceModule() = default;

  /// A host-side symbol of the kernel's host code, or nullptr.
  virtual void *hostSymbol(const char *name) const = 0;

  /// Runs the grid with the block-function / kernel arguments `args`
  /// (memref descriptors and scalar slots, docs/bundle.md). Blocks on CPU;
  /// enqueues on `stream` on GPUs. Returns a tile_status; on failure the
  /// implementation has called fail() with the reason.
  /// `device` is the device id of the launch's tensors (GPU ordinal).
  virtual tile_status run(void **args, int64_t gx, int64_t gy, int64_t gz,
                          void *stream, int32_t device) const = 0;

  /// The built-in allocator: a contiguous tensor on device `device` of this
  /// module's device type. nullptr on failure.
  virtual DLManagedTensor *allocate(DLDataType dtype, int32_t ndim,
                                    const int64_t *shape, void *stream,
                                    int32_t device) const = 0;
};

/// Loads the device code for `plan.target` from the bundle. On failure
/// returns the status (after fail()) and leaves `out` empty.
tile_status loadDeviceModule(const KernelPlan &plan,
                             const bundle::Reader &bundle,
                             std::unique_ptr<DeviceModule> &out);

/// CPU implementation details, exposed for tests.
namespace cpu {
/// Makes the shared object in `bytes` loadable and dlopen()s it: memfd +
/// /proc/self/fd, falling back to an unlinked mkstemp file. On success
/// returns the handle and the fd to close after dlclose (-1 if none).
void *loadSharedObject(std::string_view bytes, int &fd, std::string &error);
/// True if a library dlopen()ed as "/proc/self/fd/<fd>" is still resident.
bool stillLoaded(int fd);
/// Host allocation with a DLManagedTensor header, 64-byte aligned data.
DLManagedTensor *allocateHost(DLDataType dtype, int32_t ndim,
                              const int64_t *shape);
} // namespace cpu

/// CUDA implementation details, exposed for tests (CudaDevice.cpp).
namespace cuda {
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
} // namespace cuda

/// The CUDA device module (CudaDevice.cpp).
tile_status loadCudaModule(const KernelPlan &plan,
                           const bundle::Reader &bundle,
                           std::unique_ptr<DeviceModule> &out);

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_DEVICE_H
