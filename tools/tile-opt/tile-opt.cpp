//===- tile-opt.cpp - the tile dialect's opt driver -----------------------===//
//
// mlir-opt with the tile dialect and its passes registered next to every
// upstream dialect and pass. The input and output files are handled here
// rather than in MlirOptMain so that a failed write (`-o /dev/full`) is a
// one-line error and exit code 1, not LLVM's fatal "IO failure on output
// stream".
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "tile/InitAll.h"
#include "tile/Support/OutputFile.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tile::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::tile::registerAllDialects(registry);
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "tile optimizer driver\n", registry);
  auto config = mlir::MlirOptMainConfig::createFromCLOptions();
  // Listings write no output file: MlirOptMain prints them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  llvm::InitLLVM initLLVM(argc, argv);
  std::string error;
  auto input = mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  bool ok = mlir::succeeded(
      mlir::MlirOptMain(output->os(), std::move(input), registry, config));
  // Kept only when everything succeeded (as MlirOptMain does).
  if (mlir::failed(mlir::tile::closeOutputFile(*output, ok, "tile-opt")))
    return 1;
  return ok ? 0 : 1;
}
