//===- TileToMetalSource.h - the tile-to-metal-source pipeline --*- C++ -*-===//
//
// Metal Shading Language for the metal-torch backend (docs/pipelines.md,
// "Metal Shading Language"): the sm_80 path's lowering (metadata, layouts,
// convert-tile-to-nvgpu) up to the point before NVVM, then the EmitC
// source path shared with CUDA C++ (convert-gpu-to-emitc{target=metal}),
// printed by printMetalSource with MLIR's C++ emitter and the Metal device
// library (include/tile/device/metal). The sm_80 instructions of the
// lowering (warp shuffles, ldmatrix, mma.sync, cp.async) are implemented by
// that library with SIMD-group functions and simdgroup_matrix.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_TILETOMETALSOURCE_H
#define TILE_CONVERSION_TILETOMETALSOURCE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace tile {

struct KernelMetadata;

/// tile-metal-thread-context renames kernel NAME to NAME + this; the
/// `kernel void NAME` entry calls it.
inline constexpr StringLiteral kMetalBodySuffix = "_body";

/// Apple GPUs' threadgroup memory and buffer-argument limits.
inline constexpr int64_t kMetalMaxThreadgroupMemory = 32768;
inline constexpr int64_t kMetalMaxBuffers = 31;

struct TileToMetalSourcePipelineOptions
    : public PassPipelineOptions<TileToMetalSourcePipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Apple GPU: apple-m1 ... apple-m4 "
                                          "(recorded in the metadata)"),
                           llvm::cl::init("apple-m1")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("recorded in the metadata"),
                               llvm::cl::init("")};
  Option<bool> remarks{*this, "remarks",
                       llvm::cl::desc("Remarks where the lowering takes a "
                                      "slower path"),
                       llvm::cl::init(false)};
};

/// tile -> gpu/nvgpu (the sm_80 lowering) -> EmitC for MSL.
void buildTileToMetalSourcePipeline(
    OpPassManager &pm, const TileToMetalSourcePipelineOptions &options);
void registerTileToMetalSourcePipeline();

/// Prints the EmitC `module` (the pipeline's output) as MSL: the device
/// library, the kernel body, then the `kernel void` entry of the Metal
/// kernel ABI (docs/bundle.md, "msl"): one `device` buffer per tensor
/// parameter in order, then one buffer of int64 words holding, per tensor,
/// its offset, sizes and strides (in elements) and, per scalar, its value
/// (integers sign-extended, floats as their bits), in parameter order.
/// Fails (with an error at the module) when the kernel exceeds Metal's
/// limits (threadgroup memory, buffer count).
LogicalResult printMetalSource(ModuleOp module, const KernelMetadata &md,
                               std::string &out);

} // namespace tile
} // namespace mlir

#endif // TILE_CONVERSION_TILETOMETALSOURCE_H
