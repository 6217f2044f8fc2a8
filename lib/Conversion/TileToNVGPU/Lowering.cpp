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
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

static int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static bool isGlobalType(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && !m.getMemorySpace();
}

static Attribute workgroupSpace(MLIRContext *ctx) {
  return gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
}

KernelLowering::KernelLowering(gpu::GPUFuncOp func, int64_t threads,
                               StringRef chip)
    : b(func.getContext()), loc(func.getLoc()), func(func), threads(threads),
      chip(chip.str()) {}

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
  Type from = v.getType();
  if (from == to)
    return v;
  if (isa<FloatType>(from) && isa<FloatType>(to)) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, to, v);
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
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
  Value l = linearize(buf.type.getShape(), idx);
  if (!buf.swizzle || buf.swizzle.getBits() == 0)
    return l;
  // The swizzle acts on byte offsets; base >= log2(element bytes) is
  // checked when the buffer is created, so it acts on element indices too.
  int64_t eltShift =
      llvm::Log2_64(std::max<int64_t>(1, buf.type.getElementTypeBitWidth() / 8));
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
      SmallVector<int64_t> idx = dInv.compose({t, r});
      int64_t slot = oIdx.compose(idx).front();
      if (oInv.compose({t, slot}) != idx)
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
  laneId = arith::RemUIOp::create(b, loc, tid, cst(32));
  warpId = arith::DivUIOp::create(b, loc, tid, cst(32));
  auto smemType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                  MemRefLayoutAttrInterface(),
                                  workgroupSpace(ctx));
  smem = gpu::DynamicSharedMemoryOp::create(b, loc, smemType);

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
      buf.sharedOffset = sharedBytes;
      buf.stageBytes = llvm::alignTo(n * eltBytes, 128);
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
      if (!buf.layout || !buf.layout.getInverse())
        return alloc.emitError("fragment has no layout with an inverse map; "
                               "run tile-infer-layouts first");
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
// copy
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerCopy(CopyOp op) {
  Value src = op.getSource(), dst = op.getTarget();
  Buffer *sb = lookup(src), *db = lookup(dst);
  if ((!sb && !isGlobalType(src.getType())) ||
      (!db && !isGlobalType(dst.getType())))
    return op.emitError("copy operands must be global tensors or tile.alloc "
                        "buffers for the GPU lowering");
  Type srcElt = cast<MemRefType>(src.getType()).getElementType();
  Type dstElt = cast<MemRefType>(dst.getType()).getElementType();
  ArrayRef<int64_t> shape = sb ? sb->type.getShape() : db->type.getShape();
  auto read = [&](ValueRange idx) -> Value {
    Value v = sb ? loadOnChip(*sb, idx)
                 : loadGlobal(src, op.getSourceIndices(), idx, srcElt);
    return convert(v, dstElt);
  };
  auto write = [&](ValueRange idx, Value v) {
    if (db)
      storeOnChip(*db, idx, v);
    else
      storeGlobal(dst, op.getTargetIndices(), idx, v);
  };
  bool dstShared = db && db->scope == MemoryScope::shared;
  // A software-pipeline producer: only issues the copy (the pipeline
  // commits, waits and puts the barriers).
  bool async = asyncCopies.contains(op);

  // Local buffers: every thread copies the whole tile into / out of its own
  // copy; writes to shared or global memory come from thread 0 only.
  if ((sb && sb->scope == MemoryScope::local) ||
      (db && db->scope == MemoryScope::local)) {
    bool toLocal = db && db->scope == MemoryScope::local;
    if (dstShared)
      barrier();
    auto body = [&] { forEachSerial(shape, [&](ValueRange idx) {
      write(idx, read(idx)); }); };
    if (toLocal)
      body();
    else
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                   cst(0)),
             body);
    if (dstShared)
      barrier();
    return success();
  }

  // Into a fragment: each thread fills its own registers.
  if (db && db->scope == MemoryScope::fragment) {
    Buffer *from = sb;
    Value view;
    if (sb && sb->scope == MemoryScope::fragment && !holdsAll(*db, *sb)) {
      // Layout change through shared memory.
      barrier();
      view = scratch(sb->type.getElementType(), numElements(shape));
      fragmentToScratch(*sb, view);
      barrier();
    }
    forEachRegister(db->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> idx = fragmentIndex(*db, r, rc);
      Value v;
      if (view)
        v = convert(memref::LoadOp::create(b, loc, view,
                                           ValueRange{linearize(shape, idx)}),
                    dstElt);
      else
        v = read(idx);
      (void)from;
      storeRegister(*db, r, v);
    });
    if (view)
      barrier();
    return success();
  }

  if (dstShared && !async)
    barrier();
  auto mmaTiling =
      sb && sb->scope == MemoryScope::fragment && !db && shape.size() == 2
          ? matchMmaAccumulatorLayout(sb->layout, shape)
          : std::nullopt;
  Type dstT = dstElt;
  if (mmaTiling && dstT.isIntOrFloat() && dstT.getIntOrFloatBitWidth() >= 8 &&
      dstT.getIntOrFloatBitWidth() <= 32 && sb->registers <= 256) {
    // mma accumulator -> global: registers 2p, 2p + 1 are columns j, j + 1
    // of one row: one 2-element vector store when both are in bounds and
    // the global tensor's rows, the start column and the base are aligned
    // to 2 elements (checked once); otherwise two predicated scalar stores.
    int64_t pairBytes = 2 * dstT.getIntOrFloatBitWidth() / 8;
    Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dst);
    Value cols = memref::DimOp::create(b, loc, dst, 1);
    Value rows = memref::DimOp::create(b, loc, dst, 0);
    Value startI = op.getTargetIndices()[0], startJ = op.getTargetIndices()[1];
    auto isZero = [&](Value v) -> Value {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v,
                                   cst(0));
    };
    Value vecOk = arith::AndIOp::create(
        b, loc, isZero(arith::RemUIOp::create(b, loc, ptr, cst(pairBytes))),
        arith::AndIOp::create(
            b, loc, isZero(arith::RemUIOp::create(b, loc, cols, cst(2))),
            isZero(arith::RemUIOp::create(b, loc, startJ, cst(2)))));
    auto vecType = VectorType::get({2}, dstT);
    for (int64_t p = 0; p < sb->registers / 2; ++p) {
      SmallVector<Value> idx = fragmentIndex(*sb, cst(2 * p), 2 * p);
      Value gi = arith::AddIOp::create(b, loc, startI, idx[0]);
      Value gj = arith::AddIOp::create(b, loc, startJ, idx[1]);
      Value gj1 = arith::AddIOp::create(b, loc, gj, cst(1));
      Value both = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gi, rows),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gj1, cols));
      Value v0 = convert(loadRegister(*sb, cst(2 * p)), dstT);
      Value v1 = convert(loadRegister(*sb, cst(2 * p + 1)), dstT);
      auto ifOp = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, vecOk, both),
          /*withElse=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value vec = vector::FromElementsOp::create(b, loc, vecType,
                                                 ValueRange{v0, v1});
      vector::StoreOp::create(b, loc, vec, dst, ValueRange{gi, gj},
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(pairBytes));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      SmallVector<Value> i0 = {idx[0], idx[1]};
      SmallVector<Value> i1 = {idx[0],
                               arith::AddIOp::create(b, loc, idx[1], cst(1))};
      storeGlobal(dst, op.getTargetIndices(), i0, v0);
      storeGlobal(dst, op.getTargetIndices(), i1, v1);
    }
  } else if (sb && sb->scope == MemoryScope::fragment) {
    // Out of a fragment: each element is written by its canonical owner.
    bool replicated = sb->layout.getReplicate() > 1;
    forEachRegister(sb->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> idx = fragmentIndex(*sb, r, rc);
      auto emit = [&] { write(idx, convert(loadRegister(*sb, r), dstElt)); };
      if (!replicated)
        return emit();
      Value owner = applyMap(sb->layout.getThreadMap(), idx).front();
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, owner,
                                   tid),
             emit);
    });
  } else {
    // Shared/global on both sides: elements distributed over the threads.
    auto scalarPath = [&] {
      forEachLinear(numElements(shape), [&](Value l) {
        SmallVector<Value> idx = delinearize(shape, l);
        write(idx, read(idx));
      });
    };
    if (!(dstShared && !sb &&
          succeeded(lowerCopyAsync(*this, op, scalarPath, !async))))
      scalarPath();
  }
  if (dstShared && !async)
    barrier();
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
  case MemoryScope::shared:
    barrier();
    forEachLinear(numElements(buf->type.getShape()), [&](Value l) {
      memref::StoreOp::create(b, loc, value, buf->storage, ValueRange{l});
    });
    barrier();
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
// gemm (SIMT fallback; tensor cores in Gemm.cpp)
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerGemm(GemmOp op) {
  Buffer *ab = lookup(op.getA()), *bb = lookup(op.getB()),
         *cb = lookup(op.getC());
  if (!ab || !bb || !cb || cb->scope != MemoryScope::fragment)
    return op.emitError("gemm operands must be tile.alloc buffers with a "
                        "fragment accumulator");
  Type accType = cb->type.getElementType();
  if (op.getClear())
    forEachRegister(cb->registers, [&](Value r, int64_t) {
      storeRegister(*cb, r, zeroOf(accType));
    });
  if (ab->scope != MemoryScope::local && bb->scope != MemoryScope::local &&
      succeeded(lowerGemmMma(*this, op)))
    return success();

  // A fragment A operand is staged through shared memory.
  Buffer aStage = *ab;
  bool staged = false;
  if (ab->scope == MemoryScope::fragment) {
    barrier();
    aStage.scope = MemoryScope::shared;
    aStage.swizzle = nullptr;
    aStage.storage = scratch(ab->type.getElementType(),
                             numElements(ab->type.getShape()));
    fragmentToScratch(*ab, aStage.storage);
    barrier();
    staged = true;
  }
  Type computeType = accType.isF16() ? b.getF32Type() : accType;
  bool isFloat = isa<FloatType>(accType);
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  auto loop = scf::ForOp::create(b, loc, cst(0), cst(op.getK()), cst(1));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    forEachRegister(cb->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> ij = fragmentIndex(*cb, r, rc);
      Value i = ij[0], j = ij[1];
      Value a = loadOnChip(aStage, ta ? ValueRange{k, i} : ValueRange{i, k});
      Value bv = loadOnChip(*bb, tb ? ValueRange{j, k} : ValueRange{k, j});
      a = convert(a, computeType);
      bv = convert(bv, computeType);
      Value c = convert(loadRegister(*cb, r), computeType);
      Value sum = isFloat ? (Value)arith::AddFOp::create(
                                b, loc, c, arith::MulFOp::create(b, loc, a, bv))
                          : (Value)arith::AddIOp::create(
                                b, loc, c, arith::MulIOp::create(b, loc, a, bv));
      storeRegister(*cb, r, convert(sum, accType));
    });
  }
  if (staged)
    barrier();
  return success();
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

static Value reduceIdentity(OpBuilder &b, Location loc, ReduceKind kind,
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

/// combine(acc, x); `absFirst` applies |x| first (abssum/absmax on source
/// elements, not on partial results).
static Value reduceCombine(OpBuilder &b, Location loc, ReduceKind kind,
                           Value acc, Value x, bool absFirst) {
  bool isFloat = isa<FloatType>(x.getType());
  if (absFirst && (kind == ReduceKind::abssum || kind == ReduceKind::absmax))
    x = isFloat ? (Value)math::AbsFOp::create(b, loc, x)
                : (Value)math::AbsIOp::create(b, loc, x);
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

LogicalResult KernelLowering::lowerReduce(ReduceOp op) {
  Buffer *sb = lookup(op.getSource()), *tb = lookup(op.getTarget());
  if (!sb || !tb)
    return op.emitError("reduce operands must be tile.alloc buffers");
  ReduceKind kind = op.getKind();
  int64_t dim = op.getDim();
  Type elt = sb->type.getElementType();
  ArrayRef<int64_t> sshape = sb->type.getShape(), tshape = tb->type.getShape();
  int64_t tn = numElements(tshape);
  auto dropDim = [&](ArrayRef<Value> idx) {
    SmallVector<Value> o(idx.begin(), idx.end());
    o.erase(o.begin() + dim);
    return o;
  };

  // Local: the whole reduction in every thread, on its own copy.
  if (sb->scope == MemoryScope::local || tb->scope == MemoryScope::local) {
    if (sb->scope != MemoryScope::local || tb->scope != MemoryScope::local)
      return op.emitError("reduce between a local and a non-local buffer is "
                          "not supported by the GPU lowering");
    forEachSerial(tshape, [&](ValueRange outer) {
      Value init = op.getClear() ? reduceIdentity(b, loc, kind, elt)
                                 : loadOnChip(*tb, outer);
      auto loop = scf::ForOp::create(b, loc, cst(0), cst(sshape[dim]), cst(1),
                                     ValueRange{init});
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.insert(idx.begin() + dim, loop.getInductionVar());
      Value x = loadOnChip(*sb, idx);
      scf::YieldOp::create(b, loc, reduceCombine(b, loc, kind,
                                                 loop.getRegionIterArgs()[0],
                                                 x, true));
      b.setInsertionPointAfter(loop);
      storeOnChip(*tb, outer, loop.getResult(0));
    });
    return success();
  }

  // Fast path: fragment source, target replicated in every thread.
  // Thread-local partials -> warp butterfly (shuffle xor) -> across warps
  // through shared memory.
  unsigned width = elt.getIntOrFloatBitWidth();
  bool shuffleable = width <= 32 && (isa<FloatType>(elt) || width >= 8);
  if (sb->scope == MemoryScope::fragment &&
      tb->scope == MemoryScope::fragment && threads % 32 == 0 && shuffleable &&
      tb->layout.getReplicate() == threads && tb->registers == tn &&
      tb->layout == getReplicatedLayout(b.getContext(), tshape, threads)) {
    Type wide = width == 32 ? elt
                : isa<FloatType>(elt) ? (Type)b.getF32Type()
                                      : (Type)b.getI32Type();
    Value partial = memref::AllocaOp::create(
        b, loc, MemRefType::get({tn}, wide));
    Value ident = convert(reduceIdentity(b, loc, kind, elt), wide);
    for (int64_t o = 0; o < tn; ++o)
      memref::StoreOp::create(b, loc, ident, partial, ValueRange{cst(o)});
    bool replicated = sb->layout.getReplicate() > 1;
    forEachRegister(sb->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> idx = fragmentIndex(*sb, r, rc);
      auto emit = [&] {
        Value o = tshape.empty() ? cst(0) : linearize(tshape, dropDim(idx));
        Value x = convert(loadRegister(*sb, r), wide);
        Value acc = memref::LoadOp::create(b, loc, partial, ValueRange{o});
        memref::StoreOp::create(b, loc,
                                reduceCombine(b, loc, kind, acc, x, true),
                                partial, ValueRange{o});
      };
      if (!replicated)
        return emit();
      Value owner = applyMap(sb->layout.getThreadMap(), idx).front();
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, owner,
                                   tid),
             emit);
    });
    int64_t warps = threads / 32;
    Value view = warps > 1 ? scratch(wide, warps * tn) : Value();
    if (warps > 1)
      barrier();
    SmallVector<Value> totals;
    for (int64_t o = 0; o < tn; ++o) {
      Value v = memref::LoadOp::create(b, loc, partial, ValueRange{cst(o)});
      for (int64_t m = 16; m >= 1; m /= 2) {
        auto sh = gpu::ShuffleOp::create(b, loc, v, i32(m), i32(32),
                                         gpu::ShuffleMode::XOR);
        v = reduceCombine(b, loc, kind, v, sh.getShuffleResult(), false);
      }
      totals.push_back(v);
      if (warps > 1)
        ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, laneId,
                                     cst(0)),
               [&] {
                 Value at = arith::AddIOp::create(
                     b, loc, arith::MulIOp::create(b, loc, warpId, cst(tn)),
                     cst(o));
                 memref::StoreOp::create(b, loc, v, view, ValueRange{at});
               });
    }
    if (warps > 1) {
      barrier();
      for (int64_t o = 0; o < tn; ++o) {
        Value v = ident;
        for (int64_t w = 0; w < warps; ++w)
          v = reduceCombine(
              b, loc, kind, v,
              memref::LoadOp::create(b, loc, view, ValueRange{cst(w * tn + o)}),
              false);
        totals[o] = v;
      }
      barrier();
    }
    for (int64_t o = 0; o < tn; ++o) {
      Value v = convert(totals[o], elt);
      if (!op.getClear())
        v = reduceCombine(b, loc, kind, loadRegister(*tb, cst(o)), v, false);
      storeRegister(*tb, cst(o), v);
    }
    return success();
  }

  // General path: the source in shared memory (staged if a fragment), each
  // target element reduced serially by the thread(s) that hold it.
  Buffer src = *sb;
  bool staged = false;
  barrier();
  if (sb->scope == MemoryScope::fragment) {
    src.scope = MemoryScope::shared;
    src.swizzle = nullptr;
    src.storage = scratch(elt, numElements(sshape));
    fragmentToScratch(*sb, src.storage);
    barrier();
    staged = true;
  }
  auto reduceAt = [&](ValueRange outer, Value init) {
    auto loop = scf::ForOp::create(b, loc, cst(0), cst(sshape[dim]), cst(1),
                                   ValueRange{init});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> idx(outer.begin(), outer.end());
    idx.insert(idx.begin() + dim, loop.getInductionVar());
    Value x = loadOnChip(src, idx);
    scf::YieldOp::create(b, loc,
                         reduceCombine(b, loc, kind,
                                       loop.getRegionIterArgs()[0], x, true));
    return loop.getResult(0);
  };
  if (tb->scope == MemoryScope::fragment) {
    forEachRegister(tb->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> o = fragmentIndex(*tb, r, rc);
      Value init = op.getClear() ? reduceIdentity(b, loc, kind, elt)
                                 : loadRegister(*tb, r);
      storeRegister(*tb, r, reduceAt(o, init));
    });
  } else {
    forEachLinear(tn, [&](Value l) {
      SmallVector<Value> o = delinearize(tshape, l);
      Value init = op.getClear() ? reduceIdentity(b, loc, kind, elt)
                                 : loadOnChip(*tb, o);
      storeOnChip(*tb, o, reduceAt(o, init));
    });
  }
  if (staged || tb->scope == MemoryScope::shared)
    barrier();
  return success();
}

//===----------------------------------------------------------------------===//
// parallel
//===----------------------------------------------------------------------===//

/// The block-argument position of `v` in `body`, or -1.
static int64_t ivPosition(Block &body, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == &body ? arg.getArgNumber() : -1;
}

LogicalResult KernelLowering::lowerParallel(ParallelOp op) {
  Block &body = op.getBodyBlock();
  ArrayRef<int64_t> extents = op.getExtents();
  // Fragment accesses of the body.
  SmallVector<Operation *> accesses;
  bool sideEffects = false, writesShared = false;
  body.walk([&](Operation *inner) {
    Value m;
    if (auto l = dyn_cast<memref::LoadOp>(inner))
      m = l.getMemRef();
    else if (auto s = dyn_cast<memref::StoreOp>(inner))
      m = s.getMemRef();
    if (m) {
      Buffer *buf = lookup(m);
      if (buf && buf->scope == MemoryScope::fragment)
        accesses.push_back(inner);
      else if (isa<memref::StoreOp>(inner))
        (buf ? writesShared : sideEffects) = true;
      return;
    }
    if (isa<memref::AtomicRMWOp, AtomicOp>(inner))
      sideEffects = true;
  });
  auto indicesOf = [](Operation *a) -> ValueRange {
    if (auto l = dyn_cast<memref::LoadOp>(a))
      return l.getIndices();
    return cast<memref::StoreOp>(a).getIndices();
  };
  auto memOf = [](Operation *a) {
    if (auto l = dyn_cast<memref::LoadOp>(a))
      return l.getMemRef();
    return cast<memref::StoreOp>(a).getMemRef();
  };
  auto isDriverAccess = [&](Operation *a) {
    Buffer *buf = lookup(memOf(a));
    if (buf->type.getShape() != extents)
      return false;
    for (auto [d, v] : llvm::enumerate(indicesOf(a)))
      if (ivPosition(body, v) != (int64_t)d)
        return false;
    return true;
  };

  // Choose the driver: a fragment stored (else loaded) at exactly the ivs.
  Buffer *driver = nullptr;
  for (bool stores : {true, false})
    for (Operation *a : accesses)
      if (!driver && isa<memref::StoreOp>(a) == stores && isDriverAccess(a))
        driver = lookup(memOf(a));
  bool fast = driver != nullptr;
  if (fast && driver->layout.getReplicate() > 1 && sideEffects)
    fast = false;
  // Every access must be local to the thread running the iteration, and
  // every store must hit the driver's own slot (all replicas updated).
  if (fast) {
    AffineMap dInv = driver->layout.getInverse();
    for (Operation *a : accesses) {
      Buffer *buf = lookup(memOf(a));
      if (isa<memref::StoreOp>(a)) {
        if (!isDriverAccess(a) || buf->layout != driver->layout) {
          fast = false;
          break;
        }
        continue;
      }
      SmallVector<int64_t> pos;
      SmallVector<int64_t> constants;
      for (Value v : indicesOf(a)) {
        int64_t p = ivPosition(body, v);
        std::optional<int64_t> c = getConstantIntValue(v);
        if (p < 0 && !c) {
          fast = false;
          break;
        }
        pos.push_back(p);
        constants.push_back(c.value_or(0));
      }
      if (!fast)
        break;
      AffineMap oInv = buf->layout.getInverse();
      AffineMap oIdx = buf->layout.getIndexMap();
      ArrayRef<int64_t> oShape = buf->type.getShape();
      for (int64_t t = 0; t < threads && fast; ++t)
        for (int64_t r = 0; r < driver->registers && fast; ++r) {
          SmallVector<int64_t> ivs = dInv.compose({t, r});
          SmallVector<int64_t> idx;
          for (auto [p, c] : llvm::zip(pos, constants))
            idx.push_back(p >= 0 ? ivs[p] : c);
          for (auto [d, v] : llvm::enumerate(idx))
            if (v < 0 || v >= oShape[d])
              fast = false; // out-of-bounds access: leave it to memref
          if (!fast)
            break;
          int64_t slot = oIdx.compose(idx).front();
          if (oInv.compose({t, slot}) != idx)
            fast = false;
        }
    }
  }

  if (writesShared)
    barrier();
  if (fast) {
    forEachRegister(driver->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> ivs = fragmentIndex(*driver, r, rc);
      IRMapping mapping;
      mapping.map(body.getArguments(), ivs);
      for (Operation &inner : body.without_terminator())
        b.clone(inner, mapping);
    });
    if (writesShared)
      barrier();
    return success();
  }

  // General path: fragments go through shared memory, iterations are
  // distributed linearly over the threads.
  llvm::SetVector<Value> frags;
  llvm::DenseSet<Value> written;
  for (Operation *a : accesses) {
    frags.insert(memOf(a));
    if (isa<memref::StoreOp>(a))
      written.insert(memOf(a));
  }
  llvm::DenseMap<Value, Value> views;
  int64_t offset = 0;
  if (!frags.empty()) {
    barrier();
    for (Value f : frags) {
      Buffer *buf = lookup(f);
      views[f] = scratch(buf->type.getElementType(),
                         numElements(buf->type.getShape()), offset);
      offset = llvm::alignTo(
          offset + numElements(buf->type.getShape()) *
                       std::max<int64_t>(
                           1, buf->type.getElementTypeBitWidth() / 8),
          16);
      fragmentToScratch(*buf, views[f]);
    }
    barrier();
  }
  SmallVector<Operation *> clones;
  forEachLinear(numElements(extents), [&](Value l) {
    SmallVector<Value> ivs = delinearize(extents, l);
    IRMapping mapping;
    mapping.map(body.getArguments(), ivs);
    for (Operation &inner : body.without_terminator())
      clones.push_back(b.clone(inner, mapping));
  });
  for (Operation *c : clones)
    if (failed(rewriteAccesses(c, /*fragmentsInRegisters=*/false, &views)))
      return failure();
  if (!frags.empty()) {
    barrier();
    for (Value f : frags)
      if (written.contains(f))
        scratchToFragment(*lookup(f), views[f]);
    barrier();
  } else if (writesShared) {
    barrier();
  }
  return success();
}

/// Rewrites memref.load/store on tile buffers inside `root` (cloned body
/// code) into accesses of their GPU storage. Fragments are read from
/// registers (the caller checked locality) or from `scratchViews`.
LogicalResult
KernelLowering::rewriteAccesses(Operation *root, bool fragmentsInRegisters,
                                llvm::DenseMap<Value, Value> *scratchViews) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp, AtomicOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(op);
    if (auto atomic = dyn_cast<AtomicOp>(op)) {
      if (failed(lowerAtomic(atomic, /*guard=*/false)))
        return failure();
      continue;
    }
    bool isLoad = isa<memref::LoadOp>(op);
    Value mem = isLoad ? cast<memref::LoadOp>(op).getMemRef()
                       : cast<memref::StoreOp>(op).getMemRef();
    Buffer *buf = lookup(mem);
    if (!buf)
      continue;
    SmallVector<Value> idx(isLoad ? cast<memref::LoadOp>(op).getIndices()
                                  : cast<memref::StoreOp>(op).getIndices());
    if (buf->scope == MemoryScope::fragment && !fragmentsInRegisters) {
      Value view = scratchViews ? scratchViews->lookup(mem) : Value();
      if (!view)
        return op->emitError("fragment access outside a tile.parallel is not "
                             "supported by the GPU lowering");
      Value l = linearize(buf->type.getShape(), idx);
      if (isLoad) {
        Value v = memref::LoadOp::create(b, loc, view, ValueRange{l});
        op->getResult(0).replaceAllUsesWith(v);
      } else {
        memref::StoreOp::create(b, loc, cast<memref::StoreOp>(op).getValue(),
                                view, ValueRange{l});
      }
      op->erase();
      continue;
    }
    if (isLoad) {
      Value v = loadOnChip(*buf, idx);
      op->getResult(0).replaceAllUsesWith(v);
    } else {
      storeOnChip(*buf, idx, cast<memref::StoreOp>(op).getValue());
    }
    op->erase();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// atomics
//===----------------------------------------------------------------------===//

static arith::AtomicRMWKind atomicKind(AtomicKind kind, Type type) {
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

LogicalResult KernelLowering::lowerAtomic(AtomicOp op, bool guard) {
  auto emit = [&] {
    Value mem = op.getBuffer();
    SmallVector<Value> idx(op.getIndices());
    if (Buffer *buf = lookup(mem)) {
      mem = buf->storage;
      idx = {sharedIndex(*buf, idx)};
    }
    memref::AtomicRMWOp::create(
        b, loc, atomicKind(op.getKind(), op.getValue().getType()),
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
  arith::AtomicRMWKind kind = atomicKind(op.getKind(), elt);
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
    bool replicated = sb->layout.getReplicate() > 1;
    forEachRegister(sb->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> idx = fragmentIndex(*sb, r, rc);
      auto body = [&] { emit(idx, loadRegister(*sb, r)); };
      if (!replicated)
        return body();
      Value owner = applyMap(sb->layout.getThreadMap(), idx).front();
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, owner,
                                   tid),
             body);
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
// pipelined
//===----------------------------------------------------------------------===//

// With `stages = S >= 2` the loop becomes a multi-stage cp.async software
// pipeline (the CUTLASS multistage scheme). Producers: the global -> shared
// copies of the body (stage 0 unless the `stage` attribute says otherwise);
// consumers: everything else (last stage). A producer of stage s runs
// D = S - 1 - s iterations ahead, and its target gets D + 1 copies in shared
// memory (iteration i uses copy i mod (D + 1)):
//
//   prologue: for s < D: issue the producers of iteration s; commit
//   for i in [0, n):
//     cp.async.wait_group(D - 1); barrier   // iteration i's data landed and
//                                           // is visible; everybody is done
//                                           // with iteration i - 1
//     issue the producers of iteration i + D (if < n); commit
//     consumers of iteration i (reading copy i mod (D + 1))
//   wait_group(0); barrier
//
// The copy issued in iteration i overwrites copy (i - 1) mod (D + 1), which
// iteration i - 1 read before the barrier: no other barrier is needed. Every
// thread commits the same number of groups (empty ones past the end), so
// the group counting is uniform. `order` decides whether the producers are
// issued before or after the consumers. The results are those of the serial
// loop: producers read only loop-invariant global memory (the plan refuses
// loops that write global memory), their targets are read only after them
// in the body, and tails are the copies' own zero fill.
//

/// Whether `v` can be recomputed at the top of an iteration: defined outside
/// the loop, the induction variable, or pure ops of the body over those.
static bool collectSlice(PipelinedOp loop, Value v,
                         llvm::SetVector<Operation *> &slice) {
  if (v == loop.getInductionVar())
    return true;
  if (!loop.getBody().isAncestor(v.getParentRegion()))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &loop.getBodyBlock() ||
      def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!collectSlice(loop, operand, slice))
      return false;
  slice.insert(def);
  return true;
}

/// A copy that can be issued ahead: global -> a shared tile.alloc of the
/// enclosing launch, indices computable ahead, the target written by no
/// other op and read only after the copy by block-level tile ops of the body.
static bool isPipelinableCopy(PipelinedOp loop, Operation *op) {
  auto copy = dyn_cast<CopyOp>(op);
  if (!copy || copy->getBlock() != &loop.getBodyBlock() ||
      !isGlobalType(copy.getSource().getType()))
    return false;
  Value target = copy.getTarget();
  auto alloc = target.getDefiningOp<AllocOp>();
  if (!alloc || alloc.getScope() != MemoryScope::shared ||
      loop->isAncestor(alloc))
    return false;
  llvm::SetVector<Operation *> slice;
  if (!collectSlice(loop, copy.getSource(), slice))
    return false;
  for (Value idx : copy.getSourceIndices())
    if (!collectSlice(loop, idx, slice))
      return false;
  for (Operation *user : target.getUsers()) {
    if (user == op)
      continue;
    if (user->getBlock() != &loop.getBodyBlock() ||
        !isa<CopyOp, GemmOp, ReduceOp>(user) || user->isBeforeInBlock(op))
      return false;
    if (auto c = dyn_cast<CopyOp>(user); c && c.getTarget() == target)
      return false;
    if (auto r = dyn_cast<ReduceOp>(user); r && r.getTarget() == target)
      return false;
    if (auto g = dyn_cast<GemmOp>(user); g && g.getC() == target)
      return false;
  }
  return true;
}

static std::optional<PipelinePlan> planPipeline(PipelinedOp loop) {
  int64_t stages = loop.getStages();
  if (stages < 2 || loop->getParentOfType<PipelinedOp>())
    return std::nullopt;
  Block &body = loop.getBodyBlock();
  bool refuse = false;
  body.walk([&](Operation *inner) {
    if (isa<PipelinedOp, AtomicOp, AtomicTileOp, memref::AtomicRMWOp>(inner))
      refuse = true;
    if (auto c = dyn_cast<CopyOp>(inner))
      refuse |= isGlobalType(c.getTarget().getType());
    if (auto st = dyn_cast<memref::StoreOp>(inner))
      refuse |= isGlobalType(st.getMemRef().getType());
  });
  if (refuse)
    return std::nullopt;
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  auto isPure = [](Operation *op) {
    return op->getNumRegions() == 0 && isMemoryEffectFree(op);
  };

  PipelinePlan plan;
  SmallVector<int64_t> position(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    position[i] = i;
  if (auto order = loop.getOrderAttr(); order && (size_t)order.size() == ops.size())
    for (size_t i = 0; i < ops.size(); ++i)
      position[i] = order[i];
  SmallVector<size_t> producerIdx;
  if (auto stage = loop.getStageAttr(); stage && (size_t)stage.size() == ops.size()) {
    int64_t s0 = -1;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (isPure(ops[i]) || stage[i] >= stages - 1)
        continue;
      if (!isPipelinableCopy(loop, ops[i]) || (s0 >= 0 && stage[i] != s0)) {
        ops[i]->emitWarning("tile.pipelined: this op's stage cannot be "
                            "pipelined (only global->shared copies of one "
                            "common early stage can); the loop runs serially");
        return std::nullopt;
      }
      s0 = stage[i];
      producerIdx.push_back(i);
    }
    plan.distance = stages - 1 - s0;
  } else {
    for (size_t i = 0; i < ops.size(); ++i)
      if (isPipelinableCopy(loop, ops[i]))
        producerIdx.push_back(i);
    plan.distance = stages - 1;
  }
  if (producerIdx.empty())
    return std::nullopt;
  llvm::stable_sort(producerIdx, [&](size_t a, size_t b) {
    return position[a] < position[b];
  });
  int64_t firstConsumer = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < ops.size(); ++i)
    if (!isPure(ops[i]) && !llvm::is_contained(producerIdx, i))
      firstConsumer = std::min(firstConsumer, position[i]);
  plan.issueFirst = position[producerIdx.front()] < firstConsumer;
  for (size_t i : producerIdx)
    plan.producers.push_back(ops[i]);
  return plan;
}

void KernelLowering::planPipelines() {
  func.walk([&](PipelinedOp loop) {
    std::optional<PipelinePlan> plan = planPipeline(loop);
    if (!plan)
      return;
    for (Operation *p : plan->producers)
      multiBuffered[cast<CopyOp>(p).getTarget()] = plan->distance + 1;
    pipelines[loop] = std::move(*plan);
  });
}

Value KernelLowering::stageView(const Buffer &buf, Value slot) {
  Value off = arith::AddIOp::create(
      b, loc, cst(buf.sharedOffset),
      arith::MulIOp::create(b, loc, slot, cst(buf.stageBytes)));
  return memref::ViewOp::create(b, loc, buf.storage.getType(), smem, off,
                                ValueRange{});
}

LogicalResult KernelLowering::lowerPipelined(PipelinedOp op) {
  b.setInsertionPoint(op);
  loc = op.getLoc();
  Block &body = op.getBodyBlock();
  auto planIt = pipelines.find(op);
  if (planIt == pipelines.end()) {
    // The serial loop; copies inside become cp.async where they qualify
    // (issued, then waited for before the barrier that ends the copy).
    auto loop = scf::ForOp::create(b, loc, op.getLowerBound(),
                                   op.getUpperBound(), op.getStep());
    Operation *yield = body.getTerminator();
    Block *loopBody = loop.getBody();
    loopBody->getOperations().splice(
        Block::iterator(loopBody->getTerminator()), body.getOperations(),
        body.begin(), Block::iterator(yield));
    body.getArgument(0).replaceAllUsesWith(loop.getInductionVar());
    op.erase();
    return success();
  }
  const PipelinePlan &plan = planIt->second;
  int64_t D = plan.distance;
  Value lb = op.getLowerBound(), ub = op.getUpperBound(), st = op.getStep();
  // Trip count n = ub > lb ? ceildiv(ub - lb, step) : 0.
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, ub, lb);
  Value span = arith::SelectOp::create(
      b, loc, more, arith::SubIOp::create(b, loc, ub, lb), cst(0));
  Value n = arith::CeilDivUIOp::create(b, loc, span, st);

  // The pure ops each producer's operands need, in body order.
  SmallVector<llvm::SetVector<Operation *>> slices;
  for (Operation *p : plan.producers) {
    llvm::SetVector<Operation *> slice;
    for (Value v : p->getOperands())
      (void)collectSlice(op, v, slice);
    SmallVector<Operation *> sorted(slice.begin(), slice.end());
    llvm::sort(sorted, [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
    slices.emplace_back(sorted.begin(), sorted.end());
  }
  auto tokenType = ::mlir::nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto commit = [&]() -> Value {
    return ::mlir::nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                           ValueRange{});
  };
  // Issues the producers of iteration `iter` into copy `slot`.
  auto issue = [&](Value iter, Value slot) {
    Value iv = arith::AddIOp::create(b, loc, lb,
                                     arith::MulIOp::create(b, loc, iter, st));
    IRMapping mapping;
    mapping.map(op.getInductionVar(), iv);
    for (auto [p, slice] : llvm::zip(plan.producers, slices)) {
      for (Operation *s : slice)
        if (!mapping.contains(s->getResult(0)))
          b.clone(*s, mapping);
      Value target = cast<CopyOp>(p).getTarget();
      Value view = stageView(buffers[target], slot);
      Operation *c = b.clone(*p, mapping);
      asyncCopies.insert(c);
      storageOverrides[c].push_back({target, view});
    }
  };
  auto issueIf = [&](Value iter, Value slot) {
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, iter, n),
           [&] { issue(iter, slot); });
  };

  Value token;
  for (int64_t s = 0; s < D; ++s) {
    issueIf(cst(s), cst(s));
    token = commit();
  }
  // The copy read by iteration i (i mod (D + 1)) is carried by the loop
  // (no 64-bit remainder per iteration); iteration i writes copy
  // (i + D) mod (D + 1) = (i - 1) mod (D + 1).
  auto loop = scf::ForOp::create(b, loc, cst(0), n, cst(1), ValueRange{cst(0)});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value slot = loop.getRegionIterArgs()[0];
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          slot, cst(0));
    Value writeSlot = arith::SelectOp::create(
        b, loc, isFirst, cst(D), arith::SubIOp::create(b, loc, slot, cst(1)));
    Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        slot, cst(D));
    Value nextSlot = arith::SelectOp::create(
        b, loc, wraps, cst(0), arith::AddIOp::create(b, loc, slot, cst(1)));
    scf::YieldOp::create(b, loc, ValueRange{nextSlot});
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ::mlir::nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                             b.getI32IntegerAttr(D - 1));
    barrier();
    auto issueNext = [&] {
      issueIf(arith::AddIOp::create(b, loc, i, cst(D)), writeSlot);
      commit();
    };
    if (plan.issueFirst)
      issueNext();
    Value iv = arith::AddIOp::create(b, loc, lb,
                                     arith::MulIOp::create(b, loc, i, st));
    llvm::DenseMap<Value, Value> views;
    for (Operation *p : plan.producers) {
      Value target = cast<CopyOp>(p).getTarget();
      views[target] = stageView(buffers[target], slot);
    }
    // The consumers (and the pure ops) move into the loop.
    SmallVector<Operation *> consumers;
    for (Operation &inner : body.without_terminator())
      if (!llvm::is_contained(plan.producers, &inner))
        consumers.push_back(&inner);
    for (Operation *c : consumers) {
      c->moveBefore(loop.getBody()->getTerminator());
      for (Value v : c->getOperands())
        if (Value view = views.lookup(v))
          storageOverrides[c].push_back({v, view});
    }
    if (!plan.issueFirst) {
      b.setInsertionPoint(loop.getBody()->getTerminator());
      issueNext();
    }
    // After the issue: its slice clones map the body's induction variable.
    body.getArgument(0).replaceAllUsesWith(iv);
  }
  b.setInsertionPointAfter(loop);
  ::mlir::nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                           b.getI32IntegerAttr(0));
  barrier();
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

FailureOr<int64_t> KernelLowering::run() {
  planPipelines();
  if (failed(createBuffers()))
    return failure();

  SmallVector<PipelinedOp> pipelined;
  func.walk([&](PipelinedOp p) { pipelined.push_back(p); });
  for (PipelinedOp p : llvm::reverse(pipelined))
    if (failed(lowerPipelined(p)))
      return failure();

  SmallVector<Operation *> ops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<CopyOp, GemmOp, FillOp, ClearOp, ReduceOp, ParallelOp, AtomicOp,
            AtomicTileOp>(op)) {
      ops.push_back(op);
      if (isa<ParallelOp>(op))
        return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    loc = op->getLoc();
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
  int64_t total = scratchBytes ? scratchBase + scratchBytes : sharedBytes;

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
