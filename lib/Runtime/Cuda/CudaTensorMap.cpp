//===- CudaTensorMap.cpp - TMA descriptors for sm90 kernels ---------------===//

#include "CudaTensorMap.h"

#include <cstring>

namespace tile::rt::cuda {

int tensorMapDataType(const std::string &dtype, int *elementBytes) {
  struct Entry {
    const char *name;
    int type, bytes;
  };
  static const Entry entries[] = {
      {"uint8", kTensorMapUInt8, 1},      {"int8", kTensorMapUInt8, 1},
      {"float8_e4m3fn", kTensorMapUInt8, 1}, {"float8_e5m2", kTensorMapUInt8, 1},
      {"uint16", kTensorMapUInt16, 2},    {"int16", kTensorMapUInt16, 2},
      {"uint32", kTensorMapUInt32, 4},    {"int32", kTensorMapInt32, 4},
      {"uint64", kTensorMapUInt64, 8},    {"int64", kTensorMapInt64, 8},
      {"float16", kTensorMapFloat16, 2},  {"bfloat16", kTensorMapBFloat16, 2},
      {"float32", kTensorMapFloat32, 4},  {"float64", kTensorMapFloat64, 8},
  };
  for (const Entry &e : entries)
    if (dtype == e.name) {
      if (elementBytes)
        *elementBytes = e.bytes;
      return e.type;
    }
  return -1;
}

int tensorMapInterleave(const std::string &n) {
  return n == "none" ? kInterleaveNone
         : n == "16B" ? kInterleave16B
         : n == "32B" ? kInterleave32B
                      : -1;
}
int tensorMapSwizzle(const std::string &n) {
  return n == "none"   ? kSwizzleNone
         : n == "32B"  ? kSwizzle32B
         : n == "64B"  ? kSwizzle64B
         : n == "128B" ? kSwizzle128B
                       : -1;
}
int tensorMapL2Promotion(const std::string &n) {
  return n == "none"   ? kL2PromotionNone
         : n == "64B"  ? kL2Promotion64B
         : n == "128B" ? kL2Promotion128B
         : n == "256B" ? kL2Promotion256B
                       : -1;
}
int tensorMapOobFill(const std::string &n) {
  return n == "zero" ? kOobFillZero : n == "nan" ? kOobFillNanRequestZeroFma : -1;
}

static int swizzleBytes(int swizzle) {
  return swizzle == kSwizzle32B    ? 32
         : swizzle == kSwizzle64B  ? 64
         : swizzle == kSwizzle128B ? 128
                                   : 0;
}

std::string checkTensorMap(const TmaSpec &spec, const void *base,
                           const int64_t *shape, int64_t rowElems) {
  if (spec.rank < 1 || spec.rank > 5)
    return "tensor map rank must be 1..5";
  if (spec.dataType < 0 || spec.elementBytes <= 0)
    return "unsupported tensor map element type";
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0)
    return "tensor data is not 16-byte aligned";
  uint64_t pitch = spec.elementBytes;
  for (uint32_t i = 0; i < spec.rank; ++i) {
    int64_t extent = shape[spec.rank - 1 - i]; // innermost first
    // The kernels' TMA coordinates are signed 32-bit (PTX): elements at
    // 2^31 and beyond could not be addressed, though a map allows 2^32.
    if (extent <= 0 || static_cast<uint64_t>(extent) >= (1ull << 31))
      return "tensor dim " + std::to_string(spec.rank - 1 - i) +
             " is 0 or too large for a tensor map";
    if (i == 0 && rowElems > 0) {
      if (rowElems < extent)
        return "tensor row pitch is shorter than its rows";
      extent = rowElems;
    }
    if (i > 0 && (pitch % 16 != 0 || pitch >= (1ull << 40)))
      return "tensor pitch of dim " + std::to_string(spec.rank - 1 - i) +
             " (" + std::to_string(pitch) +
             " bytes) is not a multiple of 16 bytes";
    pitch *= static_cast<uint64_t>(extent);
    if (spec.box[i] == 0 || spec.box[i] > 256)
      return "tensor map box dims must be 1..256";
    if (spec.elementStrides[i] == 0 || spec.elementStrides[i] > 8)
      return "tensor map element strides must be 1..8";
  }
  int span = swizzleBytes(spec.swizzle);
  if (span && spec.box[0] * spec.elementBytes > static_cast<uint32_t>(span))
    return "tensor map inner box is wider than the swizzle span";
  if ((spec.box[0] * spec.elementBytes) % 16 != 0)
    return "tensor map inner box must be a multiple of 16 bytes";
  return "";
}

std::string encodeTensorMap(EncodeTiledFn encode, const TmaSpec &spec,
                            void *base, const int64_t *shape, TensorMap *out,
                            int64_t rowElems) {
  std::string why = checkTensorMap(spec, base, shape, rowElems);
  if (!why.empty())
    return why;
  if (!encode)
    return "cuTensorMapEncodeTiled is not available (driver older than CUDA "
           "12.0)";
  uint64_t dims[5], strides[5];
  uint64_t pitch = spec.elementBytes;
  for (uint32_t i = 0; i < spec.rank; ++i) {
    dims[i] = static_cast<uint64_t>(shape[spec.rank - 1 - i]);
    if (i > 0)
      strides[i - 1] = pitch;
    pitch *= i == 0 && rowElems > 0 ? static_cast<uint64_t>(rowElems)
                                    : dims[i];
  }
  std::memset(out, 0, sizeof(*out));
  int r = encode(out, spec.dataType, spec.rank, base, dims, strides, spec.box,
                 spec.elementStrides, spec.interleave, spec.swizzle,
                 spec.l2Promotion, spec.oobFill);
  if (r != 0)
    return "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(r) +
           ")";
  return "";
}

} // namespace tile::rt::cuda
