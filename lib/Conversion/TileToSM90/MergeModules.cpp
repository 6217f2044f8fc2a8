//===- MergeModules.cpp - tile-sm90-merge-modules --------------------------===//

#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESM90MERGEMODULES
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {
struct TileSM90MergeModulesPass
    : public tile::impl::TileSM90MergeModulesBase<TileSM90MergeModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> variants;
    for (auto gm : module.getOps<gpu::GPUModuleOp>())
      if (gm.getName().ends_with("_sm90_module"))
        variants.push_back(gm);
    for (gpu::GPUModuleOp from : variants) {
      std::string target =
          from.getName().drop_back(strlen("_sm90_module")).str() + "_module";
      auto to = module.lookupSymbol<gpu::GPUModuleOp>(target);
      if (!to) {
        // No generic kernel module (it failed or was not built): keep the
        // variant as its own module under the target name.
        from.setName(target);
        continue;
      }
      Block &dst = to.getBodyRegion().front();
      SmallVector<Operation *> ops;
      for (Operation &op : from.getBodyRegion().front())
        if (!op.hasTrait<OpTrait::IsTerminator>())
          ops.push_back(&op);
      for (Operation *op : ops) {
        if (!dst.empty() && dst.back().hasTrait<OpTrait::IsTerminator>())
          op->moveBefore(&dst.back());
        else
          op->moveBefore(&dst, dst.end());
      }
      from.erase();
    }
  }
};
} // namespace
