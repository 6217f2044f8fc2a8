//===- TileToROCDL.h - the tile-to-rocdl pipeline ---------------*- C++ -*-===//

#ifndef TILE_CONVERSION_TILETOROCDL_H
#define TILE_CONVERSION_TILETOROCDL_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tile {

/// Options of the `tile-to-rocdl` pipeline.
struct TileToROCDLPipelineOptions
    : public PassPipelineOptions<TileToROCDLPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("AMD GPU: gfx942, gfx90a"),
                           llvm::cl::init("gfx942")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("AMDGPU target features (+sramecc, -xnack, ...)"),
      llvm::cl::init("")};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("Device optimization level"),
                            llvm::cl::init(3)};
  Option<std::string> abi{
      *this, "abi",
      llvm::cl::desc("AMDHSA code object version x 100 (500: code object "
                     "v5, loaded by ROCm 5.x and 6.x)"),
      llvm::cl::init("500")};
  Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Remarks naming every tile.gemm lowered to SIMT FMAs "
                     "instead of MFMA, with the reason"),
      llvm::cl::init(false)};
};

/// tile -> gpu/amdgpu -> ROCDL (docs/pipelines.md); stops before
/// serialization (the hip target serializes, TileToROCDL's HIPTarget).
void buildTileToROCDLPipeline(OpPassManager &pm,
                              const TileToROCDLPipelineOptions &options);
void registerTileToROCDLPipeline();

/// Dialects, interfaces and LLVM IR translations the AMD pipeline needs
/// (gpu, amdgpu, rocdl, vector; the ROCDL target attribute; the
/// ConvertToLLVM interfaces convert-gpu-to-rocdl uses; gpu/rocdl/llvm to
/// LLVM IR translation).
void registerTileROCDLDialects(DialectRegistry &registry);

} // namespace tile
} // namespace mlir

#endif // TILE_CONVERSION_TILETOROCDL_H
