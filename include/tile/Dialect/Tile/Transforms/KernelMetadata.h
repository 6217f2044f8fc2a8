//===- KernelMetadata.h - what the runtime must know of a kernel -*- C++ -*-===//
//
// A kernel's interface as the runtime sees it: parameters (dtype, rank, static
// dims, symbolic dims), outputs, grid extents as expressions over the symbols
// and scalars, block size and shared-memory bytes. Extracted from a
// `tile.kernel` function, serialized to JSON (docs/bundle.md), stored in the
// bundle and re-read by the passes that generate host entry points.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_TRANSFORMS_KERNELMETADATA_H
#define TILE_DIALECT_TILE_TRANSFORMS_KERNELMETADATA_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tile {

/// An integer expression over symbols, scalar params and constants (grid
/// extents). Leaves: Const, Sym, Scalar; inner nodes: a binary op.
struct GridExpr {
  enum class Kind { Const, Sym, Scalar, Op };
  Kind kind = Kind::Const;
  int64_t value = 0;     // Const
  std::string name;      // Sym: symbol name; Op: op name ("add", "divu", ...)
  int64_t param = -1;    // Scalar: param index
  std::vector<GridExpr> args;

  static GridExpr constant(int64_t v) {
    GridExpr e;
    e.value = v;
    return e;
  }
  llvm::json::Value toJSON() const;
  static std::optional<GridExpr> fromJSON(const llvm::json::Value &v);
};

struct ParamInfo {
  std::string name;
  bool isTensor = false;
  std::string dtype;               // "float16", "int32", ...
  int64_t rank = 0;                // tensors
  std::vector<int64_t> shape;      // -1 = dynamic
  std::vector<std::string> dims;   // symbol per dim ("" = static, unnamed)
  bool isOutput = false;
  int64_t elementBytes = 0;
};

struct KernelMetadata {
  std::string name;
  std::string targetKind = "cpu";
  std::string chip;
  std::string features;
  std::vector<ParamInfo> params;
  std::vector<std::string> symbols;
  GridExpr grid[3];
  int64_t block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  /// Alternative kernels of the same launch for specific hardware (e.g. the
  /// sm_90a TMA/wgmma variant); kept as JSON (docs/bundle.md, "variants").
  llvm::json::Array variants;

  std::vector<int64_t> outIdx() const;
  llvm::json::Value toJSON() const;
  std::string toJSONString(bool pretty = false) const;
  static FailureOr<KernelMetadata> fromJSONString(StringRef text,
                                                  std::string &error);

  std::string blocksEntry() const { return name + "__tile_blocks"; }
  std::string nativeEntry() const { return name + "__tile_native"; }
  std::string blockFunction() const { return name + "__tile_block"; }
};

/// The name of the module attribute holding the kernel's metadata JSON.
constexpr StringLiteral kMetadataAttrName = "tile.metadata";

/// Extracts the metadata of a `tile.kernel` function. Emits an error and
/// fails when a grid extent is not computable from the arguments.
FailureOr<KernelMetadata> extractKernelMetadata(func::FuncOp kernel);

/// Reads the metadata that `tile-attach-metadata` stored on `module`.
FailureOr<KernelMetadata> getAttachedMetadata(ModuleOp module);

/// The DLPack-style dtype name of an element type, or "" if unsupported.
std::string getDTypeName(Type type);

} // namespace mlir::tile

#endif // TILE_DIALECT_TILE_TRANSFORMS_KERNELMETADATA_H
