//===- HostCodegen.cpp - LLVM dialect to a host object --------------------===//

#include "tile/Target/HostCodegen.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

bool isHostChip(StringRef chip) {
  return chip.empty() || chip == "host" || chip == "native";
}

const llvm::Target *lookupHostTarget(Location loc, llvm::Triple &triple) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  triple = llvm::Triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    emitError(loc) << "no LLVM target for the host (" << triple.str()
                   << "): " << error;
  return target;
}

} // namespace

std::string HostTargetMachine::resolveCPU(StringRef chip) {
  return isHostChip(chip) ? llvm::sys::getHostCPUName().str() : chip.str();
}

LogicalResult HostTargetMachine::validate(Location loc, StringRef chip,
                                          StringRef features) {
  llvm::Triple triple;
  const llvm::Target *target = lookupHostTarget(loc, triple);
  if (!target)
    return failure();
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!sti)
    return emitError(loc) << "LLVM has no subtarget information for "
                          << triple.str();
  if (!isHostChip(chip) && !sti->isCPUStringValid(chip))
    return emitError(loc) << "unknown CPU '" << chip << "' for the host ("
                          << triple.str()
                          << "): use host, or an LLVM CPU name such as "
                             "x86-64-v3, znver4, sapphirerapids, neoverse-v2";
  SmallVector<StringRef> list;
  features.split(list, ',', -1, /*KeepEmpty=*/false);
  for (StringRef f : list) {
    StringRef name = f.trim();
    if (!name.consume_front("+") && !name.consume_front("-"))
      return emitError(loc) << "target feature '" << f
                            << "' must start with '+' or '-' (e.g. +avx2)";
    bool known = llvm::any_of(sti->getAllProcessorFeatures(),
                              [&](const llvm::SubtargetFeatureKV &kv) {
                                return name == kv.Key;
                              });
    if (!known)
      return emitError(loc) << "unknown target feature '" << f
                            << "' for the host (" << triple.str() << ")";
  }
  return success();
}

FailureOr<HostTargetMachine> HostTargetMachine::create(Location loc,
                                                       StringRef chip,
                                                       StringRef features,
                                                       unsigned optLevel) {
  if (failed(validate(loc, chip, features)))
    return failure();
  llvm::Triple triple;
  const llvm::Target *target = lookupHostTarget(loc, triple);
  HostTargetMachine machine;
  std::string featureString = features.str();
  machine.cpu = resolveCPU(chip);
  if (isHostChip(chip)) {
    if (featureString.empty()) {
      llvm::SubtargetFeatures hostFeatures;
      for (auto &f : llvm::sys::getHostCPUFeatures())
        hostFeatures.AddFeature(f.first(), f.second);
      featureString = hostFeatures.getString();
    }
  }
  llvm::TargetOptions options;
  auto level = optLevel == 0   ? llvm::CodeGenOptLevel::None
               : optLevel == 1 ? llvm::CodeGenOptLevel::Less
               : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                               : llvm::CodeGenOptLevel::Aggressive;
  machine.tm.reset(target->createTargetMachine(triple, machine.cpu,
                                               featureString, options,
                                               llvm::Reloc::PIC_,
                                               std::nullopt, level));
  if (!machine.tm)
    return emitError(loc) << "cannot create a target machine for CPU '"
                          << machine.cpu << "'",
           failure();
  return machine;
}

HostTargetMachine::HostTargetMachine(HostTargetMachine &&) = default;
HostTargetMachine &
HostTargetMachine::operator=(HostTargetMachine &&) = default;
HostTargetMachine::~HostTargetMachine() = default;

LogicalResult HostTargetMachine::compile(ModuleOp module, StringRef name,
                                         unsigned optLevel,
                                         std::string *llvmIR,
                                         std::string *object) const {
  Location loc = module.getLoc();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateModuleToLLVMIR(module, llvmContext, name);
  if (!llvmModule)
    return emitError(loc) << "translation of '" << name
                          << "' to LLVM IR failed";
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  auto optimize = makeOptimizingTransformer(optLevel, 0, tm.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return emitError(loc) << "LLVM optimization failed: "
                          << llvm::toString(std::move(err));
  if (llvmIR) {
    llvm::raw_string_ostream os(*llvmIR);
    llvmModule->print(os, nullptr);
  }
  if (!object)
    return success();
  SmallString<0> buffer;
  {
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile))
      return emitError(loc) << "the host target cannot emit object files";
    codegen.run(*llvmModule);
  }
  *object = std::string(buffer.str());
  return success();
}
