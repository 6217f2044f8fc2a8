//===- SM90.h - Hopper GEMM matching shared by the sm90 passes --*- C++ -*-===//
//
// Internal to lib/Conversion/TileToSM90. `matchSM90Gemm` recognizes the
// launch shape that the Hopper kernel (TMA + mbarrier + wgmma, warp
// specialized) implements:
//
//   tile.launch ... {
//     %As = tile.alloc : memref<TMxKTxT, shared>      T = f16 | bf16
//     %Bs = tile.alloc : memref<KTxTNxT, shared>
//     %Cf = tile.alloc : memref<TMxTNxf32, fragment>
//     <pure index computations>
//     tile.clear %Cf
//     tile.pipelined %k = 0 to ceildiv(K, KT) step 1 stages(S) {
//       <pure index computations>
//       tile.copy %A[%m, %k*KT] to %As         A: memref<?x?xT> (row-major)
//       tile.copy %B[%k*KT, %n] to %Bs         B: memref<?x?xT>
//       tile.gemm %As, %Bs, %Cf
//     }
//     tile.copy %Cf to %C[%cm, %cn]            C: memref<?x?xf16|bf16|f32>
//   }
//
// with TM in {64, 128}, TN a multiple of 64 up to 256, KT in {16, 32, 64}
// and K = memref.dim of A's dim 1 or B's dim 0.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_CONVERSION_TILETOSM90_SM90_H
#define TILE_LIB_CONVERSION_TILETOSM90_SM90_H

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace mlir::tile::sm90 {

/// The attribute tile-warp-specialize puts on a matched tile.pipelined.
constexpr StringLiteral kWarpSpecializeAttr = "sm90.warp_specialize";

/// The hardware K tile: one 128-byte swizzle row of 16-bit elements.
constexpr int64_t kBlockK = 64;

struct GemmMatch {
  LaunchOp launch;
  AllocOp aAlloc, bAlloc, cAlloc;
  ClearOp clear;
  PipelinedOp loop;
  CopyOp copyA, copyB, copyOut;
  GemmOp gemm;
  Value A, B, C;                  // global memrefs (kernel arguments)
  Value aRow, bCol, cRow, cCol;   // tile origins (defined outside the loop)
  int64_t tileM = 0, tileN = 0, kt = 0;
  Type inType, outType;
};

/// Returns the match or fills `why` with the first reason it fails.
FailureOr<GemmMatch> matchSM90Gemm(PipelinedOp loop, std::string &why);

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
  /// TMA-store epilogue (experimental, persistent cooperative kernels with
  /// a 16-bit C only): each consumer warpgroup writes its accumulators,
  /// 64 columns at a time, into one of two 128B-swizzled 64x64 staging
  /// buffers and one thread stores them with cp.async.bulk.tensor (a third
  /// tensor map, of C), so the stores run asynchronously under the next
  /// tile's mainloop. Recorded in the attribute only when true.
  bool tmaStore = false;
  /// Also emit a TMA-store variant (tmaStore, persistent cooperative) used
  /// for launches of at most this many tiles, before this kernel (the
  /// default for 128x256 tiles, see kTmaStoreMaxTiles). 0: only this
  /// kernel. Recorded in the attribute only when > 0.
  int64_t tmaStoreMaxTiles = 0;
  /// Shared bytes of the TMA-store staging buffers (0 without).
  int64_t stagingBytes() const { return tmaStore ? consumers * 2 * 8192 : 0; }
  int64_t threads() const { return 128 * (producers + consumers); }

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
/// Epilogue request: EpilogueMode::Auto = stores from registers (persistent)
/// or through the f32 staging tile; Tma = the TMA-store epilogue where it
/// applies (persistent cooperative, 16-bit C, TN % 128 == 0).
enum class EpilogueMode { Auto, Tma };
/// "auto" | "tma"; failure otherwise.
FailureOr<EpilogueMode> parseEpilogueMode(StringRef s);

/// The ping-pong unit's columns for a match, or 0 where it does not apply.
int64_t pingpongUnitN(const GemmMatch &m);

/// The decision for a match (tile-warp-specialize's policy).
WarpSpecialization
decideWarpSpecialization(const GemmMatch &m,
                         PersistentMode persistent = PersistentMode::Auto,
                         ScheduleMode schedule = ScheduleMode::Auto,
                         EpilogueMode epilogue = EpilogueMode::Auto);

bool isSM90Chip(StringRef chip);

/// The default 128x256 compile's TMA-store variant runs launches of at most
/// this many tiles (4 waves of the H100/H200's 132 SMs; measured on the
/// H200, docs/performance.md: the TMA-store epilogue is fastest at 4096^3 =
/// 512 tiles, the persistent cooperative kernel at 8192^3 = 2048 tiles).
constexpr int64_t kTmaStoreMaxTiles = 4 * 132;

} // namespace mlir::tile::sm90

#endif // TILE_LIB_CONVERSION_TILETOSM90_SM90_H
