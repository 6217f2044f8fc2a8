//===- Compile.cpp - compile a tile kernel into a bundle ------------------===//
//
// The one compile sequence every target shares (tile/Target/TargetBackend.h):
// everything target-specific is behind the TargetBackend found by name.
//
//===----------------------------------------------------------------------===//

#include "tile/Compiler/Compile.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/PassPipeline.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Target/AllTargets.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <future>

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The kernel function of `module` (exactly one `tile.kernel`).
FailureOr<func::FuncOp> findKernel(ModuleOp module) {
  func::FuncOp kernel;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->hasAttr(TileDialect::kKernelAttrName))
      continue;
    if (kernel)
      return module.emitError("tilec compiles one kernel per file; found '")
                 << kernel.getSymName() << "' and '" << func.getSymName()
                 << "'",
             failure();
    kernel = func;
  }
  if (!kernel)
    return module.emitError("no tile.kernel function in the input"), failure();
  return kernel;
}

LogicalResult markOutputs(func::FuncOp kernel, ArrayRef<int64_t> outIdx) {
  const int64_t n = kernel.getNumArguments();
  for (int64_t given : outIdx) {
    int64_t i = given < 0 ? given + n : given;
    if (i < 0 || i >= n)
      return kernel.emitError("--out-idx ")
             << given << " is out of range: the kernel has " << n
             << " parameters";
    if (!isa<MemRefType>(kernel.getArgumentTypes()[i]))
      return kernel.emitError("--out-idx ")
             << i << " names a scalar parameter; outputs must be tensors";
    kernel.setArgAttr(i, TileDialect::kOutputAttrName,
                      UnitAttr::get(kernel.getContext()));
  }
  return success();
}

bool isDriverEmit(StringRef emit) {
  return emit == kEmitBundle || emit == kEmitMetadata || emit == kEmitMLIR;
}

/// The target-independent checks: the target exists, the emit kind and the
/// backends are the target's; then the target's own (chip, features).
FailureOr<const TargetBackend *> validate(CompileOptions &options,
                                          Location loc) {
  registerAllTargets();
  const TargetBackend *target = lookupTarget(options.target);
  if (!target)
    return emitError(loc) << "unknown target '" << options.target
                          << "' (this tilec supports: "
                          << getRegisteredTargetNames() << ")",
           failure();
  if (!isDriverEmit(options.emit) && !target->findEmitKind(options.emit)) {
    std::vector<std::string> kinds = {kEmitBundle.str(), kEmitMetadata.str(),
                                      kEmitMLIR.str()};
    for (const EmitKind &k : target->getEmitKinds())
      kinds.push_back(k.name);
    return emitError(loc) << "target '" << target->getName()
                          << "' cannot emit '" << options.emit
                          << "' (it emits: " << llvm::join(kinds, ", ") << ")",
           failure();
  }
  ArrayRef<StringRef> supported = target->getExecutionBackends();
  for (const std::string &backend : options.backends)
    if (!llvm::is_contained(supported, backend))
      return emitError(loc) << "unknown backend '" << backend
                            << "' for target '" << target->getName()
                            << "' (tilec generates code for: "
                            << llvm::join(supported, ", ") << ")",
             failure();
  if (options.backends.empty())
    for (StringRef b : supported)
      options.backends.push_back(b.str());
  if (failed(target->validate(options, loc)))
    return failure();
  return target;
}

/// Lowers `module` with --pass-pipeline when given, else with the target's.
LogicalResult lower(ModuleOp module, const TargetBackend &target,
                    const CompileOptions &options) {
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  TimingScope timing = nestTiming(options, "lower");
  pm.enableTiming(timing);
  if (!options.passPipeline.empty()) {
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipelineInto(options.passPipeline, pm, os)))
      return emitError(module.getLoc())
             << "invalid --pass-pipeline: " << StringRef(error).trim();
  } else {
    target.buildPipeline(pm, options);
  }
  return runLoweringPipeline(pm, module, options, "the lowering");
}

} // namespace

std::string mlir::tile::defaultOutputPath(StringRef input,
                                          const CompileOptions &options) {
  registerAllTargets();
  StringRef extension;
  if (options.emit == kEmitBundle) {
    extension = "tileb";
  } else if (const TargetBackend *t = lookupTarget(options.target)) {
    if (const EmitKind *kind = t->findEmitKind(options.emit))
      if (kind->binary)
        extension = kind->extension;
  }
  if (extension.empty())
    return "-";
  SmallString<128> path(input == "-" ? StringRef("kernel") : input);
  llvm::sys::path::replace_extension(path, extension);
  return std::string(path);
}

LogicalResult mlir::tile::compileKernel(MLIRContext &context,
                                        const CompileOptions &requested,
                                        std::string &output) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  CompileOptions options = requested;
  // --mlir-timing: one tree of the driver's phases, the passes of the
  // lowering and the target's own phases (ptxas, the host link, ...).
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope rootTiming = timingManager.getRootScope();
  if (!options.timing)
    options.timing = &rootTiming;
  FailureOr<const TargetBackend *> target;
  {
    // Option errors have no place in the source: "error: <message>".
    ScopedDiagnosticHandler optionErrors(&context, [](Diagnostic &diag) {
      llvm::errs() << "error: " << diag << "\n";
      return success();
    });
    target = validate(options, UnknownLoc::get(&context));
  }
  if (failed(target))
    return failure();

  TimingScope parseTiming = nestTiming(options, "parse");
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  if (!options.source.empty()) {
    buffer = llvm::MemoryBuffer::getMemBufferCopy(options.source, "<source>");
  } else {
    std::string error;
    buffer = openInputFile(options.inputPath, &error);
    if (!buffer) {
      llvm::errs() << "error: cannot read '" << options.inputPath
                   << "': " << error << "\n";
      return failure();
    }
  }
  std::string source = buffer->getBuffer().str();
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return failure();
  if (failed(verify(*module)))
    return failure();
  auto kernel = findKernel(*module);
  if (failed(kernel) || failed(markOutputs(*kernel, options.outIdx)))
    return failure();
  parseTiming.stop();

  if (options.emit == kEmitMetadata) {
    auto md = extractKernelMetadata(*kernel);
    if (failed(md))
      return failure();
    md->targetKind = options.target;
    md->chip = options.chip;
    md->features = options.features;
    output = md->toJSONString(/*pretty=*/true) + "\n";
    return success();
  }

  // A target that lowers the kernel a second way (nvrtc's CUDA C++) gets
  // the module as it was before lowering.
  OwningOpRef<ModuleOp> unlowered;
  if ((*target)->needsUnloweredModule(options))
    unlowered = module->clone();
  if (failed(lower(*module, **target, options)))
    return failure();
  if (options.emit == kEmitMLIR) {
    llvm::raw_string_ostream os(output);
    module->print(os);
    return success();
  }

  // The second lowering (nvrtc's CUDA C++) works on its own copy of the
  // module and only reads the lowered module's attributes: it runs on a
  // second thread while generate() runs (LLVM code generation, ptxas).
  TargetOutput generated, fromUnlowered;
  auto generateSecond = [&, target = *target]() -> LogicalResult {
    TimingScope timing = nestTiming(options, "generate from unlowered");
    CompileOptions timed = options;
    timed.timing = &timing;
    return target->generateFromUnlowered(*unlowered, *module, timed,
                                         fromUnlowered);
  };
  std::future<LogicalResult> second;
  if (unlowered && context.isMultithreadingEnabled())
    second = std::async(std::launch::async, generateSecond);
  LogicalResult firstResult = success();
  {
    TimingScope timing = nestTiming(options, "generate");
    CompileOptions timed = options;
    timed.timing = &timing;
    firstResult = (*target)->generate(*module, timed, generated);
  }
  LogicalResult secondResult = success();
  if (second.valid())
    secondResult = second.get();
  else if (unlowered && succeeded(firstResult))
    secondResult = generateSecond();
  if (failed(firstResult) || failed(secondResult))
    return failure();
  if (!fromUnlowered.artifact.empty())
    generated.artifact = std::move(fromUnlowered.artifact);
  for (auto &section : fromUnlowered.sections)
    generated.sections.push_back(std::move(section));
  if (options.emit != kEmitBundle) {
    output = std::move(generated.artifact);
    return success();
  }
  auto md = getAttachedMetadata(*module);
  if (failed(md))
    return failure();
  TimingScope bundleTiming = nestTiming(options, "write bundle");
  std::vector<::tile::bundle::Section> sections;
  sections.push_back({"metadata", md->toJSONString(/*pretty=*/true)});
  for (auto &section : generated.sections)
    sections.push_back(std::move(section));
  sections.push_back({"mlir", std::move(source)});
  std::string error;
  if (!::tile::bundle::write(sections, output, error))
    return emitError(module->getLoc()) << "cannot write the bundle: " << error;
  return success();
}
