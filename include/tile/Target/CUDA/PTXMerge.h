//===- PTXMerge.h - one PTX module from per-kernel PTX modules -*- C++ -*-===//
//
// The CUDA target generates the device code one LLVM module per kernel (on
// parallel threads, PerKernelPTX.h) and gives ptxas one PTX module. This
// merges the per-kernel PTX texts LLVM's NVPTX back end printed into that
// module:
//
//   * the header (.version, .target, .address_size) must be the same in
//     every part and is written once;
//   * module-scope declarations (variables, function prototypes) come next,
//     each once, in the order the parts first declare them (a variable's
//     initializer only names variables declared before it in its part);
//   * the function definitions follow, part after part, in the parts'
//     order: the output depends on the parts' order only, never on which
//     thread finished first.
//
// The same symbol declared or defined with different text in two parts
// (e.g. a helper function the optimizer specialized differently for two
// kernels) cannot be merged: the caller then generates the module whole.
// Top-level comments are dropped (LLVM's "// .globl" and "has been demoted"
// notes). Functions whose names start with `dropPrefix` are left out (the
// per-kernel code generation's keep-alive helpers).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_CUDA_PTXMERGE_H
#define TILE_TARGET_CUDA_PTXMERGE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace mlir::tile::cuda {

/// The merged module, or failure with `why` saying what could not be merged.
FailureOr<std::string> mergePTXModules(ArrayRef<std::string> parts,
                                       StringRef dropPrefix, std::string &why);

} // namespace mlir::tile::cuda

#endif // TILE_TARGET_CUDA_PTXMERGE_H
