//===- HostCodegen.h - LLVM dialect to a host object ------------*- C++ -*-===//
//
// The one translate -> optimize -> codegen sequence for host code, shared by
// every target that puts host code into a bundle (CPU: the kernel itself;
// CUDA: the native backend's argument-checking wrapper).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_HOSTCODEGEN_H
#define TILE_TARGET_HOSTCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir::tile {

/// An LLVM target machine for the host's triple.
class HostTargetMachine {
public:
  /// `chip`: "", "host" or "native" for the host CPU (with its features
  /// when `features` is empty), else an LLVM CPU name of the host's
  /// architecture. Unknown CPU names and features are errors at `loc`.
  static FailureOr<HostTargetMachine> create(Location loc, StringRef chip,
                                             StringRef features,
                                             unsigned optLevel);
  /// The CPU name `chip` stands for: the host's for "", "host", "native".
  static std::string resolveCPU(StringRef chip);
  /// Checks `chip` and `features` without creating a machine.
  static LogicalResult validate(Location loc, StringRef chip,
                                StringRef features);

  HostTargetMachine(HostTargetMachine &&);
  HostTargetMachine &operator=(HostTargetMachine &&);
  ~HostTargetMachine();

  /// The CPU name the machine was created for ("znver4").
  StringRef getCPU() const { return cpu; }
  llvm::TargetMachine &get() const { return *tm; }

  /// Translates `module` (LLVM dialect) to LLVM IR named `name`, optimizes
  /// it at `optLevel` for this machine and emits an object file into
  /// `object` (when non-null). With `llvmIR`, also prints the optimized IR.
  LogicalResult compile(ModuleOp module, StringRef name, unsigned optLevel,
                        std::string *llvmIR, std::string *object) const;

private:
  HostTargetMachine() = default;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string cpu;
};

} // namespace mlir::tile

#endif // TILE_TARGET_HOSTCODEGEN_H
