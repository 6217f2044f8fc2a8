//===- InferLayouts.cpp - tile-infer-layouts ------------------------------===//
//
// Chooses a #tile.fragment (with its inverse map) for every fragment buffer
// without one, and a #tile.swizzle for shared gemm operands and for shared
// buffers whose accesses it spares bank conflicts. See Passes.td
// and docs/pipelines.md.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/Transforms/Layouts.h"
#include "tile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEINFERLAYOUTS
#include "tile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

static int64_t numElementsOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Row-major linearization of the dims of a map over `shape`.
static AffineExpr linearize(MLIRContext *ctx, ArrayRef<int64_t> shape) {
  AffineExpr l = getAffineConstantExpr(0, ctx);
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    l = l + getAffineDimExpr(d, ctx) * stride;
    stride *= shape[d];
  }
  return l;
}

/// Splits the linear index `l` into row-major indices of `shape`.
static SmallVector<AffineExpr> delinearize(AffineExpr l,
                                           ArrayRef<int64_t> shape) {
  SmallVector<AffineExpr> idx(shape.size());
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    AffineExpr v = l.floorDiv(stride);
    idx[d] = d == 0 ? v : v % shape[d];
    stride *= shape[d];
  }
  return idx;
}

FragmentLayoutAttr mlir::tile::getLinearLayout(MLIRContext *ctx,
                                               ArrayRef<int64_t> shape,
                                               int64_t threads) {
  unsigned rank = shape.size();
  AffineExpr l = linearize(ctx, shape);
  auto thread = AffineMap::get(rank, 0, l % threads);
  auto index = AffineMap::get(rank, 0, l.floorDiv(threads));
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  auto inverse = AffineMap::get(2, 0, delinearize(r * threads + t, shape), ctx);
  return FragmentLayoutAttr::get(ctx, thread, index, threads, 1, inverse);
}

FragmentLayoutAttr mlir::tile::getVectorLinearLayout(MLIRContext *ctx,
                                                     ArrayRef<int64_t> shape,
                                                     int64_t threads,
                                                     int64_t vec) {
  unsigned rank = shape.size();
  AffineExpr l = linearize(ctx, shape);
  AffineExpr c = l.floorDiv(vec);
  auto thread = AffineMap::get(rank, 0, c % threads);
  auto index =
      AffineMap::get(rank, 0, c.floorDiv(threads) * vec + l % vec);
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr lin = (r.floorDiv(vec) * threads + t) * vec + r % vec;
  auto inverse = AffineMap::get(2, 0, delinearize(lin, shape), ctx);
  return FragmentLayoutAttr::get(ctx, thread, index, threads, 1, inverse);
}

FragmentLayoutAttr mlir::tile::getColumnSliceLayout(MLIRContext *ctx,
                                                    int64_t cols,
                                                    int64_t threads,
                                                    int64_t vec) {
  if (vec < 1 || cols % vec != 0)
    return {};
  int64_t chunks = cols / vec;
  if (chunks % threads == 0)
    return getVectorLinearLayout(ctx, {cols}, threads, vec);
  if (threads % chunks != 0)
    return {};
  // Thread t holds column chunk t % P of every row it has (its chunks are
  // t + threads * k, and P divides threads); canonical owner: thread j / vec.
  AffineExpr j = getAffineDimExpr(0, ctx);
  auto thread = AffineMap::get(1, 0, j.floorDiv(vec));
  auto index = AffineMap::get(1, 0, j % vec);
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  auto inverse = AffineMap::get(2, 0, (t % chunks) * vec + r);
  return FragmentLayoutAttr::get(ctx, thread, index, threads,
                                 threads / chunks, inverse);
}

std::optional<int64_t>
mlir::tile::matchVectorLinearLayout(FragmentLayoutAttr layout,
                                    ArrayRef<int64_t> shape, int64_t threads) {
  if (!layout || shape.empty() || layout.getThreads() != threads)
    return std::nullopt;
  MLIRContext *ctx = layout.getContext();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  for (int64_t vec : {16, 8, 4, 2}) {
    if (shape.back() % vec == 0 && n % (threads * vec) == 0 &&
        layout == getVectorLinearLayout(ctx, shape, threads, vec))
      return vec;
  }
  if (n % threads == 0 && layout == getLinearLayout(ctx, shape, threads))
    return 1;
  return std::nullopt;
}

FragmentLayoutAttr mlir::tile::getReplicatedLayout(MLIRContext *ctx,
                                                   ArrayRef<int64_t> shape,
                                                   int64_t threads) {
  unsigned rank = shape.size();
  AffineExpr l = linearize(ctx, shape);
  auto thread = AffineMap::get(rank, 0, l % threads);
  auto index = AffineMap::get(rank, 0, l);
  AffineExpr r = getAffineDimExpr(1, ctx);
  auto inverse = AffineMap::get(2, 0, delinearize(r, shape), ctx);
  return FragmentLayoutAttr::get(ctx, thread, index, threads, threads, inverse);
}

/// The squarest tiling of an MxN accumulator by the block's warps (or
/// wavefronts) of `lanes` lanes, each warp tile a whole number of
/// tileM x tileN instruction tiles.
static std::optional<MmaWarpTiling> chooseSquarestTiling(int64_t m, int64_t n,
                                                         int64_t threads,
                                                         int64_t lanes,
                                                         int64_t tileM,
                                                         int64_t tileN) {
  if (threads % lanes != 0 || m % tileM != 0 || n % tileN != 0)
    return std::nullopt;
  int64_t warps = threads / lanes;
  std::optional<MmaWarpTiling> best;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm)
      continue;
    int64_t wn = warps / wm;
    if ((m / tileM) % wm || (n / tileN) % wn)
      continue;
    MmaWarpTiling t{wm, wn, m / wm, n / wn};
    auto cost = [](const MmaWarpTiling &x) {
      return std::abs(x.warpM - x.warpN);
    };
    if (!best || cost(t) < cost(*best))
      best = t;
  }
  return best;
}

std::optional<MmaWarpTiling>
mlir::tile::chooseMmaWarpTiling(int64_t m, int64_t n, int64_t threads) {
  return chooseSquarestTiling(m, n, threads, 32, 16, 8);
}

FragmentLayoutAttr
mlir::tile::getMmaAccumulatorLayout(MLIRContext *ctx, int64_t m, int64_t n,
                                    int64_t threads, const MmaWarpTiling &w) {
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx);
  int64_t tilesN = w.warpN / 8;
  AffineExpr warp = i.floorDiv(w.warpM) * w.warpsN + j.floorDiv(w.warpN);
  AffineExpr lane = (i % 8) * 4 + (j % 8).floorDiv(2);
  AffineExpr tile = (i % w.warpM).floorDiv(16) * tilesN + (j % w.warpN).floorDiv(8);
  AffineExpr reg = tile * 4 + (i % 16).floorDiv(8) * 2 + j % 2;
  auto thread = AffineMap::get(2, 0, warp * 32 + lane);
  auto index = AffineMap::get(2, 0, reg);
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr tw = t.floorDiv(32), tl = t % 32, rt = r.floorDiv(4);
  AffineExpr ii = tw.floorDiv(w.warpsN) * w.warpM + rt.floorDiv(tilesN) * 16 +
                  (r % 4).floorDiv(2) * 8 + tl.floorDiv(4);
  AffineExpr jj = (tw % w.warpsN) * w.warpN + (rt % tilesN) * 8 +
                  (tl % 4) * 2 + r % 2;
  auto inverse = AffineMap::get(2, 0, {ii, jj}, ctx);
  return FragmentLayoutAttr::get(ctx, thread, index, threads, 1, inverse);
}

std::optional<MmaWarpTiling>
mlir::tile::matchMmaAccumulatorLayout(FragmentLayoutAttr layout,
                                      ArrayRef<int64_t> shape) {
  if (!layout || shape.size() != 2 || layout.getReplicate() != 1)
    return std::nullopt;
  int64_t m = shape[0], n = shape[1], threads = layout.getThreads();
  if (threads % 32 != 0 || m % 16 != 0 || n % 8 != 0)
    return std::nullopt;
  int64_t warps = threads / 32;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm || (m / 16) % wm || (n / 8) % (warps / wm))
      continue;
    MmaWarpTiling t{wm, warps / wm, m / wm, n / (warps / wm)};
    if (getMmaAccumulatorLayout(layout.getContext(), m, n, threads, t) ==
        layout)
      return t;
  }
  return std::nullopt;
}

std::optional<MmaWarpTiling>
mlir::tile::getMmaRowWarpTiling(int64_t m, int64_t n, int64_t threads) {
  if (threads % 32 != 0 || n % 8 != 0)
    return std::nullopt;
  int64_t warps = threads / 32;
  if (m % (16 * warps) != 0)
    return std::nullopt;
  return MmaWarpTiling{warps, 1, m / warps, n};
}

FragmentLayoutAttr mlir::tile::getMmaSliceLayout(MLIRContext *ctx, int64_t m,
                                                 int64_t n, int64_t threads,
                                                 const MmaWarpTiling &w,
                                                 unsigned keepDim) {
  (void)m;
  (void)n;
  AffineExpr i = getAffineDimExpr(0, ctx);
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr tw = t.floorDiv(32), tl = t % 32;
  AffineExpr thread, index, elt;
  int64_t replicate;
  if (keepDim == 0) {
    // Row i: warps of warp-row i / warpM, lanes 4 * (i % 8) + {0..3};
    // register (i % warpM) / 8 (the accumulator's row half of each tile).
    thread = (i.floorDiv(w.warpM) * w.warpsN) * 32 + (i % 8) * 4;
    index = (i % w.warpM).floorDiv(8);
    elt = tw.floorDiv(w.warpsN) * w.warpM + r * 8 + tl.floorDiv(4);
    replicate = 4 * w.warpsN;
  } else {
    // Column j: warps of warp-column j / warpN, lanes 4 * g + (j % 8) / 2
    // for every g; register 2 * ((j % warpN) / 8) + j % 2.
    thread = i.floorDiv(w.warpN) * 32 + (i % 8).floorDiv(2);
    index = (i % w.warpN).floorDiv(8) * 2 + i % 2;
    elt = (tw % w.warpsN) * w.warpN + r.floorDiv(2) * 8 + (tl % 4) * 2 +
          r % 2;
    replicate = 8 * w.warpsM;
  }
  return FragmentLayoutAttr::get(ctx, AffineMap::get(1, 0, thread),
                                 AffineMap::get(1, 0, index), threads,
                                 replicate, AffineMap::get(2, 0, elt));
}

SwizzleAttr mlir::tile::getLdmatrixSwizzle(MLIRContext *ctx, int64_t rowBytes) {
  if (rowBytes == 32)
    return SwizzleAttr::get(ctx, 1, 4, 3);
  if (rowBytes == 64)
    return SwizzleAttr::get(ctx, 2, 4, 3);
  if (rowBytes == 128)
    return SwizzleAttr::get(ctx, 3, 4, 3);
  // Longer rows: 128-byte column panels, each in the 128-byte swizzle (the
  // layout wgmma reads; as conflict-free for ldmatrix as a wider swizzle).
  if (rowBytes > 128 && rowBytes % 128 == 0)
    return SwizzleAttr::get(ctx, 3, 4, 3, 128);
  return nullptr;
}

std::optional<MmaWarpTiling>
mlir::tile::chooseMfmaWaveTiling(int64_t m, int64_t n, int64_t threads) {
  return chooseSquarestTiling(m, n, threads, kMfmaWaveSize, 16, 16);
}

FragmentLayoutAttr
mlir::tile::getMfmaAccumulatorLayout(MLIRContext *ctx, int64_t m, int64_t n,
                                     int64_t threads, const MmaWarpTiling &w) {
  const int64_t wave = kMfmaWaveSize;
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx);
  int64_t tilesN = w.warpN / 16;
  AffineExpr waveIdx = i.floorDiv(w.warpM) * w.warpsN + j.floorDiv(w.warpN);
  AffineExpr lane = (i % 16).floorDiv(4) * 16 + j % 16;
  AffineExpr tile =
      (i % w.warpM).floorDiv(16) * tilesN + (j % w.warpN).floorDiv(16);
  auto thread = AffineMap::get(2, 0, waveIdx * wave + lane);
  auto index = AffineMap::get(2, 0, tile * 4 + i % 4);
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr tw = t.floorDiv(wave), tl = t % wave, rt = r.floorDiv(4);
  AffineExpr ii = tw.floorDiv(w.warpsN) * w.warpM + rt.floorDiv(tilesN) * 16 +
                  tl.floorDiv(16) * 4 + r % 4;
  AffineExpr jj = (tw % w.warpsN) * w.warpN + (rt % tilesN) * 16 + tl % 16;
  auto inverse = AffineMap::get(2, 0, {ii, jj}, ctx);
  return FragmentLayoutAttr::get(ctx, thread, index, threads, 1, inverse);
}

std::optional<MmaWarpTiling>
mlir::tile::matchMfmaAccumulatorLayout(FragmentLayoutAttr layout,
                                       ArrayRef<int64_t> shape) {
  if (!layout || shape.size() != 2 || layout.getReplicate() != 1)
    return std::nullopt;
  int64_t m = shape[0], n = shape[1], threads = layout.getThreads();
  if (threads % kMfmaWaveSize != 0 || m % 16 != 0 || n % 16 != 0)
    return std::nullopt;
  int64_t waves = threads / kMfmaWaveSize;
  for (int64_t wm = 1; wm <= waves; ++wm) {
    if (waves % wm || (m / 16) % wm || (n / 16) % (waves / wm))
      continue;
    MmaWarpTiling t{wm, waves / wm, m / wm, n / (waves / wm)};
    if (getMfmaAccumulatorLayout(layout.getContext(), m, n, threads, t) ==
        layout)
      return t;
  }
  return std::nullopt;
}

FragmentLayoutAttr mlir::tile::getMfmaSliceLayout(MLIRContext *ctx,
                                                  int64_t threads,
                                                  const MmaWarpTiling &w,
                                                  unsigned keepDim) {
  const int64_t wave = kMfmaWaveSize;
  AffineExpr i = getAffineDimExpr(0, ctx);
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr tw = t.floorDiv(wave), tl = t % wave;
  AffineExpr thread, index, elt;
  int64_t replicate;
  if (keepDim == 0) {
    thread = i.floorDiv(w.warpM) * (w.warpsN * wave) + (i % 16).floorDiv(4) * 16;
    index = (i % w.warpM).floorDiv(16) * 4 + i % 4;
    elt = tw.floorDiv(w.warpsN) * w.warpM + r.floorDiv(4) * 16 +
          tl.floorDiv(16) * 4 + r % 4;
    replicate = 16 * w.warpsN;
  } else {
    thread = i.floorDiv(w.warpN) * wave + i % 16;
    index = (i % w.warpN).floorDiv(16);
    elt = (tw % w.warpsN) * w.warpN + r * 16 + tl % 16;
    replicate = 4 * w.warpsM;
  }
  return FragmentLayoutAttr::get(ctx, AffineMap::get(1, 0, thread),
                                 AffineMap::get(1, 0, index), threads,
                                 replicate, AffineMap::get(2, 0, elt));
}

SwizzleAttr mlir::tile::getMfmaLdsSwizzle(MLIRContext *ctx, int64_t rowBytes) {
  // LDS: 32 banks of 4 bytes, a 128-byte window. Each lane reads 8 bytes
  // (4 f16/bf16 of k) of its own row; XOR the 8-byte chunk index with the
  // row's position above the window so consecutive rows take distinct
  // chunks (at most 16 chunks per window; at most the row's chunks).
  if (!llvm::isPowerOf2_64(rowBytes) || rowBytes < 16)
    return nullptr;
  int64_t chunks = std::min<int64_t>(16, rowBytes / 8);
  int64_t rowBit = std::max<int64_t>(7, llvm::Log2_64(rowBytes));
  return SwizzleAttr::get(ctx, llvm::Log2_64(chunks), 3, rowBit - 3);
}

namespace {

bool isFragment(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && getMemoryScope(type) == MemoryScope::fragment;
}

struct TileInferLayoutsPass
    : public tile::impl::TileInferLayoutsBase<TileInferLayoutsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (matrixCore != "mma.sync" && matrixCore != "mfma") {
      getOperation().emitError("tile-infer-layouts: unknown matrix-core '")
          << matrixCore << "' (expected mma.sync or mfma)";
      return signalPassFailure();
    }
    getOperation().walk([&](LaunchOp launch) { inferLaunch(launch); });
  }

  void inferLaunch(LaunchOp launch) {
    MLIRContext *ctx = &getContext();
    int64_t threads = launch.getThreads();
    llvm::DenseMap<Value, FragmentLayoutAttr> chosen;
    auto allocOf = [](Value v) { return v.getDefiningOp<AllocOp>(); };
    auto layoutOf = [&](Value v) -> FragmentLayoutAttr {
      if (auto it = chosen.find(v); it != chosen.end())
        return it->second;
      if (AllocOp a = allocOf(v))
        return dyn_cast_or_null<FragmentLayoutAttr>(a.getLayoutAttr());
      return nullptr;
    };
    auto needs = [&](Value v) {
      AllocOp a = allocOf(v);
      return a && isFragment(v) && !a.getLayoutAttr() && !chosen.count(v);
    };

    auto shapeOf = [](Value v) {
      return cast<MemRefType>(v.getType()).getShape();
    };
    auto accLayout = [&](Value v, const MmaWarpTiling &t) {
      auto shape = shapeOf(v);
      return getMmaAccumulatorLayout(ctx, shape[0], shape[1], threads, t);
    };
    bool mfma = matrixCore == "mfma";

    // 0. A fragment A operand (P of P.V in attention) is read by mma.sync
    // straight from registers: the m16n8k16 A fragment of k-step kk is the
    // accumulator registers of n8 tiles 2kk and 2kk+1, so A gets the
    // accumulator layout with whole rows per warp (warpsN = 1), and C the
    // same row tiling (the warp computing C's rows holds those rows of A).
    // Whatever feeds A elementwise (the softmax on S) inherits it below.
    launch.walk([&](GemmOp gemm) {
      Value a = gemm.getA(), c = gemm.getC();
      if (mfma || !isFragment(a) || !isFragment(c) || gemm.getTransposeA())
        return;
      auto ta = getMmaRowWarpTiling(shapeOf(a)[0], shapeOf(a)[1], threads);
      auto tc = getMmaRowWarpTiling(shapeOf(c)[0], shapeOf(c)[1], threads);
      if (!ta || !tc || shapeOf(a)[1] % 16 != 0)
        return;
      FragmentLayoutAttr la = accLayout(a, *ta), lc = accLayout(c, *tc);
      if ((!needs(a) && layoutOf(a) != la) || (!needs(c) && layoutOf(c) != lc))
        return;
      chosen[a] = la;
      chosen[c] = lc;
    });

    // Propagation along same-shaped fragment uses (parallel bodies and
    // fragment-to-fragment copies) until nothing changes.
    auto tie = [&](Value a, Value b) {
      if (!isFragment(a) || !isFragment(b) || a.getType() == Type() ||
          cast<MemRefType>(a.getType()).getShape() !=
              cast<MemRefType>(b.getType()).getShape())
        return false;
      FragmentLayoutAttr la = layoutOf(a), lb = layoutOf(b);
      if (la && needs(b)) {
        chosen[b] = la;
        return true;
      }
      if (lb && needs(a)) {
        chosen[a] = lb;
        return true;
      }
      return false;
    };
    auto propagate = [&] {
      bool changed = true;
      while (changed) {
        changed = false;
        launch.walk([&](CopyOp copy) {
          changed |= tie(copy.getSource(), copy.getTarget());
        });
        launch.walk([&](ParallelOp par) {
          SmallVector<Value> frags;
          par.walk([&](Operation *op) {
            Value m;
            if (auto l = dyn_cast<memref::LoadOp>(op))
              m = l.getMemRef();
            else if (auto s = dyn_cast<memref::StoreOp>(op))
              m = s.getMemRef();
            if (m && isFragment(m) &&
                cast<MemRefType>(m.getType()).getShape() == par.getExtents())
              frags.push_back(m);
          });
          for (Value a : frags)
            for (Value b : frags)
              changed |= tie(a, b);
        });
      }
    };
    propagate();

    // Vectors read along the rows (columns) of the tile a 2-D tile.parallel
    // runs over: for each such parallel, `tileOf` gives the layout of a
    // fragment of its extents it accesses at indices `idx` (null: not the
    // tile), and each 1-D fragment without a layout loaded at [iv0] ([iv1])
    // with the matching extent takes `sliceOf(tile, extents, 0 (1))`, if
    // any: the parallel then reads it from the thread's own registers.
    auto sliceReadVectors =
        [&](function_ref<FragmentLayoutAttr(Value, ValueRange, Value, Value)>
                tileOf,
            function_ref<FragmentLayoutAttr(FragmentLayoutAttr,
                                            ArrayRef<int64_t>, unsigned)>
                sliceOf) {
          launch.walk([&](ParallelOp par) {
            ArrayRef<int64_t> ext = par.getExtents();
            if (ext.size() != 2)
              return;
            Block &body = par.getBodyBlock();
            Value iv0 = body.getArgument(0), iv1 = body.getArgument(1);
            FragmentLayoutAttr tile;
            par.walk([&](Operation *op) {
              auto load = dyn_cast<memref::LoadOp>(op);
              auto store = dyn_cast<memref::StoreOp>(op);
              Value m = load    ? load.getMemRef()
                        : store ? store.getMemRef()
                                : Value();
              if (!tile && m && isFragment(m) && shapeOf(m) == ext)
                tile = tileOf(m, load ? load.getIndices() : store.getIndices(),
                              iv0, iv1);
            });
            if (!tile)
              return;
            par.walk([&](memref::LoadOp load) {
              Value m = load.getMemRef();
              if (!needs(m) || load.getIndices().size() != 1)
                return;
              Value i = load.getIndices()[0];
              unsigned keep = i == iv0 ? 0 : i == iv1 ? 1 : 2;
              if (keep == 2 || shapeOf(m)[0] != ext[keep])
                return;
              if (FragmentLayoutAttr slice = sliceOf(tile, ext, keep))
                chosen[m] = slice;
            });
          });
          propagate();
        };

    // 1. gemm accumulators and operand swizzles.
    launch.walk([&](GemmOp gemm) {
      Value c = gemm.getC();
      if (needs(c)) {
        auto shape = shapeOf(c);
        std::optional<MmaWarpTiling> tiling;
        // wgmma (sm_90a): one 16-row strip per warp, 64 rows per warpgroup.
        if (!mfma && wgmma && threads % 128 == 0 &&
            shape[0] == 16 * (threads / 32))
          tiling = getMmaRowWarpTiling(shape[0], shape[1], threads);
        if (mfma) {
          if (auto t = chooseMfmaWaveTiling(shape[0], shape[1], threads))
            chosen[c] = getMfmaAccumulatorLayout(ctx, shape[0], shape[1],
                                                 threads, *t);
        } else if (tiling ||
                   (tiling = chooseMmaWarpTiling(shape[0], shape[1], threads))) {
          chosen[c] = accLayout(c, *tiling);
        }
      }
      for (Value operand : {gemm.getA(), gemm.getB()}) {
        AllocOp a = allocOf(operand);
        auto type = cast<MemRefType>(operand.getType());
        if (!a || a.getLayoutAttr() ||
            getMemoryScope(type) != MemoryScope::shared)
          continue;
        int64_t eltBytes =
            std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
        int64_t rowBytes = type.getShape()[1] * eltBytes;
        SwizzleAttr swz = mfma ? getMfmaLdsSwizzle(ctx, rowBytes)
                               : getLdmatrixSwizzle(ctx, rowBytes);
        // An MFMA swizzle's period (16 rows) must divide the buffer.
        int64_t period = swz ? int64_t(1) << (swz.getBits() + swz.getBase() +
                                              swz.getShift())
                             : 1;
        if (swz && mfma &&
            (numElementsOf(type.getShape()) * eltBytes) % period != 0)
          swz = nullptr;
        if (swz)
          a.setLayoutAttr(swz);
      }
    });
    propagate();

    // 2. Row (column) statistics of an mma accumulator live in the threads
    // holding that row (column): reductions are shuffles among them and
    // elementwise ops on the accumulator read them from registers.
    launch.walk([&](ReduceOp red) {
      Value t = red.getTarget();
      auto tiling =
          matchMmaAccumulatorLayout(layoutOf(red.getSource()),
                                    shapeOf(red.getSource()));
      if (!needs(t) || !tiling)
        return;
      auto s = shapeOf(red.getSource());
      unsigned keep = red.getDim() == 1 ? 0 : 1;
      chosen[t] = getMmaSliceLayout(ctx, s[0], s[1], threads, *tiling, keep);
    });
    propagate();

    // 2b. A vector read by row (column) in an elementwise tile.parallel on
    // an mma or MFMA accumulator (a per-row scale, a bias tile copied into a
    // fragment, TileLang style) takes the accumulator's row (column) slice
    // like the statistics above: each thread holds the entries of its own
    // rows (columns), so the parallel runs in registers instead of through
    // shared memory.
    sliceReadVectors(
        [&](Value m, ValueRange idx, Value iv0, Value iv1) {
          if (idx.size() != 2 || idx[0] != iv0 || idx[1] != iv1)
            return FragmentLayoutAttr();
          FragmentLayoutAttr l = layoutOf(m);
          return matchMmaAccumulatorLayout(l, shapeOf(m)) ||
                         matchMfmaAccumulatorLayout(l, shapeOf(m))
                     ? l
                     : FragmentLayoutAttr();
        },
        [&](FragmentLayoutAttr acc, ArrayRef<int64_t> ext, unsigned keep) {
          if (auto t = matchMmaAccumulatorLayout(acc, ext))
            return getMmaSliceLayout(ctx, ext[0], ext[1], threads, *t, keep);
          auto t = matchMfmaAccumulatorLayout(acc, ext);
          return getMfmaSliceLayout(ctx, threads, *t, keep);
        });

    // 3. Small reduction targets are replicated in every thread; row and
    // column statistics of a 2-D fragment (a reduction along one of its
    // dims) wait for their source's layout (step 4b).
    auto statistic = [&](ReduceOp red) {
      return shapeOf(red.getSource()).size() == 2 &&
             isFragment(red.getSource());
    };
    launch.walk([&](ReduceOp red) {
      Value t = red.getTarget();
      auto shape = cast<MemRefType>(t.getType()).getShape();
      if (needs(t) && numElementsOf(shape) <= 256 && !statistic(red))
        chosen[t] = getReplicatedLayout(ctx, shape, threads);
    });
    propagate();

    // 4. A fragment copied from or to global memory: runs of 16 bytes of a
    // row per thread (the copy's 16-byte vector loads/stores; see
    // convert-tile-to-nvgpu). Elementwise partners inherit it. 2-D tiles
    // first, so that the vectors read along their rows and columns can take
    // their slices (steps 4b, 4c) before vectors copied on their own (4d).
    // Gemm operands keep the layouts above (or the SIMT gemm's default).
    const int64_t lanes = mfma ? kMfmaWaveSize : 32;
    llvm::DenseSet<Value> gemmOperands;
    launch.walk([&](GemmOp gemm) {
      for (Value v : {gemm.getA(), gemm.getB(), gemm.getC()})
        gemmOperands.insert(v);
    });
    // Shapes of the 2-D fragments the launch reduces along their rows
    // (dim 1) and along their columns (dim 0).
    llvm::SmallSetVector<std::pair<int64_t, int64_t>, 4> rowReduced,
        colReduced;
    launch.walk([&](ReduceOp red) {
      if (!statistic(red))
        return;
      auto sh = shapeOf(red.getSource());
      (red.getDim() == 1 ? rowReduced : colReduced).insert({sh[0], sh[1]});
    });
    auto copyLayouts = [&](bool twoD) {
      launch.walk([&](CopyOp copy) {
        for (auto [frag, other] :
             {std::pair(copy.getTarget(), copy.getSource()),
              std::pair(copy.getSource(), copy.getTarget())}) {
          auto type = cast<MemRefType>(frag.getType());
          auto otherType = cast<MemRefType>(other.getType());
          if (!needs(frag) || gemmOperands.contains(frag) ||
              otherType.getMemorySpace() ||
              !type.getElementType().isIntOrFloat() || type.getRank() == 0 ||
              (type.getRank() == 2) != twoD)
            continue;
          // 16 bytes of the global side: a bf16 tensor copied into an f32
          // fragment gets runs of 8 registers (one 16-byte load), not 4
          // (the f32 fragment's 16 bytes, an 8-byte load); the fragment's
          // 16 bytes when the tile has too few elements for those runs;
          // then 8 and 4 bytes of the global side, so that a row the
          // threads cannot split into 16-byte runs (768 bf16 over 128
          // threads: 96 runs) still gets 4-byte loads, not scalar ones
          // (a layout gives every thread the same register count).
          int64_t bits = type.getElementTypeBitWidth();
          int64_t gbits = otherType.getElementType().isIntOrFloat()
                              ? otherType.getElementTypeBitWidth()
                              : bits;
          if (bits < 8 || bits > 64 || bits % 8 || gbits < 8 || gbits > 64 ||
              gbits % 8)
            continue;
          auto shape = type.getShape();
          for (int64_t vec : {16 / (gbits / 8), 16 / (bits / 8),
                              8 / (gbits / 8), 4 / (gbits / 8)}) {
            if (vec < 2 || shape.back() % vec != 0 ||
                numElementsOf(shape) % (threads * vec) != 0)
              continue;
            // A tile reduced along its rows (and not its columns) whose rows
            // are longer than a warp's chunks: a warp per row.
            FragmentLayoutAttr layout;
            if (twoD && rowReduced.contains({shape[0], shape[1]}) &&
                !colReduced.contains({shape[0], shape[1]}) &&
                shape[1] / vec > lanes)
              layout = getRowWarpLayout(ctx, shape[0], shape[1], threads, vec,
                                        lanes);
            chosen[frag] =
                layout ? layout
                       : getVectorLinearLayout(ctx, shape, threads, vec);
            // Its elementwise partners take it before their own copies
            // are visited: an int8 tile quantized from a bf16 one keeps
            // the bf16 tile's layout rather than 16 int8 per run, which
            // would make the parallel between them go through shared
            // memory.
            propagate();
            break;
          }
        }
      });
    };
    copyLayouts(/*twoD=*/true);

    // 4b. A row (column) statistic of a 2-D fragment lives in the threads
    // holding its row (column) (getChunkSliceLayout): the reduction is then
    // thread-local partials and shuffles among them. Replicated (a combine
    // of every warp through shared memory, each thread holding every
    // element) otherwise, or when a tile.parallel that reads the statistic
    // along its rows (columns) runs over a tile laid out differently, which
    // would read it through shared memory. (Replicated column statistics:
    // a 16x256 column mean took 255 registers and 6.6 KiB of spills, its
    // registers holding different columns in different threads.)
    launch.walk([&](ReduceOp red) {
      Value t = red.getTarget();
      if (!needs(t) || !statistic(red))
        return;
      auto s = shapeOf(red.getSource());
      unsigned keep = red.getDim() == 1 ? 0 : 1;
      FragmentLayoutAttr from = layoutOf(red.getSource());
      FragmentLayoutAttr slice =
          getChunkSliceLayout(from, s, threads, lanes, keep);
      bool consistent = true;
      if (slice)
        launch.walk([&](ParallelOp par) {
          ArrayRef<int64_t> ext = par.getExtents();
          if (ext.size() != 2)
            return;
          Value iv = par.getBodyBlock().getArgument(keep);
          bool reads = false;
          par.walk([&](memref::LoadOp load) {
            reads |= load.getMemRef() == t && load.getIndices().size() == 1 &&
                     load.getIndices()[0] == iv;
          });
          if (!reads)
            return;
          par.walk([&](Operation *op) {
            Value m;
            if (auto l = dyn_cast<memref::LoadOp>(op))
              m = l.getMemRef();
            else if (auto st = dyn_cast<memref::StoreOp>(op))
              m = st.getMemRef();
            if (m && isFragment(m) && shapeOf(m) == ext && !needs(m))
              consistent &= ext == s && layoutOf(m) == from;
          });
        });
      if (slice && consistent)
        chosen[t] = slice;
      else if (numElementsOf(shapeOf(t)) <= 256)
        chosen[t] = getReplicatedLayout(ctx, shapeOf(t), threads);
    });
    propagate();

    // 4c. A vector read along the rows (columns) of a 2-D fragment in a
    // tile.parallel over it (a bias, a weight, a row's mean) takes that
    // fragment's row (column) slice, as step 2b does for accumulators: each
    // thread then holds the entries of its own rows (columns). After the
    // statistics, which follow the tile they reduce.
    sliceReadVectors(
        [&](Value m, ValueRange, Value, Value) { return layoutOf(m); },
        [&](FragmentLayoutAttr tile, ArrayRef<int64_t> ext, unsigned keep) {
          return getChunkSliceLayout(tile, ext, threads, lanes, keep);
        });

    // 4d. Vectors copied from or to global memory on their own.
    copyLayouts(/*twoD=*/false);

    // 5. Defaults.
    launch.walk([&](AllocOp alloc) {
      Value v = alloc.getResult();
      if (!needs(v))
        return;
      auto shape = alloc.getType().getShape();
      int64_t n = numElementsOf(shape);
      chosen[v] = n % threads == 0 ? getLinearLayout(ctx, shape, threads)
                                   : getReplicatedLayout(ctx, shape, threads);
    });

    // 6. Shared buffers that are no gemm operand: the swizzle that spares
    // their accesses bank conflicts (a transpose's staging tile), if any.
    launch.walk([&](AllocOp alloc) {
      if (alloc.getLayoutAttr() ||
          getMemoryScope(alloc.getType()) != MemoryScope::shared)
        return;
      if (SwizzleAttr swz = chooseBankConflictSwizzle(
              alloc.getResult(), threads, mfma ? kMfmaWaveSize : 32,
              layoutOf))
        alloc.setLayoutAttr(swz);
    });

    for (auto &[v, layout] : chosen)
      allocOf(v).setLayoutAttr(layout);
  }
};

} // namespace
