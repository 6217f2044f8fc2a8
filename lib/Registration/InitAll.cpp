//===- InitAll.cpp - register tile dialects and passes --------------------===//

#include "tile/InitAll.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"

void mlir::tile::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TileDialect>();
}

void mlir::tile::registerAllPasses() {}
