//===- WarpSpecialize.cpp - tile-warp-specialize ---------------------------===//
//
// Decides, on tile IR, which pipelined loops become warp-specialized Hopper
// kernels and how: the producer/consumer warpgroup split, register budgets
// and pipeline depth (Analysis/WarpSpecialization.h). The decision is an
// attribute on the loop that convert-tile-gemm-to-sm90 implements; the tile
// program itself is unchanged.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Conversion/TileToSM90/Analysis/WarpSpecialization.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEWARPSPECIALIZE
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

namespace {
struct TileWarpSpecializePass
    : public tile::impl::TileWarpSpecializeBase<TileWarpSpecializePass> {
  using Base::Base;

  void runOnOperation() override {
    if (!isSM90Chip(chip))
      return;
    auto mode = parsePersistentMode(persistent);
    if (failed(mode)) {
      getOperation().emitError("tile-warp-specialize: persistent must be "
                               "auto, true or false, not '")
          << persistent << "'";
      return signalPassFailure();
    }
    auto sched = parseScheduleMode(schedule);
    if (failed(sched)) {
      getOperation().emitError("tile-warp-specialize: schedule must be "
                               "auto, cooperative or pingpong, not '")
          << schedule << "'";
      return signalPassFailure();
    }
    auto epi = parseEpilogueMode(epilogue);
    if (failed(epi)) {
      getOperation().emitError("tile-warp-specialize: epilogue must be "
                               "auto, tma or registers, not '")
          << epilogue << "'";
      return signalPassFailure();
    }
    // Remarks say why a GEMM keeps the sm_80 lowering; launches without a
    // tile.gemm (reductions, elementwise kernels) have no Hopper GEMM path
    // to miss.
    auto hasGemm = [](Operation *op) {
      return op->walk([](GemmOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
    };
    if (remarks)
      getOperation().walk([&](LaunchOp launch) {
        if (launch.getBody().getOps<PipelinedOp>().empty() && hasGemm(launch))
          launch->emitRemark("no sm90 GEMM kernels: the launch has no "
                             "tile.pipelined loop (the sm_90a path is a "
                             "pipelined GEMM K loop)");
      });
    getOperation().walk([&](PipelinedOp loop) {
      loop->removeAttr(kWarpSpecializeAttr);
      std::string why;
      auto m = matchSM90Gemm(loop, why);
      if (failed(m)) {
        // Remarks say why a GEMM loop gets no dedicated Hopper GEMM
        // kernels; they are not the only sm_90a path (attention loops get
        // the generic warp-specialized variants, whose own remark says
        // when they do not apply), so the remark says so too.
        if (remarks && hasGemm(loop))
          loop->emitRemark("no sm90 GEMM kernels: ")
              << why
              << " (this is about the dedicated GEMM kernels; the generic "
                 "warp-specialized variant is separate, and a 'no "
                 "warp-specialized variant' remark says when it does not "
                 "apply)";
        return;
      }
      // A launch tile of more than 128 rows runs as 128-row CTA tiles
      // (splitTile): the plan is a 128-row tile's.
      GemmMatch planned = *m;
      planned.tileM = std::min<int64_t>(m->tileM, 128);
      if (m->tileM > 128) {
        if (failed(splitTile(*m, 256, why))) {
          if (remarks)
            loop->emitRemark("no sm90 GEMM kernels: the ")
                << m->tileM << "-row launch tile would run as CTA tiles of "
                << "128 rows, but " << why;
          return;
        }
        if (remarks)
          loop->emitRemark("sm90: the ")
              << m->tileM << "-row launch tile runs as " << m->tileM / 128
              << " CTA tiles of 128 rows (the consumer warpgroups' "
                 "accumulators cover 128 rows)";
      }
      WarpSpecialization ws =
          decideWarpSpecialization(planned, *mode, *sched, *epi);
      // 64-row tiles get one consumer warpgroup: measured 0.2-0.45x of
      // cuBLAS for 64x64 tiles where 128x128 ones reach 0.95-1.1x
      // (docs/performance.md, "Batched GEMMs on the Hopper path"); the
      // wide-tile variant (two block rows per CTA tile) covers launches of
      // enough blocks.
      if (remarks && m->tileM == 64)
        loop->emitRemark("sm90: the 64-row tile runs one consumer warpgroup "
                         "(m64 wgmmas); launches of enough blocks run the "
                         "wide-tile variant (128-row CTA tiles of several "
                         "blocks), smaller ones the 64-row tiles");
      // A persistent cooperative kernel stores C through TMA where it can;
      // a remark says why this one stores from the registers.
      if (remarks && *epi != EpilogueMode::Registers && ws.persistent &&
          !ws.pingpong && !ws.tmaStore)
        loop->emitRemark("sm90: C is stored from registers, not by TMA: ")
            << (m->outType.getIntOrFloatBitWidth() != 16
                    ? "C is not a 16-bit type"
                    : "the tile's N is not a multiple of 128");
      loop->setAttr(kWarpSpecializeAttr, ws.toAttr(&getContext()));
    });
  }
};
} // namespace
