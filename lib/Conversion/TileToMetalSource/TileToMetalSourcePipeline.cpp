//===- TileToMetalSourcePipeline.cpp - the tile-to-metal-source pipeline --===//

#include "tile/Conversion/TileToMetalSource.h"

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/EmitC/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tile::buildTileToMetalSourcePipeline(
    OpPassManager &pm, const TileToMetalSourcePipelineOptions &opts) {
  pm.addPass(createTileAttachMetadata(
      TileAttachMetadataOptions{"metal", opts.chip, opts.features}));
  // Masked tile.parallels (attention's padding / causal mask) get an
  // unmasked copy for the tiles where the mask is all true.
  pm.addPass(createTileSpecializeUniformMasks());
  // Register multi-buffering needs no asynchronous copy: it runs before the
  // stages of the (threadgroup-memory) cp.async pipeline are dropped.
  pm.addPass(createTilePipelineFragmentCopies(
      TilePipelineFragmentCopiesOptions{opts.remarks}));
  pm.addPass(createTileMetalSingleStage(
      TileMetalSingleStageOptions{opts.remarks}));
  pm.addPass(createTileInferLayouts());
  // The sm_80 lowering: a SIMD-group is a 32-lane warp, and the Metal
  // device library implements its shuffles, ldmatrix and mma.sync.
  pm.addPass(createConvertTileToNVGPU(ConvertTileToNVGPUOptions{"sm_80", opts.remarks}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // As for CUDA C++: fold the index arithmetic bounded by the thread index.
  pm.addPass(arith::createIntRangeOptimizationsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createTilePrepareMetalKernel());
  pm.addPass(createConvertGPUToEmitC(ConvertGPUToEmitCOptions{"metal"}));
  pm.addPass(createTileMetalThreadContext());
  pm.addPass(emitc::createFormExpressionsPass());
}

void mlir::tile::registerTileToMetalSourcePipeline() {
  PassPipelineRegistration<TileToMetalSourcePipelineOptions>(
      "tile-to-metal-source",
      "Lower a tile kernel to EmitC for Metal Shading Language (the "
      "metal-torch backend's source): the sm_80 lowering, then "
      "convert-gpu-to-emitc{target=metal}",
      buildTileToMetalSourcePipeline);
}
