//===- Reduce.cpp - tile.reduce to per-thread code ------------------------===//
//
// Register paths: a target laid out so that every thread holds the target
// elements of its own source registers (a row statistic of an mma
// accumulator: tile-infer-layouts' slice layout) reduces in registers and
// then with butterfly shuffles among the threads holding each element (the
// four lanes of a quad for rows); a target replicated in every thread
// reduces across the whole warp, then across warps. Otherwise a
// shared-memory staging. Identity/combine are shared with
// convert-tile-to-scf (LaunchUtils).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"
#include "tile/Dialect/Tile/IR/AffineEval.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//


/// Fragment -> fragment reduction when thread t holds, for each of its
/// source registers r, the target element of that source element, at a
/// target register slot(r) that is the same in every thread. Partials in
/// registers, then butterfly shuffles over the lane bits along which the
/// holders of an element differ, then (only when the holders of an element
/// span several warps) a combine through shared memory. Fails (emitting
/// nothing) when the layouts do not have that shape.
static LogicalResult lowerReduceByShuffles(KernelLowering &kl, ReduceOp op,
                                           Buffer &sb, Buffer &tb) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  int64_t threads = kl.threads, dim = op.getDim();
  Type elt = sb.type.getElementType();
  ArrayRef<int64_t> tshape = tb.type.getShape();
  unsigned width = elt.getIntOrFloatBitWidth();
  if (sb.scope != MemoryScope::fragment || tb.scope != MemoryScope::fragment ||
      threads % kl.waveSize != 0 || tshape.empty() ||
      sb.layout.getReplicate() != 1 ||
      sb.registers > 256 || tb.registers > 256 || width > 32 ||
      !(isa<FloatType>(elt) || width >= 8))
    return failure();
  int64_t tn = numElements(tshape);
  auto linear = [&](ArrayRef<int64_t> idx) {
    int64_t l = 0;
    for (auto [d, v] : llvm::enumerate(idx))
      l = l * tshape[d] + v;
    return l;
  };
  AffineMap sInv = sb.layout.getInverse(), tInv = tb.layout.getInverse();
  AffineMap tIdx = tb.layout.getIndexMap();
  SmallVector<int64_t> slotOf(sb.registers, -1);
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t r = 0; r < sb.registers; ++r) {
      SmallVector<int64_t> o = evaluateVerifiedAffineMap(sInv, {t, r});
      o.erase(o.begin() + dim);
      int64_t slot = evaluateVerifiedAffineMap(tIdx, o).front();
      if (evaluateVerifiedAffineMap(tInv, {t, slot}) != o ||
          (slotOf[r] >= 0 && slotOf[r] != slot))
        return failure();
      slotOf[r] = slot;
    }
  // holders[l]: the threads holding target element l.
  std::vector<llvm::DenseSet<int64_t>> holders(tn);
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t s = 0; s < tb.registers; ++s)
      holders[linear(evaluateVerifiedAffineMap(tInv, {t, s}))].insert(t);
  SmallVector<int64_t> laneBits;
  for (int64_t bit = 1; bit < kl.waveSize; bit *= 2) {
    bool free = llvm::all_of(holders, [&](const llvm::DenseSet<int64_t> &h) {
      return llvm::all_of(h, [&](int64_t t) { return h.contains(t ^ bit); });
    });
    if (free)
      laneBits.push_back(bit);
  }
  int64_t group = int64_t(1) << laneBits.size();
  bool acrossWarps = false;
  for (const llvm::DenseSet<int64_t> &h : holders) {
    llvm::DenseMap<int64_t, int64_t> perWarp;
    for (int64_t t : h)
      ++perWarp[t / kl.waveSize];
    for (auto [w, n] : perWarp)
      if (n != group)
        return failure();
    acrossWarps |= perWarp.size() > 1;
  }

  ReduceKind kind = op.getKind();
  Type wide = width == 32 ? elt
              : isa<FloatType>(elt) ? (Type)b.getF32Type()
                                    : (Type)b.getI32Type();
  Value ident = kl.convert(reduceIdentity(b, loc, kind, elt), wide);
  // Each slot's source registers combine as a balanced tree, not a chain:
  // the chain's length is the latency of the whole reduction (64 dependent
  // max steps for a 64x128 wgmma accumulator row), the tree's is its log.
  // max/min are exactly associative; a pairwise sum only rounds
  // differently (and no worse) than the sequential one.
  SmallVector<SmallVector<Value>> terms(tb.registers);
  for (int64_t r = 0; r < sb.registers; ++r) {
    Value x = kl.convert(kl.loadRegister(sb, kl.cst(r)), wide);
    if (kind == ReduceKind::abssum || kind == ReduceKind::absmax)
      x = isa<FloatType>(wide)
              ? (Value)math::AbsFOp::create(b, loc, x)
              // combine(0 or INT_MIN, |x|): folds to |x|.
              : reduceCombine(b, loc, kind, ident, x, /*absFirst=*/true);
    terms[slotOf[r]].push_back(x);
  }
  SmallVector<Value> partial(tb.registers, ident);
  for (auto [slot, level] : llvm::enumerate(terms)) {
    while (level.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(
            reduceCombine(b, loc, kind, level[i], level[i + 1], false));
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    if (!level.empty())
      partial[slot] = level.front();
  }
  for (Value &v : partial)
    for (int64_t bit : laneBits) {
      auto sh = gpu::ShuffleOp::create(b, loc, v, kl.i32(bit),
                                       kl.i32(kl.waveSize),
                                       gpu::ShuffleMode::XOR);
      v = reduceCombine(b, loc, kind, v, sh.getShuffleResult(), false);
    }
  if (acrossWarps) {
    // Warp w's value of element l at w * tn + l; identity where warp w
    // holds no l.
    int64_t warps = threads / kl.waveSize;
    Value view = kl.scratch(wide, warps * tn);
    kl.barrier();
    // Identity where a warp holds no element l (not needed when every warp
    // holds every element, e.g. a replicated target).
    bool everyWarp = llvm::all_of(holders, [&](const llvm::DenseSet<int64_t> &h) {
      return (int64_t)h.size() == group * warps;
    });
    if (!everyWarp) {
      kl.forEachLinear(warps * tn, [&](Value l) {
        memref::StoreOp::create(b, loc, ident, view, ValueRange{l});
      });
      kl.barrier();
    }
    SmallVector<Value> at;
    for (int64_t s = 0; s < tb.registers; ++s) {
      Value l = kl.linearize(tshape, kl.fragmentIndex(tb, kl.cst(s), s));
      at.push_back(l);
      Value mine = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, kl.warpId, kl.cst(tn)), l);
      memref::StoreOp::create(b, loc, partial[s], view, ValueRange{mine});
    }
    kl.barrier();
    for (int64_t s = 0; s < tb.registers; ++s) {
      Value v = ident;
      for (int64_t w = 0; w < warps; ++w)
        v = reduceCombine(
            b, loc, kind, v,
            memref::LoadOp::create(
                b, loc, view,
                ValueRange{arith::AddIOp::create(b, loc, at[s],
                                                 kl.cst(w * tn))}),
            false);
      partial[s] = v;
    }
    kl.barrier();
  }
  for (int64_t s = 0; s < tb.registers; ++s) {
    Value v = kl.convert(partial[s], elt);
    if (!op.getClear())
      v = reduceCombine(b, loc, kind, kl.loadRegister(tb, kl.cst(s)), v,
                        false);
    kl.storeRegister(tb, kl.cst(s), v);
  }
  return success();
}

LogicalResult KernelLowering::lowerReduce(ReduceOp op) {
  Buffer *sb = lookup(op.getSource()), *tb = lookup(op.getTarget());
  if (!sb || !tb)
    return op.emitError("reduce operands must be tile.alloc buffers");
  ReduceKind kind = op.getKind();
  int64_t dim = op.getDim();
  Type elt = sb->type.getElementType();
  ArrayRef<int64_t> sshape = sb->type.getShape(), tshape = tb->type.getShape();
  int64_t tn = numElements(tshape);
  auto dropDim = [&](ArrayRef<Value> idx) {
    SmallVector<Value> o(idx.begin(), idx.end());
    o.erase(o.begin() + dim);
    return o;
  };

  // Local: the whole reduction in every thread, on its own copy.
  if (sb->scope == MemoryScope::local && tb->scope == MemoryScope::local) {
    forEachSerial(tshape, [&](ValueRange outer) {
      Value init = op.getClear() ? reduceIdentity(b, loc, kind, elt)
                                 : loadOnChip(*tb, outer);
      auto loop = scf::ForOp::create(b, loc, cst(0), cst(sshape[dim]), cst(1),
                                     ValueRange{init});
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.insert(idx.begin() + dim, loop.getInductionVar());
      Value x = loadOnChip(*sb, idx);
      scf::YieldOp::create(b, loc, reduceCombine(b, loc, kind,
                                                 loop.getRegionIterArgs()[0],
                                                 x, true));
      b.setInsertionPointAfter(loop);
      storeOnChip(*tb, outer, loop.getResult(0));
    });
    return success();
  }

  // Local target, shared/fragment source: every thread computes the whole
  // result (its own copy of the target) from the source in shared memory.
  // Local source, shared/fragment target: the general path below reads the
  // thread's own (complete) copy of the source.
  bool localTarget = tb->scope == MemoryScope::local;

  // Fast path: fragment source, target replicated in every thread.
  // Thread-local partials -> warp butterfly (shuffle xor) -> across warps
  // through shared memory.
  unsigned width = elt.getIntOrFloatBitWidth();
  bool shuffleable = width <= 32 && (isa<FloatType>(elt) || width >= 8);
  if (sb->scope == MemoryScope::fragment &&
      tb->scope == MemoryScope::fragment && threads % waveSize == 0 &&
      shuffleable &&
      tb->layout.getReplicate() == threads && tb->registers == tn &&
      tb->layout == getReplicatedLayout(b.getContext(), tshape, threads)) {
    Type wide = width == 32 ? elt
                : isa<FloatType>(elt) ? (Type)b.getF32Type()
                                      : (Type)b.getI32Type();
    Value ident = convert(reduceIdentity(b, loc, kind, elt), wide);
    bool replicated = sb->layout.getReplicate() > 1;
    // The thread's partials: one SSA value per target element. The target
    // element of register r is found by enumerating the threads: the same
    // in every thread (a constant slot), else one of a few candidates
    // (selects on the thread's own index), so the partials stay in
    // registers; an indexed per-thread array (local memory) only when the
    // source has more than 256 registers or the candidates are too many.
    SmallVector<Value> totals(tn, ident);
    SmallVector<SmallVector<int64_t>> candidates;
    int64_t selects = 0;
    if (sb->registers <= 256) {
      AffineMap sInv = sb->layout.getInverse();
      for (int64_t r = 0; r < sb->registers && selects <= 1024; ++r) {
        llvm::SetVector<int64_t> seen;
        for (int64_t t = 0; t < threads; ++t) {
          SmallVector<int64_t> e = evaluateVerifiedAffineMap(sInv, {t, r});
          e.erase(e.begin() + dim);
          int64_t l = 0;
          for (auto [d, x] : llvm::enumerate(e))
            l = l * tshape[d] + x;
          seen.insert(l);
        }
        candidates.push_back(seen.takeVector());
        if (candidates.back().size() > 1)
          selects += candidates.back().size();
      }
    }
    if (sb->registers <= 256 && selects <= 1024) {
      for (int64_t r = 0; r < sb->registers; ++r) {
        SmallVector<Value> idx = fragmentIndex(*sb, cst(r), r);
        Value x = convert(loadRegister(*sb, cst(r)), wide);
        Value mine;
        if (replicated) {
          Value owner = applyMap(sb->layout.getThreadMap(), idx).front();
          mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       owner, tid);
        }
        Value at = candidates[r].size() > 1
                       ? (tshape.empty() ? cst(0)
                                         : linearize(tshape, dropDim(idx)))
                       : Value();
        for (int64_t o : candidates[r]) {
          Value take = mine;
          if (at) {
            Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             at, cst(o));
            take = take ? (Value)arith::AndIOp::create(b, loc, take, is) : is;
          }
          Value c = reduceCombine(b, loc, kind, totals[o], x, true);
          totals[o] = take ? (Value)arith::SelectOp::create(b, loc, take, c,
                                                            totals[o])
                           : c;
        }
      }
    } else {
      if (remarks)
        op.emitRemark("tile.reduce keeps its partials in local memory: ")
            << (sb->registers > 256
                    ? "the source has more than 256 registers per thread"
                    : "a register's target element differs between threads "
                      "in too many ways");
      // At the kernel's entry: an alloca in a loop (a pipelined body, the
      // persistent form's loop over blocks) would grow the stack each
      // time round.
      Value partial;
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&func.getBody().front());
        partial = memref::AllocaOp::create(b, loc,
                                           MemRefType::get({tn}, wide));
      }
      for (int64_t o = 0; o < tn; ++o)
        memref::StoreOp::create(b, loc, ident, partial, ValueRange{cst(o)});
      forEachOwnedRegister(*sb, [&](Value r, ArrayRef<Value> idx) {
        Value o = tshape.empty() ? cst(0) : linearize(tshape, dropDim(idx));
        Value x = convert(loadRegister(*sb, r), wide);
        Value acc = memref::LoadOp::create(b, loc, partial, ValueRange{o});
        memref::StoreOp::create(b, loc,
                                reduceCombine(b, loc, kind, acc, x, true),
                                partial, ValueRange{o});
      });
      for (int64_t o = 0; o < tn; ++o)
        totals[o] = memref::LoadOp::create(b, loc, partial, ValueRange{cst(o)});
    }
    int64_t warps = threads / waveSize;
    Value view = warps > 1 ? scratch(wide, warps * tn) : Value();
    if (warps > 1)
      barrier();
    for (int64_t o = 0; o < tn; ++o) {
      Value v = totals[o];
      for (int64_t m = waveSize / 2; m >= 1; m /= 2) {
        auto sh = gpu::ShuffleOp::create(b, loc, v, i32(m), i32(waveSize),
                                         gpu::ShuffleMode::XOR);
        v = reduceCombine(b, loc, kind, v, sh.getShuffleResult(), false);
      }
      totals[o] = v;
      if (warps > 1)
        ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, laneId,
                                     cst(0)),
               [&] {
                 Value at = arith::AddIOp::create(
                     b, loc, arith::MulIOp::create(b, loc, warpId, cst(tn)),
                     cst(o));
                 memref::StoreOp::create(b, loc, v, view, ValueRange{at});
               });
    }
    if (warps > 1) {
      barrier();
      for (int64_t o = 0; o < tn; ++o) {
        Value v = ident;
        for (int64_t w = 0; w < warps; ++w)
          v = reduceCombine(
              b, loc, kind, v,
              memref::LoadOp::create(b, loc, view, ValueRange{cst(w * tn + o)}),
              false);
        totals[o] = v;
      }
      barrier();
    }
    for (int64_t o = 0; o < tn; ++o) {
      Value v = convert(totals[o], elt);
      if (!op.getClear())
        v = reduceCombine(b, loc, kind, loadRegister(*tb, cst(o)), v, false);
      storeRegister(*tb, cst(o), v);
    }
    return success();
  }

  if (succeeded(lowerReduceByShuffles(*this, op, *sb, *tb)))
    return success();

  // General path: the source in shared memory (staged if a fragment), each
  // target element reduced serially by the thread(s) that hold it.
  if (remarks) {
    StringRef why =
        localTarget ? "the target is a local buffer (every thread reduces "
                      "the whole source)"
        : sb->scope != MemoryScope::fragment
            ? "the source is not a fragment"
        : tb->scope != MemoryScope::fragment
            ? "the target is not a fragment"
        : !shuffleable ? "the element type is wider than 32 bits"
        : "the target's layout neither is replicated in every thread nor "
          "gives each thread the target elements of its own source "
          "elements";
    op.emitRemark("tile.reduce staged through shared memory and reduced "
                  "serially per target element: ")
        << why;
  }
  Buffer src = *sb;
  bool staged = false;
  barrier();
  if (sb->scope == MemoryScope::fragment) {
    src.scope = MemoryScope::shared;
    src.swizzle = nullptr;
    src.storage = scratch(elt, numElements(sshape));
    fragmentToScratch(*sb, src.storage);
    barrier();
    staged = true;
  }
  auto reduceAt = [&](ValueRange outer, Value init) {
    auto loop = scf::ForOp::create(b, loc, cst(0), cst(sshape[dim]), cst(1),
                                   ValueRange{init});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> idx(outer.begin(), outer.end());
    idx.insert(idx.begin() + dim, loop.getInductionVar());
    Value x = loadOnChip(src, idx);
    scf::YieldOp::create(b, loc,
                         reduceCombine(b, loc, kind,
                                       loop.getRegionIterArgs()[0], x, true));
    return loop.getResult(0);
  };
  if (localTarget) {
    forEachSerial(tshape, [&](ValueRange o) {
      Value init = op.getClear() ? reduceIdentity(b, loc, kind, elt)
                                 : loadOnChip(*tb, o);
      storeOnChip(*tb, o, reduceAt(o, init));
    });
    // Scratch (a staged fragment) is reused by the next op.
    if (staged)
      barrier();
    return success();
  }
  if (tb->scope == MemoryScope::fragment) {
    forEachRegister(tb->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> o = fragmentIndex(*tb, r, rc);
      Value init = op.getClear() ? reduceIdentity(b, loc, kind, elt)
                                 : loadRegister(*tb, r);
      storeRegister(*tb, r, reduceAt(o, init));
    });
  } else {
    forEachLinear(tn, [&](Value l) {
      SmallVector<Value> o = delinearize(tshape, l);
      Value init = op.getClear() ? reduceIdentity(b, loc, kind, elt)
                                 : loadOnChip(*tb, o);
      storeOnChip(*tb, o, reduceAt(o, init));
    });
  }
  if (staged || tb->scope == MemoryScope::shared)
    barrier();
  return success();
}

