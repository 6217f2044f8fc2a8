//===- HipDriver.h - The HIP runtime API, loaded at run time --------------===//
//
// The runtime never links HIP: libamdhip64.so is dlopen()ed on first use and
// the few entry points it needs are looked up by name. The types and enum
// values below are this project's own minimal declarations of the HIP ABI
// (ROCm 5.x/6.x: hipError_t codes, hipDeviceAttribute_t's CUDA-compatible
// range, hipMemcpyKind), checked against Debian's libamdhip64-dev 5.2.3
// headers. Only what lib/Runtime uses is declared.
//
// HIP has no explicit contexts: every call acts on the calling thread's
// current device, so each use sets it (hipSetDevice) first.
//
// Environment:
//   TILE_HIP_PATH    the HIP runtime library to load: a file, or a ROCm
//                    directory (then <dir>/lib/libamdhip64.so); default
//                    libamdhip64.so (then .so.6, .so.5) from the loader's
//                    path. Tests point it at a mock (test/Runtime).
//   TILE_HIP_VERBOSE when set, module loads are reported on stderr.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_HIPDRIVER_H
#define TILE_LIB_RUNTIME_HIPDRIVER_H

#include "tile/Runtime/tile_runtime.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tile::rt::hip {

// ---- HIP ABI (own declarations) -------------------------------------------
using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;
using hipDeviceptr_t = void *;

enum : hipError_t {
  kSuccess = 0,
  kErrorInvalidValue = 1,
  kErrorOutOfMemory = 2,
  kErrorNoDevice = 100,
  kErrorInvalidDevice = 101,
  kErrorInvalidImage = 200,
  kErrorNoBinaryForGpu = 209,
  kErrorNotFound = 500,
};

// hipDeviceAttribute_t values.
enum : int {
  kAttrMultiprocessorCount = 63,
  kAttrMaxSharedMemoryPerBlock = 74,
  kAttrWarpSize = 87,
};
// hipMemcpyKind values.
enum : int { kMemcpyHostToDevice = 1, kMemcpyDeviceToHost = 2 };

struct Api {
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipDriverGetVersion)(int *);
  const char *(*hipGetErrorName)(hipError_t);
  const char *(*hipGetErrorString)(hipError_t);
  hipError_t (*hipGetDeviceCount)(int *);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipDeviceGetAttribute)(int *, int, int);
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t,
                                     const char *);
  hipError_t (*hipModuleGetGlobal)(hipDeviceptr_t *, size_t *, hipModule_t,
                                   const char *);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void **, void **);
  hipError_t (*hipMalloc)(void **, size_t);
  hipError_t (*hipFree)(void *);
  hipError_t (*hipMemcpy)(void *, const void *, size_t, int);
  hipError_t (*hipStreamSynchronize)(hipStream_t);
  hipError_t (*hipEventCreate)(hipEvent_t *);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventSynchronize)(hipEvent_t);
  hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t);
};

/// "hipErrorInvalidValue (invalid argument)", or "hipError_t N" when the
/// runtime is not loaded.
std::string errorText(hipError_t r);

/// The loaded HIP runtime: the API table and per-device properties.
class Driver {
public:
  Api api{};
  int deviceCount = 0;
  int runtimeVersion = 0;

  /// Makes `ordinal` the calling thread's device. Returns false after
  /// fail()ing (NO_DEVICE) if it does not exist or cannot be used.
  bool use(int ordinal);
  /// The device's LDS limit per block (0 if unknown).
  int maxSharedPerBlock(int ordinal);

private:
  friend tile_status load(Driver *&);
  struct Device {
    std::atomic<bool> ready{false};
    int sharedPerBlock = 0, computeUnits = 0, waveSize = 0;
  };
  void *handle_ = nullptr;
  std::mutex mu_;
  std::vector<Device> devices_;
  Driver() = default;
};

/// The process-wide HIP runtime: loaded (dlopen + hipInit) on the first
/// call. On failure returns NO_DEVICE after fail() with the reason ("no HIP
/// runtime (libamdhip64.so not found: ...)", "hipInit failed: ..."); a failed
/// load is retried by the next call, a successful one is kept for good.
tile_status load(Driver *&out);
/// The runtime if it has been loaded successfully, else nullptr (no load).
Driver *loadedDriver();

/// Whether `chip` names an AMDGPU target the hip layer knows ("gfx942").
bool isAmdgpuChip(const std::string &chip);

} // namespace tile::rt::hip

#endif // TILE_LIB_RUNTIME_HIPDRIVER_H
