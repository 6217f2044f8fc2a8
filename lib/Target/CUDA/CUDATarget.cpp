//===- CUDATarget.cpp - the NVIDIA GPU target -----------------------------===//
//
// The pipeline stops before serialization (format=none). Code generation
// then serializes the gpu.module once, to PTX (MLIR's NVVM target: LLVM IR,
// libdevice linked, NVPTX codegen), and assembles the cubin from that PTX
// with ptxas itself: one LLVM code generation per compile, and ptxas is
// found by tile's discovery (CUDAToolkit.h) with an error that says where it
// looked. The host side is the generic native wrapper for CUDA tensors,
// compiled for the host CPU by the shared host code generator.
//
//===----------------------------------------------------------------------===//

#include "tile/Target/MetadataHash.h"
#include "tile/Target/CUDA/CUDATarget.h"

#include "tile/Conversion/HostWrapperBuilder.h"
#include "tile/Conversion/GPUToEmitC.h"
#include "tile/Conversion/TileToCUDASource.h"
#include "tile/Conversion/TileToNVVM.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/Target/CUDA/CUDAToolkit.h"
#include "tile/Target/CUDA/PerKernelPTX.h"
#include "tile/Target/HostCodegen.h"
#include "tile/Target/TargetBackend.h"
#include "tile/Target/Toolchain.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/Targets.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <future>
#include <mutex>

using namespace mlir;
using namespace mlir::tile;

namespace {

constexpr StringLiteral kTriple = "nvptx64-nvidia-cuda";
constexpr StringLiteral kDefaultChip = "sm_80";
/// The chips through Hopper are compiled with PTX ISA 8.0 (what the sm_90a
/// kernels need, and what the GPU suite runs); later chips need a newer ISA
/// than 8.0 (LLVM knows each one's minimum and uses it when no +ptxNN is
/// given), so they get no default feature.
constexpr StringLiteral kDefaultFeatures = "+ptx80";
constexpr StringLiteral kPTX80Chips[] = {"sm_80", "sm_86", "sm_87",
                                         "sm_89", "sm_90", "sm_90a"};
/// The lowering uses cp.async, ldmatrix and mma.sync on bf16/tf32.
constexpr unsigned kMinSM = 80;

/// LLVM's NVPTX subtarget table (chips and features), or nullptr when this
/// LLVM was built without NVPTX.
const llvm::MCSubtargetInfo *nvptxSubtarget() {
  static std::unique_ptr<llvm::MCSubtargetInfo> sti;
  static std::once_flag once;
  std::call_once(once, [] {
#if LLVM_HAS_NVPTX_TARGET
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    std::string error;
    llvm::Triple triple(kTriple);
    if (const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error))
      sti.reset(t->createMCSubtargetInfo(triple, "", ""));
#endif
  });
  return sti.get();
}

/// "sm_90a" -> 90; 0 when not of the form sm_<N>[a|f].
unsigned smVersion(StringRef chip) {
  SmallVector<StringRef> m;
  if (!llvm::Regex("^sm_([0-9]+)[af]?$").match(chip, &m))
    return 0;
  unsigned v = 0;
  return m[1].getAsInteger(10, v) ? 0 : v;
}

/// The chips LLVM's NVPTX backend knows that the lowering supports.
std::vector<std::string> supportedChips() {
  std::vector<std::string> chips;
  if (const llvm::MCSubtargetInfo *sti = nvptxSubtarget())
    for (const llvm::SubtargetSubTypeKV &kv : sti->getAllProcessorDescriptions())
      if (smVersion(kv.Key) >= kMinSM)
        chips.push_back(kv.Key);
  llvm::sort(chips, [](const std::string &a, const std::string &b) {
    unsigned va = smVersion(a), vb = smVersion(b);
    return va != vb ? va < vb : a < b;
  });
  return chips;
}

/// The kernel calls libdevice (math functions lower to __nv_* calls).
bool callsLibdevice(ModuleOp module) {
  bool calls = false;
  module.walk([&](LLVM::LLVMFuncOp fn) {
    if (fn.isExternal() && fn.getName().starts_with("__nv_"))
      calls = true;
  });
  return calls;
}

/// The serialized object of the module's single gpu.binary.
FailureOr<std::string> binaryObject(ModuleOp module) {
  std::string out;
  unsigned count = 0;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects()) {
      out = cast<gpu::ObjectAttr>(a).getObject().getValue().str();
      ++count;
    }
  });
  if (count != 1)
    return module.emitError("expected one serialized GPU object, found ")
               << count,
           failure();
  return out;
}

class PtxasRun;

class CUDATarget final : public TargetBackend {
public:
  StringRef getName() const override { return "cuda"; }
  StringRef getDescription() const override {
    return "NVIDIA GPUs: cubin + PTX (sm_80 or newer), run through the CUDA "
           "driver";
  }
  std::string getChipHelp() const override {
    return "sm_80 (default), sm_86, sm_89, sm_90, sm_90a (adds the Hopper "
           "TMA/wgmma GEMM variant), ...: any sm_XY[a] >= sm_80 that LLVM's "
           "NVPTX backend knows";
  }
  ArrayRef<StringRef> getExecutionBackends() const override {
    static const StringRef backends[] = {"ffi", "native", "nvrtc"};
    return backends;
  }
  ArrayRef<EmitKind> getEmitKinds() const override {
    static const EmitKind kinds[] = {
        {"llvm",
         "optimized LLVM IR of the device code (NVPTX, libdevice linked)",
         false, "ll"},
        {"ptx", "PTX assembly of the device code", false, "ptx"},
        {"cubin", "the device code assembled by ptxas for --chip", true,
         "cubin"},
        {"obj", "the device object: the cubin (same as --emit=cubin)", true,
         "cubin"},
        {"cuda",
         "CUDA C++ of the kernel (EmitC, device library prepended): the "
         "nvrtc backend's `cuda` section",
         false, "cu"}};
    return kinds;
  }

  std::string describeToolchain(const CompileOptions &options) const override {
    return cuda::findPtxas(options.toolkitPath).describe() + "\n" +
           cuda::findLibdevice(options.toolkitPath).describe() + "\n" +
           findLinker().describe() + "\n";
  }

  void registerDialects(DialectRegistry &registry) const override {
    registerTileNVVMDialects(registry);
    registerTileCUDASourceDialects(registry);
  }

  /// The nvrtc backend's CUDA C++ is lowered from the unlowered kernel by
  /// tile-to-cuda-source (the same sm_80 lowering, then EmitC).
  bool needsUnloweredModule(const CompileOptions &options) const override {
    return options.emit == "cuda" ||
           (options.emit == kEmitBundle &&
            llvm::is_contained(options.backends, "nvrtc"));
  }
  LogicalResult generateFromUnlowered(ModuleOp unlowered, ModuleOp lowered,
                                      const CompileOptions &options,
                                      TargetOutput &out) const override;

  LogicalResult validate(CompileOptions &options,
                         Location loc) const override {
    if (options.chip.empty())
      options.chip = kDefaultChip.str();
    if (options.features.empty() &&
        llvm::is_contained(kPTX80Chips, options.chip))
      options.features = kDefaultFeatures.str();
    const llvm::MCSubtargetInfo *sti = nvptxSubtarget();
    if (!sti)
      return emitError(loc) << "this LLVM was built without the NVPTX "
                               "backend: the cuda target is unavailable";
    std::string chips = llvm::join(supportedChips(), ", ");
    unsigned sm = smVersion(options.chip);
    if (sm == 0)
      return emitError(loc) << "unknown CUDA chip '" << options.chip
                            << "' (expected sm_XY, one of: " << chips << ")";
    if (sm < kMinSM)
      return emitError(loc)
             << "chip '" << options.chip
             << "' is not supported by the cuda target: tile's NVIDIA "
                "lowering needs sm_80 or newer (cp.async, ldmatrix, mma.sync "
                "on bf16/tf32); supported: "
             << chips;
    if (!sti->isCPUStringValid(options.chip))
      return emitError(loc) << "LLVM's NVPTX backend does not know chip '"
                            << options.chip << "' (supported: " << chips
                            << ")";
    SmallVector<StringRef> features;
    StringRef(options.features).split(features, ',', -1, false);
    for (StringRef f : features) {
      StringRef name = f.trim();
      if (!name.consume_front("+") && !name.consume_front("-"))
        return emitError(loc) << "target feature '" << f
                              << "' must start with '+' or '-' (e.g. +ptx80)";
      if (!llvm::any_of(sti->getAllProcessorFeatures(),
                        [&](const llvm::SubtargetFeatureKV &kv) {
                          return name == kv.Key;
                        }))
        return emitError(loc) << "unknown NVPTX feature '" << f
                              << "' (PTX ISA versions: +ptx80, +ptx86, ...)";
    }
    return success();
  }

  void buildPipeline(OpPassManager &pm,
                     const CompileOptions &options) const override {
    TileToNVVMPipelineOptions pipeline;
    pipeline.chip = options.chip;
    pipeline.features = options.features;
    pipeline.optLevel = std::min(options.optLevel, 3u);
    pipeline.format = "none";
    pipeline.remarks = options.remarks;
    pipeline.fpContract = options.fpContract;
    pipeline.preciseDiv = options.preciseDiv;
    buildTileToNVVMPipeline(pm, pipeline);
  }

  LogicalResult generate(ModuleOp module, const CompileOptions &options,
                         TargetOutput &out) const override;

private:
  FailureOr<std::string> serializeToPTX(ModuleOp module,
                                        const CompileOptions &options,
                                        TimingScope &timing,
                                        std::string *deviceIR) const;
  /// Starts ptxas on `ptx` in the background.
  FailureOr<std::unique_ptr<PtxasRun>>
  startAssembling(Location loc, StringRef ptx,
                  const CompileOptions &options) const;
  LogicalResult buildNativeSharedObject(ModuleOp module,
                                        const CompileOptions &options,
                                        std::string &so) const;
};

FailureOr<std::string>
CUDATarget::serializeToPTX(ModuleOp module, const CompileOptions &options,
                           TimingScope &timing, std::string *deviceIR) const {
  // libdevice is linked when found; only a kernel that calls it needs it.
  ToolSearch libdevice = cuda::findLibdevice(options.toolkitPath);
  std::string toolkitRoot;
  if (libdevice.found())
    toolkitRoot = cuda::getToolkitRoot(libdevice.getPath());
  else if (libdevice.failedRequired() || callsLibdevice(module)) {
    (void)libdevice.emitNotFound(
        module.getLoc(),
        "The kernel calls math functions, which come from libdevice. " +
            cuda::getToolkitHint().str());
    return failure();
  }

  // One LLVM module per kernel, on parallel threads (PerKernelPTX.h); the
  // optimized LLVM IR (--emit=llvm) is printed from the whole module.
  auto gpuModules = module.getOps<gpu::GPUModuleOp>();
  if (!deviceIR && llvm::hasSingleElement(gpuModules)) {
    auto ptx = cuda::generatePerKernelPTX(*gpuModules.begin(), toolkitRoot,
                                          options.remarks, timing);
    if (failed(ptx))
      return failure();
    if (*ptx)
      return std::move(**ptx);
  }

  std::optional<SymbolTable> table;
  auto lazyTable = [&]() -> SymbolTable * {
    if (!table)
      table.emplace(module);
    return &*table;
  };
  auto onOptimizedIR = [&](llvm::Module &m) {
    if (!deviceIR)
      return;
    llvm::raw_string_ostream os(*deviceIR);
    m.print(os, nullptr);
  };
  gpu::TargetOptions targetOptions(
      toolkitRoot, /*librariesToLink=*/{}, /*cmdOptions=*/"",
      /*elfSection=*/"", gpu::CompilationTarget::Assembly, lazyTable,
      /*initialLlvmIRCallback=*/{}, /*linkedLlvmIRCallback=*/{},
      onOptimizedIR);
  if (failed(gpu::transformGpuModulesToBinaries(module, nullptr,
                                                targetOptions)))
    return failure();
  return binaryObject(module);
}

/// ptxas assembling one PTX module in the background (see generate: the host
/// wrapper is built meanwhile). ptxas compiles the module's kernels (the
/// mma.sync kernel and the sm_90a variants) on up to one thread each
/// (--split-compile: the same SASS; on the two-core build host it does not
/// shorten ptxas, docs/performance.md). The count is the number of kernels
/// whatever the machine or tilec --jobs: ptxas lays the cubin out
/// differently for each thread count, and the bundle must not depend on
/// where it was compiled.
class PtxasRun {
public:
  PtxasRun(Location loc, std::string program, StringRef ptx,
           const CompileOptions &options)
      : loc(loc), program(std::move(program)), chip(options.chip),
        optLevel(std::to_string(std::min(options.optLevel, 3u))) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("tile-kernel", "ptx", fd,
                                           ptxPath) ||
        llvm::sys::fs::createTemporaryFile("tile-kernel", "cubin",
                                           cubinPath)) {
      createError = true;
      return;
    }
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << ptx;
    }
    unsigned kernels = 0;
    for (size_t at = ptx.find(".entry "); at != StringRef::npos;
         at = ptx.find(".entry ", at + 1))
      ++kernels;
    if (kernels > 1)
      splitCompile = std::to_string(kernels);
    start();
  }
  ~PtxasRun() {
    tool.reset(); // waits for ptxas before its files go
    if (!ptxPath.empty())
      llvm::sys::fs::remove(ptxPath);
    if (!cubinPath.empty())
      llvm::sys::fs::remove(cubinPath);
  }

  /// Waits for ptxas and returns the cubin.
  FailureOr<std::string> finish() {
    if (createError)
      return emitError(loc) << "cannot create a temporary file", failure();
    std::string log;
    int rc = tool->wait(log);
    // A ptxas older than --split-compile (CUDA < 12.x) gets the plain run.
    if (rc != 0 && !splitCompile.empty() &&
        StringRef(log).contains("split-compile")) {
      splitCompile.clear();
      start();
      log.clear();
      rc = tool->wait(log);
    }
    if (rc != 0)
      return emitError(loc) << "ptxas (" << program
                            << ") failed with exit code " << rc << " for "
                            << chip << ":\n"
                            << StringRef(log).trim(),
             failure();
    auto buffer = llvm::MemoryBuffer::getFile(cubinPath);
    if (!buffer)
      return emitError(loc) << "cannot read the cubin ptxas wrote", failure();
    return (*buffer)->getBuffer().str();
  }

private:
  void start() {
    // The arguments MLIR's NVVM serializer passes for format=bin.
    SmallVector<StringRef> args = {program,   "-arch",       chip,
                                   ptxPath,   "-o",          cubinPath,
                                   "--opt-level", optLevel};
    if (!splitCompile.empty())
      args.append({"--split-compile", splitCompile});
    tool.reset(); // a previous run is waited for first
    tool = std::make_unique<BackgroundTool>(program, args);
  }

  Location loc;
  std::string program, chip, optLevel, splitCompile;
  SmallString<128> ptxPath, cubinPath;
  bool createError = false;
  std::unique_ptr<BackgroundTool> tool;
};

FailureOr<std::unique_ptr<PtxasRun>>
CUDATarget::startAssembling(Location loc, StringRef ptx,
                            const CompileOptions &options) const {
  ToolSearch ptxas = cuda::findPtxas(options.toolkitPath);
  if (!ptxas.found()) {
    (void)ptxas.emitNotFound(loc, "ptxas assembles the cubin (--emit=ptx "
                                  "needs none). " +
                                      cuda::getToolkitHint().str());
    return failure();
  }
  return std::make_unique<PtxasRun>(loc, ptxas.getPath(), ptx, options);
}

LogicalResult
CUDATarget::buildNativeSharedObject(ModuleOp module,
                                    const CompileOptions &options,
                                    std::string &so) const {
  Location loc = module.getLoc();
  auto md = getAttachedMetadata(module);
  if (failed(md))
    return failure();
  OwningOpRef<ModuleOp> host = ModuleOp::create(loc);
  if (failed(buildNativeWrapper(*host, *md, kDLCUDA)) ||
      failed(addMetadataHashGlobal(*host, md->name,
                                   md->toJSONString(/*pretty=*/true))))
    return failure();
  auto tm = HostTargetMachine::create(loc, "host", "", options.optLevel);
  if (failed(tm))
    return failure();
  std::string object;
  {
    TimingScope timing = nestTiming(options, "host codegen");
    if (failed(
            tm->compile(*host, md->name, options.optLevel, nullptr, &object)))
      return failure();
  }
  TimingScope timing = nestTiming(options, "link");
  return linkSharedObject(loc, object, so);
}

LogicalResult CUDATarget::generate(ModuleOp module,
                                   const CompileOptions &options,
                                   TargetOutput &out) const {
  Location loc = module.getLoc();
  StringRef emit = options.emit;
  if (emit == "cuda")
    return success(); // generateFromUnlowered writes it
  // The metadata hash in every device module: the runtime reads it with
  // cuModuleGetGlobal and compares it with the bundle's metadata.
  auto md = getAttachedMetadata(module);
  if (failed(md))
    return failure();
  std::string metadataJSON = md->toJSONString(/*pretty=*/true);
  WalkResult hashed = module.walk([&](gpu::GPUModuleOp gpuModule) {
    return failed(addMetadataHashGlobal(gpuModule, md->name, metadataJSON,
                                        /*addressSpace=*/1))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (hashed.wasInterrupted())
    return failure();
  // The host wrapper only needs the metadata: it is built on a second
  // thread while LLVM generates the PTX (and ptxas assembles it).
  bool native = emit == kEmitBundle &&
                llvm::is_contained(options.backends, "native");
  std::string so;
  std::future<LogicalResult> nativeBuilt;
  if (native && module.getContext()->isMultithreadingEnabled()) {
    // The host target is registered here: LLVM's target registry is not
    // safe to grow while the PTX serializer looks targets up.
    if (failed(HostTargetMachine::create(loc, "host", "", options.optLevel)))
      return failure();
    nativeBuilt = std::async(std::launch::async, [&] {
      TimingScope timing = nestTiming(options, "native wrapper (background)");
      return buildNativeSharedObject(module, options, so);
    });
  }
  auto waitNative = [&]() -> LogicalResult {
    if (nativeBuilt.valid())
      return nativeBuilt.get();
    if (!native)
      return success();
    TimingScope timing = nestTiming(options, "native wrapper");
    return buildNativeSharedObject(module, options, so);
  };
  TimingScope serializeTiming = nestTiming(options, "LLVM IR -> PTX");
  auto ptx = serializeToPTX(module, options, serializeTiming,
                            emit == "llvm" ? &out.artifact : nullptr);
  serializeTiming.stop();
  if (failed(ptx))
    return failure();
  if (emit == "llvm")
    return success();
  if (emit == "ptx") {
    out.artifact = std::move(*ptx);
    return success();
  }
  // ptxas runs in the background while the host wrapper is finished.
  TimingScope ptxasTiming = nestTiming(options, "ptxas (background)");
  auto ptxas = startAssembling(loc, *ptx, options);
  if (failed(ptxas) || failed(waitNative()))
    return failure();
  auto cubin = (*ptxas)->finish();
  ptxasTiming.stop();
  if (failed(cubin))
    return failure();
  if (emit == "cubin" || emit == "obj") {
    out.artifact = std::move(*cubin);
    return success();
  }
  out.sections.push_back({"cubin", std::move(*cubin)});
  out.sections.push_back({"ptx", std::move(*ptx)});
  if (native)
    out.sections.push_back({"native.so", std::move(so)});
  return success();
}

/// The kernel description parts both lowerings must agree on (the source has
/// no sm_90a variants): the CUDA C++ launches with the bundle's metadata,
/// except for the dynamic shared memory, which may differ either way: the
/// sm_90a generic kernel aligns its wgmma operands (the source may need
/// less; launching with more is safe), and the source's mma.sync layouts
/// may need a cross-warp reduction scratch the wgmma layouts do not (it
/// then says so in the source, kNvrtcSharedBytesSuffix).
bool sameLaunch(const KernelMetadata &source, const KernelMetadata &lowered) {
  KernelMetadata x = source, y = lowered;
  x.variants.clear();
  y.variants.clear();
  x.sharedBytes = y.sharedBytes;
  return x.toJSONString() == y.toJSONString();
}

LogicalResult CUDATarget::generateFromUnlowered(ModuleOp unlowered,
                                                ModuleOp lowered,
                                                const CompileOptions &options,
                                                TargetOutput &out) const {
  auto pm = PassManager::on<ModuleOp>(unlowered.getContext());
  TileToCUDASourcePipelineOptions pipeline;
  pipeline.chip = options.chip;
  pipeline.features = options.features;
  buildTileToCUDASourcePipeline(pm, pipeline);
  {
    TimingScope timing = nestTiming(options, "tile-to-cuda-source");
    pm.enableTiming(timing);
    if (failed(runLoweringPipeline(pm, unlowered, options,
                                   "the CUDA C++ lowering")))
      return failure();
  }
  auto sourceMd = getAttachedMetadata(unlowered);
  auto md = getAttachedMetadata(lowered);
  if (failed(sourceMd) || failed(md))
    return failure();
  if (!sameLaunch(*sourceMd, *md))
    return emitError(unlowered.getLoc())
           << "internal error: the CUDA C++ lowering describes the kernel "
              "differently from the cubin lowering:\n"
           << sourceMd->toJSONString(true) << "\nvs\n" << md->toJSONString(true);
  // The bundle's metadata hash, as in the cubin (docs/bundle.md, "Trust
  // model"); --emit=cuda prints the same text as the bundle's section.
  const SourceTarget *cuda = lookupSourceTarget("cuda");
  std::string hash = cuda->deviceConstant(
      md->name + ::tile::bundle::kMetadataHashSuffix,
      ::tile::bundle::metadataHash(md->toJSONString(/*pretty=*/true)));
  // More dynamic shared memory than the metadata's (the cubin's) value: the
  // nvrtc backend reads this and launches the source's kernel with it.
  if (sourceMd->sharedBytes > md->sharedBytes)
    hash += "\n" + cuda->deviceConstant(
                       md->name + ::tile::bundle::kNvrtcSharedBytesSuffix,
                       uint64_t(sourceMd->sharedBytes));
  std::string source;
  TimingScope printTiming = nestTiming(options, "print CUDA C++");
  if (failed(printCUDASource(unlowered, hash, source)))
    return failure();
  if (options.emit == "cuda")
    out.artifact = std::move(source);
  else
    out.sections.push_back({"cuda", std::move(source)});
  return success();
}

} // namespace

void mlir::tile::registerCUDATarget() {
  registerTarget(std::make_unique<CUDATarget>());
}
