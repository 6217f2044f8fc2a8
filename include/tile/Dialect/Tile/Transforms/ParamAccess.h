//===- ParamAccess.h - what a kernel does to its tensor params -*- C++ -*-===//
//
// Whether a kernel reads and/or writes the memory of a memref argument, for
// the kernel description (#tile.param access) and from there the runtime's
// checks: read-only memory passed for a written param, and a written param
// that overlaps another param, are refused before launch.
//
// The analysis follows the argument through every op that yields a memref
// derived from it (views, casts, extract_strided_metadata, select, ...) and
// asks each user's MemoryEffectOpInterface what it does to that value
// (tile.copy target, tile.atomic, tile.atomic_tile, tile.gemm C,
// memref.store, ...). It is conservative: a use it cannot see through (an
// op without memory effects information such as func.call, a memref passed
// to a region op or a terminator, its address taken as an integer) counts as
// read and write, so `read` is only ever reported for memory the kernel
// provably never writes.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_TRANSFORMS_PARAMACCESS_H
#define TILE_DIALECT_TILE_TRANSFORMS_PARAMACCESS_H

#include "tile/Dialect/Tile/IR/TileDialect.h"

namespace mlir::tile {

/// What the kernel does to the memory behind `memref` (a kernel argument).
/// Memory that is never touched is `read`.
ParamAccess computeParamAccess(Value memref);

} // namespace mlir::tile

#endif // TILE_DIALECT_TILE_TRANSFORMS_PARAMACCESS_H
