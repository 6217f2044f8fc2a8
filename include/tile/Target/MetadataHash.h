//===- MetadataHash.h - bake the metadata hash into a kernel's code -*- C++ -*-===//
//
// The compiler half of the bundle trust check (docs/bundle.md, "Trust
// model"): the code of every bundle carries the hash of the exact metadata
// JSON it was compiled with, so the runtime can refuse a bundle whose
// metadata was edited or swapped (an output dtype changed from float32 to
// int8 would otherwise make it allocate a quarter of what the code writes).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_METADATAHASH_H
#define TILE_TARGET_METADATAHASH_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::tile {

/// Adds to `symbolTable` (a builtin.module or gpu.module in the LLVM
/// dialect, before translation) the exported constant
///   llvm.mlir.global external constant @<kernelName>__tile_metadata_hash(H : i64)
/// with H = ::tile::bundle::metadataHash(metadataJSON), the bytes written as
/// the bundle's `metadata` section. `addressSpace`: 0 for host code (a
/// dynamic symbol of host.so / native.so), 1 for NVVM device code (a
/// `.global` of the cubin and PTX that cuModuleGetGlobal finds). Fails
/// with a diagnostic if the symbol already exists.
LogicalResult addMetadataHashGlobal(Operation *symbolTable,
                                    StringRef kernelName,
                                    StringRef metadataJSON,
                                    unsigned addressSpace = 0);

} // namespace mlir::tile

#endif // TILE_TARGET_METADATAHASH_H
