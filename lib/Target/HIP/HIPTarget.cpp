//===- HIPTarget.cpp - the AMD GPU target ---------------------------------===//
//
// The pipeline (tile-to-rocdl) stops before serialization. Code generation
// serializes the gpu.module once, to AMDGPU assembly (MLIR's ROCDL target:
// LLVM IR, the ROCm device libraries linked only when the kernel calls
// them, AMDGPU codegen), assembles it with LLVM's AMDGPU MC layer and links
// the object into an hsaco with ld.lld (the linker tile finds for host
// shared objects). The resource usage of every kernel is read back from
// the hsaco's AMDHSA metadata note. The host side is the generic native
// wrapper for ROCm tensors, compiled for the host CPU.
//
//===----------------------------------------------------------------------===//

#include "tile/Target/HIP/HIPTarget.h"

#include "tile/Conversion/HostWrapperBuilder.h"
#include "tile/Conversion/TileToROCDL.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/Target/HIP/HIPToolkit.h"
#include "tile/Target/HostCodegen.h"
#include "tile/Target/MetadataHash.h"
#include "tile/Target/TargetBackend.h"
#include "tile/Target/Toolchain.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;
using namespace mlir::tile;

namespace {

constexpr StringLiteral kTriple = "amdgcn-amd-amdhsa";
constexpr StringLiteral kDefaultChip = "gfx942";
/// Wave64 CDNA chips with the MFMA 16x16x16 f16/bf16 instructions the gemm
/// uses (gfx90a: MI200, gfx942: MI300).
constexpr StringLiteral kChips[] = {"gfx90a", "gfx942"};

/// LLVM's AMDGPU subtarget table, or nullptr when this LLVM was built
/// without AMDGPU.
const llvm::MCSubtargetInfo *amdgpuSubtarget() {
  static std::unique_ptr<llvm::MCSubtargetInfo> sti;
  static std::once_flag once;
  std::call_once(once, [] {
    ROCDL::SerializeGPUModuleBase::init();
    std::string error;
    llvm::Triple triple(kTriple);
    if (const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error))
      sti.reset(t->createMCSubtargetInfo(triple, "gfx942", ""));
  });
  return sti.get();
}

/// The ocml/ockl functions the kernel calls (they need the device libs).
SmallVector<StringRef> deviceLibCalls(ModuleOp module) {
  SmallVector<StringRef> calls;
  module.walk([&](LLVM::LLVMFuncOp fn) {
    if (fn.isExternal() && (fn.getName().starts_with("__ocml_") ||
                            fn.getName().starts_with("__ockl_")))
      calls.push_back(fn.getName());
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

/// One integer of a kernel's AMDHSA metadata (".vgpr_count", ...), or -1.
int64_t noteInt(const NamedAttrList &attrs, StringRef key) {
  for (StringRef k : {key, key.drop_front()}) // with and without the dot
    if (auto a = dyn_cast_or_null<IntegerAttr>(attrs.get(k)))
      return a.getInt();
  return -1;
}

class HIPTarget final : public TargetBackend {
public:
  StringRef getName() const override { return "hip"; }
  StringRef getDescription() const override {
    return "AMD GPUs: hsaco (gfx90a, gfx942; wave64, MFMA), run through the "
           "HIP runtime";
  }
  std::string getChipHelp() const override {
    return "gfx942 (default; MI300), gfx90a (MI200)";
  }
  ArrayRef<StringRef> getExecutionBackends() const override {
    static const StringRef backends[] = {"ffi", "native"};
    return backends;
  }
  ArrayRef<EmitKind> getEmitKinds() const override {
    static const EmitKind kinds[] = {
        {"llvm",
         "optimized LLVM IR of the device code (AMDGPU, device libraries "
         "linked when called)",
         false, "ll"},
        {"asm", "AMDGPU assembly of the device code", false, "s"},
        {"hsaco", "the device code object (ELF, linked by ld.lld) for --chip",
         true, "hsaco"},
        {"obj", "the device object: the hsaco (same as --emit=hsaco)", true,
         "hsaco"}};
    return kinds;
  }

  std::string describeToolchain(const CompileOptions &options) const override {
    return hip::findDeviceLibs(options.toolkitPath).describe() + "\n" +
           findLinker().describe() + "\n";
  }

  void registerDialects(DialectRegistry &registry) const override {
    registerTileROCDLDialects(registry);
  }

  LogicalResult validate(CompileOptions &options,
                         Location loc) const override {
    if (options.chip.empty())
      options.chip = kDefaultChip.str();
    const llvm::MCSubtargetInfo *sti = amdgpuSubtarget();
    if (!sti)
      return emitError(loc) << "this LLVM was built without the AMDGPU "
                               "backend: the hip target is unavailable";
    std::string chips = llvm::join(ArrayRef<StringLiteral>(kChips), ", ");
    if (!llvm::is_contained(kChips, options.chip))
      return emitError(loc)
             << "chip '" << options.chip
             << "' is not supported by the hip target: tile's AMD lowering "
                "needs a wave64 CDNA GPU with MFMA 16x16x16 f16/bf16; "
                "supported: "
             << chips;
    if (!sti->isCPUStringValid(options.chip))
      return emitError(loc) << "LLVM's AMDGPU backend does not know chip '"
                            << options.chip << "' (supported: " << chips
                            << ")";
    SmallVector<StringRef> features;
    StringRef(options.features).split(features, ',', -1, false);
    for (StringRef f : features) {
      StringRef name = f.trim();
      if (!name.consume_front("+") && !name.consume_front("-"))
        return emitError(loc) << "target feature '" << f
                              << "' must start with '+' or '-' (e.g. "
                                 "+sramecc, -xnack)";
      if (!llvm::any_of(sti->getAllProcessorFeatures(),
                        [&](const llvm::SubtargetFeatureKV &kv) {
                          return name == kv.Key;
                        }))
        return emitError(loc) << "unknown AMDGPU feature '" << f
                              << "' (e.g. +sramecc, -xnack)";
      if (name == "wavefrontsize32")
        return emitError(loc) << "target feature '" << f
                              << "': the hip target's lowering is wave64";
    }
    return success();
  }

  void buildPipeline(OpPassManager &pm,
                     const CompileOptions &options) const override {
    TileToROCDLPipelineOptions pipeline;
    pipeline.chip = options.chip;
    pipeline.features = options.features;
    pipeline.optLevel = std::min(options.optLevel, 3u);
    pipeline.remarks = options.remarks;
    buildTileToROCDLPipeline(pm, pipeline);
  }

  LogicalResult generate(ModuleOp module, const CompileOptions &options,
                         TargetOutput &out) const override;

private:
  FailureOr<std::string> serializeToAssembly(ModuleOp module,
                                             const CompileOptions &options,
                                             std::string *deviceIR) const;
  FailureOr<std::string> buildHsaco(Location loc, StringRef isa,
                                    const CompileOptions &options) const;
  LogicalResult buildNativeSharedObject(ModuleOp module,
                                        const CompileOptions &options,
                                        std::string &so) const;
};

FailureOr<std::string>
HIPTarget::serializeToAssembly(ModuleOp module, const CompileOptions &options,
                               std::string *deviceIR) const {
  // The device libraries are linked when found; only a kernel that calls
  // them needs them.
  ToolSearch libs = hip::findDeviceLibs(options.toolkitPath);
  std::string root;
  SmallVector<StringRef> calls = deviceLibCalls(module);
  if (libs.found())
    root = hip::getDeviceLibsRoot(libs.getPath());
  else if (libs.failedRequired() || !calls.empty())
    return libs.emitNotFound(
        module.getLoc(),
        (calls.empty() ? std::string("The ROCm device libraries are needed")
                       : "The kernel calls " + llvm::join(calls, ", ") +
                             ", which come from ROCm's ocml/ockl bitcode") +
            ". " + hip::getDeviceLibsHint().str());

  std::optional<SymbolTable> table;
  auto lazyTable = [&]() -> SymbolTable * {
    if (!table)
      table.emplace(module);
    return &*table;
  };
  // MLIR's ROCDL serializer does not pass the IR callbacks on: the
  // optimized, linked LLVM IR is its "offload" format (bitcode).
  gpu::TargetOptions targetOptions(
      root, /*librariesToLink=*/{}, /*cmdOptions=*/"", /*elfSection=*/"",
      deviceIR ? gpu::CompilationTarget::Offload
               : gpu::CompilationTarget::Assembly,
      lazyTable);
  if (failed(gpu::transformGpuModulesToBinaries(module, nullptr,
                                                targetOptions)))
    return failure();
  auto object = binaryObject(module);
  if (failed(object) || !deviceIR)
    return object;
  llvm::LLVMContext context;
  auto parsed = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(*object, "device.bc"), context);
  if (!parsed)
    return emitError(module.getLoc())
               << "cannot read the device bitcode: "
               << llvm::toString(parsed.takeError()),
           failure();
  llvm::raw_string_ostream os(*deviceIR);
  (*parsed)->print(os, nullptr);
  return std::string();
}

FailureOr<std::string> HIPTarget::buildHsaco(Location loc, StringRef isa,
                                             const CompileOptions &options) const {
  auto emitErr = [&]() { return emitError(loc); };
  FailureOr<SmallVector<char, 0>> object = ROCDL::assembleIsa(
      isa, kTriple, options.chip, options.features, emitErr);
  if (failed(object))
    return failure();
  // ld.lld -shared: the object's kernels become the code object's symbols.
  std::string hsaco;
  if (failed(linkSharedObject(loc, StringRef(object->data(), object->size()),
                              hsaco)))
    return failure();
  return hsaco;
}

LogicalResult
HIPTarget::buildNativeSharedObject(ModuleOp module,
                                   const CompileOptions &options,
                                   std::string &so) const {
  Location loc = module.getLoc();
  auto md = getAttachedMetadata(module);
  if (failed(md))
    return failure();
  OwningOpRef<ModuleOp> host = ModuleOp::create(loc);
  if (failed(buildNativeWrapper(*host, *md, kDLROCM)) ||
      failed(addMetadataHashGlobal(*host, md->name,
                                   md->toJSONString(/*pretty=*/true))))
    return failure();
  auto tm = HostTargetMachine::create(loc, "host", "", options.optLevel);
  if (failed(tm))
    return failure();
  std::string object;
  if (failed(tm->compile(*host, md->name, options.optLevel, nullptr, &object)))
    return failure();
  return linkSharedObject(loc, object, so);
}

/// The `hsaco.resources` section (docs/bundle.md): per kernel of the hsaco,
/// its registers, LDS and scratch from the AMDHSA metadata note.
FailureOr<std::string> resourceUsage(Location loc, StringRef hsaco) {
  Builder builder(loc.getContext());
  auto kernels = ROCDL::getAMDHSAKernelsELFMetadata(
      builder, ArrayRef<char>(hsaco.data(), hsaco.size()));
  if (!kernels)
    return emitError(loc) << "the hsaco has no AMDHSA kernel metadata note",
           failure();
  llvm::json::Array list;
  for (auto &[name, attrs] : *kernels) {
    list.push_back(llvm::json::Object{
        {"name", name.getValue()},
        {"vgprs", noteInt(attrs, ".vgpr_count")},
        {"agprs", noteInt(attrs, ".agpr_count")},
        {"sgprs", noteInt(attrs, ".sgpr_count")},
        {"lds_bytes", noteInt(attrs, ".group_segment_fixed_size")},
        {"scratch_bytes", noteInt(attrs, ".private_segment_fixed_size")},
        {"vgpr_spills", noteInt(attrs, ".vgpr_spill_count")},
        {"sgpr_spills", noteInt(attrs, ".sgpr_spill_count")},
        {"wavefront_size", noteInt(attrs, ".wavefront_size")},
        {"max_flat_workgroup_size",
         noteInt(attrs, ".max_flat_workgroup_size")}});
  }
  if (list.empty())
    return emitError(loc) << "the hsaco's metadata note lists no kernel",
           failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"kernels", std::move(list)}}))
     << "\n";
  return text;
}

LogicalResult HIPTarget::generate(ModuleOp module,
                                  const CompileOptions &options,
                                  TargetOutput &out) const {
  Location loc = module.getLoc();
  StringRef emit = options.emit;
  // The metadata hash in every device module: the runtime reads it with
  // hipModuleGetGlobal and compares it with the bundle's metadata.
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
  auto isa = serializeToAssembly(module, options,
                                 emit == "llvm" ? &out.artifact : nullptr);
  if (failed(isa))
    return failure();
  if (emit == "llvm")
    return success();
  if (emit == "asm") {
    out.artifact = std::move(*isa);
    return success();
  }
  auto hsaco = buildHsaco(loc, *isa, options);
  if (failed(hsaco))
    return failure();
  if (emit == "hsaco" || emit == "obj") {
    out.artifact = std::move(*hsaco);
    return success();
  }
  auto resources = resourceUsage(loc, *hsaco);
  if (failed(resources))
    return failure();
  out.sections.push_back({"hsaco", std::move(*hsaco)});
  out.sections.push_back({"hsaco.resources", std::move(*resources)});
  if (llvm::is_contained(options.backends, "native")) {
    std::string so;
    if (failed(buildNativeSharedObject(module, options, so)))
      return failure();
    out.sections.push_back({"native.so", std::move(so)});
  }
  return success();
}

} // namespace

void mlir::tile::registerHIPTarget() {
  registerTarget(std::make_unique<HIPTarget>());
}
