//===- WideTile.cpp - two launch blocks per CTA tile ----------------------===//
//
// The wide-tile schedule (KernelBuilder.h, WideTileKernel; metadata
// "coarsen"): the persistent cooperative kernel over CTA tiles of TM x 2TN,
// launch blocks (2x, y) and (2x + 1, y) along the grid axis whose blocks
// share A's tile. Why: the user's 128x128 tile reaches 0.65-0.86 of cuBLAS
// on the H200 while the same kernel with a 128x256 tile reaches 0.92-0.99
// (docs/performance.md): twice the wgmma work per A tile load and per
// mbarrier round trip. The user's tile program stays the source of truth:
//
//   * each half gets the launch body's index computations for its own
//     block (its B column, C origin and epilogue values), so the result is
//     exactly the launch's whatever the origins compute;
//   * a second half past the launch's grid (an odd grid extent) loads
//     (harmlessly) but stores nothing;
//   * the loads, masking and tails are the persistent kernel's: TMA zero
//     fill past the tensors, bounds-checked stores of C.
//
// The runtime launches min(#SMs, wide tiles) CTAs (grid "sms") when its
// cost model (docs/pipelines.md "Tile shape") prefers the wide tiles.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tile/Conversion/LaunchUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

LogicalResult WideTileKernel::mapLaunch(IRMapping &mapping) {
  // The prelude and the launch's grid (PersistentKernel), then the grid
  // of wide tiles: `axis` halved, rounded up.
  if (failed(PersistentKernel::mapLaunch(mapping)))
    return failure();
  wideGrid = grid;
  wideGrid[axis] = divu(add(grid[axis], cst(1)), cst(2));
  Value total = wideGrid[0];
  for (size_t d = 1; d < wideGrid.size(); ++d)
    total = mul(total, wideGrid[d]);
  numTiles = total;
  return success();
}

Value WideTileKernel::mapHalves(Value t, IRMapping &mapping, IRMapping &lo,
                                IRMapping &hi) {
  // t -> wide-grid indices (x fastest), rasterized over the wide grid like
  // the launch (a permutation: only the order of the tiles changes).
  SmallVector<Value> idx = delinearizeBlock(b, loc, t, wideGrid);
  if (auto raster = m.launch.getRasterAttr(); raster && idx.size() == 2)
    std::tie(idx[0], idx[1]) =
        rasterize(b, loc, raster, idx[0], idx[1], wideGrid[0], wideGrid[1]);
  // The halves' blocks, each mapped to the launch body's block indices
  // directly: the launch's own rasterization is a permutation of its grid,
  // so every block is computed once either way.
  Value first = mul(idx[axis], cst(2));
  Value second = add(first, cst(1));
  auto mapBlock = [&](Value blockOnAxis, IRMapping &half) {
    half = mapping;
    for (unsigned d = 0; d < idx.size(); ++d)
      half.map(m.launch.getBlockIndices()[d],
               d == axis ? blockOnAxis : idx[d]);
    // The body's index computations (the prelude values it uses are
    // mapped by mapLaunch).
    for (Operation &op : m.launch.getBodyBlock().without_terminator())
      if (op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
          !isa<AllocOp>(op))
        b.clone(op, half);
    mapBatchOfC(half);
  };
  mapBlock(first, lo);
  mapBlock(second, hi);
  return cmp(arith::CmpIPredicate::ult, second, grid[axis]);
}

void WideTileKernel::forEachWideTile(
    IRMapping &mapping,
    function_ref<void(IRMapping &, IRMapping &, Value, Value)> body) {
  auto [bid, ctas] = linearCta();
  auto loop =
      scf::ForOp::create(b, loc, bid, numTiles, ctas, ValueRange{cst(0)});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  IRMapping lo, hi;
  Value hiValid = mapHalves(loop.getInductionVar(), mapping, lo, hi);
  Value g0 = loop.getRegionIterArg(0);
  body(lo, hi, hiValid, g0);
  scf::YieldOp::create(b, loc, add(g0, nIter));
}

Value WideTileKernel::loadColumn(int64_t box, Value bCol) {
  // Boxes of the first half from its column, the others from the second
  // half's (bColHi, set by the producer for the current tile).
  int64_t col = box * 64;
  if (col < m.tileN)
    return add(bCol, cst(col));
  return add(bColHi, cst(col - m.tileN));
}

void WideTileKernel::producer(IRMapping &mapping) {
  forEachWideTile(mapping, [&](IRMapping &lo, IRMapping &hi, Value, Value g0) {
    // A's row and the batches are the same for both halves (wideTileAxis).
    Value aRow = lo.lookup(m.aRow), bCol = lo.lookup(m.bCol);
    bColHi = hi.lookup(m.bCol);
    auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    emitLoad(add(g0, i), i, aRow, bCol, batchValues(m.aBatch, lo),
             batchValues(m.bBatch, lo));
  });
}

void WideTileKernel::consumer(IRMapping &mapping) {
  forEachWideTile(
      mapping, [&](IRMapping &lo, IRMapping &hi, Value hiValid, Value g0) {
        Value acc = mainLoop(g0);
        finishTile(g0);
        // The accumulator's values in column order of 8-column groups
        // (4 per group): the first TN / 2 are the first half's.
        SmallVector<Value> vals = accumulatorValues(acc, 1, m.tileN)[0];
        size_t half = vals.size() / 2;
        SmallVector<Value> first(vals.begin(), vals.begin() + half);
        SmallVector<Value> second(vals.begin() + half, vals.end());
        storeValues(first, lo, 0);
        auto ifSecond =
            scf::IfOp::create(b, loc, TypeRange{}, hiValid, false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&ifSecond.getThenRegion().front());
        storeValues(second, hi, m.tileN / 64);
      });
  afterLastTile();
}
