//===- TileToNVGPU.cpp - outline a tile.launch into a gpu.func ------------===//
//
// `func @k(args) attributes {tile.kernel} { prelude; tile.launch ... }`
// becomes
//   gpu.module @k_module { gpu.func @k_kernel(args) kernel { body } }
// and the per-thread lowering of the body (Lowering.cpp, Gemm.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETONVGPU
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

/// Outlines one kernel's tile.launch into a gpu.func and lowers its body.
static FailureOr<int64_t> outline(ModuleOp module, func::FuncOp kernel,
                                  const nvgpu_lowering::GPUTargetInfo &target,
                                  bool remarks) {
  FailureOr<LaunchOp> maybeLaunch = getKernelLaunch(kernel);
  if (failed(maybeLaunch))
    return failure();
  LaunchOp launch = *maybeLaunch;
  MLIRContext *ctx = module.getContext();
  Location loc = kernel.getLoc();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));

  OpBuilder b(kernel);
  std::string name = kernel.getSymName().str();
  auto gpuModule = gpu::GPUModuleOp::create(b, loc, name + "_module");
  b.setInsertionPointToStart(gpuModule.getBody());
  auto fnType = FunctionType::get(ctx, kernel.getArgumentTypes(), {});
  auto fn = gpu::GPUFuncOp::create(b, loc, name + "_kernel", fnType);
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  int64_t threads = launch.getThreads();
  fn.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {(int32_t)threads, 1, 1}));
  Block &entry = fn.getBody().front();
  b.setInsertionPointToStart(&entry);

  IRMapping mapping;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    mapping.map(kernel.getArgument(i), entry.getArgument(i));
  SmallVector<Value> blockIdx, gridDim;
  for (gpu::Dimension d :
       {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
    blockIdx.push_back(gpu::BlockIdOp::create(b, loc, d));
    gridDim.push_back(gpu::GridDimOp::create(b, loc, d));
  }
  if (failed(cloneLaunchBody(b, launch, mapping, blockIdx, gridDim)))
    return failure();
  gpu::ReturnOp::create(b, loc);

  nvgpu_lowering::KernelLowering lowering(fn, threads, target);
  lowering.remarks = remarks;
  // A kernel with sm_90a variants (tile-warp-specialize) has the Hopper
  // path: its generic kernel is a fallback and makes no wgmma remarks.
  if (auto info = module->getAttrOfType<KernelInfoAttr>(
          TileDialect::kKernelInfoAttrName))
    lowering.hopperVariants = !info.getVariants().empty();
  auto shared = lowering.run();
  if (failed(shared))
    return failure();
  WalkResult leftover = fn.walk([&](Operation *op) {
    if (isa<TileDialect>(op->getDialect())) {
      op->emitError("tile op left after the GPU lowering of tile ops");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (leftover.wasInterrupted())
    return failure();
  kernel.erase();
  return *shared;
}

LogicalResult nvgpu_lowering::outlineAndLowerKernels(
    ModuleOp module, const GPUTargetInfo &target, bool remarks) {
  SmallVector<func::FuncOp> kernels = getKernelFunctions(module);
  int64_t maxShared = 0;
  for (func::FuncOp kernel : kernels) {
    auto shared = outline(module, kernel, target, remarks);
    if (failed(shared))
      return failure();
    maxShared = std::max(maxShared, *shared);
  }
  // The metadata's shared_bytes is what the launch must request.
  if (auto info = module->getAttrOfType<KernelInfoAttr>(
          TileDialect::kKernelInfoAttrName))
    setKernelInfo(module, info.withSharedBytes(maxShared));
  return success();
}

namespace {

struct ConvertTileToNVGPUPass
    : public tile::impl::ConvertTileToNVGPUBase<ConvertTileToNVGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    nvgpu_lowering::GPUTargetInfo target;
    target.chip = chip;
    if (failed(nvgpu_lowering::outlineAndLowerKernels(getOperation(), target,
                                                      remarks)))
      signalPassFailure();
  }
};

} // namespace
