//===- GemmMatch.h - GEMM launches the sm90 kernel implements -*- C++ -*-===//
//
// An analysis of tile IR used by tile-warp-specialize (to decide) and
// convert-tile-gemm-to-sm90 (to build): `matchSM90Gemm` recognizes the
// launch shape that the Hopper kernel (TMA + mbarrier + wgmma, warp
// specialized) implements:
//
//   tile.launch ... {
//     %As = tile.alloc : memref<TMxKTxT, shared>      T = f16 | bf16
//     %Bs = tile.alloc : memref<KTxTNxT, shared>     (transpose_b: TNxKT)
//     %Cf = tile.alloc : memref<TMxTNxf32, fragment>
//     <pure index computations>
//     tile.clear %Cf
//     tile.pipelined %k = 0 to ceildiv(K, KT) step 1 stages(S) {
//       <pure index computations>
//       tile.copy %A[%m, %k*KT] to %As         A: memref<?x?xT> (row-major)
//       tile.copy %B[%k*KT, %n] to %Bs         B: memref<?x?xT> (K x N)
//       tile.gemm %As, %Bs, %Cf
//         or, B stored N x K (a linear layer's weight, y = x W^T):
//       tile.copy %B[%n, %k*KT] to %Bs
//       tile.gemm %As, %Bs, %Cf {transpose_b}
//         and/or A stored K x M (a weight gradient's X^T dY), %As KTxTM:
//       tile.copy %A[%k*KT, %m] to %As
//       tile.gemm %As, %Bs, %Cf {transpose_a}
//     }
//     tile.parallel (%i, %j) in [TM, TN] {...}   an elementwise epilogue (0+)
//     tile.copy %Cf to %C[%cm, %cn]            C: memref<?x?xf16|bf16|f32>
//   }
//
// with TM in {64, 128}, TN a multiple of 64 up to 256, KT in {16, 32, 64}
// and K = memref.dim of A's K dim (1, or 0 with transpose_a) or B's K dim
// (0, or 1 with transpose_b).
//
// Batched: any of A, B and C may have leading batch dims (rank 3 to 5, a
// row-major BxMxK A, ...), copied by a rank-reducing tile.copy that drops
// exactly those dims (`tile.copy %A[%b, %m, %k*KT] to %As drop_dims [0]`),
// with loop-invariant batch indices; the dims above are then the last two
// (K = A's last dim, ...). The kernels read and write the batch's matrix
// (rank-3+ tensor maps, views of the batch for the other accesses).
// An epilogue parallel's
// body is flat (no regions): pure ops, loads of %Cf[%i, %j], loads of
// global memrefs defined outside the launch (a bias vector, ...) and
// stores to %Cf[%i, %j]; the Hopper kernel applies it to each accumulator
// element (row %i, column %j of the tile) before C is stored.
//
// Staged epilogue operands: the epilogue may also read on-chip buffers
// (shared, fragment or local) that one tile.copy fills from a global tensor
// other than C, in the launch body before the first epilogue parallel (a
// bias tile staged in shared memory, as TileLang programs write it):
//
//     %bs = tile.alloc : memref<TNxT, shared>
//     tile.copy %bias[%n] to %bs              (before or after the loop)
//     tile.parallel (%i, %j) in [TM, TN] { ... memref.load %bs[%j] ... }
//
// The Hopper kernels read the global element the copy would have put there
// instead (zero out of bounds, converted to the buffer's element type), so
// the buffer takes no shared memory and no barrier.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_TILETOSM90_ANALYSIS_GEMMMATCH_H
#define TILE_CONVERSION_TILETOSM90_ANALYSIS_GEMMMATCH_H

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tile::sm90 {

/// An on-chip buffer read by the epilogue and filled by one copy from a
/// global tensor (see above).
struct StagedOperand {
  AllocOp alloc;
  CopyOp fill;
};

struct GemmMatch {
  LaunchOp launch;
  AllocOp aAlloc, bAlloc, cAlloc;
  ClearOp clear;
  PipelinedOp loop;
  CopyOp copyA, copyB, copyOut;
  GemmOp gemm;
  SmallVector<ParallelOp> epilogue; // elementwise, in order
  SmallVector<StagedOperand> staged; // epilogue operands staged on chip
  Value A, B, C;                  // global memrefs (kernel arguments)
  Value aRow, bCol, cRow, cCol;   // tile origins (defined outside the loop)
  /// The batch indices of A, B and C (their leading dims, outermost
  /// first; empty for a rank-2 operand), defined outside the loop.
  SmallVector<Value> aBatch, bBatch, cBatch;
  int64_t tileM = 0, tileN = 0, kt = 0;
  Type inType, outType;
  /// B is stored N x K (transpose_b): its TMA boxes are 64 rows of N by
  /// 64 K, K-major like A's, and wgmma reads B K-major. Otherwise K x N,
  /// boxes of 64 K rows by 64 columns, read MN-major.
  bool transB = false;
  /// A is stored K x M (transpose_a): its TMA boxes are 64 K rows by 64
  /// columns of M, like a K x N B's, and wgmma reads A MN-major. Otherwise
  /// M x K, boxes of rows by 64 K, read K-major.
  bool transA = false;
  /// A's K dim among its last two (0 for a K x M A).
  unsigned aKDim() const { return transA ? 0 : 1; }

  /// Whether any operand has batch dims.
  bool batched() const {
    return !aBatch.empty() || !bBatch.empty() || !cBatch.empty();
  }
  /// The staged operand whose on-chip buffer is `buffer`, or null.
  const StagedOperand *stagedFor(Value buffer) const {
    for (const StagedOperand &s : staged)
      if (AllocOp(s.alloc).getBuffer() == buffer)
        return &s;
    return nullptr;
  }
};

/// Launch tiles of more rows than 128 (a multiple of 128) run as CTA tiles
/// of 128 rows (splitTile), up to this many.
constexpr int64_t kMaxSplitTileM = 512;

/// Returns the match or fills `why` with the first reason it fails.
FailureOr<GemmMatch> matchSM90Gemm(PipelinedOp loop, std::string &why);

/// How launch blocks group into one CTA tile of the coarse-tile kernel
/// (WideTileKernel): `rows` blocks along the grid axis `rowAxis` (their A
/// tiles stacked) times `cols` blocks along `colAxis` (their B tiles side
/// by side), a CTA tile of (rows * TM) x (cols * TN). An axis is -1 when
/// its factor is 1.
struct CoarseTile {
  int64_t rowAxis = -1, colAxis = -1;
  int64_t rows = 1, cols = 1;
  /// CTA tiles per launch block along rowAxis (splitTile: launch tiles of
  /// more than 128 rows run as 128-row parts); rows is then 1.
  int64_t parts = 1;
  int64_t blocks() const { return rows * cols; }
  /// Whether the CTA tile is not the launch tile (WideTileKernel).
  bool any() const { return blocks() > 1 || parts > 1; }
};

/// The coarse tile of a launch for a CTA tile of ctaM x ctaN: rows = ctaM
/// / TM and cols = ctaN / TN where the launch tile divides it (else 1).
/// The variants ask for 128 x 256 (the shape measured fastest on the H200,
/// docs/performance.md: rows 2 for 64-row tiles, cols 4, 2 or 1 for 64,
/// 128 or 256 columns, 1 for 192) and, for launch tiles below 128 in both
/// dims, 128 x 128 (twice the CTAs of 128 x 256 for mid-size grids).
/// Grouping blocks along an axis needs the axis to move only its operand:
/// rowAxis is the first grid axis whose block index moves A's tile row
/// (m.aRow) but not B's column nor a batch index; colAxis the first other
/// axis that moves B's column but not A's row nor a batch index; so the
/// blocks of one CTA tile read rows x cols distinct (A tile, B tile) pairs
/// of `rows` A tiles and `cols` B tiles. A factor whose axis does not exist
/// drops to 1; failure with the reason in `why` when both are 1.
FailureOr<CoarseTile> coarseTile(const GemmMatch &m, int64_t ctaM,
                                 int64_t ctaN, std::string &why);

/// The CTA tiles of a launch tile of more than 128 rows (TM a multiple of
/// 128; the consumer warpgroups' accumulators cover 128 rows): parts = TM /
/// 128 parts of 128 rows along rowAxis (the first grid axis moving only
/// A's tile row, as coarseTile), each also grouping cols = ctaN / TN blocks
/// along colAxis where TN divides ctaN and such an axis exists (else 1):
/// CTA tiles of 128 x (cols * TN). The variants ask for ctaN = 256 and, for
/// TN dividing 128, also 128 (twice the CTAs for small grids). Failure with
/// the reason in `why` when no axis moves only A's tile row.
FailureOr<CoarseTile> splitTile(const GemmMatch &m, int64_t ctaN,
                                std::string &why);

/// The tile-shape cost model's estimate (metadata "coarse_speedup", the
/// runtime's useCoarseTiles) of how much faster, in percent, a launch block
/// of tileM x tileN runs inside a CTA tile of coarseM x coarseN than as a
/// CTA tile of its own: the ratio of the two shapes' throughput on the
/// H200 (relative to cuBLAS on large aligned GEMMs, docs/performance.md
/// "Coarse tiles"; 4096^3, f16 and bf16): 128x256 0.95, 128x192 0.88
/// (not measured), 128x128 0.76, 128x64 0.48, 64x256 0.62 and 64x192
/// 0.58 (not measured), 64x128 0.54, 64x64 0.35. 125 for 128x128 ->
/// 128x256, 271 for 64x64.
int64_t coarseSpeedupPct(int64_t tileM, int64_t tileN, int64_t coarseM,
                         int64_t coarseN);

/// Whether the narrow variant (NarrowKernel: the first `rows` rows of each
/// launch tile) computes every row of C that the launch stores when A and
/// C have at most `rows` rows (the runtime's "max_rows" rule): the tile has
/// at least `rows` rows and the tile row origins of A and C are provably
/// non-negative, so the rows of C a tile stores (< `rows`) are its first
/// `rows`. Failure with the reason in `why` otherwise.
LogicalResult narrowRowsApply(const GemmMatch &m, int64_t rows,
                              std::string &why);

} // namespace mlir::tile::sm90

#endif // TILE_CONVERSION_TILETOSM90_ANALYSIS_GEMMMATCH_H
