//===- TileToSCF.cpp - collective tile ops to whole-tile loops ------------===//
//
// The reference semantics of every collective op, as serial loops over the
// whole tile. The CPU target runs these; they are also the oracle that the
// GPU lowerings are tested against.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOSCF
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Builds a loop nest 0..extent[d] (step 1) and calls `body` with the ivs in
/// the innermost loop.
void buildTileLoops(OpBuilder &b, Location loc, ArrayRef<int64_t> extents,
                    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> lbs, ubs, steps;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t e : extents) {
    lbs.push_back(zero);
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, e));
    steps.push_back(one);
  }
  if (extents.empty()) {
    body(b, loc, {});
    return;
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location nl, ValueRange ivs) {
                       body(nb, nl, ivs);
                     });
}

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

/// `starts[d] + ivs[d]` for each dim, and whether all lie inside `memref`.
std::pair<SmallVector<Value>, Value>
globalIndices(OpBuilder &b, Location loc, Value memref, ValueRange starts,
              ValueRange ivs, ArrayRef<Value> dims) {
  SmallVector<Value> idx;
  Value inBounds;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [d, start] : llvm::enumerate(starts)) {
    Value g = arith::AddIOp::create(b, loc, start, ivs[d]);
    idx.push_back(g);
    Value lo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, g, zero);
    Value hi =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, g, dims[d]);
    Value ok = arith::AndIOp::create(b, loc, lo, hi);
    inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, ok) : ok;
  }
  return {idx, inBounds};
}

SmallVector<Value> memrefDims(OpBuilder &b, Location loc, Value memref) {
  SmallVector<Value> dims;
  auto type = cast<MemRefType>(memref.getType());
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(memref::DimOp::create(b, loc, memref, d));
  return dims;
}

//===----------------------------------------------------------------------===//
// copy
//===----------------------------------------------------------------------===//

struct CopyToLoops : OpRewritePattern<CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CopyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = cast<MemRefType>(op.getSource().getType());
    auto dstType = cast<MemRefType>(op.getTarget().getType());
    bool srcGlobal = isGlobal(srcType), dstGlobal = isGlobal(dstType);
    ArrayRef<int64_t> shape =
        srcGlobal ? dstType.getShape() : srcType.getShape();
    SmallVector<Value> srcDims, dstDims;
    if (srcGlobal)
      srcDims = memrefDims(rewriter, loc, op.getSource());
    if (dstGlobal)
      dstDims = memrefDims(rewriter, loc, op.getTarget());
    Type srcElt = srcType.getElementType(), dstElt = dstType.getElementType();
    buildTileLoops(rewriter, loc, shape, [&](OpBuilder &b, Location l,
                                             ValueRange ivs) {
      // The global side's offsets into the tile: a rank-reducing copy has a
      // zero offset in every dropped (unit) dim.
      SmallVector<Value> globalIvs = op.expandTileIndex(
          ivs, arith::ConstantIndexOp::create(b, l, 0));
      Value value;
      if (srcGlobal) {
        auto [idxTmp1, okTmp1] = globalIndices(
            b, l, op.getSource(), op.getSourceIndices(), globalIvs, srcDims);
        SmallVector<Value> idx = idxTmp1;
        Value ok = okTmp1;
        auto ifOp = scf::IfOp::create(
            b, l, ok,
            [&](OpBuilder &tb, Location tl) {
              Value v = memref::LoadOp::create(tb, tl, op.getSource(), idx);
              scf::YieldOp::create(tb, tl, v);
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, zeroOf(eb, el, srcElt));
            });
        value = ifOp.getResult(0);
      } else {
        value = memref::LoadOp::create(b, l, op.getSource(), ivs);
      }
      value = convertElement(b, l, value, dstElt);
      if (dstGlobal) {
        auto [idxTmp2, okTmp2] = globalIndices(
            b, l, op.getTarget(), op.getTargetIndices(), globalIvs, dstDims);
        SmallVector<Value> idx = idxTmp2;
        Value ok = okTmp2;
        scf::IfOp::create(b, l, ok, [&](OpBuilder &tb, Location tl) {
          memref::StoreOp::create(tb, tl, value, op.getTarget(), idx);
          scf::YieldOp::create(tb, tl);
        });
      } else {
        memref::StoreOp::create(b, l, value, op.getTarget(), ivs);
      }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// fill / clear
//===----------------------------------------------------------------------===//

void fillBuffer(OpBuilder &b, Location loc, Value buffer, Value value) {
  auto type = cast<MemRefType>(buffer.getType());
  buildTileLoops(b, loc, type.getShape(),
                 [&](OpBuilder &nb, Location l, ValueRange ivs) {
                   memref::StoreOp::create(nb, l, value, buffer, ivs);
                 });
}

struct FillToLoops : OpRewritePattern<FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FillOp op,
                                PatternRewriter &rewriter) const override {
    fillBuffer(rewriter, op.getLoc(), op.getBuffer(), op.getValue());
    rewriter.eraseOp(op);
    return success();
  }
};

struct ClearToLoops : OpRewritePattern<ClearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClearOp op,
                                PatternRewriter &rewriter) const override {
    Type elt = cast<MemRefType>(op.getBuffer().getType()).getElementType();
    fillBuffer(rewriter, op.getLoc(), op.getBuffer(),
               zeroOf(rewriter, op.getLoc(), elt));
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

struct GemmToLoops : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type accType = cast<MemRefType>(op.getC().getType()).getElementType();
    // f16 accumulators add in f32 and round after each step, as an MMA unit
    // with f16 accumulation does per instruction.
    Type computeType = accType.isF16() ? rewriter.getF32Type() : accType;
    if (op.getClear())
      fillBuffer(rewriter, loc, op.getC(), zeroOf(rewriter, loc, accType));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    bool isFloat = isa<FloatType>(accType);
    // Loop order i, k, j: the innermost loop walks rows of B and C
    // contiguously, which LLVM vectorizes.
    scf::buildLoopNest(
        rewriter, loc, {zero, zero}, {cst(op.getM()), cst(op.getK())},
        {one, one}, [&](OpBuilder &b, Location l, ValueRange ik) {
          Value i = ik[0], k = ik[1];
          Value a = memref::LoadOp::create(
              b, l, op.getA(), ta ? ValueRange{k, i} : ValueRange{i, k});
          a = convertElement(b, l, a, computeType);
          Value zeroJ = arith::ConstantIndexOp::create(b, l, 0);
          Value oneJ = arith::ConstantIndexOp::create(b, l, 1);
          Value n = arith::ConstantIndexOp::create(b, l, op.getN());
          scf::ForOp::create(
              b, l, zeroJ, n, oneJ, ValueRange{},
              [&](OpBuilder &jb, Location jl, Value j, ValueRange) {
                Value bv = memref::LoadOp::create(
                    jb, jl, op.getB(), tb ? ValueRange{j, k} : ValueRange{k, j});
                bv = convertElement(jb, jl, bv, computeType);
                Value c = memref::LoadOp::create(jb, jl, op.getC(),
                                                 ValueRange{i, j});
                c = convertElement(jb, jl, c, computeType);
                Value sum;
                if (isFloat) {
                  Value prod = arith::MulFOp::create(jb, jl, a, bv);
                  sum = arith::AddFOp::create(jb, jl, c, prod);
                } else {
                  Value prod = arith::MulIOp::create(jb, jl, a, bv);
                  sum = arith::AddIOp::create(jb, jl, c, prod);
                }
                sum = convertElement(jb, jl, sum, accType);
                memref::StoreOp::create(jb, jl, sum, op.getC(),
                                        ValueRange{i, j});
                scf::YieldOp::create(jb, jl);
              });
        });
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//


struct ReduceToLoops : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto srcType = cast<MemRefType>(op.getSource().getType());
    auto dstType = cast<MemRefType>(op.getTarget().getType());
    Type elt = srcType.getElementType();
    int64_t dim = op.getDim();
    ReduceKind kind = op.getKind();
    buildTileLoops(
        rewriter, op.getLoc(), dstType.getShape(),
        [&](OpBuilder &b, Location l, ValueRange outer) {
          Value init = op.getClear()
                           ? reduceIdentity(b, l, kind, elt)
                           : (Value)memref::LoadOp::create(b, l, op.getTarget(),
                                                           outer);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value n = arith::ConstantIndexOp::create(b, l, srcType.getDimSize(dim));
          auto loop = scf::ForOp::create(
              b, l, zero, n, one, ValueRange{init},
              [&](OpBuilder &rb, Location rl, Value r, ValueRange acc) {
                SmallVector<Value> idx(outer.begin(), outer.end());
                idx.insert(idx.begin() + dim, r);
                Value x = memref::LoadOp::create(rb, rl, op.getSource(), idx);
                scf::YieldOp::create(rb, rl,
                                     reduceCombine(rb, rl, kind, acc[0], x));
              });
          memref::StoreOp::create(b, l, loop.getResult(0), op.getTarget(),
                                  outer);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// parallel / pipelined
//===----------------------------------------------------------------------===//

/// Moves the single-block region `body` (terminated by tile.yield) into the
/// block that holds `insertPoint`'s terminator, substituting `args`.
void inlineTileBody(PatternRewriter &rewriter, Region &body,
                    Operation *beforeOp, ValueRange args) {
  Block &block = body.front();
  Operation *yield = block.getTerminator();
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(&block, beforeOp, args);
}

struct ParallelToLoops : OpRewritePattern<ParallelOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ParallelOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> lbs, ubs, steps;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (int64_t e : op.getExtents()) {
      lbs.push_back(zero);
      ubs.push_back(arith::ConstantIndexOp::create(rewriter, loc, e));
      steps.push_back(one);
    }
    scf::LoopNest nest = scf::buildLoopNest(rewriter, loc, lbs, ubs, steps);
    SmallVector<Value> ivs;
    for (scf::ForOp loop : nest.loops)
      ivs.push_back(loop.getInductionVar());
    Operation *innerTerminator = nest.loops.back().getBody()->getTerminator();
    inlineTileBody(rewriter, op.getBody(), innerTerminator, ivs);
    rewriter.eraseOp(op);
    return success();
  }
};

struct PipelinedToLoop : OpRewritePattern<PipelinedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PipelinedOp op,
                                PatternRewriter &rewriter) const override {
    auto loop = scf::ForOp::create(rewriter, op.getLoc(), op.getLowerBound(),
                                   op.getUpperBound(), op.getStep());
    inlineTileBody(rewriter, op.getBody(), loop.getBody()->getTerminator(),
                   {loop.getInductionVar()});
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// atomics
//===----------------------------------------------------------------------===//


struct AtomicToRMW : OpRewritePattern<AtomicOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtomicOp op,
                                PatternRewriter &rewriter) const override {
    memref::AtomicRMWOp::create(
        rewriter, op.getLoc(), getAtomicRMWKind(op.getKind(), op.getValue().getType()),
        op.getValue(), op.getBuffer(), op.getIndices());
    rewriter.eraseOp(op);
    return success();
  }
};

struct AtomicTileToLoops : OpRewritePattern<AtomicTileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtomicTileOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = cast<MemRefType>(op.getSource().getType());
    SmallVector<Value> dims = memrefDims(rewriter, loc, op.getTarget());
    arith::AtomicRMWKind kind =
        getAtomicRMWKind(op.getKind(), srcType.getElementType());
    buildTileLoops(rewriter, loc, srcType.getShape(),
                   [&](OpBuilder &b, Location l, ValueRange ivs) {
                     Value v = memref::LoadOp::create(b, l, op.getSource(), ivs);
                     auto [idxTmp3, okTmp3] = globalIndices(b, l, op.getTarget(),
                                                    op.getIndices(), ivs, dims);
                     SmallVector<Value> idx = idxTmp3;
                     Value ok = okTmp3;
                     scf::IfOp::create(b, l, ok, [&](OpBuilder &tb,
                                                     Location tl) {
                       memref::AtomicRMWOp::create(tb, tl, kind, v,
                                                   op.getTarget(), idx);
                       scf::YieldOp::create(tb, tl);
                     });
                   });
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertTileToSCFPass
    : public tile::impl::ConvertTileToSCFBase<ConvertTileToSCFPass> {
  void runOnOperation() override {
    WalkResult unsupported = getOperation()->walk([](func::FuncOp f) {
      if (f->hasAttr(TileDialect::kKernelAttrName) &&
          failed(verifyLowerableElementTypes(f)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<CopyToLoops, FillToLoops, ClearToLoops, GemmToLoops,
                 ReduceToLoops, ParallelToLoops, PipelinedToLoop, AtomicToRMW,
                 AtomicTileToLoops>(&getContext());
    ConversionTarget target(getContext());
    target.addLegalDialect<arith::ArithDialect, scf::SCFDialect,
                           memref::MemRefDialect, math::MathDialect>();
    target.addIllegalOp<CopyOp, FillOp, ClearOp, GemmOp, ReduceOp, ParallelOp,
                        PipelinedOp, AtomicOp, AtomicTileOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
