//===- SpecializeUniformMasks.cpp - tile-specialize-uniform-masks ---------===//
//
// Attention kernels written TileLang's way fill the score tile with a mask
// of its indices on every key tile:
//
//   tile.parallel (%i, %j) in [128, 128] {
//     %kj = arith.addi %k0, %j : index
//     %visible = arith.andi (kj < S), (kj <= q0 + i)   // padding, causal
//     %v = arith.select %visible, %zero, %ninf : f32
//     memref.store %v, %S[%i, %j]
//   }
//
// On all but the last or diagonal tile the predicate holds at every index,
// but each thread still computes and selects it for each of its elements
// (64 per thread for 128x128 on 256 threads), in the loop whose softmax
// already limits a FlashAttention kernel. This pass gives such a
// tile.parallel (inside a loop) a second copy for the tiles where a
// selected predicate is true at every index of the extents:
//
//   scf.if %allTrue { the tile.parallel with the predicate replaced by
//                     `true` (folds to the unmasked fill) }
//   else            { the original tile.parallel }
//
// %allTrue is computed before the parallel from the predicate's structure:
// comparisons of affine functions of the indices (addi, subi, muli by a
// constant of the indices and of values defined outside the parallel) are
// true everywhere iff they hold at the corner of the extents that is worst
// for them (each side monotone in each index); andi/ori/xori-with-true and
// i1 values from outside combine as their logic says (an ori is true
// everywhere when either side is). Unsigned comparisons accept no
// subtraction or negative factor (no wrap-around). A predicate the
// analysis cannot bound is left alone.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESPECIALIZEUNIFORMMASKS
#include "tile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// constant + sum(coeff * value) + sum(iv[d] * index d).
struct Linear {
  int64_t constant = 0;
  SmallVector<std::pair<Value, int64_t>> terms;
  SmallVector<int64_t> iv;
  /// A subtraction or a negative factor: unsigned comparisons could wrap.
  bool negative = false;
};

class MaskBounds {
public:
  MaskBounds(ParallelOp par, OpBuilder &b) : par(par), b(b) {}

  /// An i1 computed before the parallel that implies `pred` at every index
  /// of its extents; null when the analysis cannot bound it.
  Value allTrue(Value pred) { return bound(pred, true); }

private:
  bool outside(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return cast<BlockArgument>(v).getOwner()->getParentOp() != par &&
             !par->isAncestor(
                 cast<BlockArgument>(v).getOwner()->getParentOp());
    return !par->isAncestor(def);
  }

  FailureOr<Linear> linear(Value v) {
    Linear l;
    l.iv.assign(par.getExtents().size(), 0);
    if (auto arg = dyn_cast<BlockArgument>(v);
        arg && arg.getOwner() == &par.getBodyBlock()) {
      l.iv[arg.getArgNumber()] = 1;
      return l;
    }
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c))) {
      l.constant = c.getSExtValue();
      return l;
    }
    if (outside(v)) {
      l.terms.push_back({v, 1});
      return l;
    }
    Operation *op = v.getDefiningOp();
    auto combine = [&](Value x, Value y, int64_t sy) -> FailureOr<Linear> {
      FailureOr<Linear> a = linear(x), bl = linear(y);
      if (failed(a) || failed(bl))
        return failure();
      a->constant += sy * bl->constant;
      for (auto [t, k] : bl->terms)
        a->terms.push_back({t, sy * k});
      for (size_t d = 0; d < a->iv.size(); ++d)
        a->iv[d] += sy * bl->iv[d];
      a->negative |= bl->negative || sy < 0;
      return a;
    };
    if (auto add = dyn_cast<arith::AddIOp>(op))
      return combine(add.getLhs(), add.getRhs(), 1);
    if (auto sub = dyn_cast<arith::SubIOp>(op))
      return combine(sub.getLhs(), sub.getRhs(), -1);
    if (auto mul = dyn_cast<arith::MulIOp>(op)) {
      for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())}) {
        if (!matchPattern(y, m_ConstantInt(&c)))
          continue;
        FailureOr<Linear> a = linear(x);
        if (failed(a))
          return failure();
        int64_t k = c.getSExtValue();
        a->constant *= k;
        for (auto &t : a->terms)
          t.second *= k;
        for (int64_t &d : a->iv)
          d *= k;
        a->negative |= k < 0;
        return a;
      }
    }
    return failure();
  }

  /// The value of `l` at the corner of the extents that maximizes it
  /// (`max`) or minimizes it.
  Value corner(const Linear &l, bool max, Type type) {
    Location loc = par.getLoc();
    ArrayRef<int64_t> ext = par.getExtents();
    int64_t k = l.constant;
    for (size_t d = 0; d < l.iv.size(); ++d)
      if ((l.iv[d] > 0) == max && l.iv[d] != 0)
        k += l.iv[d] * (ext[d] - 1);
    Value sum = arith::ConstantOp::create(b, loc, type,
                                          b.getIntegerAttr(type, k));
    for (auto [t, coeff] : l.terms) {
      Value term = t;
      if (coeff != 1)
        term = arith::MulIOp::create(
            b, loc, t,
            arith::ConstantOp::create(b, loc, type,
                                      b.getIntegerAttr(type, coeff)));
      sum = arith::AddIOp::create(b, loc, sum, term);
    }
    return sum;
  }

  /// `cmp` (or its negation, !wantTrue) at every index, as one comparison
  /// of the worst corners of its two sides.
  Value leaf(arith::CmpIOp cmp, bool wantTrue) {
    using P = arith::CmpIPredicate;
    P p = wantTrue ? cmp.getPredicate()
                   : arith::invertPredicate(cmp.getPredicate());
    Value x = cmp.getLhs(), y = cmp.getRhs();
    // Normalize to x < y or x <= y.
    switch (p) {
    case P::sgt: p = P::slt; std::swap(x, y); break;
    case P::sge: p = P::sle; std::swap(x, y); break;
    case P::ugt: p = P::ult; std::swap(x, y); break;
    case P::uge: p = P::ule; std::swap(x, y); break;
    case P::slt: case P::sle: case P::ult: case P::ule: break;
    default: return {};
    }
    FailureOr<Linear> lx = linear(x), ly = linear(y);
    if (failed(lx) || failed(ly))
      return {};
    bool isUnsigned = p == P::ult || p == P::ule;
    if (isUnsigned && (lx->negative || ly->negative))
      return {};
    Type type = x.getType();
    return arith::CmpIOp::create(b, par.getLoc(), p, corner(*lx, true, type),
                                 corner(*ly, false, type));
  }

  /// An i1 before the parallel implying that `pred` is `value` everywhere.
  Value bound(Value pred, bool value) {
    Location loc = par.getLoc();
    auto i1 = [&](bool v) {
      return arith::ConstantOp::create(b, loc, b.getBoolAttr(v)).getResult();
    };
    auto negate = [&](Value v) {
      return arith::XOrIOp::create(b, loc, v, i1(true)).getResult();
    };
    APInt c;
    if (matchPattern(pred, m_ConstantInt(&c)))
      return i1(c.getBoolValue() == value);
    if (outside(pred))
      return value ? pred : negate(pred);
    Operation *op = pred.getDefiningOp();
    if (auto cmp = dyn_cast<arith::CmpIOp>(op))
      return leaf(cmp, value);
    auto both = [&](Value x, Value y, bool conjunction) -> Value {
      Value a = bound(x, value), bb = bound(y, value);
      if (conjunction) {
        if (!a || !bb)
          return {};
        return arith::AndIOp::create(b, loc, a, bb);
      }
      if (!a || !bb)
        return a ? a : bb;
      return arith::OrIOp::create(b, loc, a, bb);
    };
    // true everywhere: and needs both sides, or either; false everywhere:
    // the other way round.
    if (auto a = dyn_cast<arith::AndIOp>(op))
      return both(a.getLhs(), a.getRhs(), value);
    if (auto o = dyn_cast<arith::OrIOp>(op))
      return both(o.getLhs(), o.getRhs(), !value);
    if (auto x = dyn_cast<arith::XOrIOp>(op)) {
      for (auto [v, other] : {std::pair(x.getLhs(), x.getRhs()),
                              std::pair(x.getRhs(), x.getLhs())})
        if (matchPattern(other, m_ConstantInt(&c)))
          return bound(v, c.getBoolValue() ? !value : value);
    }
    return {};
  }

  ParallelOp par;
  OpBuilder &b;
};

/// Whether `v` depends on an index of `par`.
bool dependsOnIndices(Value v, ParallelOp par) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &par.getBodyBlock();
  Operation *def = v.getDefiningOp();
  if (!def || !par->isAncestor(def))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value o) {
    return dependsOnIndices(o, par);
  });
}

struct TileSpecializeUniformMasksPass
    : public tile::impl::TileSpecializeUniformMasksBase<
          TileSpecializeUniformMasksPass> {
  void runOnOperation() override {
    SmallVector<ParallelOp> candidates;
    getOperation().walk([&](ParallelOp par) {
      // Inside a loop of the launch, where tiles differ from one iteration
      // to the next (a parallel run once gains nothing worth its copy).
      // A parallel its author already put under an scf.if (the
      // examples' "only on the last or diagonal tile") is left as it is.
      Operation *p = par->getParentOp();
      if (isa<scf::IfOp>(p))
        return;
      for (; p && !isa<LaunchOp>(p); p = p->getParentOp())
        if (isa<PipelinedOp, scf::ForOp>(p))
          break;
      if (p && !isa<LaunchOp>(p))
        candidates.push_back(par);
    });
    for (ParallelOp par : candidates)
      specialize(par);
  }

  void specialize(ParallelOp par) {
    // The predicates that select values (the mask).
    llvm::SetVector<Value> preds;
    par.walk([&](arith::SelectOp sel) {
      Value c = sel.getCondition();
      if (c.getType().isInteger(1) && dependsOnIndices(c, par))
        preds.insert(c);
    });
    if (preds.empty())
      return;
    OpBuilder b(par);
    Block *scratch = new Block();
    OpBuilder sb(par.getContext());
    sb.setInsertionPointToStart(scratch);
    // Build the bounds in a scratch block first: nothing is left behind
    // when the predicates cannot be bounded.
    MaskBounds bounds(par, sb);
    SmallVector<Value> bounded;
    Value guard;
    for (Value c : preds) {
      Value t = bounds.allTrue(c);
      if (!t)
        continue;
      bounded.push_back(c);
      guard = guard ? arith::AndIOp::create(sb, par.getLoc(), guard, t)
                          .getResult()
                    : t;
    }
    if (!guard) {
      scratch->dropAllDefinedValueUses();
      delete scratch;
      return;
    }
    // Move the bound computation in front of the parallel.
    for (Operation &op : llvm::make_early_inc_range(*scratch))
      op.moveBefore(par);
    delete scratch;

    auto ifOp = scf::IfOp::create(b, par.getLoc(), TypeRange{}, guard,
                                  /*withElseRegion=*/true);
    // Then: a copy with the predicates replaced by true.
    OpBuilder tb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
    IRMapping map;
    Operation *uniform = tb.clone(*par, map);
    OpBuilder ub = OpBuilder::atBlockBegin(
        &cast<ParallelOp>(uniform).getBodyBlock());
    Value yes = arith::ConstantOp::create(ub, par.getLoc(), ub.getBoolAttr(true));
    for (Value c : bounded)
      map.lookup(c).replaceAllUsesWith(yes);
    // Fold the selects and drop the predicate's computation from the copy.
    uniform->walk([&](arith::SelectOp sel) {
      if (sel.getCondition() == yes) {
        sel.replaceAllUsesWith(sel.getTrueValue());
        sel.erase();
      }
    });
    SmallVector<Operation *> body;
    uniform->walk([&](Operation *op) {
      if (op != uniform)
        body.push_back(op);
    });
    for (Operation *op : llvm::reverse(body))
      if (isOpTriviallyDead(op))
        op->erase();
    // Else: the original.
    par->moveBefore(ifOp.getElseRegion().front().getTerminator());
  }
};

} // namespace
