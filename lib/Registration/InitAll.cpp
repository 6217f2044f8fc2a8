//===- InitAll.cpp - register tile dialects and passes --------------------===//

#include "tile/InitAll.h"

#include "tile/Conversion/Passes.h"
#include "tile/Conversion/TileToCUDASource.h"
#include "tile/Conversion/TileToMetalSource.h"
#include "tile/Conversion/TileToNVVM.h"
#include "tile/Conversion/TileToROCDL.h"
#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

void mlir::tile::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TileDialect, arith::ArithDialect, func::FuncDialect,
                  memref::MemRefDialect, math::MathDialect, scf::SCFDialect,
                  LLVM::LLVMDialect>();
  registerTileNVVMDialects(registry);
  registerTileCUDASourceDialects(registry);
  registerTileROCDLDialects(registry);
}

void mlir::tile::registerAllPasses() {
  registerTilePasses();
  registerTileConversionPasses();
  registerTileToCPUPipeline();
  registerTileToNVVMPipeline();
  registerTileToROCDLPipeline();
  registerTileToCUDASourcePipeline();
  registerTileToMetalSourcePipeline();
}
