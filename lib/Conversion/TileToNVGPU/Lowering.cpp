//===- Lowering.cpp - tile ops to per-thread GPU code ---------------------===//
//
// The general (always correct) lowering of every collective op to the code
// one thread runs: fragments live in per-thread register arrays indexed by
// the layout's register slot, shared buffers in dynamic shared memory (with
// their swizzle), local buffers in per-thread arrays. Anything a register
// layout cannot express directly goes through a shared-memory scratch area
// with barriers around it. The semantics are those of convert-tile-to-scf
// (lib/Conversion/TileToSCF/TileToSCF.cpp), out-of-bounds rules included.
//
// This file: the helpers, buffer creation, fill, atomics and the driver
// (run). The other ops: Copy.cpp (CopyAsync.cpp: cp.async), Gemm.cpp
// (mma.sync and SIMT), Reduce.cpp, Parallel.cpp, Pipeline.cpp
// (tile.pipelined).
//
//===----------------------------------------------------------------------===//


#include "Lowering.h"
#include "tile/Dialect/Tile/IR/AffineEval.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

KernelLowering::KernelLowering(gpu::GPUFuncOp func, int64_t threads,
                               const GPUTargetInfo &target)
    : pingPong(target.warpSpecializePingPong), b(func.getContext()),
      loc(func.getLoc()), func(func), threads(threads), chip(target.chip),
      sharedMemoryChip(target.sharedMemoryChip.empty() ? target.chip
                                                       : target.sharedMemoryChip),
      waveSize(target.waveSize), matrixGemm(target.matrixGemm),
      sharedMemoryLimit(target.sharedMemoryLimit),
      asyncCopy(target.asyncCopy), copyToShared(target.copyToShared) {}

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

Value KernelLowering::cst(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value KernelLowering::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value KernelLowering::zeroOf(Type t) {
  return arith::ConstantOp::create(b, loc, t, b.getZeroAttr(t));
}

Value KernelLowering::convert(Value v, Type to) {
  return convertElement(b, loc, v, to);
}

// Layout maps index non-negative values (thread ids, registers, tile
// indices), so floordiv/mod use unsigned division.
Value KernelLowering::expand(AffineExpr e, ValueRange dims) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return cst(c.getValue());
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return dims[d.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  Value l = expand(bin.getLHS(), dims), r = expand(bin.getRHS(), dims);
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(b, loc, l, r);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(b, loc, l, r);
  case AffineExprKind::Mod:
    return arith::RemUIOp::create(b, loc, l, r);
  case AffineExprKind::FloorDiv:
    return arith::DivUIOp::create(b, loc, l, r);
  case AffineExprKind::CeilDiv:
    return arith::CeilDivUIOp::create(b, loc, l, r);
  default:
    llvm_unreachable("unexpected affine expression");
  }
}

SmallVector<Value> KernelLowering::applyMap(AffineMap map, ValueRange dims) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(expand(e, dims));
  return out;
}

AffineMap KernelLowering::fixDim(AffineMap map, unsigned pos, int64_t value) {
  SmallVector<AffineExpr> dims;
  for (unsigned i = 0; i < map.getNumDims(); ++i)
    dims.push_back(i == pos ? getAffineConstantExpr(value, map.getContext())
                            : getAffineDimExpr(i, map.getContext()));
  return simplifyAffineMap(
      map.replaceDimsAndSymbols(dims, {}, map.getNumDims(), 0));
}

Value KernelLowering::linearize(ArrayRef<int64_t> shape, ValueRange idx) {
  Value l;
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value term = stride == 1 ? idx[d]
                             : (Value)arith::MulIOp::create(b, loc, idx[d],
                                                            cst(stride));
    l = l ? (Value)arith::AddIOp::create(b, loc, l, term) : term;
    stride *= shape[d];
  }
  return l ? l : cst(0);
}

SmallVector<Value> KernelLowering::delinearize(ArrayRef<int64_t> shape,
                                               Value linear) {
  SmallVector<Value> idx(shape.size());
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value v = stride == 1 ? linear
                          : (Value)arith::DivUIOp::create(b, loc, linear,
                                                          cst(stride));
    idx[d] = d == 0 ? v : (Value)arith::RemUIOp::create(b, loc, v,
                                                        cst(shape[d]));
    stride *= shape[d];
  }
  return idx;
}

void KernelLowering::forEachOwnedRegister(
    const Buffer &buf, function_ref<void(Value, ArrayRef<Value>)> fn) {
  bool replicated = buf.layout.getReplicate() > 1;
  forEachRegister(buf.registers, [&](Value r, int64_t rc) {
    SmallVector<Value> idx = fragmentIndex(buf, r, rc);
    if (!replicated)
      return fn(r, idx);
    Value owner = applyMap(buf.layout.getThreadMap(), idx).front();
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, owner, tid),
           [&] { fn(r, idx); });
  });
}

Value KernelLowering::tripCount(Value lb, Value ub, Value step) {
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, ub, lb);
  Value span = arith::SelectOp::create(
      b, loc, more, arith::SubIOp::create(b, loc, ub, lb), cst(0));
  return arith::CeilDivUIOp::create(b, loc, span, step);
}

void KernelLowering::barrier() { gpu::BarrierOp::create(b, loc); }

void KernelLowering::ifThen(Value cond, function_ref<void()> fn) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  fn();
}

void KernelLowering::forEachRegister(int64_t regs,
                                     function_ref<void(Value, int64_t)> fn) {
  // Unrolled register loops keep fragments in registers (constant slots).
  if (regs <= 256) {
    for (int64_t r = 0; r < regs; ++r)
      fn(cst(r), r);
    return;
  }
  auto loop = scf::ForOp::create(b, loc, cst(0), cst(regs), cst(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  fn(loop.getInductionVar(), -1);
}

void KernelLowering::forEachLinear(int64_t n, function_ref<void(Value)> fn) {
  if (n <= threads) {
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                     cst(n));
    if (n == threads)
      return fn(tid);
    ifThen(ok, [&] { fn(tid); });
    return;
  }
  auto loop = scf::ForOp::create(b, loc, tid, cst(n), cst(threads));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  fn(loop.getInductionVar());
}

void KernelLowering::forEachSerial(ArrayRef<int64_t> shape,
                                   function_ref<void(ValueRange)> fn) {
  OpBuilder::InsertionGuard g(b);
  SmallVector<Value> ivs;
  for (int64_t e : shape) {
    auto loop = scf::ForOp::create(b, loc, cst(0), cst(e), cst(1));
    b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
  }
  fn(ivs);
}

SmallVector<Value> KernelLowering::fragmentIndex(const Buffer &buf, Value r,
                                                 int64_t rConst) {
  AffineMap inv = buf.layout.getInverse();
  if (rConst >= 0)
    return applyMap(fixDim(inv, 1, rConst), {tid, r});
  return applyMap(inv, {tid, r});
}

Value KernelLowering::sharedIndex(const Buffer &buf, ValueRange idx) {
  ArrayRef<int64_t> shape = buf.type.getShape();
  int64_t eltBytes = std::max<int64_t>(1, buf.type.getElementTypeBitWidth() / 8);
  int64_t panel = buf.swizzle ? buf.swizzle.getPanel() / eltBytes : 0;
  Value l;
  if (panel && panel < shape.back()) {
    // Column panels (SwizzleAttr): element (row, col) at
    // (col / panel) * rows * panel + row * panel + col % panel.
    Value col = idx.back();
    Value row = linearize(shape.drop_back(), idx.drop_back());
    int64_t rows = numElements(shape.drop_back());
    Value p = arith::DivUIOp::create(b, loc, col, cst(panel));
    Value c = arith::RemUIOp::create(b, loc, col, cst(panel));
    l = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc,
                              arith::MulIOp::create(b, loc, p,
                                                    cst(rows * panel)),
                              arith::MulIOp::create(b, loc, row, cst(panel))),
        c);
  } else {
    l = linearize(shape, idx);
  }
  if (!buf.swizzle || buf.swizzle.getBits() == 0)
    return l;
  // The swizzle acts on byte offsets; base >= log2(element bytes) is
  // checked when the buffer is created, so it acts on element indices too.
  int64_t eltShift = llvm::Log2_64(eltBytes);
  int64_t bits = buf.swizzle.getBits(), base = buf.swizzle.getBase() - eltShift,
          shift = buf.swizzle.getShift();
  int64_t mask = ((int64_t(1) << bits) - 1) << (base + shift);
  Value masked = arith::AndIOp::create(b, loc, l, cst(mask));
  Value moved = arith::ShRUIOp::create(b, loc, masked, cst(shift));
  return arith::XOrIOp::create(b, loc, l, moved);
}

Value KernelLowering::loadOnChip(const Buffer &buf, ValueRange idx) {
  switch (buf.scope) {
  case MemoryScope::shared:
    return memref::LoadOp::create(b, loc, buf.storage,
                                  ValueRange{sharedIndex(buf, idx)});
  case MemoryScope::local:
    return memref::LoadOp::create(b, loc, buf.storage, idx);
  case MemoryScope::fragment: {
    Value slot = applyMap(buf.layout.getIndexMap(), idx).front();
    return loadRegister(buf, slot);
  }
  }
  llvm_unreachable("bad scope");
}

void KernelLowering::storeOnChip(const Buffer &buf, ValueRange idx, Value v) {
  switch (buf.scope) {
  case MemoryScope::shared:
    memref::StoreOp::create(b, loc, v, buf.storage,
                            ValueRange{sharedIndex(buf, idx)});
    return;
  case MemoryScope::local:
    memref::StoreOp::create(b, loc, v, buf.storage, idx);
    return;
  case MemoryScope::fragment: {
    Value slot = applyMap(buf.layout.getIndexMap(), idx).front();
    storeRegister(buf, slot, v);
    return;
  }
  }
}

Value KernelLowering::loadRegister(const Buffer &buf, Value slot) {
  return memref::LoadOp::create(b, loc, buf.storage, ValueRange{slot});
}
void KernelLowering::storeRegister(const Buffer &buf, Value slot, Value v) {
  memref::StoreOp::create(b, loc, v, buf.storage, ValueRange{slot});
}

Value KernelLowering::inBounds(Value mem, ValueRange gidx) {
  Value ok;
  for (auto [d, g] : llvm::enumerate(gidx)) {
    Value dim = memref::DimOp::create(b, loc, mem, d);
    // Unsigned compare: a negative index is a huge unsigned one.
    Value c = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g, dim);
    ok = ok ? (Value)arith::AndIOp::create(b, loc, ok, c) : c;
  }
  return ok;
}

Value KernelLowering::loadGlobal(Value mem, ValueRange start, ValueRange idx,
                                 Type eltType) {
  SmallVector<Value> g;
  for (auto [s, i] : llvm::zip(start, idx))
    g.push_back(arith::AddIOp::create(b, loc, s, i));
  Value ok = inBounds(mem, g);
  auto ifOp = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tl) {
        Value v = memref::LoadOp::create(tb, tl, mem, g);
        scf::YieldOp::create(tb, tl, v);
      },
      [&](OpBuilder &eb, Location el) {
        Value z = arith::ConstantOp::create(eb, el, eltType,
                                            eb.getZeroAttr(eltType));
        scf::YieldOp::create(eb, el, z);
      });
  return ifOp.getResult(0);
}

void KernelLowering::storeGlobal(Value mem, ValueRange start, ValueRange idx,
                                 Value v) {
  SmallVector<Value> g;
  for (auto [s, i] : llvm::zip(start, idx))
    g.push_back(arith::AddIOp::create(b, loc, s, i));
  ifThen(inBounds(mem, g),
         [&] { memref::StoreOp::create(b, loc, v, mem, g); });
}

Value KernelLowering::scratch(Type eltType, int64_t elements,
                              int64_t byteOffset) {
  int64_t eltBytes = std::max<int64_t>(1, eltType.getIntOrFloatBitWidth() / 8);
  byteOffset = llvm::alignTo(byteOffset, 16);
  scratchBytes = std::max(scratchBytes, byteOffset + elements * eltBytes);
  // The scratch area starts after the buffers (offset fixed in run()).
  auto type = MemRefType::get({elements}, eltType, MemRefLayoutAttrInterface(),
                              workgroupSpace(b.getContext()));
  Value off = cst(byteOffset);
  auto view = memref::ViewOp::create(b, loc, type, smem, off, ValueRange{});
  view->setAttr("tile.scratch", b.getUnitAttr());
  return view;
}

bool KernelLowering::holdsAll(const Buffer &driver, const Buffer &other) {
  if (driver.layout == other.layout)
    return true;
  if (driver.type.getShape() != other.type.getShape())
    return false;
  AffineMap dInv = driver.layout.getInverse(), oInv = other.layout.getInverse();
  AffineMap oIdx = other.layout.getIndexMap();
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t r = 0; r < driver.registers; ++r) {
      SmallVector<int64_t> idx = evaluateVerifiedAffineMap(dInv, {t, r});
      int64_t slot = evaluateVerifiedAffineMap(oIdx, idx).front();
      if (evaluateVerifiedAffineMap(oInv, {t, slot}) != idx)
        return false;
    }
  return true;
}

void KernelLowering::fragmentToScratch(const Buffer &buf, Value view) {
  forEachRegister(buf.registers, [&](Value r, int64_t rc) {
    SmallVector<Value> idx = fragmentIndex(buf, r, rc);
    Value v = loadRegister(buf, r);
    memref::StoreOp::create(b, loc, v, view,
                            ValueRange{linearize(buf.type.getShape(), idx)});
  });
}

void KernelLowering::scratchToFragment(const Buffer &buf, Value view) {
  forEachRegister(buf.registers, [&](Value r, int64_t rc) {
    SmallVector<Value> idx = fragmentIndex(buf, r, rc);
    Value v = memref::LoadOp::create(
        b, loc, view, ValueRange{linearize(buf.type.getShape(), idx)});
    storeRegister(buf, r, v);
  });
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::createBuffers() {
  MLIRContext *ctx = b.getContext();
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  laneId = arith::RemUIOp::create(b, loc, tid, cst(waveSize));
  warpId = arith::DivUIOp::create(b, loc, tid, cst(waveSize));
  auto smemType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                  MemRefLayoutAttrInterface(),
                                  workgroupSpace(ctx));
  smem = gpu::DynamicSharedMemoryOp::create(b, loc, smemType);
  // wgmma operands: the 128-byte swizzle is on address bits, so they start
  // on 1024-byte boundaries: the buffers' offsets are aligned, and so is
  // the dynamic shared memory base (checked below).
  // TMA targets: swizzled ones likewise (the swizzle's period divides
  // 1024), unswizzled ones on 128 (TMA's destination alignment).
  for (auto &[gemm, plan] : wgmmaPlans) {
    auto g = cast<GemmOp>(gemm);
    wgmmaOperands.insert(g.getB());
    if (!plan.fragmentA)
      wgmmaOperands.insert(g.getA());
  }
  llvm::DenseSet<Value> alignedOperands = wgmmaOperands;
  bool tmaTargets = false;
  if (specialized)
    for (auto &[copy, plan] : specialized->tmaCopies) {
      tmaTargets = true;
      if (plan.swizzleBytes)
        alignedOperands.insert(cast<CopyOp>(copy).getTarget());
    }
  if (!alignedOperands.empty() || tmaTargets) {
    // The kernel has no static shared memory (the mbarriers are dynamic
    // too, barrierStorage), so its dynamic base is the start of the
    // block's shared window, which is 1024-byte aligned, as CUTLASS's and
    // Triton's Hopper kernels also assume. Checked, not trusted: a
    // misaligned base would misplace every swizzled access, so the kernel
    // traps (a launch error) instead.
    if (func.getNumWorkgroupAttributions() != 0)
      return func.emitError("internal error: static shared memory in front "
                            "of the dynamic base of a kernel with wgmma "
                            "operands or TMA targets");
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
    Value misaligned = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::RemUIOp::create(b, loc, base, cst(1024)), cst(0));
    scf::IfOp check = scf::IfOp::create(b, loc, misaligned);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(check.thenBlock());
    LLVM::Trap::create(b, loc);
  }

  SmallVector<AllocOp> allocs;
  func.walk([&](AllocOp a) { allocs.push_back(a); });
  for (AllocOp alloc : allocs) {
    Buffer buf;
    buf.type = alloc.getType();
    buf.scope = alloc.getScope();
    Type elt = buf.type.getElementType();
    int64_t eltBytes = std::max<int64_t>(1, elt.getIntOrFloatBitWidth() / 8);
    int64_t n = numElements(buf.type.getShape());
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointAfter(smem.getDefiningOp());
    switch (buf.scope) {
    case MemoryScope::shared: {
      buf.swizzle = dyn_cast_or_null<SwizzleAttr>(alloc.getLayoutAttr());
      if (buf.swizzle && buf.swizzle.getBits() &&
          buf.swizzle.getBase() < (int64_t)llvm::Log2_64(eltBytes))
        return alloc.emitError("swizzle base ")
               << buf.swizzle.getBase() << " splits " << eltBytes
               << "-byte elements";
      if (buf.swizzle && buf.swizzle.getBits()) {
        int64_t top = int64_t(1) << (buf.swizzle.getBits() +
                                     buf.swizzle.getBase() +
                                     buf.swizzle.getShift());
        if ((n * eltBytes) % top)
          return alloc.emitError("swizzled shared buffer of ")
                 << n * eltBytes << " bytes is not a multiple of the "
                 << top << "-byte swizzle period";
      }
      int64_t align = alignedOperands.contains(alloc.getResult()) ? 1024 : 128;
      sharedBytes = llvm::alignTo(sharedBytes, align);
      buf.sharedOffset = sharedBytes;
      buf.stageBytes = llvm::alignTo(n * eltBytes, align);
      buf.stages = std::max<int64_t>(1, multiBuffered.lookup(alloc.getResult()));
      sharedBytes += buf.stageBytes * buf.stages;
      auto type = MemRefType::get({n}, elt, MemRefLayoutAttrInterface(),
                                  workgroupSpace(ctx));
      buf.storage = memref::ViewOp::create(b, loc, type, smem,
                                           cst(buf.sharedOffset), ValueRange{});
      break;
    }
    case MemoryScope::fragment: {
      buf.layout = dyn_cast_or_null<FragmentLayoutAttr>(alloc.getLayoutAttr());
      if (!buf.layout)
        return alloc.emitError("fragment has no layout; run "
                               "tile-infer-layouts first");
      // Inferred layouts always carry one; a pinned layout may not.
      if (!buf.layout.getInverse())
        return alloc.emitError(
            "fragment layout has no `inverse` map: a layout pinned with "
            "tile.alloc {layout = ...} needs `inverse = (t, r) -> (...)` "
            "(the tile index thread t's register r holds), which the GPU "
            "code uses to walk each thread's registers (docs/dialect.md, "
            "\"Fragment layouts\")");
      buf.registers = buf.layout.getNumRegisters(buf.type.getShape());
      auto type = MemRefType::get({buf.registers}, elt);
      buf.storage = memref::AllocaOp::create(b, loc, type);
      break;
    }
    case MemoryScope::local:
      buf.storage = memref::AllocaOp::create(
          b, loc, MemRefType::get(buf.type.getShape(), elt));
      break;
    }
    buffers[alloc.getResult()] = buf;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// fill / clear
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerFill(Operation *op, Value buffer,
                                        Value value) {
  Buffer *buf = lookup(buffer);
  if (!buf)
    return op->emitError("fill target must be a tile.alloc buffer");
  switch (buf->scope) {
  case MemoryScope::fragment:
    forEachRegister(buf->registers,
                    [&](Value r, int64_t) { storeRegister(*buf, r, value); });
    return success();
  case MemoryScope::shared: // barriers: the synchronization rule (run)
    forEachLinear(numElements(buf->type.getShape()), [&](Value l) {
      memref::StoreOp::create(b, loc, value, buf->storage, ValueRange{l});
    });
    return success();
  case MemoryScope::local:
    forEachSerial(buf->type.getShape(), [&](ValueRange idx) {
      storeOnChip(*buf, idx, value);
    });
    return success();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// atomics
//===----------------------------------------------------------------------===//


LogicalResult KernelLowering::lowerAtomic(AtomicOp op, bool guard) {
  auto emit = [&] {
    Value mem = op.getBuffer();
    SmallVector<Value> idx(op.getIndices());
    if (Buffer *buf = lookup(mem)) {
      mem = buf->storage;
      idx = {sharedIndex(*buf, idx)};
    }
    memref::AtomicRMWOp::create(
        b, loc, getAtomicRMWKind(op.getKind(), op.getValue().getType()),
        op.getValue(), mem, idx);
  };
  // At block level the atomic happens once per block.
  if (guard)
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                 cst(0)),
           emit);
  else
    emit();
  op.erase();
  return success();
}

LogicalResult KernelLowering::lowerAtomicTile(AtomicTileOp op) {
  Buffer *sb = lookup(op.getSource());
  if (!sb)
    return op.emitError("atomic_tile source must be a tile.alloc buffer");
  Type elt = sb->type.getElementType();
  arith::AtomicRMWKind kind = getAtomicRMWKind(op.getKind(), elt);
  Value target = op.getTarget();
  auto emit = [&](ValueRange idx, Value v) {
    SmallVector<Value> g;
    for (auto [s, i] : llvm::zip(op.getIndices(), idx))
      g.push_back(arith::AddIOp::create(b, loc, s, i));
    ifThen(inBounds(target, g), [&] {
      memref::AtomicRMWOp::create(b, loc, kind, v, target, g);
    });
  };
  ArrayRef<int64_t> shape = sb->type.getShape();
  switch (sb->scope) {
  case MemoryScope::fragment: {
    forEachOwnedRegister(*sb, [&](Value r, ArrayRef<Value> idx) {
      emit(SmallVector<Value>(idx), loadRegister(*sb, r));
    });
    break;
  }
  case MemoryScope::shared:
    forEachLinear(numElements(shape), [&](Value l) {
      SmallVector<Value> idx = delinearize(shape, l);
      emit(idx, loadOnChip(*sb, idx));
    });
    break;
  case MemoryScope::local:
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                 cst(0)),
           [&] {
             forEachSerial(shape, [&](ValueRange idx) {
               emit(idx, loadOnChip(*sb, idx));
             });
           });
    break;
  }
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Block synchronization
//===----------------------------------------------------------------------===//

bool KernelLowering::writesSharedMemory(Operation *op) {
  auto isShared = [&](Value v) {
    Buffer *buf = lookup(v);
    return buf && buf->scope == MemoryScope::shared;
  };
  if (auto copy = dyn_cast<CopyOp>(op))
    return isShared(copy.getTarget());
  if (auto fill = dyn_cast<FillOp>(op))
    return isShared(fill.getBuffer());
  if (auto clear = dyn_cast<ClearOp>(op))
    return isShared(clear.getBuffer());
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return isShared(reduce.getTarget());
  if (auto gemm = dyn_cast<GemmOp>(op))
    return isShared(gemm.getC());
  if (auto atomic = dyn_cast<AtomicOp>(op))
    return isShared(atomic.getBuffer());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return isShared(store.getMemRef());
  if (isa<AtomicTileOp>(op))
    return false; // the target is global (verifier)
  if (auto par = dyn_cast<ParallelOp>(op)) {
    // Any store or atomic of any iteration into a shared buffer.
    WalkResult r = par.getBody().walk([&](Operation *inner) {
      Value m;
      if (auto s = dyn_cast<memref::StoreOp>(inner))
        m = s.getMemRef();
      else if (auto a = dyn_cast<AtomicOp>(inner))
        m = a.getBuffer();
      else if (auto a = dyn_cast<memref::AtomicRMWOp>(inner))
        m = a.getMemref();
      return m && isShared(m) ? WalkResult::interrupt()
                              : WalkResult::advance();
    });
    return r.wasInterrupted();
  }
  return false;
}

/// Two barriers with nothing that touches memory between them are one:
/// drops the second. Keeps the rule above simple (each op brackets itself)
/// without doubling barriers between consecutive shared writers.
void KernelLowering::removeRedundantBarriers(gpu::GPUFuncOp func) {
  SmallVector<Operation *> redundant;
  func.walk([&](Block *block) {
    bool afterBarrier = false;
    for (Operation &op : *block) {
      if (isa<gpu::BarrierOp>(op)) {
        if (afterBarrier)
          redundant.push_back(&op);
        afterBarrier = true;
      } else if (!isMemoryEffectFree(&op)) {
        afterBarrier = false;
      }
    }
  });
  for (Operation *op : redundant)
    op->erase();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

FailureOr<int64_t> KernelLowering::run() {
  // Software pipelines issue their copies asynchronously (cp.async); a
  // target without async copies runs tile.pipelined as a serial loop.
  if (asyncCopy)
    planPipelines();
  if (requestWarpSpecialization &&
      !canWarpSpecialize(whyNotSpecialized)) {
    declinedSpecialization = true;
    return failure();
  }
  func.walk([&](GemmOp gemm) {
    std::string whyNot;
    if (auto plan = planWgmma(gemm, chip, whyNot))
      wgmmaPlans[gemm] = *plan;
    else if (remarks && chip == "sm_90a" && !hopperVariants)
      gemm.emitRemark("tile.gemm not lowered to wgmma: ") << whyNot;
  });
  Operation *firstBodyOp = &func.getBody().front().front();
  if (requestWarpSpecialization) {
    specialized.emplace();
    specialized->consumers = threads;
    if (requestTma && !planTmaProducer(whyNotSpecialized)) {
      declinedSpecialization = declinedTma = true;
      return failure();
    }
    // Persistent: the TMA form (one producer thread schedules the blocks)
    // when its block takes a multiprocessor's registers anyway.
    auto [perThread, budget] = specialized->registerBudget();
    specialized->persistent =
        requestPersistent && specialized->tma && budget > perThread;
    specialized->doubleHeads = specialized->persistent &&
                               requestDoubleHeads &&
                               !specialized->headCopies.empty();
    if (specialized->doubleHeads)
      for (Operation *h : specialized->headCopies)
        multiBuffered[cast<CopyOp>(h).getTarget()] = 2;
  }
  if (failed(createBuffers()))
    return failure();
  if (requestWarpSpecialization) {
    splitRoles(firstBodyOp);
    lowerHeadCopies();
  }
  // Before any lowering: a loop asking for more stages than fit fails fast.
  if (failed(checkSharedMemory(sharedBytes + barrierBytes(), 0)))
    return failure();
  if (specialized)
    chooseBlocksPerSm(sharedBytes + barrierBytes());
  if (specialized && remarks)
    for (auto &[op, plan] : pipelines)
      if (plan.promoted)
        op->emitRemark("warp-specialized variants run this stages(1) loop "
                       "with two stages (the producer warpgroup loads one "
                       "iteration ahead)");

  SmallVector<PipelinedOp> pipelined;
  func.walk([&](PipelinedOp p) { pipelined.push_back(p); });
  if (specialized) {
    // Program order: the producer warpgroup fills the loops' stages in the
    // order the consumers run them (all are at the top level).
    for (PipelinedOp p : pipelined)
      if (failed(pipelines.count(p) ? lowerPipelinedSpecialized(p)
                                    : lowerPipelined(p)))
        return failure();
  } else {
    for (PipelinedOp p : llvm::reverse(pipelined))
      if (failed(lowerPipelined(p)))
        return failure();
  }

  // Block-level ops: the collective tile ops and the scalar stores into
  // shared buffers (the synchronization rule below applies to both).
  SmallVector<Operation *> ops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<CopyOp, GemmOp, FillOp, ClearOp, ReduceOp, ParallelOp, AtomicOp,
            AtomicTileOp, memref::StoreOp>(op) ||
        wgmmaWaitFences.count(op)) {
      ops.push_back(op);
      if (isa<ParallelOp>(op))
        return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  for (Operation *op : ops) {
    loc = op->getLoc();
    if (auto it = wgmmaWaitFences.find(op); it != wgmmaWaitFences.end()) {
      b.setInsertionPointAfter(op);
      for (Value alloc : it->second)
        fenceWgmmaRegisters(*this, buffers[alloc]);
      continue;
    }
    // The block-synchronization rule (docs/dialect.md, "Synchronization"):
    // an op that writes shared memory is preceded by a barrier (every thread
    // is done with what earlier ops read or wrote there) and followed by one
    // (its writes, plain or atomic, are visible to every thread before the
    // next op starts). Ops that only read shared memory need no barrier of
    // their own. cp.async producers of a software pipeline are synchronized
    // by the pipeline. The barrier after `op` is placed first: the lowering
    // emits its code before `op` and erases it.
    bool sync = writesSharedMemory(op) && !asyncCopies.contains(op);
    if (sync) {
      b.setInsertionPointAfter(op);
      barrier();
    }
    b.setInsertionPoint(op);
    if (sync)
      barrier();
    if (isa<memref::StoreOp>(op))
      continue; // rewritten with the other scalar accesses below
    // The producer warpgroup's copies: distributed over its 128 threads.
    SmallVector<Value> roleSaved = {tid, laneId, warpId};
    int64_t roleThreads = threads;
    bool producerCopy =
        specialized && specialized->producerCopies.contains(op);
    if (producerCopy) {
      tid = specialized->producerTid;
      warpId = arith::DivUIOp::create(b, loc, tid, cst(waveSize));
      threads = WarpSpecializedKernel::kProducerThreads;
    }
    llvm::scope_exit restoreRole([&] {
      tid = roleSaved[0], laneId = roleSaved[1], warpId = roleSaved[2];
      threads = roleThreads;
    });
    // Multi-buffered buffers: this op uses the view of one stage.
    SmallVector<std::pair<Value, Value>> saved;
    if (auto it = storageOverrides.find(op); it != storageOverrides.end())
      for (auto [alloc, view] : it->second) {
        saved.push_back({alloc, buffers[alloc].storage});
        buffers[alloc].storage = view;
      }
    llvm::scope_exit restore([&] {
      for (auto [alloc, storage] : saved)
        buffers[alloc].storage = storage;
    });
    LogicalResult result = success();
    if (auto copy = dyn_cast<CopyOp>(op))
      result = lowerCopy(copy);
    else if (auto fill = dyn_cast<FillOp>(op))
      result = lowerFill(op, fill.getBuffer(), fill.getValue());
    else if (auto clear = dyn_cast<ClearOp>(op))
      result = lowerFill(
          op, clear.getBuffer(),
          zeroOf(cast<MemRefType>(clear.getBuffer().getType()).getElementType()));
    else if (auto gemm = dyn_cast<GemmOp>(op))
      result = lowerGemm(gemm);
    else if (auto red = dyn_cast<ReduceOp>(op))
      result = lowerReduce(red);
    else if (auto par = dyn_cast<ParallelOp>(op)) {
      auto here = b.saveInsertionPoint();
      // Clones of the body are emitted here; register-local fragment
      // accesses are rewritten below with the other block-level accesses.
      result = lowerParallel(par);
      (void)here;
    } else if (auto atomic = dyn_cast<AtomicOp>(op)) {
      result = lowerAtomic(atomic, /*guard=*/true);
      continue;
    } else if (auto at = dyn_cast<AtomicTileOp>(op)) {
      result = lowerAtomicTile(at);
      continue;
    }
    if (failed(result))
      return failure();
    op->erase();
  }
  loc = func.getLoc();

  // Remaining accesses to tile buffers: clones of fast-path parallel bodies
  // (fragments in registers) and block-level scalar accesses.
  SmallVector<Operation *> rest;
  func.walk([&](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp, AtomicOp>(op))
      rest.push_back(op);
  });
  for (Operation *op : rest) {
    if (failed(rewriteAccesses(op, /*fragmentsInRegisters=*/true, nullptr)))
      return failure();
  }

  // Place the scratch area after the buffers.
  int64_t scratchBase = llvm::alignTo(sharedBytes, 128);
  SmallVector<memref::ViewOp> views;
  func.walk([&](memref::ViewOp v) {
    if (v->hasAttr("tile.scratch"))
      views.push_back(v);
  });
  for (memref::ViewOp v : views) {
    b.setInsertionPoint(v);
    auto c = getConstantIntValue(v.getByteShift());
    Value off = cst(scratchBase + c.value_or(0));
    v.getByteShiftMutable().assign(off);
    v->removeAttr("tile.scratch");
  }
  int64_t end = llvm::alignTo(
      scratchBytes ? scratchBase + scratchBytes : sharedBytes, 8);
  func.walk([&](memref::ViewOp v) {
    if (!v->hasAttr(kBarrierViewAttr))
      return;
    b.setInsertionPoint(v);
    auto c = getConstantIntValue(v.getByteShift());
    v.getByteShiftMutable().assign(cst(end + c.value_or(0)));
    v->removeAttr(kBarrierViewAttr);
  });
  // The mbarriers follow the buffers and the scratch area.
  int64_t total = end + barrierBytes();
  if (failed(checkSharedMemory(total, total - sharedBytes)))
    return failure();
  removeRedundantBarriers(func);
  // wgmma reads shared memory through the async proxy: the generic-proxy
  // writes (cp.async, st.shared) before any barrier are made visible to it.
  if (!wgmmaPlans.empty())
    func.walk([&](gpu::BarrierOp bar) {
      b.setInsertionPoint(bar);
      NVVM::FenceProxyOp::create(
          b, bar.getLoc(), NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
    });
  if (specialized)
    finishWarpSpecialization();

  SmallVector<AllocOp> allocs;
  func.walk([&](AllocOp a) { allocs.push_back(a); });
  for (AllocOp a : allocs) {
    if (!a->use_empty()) {
      Operation *user = *a->user_begin();
      return user->emitError("unsupported use of an on-chip buffer in the "
                             "GPU lowering: ")
             << user->getName();
    }
    a.erase();
  }
  return total;
}

