//===- FtzExp2.cpp - tile-nvvm-ftz-exp2 -----------------------------------===//
//
// `math.exp2` on f32 in GPU kernels becomes the hardware's flush-to-zero
// approximation, `ex2.approx.ftz.f32` (one MUFU.EX2). Without this,
// convert-gpu-ops-to-nvvm goes through libdevice's __nv_exp2f, which under
// the default (no FTZ) reflection is `ex2.approx.f32`: ptxas wraps every
// such MUFU.EX2 in a compare and two predicated multiplies that keep
// subnormal results. In a FlashAttention consumer loop that is 192 extra
// instructions per thread and key tile at d = 128 (64 scores per thread),
// for results below 2^-126 that the probabilities never show.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILENVVMFTZEXP2
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {
struct TileNVVMFtzExp2Pass
    : public tile::impl::TileNVVMFtzExp2Base<TileNVVMFtzExp2Pass> {
  void runOnOperation() override {
    getOperation()->walk([](gpu::GPUModuleOp gm) {
      SmallVector<math::Exp2Op> exps;
      gm.walk([&](math::Exp2Op op) {
        if (op.getType().isF32())
          exps.push_back(op);
      });
      for (math::Exp2Op op : exps) {
        IRRewriter rewriter(op);
        // The overloaded intrinsic; the translation mangles it (.f32).
        auto call = LLVM::CallIntrinsicOp::create(
            rewriter, op.getLoc(), op.getType(),
            rewriter.getStringAttr("llvm.nvvm.ex2.approx.ftz"),
            ValueRange{op.getOperand()});
        rewriter.replaceOp(op, call.getResults());
      }
    });
  }
};
} // namespace
