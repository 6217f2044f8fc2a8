//===- Compile.h - compile a tile kernel into a bundle ----------*- C++ -*-===//
//
// The compiler driver behind `tilec` (and the Python package): parse, lower
// with the target's pipeline, generate code, pack a bundle. The sequence is
// the same for every target (tile/Target/TargetBackend.h); the target is
// looked up by name in the target registry.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_COMPILER_COMPILE_H
#define TILE_COMPILER_COMPILE_H

#include "tile/Target/TargetBackend.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tile {

/// Compiles per `options` into `output` (text or bytes, per `emit`). Errors
/// (unknown target, emit kind or backend, a chip the target rejects, a
/// failing pass, a missing tool) are reported through the context's
/// diagnostic handler. Registers the built targets on first use. The
/// context must have the target's dialects (TargetBackend::registerDialects;
/// tilec registers all of MLIR's and every target's).
LogicalResult compileKernel(MLIRContext &context, const CompileOptions &options,
                            std::string &output);

/// The default output path: `kernel.mlir` -> `kernel.tileb` for bundles,
/// `kernel.<ext>` for a target's binary emit kinds (`kernel.o`,
/// `kernel.cubin`), "-" (stdout) for text.
std::string defaultOutputPath(StringRef input, const CompileOptions &options);

} // namespace mlir::tile

#endif // TILE_COMPILER_COMPILE_H
