//===- CUDATarget.h - the NVIDIA GPU target ---------------------*- C++ -*-===//
//
// --target=cuda: tile-to-nvvm (without serialization), then MLIR's NVVM
// serializer for the PTX and ptxas for the cubin; the bundle holds cubin,
// ptx, native.so (the host wrapper for CUDA tensors) and the source
// (docs/pipelines.md). Chips: sm_80 or newer.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_CUDA_CUDATARGET_H
#define TILE_TARGET_CUDA_CUDATARGET_H

namespace mlir::tile {

/// Adds the CUDA target to the target registry.
void registerCUDATarget();

} // namespace mlir::tile

#endif // TILE_TARGET_CUDA_CUDATARGET_H
