//===- PerKernelPTX.h - device code, one LLVM module per kernel -*- C++ -*-===//
//
// The lowered gpu.module holds every kernel of a tile program (the mma.sync
// kernel and, for sm_90a, the warp-specialized, wide-tile, split-K and
// repacking variants). LLVM's O3 pipeline and NVPTX code generation work on
// one module on one thread, so the CUDA target splits the gpu.module into one
// module per kernel (the kernel and copies of the module's other symbols),
// serializes each with MLIR's NVVM target (LLVM IR, libdevice, O3, PTX) on
// the MLIRContext's threads, and merges the PTX texts in kernel order
// (PTXMerge.h) for the single ptxas run. The output does not depend on the
// number of threads: --jobs=1 (or --mlir-disable-threading) generates the
// same parts one after the other.
//
// A kernel's code is what the whole module gave it: the optimizer works
// function by function (kernels are external; the module has no shared
// helpers), and the one module-level decision NVPTX's printer makes from
// the other kernels, demoting a shared-memory variable used by one
// function into that function, is kept as the whole module decides it: a
// shared variable more than one kernel uses is kept at module scope in each
// part by an internal helper that returns its address, dropped again from
// the merged PTX.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_CUDA_PERKERNELPTX_H
#define TILE_TARGET_CUDA_PERKERNELPTX_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/Timing.h"

#include <optional>
#include <string>

namespace mlir::tile::cuda {

/// The PTX of `module`'s kernels, generated one LLVM module per kernel and
/// merged; std::nullopt when the module is to be serialized whole (it has
/// fewer than two kernels, or the parts cannot be merged: with `remarks`, a
/// remark on the module says why). `toolkitRoot` holds nvvm/libdevice (may be
/// empty); `timing` gets one phase per kernel.
FailureOr<std::optional<std::string>>
generatePerKernelPTX(gpu::GPUModuleOp module, StringRef toolkitRoot,
                     bool remarks, TimingScope &timing);

} // namespace mlir::tile::cuda

#endif // TILE_TARGET_CUDA_PERKERNELPTX_H
