//===- InitAll.h - register tile dialects and passes ------------*- C++ -*-===//
//
// One entry point for tools that embed tile (tile-opt, tilec, the mlir-opt
// plugin, the C API, client projects).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_INITALL_H
#define TILE_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::tile {

/// Adds the tile dialect (and the dialects its lowerings produce) to
/// `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers every tile pass and pipeline with the global pass registry.
void registerAllPasses();

} // namespace mlir::tile

#endif // TILE_INITALL_H
