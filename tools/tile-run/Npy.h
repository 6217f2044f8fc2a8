//===- Npy.h - Minimal .npy reader/writer for tile-run ----------*- C++ -*-===//
#ifndef TILE_TOOLS_TILERUN_NPY_H
#define TILE_TOOLS_TILERUN_NPY_H

#include "tile/Runtime/tile_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilerun {

struct NpyArray {
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::string data; // C-order element bytes
};

/// Reads a C-order, little-endian .npy (format 1.0-3.0) of a bool, int,
/// uint or float (16/32/64) dtype.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// Writes `array`. Types numpy cannot name (bfloat16, float8) must be
/// converted by the caller (tile-run saves them as float32).
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);

} // namespace tilerun

#endif // TILE_TOOLS_TILERUN_NPY_H
