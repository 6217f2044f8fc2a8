//===- Bundle.h - Kernel bundle container: reader and writer ----*- C++ -*-===//
//
// The container format of docs/bundle.md, in plain C++17 (no LLVM), built as
// the small static library TileBundle so both the runtime (reader) and tilec
// (writer) use the one implementation.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_BUNDLE_H
#define TILE_RUNTIME_BUNDLE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tile::bundle {

inline constexpr char kMagic[8] = {'T', 'I', 'L', 'E', 'B', 'N', 'D', 'L'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kMaxSections = 64;
inline constexpr size_t kHeaderSize = 24;   // magic, version, count, size
inline constexpr size_t kEntrySize = 48;    // one section-table entry
inline constexpr size_t kNameSize = 24;     // NUL-padded, >= 1 NUL
inline constexpr size_t kPayloadAlign = 16; // payload offsets

/// CRC-32 (IEEE 802.3, reflected, as zlib's crc32()). Pass the previous
/// result as `crc` to checksum data in pieces.
uint32_t crc32(const void *data, size_t size, uint32_t crc = 0);

/// The hash the compiler bakes into a kernel's code so the runtime can tell
/// that the bundle's metadata is the one the code was compiled from
/// (docs/bundle.md, "Trust model"): 64-bit FNV-1a of the exact bytes of the
/// `metadata` section. The code holds it as the exported 8-byte constant
/// `NAME + kMetadataHashSuffix` (NAME = the metadata's `name`): in host.so
/// and native.so (dynamic symbol), and in the cubin / PTX (a `.global`,
/// read with cuModuleGetGlobal).
uint64_t metadataHash(std::string_view metadata);
inline constexpr char kMetadataHashSuffix[] = "__tile_metadata_hash";

/// The dynamic shared memory the `cuda` section's kernel needs when that is
/// more than the metadata's `shared_bytes`: the CUDA C++ is the sm_80
/// lowering, and on sm_90a the cubin's kernel (wgmma layouts) can need less
/// (e.g. no cross-warp reduction scratch). The CUDA C++ then defines the
/// 8-byte constant `NAME + kNvrtcSharedBytesSuffix`, which the nvrtc backend
/// reads (cuModuleGetGlobal) and launches with; absent, the metadata's
/// value is the kernel's.
inline constexpr char kNvrtcSharedBytesSuffix[] = "__tile_nvrtc_shared_bytes";

/// A section to write.
struct Section {
  std::string name; // 1..23 printable ASCII characters
  std::string data; // payload bytes
};

/// Serializes `sections` (in the given order) into a bundle. On invalid
/// input (bad/duplicate name, too many sections) returns false and sets
/// `error`.
bool write(const std::vector<Section> &sections, std::string &out,
           std::string &error);

/// Throwing convenience form: throws std::invalid_argument on invalid input.
std::string write(const std::vector<Section> &sections);

/// A section of a parsed bundle; `data` points into the caller's buffer.
struct SectionView {
  std::string_view name;
  const uint8_t *data = nullptr;
  size_t size = 0;
  std::string_view bytes() const {
    return {reinterpret_cast<const char *>(data), size};
  }
};

struct Reader {
  std::vector<SectionView> sections; // in table order

  /// The section called `name`, or nullptr.
  const SectionView *find(std::string_view name) const;
};

/// Parses and fully validates a bundle held in [data, data+size): header,
/// header CRC, table, bounds, overlaps, alignment and every payload CRC.
/// Returns false with a precise message in `error` on the first problem.
/// The views in `out` point into `data`, which must outlive them.
bool read(const void *data, size_t size, Reader &out, std::string &error);

} // namespace tile::bundle

#endif // TILE_RUNTIME_BUNDLE_H
