//===- ChunkLayouts.cpp - row-chunk fragment layouts and their slices ------===//
//
// The layouts of fragments copied from or to global memory in 16-byte row
// chunks (getVectorLinearLayout, getRowWarpLayout) and of the vectors read
// along their rows or columns (getChunkSliceLayout). See Layouts.h.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::tile;

FragmentLayoutAttr mlir::tile::getRowWarpLayout(MLIRContext *ctx,
                                                int64_t rows, int64_t cols,
                                                int64_t threads, int64_t vec,
                                                int64_t lanes) {
  if (vec < 1 || lanes < 1 || threads % lanes != 0 ||
      cols % (vec * lanes) != 0)
    return {};
  int64_t warps = threads / lanes, q = cols / (vec * lanes);
  if (rows % warps != 0)
    return {};
  AffineExpr r = getAffineDimExpr(0, ctx), c = getAffineDimExpr(1, ctx);
  AffineExpr chunk = c.floorDiv(vec);
  auto thread = AffineMap::get(2, 0, (r % warps) * lanes + chunk % lanes);
  auto index = AffineMap::get(
      2, 0, ((r.floorDiv(warps) * q + chunk.floorDiv(lanes)) * vec) + c % vec);
  AffineExpr t = getAffineDimExpr(0, ctx), s = getAffineDimExpr(1, ctx);
  AffineExpr row = s.floorDiv(q * vec) * warps + t.floorDiv(lanes);
  AffineExpr col =
      ((s.floorDiv(vec) % q) * lanes + t % lanes) * vec + s % vec;
  auto inverse = AffineMap::get(2, 0, {row, col}, ctx);
  return FragmentLayoutAttr::get(ctx, thread, index, threads, 1, inverse);
}

/// The row-warp parameters (vec, lanes) of `layout`, if it is one.
static std::optional<std::pair<int64_t, int64_t>>
matchRowWarpLayout(FragmentLayoutAttr layout, ArrayRef<int64_t> shape,
                   int64_t threads, int64_t lanes) {
  if (!layout || shape.size() != 2)
    return std::nullopt;
  for (int64_t vec : {16, 8, 4, 2, 1})
    if (FragmentLayoutAttr l = getRowWarpLayout(
            layout.getContext(), shape[0], shape[1], threads, vec, lanes);
        l && l == layout)
      return std::make_pair(vec, lanes);
  return std::nullopt;
}

FragmentLayoutAttr mlir::tile::getChunkSliceLayout(FragmentLayoutAttr layout,
                                                   ArrayRef<int64_t> shape,
                                                   int64_t threads,
                                                   int64_t lanes,
                                                   unsigned keepDim) {
  if (!layout || shape.size() != 2 || keepDim > 1)
    return {};
  MLIRContext *ctx = layout.getContext();
  int64_t rows = shape[0], cols = shape[1];
  AffineExpr i = getAffineDimExpr(0, ctx);
  AffineExpr t = getAffineDimExpr(0, ctx), s = getAffineDimExpr(1, ctx);
  auto make = [&](AffineExpr owner, AffineExpr slot, int64_t replicate,
                  AffineExpr inv) {
    return FragmentLayoutAttr::get(ctx, AffineMap::get(1, 0, owner),
                                   AffineMap::get(1, 0, slot), threads,
                                   replicate, AffineMap::get(2, 0, inv));
  };
  if (auto rw = matchRowWarpLayout(layout, shape, threads, lanes)) {
    int64_t vec = rw->first, warps = threads / lanes;
    if (keepDim == 0) // row i: every lane of warp i mod W
      return make((i % warps) * lanes, i.floorDiv(warps), lanes,
                  s * warps + t.floorDiv(lanes));
    // column j: lane (j floordiv vec) mod lanes of every warp
    AffineExpr chunk = i.floorDiv(vec);
    return make(chunk % lanes, chunk.floorDiv(lanes) * vec + i % vec, warps,
                (s.floorDiv(vec) * lanes + t % lanes) * vec + s % vec);
  }
  std::optional<int64_t> vec = matchVectorLinearLayout(layout, shape, threads);
  if (!vec)
    return {};
  if (keepDim == 1)
    return getColumnSliceLayout(ctx, cols, threads, *vec);
  int64_t chunks = cols / *vec; // per row
  if (chunks % threads == 0)   // every thread holds part of every row
    return getReplicatedLayout(ctx, {rows}, threads);
  if (threads % chunks != 0)
    return {};
  // Row i in the `chunks` consecutive threads from (i mod G) * chunks.
  int64_t groups = threads / chunks;
  return make((i % groups) * chunks, i.floorDiv(groups), chunks,
              s * groups + t.floorDiv(chunks));
}
