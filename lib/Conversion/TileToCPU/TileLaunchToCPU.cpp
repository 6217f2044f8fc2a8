//===- TileLaunchToCPU.cpp - outline a launch into a block function -------===//
//
// `func @k(args) { prelude; tile.launch blocks(...) in (grid) {body} }`
// becomes `func @k__tile_block(args, bx, by, bz, gx, gy, gz)` running one
// block. The grid is computed by the host side (runtime or native wrapper)
// from the metadata, so the prelude is only kept where the body uses it.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILELAUNCHTOCPU
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {


struct ConvertTileLaunchToCPUPass
    : public tile::impl::ConvertTileLaunchToCPUBase<
          ConvertTileLaunchToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels = getKernelFunctions(module);
    for (func::FuncOp kernel : kernels)
      if (failed(outline(kernel)))
        return signalPassFailure();
  }

  LogicalResult outline(func::FuncOp kernel) {
    FailureOr<LaunchOp> maybeLaunch = getKernelLaunch(kernel);
    if (failed(maybeLaunch))
      return failure();
    LaunchOp launch = *maybeLaunch;
    Location loc = kernel.getLoc();
    OpBuilder b(kernel);
    MLIRContext *ctx = &getContext();
    Type indexType = b.getIndexType();

    SmallVector<Type> argTypes(kernel.getArgumentTypes());
    argTypes.append(6, indexType);
    auto blockFn = func::FuncOp::create(
        b, loc, (kernel.getSymName() + "__tile_block").str(),
        FunctionType::get(ctx, argTypes, {}));
    blockFn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    Block *entry = blockFn.addEntryBlock();
    b.setInsertionPointToStart(entry);

    IRMapping mapping;
    unsigned numArgs = kernel.getNumArguments();
    for (unsigned i = 0; i < numArgs; ++i)
      mapping.map(kernel.getArgument(i), entry->getArgument(i));
    SmallVector<Value> blockIdx = {entry->getArgument(numArgs),
                                   entry->getArgument(numArgs + 1),
                                   entry->getArgument(numArgs + 2)};
    SmallVector<Value> gridDim = {entry->getArgument(numArgs + 3),
                                  entry->getArgument(numArgs + 4),
                                  entry->getArgument(numArgs + 5)};
    // The body (prelude values it uses recomputed per block, rasterized
    // block indices).
    if (failed(cloneLaunchBody(b, launch, mapping, blockIdx, gridDim)))
      return failure();
    func::ReturnOp::create(b, loc);

    // Allocate every on-chip buffer on the stack up front (the block function
    // is the allocation scope), in the plain memory space.

    SmallVector<AllocOp> allocs;
    blockFn.walk([&](AllocOp a) { allocs.push_back(a); });
    for (AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      auto plain = MemRefType::get(type.getShape(), type.getElementType());
      OpBuilder ab(entry, entry->begin());
      auto alloca = memref::AllocaOp::create(ab, alloc.getLoc(), plain,
                                             ValueRange{}, ValueRange{},
                                             ab.getI64IntegerAttr(64));
      alloc.getResult().replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
    // Values derived from on-chip buffers (subviews, casts) drop the scope
    // too, so that every memref is in the default memory space.
    blockFn.walk([&](Operation *op) {
      for (Value result : op->getResults()) {
        auto type = dyn_cast<MemRefType>(result.getType());
        if (type && getMemoryScope(type))
          result.setType(MemRefType::get(type.getShape(),
                                         type.getElementType(),
                                         type.getLayout()));
      }
    });
    WalkResult leftover = blockFn.walk([&](Operation *op) {
      if (isa<TileDialect>(op->getDialect())) {
        op->emitError("tile op left after convert-tile-to-scf; run it first");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      return failure();
    kernel.erase();
    return success();
  }
};

} // namespace
