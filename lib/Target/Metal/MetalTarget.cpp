//===- MetalTarget.cpp - the Apple GPU target -----------------------------===//
//
// The pipeline lowers all the way to EmitC (tile-to-metal-source); code
// generation prints it as MSL. Nothing runs on this side but tilec: the
// source is compiled by Metal on the Mac at load time, through
// torch.mps.compile_shader (the Python package's metal-torch backend), so
// there is no toolchain to find and no host code.
//
//===----------------------------------------------------------------------===//

#include "tile/Target/Metal/MetalTarget.h"

#include "tile/Conversion/TileToMetalSource.h"
#include "tile/Conversion/TileToNVVM.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/Target/TargetBackend.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

constexpr StringLiteral kDefaultChip = "apple-m1";
/// Apple silicon generations (GPU families apple7 ... apple9+). The MSL is
/// the same for all: simdgroup_matrix in float (every family), 32-lane
/// SIMD-groups, 32 KiB threadgroup memory.
constexpr StringLiteral kChips[] = {"apple-m1", "apple-m2", "apple-m3",
                                    "apple-m4"};

class MetalTarget final : public TargetBackend {
public:
  StringRef getName() const override { return "metal"; }
  StringRef getDescription() const override {
    return "Apple GPUs: Metal Shading Language, run through torch.mps "
           "(the Python package's metal-torch backend)";
  }
  std::string getChipHelp() const override {
    return "apple-m1 (default), apple-m2, apple-m3, apple-m4";
  }
  ArrayRef<StringRef> getExecutionBackends() const override {
    static const StringRef backends[] = {"metal-torch"};
    return backends;
  }
  ArrayRef<EmitKind> getEmitKinds() const override {
    static const EmitKind kinds[] = {
        {"msl",
         "Metal Shading Language of the kernel (EmitC, device library "
         "prepended, `kernel void` entry): the metal-torch backend's `msl` "
         "section",
         false, "metal"}};
    return kinds;
  }

  void registerDialects(DialectRegistry &registry) const override {
    registerTileNVVMDialects(registry);
    registry.insert<emitc::EmitCDialect>();
  }

  LogicalResult validate(CompileOptions &options,
                         Location loc) const override {
    if (options.chip.empty())
      options.chip = kDefaultChip.str();
    if (!llvm::is_contained(kChips, options.chip))
      return emitError(loc)
             << "unknown Metal chip '" << options.chip
             << "' (supported: " << llvm::join(std::begin(kChips), std::end(kChips), ", ") << ")";
    if (!options.features.empty())
      return emitError(loc) << "the metal target has no target features "
                               "(got '"
                            << options.features << "')";
    return success();
  }

  void buildPipeline(OpPassManager &pm,
                     const CompileOptions &options) const override {
    TileToMetalSourcePipelineOptions pipeline;
    pipeline.chip = options.chip;
    pipeline.features = options.features;
    pipeline.remarks = options.remarks;
    buildTileToMetalSourcePipeline(pm, pipeline);
  }

  LogicalResult generate(ModuleOp module, const CompileOptions &options,
                         TargetOutput &out) const override {
    auto md = getAttachedMetadata(module);
    if (failed(md))
      return failure();
    std::string source;
    if (failed(printMetalSource(module, *md, source)))
      return failure();
    if (options.emit == "msl")
      out.artifact = std::move(source);
    else
      out.sections.push_back({"msl", std::move(source)});
    return success();
  }
};

} // namespace

void mlir::tile::registerMetalTarget() {
  registerTarget(std::make_unique<MetalTarget>());
}
