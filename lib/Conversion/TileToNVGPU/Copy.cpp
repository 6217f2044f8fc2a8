//===- Copy.cpp - tile.copy to per-thread code ----------------------------===//
//
// Global, shared, fragment and local tiles in any combination (global ->
// shared through cp.async in CopyAsync.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

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
  // Tile indices are of the on-chip rank; a rank-reducing copy's global
  // side gets a zero offset in each dropped (unit) dim.
  auto read = [&](ValueRange idx) -> Value {
    Value v = sb ? loadOnChip(*sb, idx)
                 : loadGlobal(src, op.getSourceIndices(),
                              op.expandTileIndex(idx, cst(0)), srcElt);
    return convert(v, dstElt);
  };
  auto write = [&](ValueRange idx, Value v) {
    if (db)
      storeOnChip(*db, idx, v);
    else
      storeGlobal(dst, op.getTargetIndices(),
                  op.expandTileIndex(idx, cst(0)), v);
  };
  bool dstShared = db && db->scope == MemoryScope::shared;
  // A software-pipeline producer: only issues the copy (the pipeline
  // commits, waits and puts the barriers).
  bool async = asyncCopies.contains(op);

  // Local buffers: every thread holds the whole tile (docs/dialect.md), so
  // every thread copies the whole tile into its own copy; writes to shared
  // or global memory come from thread 0 only. A fragment is read through
  // shared scratch (a thread holds only its own elements of it) and written
  // register by register (each thread its own elements).
  if ((sb && sb->scope == MemoryScope::local) ||
      (db && db->scope == MemoryScope::local)) {
    bool toLocal = db && db->scope == MemoryScope::local;
    if (db && db->scope == MemoryScope::fragment) {
      forEachRegister(db->registers, [&](Value r, int64_t rc) {
        storeRegister(*db, r, read(fragmentIndex(*db, r, rc)));
      });
      return success();
    }
    if (sb && sb->scope == MemoryScope::fragment) {
      barrier();
      Value view = scratch(srcElt, numElements(shape));
      fragmentToScratch(*sb, view);
      barrier();
      forEachSerial(shape, [&](ValueRange idx) {
        Value v = memref::LoadOp::create(b, loc, view,
                                         ValueRange{linearize(shape, idx)});
        write(idx, convert(v, dstElt));
      });
      barrier();
      return success();
    }
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
  // The paired vector stores need a row-major (identity layout) target
  // whose last dim holds the tile's columns (not a dropped unit dim).
  int64_t dstRank = cast<MemRefType>(dst.getType()).getRank();
  auto mmaTiling =
      sb && sb->scope == MemoryScope::fragment && !db && shape.size() == 2 &&
              cast<MemRefType>(dst.getType()).getLayout().isIdentity() &&
              op.getGlobalDim(1) == dstRank - 1
          ? matchMmaAccumulatorLayout(sb->layout, shape)
          : std::nullopt;
  Type dstT = dstElt;
  if (mmaTiling && dstT.isIntOrFloat() && dstT.getIntOrFloatBitWidth() >= 8 &&
      dstT.getIntOrFloatBitWidth() <= 32 && sb->registers <= 256) {
    // mma accumulator -> global: registers 2p, 2p + 1 are columns j, j + 1
    // of one row: one 2-element vector store when both are in bounds and
    // the global tensor's rows, the start column and the base are aligned
    // to 2 elements (checked once); otherwise two predicated scalar stores.
    // A rank-reducing target: the row is global dim getGlobalDim(0), and
    // the dropped dims' starts are bounds-checked with the pair.
    int64_t pairBytes = 2 * dstT.getIntOrFloatBitWidth() / 8;
    Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dst);
    Value cols = memref::DimOp::create(b, loc, dst, dstRank - 1);
    Value startJ = op.getTargetIndices().back();
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
      SmallVector<Value> gidx;
      for (auto [s, i] : llvm::zip(op.getTargetIndices(),
                                   op.expandTileIndex(idx, cst(0))))
        gidx.push_back(arith::AddIOp::create(b, loc, s, i));
      SmallVector<Value> gidx1(gidx);
      gidx1.back() = arith::AddIOp::create(b, loc, gidx.back(), cst(1));
      Value both = inBounds(dst, gidx1);
      Value v0 = convert(loadRegister(*sb, cst(2 * p)), dstT);
      Value v1 = convert(loadRegister(*sb, cst(2 * p + 1)), dstT);
      auto ifOp = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, vecOk, both),
          /*withElse=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value vec = vector::FromElementsOp::create(b, loc, vecType,
                                                 ValueRange{v0, v1});
      vector::StoreOp::create(b, loc, vec, dst, gidx,
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(pairBytes));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      SmallVector<Value> i1 = {idx[0],
                               arith::AddIOp::create(b, loc, idx[1], cst(1))};
      storeGlobal(dst, op.getTargetIndices(), op.expandTileIndex(idx, cst(0)),
                  v0);
      storeGlobal(dst, op.getTargetIndices(), op.expandTileIndex(i1, cst(0)),
                  v1);
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
    int64_t n = numElements(shape);
    auto scalarPath = [&] {
      // Global -> shared with a few elements per thread: all loads first,
      // then all stores (register staging), so the loads are in flight
      // together instead of each store waiting for its own load. This is
      // the path of a row pitch no cp.async width divides (odd f16 rows).
      // Batches of kStaged elements in a loop bound the registers this
      // holds (a gemm accumulator in the same pipelined loop needs most of
      // them; unrolled, the addresses are hoisted and spill).
      if (!sb && dstShared && succeeded(lowerCopyStaged(*this, op)))
        return;
      constexpr int64_t kStaged = 8;
      int64_t perThread = n / threads;
      if (!sb && dstShared && n % threads == 0 && perThread % kStaged == 0) {
        auto loop = scf::ForOp::create(b, loc, cst(0), cst(perThread),
                                       cst(kStaged));
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(loop.getBody());
        Value base = arith::AddIOp::create(
            b, loc, tid,
            arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                  cst(threads)));
        SmallVector<SmallVector<Value>> idxs;
        SmallVector<Value> vals;
        for (int64_t j = 0; j < kStaged; ++j) {
          Value l = arith::AddIOp::create(b, loc, base, cst(j * threads));
          idxs.push_back(delinearize(shape, l));
          vals.push_back(read(idxs.back()));
        }
        for (auto [idx, v] : llvm::zip(idxs, vals))
          write(idx, v);
        return;
      }
      forEachLinear(n, [&](Value l) {
        SmallVector<Value> idx = delinearize(shape, l);
        write(idx, read(idx));
      });
    };
    bool targetCopy = dstShared && !sb && copyToShared &&
                      succeeded(copyToShared(*this, op));
    if (!targetCopy &&
        !(dstShared && !sb &&
          succeeded(lowerCopyAsync(*this, op, scalarPath, !async))))
      scalarPath();
  }
  if (dstShared && !async)
    barrier();
  return success();
}

