//===- CudaDriver.h - The CUDA driver API, loaded at run time -------------===//
//
// The runtime never links CUDA: libcuda.so.1 is dlopen()ed on first use and
// the few entry points it needs are looked up by name. The types and enum
// values below are this project's own minimal declarations of the driver
// ABI (stable since CUDA 4/5; the versioned "_v2" entry points are the ones
// every driver since CUDA 4.0 exports). Only what lib/Runtime and tile-run
// use is declared.
//
// Environment:
//   TILE_CUDA_DRIVER   path of the driver library (default "libcuda.so.1");
//                      tests set it to a missing file to simulate a host
//                      without a driver.
//   TILE_CUDA_VERBOSE  when set, module loads are reported on stderr
//                      (which image was used: cubin or PTX JIT), and
//                      whether a kernel variant is used (CudaVariants.h).
//   TILE_DISABLE_VARIANTS=1  always launch entry.kernel (CudaVariants.h).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_CUDADRIVER_H
#define TILE_LIB_RUNTIME_CUDADRIVER_H

#include "tile/Runtime/tile_runtime.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tile::rt::cuda {

// ---- driver ABI (own declarations) ----------------------------------------
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_opaque *;
using CUmodule = struct CUmod_opaque *;
using CUfunction = struct CUfunc_opaque *;
using CUstream = struct CUstream_opaque *;
using CUevent = struct CUevent_opaque *;

enum : CUresult {
  kSuccess = 0,
  kErrorInvalidValue = 1,
  kErrorOutOfMemory = 2,
  kErrorNotInitialized = 3,
  kErrorNoDevice = 100,
  kErrorInvalidDevice = 101,
  kErrorInvalidImage = 200,
  kErrorNoBinaryForGpu = 209,
  kErrorInvalidPtx = 218,
  kErrorUnsupportedPtxVersion = 222,
};

// CUdevice_attribute values.
enum : int {
  kAttrMaxSharedPerBlock = 8,
  kAttrMultiprocessorCount = 16,
  kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76,
  kAttrMaxSharedPerBlockOptin = 97,
};
// CUfunction_attribute values.
enum : int { kFuncAttrMaxDynamicSharedBytes = 8 };
// CUjit_option values.
enum : int {
  kJitInfoLogBuffer = 3,
  kJitInfoLogBufferSize = 4,
  kJitErrorLogBuffer = 5,
  kJitErrorLogBufferSize = 6,
};

struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule,
                                const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  // Optional (nullptr when the driver lacks it; CUDA 12.0+ exports it):
  // cuTensorMapEncodeTiled, typed as CudaTensorMap.h's EncodeTiledFn (the
  // sm_90a TMA kernel variants, CudaVariants.cpp).
  void *cuTensorMapEncodeTiled;
  // cuStreamIsCapturing (CUDA 10+; *status 0 = not capturing): variants
  // with a per-stream workspace are not launched into a graph capture.
  CUresult (*cuStreamIsCapturing)(CUstream, int *);
};

/// "CUDA_ERROR_INVALID_VALUE (invalid argument)", or "CUresult N" when the
/// driver is not loaded.
std::string errorText(CUresult r);

/// The loaded driver: the API table plus one retained primary context per
/// device (retained lazily, never released: the runtime may be used until
/// process exit).
class Driver {
public:
  Api api{};
  int deviceCount = 0;
  int driverVersion = 0;

  /// Primary context of `ordinal`, retained on first use. Returns nullptr
  /// after fail()ing if the device does not exist or cannot be used.
  CUcontext context(int ordinal);
  /// Compute capability (major * 10 + minor) of `ordinal`, 0 if unknown.
  int computeCapability(int ordinal);
  /// The device's opt-in maximum of dynamic shared memory per block.
  int maxSharedOptin(int ordinal);
  /// The device's number of multiprocessors, 0 if unknown.
  int multiprocessorCount(int ordinal);

private:
  friend tile_status load(Driver *&);
  struct Device {
    std::atomic<CUcontext> ctx{nullptr};
    int cc = 0, smemOptin = 0, sms = 0;
  };
  void *handle_ = nullptr;
  std::mutex mu_;
  std::vector<Device> devices_;
  Driver() = default;
};

/// The process-wide driver: loaded (dlopen + cuInit) on the first call.
/// On failure returns NO_DEVICE after fail() with the reason ("no CUDA
/// driver (libcuda.so.1 not found: ...)", "cuInit failed: ..."); a failed
/// load is retried by the next call, a successful one is kept for good.
tile_status load(Driver *&out);
/// The driver if it has been loaded successfully, else nullptr (no load).
Driver *loadedDriver();

/// Pushes a context for the scope (ctx may be nullptr: no-op).
class ScopedContext {
public:
  ScopedContext(const Api &api, CUcontext ctx) : api_(api), ctx_(ctx) {
    ok_ = !ctx || api.cuCtxPushCurrent(ctx) == kSuccess;
  }
  ~ScopedContext() {
    if (ctx_ && ok_) {
      CUcontext popped;
      api_.cuCtxPopCurrent(&popped);
    }
  }
  bool ok() const { return ok_; }
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  const Api &api_;
  CUcontext ctx_;
  bool ok_;
};

/// Parses "sm_90a" / "sm_80" into cc 90 / 80 and the arch-specific 'a'.
bool parseChip(const std::string &chip, int &cc, bool &archSpecific);

/// Whether a cubin built for `chip` runs on a device of compute capability
/// `deviceCC` (same major, minor <= device's; 'a' variants only on the exact
/// chip). Otherwise the PTX is JIT-compiled.
bool cubinRunsOn(const std::string &chip, int deviceCC);

} // namespace tile::rt::cuda

#endif // TILE_LIB_RUNTIME_CUDADRIVER_H
