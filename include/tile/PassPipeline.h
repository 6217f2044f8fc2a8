//===- PassPipeline.h - textual pipelines into a PassManager ----*- C++ -*-===//
//
// For C++ clients that run tile pipelines programmatically (docs/building.md,
// "Running a pipeline from C++").
//
// The trap this avoids: mlir::parsePassPipeline(text, pm) treats `text` as
// the *contents* of `pm`. Given "builtin.module(tile-to-cpu)" and a
// PassManager on builtin.module, it adds a nested pass manager for modules
// *inside* the module; a kernel file has none, so pm.run() succeeds and
// silently runs nothing.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_PASSPIPELINE_H
#define TILE_PASSPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::tile {

/// Adds the textual pipeline `pipeline` to `pm` itself. Both spellings work:
/// anchored on pm's op ("builtin.module(tile-to-cpu{chip=host}, cse)") and
/// bare ("tile-to-cpu{chip=host}, cse"). An op-agnostic `pm` (the default
/// PassManager anchor, "any") takes any anchor. A pipeline anchored on
/// another op ("func.func(cse)" for a module pass manager) is an error, as
/// is any parse error; both are written to `errorStream`.
LogicalResult parsePassPipelineInto(StringRef pipeline, OpPassManager &pm,
                                    raw_ostream &errorStream = llvm::errs());

} // namespace mlir::tile

#endif // TILE_PASSPIPELINE_H
