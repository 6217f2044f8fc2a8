//===- HIPTarget.h - the AMD GPU target -------------------------*- C++ -*-===//
//
// --target=hip: tile-to-rocdl, then MLIR's ROCDL serializer for the AMDGPU
// assembly (LLVM IR, ocml/ockl linked only when the kernel calls them),
// assembled and linked (ld.lld) into an hsaco; the bundle holds hsaco,
// hsaco.resources (VGPRs, SGPRs, LDS, scratch from the code object's
// metadata notes), native.so (the host wrapper for ROCm tensors) and the
// source (docs/pipelines.md). Chips: gfx90a, gfx942 (wave64 CDNA with MFMA).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_HIP_HIPTARGET_H
#define TILE_TARGET_HIP_HIPTARGET_H

namespace mlir::tile {

/// Adds the HIP target to the target registry.
void registerHIPTarget();

} // namespace mlir::tile

#endif // TILE_TARGET_HIP_HIPTARGET_H
