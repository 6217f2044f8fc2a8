//===- Parallel.cpp - tile.parallel to per-thread code --------------------===//
//
// Register-local iterations when every access is local to the thread that
// runs the iteration, else iterations distributed over the threads with
// fragments (and written local buffers) staged in shared memory.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"
#include "tile/Dialect/Tile/IR/AffineEval.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Dialect/Tile/Transforms/Layouts.h"

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

//===----------------------------------------------------------------------===//
// parallel
//===----------------------------------------------------------------------===//

/// The block-argument position of `v` in `body`, or -1.
static int64_t ivPosition(Block &body, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  // int64_t first: `cond ? unsigned : -1` would make the -1 unsigned.
  return arg && arg.getOwner() == &body ? int64_t(arg.getArgNumber()) : -1;
}

LogicalResult KernelLowering::lowerParallel(ParallelOp op) {
  Block &body = op.getBodyBlock();
  ArrayRef<int64_t> extents = op.getExtents();
  // Fragment accesses of the body.
  SmallVector<Operation *> accesses;
  // Local buffers the body writes: every thread holds the whole tile but
  // runs only its share of the iterations, so the body works on a shared
  // copy of the tile that every thread copies back afterwards (the
  // block-wide value of docs/dialect.md, as on the CPU).
  llvm::SetVector<Value> localsWritten;
  // Stores to global memory and atomics: not idempotent across the replicas
  // of a replicated driver. (Shared writes are synchronized by the caller:
  // KernelLowering::writesSharedMemory.)
  bool sideEffects = false;
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
      else if (buf && buf->scope == MemoryScope::local) {
        if (isa<memref::StoreOp>(inner))
          localsWritten.insert(m);
      } else if (isa<memref::StoreOp>(inner) && !buf) {
        sideEffects = true;
      }
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
  bool fast = driver != nullptr && localsWritten.empty();
  if (fast && driver->layout.getReplicate() > 1 && sideEffects)
    fast = false;
  // Every access must be local to the thread running the iteration, and
  // every store must hit the driver's own slot (all replicas updated).
  // The register slot of each fragment access per driver register, when it
  // is the same in every thread (-1 otherwise): accesses are then emitted
  // with constant slots, which keeps the per-thread arrays in registers
  // (a slot computed from the thread id would put them in local memory).
  llvm::DenseMap<Operation *, SmallVector<int64_t>> constSlots;
  if (fast) {
    AffineMap dInv = driver->layout.getInverse();
    for (Operation *a : accesses) {
      Buffer *buf = lookup(memOf(a));
      if (isDriverAccess(a) && buf->layout == driver->layout) {
        SmallVector<int64_t> &slots = constSlots[a];
        for (int64_t r = 0; r < driver->registers; ++r)
          slots.push_back(r);
        continue;
      }
      if (isa<memref::StoreOp>(a)) {
        fast = false;
        break;
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
      SmallVector<int64_t> &slots = constSlots[a];
      slots.assign(driver->registers, -2); // -2: not seen yet
      for (int64_t t = 0; t < threads && fast; ++t)
        for (int64_t r = 0; r < driver->registers && fast; ++r) {
          SmallVector<int64_t> ivs = evaluateVerifiedAffineMap(dInv, {t, r});
          SmallVector<int64_t> idx;
          for (auto [p, c] : llvm::zip(pos, constants))
            idx.push_back(p >= 0 ? ivs[p] : c);
          for (auto [d, v] : llvm::enumerate(idx))
            if (v < 0 || v >= oShape[d])
              fast = false; // out-of-bounds access: leave it to memref
          if (!fast)
            break;
          int64_t slot = evaluateVerifiedAffineMap(oIdx, idx).front();
          if (evaluateVerifiedAffineMap(oInv, {t, slot}) != idx)
            fast = false;
          slots[r] = slots[r] == -2 || slots[r] == slot ? slot : -1;
        }
    }
  }

  if (fast) {
    forEachRegister(driver->registers, [&](Value r, int64_t rc) {
      SmallVector<Value> ivs = fragmentIndex(*driver, r, rc);
      IRMapping mapping;
      mapping.map(body.getArguments(), ivs);
      for (Operation &inner : body.without_terminator()) {
        auto it = constSlots.find(&inner);
        int64_t slot = rc >= 0 && it != constSlots.end() ? it->second[rc] : -1;
        if (slot < 0) {
          b.clone(inner, mapping);
          continue;
        }
        Buffer *buf = lookup(memOf(&inner));
        if (auto st = dyn_cast<memref::StoreOp>(&inner)) {
          storeRegister(*buf, cst(slot),
                        mapping.lookupOrDefault(st.getValue()));
          continue;
        }
        mapping.map(inner.getResult(0), loadRegister(*buf, cst(slot)));
      }
    });
    return success();
  }

  // General path: fragments go through shared memory, iterations are
  // distributed linearly over the threads.
  if (remarks && !accesses.empty()) {
    StringRef why =
        !driver ? "no fragment is stored or loaded at exactly the induction "
                  "variables"
        : !localsWritten.empty() ? "the body writes a local buffer"
        : driver->layout.getReplicate() > 1 && sideEffects
            ? "the driving fragment is replicated and the body writes global "
              "memory or uses atomics"
            : "a fragment access is not held by the thread running the "
              "iteration, or a store does not hit the driving fragment's "
              "register";
    op.emitRemark("tile.parallel staged through shared memory, iterations "
                  "distributed over the threads: ")
        << why;
  }
  llvm::SetVector<Value> frags;
  llvm::DenseSet<Value> written;
  for (Operation *a : accesses) {
    frags.insert(memOf(a));
    if (isa<memref::StoreOp>(a))
      written.insert(memOf(a));
  }
  for (Value l : localsWritten) {
    frags.insert(l);
    written.insert(l);
  }
  llvm::DenseMap<Value, Value> views;
  int64_t offset = 0;
  if (!frags.empty()) {
    barrier();
    for (Value f : frags) {
      Buffer *buf = lookup(f);
      ArrayRef<int64_t> shape = buf->type.getShape();
      views[f] = scratch(buf->type.getElementType(), numElements(shape),
                         offset);
      offset = llvm::alignTo(
          offset + numElements(shape) *
                       std::max<int64_t>(
                           1, buf->type.getElementTypeBitWidth() / 8),
          16);
      if (buf->scope == MemoryScope::fragment) {
        fragmentToScratch(*buf, views[f]);
        continue;
      }
      // Local: all threads' copies are equal; each stores a share.
      Value view = views[f];
      forEachLinear(numElements(shape), [&](Value l) {
        memref::StoreOp::create(b, loc, loadOnChip(*buf, delinearize(shape, l)),
                                view, ValueRange{l});
      });
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
    for (Value f : frags) {
      if (!written.contains(f))
        continue;
      Buffer *buf = lookup(f);
      if (buf->scope == MemoryScope::fragment) {
        scratchToFragment(*buf, views[f]);
        continue;
      }
      Value view = views[f];
      ArrayRef<int64_t> shape = buf->type.getShape();
      forEachSerial(shape, [&](ValueRange idx) {
        storeOnChip(*buf, idx,
                    memref::LoadOp::create(b, loc, view,
                                           ValueRange{linearize(shape, idx)}));
      });
    }
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
    Value localView = buf->scope == MemoryScope::local && scratchViews
                          ? scratchViews->lookup(mem)
                          : Value();
    if ((buf->scope == MemoryScope::fragment && !fragmentsInRegisters) ||
        localView) {
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

