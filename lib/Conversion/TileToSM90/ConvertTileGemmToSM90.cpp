//===- ConvertTileGemmToSM90.cpp - convert-tile-gemm-to-sm90 --------------===//
//
// Builds the Hopper variant of a warp-specialized GEMM kernel next to the
// generic one. For a kernel whose pipelined loop tile-warp-specialize
// tagged (Analysis/WarpSpecialization.h):
//
//   gpu.module @NAME_sm90_module {
//     gpu.func @NAME_kernel_sm90(<kernel params>, %tmaA: !llvm.ptr,
//                                %tmaB: !llvm.ptr [, %tmaC: !llvm.ptr]) kernel
//   }
//
// The body comes from the schedule's KernelBuilder (KernelBuilder.h); the
// variant is recorded in the metadata (VariantMetadata.h). First comes
// NAME_kernel_sm90_nr16 and _nr64, the narrow kernels for launches of at
// most 16 and 64 rows of A and C (Narrow.cpp; split-K's grid and
// workspace, the runtime's "max_rows" rule), where the tile rows allow it
// (a remark says why not). Then NAME_kernel_sm90_sk, the split-K kernel for grids of at most
// kSplitKMaxTiles tiles (SplitK.cpp; it takes a trailing workspace
// pointer after the tensor maps; the runtime tries the variants in
// order). A launch tile dividing 128x256 then gets NAME_kernel_sm90_wide,
// 128x256 CTA tiles of several launch blocks (WideTile.cpp, metadata
// "coarsen" and "coarse_speedup"; a remark says why a GEMM gets none), and
// a launch tile below 128 in both dims (64x64) also
// NAME_kernel_sm90_wide128, 128x128 CTA tiles (the runtime takes the
// coarse variant of least estimated time). Every plan also gets
// NAME_kernel_sm90_ldg,
// last: the same GEMM without tensor maps (loads by the producer
// threads), for operands TMA cannot describe. The TMA variants name
// NAME_pack2_b<E> (PackKernel.h), with which the runtime repacks operands
// TMA cannot describe into an aligned workspace when that pays
// (lib/Runtime/Cuda/CudaRepack.h), so _ldg runs only small or
// unrepackable launches.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "PackKernel.h"
#include "VariantMetadata.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILEGEMMTOSM90
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

namespace {

struct ConvertTileGemmToSM90Pass
    : public tile::impl::ConvertTileGemmToSM90Base<ConvertTileGemmToSM90Pass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<BuiltVariant, 2> variants;
    for (func::FuncOp kernel : getKernelFunctions(module)) {
      PipelinedOp tagged;
      kernel.walk([&](PipelinedOp loop) {
        if (loop->hasAttr(kWarpSpecializeAttr))
          tagged = loop;
      });
      if (!tagged)
        continue;
      auto ws = WarpSpecialization::fromAttr(
          tagged->getAttr(kWarpSpecializeAttr));
      std::string why;
      auto m = matchSM90Gemm(tagged, why);
      if (failed(ws) || failed(m)) {
        tagged->emitError("sm90: tagged loop no longer matches: ") << why;
        return signalPassFailure();
      }
      tagged->removeAttr(kWarpSpecializeAttr);
      // A launch tile of more than 128 rows: the narrow kernels for
      // GEMV-like launches (they compute the first R rows of any launch
      // tile), then its 128-row parts as the CTA tiles of the TMA kernel
      // (every other launch; the pack kernel for operands TMA cannot
      // describe, else entry.kernel).
      if (m->tileM > 128) {
        if (failed(addNarrowVariant(kernel, tagged, *m, variants)) ||
            failed(addFirstPartSplitK(kernel, *m, variants)))
          return signalPassFailure();
        if (failed(addSplitTileVariant(kernel, tagged, *m, *ws, variants)))
          return signalPassFailure();
        addPackKernel(kernel, *m, variants);
        continue;
      }
      // Narrow first (NarrowKernel): launches of at most 16, then 64 rows
      // (GEMV-like), whatever their tile count.
      if (failed(addNarrowVariant(kernel, tagged, *m, variants)))
        return signalPassFailure();
      // Split-K first (SplitKKernel): for grids of at most kSplitKMaxTiles
      // tiles the runtime launches it when its cost model gives at least 2
      // K-slices (max_tiles + split_k); other launches go on.
      auto splitK = build(kernel, *m, splitKPlan(*m), "_sk");
      if (failed(splitK))
        return signalPassFailure();
      splitK->maxTiles = kSplitKMaxTiles;
      variants.push_back(std::move(*splitK));
      // Coarse tiles (WideTileKernel): several launch blocks per CTA tile, for
      // launches whose grid gives enough of them (the runtime's tile-shape
      // cost model, "coarsen"); before the launch-tile kernel.
      const size_t before = variants.size();
      if (failed(addWideTileVariant(kernel, tagged, *m, *ws, 128, 256,
                                    "_wide", variants)))
        return signalPassFailure();
      // Launch tiles below 128 in both dims (64x64) also get 128x128 CTA
      // tiles: twice as many CTAs as 128x256 for mid-size grids (1000^3:
      // 64 instead of 32 on 132 SMs), where the launch tile's one m64
      // warpgroup per CTA is slow too. The runtime takes the coarse
      // variant of least estimated time.
      if (variants.size() > before && m->tileM < 128 && m->tileN < 128 &&
          failed(addWideTileVariant(kernel, tagged, *m, *ws, 128, 128,
                                    "_wide128", variants)))
        return signalPassFailure();
      auto variant = build(kernel, *m, *ws);
      if (failed(variant))
        return signalPassFailure();
      variants.push_back(std::move(*variant));
      // Last, for operands no tensor map describes (e.g. an f16 row pitch
      // that is not a multiple of 16 bytes: the runtime cannot encode the
      // maps of the variants above and tries the next): the same GEMM with
      // the producer warpgroup loading through its threads.
      addPackKernel(kernel, *m, variants);
      auto ldg = build(kernel, *m, withoutTma(*m, *ws), "_ldg");
      if (failed(ldg))
        return signalPassFailure();
      variants.push_back(std::move(*ldg));
    }
    if (failed(recordVariantMetadata(module, variants)))
      return signalPassFailure();
  }

  /// The plan of the variant without TMA: `ws`'s cooperative/persistent
  /// schedule (ping-pong and the TMA-store epilogue replaced by the
  /// persistent cooperative kernel) with loads by every producer thread,
  /// which need more registers than one thread issuing TMA.
  static WarpSpecialization withoutTma(const GemmMatch &m,
                                       const WarpSpecialization &ws) {
    WarpSpecialization l = ws;
    if (ws.pingpong || ws.tmaStore)
      l = decideWarpSpecialization(m, PersistentMode::On,
                                   ScheduleMode::Cooperative,
                                   EpilogueMode::Registers);
    l.ldgLoads = true;
    l.producerRegs = kLdgProducerRegs;
    l.consumerRegs = l.consumerRegisterBudget();
    return l;
  }
  /// The plan of the CTA tile `cta` of a coarse or split variant:
  /// persistent cooperative, as many stages as fit, its default epilogue
  /// (TMA stores where they apply) unless the launch tile's persistent
  /// cooperative plan (`launchTile`'s, as tile-warp-specialize planned it)
  /// could have stored by TMA and `ws` does not: tile-warp-specialize was
  /// told epilogue=registers. (A 64-row launch tile is not persistent by
  /// default, and a 64-column one cannot store by TMA: no choice made.)
  static WarpSpecialization ctaTilePlan(const GemmMatch &launchTile,
                                        const GemmMatch &cta,
                                        const WarpSpecialization &ws) {
    const bool registersChosen =
        ws.persistent && !ws.pingpong && !ws.tmaStore &&
        decideWarpSpecialization(launchTile, PersistentMode::On,
                                 ScheduleMode::Cooperative, EpilogueMode::Auto)
            .tmaStore;
    return decideWarpSpecialization(
        cta, PersistentMode::On, ScheduleMode::Cooperative,
        registersChosen ? EpilogueMode::Registers : EpilogueMode::Auto);
  }

  /// Builds NAME_kernel_sm90_wide (WideTileKernel) into `variants` where
  /// launch blocks group into coarse tiles (coarseTile), storing by TMA
  /// unless `ws` (the launch tile's plan) chose registers; a remark on
  /// `loop` says why not.
  LogicalResult addWideTileVariant(func::FuncOp kernel, PipelinedOp loop,
                                   const GemmMatch &m,
                                   const WarpSpecialization &ws, int64_t ctaM,
                                   int64_t ctaN, StringRef suffix,
                                   SmallVectorImpl<BuiltVariant> &variants) {
    std::string why;
    FailureOr<CoarseTile> coarse = coarseTile(m, ctaM, ctaN, why);
    if (failed(coarse)) {
      if (remarks)
        loop->emitRemark("sm90: no wide-tile variant for this GEMM: ") << why;
      return success();
    }
    // The plan of the coarse CTA tile: persistent cooperative, the launch
    // tile's epilogue (TMA stores or registers), as many stages as fit.
    GemmMatch wide = m;
    wide.tileM = coarse->rows * m.tileM;
    wide.tileN = coarse->cols * m.tileN;
    WarpSpecialization w = ctaTilePlan(m, wide, ws);
    w.coarse = *coarse;
    auto built = build(kernel, m, w, suffix);
    if (failed(built))
      return failure();
    built->coarsen = {1, 1, 1};
    if (coarse->rowAxis >= 0)
      built->coarsen[coarse->rowAxis] = coarse->rows;
    if (coarse->colAxis >= 0)
      built->coarsen[coarse->colAxis] = coarse->cols;
    built->coarseSpeedupPct = coarseSpeedupPct(m.tileM, m.tileN, wide.tileM,
                                               wide.tileN);
    variants.push_back(std::move(*built));
    return success();
  }

  /// Builds NAME_kernel_sm90_split (WideTileKernel over the 128-row parts
  /// of each launch block, splitTile, CTA tiles up to 256 columns wide)
  /// and, where the launch tile's columns divide 128 and that gives other
  /// CTA tiles, NAME_kernel_sm90_split128 (CTA tiles of 128 columns: twice
  /// the CTAs, for grids that leave SMs idle) into `variants`, persistent
  /// cooperative, storing by TMA unless tile-warp-specialize was told
  /// epilogue=registers. One of them runs every launch ("split" and
  /// "coarsen": the runtime counts their CTA tiles and takes the one of
  /// least estimated time, ties to the first). A remark on `loop` when no
  /// grid axis allows it.
  LogicalResult addSplitTileVariant(func::FuncOp kernel, PipelinedOp loop,
                                    const GemmMatch &m,
                                    const WarpSpecialization &ws,
                                    SmallVectorImpl<BuiltVariant> &variants) {
    int64_t previousCols = 0;
    for (int64_t ctaN : {256, 128}) {
      if (ctaN == 128 && (m.tileN > 128 || 128 % m.tileN))
        break;
      std::string why;
      FailureOr<CoarseTile> split = splitTile(m, ctaN, why);
      if (failed(split)) {
        if (remarks)
          loop->emitRemark("sm90: no variant for this ")
              << m.tileM << "-row launch tile: " << why;
        return success();
      }
      if (split->cols == previousCols)
        break; // no column axis: the same CTA tiles
      previousCols = split->cols;
      GemmMatch cta = m;
      cta.tileM = 128;
      cta.tileN = split->cols * m.tileN;
      GemmMatch planned = m; // as tile-warp-specialize planned it
      planned.tileM = 128;
      WarpSpecialization w = ctaTilePlan(planned, cta, ws);
      w.coarse = *split;
      auto built = build(kernel, m, w, ctaN == 256 ? "_split" : "_split128");
      if (failed(built))
        return failure();
      built->coarsen = {1, 1, 1};
      if (split->colAxis >= 0)
        built->coarsen[split->colAxis] = split->cols;
      built->split = split->parts;
      built->coarseSpeedupPct =
          coarseSpeedupPct(m.tileM, m.tileN, cta.tileM, cta.tileN);
      variants.push_back(std::move(*built));
    }
    return success();
  }

  /// Builds NAME_kernel_sm90_sk128 into `variants` for a launch tile of
  /// more than 128 rows where narrowRowsApply(m, 128) holds: the split-K
  /// kernel of its first 128-row part, for launches whose A and C have at
  /// most 128 rows ("max_rows" 128; split-K's grid and workspace, the
  /// runtime's narrow slice model). Every row such a launch stores is in
  /// the first part of its tile, so the others, which the split variants
  /// would run over TMA's zero fill, are not computed, and the K range is
  /// split over otherwise idle SMs.
  LogicalResult addFirstPartSplitK(func::FuncOp kernel, const GemmMatch &m,
                                   SmallVectorImpl<BuiltVariant> &variants) {
    std::string why;
    if (failed(narrowRowsApply(m, 128, why)))
      return success(); // the narrow variants' remark says why
    GemmMatch part = m;
    part.tileM = 128;
    auto built = build(kernel, part, splitKPlan(part), "_sk128");
    if (failed(built))
      return failure();
    built->maxRows = 128;
    variants.push_back(std::move(*built));
    return success();
  }

  /// Builds NAME_kernel_sm90_nr<R> (NarrowKernel) for each R of
  /// kNarrowRows into `variants` where narrowRowsApply holds (a remark on
  /// `loop` says why not, once).
  LogicalResult addNarrowVariant(func::FuncOp kernel, PipelinedOp loop,
                                 const GemmMatch &m,
                                 SmallVectorImpl<BuiltVariant> &variants) {
    for (int64_t rows : kNarrowRows) {
      std::string why;
      if (failed(narrowRowsApply(m, rows, why))) {
        if (remarks)
          loop->emitRemark("sm90: no narrow-row variant of ")
              << rows << " rows for this GEMM: " << why;
        return success();
      }
      auto built = build(kernel, m, narrowPlan(m, rows),
                         "_nr" + std::to_string(rows));
      if (failed(built))
        return failure();
      built->maxRows = rows;
      variants.push_back(std::move(*built));
    }
    return success();
  }

  /// The plan of the `rows`-row narrow variant: split-K's, one consumer
  /// warpgroup per 64 columns of the tile, two CTAs per multiprocessor
  /// (one for 256-column tiles: 640 threads) with as many stages (at most
  /// 8) as fit in their share of shared memory; no setmaxnreg.
  static WarpSpecialization narrowPlan(const GemmMatch &m, int64_t rows) {
    WarpSpecialization s;
    s.producers = 1;
    s.consumers = m.tileN / 64;
    s.splitK = true;
    s.narrowRows = rows;
    s.ctasPerSm = s.threads() <= 512 ? 2 : 1;
    s.producerRegs = s.consumerRegs = 0;
    const int64_t stageBytes = (rows + m.tileN) * kBlockK * 2;
    // Per CTA: its share of the multiprocessor, less the 1 KiB the
    // hardware reserves and the kernel's 1 KiB of alignment slack.
    const int64_t room = kSharedBytesPerSm / s.ctasPerSm - 2048;
    s.stages = std::clamp<int64_t>(room / stageBytes, 2, 8);
    return s;
  }

  /// The plan of the split-K variant: the non-persistent cooperative tile
  /// (TM / 64 consumer warpgroups, epilogue from registers).
  static WarpSpecialization splitKPlan(const GemmMatch &m) {
    WarpSpecialization s =
        decideWarpSpecialization(m, PersistentMode::Off,
                                 ScheduleMode::Cooperative,
                                 EpilogueMode::Registers);
    s.splitK = true;
    return s;
  }

  /// Adds the pack kernel for the operands' element size to the kernel's
  /// sm90 module and names it in `variants` of `kernel` that load with TMA
  /// (the runtime repacks an odd-pitch A or B for them instead of falling
  /// back to _ldg).
  void addPackKernel(func::FuncOp kernel, GemmMatch m,
                     MutableArrayRef<BuiltVariant> variants) {
    const int64_t bits = m.inType.getIntOrFloatBitWidth();
    const int64_t elemBytes = bits / 8;
    if (bits % 8 != 0 || !llvm::is_contained({1, 2, 4, 8}, elemBytes))
      return;
    std::string name = kernel.getSymName().str();
    auto gpuModule =
        getOperation().lookupSymbol<gpu::GPUModuleOp>(name + "_sm90_module");
    if (!gpuModule)
      return;
    OpBuilder b(gpuModule);
    std::string pack =
        buildPackKernel(b, m.launch.getLoc(), gpuModule, name, elemBytes);
    for (BuiltVariant &v : variants)
      if (v.match.launch == m.launch && !v.ws.ldgLoads) {
        v.packKernel = pack;
        v.packElemBytes = elemBytes;
      }
  }

  /// setmaxnreg of the producer threads that load without TMA: 16 chunks
  /// in flight plus their addresses.
  static constexpr int64_t kLdgProducerRegs = 96;

  /// Builds the kernel NAME_kernel_sm90<suffix> into NAME_sm90_module
  /// (created by the first variant of the kernel).
  FailureOr<BuiltVariant> build(func::FuncOp kernel, GemmMatch m,
                                const WarpSpecialization &ws,
                                StringRef suffix = "") {
    MLIRContext *ctx = &getContext();
    Location loc = m.launch.getLoc();
    ModuleOp module = getOperation();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    OpBuilder b(kernel);
    std::string name = kernel.getSymName().str();
    auto gpuModule =
        module.lookupSymbol<gpu::GPUModuleOp>(name + "_sm90_module");
    if (!gpuModule)
      gpuModule = gpu::GPUModuleOp::create(b, loc, name + "_sm90_module");
    b.setInsertionPointToStart(gpuModule.getBody());
    std::unique_ptr<KernelBuilder> kb = createKernelBuilder(b, loc, m, ws);
    // The kernel's params, then the tensor maps (CUtensorMap pointers),
    // then the workspace pointer (split-K).
    SmallVector<Type> argTypes(kernel.getArgumentTypes());
    unsigned nargs = argTypes.size();
    argTypes.append(kb->numTensorMaps(), LLVM::LLVMPointerType::get(ctx));
    if (kb->takesWorkspace())
      argTypes.push_back(LLVM::LLVMPointerType::get(ctx));
    std::string kernelName = name + "_kernel_sm90" + suffix.str();
    auto fn = gpu::GPUFuncOp::create(b, loc, kernelName,
                                     FunctionType::get(ctx, argTypes, {}));
    fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
    fn.setKnownBlockSizeAttr(
        DenseI32ArrayAttr::get(ctx, {(int32_t)ws.threads(), 1, 1}));
    // One block per multiprocessor (the register cap setmaxnreg needs), or
    // the plan's several (the narrow kernel's launch bounds).
    fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                b.getI32IntegerAttr(int32_t(ws.ctasPerSm)));
    Block &entry = fn.getBody().front();
    b.setInsertionPointToStart(&entry);

    IRMapping mapping;
    for (unsigned i = 0; i < nargs; ++i)
      mapping.map(kernel.getArgument(i), entry.getArgument(i));
    SmallVector<Value> tensorMaps(
        entry.getArguments().slice(nargs, kb->numTensorMaps()));
    Value workspace;
    if (kb->takesWorkspace())
      workspace = entry.getArguments().back();
    if (failed(kb->build(mapping, tensorMaps, workspace)))
      return failure();
    gpu::ReturnOp::create(b, loc);
    return BuiltVariant{kernelName,        m, ws, kb->sharedBytes(),
                        /*maxTiles=*/0, kb->workspaceBytes(),
                        kb->workspaceSliceBytes(),
                        /*packKernel=*/"", /*packElemBytes=*/0, {},
                        /*coarseSpeedupPct=*/0, /*maxRows=*/0};
  }
};

} // namespace
