//===- TileToROCDL.h - internal to lib/Conversion/TileToROCDL ---*- C++ -*-===//
//
// The AMD parts plugged into the shared per-thread GPU lowering
// (lib/Conversion/TileToNVGPU/Lowering.h, GPUTargetInfo).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_CONVERSION_TILETOROCDL_TILETOROCDL_H
#define TILE_LIB_CONVERSION_TILETOROCDL_TILETOROCDL_H

#include "../TileToNVGPU/Lowering.h"

namespace mlir::tile::rocdl_lowering {

/// tile.gemm as amdgpu.mfma 16x16x16 (Mfma.cpp); a MatrixGemmFn.
LogicalResult lowerGemmMfma(nvgpu_lowering::KernelLowering &kl, GemmOp op,
                            std::string &whyNot);

/// tile.copy global -> LDS with 16-byte global loads (WideCopy.cpp); a
/// GPUTargetInfo::copyToShared. failure(): nothing emitted.
LogicalResult lowerCopyWide(nvgpu_lowering::KernelLowering &kl, CopyOp op);

} // namespace mlir::tile::rocdl_lowering

#endif // TILE_LIB_CONVERSION_TILETOROCDL_TILETOROCDL_H
