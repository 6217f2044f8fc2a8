//===- FPContract.cpp - tile-fp-contract ----------------------------------===//
//
// Marks the float arith ops of GPU kernels `contract`, the per-op form of
// nvcc's --fmad=true: arith-to-llvm carries the flag to LLVM, whose
// DAG combiner then forms fma from mul + add/sub, and whose NVPTX backend
// stops emitting the `.rn` variants that keep ptxas from fusing.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEFPCONTRACT
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {
struct TileFPContractPass
    : public tile::impl::TileFPContractBase<TileFPContractPass> {
  void runOnOperation() override {
    getOperation()->walk([](gpu::GPUModuleOp gm) {
      gm.walk([](arith::ArithFastMathInterface op) {
        arith::FastMathFlagsAttr attr = op.getFastMathFlagsAttr();
        arith::FastMathFlags flags =
            attr ? attr.getValue() : arith::FastMathFlags::none;
        if (bitEnumContainsAll(flags, arith::FastMathFlags::contract))
          return;
        op->setAttr(op.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(
                        op->getContext(),
                        flags | arith::FastMathFlags::contract));
      });
    });
  }
};
} // namespace
