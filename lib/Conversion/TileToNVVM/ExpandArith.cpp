//===- ExpandArith.cpp - tile-nvvm-expand-arith ---------------------------===//
//
// The subset of upstream arith-expand the NVVM lowering needs: the integer
// ceil/floor divisions and the scaling float conversions, which
// convert-arith-to-llvm does not handle. Float minimum/maximum are left to
// the NVPTX backend, which has single instructions for them.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILENVVMEXPANDARITH
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {
struct TileNVVMExpandArithPass
    : public tile::impl::TileNVVMExpandArithBase<TileNVVMExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandScalingExtTruncPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
