//===- AttachMetadata.cpp - tile-attach-metadata pass ---------------------===//

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/Dialect/Tile/Transforms/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEATTACHMETADATA
#include "tile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
struct TileAttachMetadataPass
    : public tile::impl::TileAttachMetadataBase<TileAttachMetadataPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels = getKernelFunctions(module);
    if (kernels.size() != 1) {
      module.emitError("expected exactly one tile.kernel function in the "
                       "module, found ")
          << kernels.size();
      return signalPassFailure();
    }
    auto info = buildKernelInfo(kernels.front(), target, chip, features);
    if (failed(info))
      return signalPassFailure();
    setKernelInfo(module, *info);
  }
};
} // namespace
