//===- Npy.h - Minimal .npy reader/writer for tile-run ----------*- C++ -*-===//
//
// The .npy format (numpy's NEP 1, versions 1.0-3.0): magic, version, header
// length, a Python-literal dict {'descr': ..., 'fortran_order': ...,
// 'shape': (...)} and the raw elements. The reader treats the file as
// untrusted input: every malformed, truncated or oversized file is a
// message, never a crash or a silently different array (it is fuzzed by
// tools/fuzz/npy).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_TOOLS_TILERUN_NPY_H
#define TILE_TOOLS_TILERUN_NPY_H

#include "tile/Runtime/tile_abi.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilerun {

struct NpyArray {
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::string data; // C-order element bytes
};

/// The largest rank the reader accepts (numpy's own limit is 64).
inline constexpr size_t kNpyMaxRank = 64;

/// Parses a .npy held in memory: a little-endian (or one-byte) bool, int,
/// uint or float (16/32/64) dtype, C or Fortran order (Fortran-order data is
/// transposed into C order). The header must be the dict numpy writes, with
/// exactly the three keys; the data must be exactly shape x itemsize bytes.
/// On failure returns false with a message (without a file name) in `error`.
bool parseNpy(std::string_view bytes, NpyArray &out, std::string &error);

/// Reads and parses the file at `path`; messages start with the path.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// Writes `array`. Types numpy cannot name (bfloat16, float8) must be
/// converted by the caller (tile-run saves them as float32).
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);

} // namespace tilerun

#endif // TILE_TOOLS_TILERUN_NPY_H
