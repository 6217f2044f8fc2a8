//===- TileLaunchToCPU.cpp - outline a launch into a block function -------===//
//
// `func @k(args) { prelude; tile.launch blocks(...) in (grid) {body} }`
// becomes `func @k__tile_block(args, bx, by, bz, gx, gy, gz)` running one
// block. The grid is computed by the host side (runtime or native wrapper)
// from the metadata, so the prelude is only kept where the body uses it.
//
//===----------------------------------------------------------------------===//

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

/// Clones into `b` the pure computation of `v` (from kernel arguments),
/// recording it in `mapping`. Fails on anything with side effects.
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

/// Remaps (bx, by) of a 2-D grid so that consecutive linear block ids walk
/// panels of `panel` grid columns (row order) or rows (column order). The map
/// is a permutation of the grid: results do not depend on it.
std::pair<Value, Value> rasterize(OpBuilder &b, Location loc,
                                  RasterizationAttr raster, Value bx, Value by,
                                  Value gx, Value gy) {
  bool rowOrder = raster.getOrder() == RasterOrder::row;
  // In column order swap the roles of the two grid dims.
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

struct ConvertTileLaunchToCPUPass
    : public tile::impl::ConvertTileLaunchToCPUBase<
          ConvertTileLaunchToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(TileDialect::kKernelAttrName))
        kernels.push_back(func);
    for (func::FuncOp kernel : kernels)
      if (failed(outline(kernel)))
        return signalPassFailure();
  }

  LogicalResult outline(func::FuncOp kernel) {
    SmallVector<LaunchOp> launches;
    kernel.walk([&](LaunchOp l) { launches.push_back(l); });
    if (launches.size() != 1 || launches[0]->getParentOp() != kernel)
      return kernel.emitError("expected exactly one top-level tile.launch");
    LaunchOp launch = launches[0];
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
    if (auto raster = launch.getRasterAttr()) {
      auto [bx, by] = rasterize(b, loc, raster, blockIdx[0], blockIdx[1],
                                gridDim[0], gridDim[1]);
      blockIdx[0] = bx;
      blockIdx[1] = by;
    }

    // Values the body takes from the prelude are recomputed per block.
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(launch.getBody(), captured);
    for (Value v : captured)
      if (failed(cloneComputation(b, v, mapping, launch)))
        return failure();

    // Allocate every on-chip buffer on the stack up front (the block function
    // is the allocation scope), in the plain memory space.
    for (unsigned d = 0; d < launch.getGridRank(); ++d)
      mapping.map(launch.getBlockIndices()[d], blockIdx[d]);
    for (Operation &op : launch.getBodyBlock().without_terminator())
      b.clone(op, mapping);
    func::ReturnOp::create(b, loc);

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
