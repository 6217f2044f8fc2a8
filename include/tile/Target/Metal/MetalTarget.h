//===- MetalTarget.h - the Apple GPU target ---------------------*- C++ -*-===//
//
// --target=metal: tile-to-metal-source (the sm_80 lowering, then EmitC),
// printed as Metal Shading Language with the Metal device library; the
// bundle holds the `msl` section, which the Python package's metal-torch
// backend compiles with torch.mps.compile_shader (docs/python.md). Chips:
// apple-m1 ... apple-m4.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_METAL_METALTARGET_H
#define TILE_TARGET_METAL_METALTARGET_H

namespace mlir::tile {

/// Adds the Metal target to the target registry.
void registerMetalTarget();

} // namespace mlir::tile

#endif // TILE_TARGET_METAL_METALTARGET_H
