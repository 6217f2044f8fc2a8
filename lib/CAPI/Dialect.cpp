//===- Dialect.cpp - C API for the tile dialect ---------------------------===//

#include "tile-c/Dialect.h"

#include "mlir/CAPI/Registration.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/InitAll.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Tile, tile, mlir::tile::TileDialect)

void tileRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::tile::registerAllDialects(*unwrap(registry));
}

void tileRegisterAllPasses(void) { mlir::tile::registerAllPasses(); }
