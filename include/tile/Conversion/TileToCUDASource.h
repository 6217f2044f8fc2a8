//===- TileToCUDASource.h - the tile-to-cuda-source pipeline ----*- C++ -*-===//
//
// CUDA C++ for the nvrtc backend (docs/pipelines.md, "CUDA C++ for NVRTC"):
// the sm_80 path's lowering (metadata, layouts, convert-tile-to-nvgpu) up to
// the point before NVVM, then EmitC (convert-gpu-to-emitc{target=cuda}),
// printed by printCUDASource with MLIR's C++ emitter. Both paths share the
// kernel description: grid, block, parameters and shared_bytes agree.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_TILETOCUDASOURCE_H
#define TILE_CONVERSION_TILETOCUDASOURCE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace tile {

struct TileToCUDASourcePipelineOptions
    : public PassPipelineOptions<TileToCUDASourcePipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU: sm_80, sm_90a, ... (the "
                                          "source uses the sm_80 instructions)"),
                           llvm::cl::init("sm_80")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("recorded in the metadata"),
                               llvm::cl::init("")};
};

/// tile -> gpu/nvgpu (the sm_80 lowering) -> EmitC.
void buildTileToCUDASourcePipeline(
    OpPassManager &pm, const TileToCUDASourcePipelineOptions &options);
void registerTileToCUDASourcePipeline();
/// Dialects the pipeline produces (emitc) besides the NVIDIA ones.
void registerTileCUDASourceDialects(DialectRegistry &registry);

/// Prints the EmitC `module` (the pipeline's output) as CUDA C++: the device
/// library, then the kernel; `extraDefinitions` (e.g. the metadata hash
/// constant) are appended after the kernel.
LogicalResult printCUDASource(ModuleOp module, StringRef extraDefinitions,
                              std::string &out);

} // namespace tile
} // namespace mlir

#endif // TILE_CONVERSION_TILETOCUDASOURCE_H
