//===- client-opt.cpp - an opt tool built against an installed tile -------===//
//
// Registers only the tile dialect, the upstream dialects a tile kernel is
// written in (func, arith, memref) and tile's passes.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/InitAll.h"

int main(int argc, char **argv) {
  mlir::tile::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::tile::registerAllDialects(registry);
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::memref::MemRefDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tile client opt driver\n", registry));
}
