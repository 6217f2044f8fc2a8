//===- VariantMetadata.cpp - the sm90 variants in tile.metadata -----------===//

#include "VariantMetadata.h"

#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

LogicalResult sm90::recordVariantMetadata(ModuleOp module,
                                          ArrayRef<BuiltVariant> variants) {
  if (!module->hasAttr(kMetadataAttrName))
    return success();
  FailureOr<KernelMetadata> md = getAttachedMetadata(module);
  if (failed(md))
    return failure();
  for (const BuiltVariant &built : variants) {
    const GemmMatch &m = built.match;
    const WarpSpecialization &ws = built.ws;
    // The variant's metadata (docs/bundle.md, "variants").
    auto paramIndex = [&](Value v) {
      return (int64_t)cast<BlockArgument>(v).getArgNumber();
    };
    auto tmaEntry = [&](Value param, int64_t inner, int64_t outer,
                        Type elt = {}) {
      return llvm::json::Object{
          {"param", paramIndex(param)},
          {"dtype", getDTypeName(elt ? elt : m.inType)},
          {"rank", 2},
          {"box", llvm::json::Array{inner, outer}},
          {"element_strides", llvm::json::Array{1, 1}},
          {"interleave", "none"},
          {"swizzle", "128B"},
          {"l2_promotion", "256B"},
          {"oob_fill", "zero"}};
    };
    llvm::json::Object variant{
        {"kind", "sm90_tma_wgmma"},
        {"chip", "sm_90a"},
        {"kernel", built.kernelName},
        {"block", llvm::json::Array{ws.threads(), 1, 1}},
        {"shared_bytes", built.sharedBytes},
        {"tma",
         llvm::json::Array{tmaEntry(m.A, kBlockK, m.tileM),
                           tmaEntry(m.B, 64, kBlockK)}}};
    // The TMA-store epilogue's map of C (64x64 boxes, 128B swizzle).
    if (ws.tmaStore)
      variant["tma"].getAsArray()->push_back(
          tmaEntry(m.C, 64, 64, m.outType));
    // One CTA per SM (capped at the tile count), each looping over tiles.
    if (ws.persistent)
      variant["grid"] = "sms";
    // Informational (the runtime launches both schedules alike).
    if (ws.pingpong)
      variant["schedule"] = "pingpong";
    // The small-grid variant: the runtime sends larger grids on.
    if (built.maxTiles > 0)
      variant["max_tiles"] = built.maxTiles;
    md->variants.push_back(std::move(variant));
  }
  if (!variants.empty())
    module->setAttr(kMetadataAttrName,
                    StringAttr::get(module.getContext(), md->toJSONString()));
  return success();
}
