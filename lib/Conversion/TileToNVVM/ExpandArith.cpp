//===- ExpandArith.cpp - tile-nvvm-expand-arith ---------------------------===//
//
// The subset of upstream arith-expand the NVVM lowering needs: the integer
// ceil/floor divisions and the scaling float conversions, which
// convert-arith-to-llvm does not handle, and math.trunc. Float minimum/maximum are left to
// the NVPTX backend, which has single instructions for them. Ops in blocks
// unreachable from their region's entry are not expanded (the walk skips
// them); the pipeline runs it after scf-to-cf, which leaves none.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILENVVMEXPANDARITH
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {
/// math.trunc -> llvm.intr.trunc (no upstream lowering reaches NVVM).
struct TruncToLLVM : OpRewritePattern<math::TruncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::TruncOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::FTruncOp>(op, op.getType(),
                                                op.getOperand());
    return success();
  }
};

struct TileNVVMExpandArithPass
    : public tile::impl::TileNVVMExpandArithBase<TileNVVMExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandScalingExtTruncPatterns(patterns);
    patterns.add<TruncToLLVM>(&getContext());
    // One walk: no expansion produces an op another pattern expands, and
    // the greedy passes after this one fold what they leave
    // (expand-strided-metadata, the canonicalizer); the greedy driver's
    // folding of the whole module here cost 0.03 s of the sm_90a GEMM's
    // compile.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
