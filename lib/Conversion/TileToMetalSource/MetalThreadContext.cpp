//===- MetalThreadContext.cpp - the tile-metal-thread-context pass --------===//
//
// MSL gives a kernel its thread position only as parameters of the
// `kernel void` function. The EmitC kernel becomes a plain function
// `NAME_body` with a trailing tile::thread_context parameter, and the
// device library calls that read the position (or the threadgroup memory,
// or the SIMD lane) take it as their last argument. The entry that fills
// the context is written by printMetalSource.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Conversion/TileToMetalSource.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEMETALTHREADCONTEXT
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {

/// The device library calls that take the context (include/tile/device/
/// metal/intrinsics.h): the callee starts with one of these.
constexpr StringLiteral kContextCalls[] = {
    "tile::thread_id_",  "tile::block_id_", "tile::block_dim_",
    "tile::grid_dim_",   "tile::dynamic_shared_memory",
    "tile::shuffle_",    "tile::ldmatrix<", "tile::mma_sync_"};

bool needsContext(StringRef callee) {
  return llvm::any_of(kContextCalls,
                      [&](StringRef p) { return callee.starts_with(p); });
}

struct TileMetalThreadContextPass
    : public tile::impl::TileMetalThreadContextBase<
          TileMetalThreadContextPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Type contextType = emitc::OpaqueType::get(ctx, "tile::thread_context");
    for (auto func : getOperation().getOps<emitc::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      BlockArgument context = entry.addArgument(contextType, func.getLoc());
      SmallVector<Type> inputs(func.getFunctionType().getInputs());
      inputs.push_back(contextType);
      func.setFunctionType(FunctionType::get(ctx, inputs, {}));
      func.walk([&](emitc::CallOpaqueOp call) {
        if (needsContext(call.getCallee()))
          call.getOperandsMutable().append(context);
      });
      func.setSymName((func.getSymName() + tile::kMetalBodySuffix).str());
    }
  }
};

} // namespace
