//===- CPUTarget.h - the host CPU target ------------------------*- C++ -*-===//
//
// --target=cpu: tile-to-cpu, then the host code generator; the bundle holds
// host.so (the kernel's block functions and the native wrapper), the
// optimized LLVM IR and the source (docs/pipelines.md).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_CPU_CPUTARGET_H
#define TILE_TARGET_CPU_CPUTARGET_H

namespace mlir::tile {

/// Adds the CPU target to the target registry.
void registerCPUTarget();

} // namespace mlir::tile

#endif // TILE_TARGET_CPU_CPUTARGET_H
