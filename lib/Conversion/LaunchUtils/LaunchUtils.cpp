//===- LaunchUtils.cpp - shared helpers of the launch outliners -----------===//

#include "tile/Conversion/LaunchUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace mlir::tile;

SmallVector<func::FuncOp> mlir::tile::getKernelFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> kernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(TileDialect::kKernelAttrName))
      kernels.push_back(func);
  return kernels;
}

FailureOr<LaunchOp> mlir::tile::getKernelLaunch(func::FuncOp kernel) {
  SmallVector<LaunchOp> launches;
  kernel.walk([&](LaunchOp l) { launches.push_back(l); });
  if (launches.size() != 1 || launches[0]->getParentOp() != kernel)
    return kernel.emitError("expected exactly one top-level tile.launch");
  return launches[0];
}

LogicalResult mlir::tile::cloneComputation(OpBuilder &b, Value v,
                                           IRMapping &mapping,
                                           Operation *user) {
  if (mapping.contains(v))
    return success();
  Operation *def = v.getDefiningOp();
  if (!def)
    return user->emitError("launch body uses a block argument defined outside "
                           "the launch that is not a kernel argument");
  if (!isMemoryEffectFree(def) && !isa<memref::DimOp>(def))
    return def->emitError("launch body uses a value computed by '")
           << def->getName()
           << "' outside the launch; only pure computations on the kernel "
              "arguments may be shared with the blocks";
  if (def->getNumRegions() != 0)
    return def->emitError("launch body uses a value computed by an op with "
                          "regions outside the launch");
  for (Value operand : def->getOperands())
    if (failed(cloneComputation(b, operand, mapping, user)))
      return failure();
  b.clone(*def, mapping);
  return success();
}

std::pair<Value, Value> mlir::tile::rasterize(OpBuilder &b, Location loc,
                                              RasterizationAttr raster,
                                              Value bx, Value by, Value gx,
                                              Value gy) {
  bool rowOrder = raster.getOrder() == RasterOrder::row;
  // In column order swap the roles of the two grid dims.
  Value major = rowOrder ? gx : gy, minor = rowOrder ? gy : gx;
  Value id = rowOrder ? arith::AddIOp::create(
                            b, loc, arith::MulIOp::create(b, loc, by, gx), bx)
                      : arith::AddIOp::create(
                            b, loc, arith::MulIOp::create(b, loc, bx, gy), by);
  Value panel = arith::ConstantIndexOp::create(b, loc, raster.getPanel());
  Value perPanel = arith::MulIOp::create(b, loc, panel, minor);
  Value panelIdx = arith::DivUIOp::create(b, loc, id, perPanel);
  Value within = arith::RemUIOp::create(b, loc, id, perPanel);
  Value panelStart = arith::MulIOp::create(b, loc, panelIdx, panel);
  Value left = arith::SubIOp::create(b, loc, major, panelStart);
  Value width = arith::MinUIOp::create(b, loc, panel, left);
  Value newMajor = arith::AddIOp::create(
      b, loc, panelStart, arith::RemUIOp::create(b, loc, within, width));
  Value newMinor = arith::DivUIOp::create(b, loc, within, width);
  return rowOrder ? std::make_pair(newMajor, newMinor)
                  : std::make_pair(newMinor, newMajor);
}

SmallVector<Value> mlir::tile::delinearizeBlock(OpBuilder &b, Location loc,
                                                Value linear,
                                                ArrayRef<Value> grid) {
  SmallVector<Value> idx;
  Value rest = linear;
  for (size_t d = 0; d < grid.size(); ++d) {
    if (d + 1 == grid.size()) {
      idx.push_back(rest);
      break;
    }
    idx.push_back(arith::RemUIOp::create(b, loc, rest, grid[d]));
    rest = arith::DivUIOp::create(b, loc, rest, grid[d]);
  }
  return idx;
}

LogicalResult
mlir::tile::cloneLaunchBody(OpBuilder &b, LaunchOp launch, IRMapping &mapping,
                            ArrayRef<Value> blockIdx, ArrayRef<Value> gridDim,
                            function_ref<bool(Operation &)> filter) {
  SmallVector<Value> idx(blockIdx);
  if (auto raster = launch.getRasterAttr()) {
    auto [bx, by] = rasterize(b, launch.getLoc(), raster, idx[0], idx[1],
                              gridDim[0], gridDim[1]);
    idx[0] = bx;
    idx[1] = by;
  }
  // Values the body takes from the prelude are recomputed per block.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(launch.getBody(), captured);
  for (Value v : captured)
    if (failed(cloneComputation(b, v, mapping, launch)))
      return failure();
  for (unsigned d = 0; d < launch.getGridRank(); ++d)
    mapping.map(launch.getBlockIndices()[d], idx[d]);
  for (Operation &op : launch.getBodyBlock().without_terminator())
    if (!filter || filter(op))
      b.clone(op, mapping);
  return success();
}

Value mlir::tile::reduceIdentity(OpBuilder &b, Location loc, ReduceKind kind,
                                 Type type) {
  if (auto ft = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    if (kind == ReduceKind::max)
      return arith::ConstantOp::create(
          b, loc, type, b.getFloatAttr(type, APFloat::getInf(sem, true)));
    if (kind == ReduceKind::min)
      return arith::ConstantOp::create(
          b, loc, type, b.getFloatAttr(type, APFloat::getInf(sem, false)));
    return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  }
  unsigned width = type.getIntOrFloatBitWidth();
  if (kind == ReduceKind::max)
    return arith::ConstantOp::create(
        b, loc, type, b.getIntegerAttr(type, APInt::getSignedMinValue(width)));
  if (kind == ReduceKind::min)
    return arith::ConstantOp::create(
        b, loc, type, b.getIntegerAttr(type, APInt::getSignedMaxValue(width)));
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

Value mlir::tile::reduceCombine(OpBuilder &b, Location loc, ReduceKind kind,
                                Value acc, Value x, bool absFirst) {
  bool isFloat = isa<FloatType>(x.getType());
  if (absFirst && (kind == ReduceKind::abssum || kind == ReduceKind::absmax))
    // Integers: max(x, 0 - x), which wraps at the minimum like math.absi
    // but needs no math lowering (NVVM has none for math.absi but i32).
    x = isFloat ? (Value)math::AbsFOp::create(b, loc, x)
                : (Value)arith::MaxSIOp::create(
                      b, loc, x,
                      arith::SubIOp::create(
                          b, loc,
                          arith::ConstantOp::create(b, loc, x.getType(),
                                                    b.getZeroAttr(x.getType())),
                          x));
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::abssum:
    return isFloat ? (Value)arith::AddFOp::create(b, loc, acc, x)
                   : (Value)arith::AddIOp::create(b, loc, acc, x);
  case ReduceKind::max:
  case ReduceKind::absmax:
    return isFloat ? (Value)arith::MaximumFOp::create(b, loc, acc, x)
                   : (Value)arith::MaxSIOp::create(b, loc, acc, x);
  case ReduceKind::min:
    return isFloat ? (Value)arith::MinimumFOp::create(b, loc, acc, x)
                   : (Value)arith::MinSIOp::create(b, loc, acc, x);
  }
  llvm_unreachable("bad reduce kind");
}

/// fptosi with a result for every input: NaN -> 0, values past the
/// integer's range -> its min / max (PTX's cvt.rzi.sat and Rust's `as`).
/// A plain arith.fptosi is poison there, and the targets disagree (the CPU's
/// vector path saturates, its scalar path wraps, C++ is undefined).
static Value saturatingFPToSI(OpBuilder &b, Location loc, Value v,
                              IntegerType to) {
  // Narrow floats are compared as f32 (exact; EmitC has no f16 compares).
  if (v.getType().getIntOrFloatBitWidth() < 32)
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  auto from = cast<FloatType>(v.getType());
  const llvm::fltSemantics &sem = from.getFloatSemantics();
  unsigned width = to.getWidth();
  auto floatCst = [&](const llvm::APFloat &f) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(from, f));
  };
  // The float nearest to the integer's max (min) toward zero: the largest
  // finite float when the integer's range is wider (f16 -> i32), which
  // also brings infinities into range.
  llvm::APFloat hi(sem), lo(sem);
  (void)hi.convertFromAPInt(llvm::APInt::getSignedMaxValue(width),
                            /*isSigned=*/true, llvm::APFloat::rmTowardZero);
  (void)lo.convertFromAPInt(llvm::APInt::getSignedMinValue(width),
                            /*isSigned=*/true, llvm::APFloat::rmTowardZero);
  Value x = arith::MaximumFOp::create(b, loc, v, floatCst(lo));
  x = arith::MinimumFOp::create(b, loc, x, floatCst(hi));
  Value isNan =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  x = arith::SelectOp::create(b, loc, isNan,
                              floatCst(llvm::APFloat::getZero(sem)), x);
  Value r = arith::FPToSIOp::create(b, loc, to, x);
  // Where the clamp bound is not the integer's bound itself (f32 -> i32:
  // 2^31 - 128; f16 -> i32: +-65504, so only infinities), inputs past it
  // take the integer's bound.
  auto saturate = [&](const llvm::APFloat &bound, const llvm::APInt &limit,
                      arith::CmpFPredicate past) {
    llvm::APSInt asInt(width, /*isUnsigned=*/false);
    bool isExact;
    (void)bound.convertToInteger(asInt, llvm::APFloat::rmTowardZero,
                                 &isExact);
    if (llvm::APInt(asInt) == limit)
      return;
    Value beyond = arith::CmpFOp::create(b, loc, past, v, floatCst(bound));
    Value limitCst =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(to, limit));
    r = arith::SelectOp::create(b, loc, beyond, limitCst, r);
  };
  saturate(hi, llvm::APInt::getSignedMaxValue(width),
           arith::CmpFPredicate::OGT);
  saturate(lo, llvm::APInt::getSignedMinValue(width),
           arith::CmpFPredicate::OLT);
  return r;
}

Value mlir::tile::convertElement(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (isa<FloatType>(from) && isa<FloatType>(to)) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, to, v);
    // Same width, different format (f16 <-> bf16): go through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  bool fromInt = isa<IntegerType>(from), toInt = isa<IntegerType>(to);
  if (fromInt && !toInt) {
    // Signless integers are signed, except i1 (a bool: true is 1.0).
    if (from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::SIToFPOp::create(b, loc, to, v);
  }
  if (!fromInt && toInt) {
    // Toward zero (C's cast); to i1: x != 0.
    if (to.isInteger(1))
      return arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::UNE, v,
          arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0.0)));
    return saturatingFPToSI(b, loc, v, cast<IntegerType>(to));
  }
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

arith::AtomicRMWKind mlir::tile::getAtomicRMWKind(AtomicKind kind, Type type) {
  bool isFloat = isa<FloatType>(type);
  switch (kind) {
  case AtomicKind::add:
    return isFloat ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi;
  case AtomicKind::max:
    return isFloat ? arith::AtomicRMWKind::maximumf : arith::AtomicRMWKind::maxs;
  case AtomicKind::min:
    return isFloat ? arith::AtomicRMWKind::minimumf : arith::AtomicRMWKind::mins;
  }
  llvm_unreachable("bad atomic kind");
}
