//===- PrivateAllocas.cpp - tile-rocdl-private-allocas --------------------===//
//
// See Passes.td: per-thread arrays of a gpu.func become entry-block allocas
// in AMDGPU private memory (address space 5), cast back to the flat memref
// type their users expect.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEROCDLPRIVATEALLOCAS
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {

struct TileROCDLPrivateAllocasPass
    : public tile::impl::TileROCDLPrivateAllocasBase<
          TileROCDLPrivateAllocasPass> {
  void runOnOperation() override {
    gpu::GPUFuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    SmallVector<memref::AllocaOp> allocas;
    func.walk([&](memref::AllocaOp a) {
      if (!a.getType().getMemorySpace())
        allocas.push_back(a);
    });
    auto privateSpace = gpu::AddressSpaceAttr::get(
        &getContext(), gpu::AddressSpace::Private);
    Block &entry = func.getBody().front();
    OpBuilder b(&getContext());
    b.setInsertionPointToStart(&entry);
    for (memref::AllocaOp alloca : allocas) {
      MemRefType type = alloca.getType();
      if (!type.hasStaticShape() || !alloca.getDynamicSizes().empty() ||
          !alloca.getSymbolOperands().empty()) {
        alloca.emitError("per-thread array of dynamic size ")
            << type << ": the AMDGPU backend has no dynamic stack allocation";
        return signalPassFailure();
      }
      auto privateType =
          MemRefType::get(type.getShape(), type.getElementType(),
                          type.getLayout(), privateSpace);
      auto moved = memref::AllocaOp::create(b, alloca.getLoc(), privateType,
                                            alloca.getAlignmentAttr());
      auto flat = memref::MemorySpaceCastOp::create(b, alloca.getLoc(), type,
                                                    moved.getResult());
      alloca.getResult().replaceAllUsesWith(flat.getResult());
      alloca.erase();
    }
  }
};

} // namespace
