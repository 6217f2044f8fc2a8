//===- CompileCUDA.h - the CUDA target of tilec -----------------*- C++ -*-===//

#ifndef TILE_COMPILER_COMPILECUDA_H
#define TILE_COMPILER_COMPILECUDA_H

#include "tile/Compiler/Compile.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

#include "mlir/Pass/PassManager.h"

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir::tile {

/// Lowers `module` with tile-to-nvvm and packs metadata, cubin, ptx,
/// native.so (the host wrapper, deviceType kDLCUDA) and mlir sections.
/// --emit=mlir gives the lowered module (before serialization), llvm the
/// PTX, obj the cubin.
LogicalResult compileCUDA(ModuleOp module, const CompileOptions &options,
                          const std::string &source, std::string &output);

// Host code generation shared with the CPU target (defined in Compile.cpp).
std::unique_ptr<llvm::TargetMachine>
createHostTargetMachine(Location loc, StringRef chip, StringRef features,
                        unsigned optLevel, std::string &cpuName);
/// Lowers `module` with --pass-pipeline when given, else with the pipeline
/// `buildDefault` adds. With --emit=mlir, prints the result into `output`
/// and sets `printed` (the caller is then done).
LogicalResult runLowering(ModuleOp module, const CompileOptions &options,
                          function_ref<void(OpPassManager &)> buildDefault,
                          std::string &output, bool &printed);

LogicalResult linkSharedObject(Location loc, StringRef object,
                               std::string &sharedObject);

} // namespace mlir::tile

#endif // TILE_COMPILER_COMPILECUDA_H
