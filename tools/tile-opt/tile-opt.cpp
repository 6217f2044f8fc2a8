//===- tile-opt.cpp - the tile dialect's opt driver -----------------------===//
//
// mlir-opt with the tile dialect and its passes registered next to every
// upstream dialect and pass.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "tile/InitAll.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tile::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::tile::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tile optimizer driver\n", registry));
}
