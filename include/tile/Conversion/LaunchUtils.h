//===- LaunchUtils.h - shared helpers of the launch outliners ---*- C++ -*-===//
//
// What convert-tile-launch-to-cpu, convert-tile-to-nvgpu,
// convert-tile-gemm-to-sm90 (and tile-attach-metadata) share: finding the
// kernels and their launch, recomputing the prelude values a launch body
// uses, the block rasterization remap, and the reduce combinators of the
// lowerings (convert-tile-to-scf is the reference, the GPU lowering must
// agree).
//
// Never include mlir/Dialect/SCF/Utils/Utils.h next to this header: its
// free function mlir::tile() collides with namespace mlir::tile.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_LAUNCHUTILS_H
#define TILE_CONVERSION_LAUNCHUTILS_H

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tile {

/// The `tile.kernel` functions of `module`, in order.
SmallVector<func::FuncOp> getKernelFunctions(ModuleOp module);

/// The one top-level tile.launch of `kernel` (error otherwise).
FailureOr<LaunchOp> getKernelLaunch(func::FuncOp kernel);

/// Clones into `b` the pure computation of `v` (from kernel arguments),
/// recording it in `mapping`. Fails (diagnosed at `user` or the defining
/// op) on anything with side effects or regions.
LogicalResult cloneComputation(OpBuilder &b, Value v, IRMapping &mapping,
                               Operation *user);

/// Remaps (bx, by) of a 2-D grid so that consecutive linear block ids walk
/// panels of `panel` grid columns (row order) or rows (column order). The map
/// is a permutation of the grid: results do not depend on it.
std::pair<Value, Value> rasterize(OpBuilder &b, Location loc,
                                  RasterizationAttr raster, Value bx, Value by,
                                  Value gx, Value gy);

/// The block indices (x fastest) of linear block number `linear` in a grid
/// of `grid` sizes: linear % gx, (linear / gx) % gy, ..., the last
/// dimension taking what is left (no bound check).
SmallVector<Value> delinearizeBlock(OpBuilder &b, Location loc, Value linear,
                                    ArrayRef<Value> grid);

/// Clones the body of `launch` at `b`'s insertion point: the prelude values
/// it uses (cloneComputation; those `mapping` already maps are reused), the
/// block indices mapped to `blockIdx` (rasterized when the launch asks for
/// it, with `gridDim`), then its ops, or only those `filter` accepts (the
/// sm90 kernels take just the index computations of the tile origins).
/// `mapping` must already map the kernel's arguments.
LogicalResult cloneLaunchBody(OpBuilder &b, LaunchOp launch,
                              IRMapping &mapping, ArrayRef<Value> blockIdx,
                              ArrayRef<Value> gridDim,
                              function_ref<bool(Operation &)> filter = {});

/// The memref.atomic_rmw kind of a tile atomic on elements of `type`
/// (float: addf / maximumf / minimumf; integer: addi / maxs / mins).
arith::AtomicRMWKind getAtomicRMWKind(AtomicKind kind, Type type);

/// The neutral element of a reduction of `kind` over `type`.
/// Converts `v` to `to`, as tile.copy and accumulations do: floats widen,
/// narrow (rounding to nearest even) and go f16 <-> bf16 through f32;
/// integers are sign-extended or truncated; an integer becomes a float as
/// a signed value (i1 as 0 / 1), a float an integer toward zero (i1: x !=
/// 0).
Value convertElement(OpBuilder &b, Location loc, Value v, Type to);

Value reduceIdentity(OpBuilder &b, Location loc, ReduceKind kind, Type type);

/// combine(acc, x); with `absFirst`, abssum/absmax apply |x| first (to
/// source elements, not to partial results).
Value reduceCombine(OpBuilder &b, Location loc, ReduceKind kind, Value acc,
                    Value x, bool absFirst = true);

} // namespace mlir::tile

#endif // TILE_CONVERSION_LAUNCHUTILS_H
