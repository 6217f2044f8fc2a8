//===- MetalSingleStage.cpp - the tile-metal-single-stage pass ------------===//
//
// Metal's copies into threadgroup memory are synchronous (no cp.async for
// compute), so a software pipeline's extra stages only take threadgroup
// memory, of which Apple GPUs have 32 KiB: every loop runs with one stage.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/IR/TileDialect.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEMETALSINGLESTAGE
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {

struct TileMetalSingleStagePass
    : public tile::impl::TileMetalSingleStageBase<TileMetalSingleStagePass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](tile::PipelinedOp loop) {
      if (loop.getStages() <= 1)
        return;
      if (remarks)
        loop.emitRemark("metal: tile.pipelined runs with 1 stage instead of ")
            << loop.getStages()
            << " (Metal has no asynchronous copy to threadgroup memory)";
      loop.setStages(1);
    });
  }
};

} // namespace
