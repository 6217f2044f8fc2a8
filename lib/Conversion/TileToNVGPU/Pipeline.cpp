//===- Pipeline.cpp - tile.pipelined to a cp.async software pipeline ------===//
//
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

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
// pipelined
//===----------------------------------------------------------------------===//

// With `stages = S >= 2` the loop becomes a multi-stage cp.async software
// pipeline (the CUTLASS multistage scheme). Producers: the global -> shared
// copies of the body (stage 0 unless the `stage` attribute says otherwise);
// consumers: everything else (last stage). A producer of stage s runs
// D = S - 1 - s iterations ahead, and its target gets D + 1 copies in shared
// memory (iteration i uses copy i mod (D + 1)):
//
//   prologue: for s < D: issue the producers of iteration s; commit
//   for i in [0, n):
//     cp.async.wait_group(D - 1); barrier   // iteration i's data landed and
//                                           // is visible; everybody is done
//                                           // with iteration i - 1
//     issue the producers of iteration i + D (if < n); commit
//     consumers of iteration i (reading copy i mod (D + 1))
//   wait_group(0); barrier
//
// The copy issued in iteration i overwrites copy (i - 1) mod (D + 1), which
// iteration i - 1 read before the barrier: no other barrier is needed. Every
// thread commits the same number of groups (empty ones past the end), so
// the group counting is uniform. `order` decides whether the producers are
// issued before or after the consumers. The results are those of the serial
// loop: producers read only loop-invariant global memory (the plan refuses
// loops that write global memory), their targets are read only after them
// in the body, and tails are the copies' own zero fill.
//

SmallVector<Operation *>
mlir::tile::nvgpu_lowering::producerSlice(PipelinedOp loop,
                                          Operation *producer) {
  llvm::SetVector<Operation *> slice;
  for (Value v : producer->getOperands())
    (void)loop.collectRecomputableSlice(v, slice);
  SmallVector<Operation *> sorted(slice.begin(), slice.end());
  llvm::sort(sorted,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return sorted;
}

/// A copy that can be issued ahead: global -> a shared tile.alloc of the
/// enclosing launch, indices computable ahead, the target written by no
/// other op and read only after the copy by block-level tile ops of the body.
static bool isPipelinableCopy(PipelinedOp loop, Operation *op) {
  auto copy = dyn_cast<CopyOp>(op);
  if (!copy || copy->getBlock() != &loop.getBodyBlock() ||
      !isGlobalType(copy.getSource().getType()))
    return false;
  Value target = copy.getTarget();
  auto alloc = target.getDefiningOp<AllocOp>();
  if (!alloc || alloc.getScope() != MemoryScope::shared ||
      loop->isAncestor(alloc))
    return false;
  llvm::SetVector<Operation *> slice;
  if (!loop.collectRecomputableSlice(copy.getSource(), slice))
    return false;
  for (Value idx : copy.getSourceIndices())
    if (!loop.collectRecomputableSlice(idx, slice))
      return false;
  for (Operation *user : target.getUsers()) {
    if (user == op)
      continue;
    if (user->getBlock() != &loop.getBodyBlock() ||
        !isa<CopyOp, GemmOp, ReduceOp>(user) || user->isBeforeInBlock(op))
      return false;
    if (auto c = dyn_cast<CopyOp>(user); c && c.getTarget() == target)
      return false;
    if (auto r = dyn_cast<ReduceOp>(user); r && r.getTarget() == target)
      return false;
    if (auto g = dyn_cast<GemmOp>(user); g && g.getC() == target)
      return false;
  }
  return true;
}

/// The plan of `loop`, or nullopt when it runs serially. `promote`: a
/// stages(1) loop without explicit stage/order attributes is planned with
/// two stages (the warp-specialized forms: a producer warpgroup that runs
/// one stage ahead is the form's point; the plain kernel keeps one).
static std::optional<PipelinePlan> planPipeline(PipelinedOp loop,
                                                bool promote) {
  int64_t stages = loop.getStages();
  bool promoted = promote && stages == 1 && !loop.getStageAttr() &&
                  !loop.getOrderAttr();
  if (promoted)
    stages = 2;
  if (stages < 2 || loop->getParentOfType<PipelinedOp>())
    return std::nullopt;
  Block &body = loop.getBodyBlock();
  bool refuse = false;
  body.walk([&](Operation *inner) {
    if (isa<PipelinedOp, AtomicOp, AtomicTileOp, memref::AtomicRMWOp>(inner))
      refuse = true;
    if (auto c = dyn_cast<CopyOp>(inner))
      refuse |= isGlobalType(c.getTarget().getType());
    if (auto st = dyn_cast<memref::StoreOp>(inner))
      refuse |= isGlobalType(st.getMemRef().getType());
  });
  if (refuse)
    return std::nullopt;
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  auto isPure = [](Operation *op) {
    return op->getNumRegions() == 0 && isMemoryEffectFree(op);
  };

  PipelinePlan plan{/*distance=*/0, {}, /*issueFirst=*/true, loop.getLoc(),
                    stages, promoted};
  SmallVector<int64_t> position(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    position[i] = i;
  if (auto order = loop.getOrderAttr(); order && (size_t)order.size() == ops.size())
    for (size_t i = 0; i < ops.size(); ++i)
      position[i] = order[i];
  SmallVector<size_t> producerIdx;
  if (auto stage = loop.getStageAttr(); stage && (size_t)stage.size() == ops.size()) {
    int64_t s0 = -1;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (isPure(ops[i]) || stage[i] >= stages - 1)
        continue;
      if (!isPipelinableCopy(loop, ops[i]) || (s0 >= 0 && stage[i] != s0)) {
        ops[i]->emitWarning("tile.pipelined: this op's stage cannot be "
                            "pipelined (only global->shared copies of one "
                            "common early stage can); the loop runs serially");
        return std::nullopt;
      }
      s0 = stage[i];
      producerIdx.push_back(i);
    }
    plan.distance = stages - 1 - s0;
  } else {
    for (size_t i = 0; i < ops.size(); ++i)
      if (isPipelinableCopy(loop, ops[i]))
        producerIdx.push_back(i);
    plan.distance = stages - 1;
  }
  if (producerIdx.empty())
    return std::nullopt;
  llvm::stable_sort(producerIdx, [&](size_t a, size_t b) {
    return position[a] < position[b];
  });
  int64_t firstConsumer = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < ops.size(); ++i)
    if (!isPure(ops[i]) && !llvm::is_contained(producerIdx, i))
      firstConsumer = std::min(firstConsumer, position[i]);
  plan.issueFirst = position[producerIdx.front()] < firstConsumer;
  for (size_t i : producerIdx)
    plan.producers.push_back(ops[i]);
  return plan;
}

void KernelLowering::planPipelines() {
  func.walk([&](PipelinedOp loop) {
    std::optional<PipelinePlan> plan =
        planPipeline(loop, /*promote=*/requestWarpSpecialization);
    if (!plan)
      return;
    for (Operation *p : plan->producers)
      multiBuffered[cast<CopyOp>(p).getTarget()] = plan->distance + 1;
    pipelines[loop] = std::move(*plan);
  });
}

Value KernelLowering::uniformWarpgroup() {
  if (uniformWarpgroupValue)
    return uniformWarpgroupValue;
  OpBuilder::InsertionGuard guard(b);
  // tid is defined at the entry, where every thread of the block runs.
  b.setInsertionPointAfter(tid.getDefiningOp());
  Value wg = arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(), arith::DivUIOp::create(b, loc, tid, cst(128)));
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), waveSize);
  uniformWarpgroupValue =
      gpu::ShuffleOp::create(b, loc, wg, zero, width, gpu::ShuffleMode::IDX)
          .getShuffleResult();
  return uniformWarpgroupValue;
}

Value KernelLowering::stageView(const Buffer &buf, Value slot) {
  Value off = arith::AddIOp::create(
      b, loc, cst(buf.sharedOffset),
      arith::MulIOp::create(b, loc, slot, cst(buf.stageBytes)));
  return memref::ViewOp::create(b, loc, buf.storage.getType(), smem, off,
                                ValueRange{});
}

/// Recomputes `v` (a value of `loop`'s body) for induction variable `iv`
/// when it is an affine function of the induction variable (constants,
/// loop invariants, addi/subi, muli by an iv-independent factor); null
/// otherwise. `dependsOnIv` tells whether the result varies with the iv.
static Value cloneAffineInIv(OpBuilder &b, PipelinedOp loop, Value v,
                             Value iv, IRMapping &mapping, bool &dependsOnIv) {
  dependsOnIv = false;
  if (v == loop.getInductionVar()) {
    dependsOnIv = true;
    return iv;
  }
  if (!loop.getBody().isAncestor(v.getParentRegion()))
    return v;
  if (Value m = mapping.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &loop.getBodyBlock())
    return Value();
  if (isa<arith::ConstantOp>(def))
    return b.clone(*def, mapping)->getResult(0);
  if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
    return Value();
  bool dep[2];
  Value ops[2];
  for (int i = 0; i < 2; ++i) {
    ops[i] = cloneAffineInIv(b, loop, def->getOperand(i), iv, mapping, dep[i]);
    if (!ops[i])
      return Value();
    mapping.map(def->getOperand(i), ops[i]);
  }
  if (isa<arith::MulIOp>(def) && dep[0] && dep[1])
    return Value();
  dependsOnIv = dep[0] || dep[1];
  Operation *c = b.clone(*def, mapping);
  return c->getResult(0);
}

LogicalResult KernelLowering::lowerPipelined(PipelinedOp op) {
  b.setInsertionPoint(op);
  loc = op.getLoc();
  Block &body = op.getBodyBlock();
  auto planIt = pipelines.find(op);
  // Versioning: when the producers that qualify for cp.async are aligned
  // for the whole loop (a loop-invariant check, done once), the pipeline
  // issues them without any branch: no per-iteration alignment check and
  // the iteration range folded into the copies' src-size (zero bytes past
  // the end). Otherwise the else-version below (per-copy runtime check with
  // the scalar fallback, a branch on the range).
  if (planIt != pipelines.end() && !fallbackPipelines.contains(op) &&
      !fastPipelines.contains(op)) {
    SmallVector<Operation *> eligible;
    Value ok;
    for (Operation *p : planIt->second.producers) {
      auto copy = cast<CopyOp>(p);
      std::optional<int64_t> vec = copyAsyncVector(*this, copy);
      if (!vec)
        continue;
      Value start = copy.getSourceIndices().back();
      Value iv0 = op.getLowerBound();
      Value iv1 = arith::AddIOp::create(b, loc, iv0, op.getStep());
      IRMapping m0, m1;
      bool dep0 = false, dep1 = false;
      Value s0 = cloneAffineInIv(b, op, start, iv0, m0, dep0);
      Value s1 = s0 ? cloneAffineInIv(b, op, start, iv1, m1, dep1) : Value();
      if (!s0 || !s1)
        continue;
      // Two's complement: unsigned remainders by powers of two are exact.
      auto zeroRem = [&](Value v) -> Value {
        return arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(b, loc, v, cst(*vec)), cst(0));
      };
      Value c = arith::AndIOp::create(
          b, loc, copyAsyncAligned(*this, copy),
          arith::AndIOp::create(
              b, loc, zeroRem(s0),
              zeroRem(arith::SubIOp::create(b, loc, s1, s0))));
      ok = ok ? (Value)arith::AndIOp::create(b, loc, ok, c) : c;
      eligible.push_back(p);
    }
    if (!eligible.empty()) {
      auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/true);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      IRMapping cm;
      auto clone = cast<PipelinedOp>(b.clone(*op, cm));
      PipelinePlan fallback = planIt->second;
      for (Operation *&p : fallback.producers)
        p = cm.lookup(p);
      pipelines[clone] = fallback;
      fallbackPipelines.insert(clone);
      op->moveBefore(ifOp.getThenRegion().front().getTerminator());
      fastPipelines[op] = eligible;
      if (failed(lowerPipelined(clone)))
        return failure();
      b.setInsertionPoint(op);
      planIt = pipelines.find(op);
    }
  }
  if (planIt == pipelines.end()) {
    // The serial loop; copies inside become cp.async where they qualify
    // (issued, then waited for before the barrier that ends the copy).
    auto loop = scf::ForOp::create(b, loc, op.getLowerBound(),
                                   op.getUpperBound(), op.getStep());
    Operation *yield = body.getTerminator();
    Block *loopBody = loop.getBody();
    loopBody->getOperations().splice(
        Block::iterator(loopBody->getTerminator()), body.getOperations(),
        body.begin(), Block::iterator(yield));
    body.getArgument(0).replaceAllUsesWith(loop.getInductionVar());
    op.erase();
    return success();
  }
  const PipelinePlan &plan = planIt->second;
  int64_t D = plan.distance;
  Value lb = op.getLowerBound(), ub = op.getUpperBound(), st = op.getStep();
  Value n = tripCount(lb, ub, st);

  // The pure ops each producer's operands need, in body order.
  SmallVector<SmallVector<Operation *>> slices;
  for (Operation *p : plan.producers)
    slices.push_back(producerSlice(op, p));
  auto tokenType = ::mlir::nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto commit = [&]() -> Value {
    return ::mlir::nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                           ValueRange{});
  };
  // Issues the producers of iteration `iter` into copy `slot`.
  auto issue = [&](Value iter, Value slot,
                   function_ref<bool(Operation *)> which, Value guard) {
    Value iv = arith::AddIOp::create(b, loc, lb,
                                     arith::MulIOp::create(b, loc, iter, st));
    IRMapping mapping;
    mapping.map(op.getInductionVar(), iv);
    for (auto [p, slice] : llvm::zip(plan.producers, slices)) {
      if (!which(p))
        continue;
      for (Operation *s : slice)
        if (!mapping.contains(s->getResult(0)))
          b.clone(*s, mapping);
      Value target = cast<CopyOp>(p).getTarget();
      Value view = stageView(buffers[target], slot);
      Operation *c = b.clone(*p, mapping);
      asyncCopies.insert(c);
      storageOverrides[c].push_back({target, view});
      if (guard) {
        alignedCopies.insert(c);
        copyGuards[c] = guard;
      }
    }
  };
  auto issueIf = [&](Value iter, Value slot) {
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, iter, n);
    ArrayRef<Operation *> fast;
    if (auto it = fastPipelines.find(op); it != fastPipelines.end())
      fast = it->second;
    // Fast producers: no branch, zero-byte copies past the end.
    issue(iter, slot, [&](Operation *p) { return llvm::is_contained(fast, p); },
          inRange);
    if (fast.size() != plan.producers.size())
      ifThen(inRange, [&] {
        issue(iter, slot,
              [&](Operation *p) { return !llvm::is_contained(fast, p); },
              Value());
      });
  };

  // The prologue: unrolled for the usual distances (constant stage
  // offsets); a loop beyond, so that the code does not grow with the stage
  // count. The loop's groups are counted like the unrolled ones; the waits
  // below name the token of an empty group committed first (complete at
  // once, so it changes no count that matters).
  Value token;
  constexpr int64_t kUnrolledPrologue = 4;
  if (D <= kUnrolledPrologue) {
    for (int64_t s = 0; s < D; ++s) {
      issueIf(cst(s), cst(s));
      token = commit();
    }
  } else {
    token = commit();
    auto prologue = scf::ForOp::create(b, loc, cst(0), cst(D), cst(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(prologue.getBody());
    Value s = prologue.getInductionVar();
    issueIf(s, s);
    commit();
  }
  // The copy read by iteration i (i mod (D + 1)) is carried by the loop
  // (no 64-bit remainder per iteration); iteration i writes copy
  // (i + D) mod (D + 1) = (i - 1) mod (D + 1).
  auto loop = scf::ForOp::create(b, loc, cst(0), n, cst(1), ValueRange{cst(0)});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value slot = loop.getRegionIterArgs()[0];
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          slot, cst(0));
    Value writeSlot = arith::SelectOp::create(
        b, loc, isFirst, cst(D), arith::SubIOp::create(b, loc, slot, cst(1)));
    Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        slot, cst(D));
    Value nextSlot = arith::SelectOp::create(
        b, loc, wraps, cst(0), arith::AddIOp::create(b, loc, slot, cst(1)));
    scf::YieldOp::create(b, loc, ValueRange{nextSlot});
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ::mlir::nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                             b.getI32IntegerAttr(D - 1));
    barrier();
    auto issueNext = [&] {
      issueIf(arith::AddIOp::create(b, loc, i, cst(D)), writeSlot);
      commit();
    };
    if (plan.issueFirst)
      issueNext();
    Value iv = arith::AddIOp::create(b, loc, lb,
                                     arith::MulIOp::create(b, loc, i, st));
    llvm::DenseMap<Value, Value> views;
    for (Operation *p : plan.producers) {
      Value target = cast<CopyOp>(p).getTarget();
      views[target] = stageView(buffers[target], slot);
    }
    // The consumers (and the pure ops) move into the loop.
    SmallVector<Operation *> consumers;
    for (Operation &inner : body.without_terminator())
      if (!llvm::is_contained(plan.producers, &inner))
        consumers.push_back(&inner);
    for (Operation *c : consumers) {
      c->moveBefore(loop.getBody()->getTerminator());
      for (Value v : c->getOperands())
        if (Value view = views.lookup(v))
          storageOverrides[c].push_back({v, view});
    }
    if (!plan.issueFirst) {
      b.setInsertionPoint(loop.getBody()->getTerminator());
      issueNext();
    }
    // After the issue: its slice clones map the body's induction variable.
    body.getArgument(0).replaceAllUsesWith(iv);
  }
  b.setInsertionPointAfter(loop);
  ::mlir::nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                           b.getI32IntegerAttr(0));
  barrier();
  op.erase();
  return success();
}

