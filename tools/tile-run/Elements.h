//===- Elements.h - Element conversions for tile-run ----------*- C++ -*-===//
//
// Reads and writes tensor elements of every metadata dtype through double,
// including the 16- and 8-bit float formats (round to nearest even), so
// tile-run can fill, load, compare and save them without extra libraries.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_TOOLS_TILERUN_ELEMENTS_H
#define TILE_TOOLS_TILERUN_ELEMENTS_H

#include "tile/Runtime/tile_abi.h"

#include <cstdint>

namespace tilerun {

/// Encodes `v` as a minifloat with `ebits` exponent and `mbits` mantissa
/// bits. `ieee`: the top exponent encodes inf/NaN (float16, e5m2);
/// otherwise only all-ones is NaN and overflow saturates (e4m3fn).
uint32_t encodeMinifloat(double v, int ebits, int mbits, bool ieee);
double decodeMinifloat(uint32_t bits, int ebits, int mbits, bool ieee);

/// Element `i` of an array of `type` at `base`, as double.
double loadElement(DLDataType type, const void *base, int64_t i);
/// Stores `v` (rounded / saturated as the type requires) into element `i`.
void storeElement(DLDataType type, void *base, int64_t i, double v);

bool isFloatType(DLDataType type);

} // namespace tilerun

#endif // TILE_TOOLS_TILERUN_ELEMENTS_H
