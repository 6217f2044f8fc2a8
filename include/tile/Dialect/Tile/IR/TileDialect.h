//===- TileDialect.h - tile dialect -----------------------------*- C++ -*-===//
//
// The `tile` dialect: its ops, attributes and helpers over memory scopes.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_IR_TILEDIALECT_H
#define TILE_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include "tile/Dialect/Tile/IR/TileDialect.h.inc"
#include "tile/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tile/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "tile/Dialect/Tile/IR/TileOps.h.inc"

namespace mlir::tile {

/// The scope of a memref: std::nullopt for a global tensor (no memory space),
/// else the `#tile.scope` in its memory space.
std::optional<MemoryScope> getMemoryScope(MemRefType type);

/// True for a memref without a memory space (a kernel's global tensor).
inline bool isGlobal(MemRefType type) { return !getMemoryScope(type); }

/// Short name of a memref's scope for diagnostics ("global", "shared", ...).
StringRef getScopeName(MemRefType type);

/// The `#tile.scope<scope>` attribute (a memref memory space).
MemoryScopeAttr getScopeAttr(MLIRContext *ctx, MemoryScope scope);

/// The element types of on-chip buffers, which every lowering handles:
/// signless i1, i8, i16, i32, i64; f16, bf16, f32, f64; f8E4M3FN, f8E5M2.
/// (Vectors, complex numbers, index, other widths and other float formats
/// are rejected by tile.alloc's verifier.)
bool isTileElementType(Type type);

/// The element types of tile.atomic and tile.atomic_tile: f16, bf16, f32,
/// f64, i32 and i64 (what both the CPU and the GPU do atomically).
bool isAtomicElementType(Type type);

/// The most stages a tile.pipelined loop may ask for.
inline constexpr int64_t kMaxPipelineStages = 32;

} // namespace mlir::tile

#endif // TILE_DIALECT_TILE_IR_TILEDIALECT_H
