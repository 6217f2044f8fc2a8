//===- KernelMetadata.h - what the runtime must know of a kernel -*- C++ -*-===//
//
// A kernel's interface as the runtime sees it: parameters (dtype, rank, static
// dims, symbolic dims, access), outputs, grid extents as expressions over the
// symbols and scalars, block size, shared-memory bytes and variants.
//
// Between passes it is the typed attribute `#tile.kernel_info` on the module
// (`tile.kernel_info`, built by `tile-attach-metadata`, updated by the
// lowerings). `KernelMetadata` is its decoded, plain C++ view for the host
// code generators (never stored in the IR); `toJSONString` writes the
// bundle's metadata (docs/bundle.md), the one place that writes JSON. The
// compiler never reads the JSON back.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_TRANSFORMS_KERNELMETADATA_H
#define TILE_DIALECT_TILE_TRANSFORMS_KERNELMETADATA_H

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace mlir::tile {

/// A grid extent expression (decoded #tile.grid_expr). Leaves: Const, Sym,
/// Scalar; inner nodes: a binary op.
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
  static GridExpr get(GridExprAttr attr);
  llvm::json::Value toJSON() const;
};

struct ParamInfo {
  std::string name;
  bool isTensor = false;
  std::string dtype;               // "float16", "int32", ...
  int64_t rank = 0;                // tensors
  std::vector<int64_t> shape;      // -1 = dynamic
  std::vector<std::string> dims;   // symbol per dim ("" = static, unnamed)
  bool isOutput = false;
  ParamAccess access = ParamAccess::read;
  bool inplace = false;            // may share memory with other params
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
  /// sm_90a TMA/wgmma variant; docs/bundle.md, "variants").
  SmallVector<KernelVariantAttr> variants;

  /// The decoded view of `info`.
  static KernelMetadata get(KernelInfoAttr info);

  std::vector<int64_t> outIdx() const;
  /// The bundle's metadata (docs/bundle.md). Written once per bundle.
  llvm::json::Value toJSON() const;
  std::string toJSONString(bool pretty = false) const;

  std::string blocksEntry() const { return name + "__tile_blocks"; }
  std::string nativeEntry() const { return name + "__tile_native"; }
  std::string blockFunction() const { return name + "__tile_block"; }
};

/// Builds the description of a `tile.kernel` function: params (with the
/// access each tensor gets, see ParamAccess.h), grid, block, shared bytes.
/// Emits an error and fails when a grid extent is not computable from the
/// arguments or a parameter cannot be described.
FailureOr<KernelInfoAttr> buildKernelInfo(func::FuncOp kernel,
                                          StringRef target, StringRef chip,
                                          StringRef features);

/// Element types a kernel may name (its metadata does) but no lowering can
/// generate code for yet: 8-bit floats (f8E4M3FN, f8E5M2), which no
/// lowering converts, computes or multiplies (the LLVM-based ones stopped
/// on an unrealized cast, the C++ sources on the kernel signature). An
/// error where one first appears (an argument, else an op); called by the
/// code-generating lowerings, not by metadata emission.
LogicalResult verifyLowerableElementTypes(func::FuncOp kernel);

/// buildKernelInfo for target "cpu", decoded.
FailureOr<KernelMetadata> extractKernelMetadata(func::FuncOp kernel);

/// The description `tile-attach-metadata` stored on `module`; emits an error
/// when there is none.
FailureOr<KernelInfoAttr> getKernelInfo(ModuleOp module);
/// Stores (replaces) the module's description.
void setKernelInfo(ModuleOp module, KernelInfoAttr info);

/// getKernelInfo, decoded.
FailureOr<KernelMetadata> getAttachedMetadata(ModuleOp module);

/// The DLPack-style dtype name of an element type, or "" if unsupported.
std::string getDTypeName(Type type);

} // namespace mlir::tile

#endif // TILE_DIALECT_TILE_TRANSFORMS_KERNELMETADATA_H
