//===- Device.h - Device layer interface ----------------------------------===//
//
// A DeviceModule is a kernel's device code loaded for one target: it runs
// grids, provides the built-in output allocator and resolves host-side
// entry points (the native wrapper). The CPU implementation loads host.so;
// a CUDA implementation (driver API through dlopen("libcuda.so.1"), cubin /
// PTX sections, native.so for the wrapper) plugs in here without touching
// the launch logic in Launch.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_DEVICE_H
#define TILE_LIB_RUNTIME_DEVICE_H

#include "Metadata.h"
#include "tile/Runtime/Bundle.h"

#include <memory>

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
  virtual tile_status run(void **args, int64_t gx, int64_t gy, int64_t gz,
                          void *stream) const = 0;

  /// The built-in allocator: a contiguous tensor on this module's device.
  virtual DLManagedTensor *allocate(DLDataType dtype, int32_t ndim,
                                    const int64_t *shape,
                                    void *stream) const = 0;
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

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_DEVICE_H
