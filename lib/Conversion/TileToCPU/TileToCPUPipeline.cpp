//===- TileToCPUPipeline.cpp - the tile-to-cpu pipeline -------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tile::buildTileToCPUPipeline(OpPassManager &pm,
                                        const TileToCPUPipelineOptions &opts) {
  // Metadata first: it reads the kernel's signature and grid computation,
  // which the launch outlining removes.
  pm.addPass(createTileAttachMetadata(
      TileAttachMetadataOptions{"cpu", opts.chip, ""}));
  // Masked tile.parallels (attention's padding / causal mask) get an
  // unmasked copy for the tiles where the mask is all true.
  pm.addPass(createTileSpecializeUniformMasks());
  // The GPU pipelines' register multi-buffering, here too so that the CPU
  // runs (and checks) the same rewritten loops.
  pm.addPass(createTilePipelineFragmentCopies());
  pm.addPass(createConvertTileToSCF());
  pm.addPass(createConvertTileLaunchToCPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM intrinsic (tanh, erf, ...) becomes a libm call, resolved
  // when the runtime loads the kernel's shared object.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Views of kernel parameters (memref.subview, collapse/expand_shape) leave
  // affine.apply offset and stride arithmetic.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createTileCPUEntryPoints(
      TileCPUEntryPointsOptions{opts.nativeWrapper}));
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tile::registerTileToCPUPipeline() {
  PassPipelineRegistration<TileToCPUPipelineOptions>(
      "tile-to-cpu",
      "Lower a tile kernel to LLVM dialect host code with the CPU kernel ABI's "
      "entry points",
      buildTileToCPUPipeline);
}
