//===- Passes.h - tile conversion passes ------------------------*- C++ -*-===//

#ifndef TILE_CONVERSION_PASSES_H
#define TILE_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"

namespace mlir::tile {

#define GEN_PASS_DECL
#include "tile/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tile/Conversion/Passes.h.inc"

/// Options of the `tile-to-cpu` pipeline.
struct TileToCPUPipelineOptions
    : public PassPipelineOptions<TileToCPUPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("CPU recorded in the metadata"),
                           llvm::cl::init("host")};
  Option<bool> nativeWrapper{
      *this, "native-wrapper",
      llvm::cl::desc("Generate the native backend's host wrapper"),
      llvm::cl::init(true)};
};

/// tile -> scf/memref -> LLVM dialect for the host CPU, with the kernel ABI's
/// entry points (docs/pipelines.md).
void buildTileToCPUPipeline(OpPassManager &pm,
                            const TileToCPUPipelineOptions &options);
void registerTileToCPUPipeline();

} // namespace mlir::tile

#endif // TILE_CONVERSION_PASSES_H
