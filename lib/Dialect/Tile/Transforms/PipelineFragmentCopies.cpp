//===- PipelineFragmentCopies.cpp - tile-pipeline-fragment-copies pass ----===//
//
// Register double buffering of the global -> fragment copies of a
// `tile.pipelined` loop with `stages = S >= 2`: the copy of iteration
// i + S - 1 is issued before the consumers of iteration i run, so that the
// loads of the next chunk are in flight while the current one is used. The
// cp.async pipeline of the GPU lowerings covers only global -> shared
// producers; this pass is its register twin and is target independent (a
// rewrite of tile IR into tile IR, before layout inference, so the extra
// fragments get the same layout as the original).
//
// A producer is a `tile.copy` directly in the loop body whose
//   * source is global memory and target a fragment `tile.alloc` of the
//     enclosing launch (outside the loop);
//   * source memref and indices are recomputable ahead: loop invariants,
//     the induction variable, and side-effect-free ops of the body over
//     those;
//   * target is used (read, or written in place) only inside the loop,
//     after the copy in the iteration (so no value of it crosses
//     iterations);
// and the loop writes no global memory the copy may read: the body's
// global writes go to kernel arguments other than the copy's source and
// not marked `tile.inplace` (the runtime refuses overlapping arguments
// otherwise), and no op has a write effect on an unknown value or
// undeclared effects. The data a look-ahead copy reads is then what the
// serial loop reads (a normalization's second pass, reading X and writing
// Y, is pipelined). Loops with global ->
// shared copies are left to the cp.async pipeline, and loops with explicit
// `stage` / `order` attributes (which describe that pipeline) are left
// alone.
//
// With D = S - 1 each producer's target x_0 gets D more fragments x_1 ..
// x_D (fragments must stay statically addressed to live in registers, so
// the loop is unrolled S times instead of indexing a buffer by iteration
// parity). For the trip count n:
//
//   for s in [0, D): if (s < n) x_s = copy(iteration s)
//   for g in [0, ceil(n / S)):
//     for k in [0, S) (unrolled), i = g * S + k:
//       if (i < n) {                       // omitted for k = 0
//         ops of the body before the copy   (iteration i)
//         x_((k + D) mod S) = copy(iteration min(i + D, n - 1))
//         ops of the body after the copy, reading x_k (iteration i)
//       }
//
// Iteration i's copy lands in x_(i mod S) D iterations earlier; x_(i mod S)
// was last read by iteration i - S, which ran before. For i + D >= n the
// look-ahead copies iteration n - 1 again into x_((i + D) mod S), which no
// remaining iteration reads (unguarded, it stays in the block of the
// iteration's math: see rewrite()). Exactly the original
// iterations run, in order, for any trip count (0 and partial last groups
// included); bounds may be dynamic. The rewritten loop is an scf.for, so
// later lowerings see a serial loop.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPIPELINEFRAGMENTCOPIES
#include "tile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

bool isGlobalMemRef(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && isGlobal(m);
}

bool isFragmentMemRef(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && getMemoryScope(m) == MemoryScope::fragment;
}

bool isGlobalToFragment(CopyOp copy) {
  return isGlobalMemRef(copy.getSource().getType()) &&
         isFragmentMemRef(copy.getTarget().getType());
}

/// The kernel argument a global memref is (through view-like ops), if any.
BlockArgument kernelArgumentOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return {};
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || !func->hasAttr(TileDialect::kKernelAttrName))
    return {};
  return arg;
}

/// The global memory the body writes: the kernel arguments written, or the
/// first op that writes global memory other than through a kernel argument
/// without `tile.inplace` (a write effect on no particular value, effects
/// it does not declare, an in-place argument, which may be the same memory
/// as any other argument). The runtime refuses any overlap between a
/// written argument and another one unless it is `tile.inplace`
/// (docs/dialect.md), so a look-ahead copy from another argument reads
/// what the serial loop reads.
Operation *findGlobalWrites(PipelinedOp loop,
                            llvm::SmallPtrSetImpl<Value> &written) {
  Operation *found = nullptr;
  loop.getBody().walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance(); // its nested ops are visited
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface) {
      found = op;
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const auto &e : effects) {
      if (!isa<MemoryEffects::Write>(e.getEffect()))
        continue;
      Value v = e.getValue();
      if (v && !isGlobalMemRef(v.getType()))
        continue;
      BlockArgument arg = v ? kernelArgumentOf(v) : BlockArgument{};
      auto func = arg ? cast<func::FuncOp>(arg.getOwner()->getParentOp())
                      : func::FuncOp{};
      if (!arg || func.getArgAttr(arg.getArgNumber(),
                                  TileDialect::kInplaceAttrName)) {
        found = op;
        return WalkResult::interrupt();
      }
      written.insert(arg);
    }
    return WalkResult::advance();
  });
  return found;
}

/// The op of the loop's body block that is or contains `op`.
Operation *bodyAncestor(PipelinedOp loop, Operation *op) {
  return loop.getBodyBlock().findAncestorOpInBlock(*op);
}

/// Why `copy` (a global -> fragment copy of the body) cannot run ahead;
/// empty when it can.
std::string whyNotProducer(PipelinedOp loop, CopyOp copy,
                           const llvm::SmallPtrSetImpl<Value> &written) {
  BlockArgument source = kernelArgumentOf(copy.getSource());
  if (!written.empty() && (!source || written.contains(source)))
    return "the loop writes the tensor it reads (or one it may alias)";
  Value target = copy.getTarget();
  auto alloc = target.getDefiningOp<AllocOp>();
  if (!alloc || loop->isAncestor(alloc))
    return "its target is not a tile.alloc outside the loop";
  llvm::SetVector<Operation *> slice;
  if (!loop.collectRecomputableSlice(copy.getSource(), slice))
    return "its source is computed in the loop by an op with side effects";
  for (Value idx : copy.getSourceIndices())
    if (!loop.collectRecomputableSlice(idx, slice))
      return "its indices are computed in the loop by an op with side "
             "effects";
  for (OpOperand &use : target.getUses()) {
    Operation *user = use.getOwner();
    if (user == copy)
      continue;
    Operation *inBody = bodyAncestor(loop, user);
    if (!inBody)
      return "its target is used outside the loop";
    if (inBody == copy || inBody->isBeforeInBlock(copy))
      return "its target is used before the copy in the iteration (a value "
             "would cross iterations)";
    if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<MemRefType>))
      return "its target is viewed or cast (" +
             user->getName().getStringRef().str() + ")";
    auto iface = dyn_cast<MemoryEffectOpInterface>(user);
    if (!iface)
      return "its target is used by an op with undeclared effects (" +
             user->getName().getStringRef().str() + ")";
    // Writes after the copy (in place: x = x * x) are the iteration's own:
    // the look-ahead copy of iteration i + D fills another fragment, and
    // x_k is refilled only after iteration i is done with it.
  }
  return "";
}

struct TilePipelineFragmentCopiesPass
    : public tile::impl::TilePipelineFragmentCopiesBase<
          TilePipelineFragmentCopiesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<PipelinedOp> loops;
    getOperation().walk([&](PipelinedOp loop) {
      if (loop.getStages() >= 2)
        loops.push_back(loop);
    });
    for (PipelinedOp loop : loops) {
      // A loop without such copies has nothing to gain here (its stages are
      // the cp.async pipeline's business): no remark.
      bool any = false;
      loop.getBody().walk([&](CopyOp c) { any |= isGlobalToFragment(c); });
      if (!any)
        continue;
      SmallVector<CopyOp> producers;
      std::string why = plan(loop, producers);
      if (!why.empty()) {
        if (remarks)
          loop.emitRemark("tile.pipelined: global -> fragment copies not "
                          "multi-buffered in registers: ")
              << why;
        continue;
      }
      rewrite(loop, producers);
    }
  }

  /// The producers of `loop`; the reason it does not qualify otherwise.
  std::string plan(PipelinedOp loop, SmallVectorImpl<CopyOp> &producers) {
    if (loop->getParentOfType<PipelinedOp>())
      return "the loop is nested in another tile.pipelined";
    if (loop.getStageAttr() || loop.getOrderAttr())
      return "the loop has explicit 'stage' / 'order' attributes (the "
             "cp.async pipeline's)";
    bool nested = false, toShared = false;
    loop.getBody().walk([&](Operation *op) {
      nested |= isa<PipelinedOp>(op);
      if (auto c = dyn_cast<CopyOp>(op)) {
        auto t = dyn_cast<MemRefType>(c.getTarget().getType());
        toShared |= isGlobalMemRef(c.getSource().getType()) && t &&
                    getMemoryScope(t) == MemoryScope::shared;
      }
    });
    if (nested)
      return "the loop contains another tile.pipelined";
    if (toShared)
      return "the loop has global -> shared copies (the cp.async software "
             "pipeline's producers)";
    llvm::SmallPtrSet<Value, 4> written;
    if (Operation *w = findGlobalWrites(loop, written))
      return "the loop may write global memory that its copies read (" +
             w->getName().getStringRef().str() +
             " writes no kernel argument, or a tile.inplace one)";
    std::string firstWhy;
    loop.getBody().walk([&](CopyOp copy) {
      if (isGlobalToFragment(copy) &&
          copy->getBlock() != &loop.getBodyBlock() && firstWhy.empty())
        firstWhy = "the copy into a fragment cannot run ahead: it is nested "
                   "in " + copy->getParentOp()->getName().getStringRef().str();
    });
    for (auto copy : loop.getBodyBlock().getOps<CopyOp>()) {
      if (!isGlobalToFragment(copy))
        continue;
      std::string why = whyNotProducer(loop, copy, written);
      if (why.empty())
        producers.push_back(copy);
      else if (firstWhy.empty())
        firstWhy = "the copy into a fragment cannot run ahead: " + why;
    }
    return producers.empty() ? firstWhy : "";
  }

  void rewrite(PipelinedOp loop, SmallVector<CopyOp> producers) {
    const int64_t S = loop.getStages(), D = S - 1;
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };

    // Fragments: buffers[p][s] is copy s of producer p's target.
    SmallVector<SmallVector<Value>> buffers;
    for (CopyOp copy : producers) {
      auto alloc = copy.getTarget().getDefiningOp<AllocOp>();
      SmallVector<Value> copies = {alloc.getResult()};
      OpBuilder ab(alloc);
      ab.setInsertionPointAfter(alloc);
      for (int64_t s = 1; s < S; ++s)
        copies.push_back(ab.clone(*alloc)->getResult(0));
      buffers.push_back(copies);
    }
    // The pure ops each producer's operands need, in body order.
    SmallVector<SmallVector<Operation *>> slices;
    for (CopyOp copy : producers) {
      llvm::SetVector<Operation *> slice;
      for (Value v : copy->getOperands())
        (void)loop.collectRecomputableSlice(v, slice);
      SmallVector<Operation *> sorted(slice.begin(), slice.end());
      llvm::sort(sorted, [](Operation *x, Operation *y) {
        return x->isBeforeInBlock(y);
      });
      slices.push_back(sorted);
    }

    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep();
    // Trip count as the lowerings count it: ceil((ub - lb) / step), 0 when
    // ub <= lb.
    Value more =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, ub, lb);
    Value span = arith::SelectOp::create(
        b, loc, more, arith::SubIOp::create(b, loc, ub, lb), cst(0));
    Value n = arith::CeilDivUIOp::create(b, loc, span, step);
    auto ivOf = [&](Value iter) -> Value {
      return arith::AddIOp::create(b, loc, lb,
                                   arith::MulIOp::create(b, loc, iter, step));
    };
    auto below = [&](Value iter) -> Value {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, iter, n);
    };
    // if (cond) { fn() } at the builder's position.
    auto ifThen = [&](Value cond, function_ref<void()> fn) {
      auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      fn();
    };
    // Producer p's copy of iteration `iter` into fragment `slot`.
    auto copyOf = [&](size_t p, Value iter, int64_t slot) {
      IRMapping m;
      m.map(loop.getInductionVar(), ivOf(iter));
      for (Operation *op : slices[p])
        b.clone(*op, m);
      m.map(producers[p].getTarget(), buffers[p][slot]);
      b.clone(*producers[p], m);
    };
    // The prologue's copies: iteration s < D, if it exists.
    for (int64_t s = 0; s < D; ++s)
      for (size_t p = 0; p < producers.size(); ++p)
        ifThen(below(cst(s)), [&] { copyOf(p, cst(s), s); });
    // In the loop, the look-ahead copy of iteration min(i + D, n - 1) runs
    // unconditionally: past the last iteration it copies the last one
    // again (a re-read of data this block read D iterations earlier; its
    // target is never read), which keeps the copy in the block of the
    // iteration's other ops. Under an scf.if the first use of each loaded
    // value (a bf16 -> f32 conversion, a move at the join) would end that
    // block and wait for the loads before iteration i's math; in the
    // iteration's block the scheduler places those uses after it.
    Value last = arith::SubIOp::create(b, loc, n, cst(1));
    Value groups = arith::CeilDivUIOp::create(b, loc, n, cst(S));
    auto outer = scf::ForOp::create(b, loc, cst(0), groups, cst(1));
    b.setInsertionPoint(outer.getBody()->getTerminator());
    Value base = arith::MulIOp::create(b, loc, outer.getInductionVar(), cst(S));
    for (int64_t k = 0; k < S; ++k) {
      Value i = k == 0 ? base : arith::AddIOp::create(b, loc, base, cst(k));
      auto iteration = [&] {
        IRMapping m;
        m.map(loop.getInductionVar(), ivOf(i));
        for (size_t p = 0; p < producers.size(); ++p)
          m.map(producers[p].getTarget(), buffers[p][k]);
        for (Operation &op : loop.getBodyBlock().without_terminator()) {
          auto it = llvm::find(producers, dyn_cast<CopyOp>(&op));
          if (it == producers.end()) {
            b.clone(op, m);
            continue;
          }
          size_t p = it - producers.begin();
          Value ahead = arith::MinUIOp::create(
              b, loc, arith::AddIOp::create(b, loc, i, cst(D)), last);
          copyOf(p, ahead, (k + D) % S);
        }
      };
      // The first iteration of a group always exists.
      if (k == 0)
        iteration();
      else
        ifThen(below(i), iteration);
    }
    loop.erase();
  }
};

} // namespace
