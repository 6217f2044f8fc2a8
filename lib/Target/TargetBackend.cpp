//===- TargetBackend.cpp - the registry of compilation targets ------------===//

#include "tile/Target/TargetBackend.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <mutex>

using namespace mlir;
using namespace mlir::tile;

TargetBackend::~TargetBackend() = default;

const EmitKind *TargetBackend::findEmitKind(StringRef name) const {
  for (const EmitKind &kind : getEmitKinds())
    if (kind.name == name)
      return &kind;
  return nullptr;
}

namespace {
struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<TargetBackend>> targets;
};
Registry &registry() {
  static Registry r;
  return r;
}
} // namespace

void mlir::tile::registerTarget(std::unique_ptr<TargetBackend> target) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto &t : r.targets)
    if (t->getName() == target->getName())
      return;
  r.targets.push_back(std::move(target));
}

const TargetBackend *mlir::tile::lookupTarget(StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto &t : r.targets)
    if (t->getName() == name)
      return t.get();
  return nullptr;
}

std::vector<const TargetBackend *> mlir::tile::getRegisteredTargets() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const TargetBackend *> out;
  for (const auto &t : r.targets)
    out.push_back(t.get());
  return out;
}

std::string mlir::tile::getRegisteredTargetNames() {
  std::vector<std::string> names;
  for (const TargetBackend *t : getRegisteredTargets())
    names.push_back(t->getName().str());
  return llvm::join(names, ", ");
}

LogicalResult mlir::tile::runLoweringPipeline(PassManager &pm, ModuleOp module,
                                              const CompileOptions &options,
                                              StringRef what) {
  pm.enableVerifier(options.verifyEachPass);
  if (failed(pm.run(module)))
    return failure();
  // Without --verify-each, once at the end: a pass's invalid IR is still an
  // error, not a crash in code generation.
  if (!options.verifyEachPass && failed(verify(module)))
    return emitError(module.getLoc())
           << what << " produced invalid IR (tilec --verify-each names the "
                      "pass)";
  return success();
}
