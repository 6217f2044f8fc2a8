//===- Nvrtc.h - NVRTC, loaded at run time: the nvrtc backend's compiler --===//
//
// The nvrtc backend (docs/runtime.md, "Backends") compiles the bundle's
// `cuda` section (CUDA C++ that tilec generated, device library included)
// into a cubin for the exact compute capability of the device it first
// runs on. Like the driver (CudaDriver.h), NVRTC is dlopen()ed: the runtime
// has no link-time dependency, and the library is looked up in order:
//
//   $TILE_NVRTC_PATH     a file, or a directory holding libnvrtc.so*; when
//                        set it is the only place tried (a wrong one is an
//                        error, not a silent fallback)
//   libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so   (the loader's search:
//                        LD_LIBRARY_PATH, ldconfig)
//   $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64
//
// (the Python package sets TILE_NVRTC_PATH to the pip `nvidia-cuda-nvrtc`
// wheel's library when the user set none, docs/python.md).
//
// Compiled cubins are kept in memory (per module, per compute capability)
// and on disk in $TILE_CACHE_DIR/nvrtc (default ~/.cache/tile/nvrtc),
// named by the hash of the source, the arch and NVRTC's version; a cached
// cubin is still checked against the metadata hash when loaded.
// TILE_NVRTC_CACHE=0 disables the disk cache.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_CUDA_NVRTC_H
#define TILE_LIB_RUNTIME_CUDA_NVRTC_H

#include "tile/Runtime/tile_runtime.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace tile::rt::cuda {

// ---- NVRTC ABI (own declarations, stable since CUDA 11.1) -------------------
using nvrtcResult = int;
using nvrtcProgram = struct nvrtcProgram_opaque *;

struct NvrtcApi {
  const char *(*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int *, int *);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *,
                                    const char *, int, const char *const *,
                                    const char *const *);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
  // Optional (tile-nvrtc --ptx only).
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
};

/// The loaded NVRTC library.
struct Nvrtc {
  NvrtcApi api{};
  int major = 0, minor = 0;
  std::string path; ///< where it was loaded from

  /// Compiles `source` (named `name` in diagnostics) for sm_<cc> into
  /// `cubin`. On failure returns LAUNCH_FAILED after fail() with NVRTC's
  /// log.
  tile_status compile(std::string_view source, const std::string &name,
                      int cc, std::string &cubin) const;
  /// The same compile for the virtual arch compute_<cc>[a], into PTX
  /// (tile-nvrtc: checking the sources on a machine without a GPU).
  tile_status compilePTX(std::string_view source, const std::string &name,
                         const std::string &computeArch,
                         std::string &ptx) const;

private:
  tile_status run(std::string_view source, const std::string &name,
                  const std::string &arch, bool wantPTX,
                  std::string &out) const;
};

/// The process-wide NVRTC, loaded on the first call (see the search order
/// above). On failure returns BACKEND_UNAVAILABLE after fail() with every
/// place tried; a failed load is retried by the next call.
tile_status loadNvrtc(const Nvrtc *&out);

/// A cubin of `source` for sm_<cc>: from the disk cache when there, else
/// compiled (and then cached).
tile_status nvrtcCubin(const Nvrtc &nvrtc, std::string_view source,
                       const std::string &name, int cc, std::string &cubin,
                       bool &fromCache);

} // namespace tile::rt::cuda

#endif // TILE_LIB_RUNTIME_CUDA_NVRTC_H
