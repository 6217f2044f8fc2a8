//===- VariantMetadata.cpp - the sm90 variants in the kernel info ---------===//

#include "VariantMetadata.h"
#include "PackKernel.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

LogicalResult sm90::recordVariantMetadata(ModuleOp module,
                                          ArrayRef<BuiltVariant> variants) {
  auto info =
      module->getAttrOfType<KernelInfoAttr>(TileDialect::kKernelInfoAttrName);
  if (!info || variants.empty())
    return success();
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  SmallVector<KernelVariantAttr> all(info.getVariants().begin(),
                                     info.getVariants().end());
  for (const BuiltVariant &built : variants) {
    const GemmMatch &m = built.match;
    const WarpSpecialization &ws = built.ws;
    // The variant's description (docs/bundle.md, "variants"): TMA maps of
    // A, B (boxes of 64 x 64, innermost first: columns of B, or K of an
    // N x K B) and C for the TMA-store epilogue, 128B swizzle, 256B L2
    // promotion, zero fill out of bounds. C's is optional: without it the
    // kernel stores its staged chunks itself (PersistentKernel::storeValues).
    // A batched operand's map has its rank: one element along each batch
    // dim (the outermost).
    auto tma = [&](Value param, int64_t inner, int64_t outer, Type elt,
                   bool optional = false) {
      int64_t rank = cast<MemRefType>(param.getType()).getRank();
      SmallVector<int64_t> box(rank, 1), strides(rank, 1);
      box[0] = inner;
      box[1] = outer;
      return TmaDescAttr::get(ctx, cast<BlockArgument>(param).getArgNumber(),
                              elt, box, strides, /*interleave=*/0,
                              /*swizzle=*/128, /*l2Promotion=*/256,
                              TmaOobFill::zero, optional);
    };
    // Without TMA (ws.ldgLoads): no maps, so the runtime has nothing to
    // refuse and launches it for any operands.
    SmallVector<TmaDescAttr> maps;
    // The narrow kernel's A box has its rows (ws.narrowRows); a K x M A
    // (transpose_a) has boxes of 64 columns by 64 K rows, like a K x N B.
    if (!ws.ldgLoads)
      maps = {m.transA ? tma(m.A, 64, kBlockK, m.inType)
                       : tma(m.A, kBlockK,
                             ws.narrowRows > 0 ? ws.narrowRows
                                               : m.tileM / ws.coarse.parts,
                             m.inType),
              m.transB ? tma(m.B, kBlockK, 64, m.inType)
                       : tma(m.B, 64, kBlockK, m.inType)};
    if (ws.tmaStore)
      maps.push_back(tma(m.C, 64, 64, m.outType, /*optional=*/true));
    // Split-K: K is A's K dim (its last, or the one before for a K x M
    // A), counted in hardware K tiles; the runtime
    // launches grid (tiles, S) and passes the workspace last, sized
    // tiles x S x the slice bytes.
    SmallVector<int64_t> splitK;
    if (ws.splitK)
      splitK = {cast<BlockArgument>(m.A).getArgNumber(),
                cast<MemRefType>(m.A.getType()).getRank() - 2 + m.aKDim(),
                kBlockK,
                built.workspaceSliceBytes};
    // Narrow: launched only when A and C have at most maxRows rows.
    SmallVector<int64_t> maxRows;
    if (built.maxRows > 0)
      maxRows = {built.maxRows, cast<BlockArgument>(m.A).getArgNumber(),
                 cast<BlockArgument>(m.C).getArgNumber()};
    // Persistent: one CTA per SM (capped at the tile count), each looping
    // over tiles. The schedule is informational (launched alike). The
    // small-grid variant (max_tiles) sends larger grids on.
    all.push_back(KernelVariantAttr::get(
        ctx, b.getStringAttr("sm90_tma_wgmma"), b.getStringAttr("sm_90a"),
        b.getStringAttr(built.kernelName), {ws.threads(), 1, 1},
        built.sharedBytes,
        ws.persistent ? VariantGrid::sms : VariantGrid::launch, built.maxTiles,
        ws.pingpong     ? b.getStringAttr("pingpong")
        : ws.narrowRows > 0 ? b.getStringAttr("narrow")
        : ws.splitK     ? b.getStringAttr("splitk")
        : ws.coarse.parts > 1 ? b.getStringAttr("split")
        : ws.coarse.blocks() > 1 ? b.getStringAttr("wide")
                        : StringAttr(),
        maps, splitK, built.workspaceBytes,
        built.packKernel.empty() ? StringAttr()
                                 : b.getStringAttr(built.packKernel),
        built.packKernel.empty() ? 0 : built.packElemBytes,
        built.packKernel.empty() ? 1 : kPackOperands, built.coarsen,
        built.coarsen.empty() ? 0 : built.coarseSpeedupPct, maxRows,
        built.split));
  }
  setKernelInfo(module, info.withVariants(all));
  return success();
}
