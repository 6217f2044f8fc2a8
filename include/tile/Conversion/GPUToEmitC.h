//===- GPUToEmitC.h - C++ source targets through EmitC ----------*- C++ -*-===//
//
// A source target (CUDA C++ for NVRTC, Metal MSL for metal-torch; HIP later)
// prints the kernel that convert-tile-to-nvgpu built as C++ through MLIR's
// EmitC dialect and its one emitter (mlir::emitc::translateToCpp). What
// differs between source targets is this table: the kernel qualifiers, how
// a device global is declared, and the device header library the generated
// calls go to (include/tile/device/<name>/). The op -> library-function
// names themselves are shared (GPUToEmitC.cpp): each library implements
// them for its language.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_GPUTOEMITC_H
#define TILE_CONVERSION_GPUTOEMITC_H

#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
namespace tile {

struct SourceTarget {
  /// convert-gpu-to-emitc{target=...}: "cuda", "metal".
  StringRef name;
  /// emitc.func specifiers of a kernel (printed before the return type).
  ArrayRef<StringRef> kernelSpecifiers;
  /// The launch-bounds specifier for `threads` threads per block ("" = none).
  std::string (*launchBounds)(int64_t threads);
  /// A top-level definition `name` = `value` of a 64-bit device constant the
  /// host can read (the metadata hash, docs/bundle.md "Trust model").
  std::string (*deviceConstant)(StringRef name, uint64_t value);
  /// The device header library, in include order, as one text (prepended
  /// to the generated source, so the compiler on the GPU host needs no
  /// include path).
  StringRef (*deviceLibrary)();
  /// Address-space qualifiers of pointed-to element types, by where the
  /// memory is: global (kernel parameters), shared (the dynamic shared
  /// memory's views: #gpu.address_space<workgroup>) and private (per-thread
  /// arrays: memref.alloca, #gpu.address_space<private>). Empty for
  /// languages with generic pointers (CUDA); MSL needs `device`,
  /// `threadgroup`, `thread` on every pointer and memref<T, R> is
  /// instantiated with the qualified T.
  StringRef globalSpace = "";
  StringRef sharedSpace = "";
  StringRef privateSpace = "";
  /// The library's names of the 16-bit float types (MSL reserves `half`
  /// and `bfloat`: its library calls them tile::f16 / tile::bf16), and
  /// whether the language has double (MSL has not).
  StringRef f16Name = "tile::half";
  StringRef bf16Name = "tile::bfloat16";
  bool hasF64 = true;
};

/// The source target called `name`, or nullptr.
const SourceTarget *lookupSourceTarget(StringRef name);

} // namespace tile
} // namespace mlir

#endif // TILE_CONVERSION_GPUTOEMITC_H
