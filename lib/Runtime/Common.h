//===- Common.h - Runtime-internal helpers: errors, dtypes, devices -------===//
#ifndef TILE_LIB_RUNTIME_COMMON_H
#define TILE_LIB_RUNTIME_COMMON_H

#include "tile/Runtime/tile_runtime.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tile::rt {

/// Records `message` as this thread's last error and returns `status`, so
/// error paths read `return fail(TILE_STATUS_..., "...")`.
tile_status fail(tile_status status, std::string message);
const char *lastError();

/// Metadata dtype name ("float16") -> DLPack type; false if unknown.
bool parseDType(std::string_view name, DLDataType &out);
/// DLPack type -> metadata name, or a descriptive fallback for types the
/// metadata cannot name ("dtype(code=5, bits=64)", "float32x4").
std::string dtypeName(DLDataType type);
/// Unpacks TILE_PACK_DTYPE.
DLDataType unpackDType(int64_t packed);
inline int64_t packDType(DLDataType t) {
  return TILE_PACK_DTYPE(t.code, t.bits, t.lanes);
}
/// Bytes per element (sub-byte types round up).
inline int64_t elementBytes(DLDataType t) {
  return (int64_t(t.bits) * t.lanes + 7) / 8;
}
/// "cpu", "cuda", ... or "device type N".
std::string deviceTypeName(int64_t type);

/// Formats a signed integer without allocating through iostreams.
std::string str(int64_t v);

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_COMMON_H
