//===- Device.h - Device layer interface ----------------------------------===//
//
// A DeviceModule is a kernel's device code loaded for one target: it runs
// grids, provides the built-in output allocator and resolves host-side
// entry points (the native wrapper). Each target's layer lives in its own
// folder: Cpu/ (host.so over a thread pool), Cuda/ (driver API through
// dlopen("libcuda.so.1"), cubin / PTX sections, native.so for the wrapper,
// sm_90a variants), Hip/ (HIP runtime through dlopen("libamdhip64.so"),
// the hsaco section, native.so). A layer plugs in here, with one line in Device.cpp's
// table, without touching the generic load and launch logic (Load.cpp,
// Launch.cpp, Metadata.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_DEVICE_H
#define TILE_LIB_RUNTIME_DEVICE_H

#include "Metadata.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/tile_targets.h"

#include <memory>
#include <string>

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

/// Loads the device code for `plan.target` from the bundle, as `backend`
/// runs it (nvrtc: the CUDA C++ source; the others: the compiled code). On
/// failure returns the status (after fail()) and leaves `out` empty.
tile_status loadDeviceModule(const KernelPlan &plan,
                             const bundle::Reader &bundle,
                             tile_backend backend,
                             std::unique_ptr<DeviceModule> &out);

/// The device layers (each in its own folder, listed in Device.cpp's table)
/// and their one entry point each: loadDeviceModule for their target.
tile_status loadCpuModule(const KernelPlan &plan, const bundle::Reader &bundle,
                          std::unique_ptr<DeviceModule> &out); // Cpu/
tile_status loadCudaModule(const KernelPlan &plan,
                           const bundle::Reader &bundle,
                           std::unique_ptr<DeviceModule> &out); // Cuda/
tile_status loadNvrtcModule(const KernelPlan &plan,
                            const bundle::Reader &bundle,
                            std::unique_ptr<DeviceModule> &out); // Cuda/
tile_status loadHipModule(const KernelPlan &plan, const bundle::Reader &bundle,
                          std::unique_ptr<DeviceModule> &out); // Hip/

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_DEVICE_H
