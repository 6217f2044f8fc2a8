//===- CPUTarget.cpp - the host CPU target --------------------------------===//

#include "tile/Target/MetadataHash.h"
#include "tile/Target/CPU/CPUTarget.h"

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/Target/HostCodegen.h"
#include "tile/Target/TargetBackend.h"
#include "tile/Target/Toolchain.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

class CPUTarget final : public TargetBackend {
public:
  StringRef getName() const override { return "cpu"; }
  StringRef getDescription() const override {
    return "the host CPU: a shared object run by the runtime's thread pool";
  }
  std::string getChipHelp() const override {
    return "host (default: the machine tilec runs on, with its features) or "
           "an LLVM CPU name of the host architecture (x86-64-v3, znver4, "
           "neoverse-v2, ...)";
  }
  ArrayRef<StringRef> getExecutionBackends() const override {
    static const StringRef backends[] = {"ffi", "native"};
    return backends;
  }
  ArrayRef<EmitKind> getEmitKinds() const override {
    static const EmitKind kinds[] = {
        {"llvm", "optimized LLVM IR of the kernel's host code", false, "ll"},
        {"obj", "the kernel's host object file (ELF), before linking", true,
         "o"}};
    return kinds;
  }

  std::string describeToolchain(const CompileOptions &) const override {
    return findLinker().describe() + "\n";
  }

  LogicalResult validate(CompileOptions &options,
                         Location loc) const override {
    return HostTargetMachine::validate(loc, options.chip, options.features);
  }

  void buildPipeline(OpPassManager &pm,
                     const CompileOptions &options) const override {
    TileToCPUPipelineOptions pipeline;
    pipeline.chip = HostTargetMachine::resolveCPU(options.chip);
    pipeline.nativeWrapper = llvm::is_contained(options.backends, "native");
    buildTileToCPUPipeline(pm, pipeline);
  }

  LogicalResult generate(ModuleOp module, const CompileOptions &options,
                         TargetOutput &out) const override {
    Location loc = module.getLoc();
    auto tm = HostTargetMachine::create(loc, options.chip, options.features,
                                        options.optLevel);
    if (failed(tm))
      return failure();
    auto md = getAttachedMetadata(module);
    if (failed(md))
      return failure();
    // The runtime compares this with the bundle's metadata (docs/bundle.md,
    // "Trust model"); the driver writes the same JSON.
    if (failed(addMetadataHashGlobal(module, md->name,
                                     md->toJSONString(/*pretty=*/true))))
      return failure();
    if (options.emit == "llvm")
      return tm->compile(module, md->name, options.optLevel, &out.artifact,
                         nullptr);
    bool wantBundle = options.emit == kEmitBundle;
    std::string llvmText, object;
    if (failed(tm->compile(module, md->name, options.optLevel,
                           wantBundle ? &llvmText : nullptr, &object)))
      return failure();
    if (options.emit == "obj") {
      out.artifact = std::move(object);
      return success();
    }
    std::string sharedObject;
    if (failed(linkSharedObject(loc, object, sharedObject)))
      return failure();
    out.sections.push_back({"host.so", std::move(sharedObject)});
    out.sections.push_back({"llvm", std::move(llvmText)});
    return success();
  }
};

} // namespace

void mlir::tile::registerCPUTarget() {
  registerTarget(std::make_unique<CPUTarget>());
}
