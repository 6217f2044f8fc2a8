//===- CPUEntryPoints.cpp - host entry points of a CPU kernel -------------===//
//
// Generates, in the LLVM dialect, the two functions of the CPU kernel ABI
// (docs/bundle.md):
//   NAME__tile_blocks(args, begin, end, gx, gy, gz): runs a range of blocks
//     by calling the block function's C interface;
//   NAME__tile_native(tensors, scalars, env): the native backend's wrapper,
//     whose argument checks are compiled straight-line code.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/HostWrapperBuilder.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILECPUENTRYPOINTS
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// NAME__tile_blocks: unpack the argument slots once, then call the block
/// function for every linear block id in [begin, end).
LogicalResult buildBlocksEntry(ModuleOp module, const KernelMetadata &md) {
  MLIRContext *ctx = module.getContext();
  std::string calleeName = "_mlir_ciface_" + md.blockFunction();
  auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(calleeName);
  if (!callee)
    return module.emitError("block function '")
           << calleeName << "' not found; lower it to LLVM with its C "
           << "interface first";
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {ptr, i64, i64, i64, i64, i64});
  auto fn = LLVM::LLVMFuncOp::create(b, loc, md.blocksEntry(), fnType);
  Block *entry = fn.addEntryBlock(b);
  Block *header = new Block(), *body = new Block(), *exit = new Block();
  fn.getBody().push_back(header);
  fn.getBody().push_back(body);
  fn.getBody().push_back(exit);
  header->addArgument(i64, loc);

  HostCodeBuilder h(b, loc);
  b.setInsertionPointToStart(entry);
  Value args = entry->getArgument(0);
  SmallVector<Value> callArgs;
  auto calleeType = callee.getFunctionType();
  for (auto [i, p] : llvm::enumerate(md.params)) {
    Value slot = h.loadPtrAt(args, i);
    if (p.isTensor) {
      callArgs.push_back(slot);
    } else {
      Type t = calleeType.getParamType(i);
      callArgs.push_back(LLVM::LoadOp::create(b, loc, t, slot));
    }
  }
  LLVM::BrOp::create(b, loc, ValueRange{entry->getArgument(1)}, header);

  b.setInsertionPointToStart(header);
  Value id = header->getArgument(0);
  Value more = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, id,
                                    entry->getArgument(2));
  LLVM::CondBrOp::create(b, loc, more, body, exit);

  b.setInsertionPointToStart(body);
  Value gx = entry->getArgument(3), gy = entry->getArgument(4);
  Value bx = LLVM::URemOp::create(b, loc, id, gx);
  Value rest = LLVM::UDivOp::create(b, loc, id, gx);
  Value by = LLVM::URemOp::create(b, loc, rest, gy);
  Value bz = LLVM::UDivOp::create(b, loc, rest, gy);
  SmallVector<Value> operands = callArgs;
  operands.append({bx, by, bz, gx, gy, entry->getArgument(5)});
  LLVM::CallOp::create(b, loc, callee, operands);
  Value next = LLVM::AddOp::create(b, loc, id, h.i64(1));
  LLVM::BrOp::create(b, loc, ValueRange{next}, header);

  b.setInsertionPointToStart(exit);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return success();
}

struct TileCPUEntryPointsPass
    : public tile::impl::TileCPUEntryPointsBase<TileCPUEntryPointsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto md = getAttachedMetadata(module);
    if (failed(md))
      return signalPassFailure();
    if (failed(buildBlocksEntry(module, *md)))
      return signalPassFailure();
    // The native wrapper hands the argument slots to the runtime's `run`,
    // which calls NAME__tile_blocks over its thread pool.
    if (nativeWrapper &&
        failed(buildNativeWrapper(module, *md, /*deviceType=*/kDLCPU)))
      return signalPassFailure();
  }
};

} // namespace
