//===- Copy.cpp - tile.copy to per-thread code ----------------------------===//
//
// Global, shared, fragment and local tiles in any combination (global ->
// shared through cp.async in CopyAsync.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"
#include "tile/Dialect/Tile/IR/AffineEval.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// The widest vector (elements, a power of two, at most 16 bytes of
/// `eltBytes`) in which every thread's registers come in runs: registers
/// g*v .. g*v+v-1 hold columns c .. c+v-1 of one row, c % v == 0, in every
/// thread (by enumeration, as holdsAll). 1 when there is none.
static int64_t registerRunWidth(const Buffer &buf, int64_t threads,
                                int64_t eltBytes) {
  ArrayRef<int64_t> shape = buf.type.getShape();
  if (shape.empty() || eltBytes <= 0 || eltBytes > 16)
    return 1;
  AffineMap inv = buf.layout.getInverse();
  for (int64_t v = 16 / eltBytes; v >= 2; v /= 2) {
    if (buf.registers % v != 0 || shape.back() % v != 0)
      continue;
    bool ok = true;
    for (int64_t t = 0; t < threads && ok; ++t)
      for (int64_t r = 0; r < buf.registers && ok; r += v) {
        SmallVector<int64_t> first = evaluateVerifiedAffineMap(inv, {t, r});
        ok = first.back() % v == 0;
        for (int64_t k = 1; k < v && ok; ++k) {
          SmallVector<int64_t> idx = evaluateVerifiedAffineMap(inv, {t, r + k});
          SmallVector<int64_t> want = first;
          want.back() += k;
          ok = idx == want;
        }
      }
    if (ok)
      return v;
  }
  return 1;
}

/// A copy between a global tensor and a fragment in 16-byte (or narrower)
/// vectors: each run of `registerRunWidth` registers is one vector load or
/// store when the launch allows it (the global base aligned to the vector,
/// its row pitch and the copy's start column multiples of the run: checked
/// once) and the run is in bounds; otherwise predicated scalar accesses
/// (tails, odd pitches). failure() with `whyNot` set (nothing emitted) when
/// the layout or the global tensor's type rules it out statically.
static LogicalResult lowerCopyFragmentVector(KernelLowering &kl, CopyOp op,
                                             Buffer &frag, bool toGlobal,
                                             std::string &whyNot) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  Value mem = toGlobal ? op.getTarget() : op.getSource();
  auto memType = cast<MemRefType>(mem.getType());
  Type gElt = memType.getElementType(), fElt = frag.type.getElementType();
  ArrayRef<int64_t> shape = frag.type.getShape();
  int64_t rank = memType.getRank();
  if (shape.empty() || !gElt.isIntOrFloat() ||
      gElt.getIntOrFloatBitWidth() % 8 != 0) {
    whyNot = "the element type has no vector access";
    return failure();
  }
  if (!memType.getLayout().isIdentity() ||
      op.getGlobalDim(shape.size() - 1) != rank - 1) {
    whyNot = "the tile's rows are not contiguous in the global tensor";
    return failure();
  }
  if (frag.registers > 256) {
    whyNot = "more than 256 registers per thread";
    return failure();
  }
  int64_t eltBytes = gElt.getIntOrFloatBitWidth() / 8;
  int64_t v = registerRunWidth(frag, kl.threads, eltBytes);
  if (v < 2) {
    whyNot = "the fragment layout gives no thread two contiguous elements "
             "of a row";
    return failure();
  }
  int64_t vecBytes = v * eltBytes;
  ValueRange starts = toGlobal ? op.getTargetIndices() : op.getSourceIndices();
  auto isZero = [&](Value x) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x,
                                 kl.cst(0));
  };
  auto rem = [&](Value x, int64_t m) -> Value {
    return arith::RemUIOp::create(b, loc, x, kl.cst(m));
  };
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem);
  Value vecOk = arith::AndIOp::create(b, loc, isZero(rem(ptr, vecBytes)),
                                      isZero(rem(starts.back(), v)));
  if (rank > 1) {
    Value pitch = memref::DimOp::create(b, loc, mem, rank - 1);
    vecOk = arith::AndIOp::create(b, loc, vecOk, isZero(rem(pitch, v)));
  }
  auto vecType = VectorType::get({v}, gElt);
  // The global index of register run g's first element, and the index of
  // its k-th element relative to the copy's start.
  auto runStart = [&](int64_t g) {
    SmallVector<Value> idx = kl.fragmentIndex(frag, kl.cst(g * v), g * v);
    SmallVector<Value> rel = op.expandTileIndex(idx, kl.cst(0));
    SmallVector<Value> gidx;
    for (auto [s, i] : llvm::zip(starts, rel))
      gidx.push_back(arith::AddIOp::create(b, loc, s, i));
    return std::make_pair(idx, gidx);
  };
  auto runIndex = [&](ArrayRef<Value> idx, int64_t k) {
    SmallVector<Value> i(idx);
    i.back() = arith::AddIOp::create(b, loc, idx.back(), kl.cst(k));
    return op.expandTileIndex(i, kl.cst(0));
  };
  // The run's first column is a multiple of v (vecOk): its last element in
  // bounds means the whole run is.
  auto runInBounds = [&](ArrayRef<Value> gidx) {
    SmallVector<Value> last(gidx);
    last.back() = arith::AddIOp::create(b, loc, gidx.back(), kl.cst(v - 1));
    return kl.inBounds(mem, last);
  };
  const int64_t runs = frag.registers / v;

  if (toGlobal) {
    for (int64_t g = 0; g < runs; ++g) {
      auto [idx, gidx] = runStart(g);
      Value fast = arith::AndIOp::create(b, loc, vecOk, runInBounds(gidx));
      SmallVector<Value> vals;
      for (int64_t k = 0; k < v; ++k)
        vals.push_back(
            kl.convert(kl.loadRegister(frag, kl.cst(g * v + k)), gElt));
      auto ifOp = scf::IfOp::create(b, loc, fast, /*withElse=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value vec = vector::FromElementsOp::create(b, loc, vecType, vals);
      vector::StoreOp::create(b, loc, vec, mem, gidx, /*nontemporal=*/false,
                              llvm::MaybeAlign(vecBytes));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      for (int64_t k = 0; k < v; ++k)
        kl.storeGlobal(mem, starts, runIndex(idx, k), vals[k]);
    }
    return success();
  }

  // Loads: one vector load per run when the launch allows it (vecOk) and
  // the run is in bounds, else the run's predicated scalar loads. A vector
  // of elements narrower than 32 bits (bf16, f16, i8) crosses the branch
  // join as whole 32-bit words: values of 16 or 8 bits would be unpacked
  // (PRMT) before the join, an instruction that waits for the load, so each
  // run's load would complete before the next one issues. The scalar path
  // (odd pitches) packs its elements into words in its branch and waits
  // there. Measured and not kept for it: its elements yielded unpacked
  // beside the words and selected after the join (a norm's registers went
  // from 114 to 248), and reading a misaligned run as the two aligned
  // blocks around it, realigned in registers (nothing gained on a 4095-
  // element bf16 pitch, whose element-wise stores remain; 10-15% lost on
  // aligned launches to its registers), and a branch on the launch's
  // alignment around all runs, the misaligned side issuing every run's
  // scalar loads before packing any (4097x4095 bf16 residual add + RMSNorm
  // 152 -> 138 us, but 9 more registers: aligned LayerNorms 10-15% slower).
  // Also measured (H200, docs/performance.md "Odd row pitches: 32-bit word
  // accesses"): runs in bounds but not 16-byte aligned read or written as
  // 32-bit words (four aligned words, or the five around a run one bf16
  // past a word, realigned by shifts; stores as element pairs). Odd pitches
  // 1.4-2.2x faster (stores alone: 4097x4095 add + RMSNorm 152 -> 91 us,
  // an int8 dequantize at 5001 columns 57 -> 26 us), but every form slowed
  // some aligned kernel whose PTX on the aligned path did not change
  // (ptxas schedules the larger branches differently): the dequantize
  // 8-18%, LayerNorm 2-15%. Not kept; a kernel variant per alignment,
  // chosen at launch, would avoid the cost.
  int64_t bits = gElt.getIntOrFloatBitWidth();
  Type runType = vecType;
  if (bits < 32 && vecBytes % 4 == 0)
    runType = VectorType::get({vecBytes / 4}, b.getI32Type());
  auto bitcast = [&](Type to, Value x) -> Value {
    return x.getType() == to ? x
                             : (Value)LLVM::BitcastOp::create(b, loc, to, x);
  };
  SmallVector<Value> loaded;
  for (int64_t g = 0; g < runs; ++g) {
    auto [idx, gidx] = runStart(g);
    Value fast = arith::AndIOp::create(b, loc, vecOk, runInBounds(gidx));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{runType}, fast,
                                  /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value vec = vector::LoadOp::create(b, loc, vecType, mem, gidx,
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(vecBytes));
    scf::YieldOp::create(b, loc, bitcast(runType, vec));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    SmallVector<Value> scalars;
    for (int64_t k = 0; k < v; ++k)
      scalars.push_back(kl.loadGlobal(mem, starts, runIndex(idx, k), gElt));
    scf::YieldOp::create(
        b, loc,
        bitcast(runType,
                vector::FromElementsOp::create(b, loc, vecType, scalars)));
    b.setInsertionPointAfter(ifOp);
    loaded.push_back(ifOp.getResult(0));
  }
  // Every run's load is issued before any of them is unpacked, converted
  // or stored: the first use of a loaded value waits for it, and the loads
  // of the whole copy are then in flight together.
  for (auto [g, run] : llvm::enumerate(loaded)) {
    Value vec = bitcast(vecType, run);
    for (int64_t k = 0; k < v; ++k)
      kl.storeRegister(
          frag, kl.cst(g * v + k),
          kl.convert(vector::ExtractOp::create(b, loc, vec, k), fElt));
  }
  return success();
}

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

  // Global <-> fragment: 16-byte vectors where the layout and the launch
  // allow them. A replicated fragment (every thread holds the whole tile,
  // at most 256 elements) is not a bandwidth path and says nothing.
  // Nor does a matrix-core accumulator (its layout is the instruction's;
  // its copy is a gemm's epilogue).
  auto remarkScalar = [&](Buffer &frag, StringRef whyNot) {
    ArrayRef<int64_t> shape = frag.type.getShape();
    if (remarks && frag.layout.getReplicate() == 1 &&
        !matchMmaAccumulatorLayout(frag.layout, shape) &&
        !matchMfmaAccumulatorLayout(frag.layout, shape))
      op.emitRemark("tile.copy between global memory and a fragment uses "
                    "scalar accesses: ")
          << whyNot;
  };
  if (!sb && db->scope == MemoryScope::fragment) {
    std::string whyNot;
    if (succeeded(lowerCopyFragmentVector(*this, op, *db, /*toGlobal=*/false,
                                          whyNot)))
      return success();
    remarkScalar(*db, whyNot);
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
  std::string whyNot;
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
  } else if (sb && sb->scope == MemoryScope::fragment && !db &&
             sb->layout.getReplicate() == 1 &&
             succeeded(lowerCopyFragmentVector(*this, op, *sb,
                                               /*toGlobal=*/true, whyNot))) {
    // Fragment -> global in 16-byte vectors (above).
  } else if (sb && sb->scope == MemoryScope::fragment) {
    // Out of a fragment: each element is written by its canonical owner.
    if (!db)
      remarkScalar(*sb, whyNot);
    forEachOwnedRegister(*sb, [&](Value r, ArrayRef<Value> idx) {
      write(ValueRange(idx), convert(loadRegister(*sb, r), dstElt));
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

