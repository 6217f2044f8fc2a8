//===- PersistentTiles.cpp - warp-specialized CTAs that loop over blocks --===//
//
// The persistent form of the TMA-producer variant (WarpSpecialize.cpp),
// built when its block holds a multiprocessor alone (setmaxnreg takes the
// register file): the runtime launches min(#SMs, blocks) CTAs (metadata
// "grid": "sms") with an 8-byte zeroed workspace (two counters: blocks
// claimed, CTAs done), and each CTA runs the launch's blocks one after the
// other, in the order they are claimed:
//
//   producer thread: t = cta
//                    loop: publish t in slot s (wait tileEmpty[s], store,
//                                               arrive tileFull[s])
//                          if t >= blocks: break
//                          issue block t's loads (head copies, pipelines)
//                          t = ctas + atomicAdd(claimed, 1)
//                    if atomicAdd(done, 1) == ctas - 1: zero both counters
//   consumers:       loop: t = slot s (wait tileFull[s], load,
//                                      arrive tileEmpty[s])
//                          if t >= blocks: break
//                          program of block t (block indices from t, x
//                          fastest); named barrier 1
//
// The other producer threads exit after setmaxnreg. Each pipelined loop's
// (slot, phase) and each head copy's phase continue from one block to the
// next, so the producer fills the stages of the next block while the
// consumers finish this one: its Q tile and first K/V tiles load during
// this block's last iterations and epilogue, and the CTA's setup is paid
// once per multiprocessor. The consumers' barrier at the end of a block
// keeps one warpgroup from writing the next block's shared buffers while
// another still reads this block's.
//
// Claiming blocks in order, as the hardware's block scheduler issues them,
// keeps the CTAs on neighbouring blocks (the same heads' K/V tiles in L2)
// whatever each block's work; a static round-robin (block cta + k * ctas)
// lets CTAs with short blocks run ahead: FlashAttention causal at S = 16k
// ran 12-20% slower that way than without persistence (H200,
// docs/performance.md). The last CTA to finish zeroes the counters, so a
// workspace serves every launch of its stream.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "tile/Conversion/LaunchUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

namespace {
/// A position in the ring of two tile slots: (slot, phase).
struct SlotState {
  Value slot, phase; // index, i1
};
} // namespace

LogicalResult KernelLowering::makePersistent(LaunchOp launch,
                                             IRMapping &args) {
  WarpSpecializedKernel &ws = *specialized;
  MLIRContext *ctx = b.getContext();
  Operation *roles = ws.consumerBlock->getParentOp();
  OpBuilder::InsertionGuard guard(b);
  loc = launch.getLoc();

  // The launch's grid, recomputed from the arguments (not from what the
  // body's clone took from the prelude: that now lives in the consumers'
  // block).
  b.setInsertionPoint(roles);
  IRMapping mapping;
  auto host = launch->getParentOfType<func::FuncOp>();
  for (BlockArgument a : host.getArguments())
    mapping.map(a, args.lookup(a));
  SmallVector<Value> grid;
  for (Value v : launch.getGridSizes()) {
    if (failed(cloneComputation(b, v, mapping, launch)))
      return failure();
    grid.push_back(mapping.lookup(v));
  }
  Value blocks = grid.front();
  for (Value g : ArrayRef(grid).drop_front())
    blocks = arith::MulIOp::create(b, loc, blocks, g);

  // The workspace: the last parameter, after the tensor maps.
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  unsigned at = func.getNumArguments();
  if (failed(func.insertArgument(at, ptrType, DictionaryAttr::get(ctx),
                                 func.getLoc())))
    return func.emitError("cannot add the persistent form's workspace");
  Value claimed = func.getArgument(at);
  Value done = LLVM::GEPOp::create(b, loc, ptrType, b.getI32Type(), claimed,
                                   ArrayRef<LLVM::GEPArg>{1});

  auto toI32 = [&](Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index)
        .getResult();
  };
  auto toIndex = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v)
        .getResult();
  };
  auto next = [&](SlotState s) {
    Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value wraps =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s.slot, cst(1));
    return SlotState{
        arith::SubIOp::create(b, loc, cst(1), s.slot),
        arith::SelectOp::create(b, loc, wraps,
                                arith::XOrIOp::create(b, loc, s.phase, one),
                                s.phase)};
  };
  Value ticks = cst(10000000);
  // The linear CTA index and the CTA count.
  auto ctaAndCount = [&]() -> std::pair<Value, Value> {
    SmallVector<Value> id, dim;
    for (gpu::Dimension d :
         {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
      id.push_back(gpu::BlockIdOp::create(b, loc, d));
      dim.push_back(gpu::GridDimOp::create(b, loc, d));
    }
    Value cta = arith::AddIOp::create(
        b, loc, id[0],
        arith::MulIOp::create(
            b, loc, dim[0],
            arith::AddIOp::create(
                b, loc, id[1], arith::MulIOp::create(b, loc, dim[1], id[2]))));
    Value ctas = arith::MulIOp::create(
        b, loc, dim[0], arith::MulIOp::create(b, loc, dim[1], dim[2]));
    return {cta, ctas};
  };
  // A loop over the blocks a role receives: `first` the first block's
  // index, `advance` gives the next one (and the next slot state); the
  // role's ops from `begin` to `end` become the body, run for block t.
  auto blockLoop = [&](Block *role, Block::iterator begin,
                       Block::iterator end, Value first, SlotState s0,
                       function_ref<std::pair<Value, SlotState>(SlotState)>
                           advance) -> scf::WhileOp {
    Type index = b.getIndexType(), i1 = b.getI1Type();
    auto loop = scf::WhileOp::create(b, loc, TypeRange{index, index, i1},
                                     ValueRange{first, s0.slot, s0.phase});
    Block *before = b.createBlock(&loop.getBefore(), {}, {index, index, i1},
                                  {loc, loc, loc});
    Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       before->getArgument(0), blocks);
    scf::ConditionOp::create(b, loc, more, before->getArguments());
    Block *after = b.createBlock(&loop.getAfter(), {}, {index, index, i1},
                                 {loc, loc, loc});
    auto yield = scf::YieldOp::create(b, loc, ValueRange{});
    after->getOperations().splice(Block::iterator(yield), role->getOperations(),
                                  begin, end);
    // The block this iteration runs: x fastest.
    b.setInsertionPointToStart(after);
    SmallVector<Value> blockIdx =
        delinearizeBlock(b, loc, after->getArgument(0), grid);
    Value zero = cst(0), one = cst(1);
    SmallVector<Operation *> reads;
    after->walk([&](Operation *op) {
      if (isa<gpu::BlockIdOp, gpu::GridDimOp>(op))
        reads.push_back(op);
    });
    for (Operation *op : reads) {
      bool isId = isa<gpu::BlockIdOp>(op);
      auto d = static_cast<unsigned>(
          isId ? cast<gpu::BlockIdOp>(op).getDimension()
               : cast<gpu::GridDimOp>(op).getDimension());
      Value v = d < grid.size() ? (isId ? blockIdx[d] : grid[d])
                                : (isId ? zero : one);
      op->getResult(0).replaceAllUsesWith(v);
      op->erase();
    }
    b.setInsertionPoint(yield);
    auto [t, s] = advance(
        SlotState{after->getArgument(1), after->getArgument(2)});
    yield->setOperands(ValueRange{t, s.slot, s.phase});
    b.setInsertionPointAfter(loop);
    return loop;
  };
  auto firstAfterSetmaxnreg = [](Block *role) {
    auto it = role->begin();
    while (isa<NVVM::SetMaxRegisterOp>(*it))
      ++it;
    return it;
  };
  Value zeroSlot = cst(0);
  Value phase0 = arith::ConstantIntOp::create(b, loc, 0, 1);

  // The consumers.
  {
    Block *role = ws.consumerBlock;
    auto begin = firstAfterSetmaxnreg(role);
    b.setInsertionPoint(&*begin);
    auto receive = [&](SlotState s) -> std::pair<Value, SlotState> {
      ::mlir::nvgpu::MBarrierTryWaitParityOp::create(b, loc, ws.tileFull,
                                                     s.phase, ticks, s.slot);
      Value t = toIndex(
          memref::LoadOp::create(b, loc, ws.tileSlots, ValueRange{s.slot}));
      ::mlir::nvgpu::MBarrierArriveOp::create(b, loc, ws.tileEmpty, s.slot);
      return {t, next(s)};
    };
    auto [t0, s1] = receive(SlotState{zeroSlot, phase0});
    blockLoop(role, begin, Block::iterator(role->getTerminator()), t0, s1,
              [&](SlotState s) {
                NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(1),
                                        i32(ws.consumers), /*reductionOp=*/{},
                                        /*reductionPredicate=*/Value{});
                return receive(s);
              });
  }
  // The producer: its thread 0 alone (a TMA producer issues from it).
  {
    Block *role = ws.producerBlock;
    auto begin = firstAfterSetmaxnreg(role);
    b.setInsertionPoint(&*begin);
    // (producerTid is defined in the block, after `begin`.)
    Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         tid, cst(ws.consumers));
    auto ifOp = scf::IfOp::create(b, loc, issuer, /*withElse=*/false);
    Block *then = ifOp.thenBlock();
    then->getOperations().splice(Block::iterator(then->getTerminator()),
                                 role->getOperations(), std::next(ifOp->getIterator()),
                                 Block::iterator(role->getTerminator()));
    b.setInsertionPointToStart(then);
    // Plain values, not structured bindings: the lambdas below capture them.
    auto [ctaValue, ctasValue] = ctaAndCount();
    Value cta = ctaValue, ctas = ctasValue;
    auto publish = [&](Value t, SlotState s) {
      Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
      ::mlir::nvgpu::MBarrierTryWaitParityOp::create(
          b, loc, ws.tileEmpty, arith::XOrIOp::create(b, loc, s.phase, one),
          ticks, s.slot);
      memref::StoreOp::create(b, loc, toI32(t), ws.tileSlots,
                              ValueRange{s.slot});
      ::mlir::nvgpu::MBarrierArriveOp::create(b, loc, ws.tileFull, s.slot);
      return next(s);
    };
    SlotState s1 = publish(cta, SlotState{zeroSlot, phase0});
    // The next block is claimed once this one's loads are issued (about
    // one iteration before its consumers finish): claimed at its start
    // instead, FlashAttention ran 2-7% slower (H200).
    auto loop = blockLoop(
        then, Block::iterator(b.getInsertionPoint()),
        Block::iterator(then->getTerminator()), cta, s1, [&](SlotState s) {
          Value got = LLVM::AtomicRMWOp::create(
              b, loc, LLVM::AtomicBinOp::add, claimed, i32(1),
              LLVM::AtomicOrdering::monotonic);
          Value t = arith::AddIOp::create(b, loc, ctas, toIndex(got));
          return std::make_pair(t, publish(t, s));
        });
    // Out of blocks: the last CTA to get here (all claims made: each CTA
    // counts itself after its last one) zeroes the counters.
    // Fences, not the atomic's ordering: NVPTX emits every atomicrmw as a
    // relaxed atom. (This CTA's claims happen before its count; the
    // last count's reader sees every CTA's claims before it resets.)
    b.setInsertionPointAfter(loop);
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
    Value before = LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add,
                                             done, i32(1),
                                             LLVM::AtomicOrdering::monotonic);
    Value last = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, toIndex(before),
        arith::SubIOp::create(b, loc, ctas, cst(1)));
    auto reset = scf::IfOp::create(b, loc, last, /*withElse=*/false);
    b.setInsertionPoint(reset.thenBlock()->getTerminator());
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
    LLVM::StoreOp::create(b, loc, i32(0), claimed);
    LLVM::StoreOp::create(b, loc, i32(0), done);
  }
  return success();
}
