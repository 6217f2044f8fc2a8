//===- WideTile.cpp - several launch blocks per CTA tile ------------------===//
//
// The coarse-tile schedule (KernelBuilder.h, WideTileKernel; metadata
// "coarsen"): the persistent cooperative kernel over CTA tiles of
// R x C launch blocks (GemmMatch.h, coarseTile: 128 x 256 for 128x128,
// 128x64 or 64x64 launch tiles; also 128 x 128 for 64x64, the variant
// _wide128), R along the grid axis whose blocks
// differ only in A's tile and C along the axis whose blocks differ only
// in B's. Why: the user's 128x128 tile reaches 0.65-0.86 of cuBLAS on the
// H200 while the same kernel with a 128x256 tile reaches 0.92-0.99, and a
// 64-row tile (one consumer warpgroup) 0.2-0.45 (docs/performance.md):
// more wgmma work per A and B tile load and per mbarrier round trip. The
// user's tile program stays the source of truth:
//
//   * each block gets the launch body's index computations for its own
//     block indices (its A row, B column, C origin and epilogue values),
//     so the result is exactly the launch's whatever the origins compute;
//   * blocks past the launch's grid (an extent that is not a multiple of
//     R or C) load (harmlessly) but store nothing;
//   * the loads, masking and tails are the persistent kernel's: TMA zero
//     fill past the tensors, bounds-checked stores of C.
//
// The runtime launches min(#SMs, coarse tiles) CTAs (grid "sms") when its
// cost model (docs/pipelines.md "Tile shape") prefers the coarse tiles.
//
// Launch tiles of more than 128 rows (splitTile, the variant _split) are
// the other way round: each block's 128-row parts are CTA tiles of their
// own (parts > 1, rows = 1; the coarse grid's row axis multiplied), A's
// rows and the stores offset by the part, for every launch (min(#SMs,
// blocks) CTAs; the kernel counts its tiles itself).
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
  // of coarse tiles: the grouped axes divided, rounded up.
  if (failed(PersistentKernel::mapLaunch(mapping)))
    return failure();
  coarseGrid = grid;
  const CoarseTile &c = ws.coarse;
  for (auto [axis, factor] : {std::pair{c.colAxis, c.cols},
                              std::pair{c.rowAxis, c.rows}})
    if (axis >= 0)
      coarseGrid[axis] =
          divu(add(grid[axis], cst(factor - 1)), cst(factor));
  // Split launch tiles: `parts` CTA tiles per block along rowAxis.
  if (c.parts > 1)
    coarseGrid[c.rowAxis] = mul(grid[c.rowAxis], cst(c.parts));
  Value total = coarseGrid[0];
  for (size_t d = 1; d < coarseGrid.size(); ++d)
    total = mul(total, coarseGrid[d]);
  numTiles = total;
  return success();
}

Value WideTileKernel::mapBlock(ArrayRef<Value> idx, int64_t r, int64_t c,
                               IRMapping &mapping, IRMapping &block) {
  // Block (r, c)'s indices, mapped to the launch body's block indices
  // directly: the launch's own rasterization is a permutation of its
  // grid, so every block is computed once either way.
  const CoarseTile &ct = ws.coarse;
  SmallVector<Value> blockIdx(idx.begin(), idx.end());
  Value inside;
  if (ct.parts > 1) {
    // The block of a split tile and its part (rows == 1).
    blockIdx[ct.rowAxis] = divu(idx[ct.rowAxis], cst(ct.parts));
    part_ = remu(idx[ct.rowAxis], cst(ct.parts));
  }
  for (auto [axis, factor, k] : {std::tuple{ct.rowAxis, ct.rows, r},
                                 std::tuple{ct.colAxis, ct.cols, c}}) {
    if (axis < 0 || (axis == ct.rowAxis && ct.parts > 1))
      continue;
    blockIdx[axis] = mul(idx[axis], cst(factor));
    if (k == 0)
      continue;
    blockIdx[axis] = add(blockIdx[axis], cst(k));
    Value ok = cmp(arith::CmpIPredicate::ult, blockIdx[axis], grid[axis]);
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
  }
  block = mapping;
  for (unsigned d = 0; d < blockIdx.size(); ++d)
    block.map(m.launch.getBlockIndices()[d], blockIdx[d]);
  // The body's index computations (the prelude values it uses are mapped
  // by mapLaunch).
  for (Operation &op : m.launch.getBodyBlock().without_terminator())
    if (op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
        !isa<AllocOp>(op))
      b.clone(op, block);
  mapBatchOfC(block);
  return inside;
}

void WideTileKernel::forEachCoarseTile(
    function_ref<void(ArrayRef<Value>, Value)> body) {
  auto [bid, ctas] = linearCta();
  auto loop =
      scf::ForOp::create(b, loc, bid, numTiles, ctas, ValueRange{cst(0)});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  // t -> coarse-grid indices (x fastest), rasterized over the coarse grid
  // like the launch (a permutation: only the order of the tiles changes).
  SmallVector<Value> idx =
      delinearizeBlock(b, loc, loop.getInductionVar(), coarseGrid);
  if (auto raster = m.launch.getRasterAttr(); raster && idx.size() == 2)
    std::tie(idx[0], idx[1]) = rasterize(b, loc, raster, idx[0], idx[1],
                                         coarseGrid[0], coarseGrid[1]);
  Value g0 = loop.getRegionIterArg(0);
  body(idx, g0);
  scf::YieldOp::create(b, loc, add(g0, nIter));
}

Value WideTileKernel::loadColumn(int64_t box, Value) {
  // Box h (64 columns) belongs to block column h * 64 / TN.
  int64_t col = box * 64;
  return add(bCols_[col / m.tileN], cst(col % m.tileN));
}

Value WideTileKernel::loadRow(int64_t box, Value) { return aRows_[box]; }

void WideTileKernel::producer(IRMapping &mapping) {
  forEachCoarseTile([&](ArrayRef<Value> idx, Value g0) {
    // A's rows from the first block of each block row, B's columns from
    // the first block row; the batches are every block's (coarseTile).
    IRMapping first;
    mapBlock(idx, 0, 0, mapping, first);
    aRows_ = {first.lookup(m.aRow)};
    if (ws.coarse.parts > 1)
      aRows_[0] = add(aRows_[0], mul(part_, cst(aRows())));
    bCols_ = {first.lookup(m.bCol)};
    for (int64_t r = 1; r < ws.coarse.rows; ++r) {
      IRMapping block;
      mapBlock(idx, r, 0, mapping, block);
      aRows_.push_back(block.lookup(m.aRow));
    }
    for (int64_t c = 1; c < ws.coarse.cols; ++c) {
      IRMapping block;
      mapBlock(idx, 0, c, mapping, block);
      bCols_.push_back(block.lookup(m.bCol));
    }
    auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    emitLoad(add(g0, i), i, aRows_[0], bCols_[0],
             batchValues(m.aBatch, first), batchValues(m.bBatch, first));
  });
}

void WideTileKernel::consumer(IRMapping &mapping) {
  forEachCoarseTile([&](ArrayRef<Value> idx, Value g0) {
    Value acc = mainLoop(g0);
    finishTile(g0);
    // The accumulator's values in column order of 8-column groups (4 per
    // group): block column c's are the c-th C-th of them.
    SmallVector<Value> vals = accumulatorValues(acc, 1, loadN() / 2)[0];
    const int64_t per = int64_t(vals.size()) / ws.coarse.cols;
    // The stores of block row r (this warpgroup's rows: all of them for
    // one block row, else the warpgroup's own block row).
    auto storeRow = [&](int64_t r) {
      for (int64_t c = 0; c < ws.coarse.cols; ++c) {
        IRMapping block;
        Value inside = mapBlock(idx, r, c, mapping, block);
        ArrayRef<Value> part = ArrayRef<Value>(vals).slice(c * per, per);
        std::optional<OpBuilder::InsertionGuard> g;
        if (inside) {
          g.emplace(b);
          auto ifInside =
              scf::IfOp::create(b, loc, TypeRange{}, inside, false);
          b.setInsertionPointToStart(&ifInside.getThenRegion().front());
        }
        storeValues(part, block, c * m.tileN / 64);
      }
    };
    if (ws.coarse.rows == 1) {
      storeRow(0);
      return;
    }
    // One warpgroup per block row (64-row launch tiles): uniform within
    // each warpgroup, whose named barriers are its own.
    assert(ws.coarse.rows == ws.consumers && m.tileM == 64 &&
           "one consumer warpgroup per block row");
    auto ifRow = scf::IfOp::create(
        b, loc, TypeRange{}, cmp(arith::CmpIPredicate::eq, wg, cst(0)), true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifRow.getThenRegion().front());
    storeRow(0);
    b.setInsertionPointToStart(&ifRow.getElseRegion().front());
    storeRow(1);
  });
  afterLastTile();
}
