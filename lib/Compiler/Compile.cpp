//===- Compile.cpp - compile a tile kernel into a bundle ------------------===//

#include "tile/Compiler/Compile.h"
#include "tile/Compiler/CompileCUDA.h"
#include "tile/Compiler/MetadataHash.h"

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/tile_targets.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::tile;

StringRef mlir::tile::getTargetName(Target target) {
  switch (target) {
  case Target::CPU:
    return "cpu";
  case Target::CUDA:
    return "cuda";
  case Target::HIP:
    return "hip";
  case Target::Metal:
    return "metal";
  }
  llvm_unreachable("bad target");
}

std::string mlir::tile::defaultOutputPath(StringRef input, Emit emit) {
  SmallString<128> path(input == "-" ? StringRef("kernel") : input);
  llvm::sys::path::replace_extension(path, emit == Emit::Object ? "o" : "tileb");
  return std::string(path);
}

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

} // namespace

std::unique_ptr<llvm::TargetMachine>
mlir::tile::createHostTargetMachine(Location loc, StringRef chip, StringRef features,
                        unsigned optLevel, std::string &cpuName) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << "no LLVM target for the host: " << error;
    return nullptr;
  }
  std::string featureString = features.str();
  if (chip.empty() || chip == "host" || chip == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    if (featureString.empty()) {
      llvm::SubtargetFeatures hostFeatures;
      for (auto &f : llvm::sys::getHostCPUFeatures())
        hostFeatures.AddFeature(f.first(), f.second);
      featureString = hostFeatures.getString();
    }
  } else {
    cpuName = chip.str();
  }
  llvm::TargetOptions options;
  auto level = optLevel == 0   ? llvm::CodeGenOptLevel::None
               : optLevel == 1 ? llvm::CodeGenOptLevel::Less
               : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                               : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpuName, featureString, options, llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!tm)
    emitError(loc) << "cannot create a target machine for CPU '" << cpuName
                   << "'";
  return tm;
}

/// Links `object` into a shared object with ld.lld. Undefined symbols (libm
/// functions) are left for the dynamic loader: the runtime process has libm.
LogicalResult mlir::tile::linkSharedObject(Location loc, StringRef object,
                                           std::string &sharedObject) {
  std::string lld;
  for (StringRef name : {"ld.lld-22", "ld.lld"}) {
    if (auto found = llvm::sys::findProgramByName(name)) {
      lld = *found;
      break;
    }
  }
  if (lld.empty()) {
    if (auto found = llvm::sys::findProgramByName(
            "ld.lld", {"/usr/lib/llvm-22/bin"}))
      lld = *found;
  }
  if (lld.empty())
    return emitError(loc) << "ld.lld not found (install lld-22): it links the "
                             "CPU kernel's shared object";
  SmallString<128> objPath, soPath;
  int objFd;
  if (llvm::sys::fs::createTemporaryFile("tile-kernel", "o", objFd, objPath))
    return emitError(loc) << "cannot create a temporary file";
  {
    llvm::raw_fd_ostream os(objFd, /*shouldClose=*/true);
    os << object;
  }
  llvm::FileRemover objRemover(objPath);
  if (llvm::sys::fs::createTemporaryFile("tile-kernel", "so", soPath))
    return emitError(loc) << "cannot create a temporary file";
  llvm::FileRemover soRemover(soPath);
  std::string errorMessage;
  SmallVector<StringRef> args = {lld, "-shared", "--gc-sections", "-O2",
                                 "-o", soPath, objPath};
  int rc = llvm::sys::ExecuteAndWait(lld, args, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc != 0)
    return emitError(loc) << "linking the kernel's shared object failed ("
                          << lld << " exited with " << rc << ") "
                          << errorMessage;
  auto buffer = llvm::MemoryBuffer::getFile(soPath);
  if (!buffer)
    return emitError(loc) << "cannot read the linked shared object";
  sharedObject = (*buffer)->getBuffer().str();
  return success();
}

LogicalResult mlir::tile::runLowering(
    ModuleOp module, const CompileOptions &options,
    function_ref<void(OpPassManager &)> buildDefault, std::string &output,
    bool &printed) {
  printed = false;
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  if (!options.passPipeline.empty()) {
    if (failed(parsePassPipeline(options.passPipeline, pm, llvm::errs())))
      return emitError(module.getLoc()) << "invalid --pass-pipeline";
  } else {
    buildDefault(pm);
  }
  if (failed(pm.run(module)))
    return failure();
  if (options.emit == Emit::MLIR) {
    llvm::raw_string_ostream os(output);
    module.print(os);
    printed = true;
  }
  return success();
}

namespace {

LogicalResult compileCPU(ModuleOp module, const CompileOptions &options,
                         const std::string &source, std::string &output) {
  Location loc = module.getLoc();
  std::string cpuName;
  auto tm = createHostTargetMachine(loc, options.chip, options.features,
                                    options.optLevel, cpuName);
  if (!tm)
    return failure();
  bool wantNative = options.backends.empty() ||
                    llvm::is_contained(options.backends, "native");
  bool printed = false;
  if (failed(runLowering(
          module, options,
          [&](OpPassManager &pm) {
            TileToCPUPipelineOptions pipelineOptions;
            pipelineOptions.chip = cpuName;
            pipelineOptions.nativeWrapper = wantNative;
            buildTileToCPUPipeline(pm, pipelineOptions);
          },
          output, printed)))
    return failure();
  if (printed)
    return success();
  auto md = getAttachedMetadata(module);
  if (failed(md))
    return failure();
  std::string metadataJSON = md->toJSONString(/*pretty=*/true);
  if (failed(addMetadataHashGlobal(module, md->name, metadataJSON)))
    return failure();

  llvm::LLVMContext llvmContext;
  auto llvmModule = translateModuleToLLVMIR(module, llvmContext, md->name);
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  auto optimize = makeOptimizingTransformer(options.optLevel, 0, tm.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return emitError(loc) << "LLVM optimization failed: "
                          << llvm::toString(std::move(err));
  std::string llvmText;
  {
    llvm::raw_string_ostream os(llvmText);
    llvmModule->print(os, nullptr);
  }
  if (options.emit == Emit::LLVM) {
    output = std::move(llvmText);
    return success();
  }
  SmallString<0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile))
      return emitError(loc) << "the target cannot emit object files";
    codegen.run(*llvmModule);
  }
  if (options.emit == Emit::Object) {
    output = std::string(object.str());
    return success();
  }
  std::string sharedObject;
  if (failed(linkSharedObject(loc, object.str(), sharedObject)))
    return failure();
  std::vector<::tile::bundle::Section> sections = {
      {"metadata", std::move(metadataJSON)},
      {"host.so", std::move(sharedObject)},
      {"mlir", source},
      {"llvm", std::move(llvmText)}};
  std::string error;
  if (!::tile::bundle::write(sections, output, error))
    return emitError(loc) << "cannot write the bundle: " << error;
  return success();
}

} // namespace

LogicalResult mlir::tile::compileKernel(MLIRContext &context,
                                        const CompileOptions &options,
                                        std::string &output) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  if (!options.source.empty()) {
    buffer = llvm::MemoryBuffer::getMemBufferCopy(options.source, "<source>");
  } else {
    std::string error;
    buffer = openInputFile(options.inputPath, &error);
    if (!buffer) {
      llvm::errs() << "tilec: cannot read '" << options.inputPath
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
  for (const std::string &backend : options.backends) {
    // tilec generates host code for the TILE_BACKEND_COMPILED backends of
    // the shared table (tile_targets.h); the others are chosen at load time.
    tile_backend known;
    if (!tile_backend_parse(backend.c_str(), &known) ||
        !(tile_backend_flags(known) & TILE_BACKEND_COMPILED)) {
      std::string compiled, atLoad;
      for (int i = TILE_BACKEND_AUTO + 1; i < TILE_BACKEND_COUNT; ++i) {
        auto b = static_cast<tile_backend>(i);
        bool isCompiled = tile_backend_flags(b) & TILE_BACKEND_COMPILED;
        std::string &list = isCompiled ? compiled : atLoad;
        list += (list.empty() ? "" : isCompiled ? " or " : ", ") +
                std::string(tile_backend_name(b));
      }
      return emitError(module->getLoc())
             << "unknown backend '" << backend << "' for tilec (expected "
             << compiled << "; " << atLoad << " are chosen at load time)";
    }
  }
  if (options.emit == Emit::Metadata) {
    auto md = extractKernelMetadata(*kernel);
    if (failed(md))
      return failure();
    md->targetKind = getTargetName(options.target).str();
    md->chip = options.chip;
    md->features = options.features;
    output = md->toJSONString(/*pretty=*/true) + "\n";
    return success();
  }
  switch (options.target) {
  case Target::CPU:
    return compileCPU(*module, options, source, output);
  case Target::CUDA:
    return compileCUDA(*module, options, source, output);
  case Target::HIP:
  case Target::Metal:
    return emitError(module->getLoc())
           << "target '" << getTargetName(options.target)
           << "' is not available in this build yet; available: cpu, cuda";
  }
  llvm_unreachable("bad target");
}
