//===- SplitK.cpp - K-slices of one output tile, reduced in order ---------===//
//
// The split-K schedule (KernelBuilder.h, SplitKKernel; metadata "split_k"):
// for grids smaller than the SM count the runtime launches grid (tiles, S,
// 1), CTA (t, s) runs the hardware K iterations [s*n/S, (s+1)*n/S) of tile
// t and the slices reduce serially, in slice order, through an f32 partial
// tile in the workspace:
//
//   wait    (s > 0)     thread 0: spin until ld.acquire.gpu sem[t] == s;
//                       consumer barrier; acc += partial (each thread its
//                       own values: the layout is the accumulator's)
//   publish (s < S-1)   partial = acc; consumer barrier; thread 0: fence
//                       release (gpu), sem[t] = s + 1
//   finish  (s == S-1)  the launch's epilogue on acc, C from registers;
//                       sem[t] = 0 for the next launch
//
// Serial rather than atomics: the sum is p0 + p1 + ... in that order
// whatever the timing (deterministic, bit-identical run to run), the
// workspace is one partial per tile (not per slice), and only the last
// slice runs the epilogue. The cost is the wait chain: slice s publishes
// right after its main loop, so the chain adds about S partial round trips
// through L2 (128 KiB per 128x256 tile) to one slice's main loop.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

int64_t SplitKKernel::workspaceBytes() const {
  return semaphoreBytes() + kSplitKMaxTiles * m.tileM * m.tileN * 4;
}

LogicalResult SplitKKernel::mapLaunch(IRMapping &mapping) {
  // The launch's grid and prelude (as the persistent kernel); the tile is
  // blockIdx.x, the slice blockIdx.y of gridDim.y.
  if (failed(PersistentKernel::mapLaunch(mapping)))
    return failure();
  tileId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  slice = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  slices = gpu::GridDimOp::create(b, loc, gpu::Dimension::y);
  return success();
}

Value SplitKKernel::ctaIterations(Value total) {
  // Balanced: slice s gets [s*n/S, (s+1)*n/S); sizes differ by at most 1.
  kBegin = divu(mul(slice, total), slices);
  Value kEnd = divu(mul(add(slice, cst(1)), total), slices);
  return arith::SubIOp::create(b, loc, kEnd, kBegin);
}

void SplitKKernel::producer(IRMapping &mapping) {
  IRMapping tm = mapping;
  mapTile(tileId, tm);
  Value aRow = tm.lookup(m.aRow), bCol = tm.lookup(m.bCol);
  auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value i = loop.getInductionVar();
  emitLoad(i, add(kBegin, i), aRow, bCol);
}

void SplitKKernel::consumer(IRMapping &mapping) {
  IRMapping tm = mapping;
  mapTile(tileId, tm);
  Value acc = mainLoop(cst(0));
  finishTile(cst(0));

  auto f32 = b.getF32Type();
  auto i32T = b.getI32Type();
  auto ptrT = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Value> vals = accumulatorValues(acc, 1, loadN() / 2)[0];
  int64_t consumerThreads = ws.consumers * 128;
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  // This tile's semaphore and this thread's first partial value.
  Value sem = LLVM::GEPOp::create(b, loc, ptrT, i32T, workspace,
                                  ValueRange{toI64(tileId)});
  Value partialIdx = add(cst(semaphoreBytes() / 4),
                         add(mul(tileId, cst(m.tileM * m.tileN)), tid));
  Value partial = LLVM::GEPOp::create(b, loc, ptrT, f32, workspace,
                                      ValueRange{toI64(partialIdx)});
  auto valuePtr = [&](size_t j) {
    return LLVM::GEPOp::create(
        b, loc, ptrT, f32, partial,
        ArrayRef<LLVM::GEPArg>{int32_t(j * consumerThreads)});
  };
  Value first = cmp(arith::CmpIPredicate::eq, tid, cst(0));
  Value sliceI32 = toI32(slice);

  // wait (s > 0): acc += the partial of slices 0..s-1.
  SmallVector<Type> types(vals.size(), f32);
  auto ifPrev = scf::IfOp::create(
      b, loc, types, cmp(arith::CmpIPredicate::ugt, slice, cst(0)), true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifPrev.getThenRegion().front());
    auto ifFirst = scf::IfOp::create(b, loc, TypeRange{}, first, false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
      auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
      b.createBlock(&spin.getBefore());
      Value seen = LLVM::LoadOp::create(b, loc, i32T, sem, /*alignment=*/4,
                                        /*isVolatile=*/false,
                                        /*isNonTemporal=*/false,
                                        /*isInvariant=*/false,
                                        /*isInvariantGroup=*/false,
                                        LLVM::AtomicOrdering::acquire,
                                        "device");
      Value notYet = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           seen, sliceI32);
      scf::ConditionOp::create(b, loc, notYet, ValueRange{});
      b.createBlock(&spin.getAfter());
      scf::YieldOp::create(b, loc);
    }
    // Thread 0's acquire, then the barrier: every consumer thread's reads
    // below are ordered after slice s-1's release.
    namedBarrier(1, consumerThreads);
    SmallVector<Value> sums;
    for (auto [j, v] : llvm::enumerate(vals)) {
      Value p = LLVM::LoadOp::create(b, loc, f32, valuePtr(j), 4);
      sums.push_back(arith::AddFOp::create(b, loc, p, v));
    }
    scf::YieldOp::create(b, loc, sums);
    b.setInsertionPointToStart(&ifPrev.getElseRegion().front());
    scf::YieldOp::create(b, loc, vals);
  }
  SmallVector<Value> total(ifPrev.getResults());

  Value last = cmp(arith::CmpIPredicate::eq, add(slice, cst(1)), slices);
  auto ifLast = scf::IfOp::create(b, loc, TypeRange{}, last, true);
  OpBuilder::InsertionGuard g(b);
  // finish (s == S-1): the epilogue from the summed registers; the
  // semaphore back to 0 (no other slice reads it any more in this launch).
  b.setInsertionPointToStart(&ifLast.getThenRegion().front());
  epilogueFromValues({total}, tm, cst(0), mul(wg, cst(64)));
  {
    OpBuilder::InsertionGuard g2(b);
    auto ifFirst = scf::IfOp::create(b, loc, TypeRange{}, first, false);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    LLVM::StoreOp::create(b, loc, i32(0), sem, 4);
  }
  // publish (s < S-1): the running sum, then sem[t] = s + 1 released at
  // GPU scope after every consumer thread's stores (the barrier).
  b.setInsertionPointToStart(&ifLast.getElseRegion().front());
  for (auto [j, v] : llvm::enumerate(total))
    LLVM::StoreOp::create(b, loc, v, valuePtr(j), 4);
  namedBarrier(1, consumerThreads);
  auto ifFirst = scf::IfOp::create(b, loc, TypeRange{}, first, false);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::release, "device");
  LLVM::StoreOp::create(b, loc, toI32(add(slice, cst(1))), sem, 4, false,
                        false, false, LLVM::AtomicOrdering::monotonic,
                        "device");
}
