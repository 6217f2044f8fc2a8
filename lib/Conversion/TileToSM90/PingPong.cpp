//===- PingPong.cpp - two consumer warpgroups alternating whole units -----===//
//
// ws.pingpong (persistent, two consumer warpgroups; KernelBuilder.h): each
// launch tile is cut into TMx`unitN` units (unitN = min(TN, 16384/TM): 128
// accumulator registers per thread); the CTA's units j = 0, 1, ... (tile
// bid + (j / units per tile) * #CTAs) are loaded by the producer in order,
// one stage = A (TMx64) + B (64 x unitN), and consumer warpgroup c
// computes units c, c + 2, ... whole (nvgpu.warpgroup.mma with a TM-row
// accumulator). Main loops alternate through named barriers 2 and 3 (256
// threads: bar.sync by the waiter, bar.arrive by the signaller once its
// main loop is issued), so one warpgroup's wait_group 0 + epilogue from
// registers overlaps the other's main loop. empty[s] expects one arrival.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

Value PingPongKernel::localUnits() {
  // The CTA's tiles (t = bid, bid + ctas, ...), times units per tile.
  auto [bid, ctas] = linearCta();
  ctaId = bid;
  ctaCount = ctas;
  Value some = cmp(arith::CmpIPredicate::ult, bid, numTiles);
  Value left = arith::SubIOp::create(
      b, loc, arith::SelectOp::create(b, loc, some, numTiles, bid), bid);
  Value tiles = divu(add(left, arith::SubIOp::create(b, loc, ctaCount, cst(1))),
                     ctaCount);
  return mul(tiles, cst(m.tileN / ws.unitN));
}

Value PingPongKernel::mapUnit(Value j, IRMapping &mapping,
                              IRMapping &tileMapping) {
  int64_t subs = m.tileN / ws.unitN;
  Value t = add(ctaId, mul(divu(j, cst(subs)), ctaCount));
  tileMapping = mapping;
  mapTile(t, tileMapping);
  return mul(remu(j, cst(subs)), cst(ws.unitN));
}

void PingPongKernel::producer(IRMapping &mapping) {
  // Every unit of the CTA in order (both consumers' units interleaved), so
  // the stage ring's global iteration of unit j, step i is j * nIter + i.
  Value units = localUnits();
  auto loop = scf::ForOp::create(b, loc, cst(0), units, cst(1));
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  IRMapping tm;
  Value colOff = mapUnit(j, mapping, tm);
  Value aRow = tm.lookup(m.aRow), bCol = add(tm.lookup(m.bCol), colOff);
  Value g0 = mul(j, nIter);
  auto inner = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
  b.setInsertionPointToStart(inner.getBody());
  Value i = inner.getInductionVar();
  emitLoad(add(g0, i), i, aRow, bCol, batchValues(m.aBatch, tm),
           batchValues(m.bBatch, tm));
}

void PingPongKernel::consumer(IRMapping &mapping) {
  // Consumer warpgroup c (= wg) takes the CTA's units c, c + 2, ...
  // Main loops alternate: c waits on named barrier 2 + c before each unit
  // but its first (the other warpgroup's main loop of the previous unit is
  // issued) and, once its own main loop is issued, signals barrier 3 - c if
  // a next unit exists; so one warpgroup's epilogue overlaps the other's
  // main loop. Waits and signals pair up exactly (no dangling arrivals).
  // `wg` comes through shfl.sync from lane 0 (KernelBuilder::build, as
  // CUTLASS's canonical_warp_group_idx): ptxas knows it is warp-uniform;
  // with tid / 128 the unit loop (and its wgmmas) counts as divergent and
  // ptxas serializes the wgmmas (C7520).
  Value units = localUnits();
  Value waitId = toI32(add(wg, cst(2)));
  Value signalId = toI32(arith::SubIOp::create(b, loc, cst(3), wg));
  Value pair = i32(2 * 128);
  auto loop = scf::ForOp::create(b, loc, wg, units, cst(2));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  IRMapping tm;
  Value colOff = mapUnit(j, mapping, tm);
  Value g0 = mul(j, nIter);
  {
    auto ifWait = scf::IfOp::create(
        b, loc, TypeRange{}, cmp(arith::CmpIPredicate::ugt, j, cst(0)), false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifWait.getThenRegion().front());
    NVVM::BarrierOp::create(b, loc, TypeRange{}, waitId, pair,
                            /*reductionOp=*/{}, /*reductionPredicate=*/Value{});
  }
  Value acc = mainLoop(g0);
  {
    auto ifSignal = scf::IfOp::create(
        b, loc, TypeRange{},
        cmp(arith::CmpIPredicate::ult, add(j, cst(1)), units), false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifSignal.getThenRegion().front());
    NVVM::BarrierArriveOp::create(b, loc, signalId, pair);
  }
  finishTile(g0);
  epilogueFromRegisters(acc, tm, colOff, cst(0));
}
