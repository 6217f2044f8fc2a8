//===- PrepareMetalKernel.cpp - the tile-prepare-metal-kernel pass --------===//
//
// MSL spells every pointer with its address space, and the EmitC lowering
// takes a memref's address space from its type: kernel parameters (no
// memory space) are `device`, the views of the dynamic shared memory
// (#gpu.address_space<workgroup>) `threadgroup`. The per-thread arrays
// come out of convert-tile-to-nvgpu without a memory space, like the
// parameters: this pass marks them (and what is derived from them) private,
// and rejects what Metal cannot run before the EmitC lowering would fail
// with a less precise message.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPREPAREMETALKERNEL
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {

bool isF64(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  return t.isF64();
}

/// Why Metal cannot run `op`, or "" when it can.
std::string unsupportedReason(Operation *op) {
  for (Type t : op->getResultTypes())
    if (isF64(t))
      return "64-bit floats (MSL has no double)";
  for (Type t : op->getOperandTypes())
    if (isF64(t))
      return "64-bit floats (MSL has no double)";
  if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
    Type t = atomic.getValue().getType();
    if (!t.isF32() && !t.isInteger(32))
      return "atomics on " +
             std::string(t.isF16() || t.isBF16() ? "16-bit floats"
                                                 : "this element type") +
             " (Metal has 32-bit int and f32 atomics)";
  }
  return "";
}

/// `value`'s memref type in the private address space.
void makePrivate(Value value, Attribute privateSpace) {
  auto type = cast<MemRefType>(value.getType());
  value.setType(MemRefType::get(type.getShape(), type.getElementType(),
                                type.getLayout(), privateSpace));
}

struct TilePrepareMetalKernelPass
    : public tile::impl::TilePrepareMetalKernelBase<TilePrepareMetalKernelPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Attribute privateSpace =
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Private);
    WalkResult checked = getOperation().walk([&](gpu::GPUFuncOp func) {
      WalkResult r = func.walk([&](Operation *op) {
        std::string why = unsupportedReason(op);
        if (why.empty())
          return WalkResult::advance();
        op->emitError("the metal target cannot run '")
            << op->getName() << "': " << why;
        return WalkResult::interrupt();
      });
      if (r.wasInterrupted())
        return WalkResult::interrupt();
      // Every memref derived from a per-thread array is private too.
      SmallVector<Value> worklist;
      func.walk([&](memref::AllocaOp alloca) {
        if (!alloca.getType().getMemorySpace()) {
          makePrivate(alloca.getResult(), privateSpace);
          worklist.push_back(alloca.getResult());
        }
      });
      while (!worklist.empty()) {
        Value v = worklist.pop_back_val();
        for (Operation *user : v.getUsers()) {
          if (user->getNumRegions() != 0 || isa<scf::YieldOp>(user)) {
            user->emitError("the metal target cannot lower a per-thread "
                            "array passed through '")
                << user->getName() << "' (MSL needs its address space)";
            return WalkResult::interrupt();
          }
          for (Value result : user->getResults()) {
            auto type = dyn_cast<MemRefType>(result.getType());
            if (!type || type.getMemorySpace())
              continue;
            makePrivate(result, privateSpace);
            worklist.push_back(result);
          }
        }
      }
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
