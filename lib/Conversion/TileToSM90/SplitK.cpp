//===- SplitK.cpp - K-slices of one output tile, reduced as a tree --------===//
//
// The split-K schedule (KernelBuilder.h, SplitKKernel; metadata "split_k"):
// for grids smaller than the SM count the runtime launches grid (tiles, S,
// 1); CTA (t, s) runs the hardware K iterations [s*n/S, (s+1)*n/S) of tile
// t and the S partial tiles are summed by a binary tree whose shape depends
// on S only, through the launch's workspace (kSplitKCounters u32 arrival
// counters, then tiles x S f32 partial slots):
//
//   level l (h = 2^l; slice s holds the sum of slices [r, r + h), r = s
//   with its low l bits cleared): its sibling [r ^ h, ...) exists iff the
//   parent's midpoint m = (s & ~(2h-1)) + h is < S; then
//     store   every consumer thread its values of rows < M and columns
//             < N into slot (t, r)
//     arrive  consumer barrier; thread 0: fence.acq_rel.gpu, atom.add
//             counter (t, m), fence.acq_rel.gpu (release and acquire);
//             the first of the two children to arrive leaves (its partial
//             is in the slot), the second resets the counter to 0 and (the
//             decision reaches every consumer thread through shared memory
//             and a consumer barrier)
//     combine adds the sibling's slot (own + sibling = left + right:
//             IEEE addition commutes exactly; rows past M read nothing)
//   without a sibling the sum goes up unchanged. The one CTA left after
//   the last level holds p_0 + ... + p_{S-1} with a fixed association
//   (deterministic, bit-identical run to run whatever the timing) and
//   runs the launch's epilogue on it.
//
// No CTA ever waits for another (no spinning, so any S and any grid is
// safe, resident or not): whoever arrives second at a node does its work.
// Why a tree rather than "the last slice to arrive sums all S partials":
// one CTA reads from L2 at roughly 64 bytes per clock (~120 GB/s), so the
// last arriver of S = 33 slices of a 128x128 tile reads 32 x 64 KiB = 2 MiB
// (~17 us, more than the slice's own main loop of ~31 K tiles, ~9 us); the
// tree's critical path is ceil(log2 S) = 6 levels of one 64 KiB store and
// one 64 KiB load (~1.1 us each, ~7 us), and for S = 2 both are the same.
// The serial chain it replaces (slice s waited for slice s-1) paid S - 1 of
// those round trips (~35 us at S = 33). The runtime's cost model
// (splitKSlices) prices a level at 12 K tiles.
//
// Every counter a launch uses is incremented exactly twice and reset by
// the second arrival, so a completed launch leaves them all 0 (the
// runtime zeroes the workspace once, when it allocates it); the slots are
// always written before they are read.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

int64_t SplitKKernel::workspaceSliceBytes() const { return partialBytes(); }

LogicalResult SplitKKernel::mapLaunch(IRMapping &mapping) {
  // The launch's grid and prelude (as the persistent kernel); the tile is
  // blockIdx.x, the slice blockIdx.y of gridDim.y (the counters' fixed
  // place makes the tile count itself unneeded).
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
  emitLoad(i, add(kBegin, i), aRow, bCol, batchValues(m.aBatch, tm),
           batchValues(m.bBatch, tm));
}

void SplitKKernel::consumer(IRMapping &mapping) {
  IRMapping tm = mapping;
  mapTile(tileId, tm);
  Value acc = mainLoop(cst(0));
  finishTile(cst(0));

  SmallVector<Value> vals = accumulatorValues(acc, 1, loadN() / 2)[0];
  const int64_t n = int64_t(vals.size());
  // Each thread's values go to the slot as vectors of `vec` (16-byte
  // accesses when the count allows).
  const int64_t vec = n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
  // Only rows of C that exist go through the slots: a thread whose
  // accumulator rows (row0 and row0 + 8 of the accumulator layout) are
  // both past M neither stores nor reads partial sums, so a GEMM of 1 or
  // 64 rows moves 1/32 or half of the 128-row tile's partials (the
  // skinny GEMMs split-K is for; the root's epilogue stores rows < M
  // only).
  // Likewise columns: vector j holds the 8-column group j (columns col0 +
  // 8j, +1 and the same 8 rows below), live when its first column < N
  // (an N = 64 GEMM's 128-column tile moves half of its partials).
  Value row0, col0; // captured below (a structured binding cannot be)
  std::tie(row0, col0) = accumulatorOrigin(
      add(tm.lookup(m.cRow), mul(wg, cst(64))), tm.lookup(m.cCol));
  Value rowsLive = cmp(arith::CmpIPredicate::ult, row0,
                       memref::DimOp::create(b, loc, tm.lookup(m.C), 0));
  Value cols = memref::DimOp::create(b, loc, tm.lookup(m.C), 1);
  auto vectorLive = [&](int64_t j) -> Value {
    if (vec != 4) // not one vector per 8-column group: rows only
      return rowsLive;
    return arith::AndIOp::create(
               b, loc, rowsLive,
               cmp(arith::CmpIPredicate::ult, add(col0, cst(8 * j)), cols))
        .getResult();
  };
  auto [root, total] = reduceSlices(vals, vec, vectorLive);

  // The CTA still going after the last level holds the whole sum: the
  // launch's epilogue from it, C from registers.
  auto ifRoot = scf::IfOp::create(b, loc, TypeRange{}, root, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifRoot.getThenRegion().front());
  epilogueFromValues({total}, tm, cst(0), mul(wg, cst(64)));
}

std::pair<Value, SmallVector<Value>>
SplitKKernel::reduceSlices(ArrayRef<Value> vals, int64_t vec,
                           function_ref<Value(int64_t)> vectorLive) {
  auto f32 = b.getF32Type();
  auto i32T = b.getI32Type();
  auto i1T = b.getI1Type();
  auto ptrT = LLVM::LLVMPointerType::get(ctx);
  const int64_t n = int64_t(vals.size());
  assert(n % vec == 0 && "whole vectors");
  const int64_t consumerThreads = ws.consumers * 128;
  // Vector j of thread `tid` at float (j * consumerThreads + tid) * vec:
  // coalesced, and every thread reads back exactly the values the same
  // thread of the sibling CTA wrote.
  auto vecT = VectorType::get({vec}, f32);
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  const int64_t tileFloats = partialBytes() / 4;
  // Counter (t, m) and slot (t, r): index t * S + m (resp. r); the
  // counters first, at a fixed place whatever tiles x S.
  Value tileBase = mul(tileId, slices);
  Value counters = workspace;
  Value slots = LLVM::GEPOp::create(b, loc, ptrT, b.getI8Type(), workspace,
                                    ArrayRef<LLVM::GEPArg>{
                                        int32_t(workspaceBytes())});
  auto slotPtr = [&](Value start) {
    Value first = add(mul(add(tileBase, start), cst(tileFloats)),
                      mul(tid, cst(vec)));
    return LLVM::GEPOp::create(b, loc, ptrT, f32, slots,
                               ValueRange{toI64(first)})
        .getResult();
  };
  auto slotElement = [&](Value slot, int64_t j) {
    return LLVM::GEPOp::create(
        b, loc, ptrT, f32, slot,
        ArrayRef<LLVM::GEPArg>{int32_t(j * consumerThreads * vec)});
  };
  Value first = cmp(arith::CmpIPredicate::eq, tid, cst(0));
  SmallVector<Type> vecValueTypes(size_t(vec), f32);
  auto sub = [&](Value x, Value y) {
    return arith::SubIOp::create(b, loc, x, y).getResult();
  };

  // The tree: while (go && h < S), carrying h, go and the values.
  SmallVector<Value> init{cst(1), arith::ConstantIntOp::create(b, loc, i1T, 1)};
  init.append(vals.begin(), vals.end());
  SmallVector<Type> types{b.getIndexType(), i1T};
  types.append(size_t(n), f32);
  SmallVector<Location> locs(types.size(), loc);
  auto tree = scf::WhileOp::create(b, loc, types, init);
  {
    OpBuilder::InsertionGuard g(b);
    Block *before = b.createBlock(&tree.getBefore(), {}, types, locs);
    Value more = arith::AndIOp::create(
        b, loc, before->getArgument(1),
        cmp(arith::CmpIPredicate::ult, before->getArgument(0), slices));
    scf::ConditionOp::create(b, loc, more, before->getArguments());

    Block *after = b.createBlock(&tree.getAfter(), {}, types, locs);
    Value h = after->getArgument(0);
    SmallVector<Value> cur(after->getArguments().drop_front(2));
    Value twoH = add(h, h);
    // r: the start of this CTA's range; m: the parent's midpoint.
    Value r = arith::AndIOp::create(
        b, loc, slice, arith::XOrIOp::create(b, loc, sub(h, cst(1)), cst(-1)));
    Value p = arith::AndIOp::create(
        b, loc, slice,
        arith::XOrIOp::create(b, loc, sub(twoH, cst(1)), cst(-1)));
    Value mid = add(p, h);
    Value sibling = cmp(arith::CmpIPredicate::ult, mid, slices);
    SmallVector<Type> resTypes{i1T};
    resTypes.append(size_t(n), f32);
    auto ifSibling = scf::IfOp::create(b, loc, resTypes, sibling, true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifSibling.getThenRegion().front());
      // store: this range's sum into slot (t, r).
      Value mine = slotPtr(r);
      for (int64_t j = 0; j < n / vec; ++j) {
        auto ifStore =
            scf::IfOp::create(b, loc, TypeRange{}, vectorLive(j), false);
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(&ifStore.getThenRegion().front());
        Value v = LLVM::PoisonOp::create(b, loc, vecT);
        for (int64_t e = 0; e < vec; ++e)
          v = LLVM::InsertElementOp::create(b, loc, v, cur[j * vec + e],
                                            i32(e));
        LLVM::StoreOp::create(b, loc, v, slotElement(mine, j), vec * 4);
      }
      // arrive: every consumer thread's stores, then thread 0's
      // release + acquire at GPU scope on the counter.
      namedBarrier(1, consumerThreads);
      Value counter = LLVM::GEPOp::create(
          b, loc, ptrT, i32T, counters, ValueRange{toI64(add(tileBase, mid))});
      // Thread 0's decision goes to every consumer thread through shared
      // memory (the stage buffers are idle once the main loop is done;
      // the next write is after the next level's barrier, so after every
      // thread's read): nvvm.barrier's or-reduction is for barrier 0 only.
      Value flag = view(smemType({1}, i32T), cst(0));
      auto ifFirst = scf::IfOp::create(b, loc, TypeRange{}, first, false);
      {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
        LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
        Value old = LLVM::AtomicRMWOp::create(
            b, loc, LLVM::AtomicBinOp::add, counter, i32(1),
            LLVM::AtomicOrdering::acq_rel, "device", /*alignment=*/4);
        // The NVPTX backend emits the atom relaxed: the fences before and
        // after make it the release and acquire pattern.
        LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
        // The second arrival is the counter's last use in this launch.
        auto ifReset = scf::IfOp::create(
            b, loc, TypeRange{},
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, old,
                                  i32(1)),
            false);
        {
          OpBuilder::InsertionGuard g4(b);
          b.setInsertionPointToStart(&ifReset.getThenRegion().front());
          LLVM::StoreOp::create(b, loc, i32(0), counter, 4);
        }
        memref::StoreOp::create(b, loc, old, flag, ValueRange{cst(0)});
      }
      // ... and orders thread 0's acquire before their loads below.
      namedBarrier(1, consumerThreads);
      Value second = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          memref::LoadOp::create(b, loc, flag, ValueRange{cst(0)}), i32(1));
      auto ifSecond = scf::IfOp::create(b, loc, resTypes, second, true);
      {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(&ifSecond.getThenRegion().front());
        // combine: left + right. IEEE addition is commutative (exactly),
        // so own + sibling is that sum whichever side this CTA is; the
        // tree fixes the association, which is what rounding depends on.
        Value theirs = slotPtr(arith::XOrIOp::create(b, loc, r, h));
        SmallVector<Value> sums{second};
        for (int64_t j = 0; j < n / vec; ++j) {
          ArrayRef<Value> own = ArrayRef(cur).slice(j * vec, vec);
          auto ifLoad =
              scf::IfOp::create(b, loc, vecValueTypes, vectorLive(j), true);
          OpBuilder::InsertionGuard g4(b);
          b.setInsertionPointToStart(&ifLoad.getThenRegion().front());
          Value v = LLVM::LoadOp::create(b, loc, vecT, slotElement(theirs, j),
                                         vec * 4);
          SmallVector<Value> added;
          for (int64_t e = 0; e < vec; ++e) {
            Value other = LLVM::ExtractElementOp::create(b, loc, v, i32(e));
            added.push_back(arith::AddFOp::create(b, loc, own[e], other));
          }
          scf::YieldOp::create(b, loc, added);
          // Past M or N: nothing was stored there, nothing is read.
          b.setInsertionPointToStart(&ifLoad.getElseRegion().front());
          scf::YieldOp::create(b, loc, own);
          sums.append(ifLoad.getResults().begin(), ifLoad.getResults().end());
        }
        scf::YieldOp::create(b, loc, sums);
        // The first arrival leaves: its partial is in the slot.
        b.setInsertionPointToStart(&ifSecond.getElseRegion().front());
        SmallVector<Value> gone{second};
        gone.append(cur.begin(), cur.end());
        scf::YieldOp::create(b, loc, gone);
      }
      scf::YieldOp::create(b, loc, ifSecond.getResults());
      // No sibling: the sum goes up unchanged.
      b.setInsertionPointToStart(&ifSibling.getElseRegion().front());
      SmallVector<Value> same{arith::ConstantIntOp::create(b, loc, i1T, 1)};
      same.append(cur.begin(), cur.end());
      scf::YieldOp::create(b, loc, same);
    }
    SmallVector<Value> next{twoH, ifSibling.getResult(0)};
    next.append(ifSibling.getResults().begin() + 1, ifSibling.getResults().end());
    scf::YieldOp::create(b, loc, next);
  }

  SmallVector<Value> total(tree.getResults().drop_front(2));
  return {tree.getResult(1), total};
}
