//===- TileToAMDGPU.cpp - convert-tile-to-amdgpu --------------------------===//
//
// The shared outlining and per-thread lowering of convert-tile-to-nvgpu
// with AMD's parameters: wave64 and the MFMA gemm (Mfma.cpp). Everything
// else (copies with vector loads, parallel bodies, shuffle reductions, the
// shared-memory general paths) is the same code as on NVIDIA.
//
//===----------------------------------------------------------------------===//

#include "TileToROCDL.h"

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOAMDGPU
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// CDNA2/CDNA3 (gfx90a, gfx942): 64 KiB of LDS per workgroup, all of it
/// dynamic (the kernel's LDS is one extern array).
nvgpu_lowering::SharedMemoryLimit cdnaLdsLimit(StringRef) {
  nvgpu_lowering::SharedMemoryLimit limit;
  limit.perBlock = limit.dynamic = 64 * 1024;
  limit.known = true;
  return limit;
}

struct ConvertTileToAMDGPUPass
    : public tile::impl::ConvertTileToAMDGPUBase<ConvertTileToAMDGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    nvgpu_lowering::GPUTargetInfo target;
    target.chip = chip;
    target.waveSize = kMfmaWaveSize;
    target.matrixGemm = rocdl_lowering::lowerGemmMfma;
    target.sharedMemoryLimit = cdnaLdsLimit;
    // No cp.async: tile.pipelined loops run serially (their copies are
    // vector loads through registers into LDS).
    target.asyncCopy = false;
    target.copyToShared = rocdl_lowering::lowerCopyWide;
    if (failed(nvgpu_lowering::outlineAndLowerKernels(getOperation(), target,
                                                      remarks)))
      signalPassFailure();
  }
};

} // namespace
