//===- TileToNVVMPipeline.cpp - the tile-to-nvvm pipeline -----------------===//

#include "tile/Conversion/TileToNVVM.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tile::buildTileNVVMSerialization(OpPassManager &pm,
                                            StringRef format,
                                            StringRef toolkit) {
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format.str();
  binary.toolkitPath = toolkit.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::tile::buildTileToNVVMPipeline(
    OpPassManager &pm, const TileToNVVMPipelineOptions &opts) {
  pm.addPass(createTileAttachMetadata(
      TileAttachMetadataOptions{"cuda", opts.chip, opts.features}));
  // Masked tile.parallels (attention's padding / causal mask) get an
  // unmasked copy for the tiles where the mask is all true.
  pm.addPass(createTileSpecializeUniformMasks());
  // sm_90a: a TMA/mbarrier/wgmma warp-specialized variant of matching GEMM
  // kernels, built from the tile IR before the generic lowering consumes it.
  bool sm90 = opts.sm90Gemm && opts.chip == "sm_90a";
  if (sm90) {
    TileWarpSpecializeOptions ws;
    ws.chip = opts.chip;
    ws.persistent = opts.sm90Persistent;
    ws.schedule = opts.sm90Schedule;
    ws.epilogue = opts.sm90Epilogue;
    ws.remarks = opts.remarks;
    pm.addPass(createTileWarpSpecialize(ws));
    pm.addPass(createConvertTileGemmToSM90(
        ConvertTileGemmToSM90Options{opts.remarks}));
  }
  // Register multi-buffering of pipelined global -> fragment copies, before
  // layout inference so the extra fragments get their layouts.
  pm.addPass(createTilePipelineFragmentCopies(
      TilePipelineFragmentCopiesOptions{opts.remarks}));
  // sm_90a: accumulator layouts wgmma produces where the shape allows.
  TileInferLayoutsOptions layouts;
  layouts.wgmma = opts.chip == "sm_90a";
  pm.addPass(createTileInferLayouts(layouts));
  pm.addPass(createConvertTileToNVGPU(
      ConvertTileToNVGPUOptions{opts.chip, opts.remarks,
                                /*warpSpecialize=*/true, opts.wsPingPong,
                                opts.wsTma, opts.wsPersistent,
                                opts.wsDoubleHeads}));
  if (sm90)
    pm.addPass(createTileSM90MergeModules());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createSCFToControlFlowPass());
  // Not upstream arith-expand: it would expand arith.maximumf/minimumf,
  // which NVPTX has as single instructions.
  pm.addPass(createTileNVVMExpandArith());
  if (opts.fpContract)
    pm.addPass(createTileFPContract());
  pm.addPass(createTileNVVMFtzExp2());
  if (!opts.preciseDiv)
    pm.addPass(createTileNVVMFastDiv());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Views of kernel parameters (memref.subview, collapse/expand_shape) leave
  // affine.apply offset and stride arithmetic.
  pm.addPass(createLowerAffinePass());
  GpuNVVMAttachTargetOptions target;
  target.chip = opts.chip;
  target.features = opts.features;
  target.optLevel = opts.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  // The sm90 kernels' mbarrier/wgmma ops that NVVM implements as inline PTX.
  if (sm90)
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (opts.format != "none")
    buildTileNVVMSerialization(pm, opts.format, opts.toolkit);
}

void mlir::tile::registerTileToNVVMPipeline() {
  PassPipelineRegistration<TileToNVVMPipelineOptions>(
      "tile-to-nvvm",
      "Lower a tile kernel to a gpu.module of NVVM and serialize it (cubin "
      "or PTX) with gpu-module-to-binary",
      buildTileToNVVMPipeline);
}

void mlir::tile::registerTileNVVMDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, ::mlir::nvgpu::NVGPUDialect,
                  NVVM::NVVMDialect, vector::VectorDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers the other dialects in the gpu.module through
  // their ConvertToLLVMPatternInterface: without these, arith/cf/... ops
  // survive into the LLVM IR translation.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}
