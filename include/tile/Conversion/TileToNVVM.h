//===- TileToNVVM.h - the tile-to-nvvm pipeline -----------------*- C++ -*-===//

#ifndef TILE_CONVERSION_TILETONVVM_H
#define TILE_CONVERSION_TILETONVVM_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tile {

/// Options of the `tile-to-nvvm` pipeline.
struct TileToNVVMPipelineOptions
    : public PassPipelineOptions<TileToNVVMPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU: sm_80, sm_90a, ..."),
                           llvm::cl::init("sm_80")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features (+ptx80, ...)"),
                               llvm::cl::init("+ptx80")};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("Device optimization level"),
                            llvm::cl::init(3)};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: bin (cubin), isa (PTX), "
                     "llvm, offload, or none (stop before serialization)"),
      llvm::cl::init("bin")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root (bin/ptxas, nvvm/libdevice) for "
                     "format=bin|isa; empty: MLIR's own search ($CUDA_ROOT, "
                     "$CUDA_HOME, $CUDA_PATH; ptxas on PATH). tilec passes "
                     "the toolkit its discovery found (CUDAToolkit.h)"),
      llvm::cl::init("")};
  Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Remarks naming every kernel that does not get the "
                     "sm_90a warp-specialized path and every tile.gemm "
                     "lowered to SIMT FMAs, with the reason"),
      llvm::cl::init(false)};
  Option<bool> fpContract{
      *this, "fp-contract",
      llvm::cl::desc("Mark the kernels' float arith ops `contract` "
                     "(tile-fp-contract): mul + add become fma, as with "
                     "nvcc --fmad=true"),
      llvm::cl::init(true)};
  Option<bool> preciseDiv{
      *this, "precise-div",
      llvm::cl::desc("Keep the kernels' f32 divisions IEEE (div.rn.f32); by "
                     "default tile-nvvm-fast-div makes them div.full.f32 "
                     "(at most 2 ulp), as nvcc --prec-div=false and Triton"),
      llvm::cl::init(false)};
  Option<bool> wsPingPong{
      *this, "ws-pingpong",
      llvm::cl::desc("convert-tile-to-nvgpu's ws-pingpong: the consumer "
                     "warpgroups of the warp-specialized variant take turns "
                     "at issuing a rotated loop's wgmma gemms"),
      llvm::cl::init(true)};
  Option<bool> wsTma{
      *this, "ws-tma",
      llvm::cl::desc("convert-tile-to-nvgpu's ws-tma: also the "
                     "warp-specialized variant with a TMA producer"),
      llvm::cl::init(true)};
  Option<bool> wsPersistent{
      *this, "ws-persistent",
      llvm::cl::desc("convert-tile-to-nvgpu's ws-persistent: a persistent "
                     "TMA-producer variant (one CTA per SM running the "
                     "launch's blocks as they are claimed)"),
      llvm::cl::init(true)};
  Option<bool> wsDoubleHeads{
      *this, "ws-double-heads",
      llvm::cl::desc("convert-tile-to-nvgpu's ws-double-heads: two shared "
                     "buffers per head copy in the persistent form"),
      llvm::cl::init(true)};
  Option<bool> sm90Gemm{
      *this, "sm90-gemm",
      llvm::cl::desc("On sm_90a, also emit the TMA/wgmma warp-specialized "
                     "variant of matching GEMM kernels (metadata variants)"),
      llvm::cl::init(true)};
  Option<std::string> sm90Persistent{
      *this, "sm90-persistent",
      llvm::cl::desc("Make the sm_90a variant a persistent kernel (one CTA "
                     "per SM looping over the output tiles): auto (for "
                     "128x128 output tiles, where it measured faster, and "
                     "128x256 tiles with a 16-bit C), true, false"),
      llvm::cl::init("auto")};
  Option<std::string> sm90Schedule{
      *this, "sm90-schedule",
      llvm::cl::desc("Consumer schedule of the sm_90a variant: auto "
                     "(cooperative), cooperative, pingpong (persistent, "
                     "two consumer warpgroups on alternate tiles)"),
      llvm::cl::init("auto")};
  Option<std::string> sm90Epilogue{
      *this, "sm90-epilogue",
      llvm::cl::desc("Epilogue of the sm_90a variant: auto (TMA stores "
                     "through swizzled staging buffers for persistent "
                     "cooperative kernels with a 16-bit C, else from "
                     "registers), tma (also makes the kernel persistent), "
                     "registers"),
      llvm::cl::init("auto")};
};

/// tile -> gpu/nvgpu -> NVVM -> cubin (docs/pipelines.md).
void buildTileToNVVMPipeline(OpPassManager &pm,
                             const TileToNVVMPipelineOptions &options);
/// Only the serialization step (gpu-module-to-binary) of the pipeline.
void buildTileNVVMSerialization(OpPassManager &pm, StringRef format,
                                StringRef toolkit);
void registerTileToNVVMPipeline();

/// Dialects, interfaces and LLVM IR translations the NVIDIA pipeline needs
/// (gpu, nvgpu, nvvm, vector; NVVM target attribute; the ConvertToLLVM
/// interfaces convert-gpu-to-nvvm uses; gpu/nvvm/llvm to LLVM IR
/// translation).
void registerTileNVVMDialects(DialectRegistry &registry);

} // namespace tile
} // namespace mlir

#endif // TILE_CONVERSION_TILETONVVM_H
