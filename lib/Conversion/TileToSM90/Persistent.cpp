//===- Persistent.cpp - one CTA per SM looping over the output tiles ------===//
//
// The persistent cooperative schedule (KernelBuilder.h; metadata "grid":
// "sms"): producer and consumers loop over the launch's tiles (t = linear
// CTA id, step = number of CTAs; t -> block indices with the launch's
// rasterization), carrying the global iteration g0 so that stages and
// mbarrier parities continue across tiles; consumers release the tile's
// last stage after wait_group 0 and store the accumulators straight from
// registers (no staging tile, so the producer refills the stages for the
// next tile meanwhile), or with ws.tmaStore through TMA stores
// (TmaStore.cpp). The base of PingPongKernel, SplitKKernel and
// WideTileKernel.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tile/Conversion/LaunchUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <array>

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

LogicalResult PersistentKernel::mapLaunch(IRMapping &mapping) {
  // The values the launch body and the grid take from the prelude, once;
  // the block indices and index computations per tile (mapTile).
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(m.launch.getBody(), captured);
  for (Value v : m.launch.getGridSizes())
    captured.insert(v);
  for (Value v : captured)
    if (failed(cloneComputation(b, v, mapping, m.launch)))
      return failure();
  for (Value v : m.launch.getGridSizes())
    grid.push_back(mapping.lookup(v));
  Value total = grid[0];
  for (size_t d = 1; d < grid.size(); ++d)
    total = arith::MulIOp::create(b, loc, total, grid[d]);
  numTiles = total;
  return success();
}

void PersistentKernel::mapTile(Value t, IRMapping &tileMapping) {
  SmallVector<Value> idx = delinearizeBlock(b, loc, t, grid);
  // Every value the body takes from outside is mapped already (mapLaunch).
  LogicalResult cloned = cloneLaunchBody(
      b, m.launch, tileMapping, idx, grid, [](Operation &op) {
        return op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
               !isa<AllocOp>(op);
      });
  assert(succeeded(cloned) && "prelude values are mapped by mapLaunch");
  (void)cloned;
  mapBatchOfC(tileMapping);
}

std::pair<Value, Value> PersistentKernel::linearCta() {
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gdx = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value gdy = gpu::GridDimOp::create(b, loc, gpu::Dimension::y);
  Value gdz = gpu::GridDimOp::create(b, loc, gpu::Dimension::z);
  bid = add(bid, mul(gdx, add(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
                              mul(gdy, gpu::BlockIdOp::create(
                                           b, loc, gpu::Dimension::z)))));
  Value ctas = mul(gdx, mul(gdy, gdz));
  return {bid, ctas};
}

void PersistentKernel::forEachTile(
    IRMapping &mapping, function_ref<void(IRMapping &, Value)> body) {
  auto [bid, ctas] = linearCta();
  auto loop =
      scf::ForOp::create(b, loc, bid, numTiles, ctas, ValueRange{cst(0)});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  IRMapping tileMapping = mapping;
  mapTile(loop.getInductionVar(), tileMapping);
  Value g0 = loop.getRegionIterArg(0);
  body(tileMapping, g0);
  scf::YieldOp::create(b, loc, add(g0, nIter));
}

void PersistentKernel::producer(IRMapping &mapping) {
  forEachTile(mapping, [&](IRMapping &tm, Value g0) {
    Value aRow = tm.lookup(m.aRow), bCol = tm.lookup(m.bCol);
    auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    emitLoad(add(g0, i), i, aRow, bCol, batchValues(m.aBatch, tm),
             batchValues(m.bBatch, tm));
  });
}

void PersistentKernel::consumer(IRMapping &mapping) {
  forEachTile(mapping, [&](IRMapping &tm, Value g0) {
    Value acc = mainLoop(g0);
    finishTile(g0);
    tileEpilogue(acc, tm);
  });
  afterLastTile();
}

void PersistentKernel::finishTile(Value g0) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  // The tile's last stage is free now (the in-loop releases stop one
  // short); the producer may be filling the others for the next tile.
  Value release = arith::AndIOp::create(
      b, loc, signaller, cmp(arith::CmpIPredicate::ugt, nIter, cst(0)));
  auto ifRelease = scf::IfOp::create(b, loc, TypeRange{}, release, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifRelease.getThenRegion().front());
  Value last = arith::SubIOp::create(b, loc, add(g0, nIter), cst(1));
  nvgpu::MBarrierArriveOp::create(b, loc, empty, remu(last, cst(ws.stages)));
}

void PersistentKernel::tileEpilogue(Value acc, IRMapping &tileMapping) {
  storeValues(accumulatorValues(acc, 1, loadN() / 2)[0], tileMapping, 0);
}

void PersistentKernel::storeValues(ArrayRef<Value> vals, IRMapping &mapping,
                                   int64_t firstChunk) {
  if (!ws.tmaStore) {
    epilogueFromValues({SmallVector<Value>(vals.begin(), vals.end())},
                       mapping, cst(0), rowInTile());
    return;
  }
  // The elementwise epilogue once, before the two store paths.
  SmallVector<Value> out(vals.begin(), vals.end());
  applyEpilogueToBlock(out, mapping, rowInTile(), cst(0));
  // Uniform over the CTA: every thread of a warpgroup reaches the
  // TMA-store path's named barriers.
  auto ifMap = scf::IfOp::create(b, loc, TypeRange{}, cMapPresent, true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifMap.getThenRegion().front());
  stagedStoreValues(out, mapping, firstChunk, /*viaTma=*/true);
  // No map of C for this launch (e.g. its pitch is not a multiple of 16
  // bytes): the same staging, then coalesced element stores. Measured on
  // the H200 (docs/performance.md): stores straight from the accumulator
  // layout, element by element for an odd N, took 8.0 us for a 128x131
  // launch against 3.7 us for 128x136 through TMA.
  b.setInsertionPointToStart(&ifMap.getElseRegion().front());
  stagedStoreValues(out, mapping, firstChunk, /*viaTma=*/false);
}

void PersistentKernel::applyEpilogueToBlock(MutableArrayRef<Value> vals,
                                            IRMapping &mapping, Value rowOff,
                                            Value colOff) {
  if (m.epilogue.empty())
    return;
  // Each accumulator register's row and column relative to the tile
  // origin (the layout of epilogueFromValues).
  auto [rowRel, colRel] = accumulatorOrigin(rowOff, colOff);
  for (int64_t j = 0; j < int64_t(vals.size()) / 4; ++j)
    for (int64_t e = 0; e < 4; ++e) {
      Value r = add(rowRel, cst(8 * (e / 2)));
      Value c = add(colRel, cst(8 * j + e % 2));
      vals[4 * j + e] = applyEpilogue(mapping, vals[4 * j + e], r, c);
    }
}

std::pair<Value, Value> PersistentKernel::accumulatorOrigin(Value rowBase,
                                                            Value colBase) {
  Value lane = remu(tid, cst(32));
  Value warp = remu(divu(tid, cst(32)), cst(4));
  Value row = add(rowBase, add(mul(warp, cst(16)), divu(lane, cst(4))));
  Value col = add(colBase, mul(remu(lane, cst(4)), cst(2)));
  return {row, col};
}

SmallVector<SmallVector<Value>>
PersistentKernel::accumulatorValues(Value acc, int64_t blocks,
                                    int64_t perBlock) {
  auto f32 = b.getF32Type();
  auto inner = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(perBlock, f32));
  auto outer = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(blocks, inner));
  Value whole =
      UnrealizedConversionCastOp::create(b, loc, outer, acc).getResult(0);
  SmallVector<SmallVector<Value>> blockVals;
  for (int64_t q = 0; q < blocks; ++q) {
    Value s = LLVM::ExtractValueOp::create(b, loc, whole, ArrayRef<int64_t>{q});
    SmallVector<Value> vals;
    for (int64_t i = 0; i < perBlock; ++i)
      vals.push_back(
          LLVM::ExtractValueOp::create(b, loc, s, ArrayRef<int64_t>{i}));
    blockVals.push_back(std::move(vals));
  }
  return blockVals;
}

void PersistentKernel::epilogueFromRegisters(Value acc, IRMapping &mapping,
                                             Value colOff, Value rowOff) {
  epilogueFromValues(accumulatorValues(acc, accRows() / 64, loadN() / 2),
                     mapping, colOff, rowOff);
}

void PersistentKernel::epilogueFromValues(
    SmallVector<SmallVector<Value>> blockVals, IRMapping &mapping,
    Value colOff, Value rowOff) {
  // wgmma's accumulator layout (m64nNk16, f32): in each consumer
  // warpgroup, warp w (of 4) and lane l hold, for every 8-column group j,
  // elements 4j, 4j+1 at row 16w + l/4, columns 8j + 2(l%4) + {0, 1}, and
  // 4j+2, 4j+3 eight rows below. Stored directly (pairs of C's element
  // type): no shared memory, so the producer keeps refilling the stages.
  // An accumulator of 64q rows is q such blocks (one inner struct each),
  // block q at rows 64q.. of the warpgroup's rows `rowOff`...
  // Two values per thread per 8 columns of each 64-row block.
  int64_t width = 2 * int64_t(blockVals.front().size());
  int64_t blocks = accRows() / 64;
  auto f32 = b.getF32Type();
  assert(blockVals.size() == size_t(blocks) && "one list per 64-row block");

  Value C = mapping.lookup(m.C);
  Value cRow = add(mapping.lookup(m.cRow), rowOff);
  Value cCol = add(mapping.lookup(m.cCol), colOff);
  Value M = memref::DimOp::create(b, loc, C, 0);
  Value N = memref::DimOp::create(b, loc, C, 1);
  auto [row0, col0] = accumulatorOrigin(cRow, cCol);
  int64_t outBytes = m.outType.getIntOrFloatBitWidth() / 8;
  Value cBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, C);
  // Pair stores need the base and every row start aligned to 2 elements
  // (N even) and the tile's columns inside N.
  Value even = [&](Value v) {
    return cmp(arith::CmpIPredicate::eq, remu(v, cst(2)), cst(0));
  }(N);
  Value fast = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc,
          cmp(arith::CmpIPredicate::eq, remu(cBase, cst(2 * outBytes)), cst(0)),
          even),
      arith::AndIOp::create(
          b, loc, cmp(arith::CmpIPredicate::eq, remu(cCol, cst(2)), cst(0)),
          cmp(arith::CmpIPredicate::ule, add(cCol, cst(width)), N)));
  for (int64_t q = 0; q < blocks; ++q)
    applyEpilogueToBlock(blockVals[q], mapping,
                         q == 0 ? rowOff : add(rowOff, cst(64 * q)), colOff);
  auto v2f32 = VectorType::get({2}, f32);
  auto v2out = VectorType::get({2}, m.outType);
  SmallVector<std::array<Value, 2>> blockRows;
  for (int64_t q = 0; q < blocks; ++q) {
    Value rowQ = q == 0 ? row0 : add(row0, cst(64 * q));
    blockRows.push_back({rowQ, add(rowQ, cst(8))});
  }
  auto ifFast = scf::IfOp::create(b, loc, TypeRange{}, fast, true);
  OpBuilder::InsertionGuard g(b);
  for (int64_t q = 0; q < blocks; ++q) {
    ArrayRef<Value> vals = blockVals[q];
    std::array<Value, 2> rows = blockRows[q];
    for (int64_t half = 0; half < 2; ++half) {
      b.setInsertionPoint(ifFast.getThenRegion().front().getTerminator());
      Value row = rows[half];
      auto ifRow = scf::IfOp::create(
          b, loc, TypeRange{}, cmp(arith::CmpIPredicate::ult, row, M), false);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifRow.getThenRegion().front());
        for (int64_t j = 0; j < width / 8; ++j) {
          Value v = vector::FromElementsOp::create(
              b, loc, v2f32,
              ValueRange{vals[4 * j + 2 * half], vals[4 * j + 2 * half + 1]});
          if (!m.outType.isF32())
            v = arith::TruncFOp::create(b, loc, v2out, v);
          auto st = vector::StoreOp::create(
              b, loc, v, C, ValueRange{row, add(col0, cst(8 * j))});
          st.setAlignment(2 * outBytes);
        }
      }
      // Slow path: element by element, both bounds checked, as predicated
      // stores (predicatedStore).
      b.setInsertionPoint(ifFast.getElseRegion().front().getTerminator());
      Value rowOk = cmp(arith::CmpIPredicate::ult, row, M);
      for (int64_t j = 0; j < width / 8; ++j)
        for (int64_t e = 0; e < 2; ++e) {
          Value col = add(col0, cst(8 * j + e));
          Value ok = arith::AndIOp::create(
              b, loc, rowOk, cmp(arith::CmpIPredicate::ult, col, N));
          Value x = vals[4 * j + 2 * half + e];
          if (!m.outType.isF32())
            x = arith::TruncFOp::create(b, loc, m.outType, x);
          predicatedStore(C, row, col, x, ok);
        }
    }
  }
}
