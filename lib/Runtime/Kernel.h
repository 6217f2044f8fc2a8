//===- Kernel.h - The loaded kernel behind tile_kernel_t ------------------===//
#ifndef TILE_LIB_RUNTIME_KERNEL_H
#define TILE_LIB_RUNTIME_KERNEL_H

#include "Device.h"
#include "Metadata.h"
#include "tile/Runtime/Bundle.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace tile::rt {

/// None: opened for inspection (tile_kernel_inspect_*), no device code.
/// Nvrtc launches like Ffi; its device code was compiled at load time.
enum class Backend : uint8_t { Ffi, Native, Nvrtc, None };

/// The process-wide allocator slot (nullptr = the device's built-in one).
std::atomic<const tile_allocator *> &globalAllocator();

/// Loads a kernel from bundle bytes (takes ownership of them).
tile_status loadKernel(std::string bytes, const char *backend,
                       tile_kernel_t *out);

/// Opens a bundle for inspection only: checked and parsed like loadKernel,
/// no device module (see tile_kernel_inspect_file).
tile_status inspectKernel(std::string bytes, tile_kernel_t *out);

/// Runs `kernel` (see tile_kernel_launch).
tile_status launchKernel(const tile_kernel &kernel, const tile_arg *args,
                         int32_t nargs, void *stream, tile_outputs *outs);

/// Walks the tensor arguments in the documented order (docs/bundle.md,
/// "Argument checks"), binding symbols into `syms` (initialized to -1).
/// tensors[i] is NULL for scalar params and omitted outputs. Returns the
/// check code (0 = all good) and fills `error`.
int32_t checkTensorArgs(const KernelPlan &plan, DLTensor *const *tensors,
                        int64_t *syms, tile_check_error &error);

/// The one formatter both backends' failures go through, so a bad argument
/// reads the same whichever backend found it.
std::string formatCheckError(const KernelPlan &plan,
                             const tile_check_error &error);

} // namespace tile::rt

struct tile_kernel {
  std::string bytes; // the bundle; section views point into it
  tile::bundle::Reader bundle;
  tile::rt::KernelPlan plan;
  tile::rt::Backend backend = tile::rt::Backend::Ffi;
  std::unique_ptr<tile::rt::DeviceModule> module;
  tile_native_fn native = nullptr;

  // Launches read the allocator with one atomic load. Every allocator ever
  // installed stays alive until release, so a launch racing with
  // tile_set_allocator never sees a freed one.
  std::atomic<const tile_allocator *> allocator{nullptr};
  std::mutex allocatorsMu;
  std::vector<std::unique_ptr<tile_allocator>> allocators;
};

#endif // TILE_LIB_RUNTIME_KERNEL_H
