//===- VariantMetadata.h - the sm90 variants in tile.metadata ---*- C++ -*-===//
//
// Internal to lib/Conversion/TileToSM90: how convert-tile-gemm-to-sm90
// records the kernels it built in the module's kernel description.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_CONVERSION_TILETOSM90_VARIANTMETADATA_H
#define TILE_LIB_CONVERSION_TILETOSM90_VARIANTMETADATA_H

#include "tile/Conversion/TileToSM90/Analysis/WarpSpecialization.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::tile::sm90 {

/// A Hopper kernel variant built for a tile kernel: what its entry in the
/// kernel info's "variants" describe (docs/bundle.md).
struct BuiltVariant {
  std::string kernelName;   // NAME_kernel_sm90<suffix>
  GemmMatch match;          // A, B, C: the tile kernel's params
  WarpSpecialization ws;    // threads, schedule, epilogue, persistent
  int64_t sharedBytes = 0;  // dynamic shared memory
  int64_t maxTiles = 0;     // the runtime's "max_tiles" rule; 0: none
  int64_t workspaceBytes = 0; // the workspace param's fixed bytes
  int64_t workspaceSliceBytes = 0; // split-K: its bytes per tile and slice
  std::string packKernel;     // the runtime's repack kernel (PackKernel.h)
  int64_t packElemBytes = 0;
  /// Coarse (wide) tiles: launch blocks per CTA tile along each grid axis (x, y,
  /// z); empty: one.
  SmallVector<int64_t, 3> coarsen;
  /// With coarsen: the cost model's speedup of a launch block inside a
  /// coarse tile, in percent (coarseSpeedupPct, GemmMatch.h).
  int64_t coarseSpeedupPct = 0;
  /// Narrow rows: launched only when A and C have at most this many rows
  /// ("max_rows"); 0: any.
  int64_t maxRows = 0;
  /// Split tiles: CTA tiles per launch block ("split", with coarsen); 1:
  /// none.
  int64_t split = 1;
};

/// Appends one typed variant (#tile.kernel_variant) per built variant, in
/// order (the runtime tries them in that order), to the module's
/// #tile.kernel_info. Without that attribute (a pass run on its own)
/// nothing is recorded.
LogicalResult recordVariantMetadata(ModuleOp module,
                                    ArrayRef<BuiltVariant> variants);

} // namespace mlir::tile::sm90

#endif // TILE_LIB_CONVERSION_TILETOSM90_VARIANTMETADATA_H
