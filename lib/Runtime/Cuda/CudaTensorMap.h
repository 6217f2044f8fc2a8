//===- CudaTensorMap.h - TMA descriptors (CUtensorMap) for sm90 kernels ---===//
//
// Plain C++ (no CUDA headers): the runtime side of the "tma" entries of a
// kernel variant (docs/bundle.md, "Kernel variants"). For each entry the
// runtime encodes a CUtensorMap with the driver's cuTensorMapEncodeTiled
// (looked up in the same dlopen()ed libcuda as the rest of CudaDriver.h),
// copies it to device memory (64-byte aligned; cache it per (tensor data
// pointer, shape), the contents depend on nothing else) and passes the
// device pointer as one extra trailing kernel parameter, in "tma" order.
// When any entry cannot be encoded (checkTensorMap != ""), the runtime
// launches the generic kernel (entry.kernel) instead.
//
// The enum values are the CUDA driver API's (cuda.h, CUDA 12+), declared
// here so that the runtime needs no CUDA headers.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_CUDATENSORMAP_H
#define TILE_LIB_RUNTIME_CUDATENSORMAP_H

#include <cstdint>
#include <string>

namespace tile::rt::cuda {

// CUtensorMapDataType
enum : int {
  kTensorMapUInt8 = 0,
  kTensorMapUInt16 = 1,
  kTensorMapUInt32 = 2,
  kTensorMapInt32 = 3,
  kTensorMapUInt64 = 4,
  kTensorMapInt64 = 5,
  kTensorMapFloat16 = 6,
  kTensorMapFloat32 = 7,
  kTensorMapFloat64 = 8,
  kTensorMapBFloat16 = 9,
};
// CUtensorMapInterleave
enum : int { kInterleaveNone = 0, kInterleave16B = 1, kInterleave32B = 2 };
// CUtensorMapSwizzle
enum : int {
  kSwizzleNone = 0,
  kSwizzle32B = 1,
  kSwizzle64B = 2,
  kSwizzle128B = 3
};
// CUtensorMapL2promotion
enum : int {
  kL2PromotionNone = 0,
  kL2Promotion64B = 1,
  kL2Promotion128B = 2,
  kL2Promotion256B = 3
};
// CUtensorMapFloatOOBfill: NONE fills out-of-bounds elements with zeros.
enum : int { kOobFillZero = 0, kOobFillNanRequestZeroFma = 1 };

/// CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};
static_assert(sizeof(TensorMap) == 128, "CUtensorMap is 128 bytes");

/// cuTensorMapEncodeTiled (CUresult = int; CUDA 12.0+ drivers export it).
using EncodeTiledFn = int (*)(TensorMap *tensorMap, int dataType,
                              uint32_t rank, void *globalAddress,
                              const uint64_t *globalDim,
                              const uint64_t *globalStrides,
                              const uint32_t *boxDim,
                              const uint32_t *elementStrides, int interleave,
                              int swizzle, int l2Promotion, int oobFill);

/// One "tma" entry of a kernel variant's metadata.
struct TmaSpec {
  int param = -1;          // kernel param (a tensor) the map describes
  int dataType = -1;       // kTensorMap*
  int elementBytes = 0;
  uint32_t rank = 0;       // == the tensor's rank, at most 5
  uint32_t box[5] = {};    // innermost first
  uint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  int interleave = kInterleaveNone;
  int swizzle = kSwizzle128B;
  int l2Promotion = kL2Promotion256B;
  int oobFill = kOobFillZero;
  bool optional = false; // null pointer where the launch has no map
};

/// Metadata names -> enum values; -1 for an unknown name.
int tensorMapDataType(const std::string &dtype, int *elementBytes);
int tensorMapInterleave(const std::string &name);   // "none" "16B" "32B"
int tensorMapSwizzle(const std::string &name);      // "none" "32B" "64B" "128B"
int tensorMapL2Promotion(const std::string &name);  // "none" "64B" "128B" "256B"
int tensorMapOobFill(const std::string &name);      // "zero" "nan"

/// Whether the tensor (row-major, `shape` outermost first, data at `base`)
/// can be described by `spec`: "" if so, else the reason (a dim of 0 or
/// >= 2^31: the kernels' coordinates are signed 32-bit; base not 16-byte
/// aligned, a row pitch not a multiple of 16 bytes or >= 2^40, box dims 0
/// or > 256, the innermost box wider than the swizzle span). The runtime
/// then tries the next variant (a required map) or passes a null map (an
/// optional one).
/// `rowElems` > 0: the rows (innermost dim) are `rowElems` >= shape[rank-1]
/// elements apart instead of shape[rank-1] (a repacked copy with padded
/// rows, CudaRepack.h); the map's dims stay `shape`, so the padding is
/// never read (TMA zero-fills the box beyond globalDim).
std::string checkTensorMap(const TmaSpec &spec, const void *base,
                           const int64_t *shape, int64_t rowElems = 0);

/// Encodes the map (checkTensorMap first). Returns "" or the error.
std::string encodeTensorMap(EncodeTiledFn encode, const TmaSpec &spec,
                            void *base, const int64_t *shape, TensorMap *out,
                            int64_t rowElems = 0);

} // namespace tile::rt::cuda

#endif // TILE_LIB_RUNTIME_CUDATENSORMAP_H
