//===- WarpSpecialization.h - the sm90 warp-specialization plan -*- C++ -*-===//
//
// What tile-warp-specialize decides for a matched GEMM (GemmMatch.h) and
// convert-tile-gemm-to-sm90 implements: the producer/consumer warpgroup
// split, setmaxnreg budgets, pipeline depth and schedule (cooperative,
// ping-pong, persistent, TMA-store epilogue). The plan travels between the
// two passes as the `sm90.warp_specialize` dictionary on the tile.pipelined
// loop (toAttr / fromAttr). The numbers are the Hopper target's (227 KiB of
// shared memory, 64K registers, 132 SMs on the H100/H200).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_TILETOSM90_ANALYSIS_WARPSPECIALIZATION_H
#define TILE_CONVERSION_TILETOSM90_ANALYSIS_WARPSPECIALIZATION_H

#include "tile/Conversion/TileToSM90/Analysis/GemmMatch.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::tile::sm90 {

/// The attribute tile-warp-specialize puts on a matched tile.pipelined.
constexpr StringLiteral kWarpSpecializeAttr = "sm90.warp_specialize";

/// The hardware K tile: one 128-byte swizzle row of 16-bit elements.
constexpr int64_t kBlockK = 64;

/// The decision of tile-warp-specialize (read back from the attribute).
struct WarpSpecialization {
  int64_t producers = 1;      // warpgroups issuing TMA (thread 0 of the first)
  int64_t consumers = 1;      // warpgroups running wgmma, 64 rows each
  int64_t producerRegs = 40;  // setmaxnreg.dec
  int64_t consumerRegs = 232; // setmaxnreg.inc
  int64_t blockK = kBlockK;
  int64_t stages = 4;
  /// Persistent kernel (grid = one CTA per SM, each CTA loops over output
  /// tiles, mbarrier phases carried across tiles, epilogue straight from
  /// the accumulator registers so the producer refills the stages for the
  /// next tile meanwhile). Recorded in the attribute only when true.
  bool persistent = false;
  /// Ping-pong schedule (implies persistent, two consumer warpgroups): the
  /// launch tile is cut into TMx`unitN` units (accumulator <= 128 f32 per
  /// thread); each consumer warpgroup owns whole units (the CTA's units
  /// alternate between the two) and runs its epilogue while the other runs
  /// its mainloop, ordered by named barriers. Recorded only when true.
  bool pingpong = false;
  int64_t unitN = 0; // ping-pong: the unit's columns (divides the tile N)
  /// TMA-store epilogue (the default of persistent cooperative kernels
  /// with a 16-bit C): each consumer warpgroup applies the launch's
  /// elementwise epilogue, if any, and writes its accumulators, 64 columns
  /// at a time, into one of two
  /// 128B-swizzled 64x64 staging buffers and one thread stores them with
  /// cp.async.bulk.tensor (a third tensor map, of C, marked optional), so
  /// the stores run asynchronously under the next tile's mainloop. A
  /// launch whose C no tensor map describes (the runtime passes a null map)
  /// copies the staged chunks out with its threads instead. Recorded in
  /// the attribute only when true.
  bool tmaStore = false;
  /// Loads without TMA (the variant for operands no tensor map can
  /// describe, e.g. an f16 row pitch that is not a multiple of 16 bytes):
  /// every producer thread loads 16-byte chunks of A and B element-wise
  /// (bounds-checked, zero outside) into the same 128B-swizzled stage
  /// layout TMA writes, fences the async proxy and arrives on the stage's
  /// full barrier. Cooperative or persistent schedules only; set by
  /// convert-tile-gemm-to-sm90 for its extra variant, never in the
  /// attribute.
  bool ldgLoads = false;
  /// Split-K (the variant for grids of at most kSplitKMaxTiles tiles, see
  /// SplitKKernel): the non-persistent cooperative tile whose K loop is
  /// cut into the launch's grid.y slices, reduced through an f32
  /// workspace. Set by convert-tile-gemm-to-sm90 for its extra variant,
  /// never in the attribute.
  bool splitK = false;
  /// Coarse tiles (the variant for launches whose grid gives enough of
  /// them, see WideTileKernel): blocks() > 1, the launch blocks that make
  /// one CTA tile (GemmMatch.h, coarseTile). Set by
  /// convert-tile-gemm-to-sm90 for its extra variant, never in the
  /// attribute.
  CoarseTile coarse;
  /// Narrow rows (the variant for launches of at most this many rows of A
  /// and C, see NarrowKernel): > 0, the split-K kernel that computes only
  /// the first `narrowRows` rows of each launch tile with the operands
  /// swapped (B's tile is wgmma's A, 64 of its columns per consumer
  /// warpgroup; A's rows are wgmma's N). Set by convert-tile-gemm-to-sm90
  /// for its extra variant, never in the attribute.
  int64_t narrowRows = 0;
  /// CTAs per multiprocessor the kernel is built for (nvvm.minctasm). With
  /// more than one, no setmaxnreg: producerRegs and consumerRegs are 0.
  int64_t ctasPerSm = 1;
  /// Shared bytes of the TMA-store staging buffers (0 without).
  int64_t stagingBytes() const { return tmaStore ? consumers * 2 * 8192 : 0; }
  int64_t threads() const { return 128 * (producers + consumers); }
  /// The consumers' setmaxnreg for producers at `producerRegs`: what the
  /// CTA's allocation (65536 / threads rounded down to 8, times threads)
  /// leaves, rounded down to 8, at most 232. setmaxnreg only moves
  /// registers within that allocation: asking for more waits forever.
  int64_t consumerRegisterBudget() const;

  DictionaryAttr toAttr(MLIRContext *ctx) const;
  static FailureOr<WarpSpecialization> fromAttr(Attribute attr);
};

/// Persistent-kernel request: PersistentMode::Auto lets the policy decide.
enum class PersistentMode { Auto, On, Off };
/// "auto" | "true"/"1"/"on" | "false"/"0"/"off"; failure otherwise.
FailureOr<PersistentMode> parsePersistentMode(StringRef s);

/// Consumer schedule request (ScheduleMode::Auto lets the policy decide).
enum class ScheduleMode { Auto, Cooperative, PingPong };
/// "auto" | "cooperative" | "pingpong"; failure otherwise.
FailureOr<ScheduleMode> parseScheduleMode(StringRef s);
/// Epilogue request: EpilogueMode::Auto = the TMA-store epilogue where it
/// applies (persistent cooperative, 16-bit C, TN % 128 == 0), else stores
/// from registers (persistent) or
/// through the f32 staging tile; Tma = the same, and persistent unless
/// persistent=false; Registers = never the TMA-store epilogue.
enum class EpilogueMode { Auto, Tma, Registers };
/// "auto" | "tma" | "registers"; failure otherwise.
FailureOr<EpilogueMode> parseEpilogueMode(StringRef s);

/// The ping-pong unit's columns for a match, or 0 where it does not apply.
int64_t pingpongUnitN(const GemmMatch &m);

/// The decision for a match (tile-warp-specialize's policy).
WarpSpecialization
decideWarpSpecialization(const GemmMatch &m,
                         PersistentMode persistent = PersistentMode::Auto,
                         ScheduleMode schedule = ScheduleMode::Auto,
                         EpilogueMode epilogue = EpilogueMode::Auto);

/// Whether tile-warp-specialize applies to `chip` (sm_90a: wgmma and
/// setmaxnreg need the architecture-specific target).
bool isSM90Chip(StringRef chip);

/// The split-K variant runs launches of at most this many tiles: half the
/// H100/H200's 132 SMs, so that at least 2 slices per tile fit in one wave
/// (the runtime's rule, docs/pipelines.md "Split-K"). The workspace does
/// not depend on it: the runtime sizes it per launch (tiles x slices).
constexpr int64_t kSplitKMaxTiles = 132 / 2;

/// The rows of the narrow variants' tiles (wgmma's N in their swapped
/// product), smallest first: launches of at most R rows run the R-row
/// variant (the runtime's "max_rows" rule; it takes the first that
/// accepts, so M <= 16 gets 16 rows and 17..64 get 64).
constexpr int64_t kNarrowRows[] = {16, 64};

/// Shared memory of one Hopper multiprocessor that CTAs can use (228 KiB
/// on the H100/H200, 1 KiB of it reserved per CTA): the runtime's
/// residency estimate for the narrow variant uses the same figure.
constexpr int64_t kSharedBytesPerSm = 233472;

} // namespace mlir::tile::sm90

#endif // TILE_CONVERSION_TILETOSM90_ANALYSIS_WARPSPECIALIZATION_H
