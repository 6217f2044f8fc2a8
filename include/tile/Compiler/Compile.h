//===- Compile.h - compile a tile kernel into a bundle ----------*- C++ -*-===//
//
// The compiler driver behind `tilec` (and the Python package): parse, lower
// with the target's pipeline, generate code, pack a bundle.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_COMPILER_COMPILE_H
#define TILE_COMPILER_COMPILE_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir::tile {

enum class Target { CPU, CUDA, HIP, Metal };
enum class Emit { Metadata, MLIR, LLVM, Object, Bundle };

struct CompileOptions {
  std::string inputPath = "-";
  /// Source text; when non-empty it is compiled instead of `inputPath`.
  std::string source;
  Target target = Target::CPU;
  std::string chip;
  std::string features;
  Emit emit = Emit::Bundle;
  /// Backends to generate host code for; empty = all the target supports.
  std::vector<std::string> backends;
  /// Replaces the target's lowering pipeline when non-empty.
  std::string passPipeline;
  /// Parameters to mark as outputs (tile.output) in addition to the source's;
  /// negative indices count from the end (-1: the last parameter).
  std::vector<int64_t> outIdx;
  unsigned optLevel = 3;
};

/// Compiles per `options` into `output` (text or bytes, per `emit`). Errors
/// are reported through the context's diagnostic handler.
LogicalResult compileKernel(MLIRContext &context, const CompileOptions &options,
                            std::string &output);

/// `kernel.mlir` -> `kernel.tileb` / `kernel.o`.
std::string defaultOutputPath(StringRef input, Emit emit);

StringRef getTargetName(Target target);

} // namespace mlir::tile

#endif // TILE_COMPILER_COMPILE_H
