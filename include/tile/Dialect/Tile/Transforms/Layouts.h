//===- Layouts.h - standard fragment layouts and swizzles -------*- C++ -*-===//
//
// The layouts tile-infer-layouts chooses (all with an inverse map), shared
// with the GPU lowering, which recognizes the mma.sync accumulator layout to
// select tensor-core code.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_TRANSFORMS_LAYOUTS_H
#define TILE_DIALECT_TILE_TRANSFORMS_LAYOUTS_H

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include <optional>

namespace mlir::tile {

/// Element l (row-major linear index) in thread l mod T, register
/// l floordiv T. Needs numElements % threads == 0.
FragmentLayoutAttr getLinearLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                   int64_t threads);

/// The linear layout over chunks of `vec` consecutive elements of a row:
/// chunk c = l floordiv vec in thread c mod T, its elements in registers
/// (c floordiv T) * vec + l mod vec, so each thread's registers come in runs
/// of `vec` contiguous columns (one 16-byte global access per run). Needs
/// shape.back() % vec == 0 and numElements % (threads * vec) == 0.
FragmentLayoutAttr getVectorLinearLayout(MLIRContext *ctx,
                                         ArrayRef<int64_t> shape,
                                         int64_t threads, int64_t vec);

/// The layout of a column statistic (a vector of C) of an R x C fragment in
/// getVectorLinearLayout({R, C}, threads, vec): element j in exactly the
/// threads that hold column j, so a reduction over the rows is thread-local
/// and then a combine among those threads, and an elementwise op on the
/// fragment reads it from a register. With P = C / vec chunks per row:
/// P % threads == 0 gives getVectorLinearLayout({C}, threads, vec) (one
/// holder per column); threads % P == 0 gives thread t column chunk t % P,
/// replicated threads / P times (register j % vec). Null otherwise.
FragmentLayoutAttr getColumnSliceLayout(MLIRContext *ctx, int64_t cols,
                                        int64_t threads, int64_t vec);

/// The `vec` of getVectorLinearLayout(shape, threads, vec) (1: the linear
/// layout) when `layout` is one of those (vec 16, 8, 4, 2 or 1).
std::optional<int64_t> matchVectorLinearLayout(FragmentLayoutAttr layout,
                                               ArrayRef<int64_t> shape,
                                               int64_t threads);

/// A warp per row: the R x C tile's rows in chunks of `vec` columns, row r
/// in warp r mod W (W = threads / lanes), chunk k of a row in lane k mod
/// lanes, register ((r floordiv W) * Q + k floordiv lanes) * vec + c mod vec
/// (Q = C / (vec * lanes) chunks per lane and row). A reduction along a
/// row is then thread-local partials and shuffles inside one warp, where
/// getVectorLinearLayout spreads a row of more than `lanes` chunks over
/// several warps (a combine through shared memory with barriers); each warp
/// access still covers `lanes` consecutive chunks of one row. Needs
/// C % (vec * lanes) == 0, threads % lanes == 0 and R % W == 0; null
/// otherwise.
FragmentLayoutAttr getRowWarpLayout(MLIRContext *ctx, int64_t rows,
                                    int64_t cols, int64_t threads,
                                    int64_t vec, int64_t lanes);

/// The layout of a row (keepDim = 0: a vector of R) or column (keepDim = 1:
/// a vector of C) statistic of an R x C fragment laid out by
/// getVectorLinearLayout or getRowWarpLayout: element i in exactly the
/// threads that hold row (column) i, at a register slot that is the same
/// in each of them, so a reduction along the other dim is thread-local and
/// then shuffles among those threads, and an elementwise op on the fragment
/// reads the vector from its own registers. Null when `layout` is neither
/// or the holders do not have that shape.
FragmentLayoutAttr getChunkSliceLayout(FragmentLayoutAttr layout,
                                       ArrayRef<int64_t> shape,
                                       int64_t threads, int64_t lanes,
                                       unsigned keepDim);

/// Every thread holds the whole tile: register r = element r (row-major);
/// canonical owner of element l is thread l mod T.
FragmentLayoutAttr getReplicatedLayout(MLIRContext *ctx,
                                       ArrayRef<int64_t> shape,
                                       int64_t threads);

/// How the warps of a block tile an MxN mma.sync accumulator.
struct MmaWarpTiling {
  int64_t warpsM = 1, warpsN = 1; // warps along M and N
  int64_t warpM = 0, warpN = 0;   // warp tile (multiple of 16 x 8)
};

/// The warp tiling for an MxN accumulator over `threads` threads, if the
/// shape and thread count allow the m16n8 accumulator layout.
std::optional<MmaWarpTiling> chooseMmaWarpTiling(int64_t m, int64_t n,
                                                 int64_t threads);

/// The mma.sync m16n8 accumulator layout (PTX ISA "mma.m16n8k16 fragment
/// C/D") with the block's warps tiling C per `tiling`: lane l of an MMA tile
/// holds rows l/4 and l/4 + 8, columns 2*(l%4) + {0, 1}; register
/// 4*tile + 2*(row >= 8) + (col % 2), tiles of a warp numbered row-major.
FragmentLayoutAttr getMmaAccumulatorLayout(MLIRContext *ctx, int64_t m,
                                           int64_t n, int64_t threads,
                                           const MmaWarpTiling &tiling);

/// The tiling if `layout` is exactly the mma accumulator layout of an MxN
/// tile over `threads` threads with any valid warp tiling (not only the one
/// chooseMmaWarpTiling prefers).
std::optional<MmaWarpTiling> matchMmaAccumulatorLayout(FragmentLayoutAttr layout,
                                                      ArrayRef<int64_t> shape);

/// The tiling that gives every warp whole rows (warpsN = 1): the tiling of
/// an accumulator whose rows feed the A operand of another mma from
/// registers, and of that A operand. Needs m % (16 * warps) == 0 and
/// n % 8 == 0.
std::optional<MmaWarpTiling> getMmaRowWarpTiling(int64_t m, int64_t n,
                                                 int64_t threads);

/// The layout of one row (keepDim = 0: a vector of M) or column (keepDim =
/// 1: a vector of N) statistic of an mma accumulator laid out per `tiling`:
/// element i lives in exactly the threads that hold accumulator row
/// (column) i, so a reduction of the accumulator along the other dim needs
/// only shuffles among those threads (the quad of a row with warpsN = 1)
/// and an elementwise op on the accumulator reads it from a register.
FragmentLayoutAttr getMmaSliceLayout(MLIRContext *ctx, int64_t m, int64_t n,
                                     int64_t threads,
                                     const MmaWarpTiling &tiling,
                                     unsigned keepDim);

/// The lanes of an AMD CDNA wavefront (the MFMA layouts below).
inline constexpr int64_t kMfmaWaveSize = 64;

/// The wave tiling for an MxN accumulator of MFMA 16x16 tiles over
/// `threads` threads (wavefronts of 64), if the shape and thread count
/// allow it (the MmaWarpTiling's warps are wavefronts, its warp tiles
/// multiples of 16 x 16).
std::optional<MmaWarpTiling> chooseMfmaWaveTiling(int64_t m, int64_t n,
                                                  int64_t threads);

/// The accumulator layout of v_mfma_f32_16x16x16{f16,bf16} (AMD CDNA3 ISA,
/// "dense matrix layouts"): in each 16x16 tile lane l holds column l % 16
/// and rows 4 * (l / 16) + {0..3} in registers 4 * tile + {0..3}; tiles of
/// a wave numbered row-major, waves tiling C per `tiling`.
FragmentLayoutAttr getMfmaAccumulatorLayout(MLIRContext *ctx, int64_t m,
                                            int64_t n, int64_t threads,
                                            const MmaWarpTiling &tiling);

/// The tiling if `layout` is exactly the MFMA accumulator layout of an MxN
/// tile over `threads` threads with any valid wave tiling.
std::optional<MmaWarpTiling>
matchMfmaAccumulatorLayout(FragmentLayoutAttr layout, ArrayRef<int64_t> shape);

/// getMmaSliceLayout for the MFMA accumulator layout above: row i lives in
/// the 16 lanes of each wave of its wave row that hold rows 4 * ((i % 16)
/// / 4) + {0..3} of its 16-row tile (register 4 * ((i % warpM) / 16) + i %
/// 4); column j in the 4 lanes l with l % 16 = j % 16 of each wave of its
/// wave column (register (j % warpN) / 16).
FragmentLayoutAttr getMfmaSliceLayout(MLIRContext *ctx, int64_t threads,
                                      const MmaWarpTiling &tiling,
                                      unsigned keepDim);

/// The swizzle of an LDS gemm operand whose rows are `rowBytes` long: the
/// 8-byte chunk (what one lane reads per MFMA) XORed with the row index
/// above the 128-byte bank window, so that the 16 rows read by 16 lanes
/// land on distinct banks (null when rows are shorter than 16 bytes).
SwizzleAttr getMfmaLdsSwizzle(MLIRContext *ctx, int64_t rowBytes);

/// The ldmatrix-friendly swizzle of a shared buffer whose rows are
/// `rowBytes` long (null when none is needed or possible).
SwizzleAttr getLdmatrixSwizzle(MLIRContext *ctx, int64_t rowBytes);

/// The swizzle (16-byte units, at most 3 bits) that minimizes the
/// shared-memory bank conflicts of the accesses convert-tile-to-nvgpu emits
/// for `buf`, a shared buffer with a static shape that is no gemm operand:
/// tile.parallel loads and stores (iterations placed by the driving
/// fragment's layout, from `layoutOf`), copies from and to global memory
/// and fragments, clears and fills, over warps of `lanes` threads of a block
/// of `threads`. Null when no swizzle needs fewer wavefronts than the
/// row-major layout, or when a use is something else (the buffer then keeps
/// the row-major layout).
SwizzleAttr
chooseBankConflictSwizzle(Value buf, int64_t threads, int64_t lanes,
                          function_ref<FragmentLayoutAttr(Value)> layoutOf);

} // namespace mlir::tile

#endif // TILE_DIALECT_TILE_TRANSFORMS_LAYOUTS_H
