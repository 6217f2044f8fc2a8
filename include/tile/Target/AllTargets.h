//===- AllTargets.h - register every target built ---------------*- C++ -*-===//

#ifndef TILE_TARGET_ALLTARGETS_H
#define TILE_TARGET_ALLTARGETS_H

namespace mlir::tile {

/// Registers every target of CMake's TILE_TARGETS_TO_BUILD (the folders of
/// lib/Target, listed in the generated tile/Target/Targets.def), in that
/// order. Idempotent.
void registerAllTargets();

} // namespace mlir::tile

#endif // TILE_TARGET_ALLTARGETS_H
