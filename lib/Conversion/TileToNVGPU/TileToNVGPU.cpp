//===- TileToNVGPU.cpp - outline a tile.launch into a gpu.func ------------===//
//
// `func @k(args) attributes {tile.kernel} { prelude; tile.launch ... }`
// becomes
//   gpu.module @k_module { gpu.func @k_kernel(args) kernel { body } }
// and the per-thread lowering of the body (Lowering.cpp, Gemm.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

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

namespace {

/// Clones into `b` the pure computation of `v` from kernel arguments (as
/// convert-tile-launch-to-cpu does).
LogicalResult cloneComputation(OpBuilder &b, Value v, IRMapping &mapping,
                               Operation *user) {
  if (mapping.contains(v))
    return success();
  Operation *def = v.getDefiningOp();
  if (!def)
    return user->emitError("launch body uses a block argument defined outside "
                           "the launch that is not a kernel argument");
  if (!isMemoryEffectFree(def) && !isa<memref::DimOp>(def))
    return def->emitError("launch body uses a value computed by '")
           << def->getName()
           << "' outside the launch; only pure computations on the kernel "
              "arguments may be shared with the blocks";
  if (def->getNumRegions() != 0)
    return def->emitError("launch body uses a value computed by an op with "
                          "regions outside the launch");
  for (Value operand : def->getOperands())
    if (failed(cloneComputation(b, operand, mapping, user)))
      return failure();
  b.clone(*def, mapping);
  return success();
}

/// The block rasterization remap of TileLaunchToCPU.cpp (the same
/// permutation of a 2-D grid).
std::pair<Value, Value> rasterize(OpBuilder &b, Location loc,
                                  RasterizationAttr raster, Value bx, Value by,
                                  Value gx, Value gy) {
  bool rowOrder = raster.getOrder() == RasterOrder::row;
  Value major = rowOrder ? gx : gy, minor = rowOrder ? gy : gx;
  Value id = rowOrder ? arith::AddIOp::create(
                            b, loc, arith::MulIOp::create(b, loc, by, gx), bx)
                      : arith::AddIOp::create(
                            b, loc, arith::MulIOp::create(b, loc, bx, gy), by);
  Value panel = arith::ConstantIndexOp::create(b, loc, raster.getPanel());
  Value perPanel = arith::MulIOp::create(b, loc, panel, minor);
  Value panelIdx = arith::DivUIOp::create(b, loc, id, perPanel);
  Value within = arith::RemUIOp::create(b, loc, id, perPanel);
  Value panelStart = arith::MulIOp::create(b, loc, panelIdx, panel);
  Value left = arith::SubIOp::create(b, loc, major, panelStart);
  Value width = arith::MinUIOp::create(b, loc, panel, left);
  Value newMajor = arith::AddIOp::create(
      b, loc, panelStart, arith::RemUIOp::create(b, loc, within, width));
  Value newMinor = arith::DivUIOp::create(b, loc, within, width);
  return rowOrder ? std::make_pair(newMajor, newMinor)
                  : std::make_pair(newMinor, newMajor);
}

struct ConvertTileToNVGPUPass
    : public tile::impl::ConvertTileToNVGPUBase<ConvertTileToNVGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(TileDialect::kKernelAttrName))
        kernels.push_back(func);
    int64_t maxShared = 0;
    for (func::FuncOp kernel : kernels) {
      auto shared = outline(kernel);
      if (failed(shared))
        return signalPassFailure();
      maxShared = std::max(maxShared, *shared);
    }
    // The metadata's shared_bytes is what the launch must request.
    if (module->hasAttr(kMetadataAttrName)) {
      auto md = getAttachedMetadata(module);
      if (failed(md))
        return signalPassFailure();
      md->sharedBytes = maxShared;
      module->setAttr(kMetadataAttrName,
                      StringAttr::get(&getContext(), md->toJSONString()));
    }
  }

  FailureOr<int64_t> outline(func::FuncOp kernel) {
    SmallVector<LaunchOp> launches;
    kernel.walk([&](LaunchOp l) { launches.push_back(l); });
    if (launches.size() != 1 || launches[0]->getParentOp() != kernel)
      return kernel.emitError("expected exactly one top-level tile.launch");
    LaunchOp launch = launches[0];
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
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
    if (auto raster = launch.getRasterAttr()) {
      auto [bx, by] = rasterize(b, loc, raster, blockIdx[0], blockIdx[1],
                                gridDim[0], gridDim[1]);
      blockIdx[0] = bx;
      blockIdx[1] = by;
    }
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(launch.getBody(), captured);
    for (Value v : captured)
      if (failed(cloneComputation(b, v, mapping, launch)))
        return failure();
    for (unsigned d = 0; d < launch.getGridRank(); ++d)
      mapping.map(launch.getBlockIndices()[d], blockIdx[d]);
    for (Operation &op : launch.getBodyBlock().without_terminator())
      b.clone(op, mapping);
    gpu::ReturnOp::create(b, loc);

    nvgpu_lowering::KernelLowering lowering(fn, threads, chip);
    auto shared = lowering.run();
    if (failed(shared))
      return failure();
    WalkResult leftover = fn.walk([&](Operation *op) {
      if (isa<TileDialect>(op->getDialect())) {
        op->emitError("tile op left after convert-tile-to-nvgpu");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      return failure();
    kernel.erase();
    return *shared;
  }
};

} // namespace
