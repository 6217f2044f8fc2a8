//===- WarpSpecialize.cpp - producer and consumer warpgroups --------------===//
//
// The warp-specialized form of a kernel with software-pipelined loops
// (sm_90a), built as a second kernel of the same launch (a variant, see
// TileToNVGPU.cpp). The launch's `threads` become the consumers and run the
// whole program except the pipelines' copies; one producer warpgroup after
// them runs only those copies:
//
//   thread 0: init full[c][s] (2 x 128 arrivals) and empty[c][s] (the
//             consumers) for every producer copy c and stage s; barrier
//   if (tid < threads) {            // consumers, setmaxnreg.inc
//     ... for i in [0, n):          // each pipelined loop
//           wait full[c][i % S] (phase (i / S) & 1) before c's first reader
//           ... the loop body, c's target read at stage i % S ...
//           arrive empty[c][i % S] after c's last reader
//     ... (named barrier 1 over the consumers instead of bar.sync 0)
//   } else {                         // producer warpgroup, setmaxnreg.dec
//     for j in [0, n):               // each pipelined loop, in order
//       wait empty[c][j % S] (the previous round's release)
//       cp.async c of iteration j into stage j % S (128 threads)
//       cp.async.mbarrier.arrive.noinc full[c][j % S]  // when they land
//       mbarrier.arrive full[c][j % S]   // release of any plain stores
//   }
//
// Two arrivals per producer thread and stage: the asynchronous one
// completes when the thread's cp.async have landed, the plain one (release)
// covers the stores of the fallback path for copies no cp.async width fits
// at run time. Consumers never wait on a block-wide barrier inside the
// loop, so the consumer warpgroups drift apart and one's tensor-core work
// overlaps another's softmax or epilogue, and the producer runs S - 1
// stages ahead. wgmma reads through the async proxy: a consumer fences
// (fence.proxy.async) after each wait.
//
// The TMA form (NAME_kernel_ws_tma, TmaCopy.cpp has the conditions): the
// full barriers take one arrival, the producer warpgroup drops to 24
// registers and its first thread alone runs the loops, each copy of
// iteration j being `mbarrier.arrive.expect_tx full[c][j % S], bytes` and
// one cp.async.bulk.tensor per box; the consumers need no proxy fence (TMA
// writes through the async proxy, which wgmma reads).
//
// Rotation (FlashAttention-3's intra-warpgroup overlap; planGemmRotation):
// when the body ends with a wgmma gemm G2 (O += P V) whose B is a stage of
// the loop, and an earlier wgmma gemm G1 (S = Q K^T) touches none of G2's
// operands, G2 of iteration i - 1 is issued right after G1 of iteration i,
// both without waiting; the consumers wait for G1 alone (wgmma.wait_group
// 1), run what follows (the softmax) while G2 runs, and wait for G2 before
// the first op that touches its C or A. G2's A is cleared before the loop,
// so that iteration 0's G2 (0 * V_0) adds nothing, and the last G2 runs
// after the loop. The stage G2 reads is released one iteration later.
// With two consumer warpgroups they also take turns (named barriers 2 and
// 3) at issuing the G1/G2 pair, so that one warpgroup's softmax overlaps
// the other's gemms. H200, FlashAttention 128x128 d = 128: 0.73-0.83x SDPA
// against 0.71-0.82x without (docs/performance.md).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

using WS = WarpSpecializedKernel;

/// Whether the producer can recompute `v`, a value the consumers compute at
/// the top level of the kernel: a kernel argument, or pure ops over such.
static bool isRecomputable(Value v, Block &entry) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &entry;
  Operation *def = v.getDefiningOp();
  if (def->getBlock() != &entry || def->getNumRegions() ||
      !isMemoryEffectFree(def))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return isRecomputable(o, entry); });
}

/// The producer's copy of `v` (consumer top-level value): cloned with its
/// pure operands into the producer block, once per mapping.
static Value recompute(OpBuilder &b, Value v, Block *consumerBlock,
                       IRMapping &mapping) {
  if (Value m = mapping.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != consumerBlock)
    return v; // defined before the role split: visible to both
  for (Value o : def->getOperands())
    (void)recompute(b, o, consumerBlock, mapping);
  Operation *c = b.clone(*def, mapping);
  return c->getResult(cast<OpResult>(v).getResultNumber());
}

/// Whether `user` or an op nested in it has `v` as an operand.
static bool usesValue(Operation *user, Value v) {
  return user
      ->walk([&](Operation *x) {
        return llvm::is_contained(x->getOperands(), v) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
      })
      .wasInterrupted();
}

bool KernelLowering::canWarpSpecialize(std::string &whyNot) {
  if (pipelines.empty()) {
    // Nothing to specialize; a remark only for loops that could have been
    // (a launch without a pipelined loop, such as a row reduction or an
    // elementwise kernel, has no slower path to report).
    bool any = false;
    func.walk([&](PipelinedOp) { any = true; });
    if (any)
      whyNot = "no tile.pipelined loop is software-pipelined (global -> "
               "shared copies of at least 2 stages feeding the body)";
    return false;
  }
  if (smVersion(chip) != 90 || !StringRef(chip).ends_with("a")) {
    whyNot = "needs sm_90a (setmaxnreg)";
    return false;
  }
  if (threads % 128 || threads + WS::kProducerThreads > 1024) {
    whyNot = "the launch's threads (" + std::to_string(threads) +
             ") are not whole warpgroups with room for a producer one";
    return false;
  }
  Block &entry = func.getBody().front();
  for (auto &[op, plan] : pipelines) {
    auto loop = cast<PipelinedOp>(op);
    if (loop->getBlock() != &entry) {
      whyNot = "a pipelined loop is nested in other control flow";
      return false;
    }
    SmallVector<Value> outside = {loop.getLowerBound(), loop.getUpperBound(),
                                  loop.getStep()};
    for (Operation *p : plan.producers) {
      llvm::SetVector<Operation *> slice;
      auto copy = cast<CopyOp>(p);
      SmallVector<Value> operands(copy.getSourceIndices());
      operands.push_back(copy.getSource());
      for (Value v : operands)
        (void)loop.collectRecomputableSlice(v, slice);
      for (Operation *s : slice)
        for (Value o : s->getOperands())
          if (!loop.getBody().isAncestor(o.getParentRegion()))
            outside.push_back(o);
      for (Value v : operands)
        if (!loop.getBody().isAncestor(v.getParentRegion()))
          outside.push_back(v);
    }
    // The producer starts at once: a tensor the program writes before
    // the loop (e.g. an earlier loop's output) cannot feed a copy.
    for (Operation *p : plan.producers) {
      Value src = cast<CopyOp>(p).getSource();
      for (Operation &before : entry) {
        if (&before == loop.getOperation())
          break;
        WalkResult w = before.walk([&](Operation *x) {
          if (!llvm::is_contained(x->getOperands(), src) ||
              isa<memref::DimOp>(x))
            return WalkResult::advance();
          if (auto c = dyn_cast<CopyOp>(x); c && c.getSource() == src)
            return WalkResult::advance();
          return WalkResult::interrupt();
        });
        if (w.wasInterrupted()) {
          whyNot = "a pipelined copy reads a tensor that the kernel writes "
                   "before the loop";
          return false;
        }
      }
    }
    for (Value v : outside)
      if (!isRecomputable(v, entry)) {
        whyNot = "a pipelined copy's bounds or indices depend on values the "
                 "producer warpgroup cannot recompute (loads or control "
                 "flow)";
        return false;
      }
  }
  return true;
}

/// The mbarriers (and the persistent form's tile slots) live in dynamic
/// shared memory after the buffers and the scratch area (run() gives the
/// views, marked kBarrierViewAttr, their final offsets), not in static
/// shared memory:
/// then a kernel has no static shared memory, its dynamic base is the
/// block's shared window (1024-byte aligned), and the buffers need no
/// alignment slack (createBuffers).
Value KernelLowering::barrierStorage(MemRefType type) {
  WS &ws = *specialized;
  int64_t bytes = numElements(type.getShape()) *
                  (type.getElementType().getIntOrFloatBitWidth() / 8);
  auto view = memref::ViewOp::create(b, loc, type, smem, cst(ws.barrierBytes),
                                     ValueRange{});
  view->setAttr(kBarrierViewAttr, b.getUnitAttr());
  ws.barrierBytes += llvm::alignTo(bytes, 8);
  return view;
}

Value KernelLowering::createMBarriers(int64_t count) {
  MLIRContext *ctx = b.getContext();
  auto type =
      ::mlir::nvgpu::MBarrierGroupType::get(ctx, workgroupSpace(ctx), count);
  Value words = barrierStorage(MemRefType::get(
      {count}, b.getI64Type(), MemRefLayoutAttrInterface(),
      workgroupSpace(ctx)));
  // NVGPUToNVVM converts a group to its memref's descriptor: the cast
  // folds away (reconcile-unrealized-casts).
  return UnrealizedConversionCastOp::create(b, loc, type, words).getResult(0);
}

void KernelLowering::splitRoles(Operation *firstBodyOp) {
  WS &ws = *specialized;
  ws.consumers = threads;
  MLIRContext *ctx = b.getContext();
  Block &entry = func.getBody().front();
  Operation *term = entry.getTerminator();
  loc = func.getLoc();
  b.setInsertionPoint(firstBodyOp);
  // The mbarriers: thread 0 initializes them before anything else.
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, cst(0));
  for (auto &[op, plan] : pipelines) {
    int64_t stages = plan.distance + 1;
    for (Operation *p : plan.producers) {
      Value full = createMBarriers(stages);
      Value empty = createMBarriers(stages);
      for (int64_t s = 0; s < stages; ++s) {
        ::mlir::nvgpu::MBarrierInitOp::create(
            b, loc, full, cst(ws.tma ? 1 : 2 * WS::kProducerThreads), cst(s),
            first);
        ::mlir::nvgpu::MBarrierInitOp::create(b, loc, empty, cst(threads),
                                              cst(s), first);
      }
      ws.barriers[p] = {full, empty};
    }
  }
  // The head copies: one stage each (two with doubleHeads).
  for (Operation *h : ws.headCopies) {
    int64_t stages = ws.headStages();
    Value full = createMBarriers(stages);
    Value empty = createMBarriers(stages);
    for (int64_t s = 0; s < stages; ++s) {
      ::mlir::nvgpu::MBarrierInitOp::create(b, loc, full, cst(1), cst(s),
                                            first);
      ::mlir::nvgpu::MBarrierInitOp::create(b, loc, empty, cst(threads),
                                            cst(s), first);
    }
    ws.barriers[h] = {full, empty};
  }
  // The persistent form's tile scheduler (PersistentTiles.cpp): two
  // slots for the next block's index, the producer thread filling them.
  if (ws.persistent) {
    ws.tileFull = createMBarriers(2);
    ws.tileEmpty = createMBarriers(2);
    for (int64_t s = 0; s < 2; ++s) {
      ::mlir::nvgpu::MBarrierInitOp::create(b, loc, ws.tileFull, cst(1),
                                            cst(s), first);
      ::mlir::nvgpu::MBarrierInitOp::create(b, loc, ws.tileEmpty,
                                            cst(threads), cst(s), first);
    }
    ws.tileSlots = barrierStorage(MemRefType::get(
        {2}, b.getI32Type(), MemRefLayoutAttrInterface(), workgroupSpace(ctx)));
  }
  // TMA completes the full barriers through the async proxy: the
  // initialization is made visible to it first (a kernel with wgmma also
  // gets this fence before every barrier, Lowering.cpp).
  if (ws.tma)
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  barrier(); // the whole block: before the roles part
  Value isConsumer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                            cst(threads));
  b.setInsertionPoint(term);
  auto roles = scf::IfOp::create(b, loc, TypeRange{}, isConsumer,
                                 /*withElseRegion=*/true);
  ws.consumerBlock = &roles.getThenRegion().front();
  ws.producerBlock = &roles.getElseRegion().front();
  // The program (everything after the buffers' setup) is the consumers'.
  ws.consumerBlock->getOperations().splice(
      Block::iterator(ws.consumerBlock->getTerminator()), entry.getOperations(),
      Block::iterator(firstBodyOp), Block::iterator(roles));
  b.setInsertionPointToStart(ws.producerBlock);
  ws.producerTid = arith::SubIOp::create(b, loc, tid, cst(threads));
}

SmallVector<Operation *> KernelLowering::collectHeadCopies() {
  SmallVector<Operation *> heads;
  Block &entry = func.getBody().front();
  for (Operation &op : entry) {
    if (auto loop = dyn_cast<PipelinedOp>(op); loop && pipelines.count(loop))
      break;
    auto copy = dyn_cast<CopyOp>(op);
    if (!copy || !isGlobalType(copy.getSource().getType()))
      continue;
    Value target = copy.getTarget(), source = copy.getSource();
    if (multiBuffered.count(target))
      continue;
    // The buffer is only read after it (a gemm operand, a copy's source),
    // so the consumers release it after its last reader.
    bool readOnly = llvm::all_of(target.getUsers(), [&](Operation *user) {
      if (user == copy.getOperation() || isa<AllocOp>(user))
        return true;
      if (auto g = dyn_cast<GemmOp>(user))
        return g.getC() != target;
      if (auto c = dyn_cast<CopyOp>(user))
        return c.getTarget() != target;
      return false;
    });
    // The producer issues it at once: nothing in the kernel writes the
    // tensor it reads.
    bool sourceRead = llvm::all_of(source.getUsers(), [&](Operation *user) {
      if (isa<memref::DimOp>(user))
        return true;
      auto c = dyn_cast<CopyOp>(user);
      return c && c.getSource() == source;
    });
    bool recomputable =
        llvm::all_of(copy.getSourceIndices(),
                     [&](Value v) { return isRecomputable(v, entry); });
    if (readOnly && sourceRead && recomputable)
      heads.push_back(copy);
  }
  return heads;
}

void KernelLowering::lowerHeadCopies() {
  WS &ws = *specialized;
  if (ws.headCopies.empty())
    return;
  OpBuilder::InsertionGuard guard(b);
  Location funcLoc = func.getLoc();
  Value ticks;
  // Per head copy and thread, how many times it was used modulo 2 x its
  // stages (once per block in the persistent form): the stage is n %
  // stages, its parity n / stages.
  llvm::DenseMap<Operation *, Value> counters;
  int64_t stages = ws.headStages();
  {
    b.setInsertionPointToStart(&func.getBody().front());
    loc = funcLoc;
    for (Operation *h : ws.headCopies) {
      Value counter = memref::AllocaOp::create(
          b, loc, MemRefType::get({1}, b.getIndexType()));
      memref::StoreOp::create(b, loc, cst(0), counter, ValueRange{cst(0)});
      counters[h] = counter;
    }
  }
  struct Use {
    Value n, slot, phase; // index, index, i1
  };
  auto readUse = [&](Value counter) {
    Value n = memref::LoadOp::create(b, loc, counter, ValueRange{cst(0)});
    if (stages == 1)
      return Use{n, cst(0),
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, n,
                                       cst(0))};
    return Use{n, arith::RemUIOp::create(b, loc, n, cst(stages)),
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, n,
                                     cst(stages))};
  };
  auto advance = [&](Value counter, const Use &use) {
    Value next = arith::AddIOp::create(b, loc, use.n, cst(1));
    Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        next, cst(2 * stages));
    memref::StoreOp::create(b, loc,
                            arith::SelectOp::create(b, loc, wraps, cst(0),
                                                    next),
                            counter, ValueRange{cst(0)});
  };
  // The producer's thread 0 issues them first, before the pipelines'
  // loads (lowerPipelinedSpecialized appends those after).
  b.setInsertionPoint(ws.producerBlock->getTerminator());
  loc = funcLoc;
  Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       ws.producerTid, cst(0));
  auto ifOp = scf::IfOp::create(b, loc, issuer, /*withElse=*/false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  ticks = cst(10000000);
  IRMapping mapping;
  for (Operation *h : ws.headCopies) {
    loc = h->getLoc();
    auto copy = cast<CopyOp>(h);
    auto [full, empty] = ws.barriers[h];
    const TmaCopyPlan &tma = ws.tmaCopies[h];
    const Buffer &buf = buffers[copy.getTarget()];
    Use use = readUse(counters[h]);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
    ::mlir::nvgpu::MBarrierTryWaitParityOp::create(
        b, loc, empty, arith::XOrIOp::create(b, loc, use.phase, one), ticks,
        use.slot);
    ::mlir::nvgpu::MBarrierArriveExpectTxOp::create(
        b, loc, full, cst(tma.bytes), use.slot, /*predicate=*/Value{});
    Value address = arith::AddIOp::create(
        b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem),
        arith::AddIOp::create(
            b, loc, cst(buf.sharedOffset),
            arith::MulIOp::create(b, loc, use.slot, cst(buf.stageBytes))));
    Value mbar = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
        ::mlir::nvgpu::MBarrierGetOp::create(b, loc, b.getI32Type(), full,
                                             use.slot)
            .getResult());
    SmallVector<Value> start;
    for (Value v : copy.getSourceIndices())
      start.push_back(recompute(b, v, ws.consumerBlock, mapping));
    emitTmaLoads(b, loc, tma, start, address, mbar);
    advance(counters[h], use);
  }
  // The consumers wait where the copy was and release the buffer after
  // its last reader at the top level (e.g. the loop whose gemms read it).
  // With two stages, every later reader of the buffer reads the stage
  // this use filled (its storage becomes that stage's view).
  for (Operation *h : ws.headCopies) {
    loc = h->getLoc();
    Value target = cast<CopyOp>(h).getTarget();
    auto [full, empty] = ws.barriers[h];
    b.setInsertionPoint(h);
    Use use = readUse(counters[h]);
    ::mlir::nvgpu::MBarrierTryWaitParityOp::create(b, loc, full, use.phase,
                                                   cst(10000000), use.slot);
    if (stages > 1)
      buffers[target].storage = stageView(buffers[target], use.slot);
    advance(counters[h], use);
    Operation *last = h;
    for (Operation &op : llvm::make_range(std::next(h->getIterator()),
                                          ws.consumerBlock->end()))
      if (usesValue(&op, target))
        last = &op;
    b.setInsertionPointAfter(last);
    ::mlir::nvgpu::MBarrierArriveOp::create(b, loc, empty, use.slot);
    h->erase();
  }
}

std::optional<GemmRotation>
KernelLowering::planGemmRotation(PipelinedOp op, const PipelinePlan &plan) {
  SmallVector<Operation *> consumers;
  for (Operation &inner : op.getBodyBlock().without_terminator())
    if (!llvm::is_contained(plan.producers, &inner))
      consumers.push_back(&inner);
  if (consumers.size() < 2)
    return std::nullopt;
  auto last = dyn_cast<GemmOp>(consumers.back());
  if (!last || !wgmmaPlans.count(last) || last.getClear())
    return std::nullopt;
  GemmRotation r;
  r.last = last;
  for (Operation *c : consumers)
    if (auto g = dyn_cast<GemmOp>(c); g && g != last && wgmmaPlans.count(g)) {
      r.first = g;
      break;
    }
  if (!r.first)
    return std::nullopt;
  // G2's B is a stage of this loop, read by G2 alone.
  r.stage = last.getB();
  for (Operation *p : plan.producers)
    if (cast<CopyOp>(p).getTarget() == r.stage)
      r.producer = p;
  if (!r.producer)
    return std::nullopt;
  Value c1 = r.first.getC(), c2 = last.getC(), a2 = last.getA();
  // A2 is cleared before the loop (see the rotated loop): a fragment that
  // nothing before the loop reads.
  Buffer *a2Buffer = lookup(a2);
  if (!a2Buffer || a2Buffer->scope != MemoryScope::fragment)
    return std::nullopt;
  for (Operation *user : a2.getUsers()) {
    Operation *at = op->getBlock()->findAncestorOpInBlock(*user);
    if (at && at != op.getOperation() && at->isBeforeInBlock(op) &&
        !isa<AllocOp>(user))
      return std::nullopt;
  }
  if (usesValue(r.first, c2) || usesValue(r.first, a2) ||
      usesValue(last, c1) || usesValue(last, r.first.getA()))
    return std::nullopt;
  bool afterFirst = false;
  for (Operation *c : consumers) {
    if (c == last.getOperation())
      break;
    if (c == r.first.getOperation()) {
      afterFirst = true;
      continue;
    }
    if (usesValue(c, r.stage))
      return std::nullopt;
    bool touches = usesValue(c, c2) || usesValue(c, a2);
    // Before G1: it would now run before G2 of the previous iteration.
    if (touches && !afterFirst)
      return std::nullopt;
    if (touches && !r.waitAt)
      r.waitAt = c;
  }
  return r;
}

LogicalResult KernelLowering::lowerPipelinedSpecialized(PipelinedOp op) {
  WS &ws = *specialized;
  const PipelinePlan &plan = pipelines.find(op)->second;
  int64_t D = plan.distance;
  loc = op.getLoc();
  Block &body = op.getBodyBlock();
  // Persistent form: where the loop's (slot, phase) carry over from one
  // tile to the next, per thread (LLVM keeps it in registers).
  Value counters;
  if (ws.persistent) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&func.getBody().front());
    counters = memref::AllocaOp::create(
        b, loc, MemRefType::get({2}, b.getIndexType()));
    memref::StoreOp::create(b, loc, cst(0), counters, ValueRange{cst(0)});
    memref::StoreOp::create(b, loc, cst(0), counters, ValueRange{cst(1)});
  }
  // A loop over [0, n) carrying the stage (slot) and its phase bit; `fn`
  // fills the body before the yield. The loop counts and carries its slot
  // in 32 bits (ptxas compares and selects 64-bit values in two
  // instructions each, in a loop whose issue slots the consumers' softmax
  // needs); `fn` gets both as index. A loop of 2^31 or more tiles is
  // beyond any launch.
  Type i32T = b.getI32Type();
  auto c32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32T, v).getResult();
  };
  auto toI32 = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, i32T, v).getResult();
  };
  auto toIndex = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v)
        .getResult();
  };
  auto stageLoop = [&](Value n,
                       function_ref<void(Value i, Value slot, Value phase)> fn)
      -> scf::ForOp {
    Value slot0 = c32(0);
    Value phase0 = arith::ConstantIntOp::create(b, loc, 0, 1);
    if (counters) {
      slot0 = toI32(
          memref::LoadOp::create(b, loc, counters, ValueRange{cst(0)}));
      phase0 = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          memref::LoadOp::create(b, loc, counters, ValueRange{cst(1)}),
          cst(0));
    }
    auto loop = scf::ForOp::create(b, loc, c32(0), toI32(n), c32(1),
                                   ValueRange{slot0, phase0});
    if (counters) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointAfter(loop);
      memref::StoreOp::create(b, loc, toIndex(loop.getResult(0)), counters,
                              ValueRange{cst(0)});
      Value phase = arith::SelectOp::create(b, loc, loop.getResult(1), cst(1),
                                            cst(0));
      memref::StoreOp::create(b, loc, phase, counters, ValueRange{cst(1)});
    }
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value slot = loop.getRegionIterArgs()[0];
    Value phase = loop.getRegionIterArgs()[1];
    Value wraps =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot, c32(D));
    Value nextSlot = arith::SelectOp::create(
        b, loc, wraps, c32(0), arith::AddIOp::create(b, loc, slot, c32(1)));
    Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value nextPhase = arith::SelectOp::create(
        b, loc, wraps, arith::XOrIOp::create(b, loc, phase, one), phase);
    auto yield = scf::YieldOp::create(b, loc, ValueRange{nextSlot, nextPhase});
    b.setInsertionPoint(yield);
    fn(toIndex(loop.getInductionVar()), toIndex(slot), phase);
    return loop;
  };
  // The stage and phase of the iteration before the one at (slot, phase),
  // computed in 32 bits (the index casts fold away in LLVM).
  auto previousStage = [&](Value slot, Value phase) {
    Value s = toI32(slot);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, c32(0));
    Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value prevSlot = arith::SelectOp::create(
        b, loc, first, c32(D), arith::SubIOp::create(b, loc, s, c32(1)));
    Value prevPhase = arith::SelectOp::create(
        b, loc, first, arith::XOrIOp::create(b, loc, phase, one), phase);
    return std::make_pair(toIndex(prevSlot), prevPhase);
  };

  // The producer's loop, at the end of the producer block (first: it
  // clones the body's pure index arithmetic before the consumers' loop
  // takes the body).
  b.setInsertionPoint(ws.producerBlock->getTerminator());
  if (ws.tma) {
    // TMA: one thread issues every load.
    Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         ws.producerTid, cst(0));
    auto ifOp = scf::IfOp::create(b, loc, issuer, /*withElse=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  IRMapping outer;
  auto onProducer = [&](Value v) {
    return recompute(b, v, ws.consumerBlock, outer);
  };
  Value lb = onProducer(op.getLowerBound());
  Value st = onProducer(op.getStep());
  Value pn = tripCount(lb, onProducer(op.getUpperBound()), st);
  Value producerTicks = cst(10000000);
  SmallVector<SmallVector<Operation *>> slices;
  for (Operation *p : plan.producers) {
    SmallVector<Operation *> sorted = producerSlice(op, p);
    // Their operands from outside the loop, recomputed once.
    for (Operation *s : sorted)
      for (Value o : s->getOperands())
        if (!op.getBody().isAncestor(o.getParentRegion()))
          (void)onProducer(o);
    for (Value o : cast<CopyOp>(p).getSourceIndices())
      if (!op.getBody().isAncestor(o.getParentRegion()))
        (void)onProducer(o);
    slices.push_back(std::move(sorted));
  }
  stageLoop(pn, [&](Value j, Value slot, Value phase) {
    Value iv = arith::AddIOp::create(b, loc, lb,
                                     arith::MulIOp::create(b, loc, j, st));
    IRMapping mapping = outer;
    mapping.map(op.getInductionVar(), iv);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value released = arith::XOrIOp::create(b, loc, phase, one);
    for (auto [p, slice] : llvm::zip(plan.producers, slices)) {
      auto [full, empty] = ws.barriers[p];
      ::mlir::nvgpu::MBarrierTryWaitParityOp::create(b, loc, empty, released,
                                                     producerTicks, slot);
      for (Operation *s : slice)
        if (!mapping.contains(s->getResult(0)))
          b.clone(*s, mapping);
      Value target = cast<CopyOp>(p).getTarget();
      if (ws.tma) {
        const TmaCopyPlan &tma = ws.tmaCopies[p];
        ::mlir::nvgpu::MBarrierArriveExpectTxOp::create(
            b, loc, full, cst(tma.bytes), slot, /*predicate=*/Value{});
        const Buffer &buf = buffers[target];
        Value stage = arith::AddIOp::create(
            b, loc,
            memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem),
            arith::AddIOp::create(
                b, loc, cst(buf.sharedOffset),
                arith::MulIOp::create(b, loc, slot, cst(buf.stageBytes))));
        Value addr = ::mlir::nvgpu::MBarrierGetOp::create(
            b, loc, b.getI32Type(), full, slot);
        Value mbar = LLVM::IntToPtrOp::create(
            b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), addr);
        SmallVector<Value> start;
        for (Value v : cast<CopyOp>(p).getSourceIndices())
          start.push_back(mapping.lookupOrDefault(v));
        emitTmaLoads(b, loc, tma, start, stage, mbar);
        continue;
      }
      Value view = stageView(buffers[target], slot);
      Operation *c = b.clone(*p, mapping);
      asyncCopies.insert(c);
      ws.producerCopies.insert(c);
      storageOverrides[c].push_back({target, view});
      Value addr = ::mlir::nvgpu::MBarrierGetOp::create(
          b, loc, b.getI32Type(), full, slot);
      Value ptr = LLVM::IntToPtrOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), addr);
      NVVM::CpAsyncMBarrierArriveOp::create(b, loc, ptr, /*noinc=*/true);
      ::mlir::nvgpu::MBarrierArriveOp::create(b, loc, full, slot);
    }
  });
  // The consumers' loop, in place of `op`.
  b.setInsertionPoint(op);
  // Rotation of the last gemm into the next iteration (planGemmRotation).
  std::optional<GemmRotation> rotation = planGemmRotation(op, plan);
  // Ping-pong of a rotated loop with two consumer warpgroups
  // (FlashAttention-3's inter-warpgroup schedule): warpgroup g waits for
  // its turn (named barrier 2 + g) before issuing G1 and G2 and hands the
  // turn over (barrier 3 - g) right after issuing them, so the tensor cores
  // run one warpgroup's pair while the other computes its softmax. Each
  // warpgroup takes one turn per iteration.
  bool turns = rotation && pingPong && ws.consumers == 256;
  Value turnWg, turnMine, turnOther, turnCount;
  auto onWarpgroup = [&](int64_t g, function_ref<void()> fn) {
    Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     turnWg, i32(g));
    auto ifOp = scf::IfOp::create(b, loc, is, /*withElse=*/false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    fn();
  };
  if (turns) {
    // Broadcast from lane 0: ptxas then knows the warpgroup index is
    // uniform in the warp, so the branches on it below do not make the
    // values that flow through them divergent (in the persistent form, the
    // pipelines' stage counters: their descriptor arithmetic would leave
    // the uniform datapath).
    turnWg = uniformWarpgroup();
    turnMine = arith::AddIOp::create(b, loc, turnWg, i32(2));
    turnOther = arith::SubIOp::create(b, loc, i32(3), turnWg);
    turnCount = i32(256);
    // Warpgroup 0 goes first: warpgroup 1 hands it the first turn.
    onWarpgroup(1, [&] {
      NVVM::BarrierArriveOp::create(b, loc, i32(2), turnCount);
    });
  }
  Value n = tripCount(op.getLowerBound(), op.getUpperBound(), op.getStep());
  Value ticks = cst(10000000);
  // cp.async writes through the generic proxy; TMA through the async one,
  // which wgmma reads.
  auto fenceProxy = [&] {
    if (!wgmmaPlans.empty() && !ws.tma)
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
  };
  // A2 of the rotated gemm is read once before the program writes it
  // (G2 of iteration -1): zero, so that it adds nothing.
  if (rotation)
    ClearOp::create(b, loc, rotation->last.getA());
  scf::ForOp consumerLoop = stageLoop(n, [&](Value i, Value slot, Value phase) {
    Value iv = arith::AddIOp::create(
        b, loc, op.getLowerBound(),
        arith::MulIOp::create(b, loc, i, op.getStep()));
    llvm::DenseMap<Value, Value> views;
    for (Operation *p : plan.producers) {
      Value target = cast<CopyOp>(p).getTarget();
      views[target] = stageView(buffers[target], slot);
    }
    Operation *yield = b.getInsertionBlock()->getTerminator();
    SmallVector<Operation *> consumers;
    for (Operation &inner : body.without_terminator())
      if (!llvm::is_contained(plan.producers, &inner))
        consumers.push_back(&inner);
    for (Operation *c : consumers) {
      c->moveBefore(yield);
      for (Value v : c->getOperands())
        if (Value view = views.lookup(v))
          storageOverrides[c].push_back({v, view});
    }
    auto uses = [](Operation *user, Value target) {
      return user
          ->walk([&](Operation *x) {
            return llvm::is_contained(x->getOperands(), target)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
    };
    // Rotation: `last` (G2) of iteration i - 1 is issued right after
    // `first` (G1) of iteration i, both asynchronously:
    //   G1_i; wait full[V][i-1]; G2_{i-1}
    //   wgmma.wait_group 1            -> G1_i done (C1 fenced)
    //   ... the ops that touch neither C2 nor A2 (softmax) ...
    //   wgmma.wait_group 0            -> G2_{i-1} done (C2 fenced)
    //   if (i > 0) release empty[V][i-1]
    //   ... the rest (what touches C2 / A2) ...
    // and after the loop G2_{n-1}, synchronous. G2 is unconditional (a
    // branch around it would merge its accumulators before the wait, and
    // ptxas then waits right there): in iteration 0 it adds 0 * V_0, A2
    // being cleared before the loop.
    Operation *wait1 = nullptr;
    if (rotation) {
      GemmRotation &r = *rotation;
      b.setInsertionPointAfter(r.first);
      Value hasPrev = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ugt, toI32(i), c32(0));
      auto [prevSlot, prevPhase] = previousStage(slot, phase);
      Value readSlot = arith::SelectOp::create(b, loc, hasPrev, prevSlot, slot);
      Value readPhase =
          arith::SelectOp::create(b, loc, hasPrev, prevPhase, phase);
      auto [full, empty] = ws.barriers[r.producer];
      ::mlir::nvgpu::MBarrierTryWaitParityOp::create(b, loc, full, readPhase,
                                                     ticks, readSlot);
      fenceProxy();
      Value readView = stageView(buffers[r.stage], readSlot);
      r.last->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
      for (auto &[alloc, view] : storageOverrides[r.last])
        if (alloc == r.stage)
          view = readView;
      b.setInsertionPointAfter(r.last);
      asyncWgmma.insert(r.first);
      asyncWgmma.insert(r.last);
      wait1 = NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
      wgmmaWaitFences[wait1] = {r.first.getC()};
      b.setInsertionPoint(r.waitAt ? r.waitAt : yield);
      Operation *wait0 = NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      wgmmaWaitFences[wait0] = {r.last.getC()};
      auto release = scf::IfOp::create(b, loc, hasPrev, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&release.getThenRegion().front());
      ::mlir::nvgpu::MBarrierArriveOp::create(b, loc, empty, prevSlot);
    }
    for (Operation *p : plan.producers) {
      if (rotation && p == rotation->producer)
        continue;
      Value target = cast<CopyOp>(p).getTarget();
      auto [full, empty] = ws.barriers[p];
      Operation *firstUse = nullptr, *lastUse = nullptr;
      for (Operation *c : consumers)
        if (uses(c, target)) {
          firstUse = firstUse ? firstUse : c;
          lastUse = c;
        }
      b.setInsertionPoint(firstUse ? firstUse : yield);
      ::mlir::nvgpu::MBarrierTryWaitParityOp::create(b, loc, full, phase,
                                                     ticks, slot);
      fenceProxy();
      // An asynchronous gemm reads the stage until its wait.
      if (lastUse && rotation && lastUse == rotation->first.getOperation())
        b.setInsertionPointAfter(wait1);
      else if (lastUse)
        b.setInsertionPointAfter(lastUse);
      else
        b.setInsertionPoint(yield);
      ::mlir::nvgpu::MBarrierArriveOp::create(b, loc, empty, slot);
    }
    if (turns) {
      b.setInsertionPoint(rotation->first);
      NVVM::BarrierOp::create(b, loc, TypeRange{}, turnMine, turnCount,
                              /*reductionOp=*/{},
                              /*reductionPredicate=*/Value{});
      b.setInsertionPointAfter(rotation->last);
      NVVM::BarrierArriveOp::create(b, loc, turnOther, turnCount);
    }
    b.setInsertionPoint(yield);
    body.getArgument(0).replaceAllUsesWith(iv);
  });
  // The rotated loop's last G2, synchronous, on the stage of iteration n-1.
  if (rotation) {
    Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, n,
                                      cst(0));
    auto ifAny = scf::IfOp::create(b, loc, any, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifAny.getThenRegion().front());
    auto [lastSlot, lastPhase] = previousStage(
        toIndex(consumerLoop.getResult(0)), consumerLoop.getResult(1));
    auto [full, empty] = ws.barriers[rotation->producer];
    ::mlir::nvgpu::MBarrierTryWaitParityOp::create(b, loc, full, lastPhase,
                                                   ticks, lastSlot);
    fenceProxy();
    Value lastView = stageView(buffers[rotation->stage], lastSlot);
    Operation *tail = b.clone(*rotation->last);
    storageOverrides[tail] = storageOverrides[rotation->last];
    for (auto &[alloc, view] : storageOverrides[tail])
      if (alloc == rotation->stage)
        view = lastView;
    ::mlir::nvgpu::MBarrierArriveOp::create(b, loc, empty, lastSlot);
  }
  // Warpgroup 1's last hand-over (or its first, when the loop is empty) is
  // still pending on barrier 2: warpgroup 0 takes it, so that no arrival
  // is left behind for a later loop.
  if (turns)
    onWarpgroup(0, [&] {
      NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(2), turnCount,
                              /*reductionOp=*/{},
                              /*reductionPredicate=*/Value{});
    });

  op.erase();
  return success();
}

/// Blocks per multiprocessor for one consumer warpgroup of the TMA form.
/// Left to ptxas, such a 256-thread block takes the registers its code
/// needs (FlashAttention's 64-row query tile: 125 a thread at head dim 64,
/// 163 at 128; ptxas -v), i.e. two blocks or one to a multiprocessor, each
/// with one warpgroup issuing tensor-core work. Compiled for k blocks
/// (nvvm.minctasm: 65536 / k / 256 registers at launch), the producer
/// warpgroup, whose one thread issues the TMA loads, gives all but 24 of
/// its registers to the consumers through setmaxnreg (k = 2: 232, k = 3:
/// 136), and a multiprocessor runs k consumer warpgroups whose softmax and
/// loads overlap each other's gemms (H200, 64x64 tiles: head dim 64 at 3
/// blocks 0.72 -> 0.87x SDPA, 128 at 2 blocks 0.57 -> 0.75x;
/// docs/performance.md). The largest k up to 3 is taken whose blocks fit
/// the multiprocessor's shared memory (the chip's per-block maximum plus
/// the 1 KiB it reserves per block) and whose consumer budget covers the
/// estimate of what the consumers need (their fragments and local arrays
/// plus kRegisterOverhead for addresses, indices and the gemms' operands),
/// and only when that is more blocks than the same estimate gives without
/// a cap (a cap must not cost blocks). Not for the persistent form (its
/// grid is one block per multiprocessor) nor the cp.async producer (whose
/// 128 threads keep 96 registers each).
void KernelLowering::chooseBlocksPerSm(int64_t bytes) {
  WS &ws = *specialized;
  ws.ctasPerSm = 1;
  if (ws.consumers != 128 || !ws.tma || ws.persistent)
    return;
  SharedMemoryLimit limit = sharedMemoryLimit(chip);
  if (!limit.known)
    return;
  constexpr int64_t kReservedPerBlock = 1024;
  constexpr int64_t kRegisterOverhead = 40;
  constexpr int64_t kMaxBlocks = 3;
  int64_t needed = kRegisterOverhead;
  for (auto &[value, buf] : buffers) {
    if (buf.scope == MemoryScope::shared)
      continue;
    int64_t elements = buf.scope == MemoryScope::fragment
                           ? buf.registers
                           : numElements(buf.type.getShape());
    needed += llvm::divideCeil(
        elements * buf.type.getElementTypeBitWidth(), 32);
  }
  int64_t threads = ws.consumers + WS::kProducerThreads;
  int64_t bySharedMemory =
      (limit.perBlock + kReservedPerBlock) / (bytes + kReservedPerBlock);
  int64_t uncapped = std::min<int64_t>(
      bySharedMemory, 65536 / (llvm::alignTo(needed, 8) * threads));
  for (int64_t k = std::min(bySharedMemory, kMaxBlocks); k > uncapped; --k) {
    auto [perThread, budget] = ws.registerBudget(k);
    if (budget > perThread && budget >= needed) {
      ws.ctasPerSm = k;
      return;
    }
  }
}

void KernelLowering::finishWarpSpecialization() {
  WS &ws = *specialized;
  MLIRContext *ctx = b.getContext();
  loc = func.getLoc();
  // Block barriers of the program synchronize the consumers only.
  SmallVector<gpu::BarrierOp> bars;
  ws.consumerBlock->walk([&](gpu::BarrierOp bar) { bars.push_back(bar); });
  for (gpu::BarrierOp bar : bars) {
    b.setInsertionPoint(bar);
    NVVM::BarrierOp::create(b, bar.getLoc(), TypeRange{}, i32(1),
                            i32(ws.consumers), /*reductionOp=*/{},
                            /*reductionPredicate=*/Value{});
    bar.erase();
  }
  // The producer's copies still in flight at its end: the thread commits
  // them as a group and waits for it before it exits (cp.async.wait_all).
  if (!ws.tma) {
    b.setInsertionPoint(ws.producerBlock->getTerminator());
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  }
  int64_t total = ws.consumers + WS::kProducerThreads;
  int64_t producerRegs =
      ws.tma ? WS::kTmaProducerRegisters : WS::kProducerRegisters;
  auto [perThread, budget] = ws.registerBudget();
  if (budget > perThread) {
    auto set = [&](Block *block, int64_t regs,
                   NVVM::SetMaxRegisterAction act) {
      b.setInsertionPointToStart(block);
      NVVM::SetMaxRegisterOp::create(
          b, loc, b.getI32IntegerAttr(regs),
          NVVM::SetMaxRegisterActionAttr::get(ctx, act));
    };
    set(ws.producerBlock, producerRegs, NVVM::SetMaxRegisterAction::decrease);
    set(ws.consumerBlock, budget, NVVM::SetMaxRegisterAction::increase);
    // The register cap setmaxnreg needs: ptxas allocates perThread at
    // launch, so that ctasPerSm blocks fit.
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  b.getI32IntegerAttr(ws.ctasPerSm));
  }
  func.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {(int32_t)total, 1, 1}));
}
