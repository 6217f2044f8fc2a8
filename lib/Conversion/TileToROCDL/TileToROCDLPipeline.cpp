//===- TileToROCDLPipeline.cpp - the tile-to-rocdl pipeline ---------------===//
//
// The AMD twin of tile-to-nvvm: the same kernel description and layout
// inference (with MFMA accumulators), the shared per-thread lowering with
// wave64 (convert-tile-to-amdgpu), then MLIR's AMDGPU/GPU to ROCDL
// conversions. It stops at a gpu.module with a #rocdl.target: the hip
// target (lib/Target/HIP) serializes it to an hsaco.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/TileToROCDL.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tile::buildTileToROCDLPipeline(
    OpPassManager &pm, const TileToROCDLPipelineOptions &opts) {
  pm.addPass(createTileAttachMetadata(
      TileAttachMetadataOptions{"hip", opts.chip, opts.features}));
  // Masked tile.parallels (attention's padding / causal mask) get an
  // unmasked copy for the tiles where the mask is all true.
  pm.addPass(createTileSpecializeUniformMasks());
  pm.addPass(createTilePipelineFragmentCopies(
      TilePipelineFragmentCopiesOptions{opts.remarks}));
  TileInferLayoutsOptions layouts;
  layouts.matrixCore = "mfma";
  pm.addPass(createTileInferLayouts(layouts));
  ConvertTileToAMDGPUOptions lowering;
  lowering.chip = opts.chip;
  lowering.remarks = opts.remarks;
  pm.addPass(createConvertTileToAMDGPU(lowering));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.nest<gpu::GPUModuleOp>().addNestedPass<gpu::GPUFuncOp>(
      createTileROCDLPrivateAllocas());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(arith::createArithExpandOpsPass());
  // math.tan and math.tanh become llvm.tan / llvm.tanh, which the AMDGPU
  // backend cannot select ("no libcall available"; the device libraries
  // are not linked): their exp / sin / cos forms instead.
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"tan", "tanh"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  GpuROCDLAttachTargetOptions target;
  target.chip = opts.chip;
  target.features = opts.features;
  target.optLevel = opts.optLevel;
  target.abiVersion = opts.abi;
  target.wave64Flag = true;
  pm.addPass(createGpuROCDLAttachTarget(target));
  // amdgpu.mfma -> rocdl.mfma.* for the chip, then the gpu ops (thread and
  // block ids, barriers, shuffles as ds_bpermute, dynamic LDS) and every
  // other dialect in the gpu.module through ConvertToLLVM.
  ConvertAMDGPUToROCDLPassOptions amdgpu;
  amdgpu.chipset = opts.chip;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertAMDGPUToROCDLPass(amdgpu));
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = opts.chip;
  rocdl.runtime = gpu::amd::Runtime::HIP;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToROCDLOps(rocdl));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tile::registerTileToROCDLPipeline() {
  PassPipelineRegistration<TileToROCDLPipelineOptions>(
      "tile-to-rocdl",
      "Lower a tile kernel to a gpu.module of ROCDL with a #rocdl.target "
      "(AMD CDNA: gfx90a, gfx942); tilec --target=hip serializes it",
      buildTileToROCDLPipeline);
}

void mlir::tile::registerTileROCDLDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, amdgpu::AMDGPUDialect, ROCDL::ROCDLDialect,
                  vector::VectorDialect>();
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
}
