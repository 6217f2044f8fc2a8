//===- TileToNVGPU.cpp - outline a tile.launch into a gpu.func ------------===//
//
// `func @k(args) attributes {tile.kernel} { prelude; tile.launch ... }`
// becomes
//   gpu.module @k_module { gpu.func @k_kernel(args) kernel { body } }
// and the per-thread lowering of the body (Lowering.cpp, Gemm.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETONVGPU
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

/// One lowered gpu.func of a kernel.
struct Outlined {
  std::string name;
  int64_t sharedBytes = 0;
  int64_t threads = 0;
  SmallVector<TmaDescAttr> maps; // the TMA producer's (extra parameters)
  bool persistent = false;       // CTAs loop over the blocks (grid "sms")
};

/// The persistent form's block indices and claim counter are 32-bit: the
/// runtime launches it only for grids of at most this many blocks (room
/// left for one claim per CTA past the end).
static constexpr int64_t kMaxPersistentBlocks = (int64_t(1) << 31) - (1 << 20);

/// Which form of a kernel outline() builds.
enum class KernelForm {
  plain,         // NAME_kernel: the launch as written
  specialized,   // NAME_kernel_ws: a cp.async producer warpgroup
  specializedTma // NAME_kernel_ws_tma: a TMA producer thread
};

/// Outlines one kernel's tile.launch into a gpu.func NAME_kernel<suffix> of
/// NAME_module and lowers its body. A warp-specialized form
/// (WarpSpecialize.cpp) that does not apply gives nullopt and leaves
/// nothing behind (a remark says why). `doubleHeads`: try two stages per
/// head copy in the persistent form (lowered again without them when they
/// do not fit).
static FailureOr<std::optional<Outlined>>
outline(ModuleOp module, func::FuncOp kernel,
        const nvgpu_lowering::GPUTargetInfo &target, bool remarks,
        KernelForm form, bool doubleHeads = true) {
  bool warpSpecialize = form != KernelForm::plain;
  FailureOr<LaunchOp> maybeLaunch = getKernelLaunch(kernel);
  if (failed(maybeLaunch))
    return failure();
  LaunchOp launch = *maybeLaunch;
  MLIRContext *ctx = module.getContext();
  Location loc = kernel.getLoc();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));

  OpBuilder b(kernel);
  std::string name = kernel.getSymName().str();
  auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(name + "_module");
  if (!gpuModule)
    gpuModule = gpu::GPUModuleOp::create(b, loc, name + "_module");
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto fnType = FunctionType::get(ctx, kernel.getArgumentTypes(), {});
  std::string fnName = name + (form == KernelForm::plain ? "_kernel"
                               : form == KernelForm::specialized
                                   ? "_kernel_ws"
                                   : "_kernel_ws_tma");
  auto fn = gpu::GPUFuncOp::create(b, loc, fnName, fnType);
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  int64_t threads = launch.getThreads();
  fn.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {(int32_t)threads, 1, 1}));
  Block &entry = fn.getBody().front();
  b.setInsertionPointToStart(&entry);

  IRMapping mapping;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    mapping.map(kernel.getArgument(i), entry.getArgument(i));
  SmallVector<Value> blockIdx, gridDim;
  for (gpu::Dimension d :
       {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
    blockIdx.push_back(gpu::BlockIdOp::create(b, loc, d));
    gridDim.push_back(gpu::GridDimOp::create(b, loc, d));
  }
  if (failed(cloneLaunchBody(b, launch, mapping, blockIdx, gridDim)))
    return failure();
  gpu::ReturnOp::create(b, loc);

  nvgpu_lowering::KernelLowering lowering(fn, threads, target);
  // The other forms say what the TMA form would repeat.
  lowering.remarks = remarks && form != KernelForm::specializedTma;
  lowering.requestWarpSpecialization = warpSpecialize;
  lowering.requestTma = form == KernelForm::specializedTma;
  lowering.requestPersistent =
      warpSpecialize && target.warpSpecializePersistent;
  lowering.requestDoubleHeads =
      doubleHeads && target.warpSpecializeDoubleHeads;
  // A kernel with sm_90a variants (tile-warp-specialize) has the Hopper
  // path: its generic kernel is a fallback and makes no wgmma remarks.
  if (auto info = module->getAttrOfType<KernelInfoAttr>(
          TileDialect::kKernelInfoAttrName))
    lowering.hopperVariants = !info.getVariants().empty();
  auto shared = lowering.run();
  if (failed(shared)) {
    if (!warpSpecialize || !lowering.declinedSpecialization)
      return failure();
    if (lowering.declinedDoubleHeads) {
      // The TMA form's own decision (its other remarks are the cp.async
      // form's): the user learns why the next block's head copies do not
      // overlap this block's loop.
      if (remarks)
        launch.emitRemark("TMA-producer variant with one stage of head "
                          "copies: ")
            << lowering.whyNotSpecialized;
      fn.erase();
      return outline(module, kernel, target, remarks, form,
                     /*doubleHeads=*/false);
    }
    // The TMA form says only what is its own (the cp.async form, built
    // next, reports the rest).
    if (remarks && !lowering.whyNotSpecialized.empty()) {
      if (form == KernelForm::specialized)
        launch.emitRemark("no warp-specialized variant: ")
            << lowering.whyNotSpecialized;
      else if (lowering.declinedTma)
        launch.emitRemark("no TMA-producer variant: ")
            << lowering.whyNotSpecialized;
    }
    fn.erase();
    return std::optional<Outlined>();
  }
  WalkResult leftover = fn.walk([&](Operation *op) {
    if (isa<TileDialect>(op->getDialect())) {
      op->emitError("tile op left after the GPU lowering of tile ops");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (leftover.wasInterrupted())
    return failure();
  int64_t blockThreads = threads;
  bool persistent = false;
  if (lowering.specialized) {
    blockThreads += nvgpu_lowering::WarpSpecializedKernel::kProducerThreads;
    persistent = lowering.specialized->persistent;
    if (persistent && failed(lowering.makePersistent(launch, mapping)))
      return failure();
  }
  return std::optional<Outlined>(
      Outlined{fnName, *shared, blockThreads, lowering.tmaMaps, persistent});
}

LogicalResult nvgpu_lowering::outlineAndLowerKernels(
    ModuleOp module, const GPUTargetInfo &target, bool remarks) {
  SmallVector<func::FuncOp> kernels = getKernelFunctions(module);
  for (func::FuncOp kernel : kernels)
    if (failed(verifyLowerableElementTypes(kernel)))
      return failure();
  int64_t maxShared = 0;
  auto info = module->getAttrOfType<KernelInfoAttr>(
      TileDialect::kKernelInfoAttrName);
  SmallVector<KernelVariantAttr> variants;
  if (info)
    variants.append(info.getVariants().begin(), info.getVariants().end());
  // The warp-specialized variant: for the module's one kernel, when it has
  // no sm_90a variants of its own (tile-warp-specialize's GEMMs are
  // better) and the metadata can describe it.
  bool specialize = target.warpSpecialize && info && kernels.size() == 1 &&
                    variants.empty();
  for (func::FuncOp kernel : kernels) {
    auto plain = outline(module, kernel, target, remarks, KernelForm::plain);
    if (failed(plain))
      return failure();
    maxShared = std::max(maxShared, (*plain)->sharedBytes);
    if (specialize) {
      // Launched by the runtime's sm_90a variant launcher, first the one
      // with TMA producers (when the runtime can encode its tensor maps
      // for the launch), then the cp.async one (no maps: it applies to
      // every launch on an sm_90 device from the cubin); docs/bundle.md,
      // "Kernel variants".
      for (KernelForm form :
           {KernelForm::specializedTma, KernelForm::specialized}) {
        if (form == KernelForm::specializedTma && !target.warpSpecializeTma)
          continue;
        auto ws = outline(module, kernel, target, remarks, form);
        if (failed(ws))
          return failure();
        if (!*ws)
          continue;
        Builder b(module.getContext());
        bool tma = form == KernelForm::specializedTma;
        variants.push_back(KernelVariantAttr::get(
            module.getContext(), b.getStringAttr("sm90_tma_wgmma"),
            b.getStringAttr(target.chip), b.getStringAttr((*ws)->name),
            {(*ws)->threads, 1, 1}, (*ws)->sharedBytes,
            (*ws)->persistent ? VariantGrid::sms : VariantGrid::launch,
            // The persistent form counts claimed blocks in 32 bits.
            /*maxTiles=*/(*ws)->persistent ? kMaxPersistentBlocks : 0,
            b.getStringAttr(tma ? "warp_specialized_tma" : "warp_specialized"),
            (*ws)->maps, /*splitK=*/ArrayRef<int64_t>{},
            /*workspaceBytes=*/(*ws)->persistent ? 8 : 0));
      }
    }
    kernel.erase();
  }
  // The metadata's shared_bytes is what the launch must request.
  if (info)
    setKernelInfo(module, info.withSharedBytes(maxShared).withVariants(variants));
  return success();
}

namespace {

struct ConvertTileToNVGPUPass
    : public tile::impl::ConvertTileToNVGPUBase<ConvertTileToNVGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    nvgpu_lowering::GPUTargetInfo target;
    target.chip = chip;
    target.sharedMemoryChip = sharedMemoryChip;
    target.warpSpecialize = warpSpecialize && chip == "sm_90a";
    target.warpSpecializePingPong = wsPingPong;
    target.warpSpecializeTma = wsTma;
    target.warpSpecializePersistent = wsPersistent;
    target.warpSpecializeDoubleHeads = wsDoubleHeads;
    if (failed(nvgpu_lowering::outlineAndLowerKernels(getOperation(), target,
                                                      remarks)))
      signalPassFailure();
  }
};

} // namespace
