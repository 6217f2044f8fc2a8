//===- Gemm.cpp - tensor-core gemm and cp.async fast paths ----------------===//
//
// gemm: mma.sync (m16n8k16 f16/bf16, m16n8k8 tf32) when C has the
// mma accumulator layout (tile-infer-layouts), A and B are shared; operand
// fragments come from ldmatrix (f16/bf16, any transposition) or scalar
// shared loads (tf32). Each warp owns a (M/wm) x (N/wn) tile of C.
//
// copy global -> shared: 16-byte cp.async (nvgpu.device_async_copy) with
// src-size zero fill for out-of-bounds tails (zero-byte copies for chunks
// wholly outside, addresses not clamped), when the tile's rows are whole
// 16-byte chunks; a runtime check (row length, start column and base
// address alignment) falls back to the scalar copy. Producers of a
// versioned software pipeline (Pipeline.cpp) skip the check (done once
// before the loop) and take the iteration's range as a predicate.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

static int64_t smVersion(StringRef chip) {
  int64_t v = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip = chip.take_while([](char c) { return c >= '0' && c <= '9'; });
  if (chip.getAsInteger(10, v))
    return 0;
  return v;
}

LogicalResult mlir::tile::nvgpu_lowering::lowerGemmMma(KernelLowering &kl,
                                                       GemmOp op) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  Buffer *ab = kl.lookup(op.getA()), *bb = kl.lookup(op.getB()),
         *cb = kl.lookup(op.getC());
  if (smVersion(kl.chip) < 80 || ab->scope != MemoryScope::shared ||
      bb->scope != MemoryScope::shared)
    return failure();
  auto tiling = matchMmaAccumulatorLayout(cb->layout, cb->type.getShape());
  if (!tiling)
    return failure();
  Type at = ab->type.getElementType(), bt = bb->type.getElementType(),
       ct = cb->type.getElementType();
  if (at != bt)
    return failure();
  bool half = at.isF16() || at.isBF16();
  bool tf32 = at.isF32();
  if (!(at.isF16() && (ct.isF16() || ct.isF32())) &&
      !(at.isBF16() && ct.isF32()) && !(tf32 && ct.isF32()))
    return failure();
  int64_t kStep = half ? 16 : 8;
  if (op.getK() % kStep)
    return failure();
  // ldmatrix reads 16-byte rows: the swizzle must keep 16-byte chunks.
  auto ldmatrixOk = [&](Buffer *buf) {
    return half && (!buf->swizzle || buf->swizzle.getBits() == 0 ||
                    buf->swizzle.getBase() >= 4) &&
           buf->type.getShape()[1] % 8 == 0;
  };
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  int64_t tilesM = tiling->warpM / 16, tilesN = tiling->warpN / 8;

  Value warpRow = arith::DivUIOp::create(b, loc, kl.warpId,
                                         kl.cst(tiling->warpsN));
  Value warpCol = arith::RemUIOp::create(b, loc, kl.warpId,
                                         kl.cst(tiling->warpsN));
  Value mBase = arith::MulIOp::create(b, loc, warpRow, kl.cst(tiling->warpM));
  Value nBase = arith::MulIOp::create(b, loc, warpCol, kl.cst(tiling->warpN));
  Value lane = kl.laneId;
  Value g = arith::DivUIOp::create(b, loc, lane, kl.cst(4));
  Value t4 = arith::RemUIOp::create(b, loc, lane, kl.cst(4));
  Value l8 = arith::RemUIOp::create(b, loc, lane, kl.cst(8));
  Value q = arith::DivUIOp::create(b, loc, lane, kl.cst(8)); // 0..3
  Value qLo = arith::RemUIOp::create(b, loc, q, kl.cst(2));
  Value qHi = arith::DivUIOp::create(b, loc, q, kl.cst(2));
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, int64_t c) -> Value {
    return arith::MulIOp::create(b, loc, x, kl.cst(c));
  };
  // Element (row, col) of op(A) (MxK) / op(B) (KxN) from shared memory.
  auto loadA = [&](Value m, Value k) {
    return kl.loadOnChip(*ab, ta ? ValueRange{k, m} : ValueRange{m, k});
  };
  auto loadB = [&](Value k, Value n) {
    return kl.loadOnChip(*bb, tb ? ValueRange{n, k} : ValueRange{k, n});
  };
  auto vecType = [&](int64_t rows, int64_t cols, Type e) {
    return VectorType::get({rows, cols}, e);
  };
  // nvgpu.mma.sync has no bf16 (its NVVM lowering only deduces f16, tf32,
  // s8, s4, f64; and its tf32 deduction fails on f32 operands in MLIR 22):
  // tf32 goes to nvvm.mma.sync directly, and bf16 fragments are loaded as
  // f16 bits (ldmatrix on an f16 view of the same shared bytes) and the mma
  // is emitted as nvvm.mma.sync with i32 operand registers.
  bool bf16 = at.isBF16();
  Type ldT = bf16 ? (Type)b.getF16Type() : at;
  auto ldSource = [&](Buffer *buf) -> Value {
    if (!bf16)
      return buf->storage;
    auto view = buf->storage.getDefiningOp<memref::ViewOp>();
    auto type = cast<MemRefType>(buf->storage.getType());
    return memref::ViewOp::create(
        b, loc,
        MemRefType::get(type.getShape(), ldT, MemRefLayoutAttrInterface(),
                        type.getMemorySpace()),
        view.getSource(), view.getByteShift(), ValueRange{});
  };

  // One k-step (kStep columns of A / rows of B) of every warp tile.
  auto emitStep = [&](Value k0) {

  SmallVector<Value> aFrags, bFrags;
  for (int64_t mi = 0; mi < tilesM; ++mi) {
    Value m0 = add(mBase, kl.cst(mi * 16));
    if (ldmatrixOk(ab)) {
      // Lane l addresses row l%8 of 8x8 matrix q = l/8; matrix q is
      // register q of the A fragment.
      Value row, col;
      if (!ta) { // As[m][k]: matrices (m +0/+8 by q%2, k +0/+8 by q/2)
        row = add(m0, add(mul(qLo, 8), l8));
        col = add(k0, mul(qHi, 8));
      } else { // As[k][m], transposed load
        row = add(k0, add(mul(qHi, 8), l8));
        col = add(m0, mul(qLo, 8));
      }
      Value idx = kl.sharedIndex(*ab, {row, col});
      aFrags.push_back(::mlir::nvgpu::LdMatrixOp::create(
          b, loc, vecType(4, 2, ldT), ldSource(ab), ValueRange{idx},
          /*transpose=*/ta, /*numTiles=*/4));
      continue;
    }
    SmallVector<Value> elts;
    if (half) {
      for (int64_t reg = 0; reg < 4; ++reg)
        for (int64_t h = 0; h < 2; ++h) {
          Value m = add(m0, add(g, kl.cst((reg % 2) * 8)));
          Value k = add(k0, add(mul(t4, 2), kl.cst((reg / 2) * 8 + h)));
          elts.push_back(loadA(m, k));
        }
      aFrags.push_back(vector::FromElementsOp::create(
          b, loc, vecType(4, 2, at), elts));
    } else {
      for (int64_t reg = 0; reg < 4; ++reg) {
        Value m = add(m0, add(g, kl.cst((reg % 2) * 8)));
        Value k = add(k0, add(t4, kl.cst((reg / 2) * 4)));
        elts.push_back(loadA(m, k));
      }
      aFrags.push_back(vector::FromElementsOp::create(
          b, loc, vecType(4, 1, at), elts));
    }
  }
  for (int64_t nj = 0; nj < tilesN; ++nj) {
    Value n0 = add(nBase, kl.cst(nj * 8));
    if (ldmatrixOk(bb) && tilesN % 2 == 0) {
      // Two 8-column tiles per ldmatrix.x4: matrix q covers k +0/+8 by q%2
      // and n +0/+8 by q/2; registers 0-1 are tile nj, 2-3 tile nj + 1.
      if (nj % 2)
        continue;
      Value row, col;
      if (!tb) { // Bs[k][n], transposed load
        row = add(k0, add(mul(qLo, 8), l8));
        col = add(n0, mul(qHi, 8));
      } else { // Bs[n][k]
        row = add(n0, add(mul(qHi, 8), l8));
        col = add(k0, mul(qLo, 8));
      }
      Value idx = kl.sharedIndex(*bb, {row, col});
      Value both = ::mlir::nvgpu::LdMatrixOp::create(
          b, loc, vecType(4, 2, ldT), ldSource(bb), ValueRange{idx},
          /*transpose=*/!tb, /*numTiles=*/4);
      // (A leading-dimension shuffle: canonicalize would turn extracts into
      // an extract_strided_slice, which the NVVM lowering does not take.)
      for (int64_t h = 0; h < 2; ++h)
        bFrags.push_back(vector::ShuffleOp::create(
            b, loc, both, both, ArrayRef<int64_t>{2 * h, 2 * h + 1}));
      continue;
    }
    if (ldmatrixOk(bb)) {
      Value row, col;
      if (!tb) { // Bs[k][n], transposed load: matrices k +0/+8 by q%2
        row = add(k0, add(mul(qLo, 8), l8));
        col = n0;
      } else { // Bs[n][k]
        row = add(n0, l8);
        col = add(k0, mul(qLo, 8));
      }
      Value idx = kl.sharedIndex(*bb, {row, col});
      bFrags.push_back(::mlir::nvgpu::LdMatrixOp::create(
          b, loc, vecType(2, 2, ldT), ldSource(bb), ValueRange{idx},
          /*transpose=*/!tb, /*numTiles=*/2));
      continue;
    }
    SmallVector<Value> elts;
    if (half) {
      for (int64_t reg = 0; reg < 2; ++reg)
        for (int64_t h = 0; h < 2; ++h) {
          Value k = add(k0, add(mul(t4, 2), kl.cst(reg * 8 + h)));
          elts.push_back(loadB(k, add(n0, g)));
        }
      bFrags.push_back(vector::FromElementsOp::create(
          b, loc, vecType(2, 2, bt), elts));
    } else {
      for (int64_t reg = 0; reg < 2; ++reg) {
        Value k = add(k0, add(t4, kl.cst(reg * 4)));
        elts.push_back(loadB(k, add(n0, g)));
      }
      bFrags.push_back(vector::FromElementsOp::create(
          b, loc, vecType(2, 1, bt), elts));
    }
  }
  SmallVector<int64_t> mmaShape = {16, 8, kStep};
  for (int64_t mi = 0; mi < tilesM; ++mi)
    for (int64_t nj = 0; nj < tilesN; ++nj) {
      int64_t base = (mi * tilesN + nj) * 4;
      SmallVector<Value> cs;
      for (int64_t r = 0; r < 4; ++r)
        cs.push_back(kl.loadRegister(*cb, kl.cst(base + r)));
      if (bf16 || tf32) {
        // Operand registers are b32: two bf16 or one tf32 (an f32 whose
        // low 13 mantissa bits the tensor core ignores) each.
        auto regs = [&](Value frag) {
          SmallVector<Value> out;
          int64_t rows = cast<VectorType>(frag.getType()).getDimSize(0);
          for (int64_t r = 0; r < rows; ++r) {
            Value reg =
                tf32 ? (Value)vector::ExtractOp::create(
                           b, loc, frag, ArrayRef<int64_t>{r, 0})
                     : (Value)vector::ExtractOp::create(
                           b, loc, frag, ArrayRef<int64_t>{r});
            out.push_back(
                LLVM::BitcastOp::create(b, loc, b.getI32Type(), reg));
          }
          return out;
        };
        NVVM::MMATypes inT =
            tf32 ? NVVM::MMATypes::tf32 : NVVM::MMATypes::bf16;
        Type f32 = b.getF32Type();
        auto resType = LLVM::LLVMStructType::getLiteral(
            b.getContext(), SmallVector<Type>(4, f32));
        auto mma = NVVM::MmaOp::create(
            b, loc, resType, regs(aFrags[mi]), regs(bFrags[nj]), cs,
            mmaShape, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{inT, inT},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t r = 0; r < 4; ++r)
          kl.storeRegister(*cb, kl.cst(base + r),
                           LLVM::ExtractValueOp::create(
                               b, loc, mma.getResult(), ArrayRef<int64_t>{r}));
        continue;
      }
      Value c = vector::FromElementsOp::create(b, loc, vecType(2, 2, ct), cs);
      auto mma = ::mlir::nvgpu::MmaSyncOp::create(
          b, loc, aFrags[mi], bFrags[nj], c, b.getI64ArrayAttr(mmaShape));
      if (tf32)
        mma->setAttr(::mlir::nvgpu::MmaSyncOp::getTf32EnabledAttrName(
                         mma->getName()),
                     b.getUnitAttr());
      for (int64_t r = 0; r < 4; ++r) {
        Value d = vector::ExtractOp::create(b, loc, mma.getResult(),
                                            ArrayRef<int64_t>{r / 2, r % 2});
        kl.storeRegister(*cb, kl.cst(base + r), d);
      }
    }
  };
  // Unrolled (constant k offsets) for the usual BK: ldmatrix of the next
  // k-step can be scheduled among the MMAs of this one.
  if (op.getK() / kStep <= 8) {
    for (int64_t k = 0; k < op.getK(); k += kStep)
      emitStep(kl.cst(k));
    return success();
  }
  auto loop = scf::ForOp::create(b, loc, kl.cst(0), kl.cst(op.getK()),
                                 kl.cst(kStep));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  emitStep(loop.getInductionVar());
  return success();
}

std::optional<int64_t>
mlir::tile::nvgpu_lowering::copyAsyncVector(KernelLowering &kl, CopyOp op) {
  Buffer *db = kl.lookup(op.getTarget());
  Value src = op.getSource();
  auto srcType = dyn_cast<MemRefType>(src.getType());
  if (!db || db->scope != MemoryScope::shared || kl.lookup(src) || !srcType)
    return std::nullopt;
  Type elt = db->type.getElementType();
  if (smVersion(kl.chip) < 80 || srcType.getElementType() != elt ||
      !elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() < 8)
    return std::nullopt;
  // 16-byte chunks along the tile's last dim must be contiguous in a
  // row-major source: its last dim is not a dropped unit dim (drop_dims).
  if (!srcType.getLayout().isIdentity() ||
      op.getGlobalDim(db->type.getRank() - 1) != srcType.getRank() - 1)
    return std::nullopt;
  int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  int64_t vec = 16 / eltBytes;
  if (db->type.getShape().back() % vec)
    return std::nullopt;
  if (db->swizzle && db->swizzle.getBits() && db->swizzle.getBase() < 4)
    return std::nullopt;
  return vec;
}

Value mlir::tile::nvgpu_lowering::copyAsyncAligned(KernelLowering &kl,
                                                   CopyOp op) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  Value src = op.getSource();
  int64_t rank = cast<MemRefType>(src.getType()).getRank();
  int64_t vec = *copyAsyncVector(kl, op);
  Value lastDim = memref::DimOp::create(b, loc, src, rank - 1);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, src);
  auto zeroRem = [&](Value v, int64_t m) -> Value {
    Value r = arith::RemUIOp::create(b, loc, v, kl.cst(m));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, r,
                                 kl.cst(0));
  };
  return arith::AndIOp::create(b, loc, zeroRem(lastDim, vec),
                               zeroRem(ptr, 16));
}

LogicalResult mlir::tile::nvgpu_lowering::lowerCopyAsync(
    KernelLowering &kl, CopyOp op, function_ref<void()> scalarPath,
    bool commitAndWait) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  std::optional<int64_t> maybeVec = copyAsyncVector(kl, op);
  if (!maybeVec)
    return failure();
  Buffer *db = kl.lookup(op.getTarget());
  Value src = op.getSource();
  int64_t vec = *maybeVec;
  ArrayRef<int64_t> shape = db->type.getShape();
  // The global rank (a rank-reducing copy's source has more dims).
  int64_t rank = cast<MemRefType>(src.getType()).getRank();
  Value lastDim = memref::DimOp::create(b, loc, src, rank - 1);
  // A producer of a versioned pipeline (lowerPipelined) is aligned for the
  // whole loop: no check here; `guard` false makes every chunk zero-byte.
  bool aligned = kl.alignedCopies.contains(op);
  Value guard = kl.copyGuards.lookup(op);

  // Runtime: rows of the global tensor and the start column are whole
  // 16-byte chunks and the base address is 16-byte aligned.
  OpBuilder::InsertionGuard outer(b);
  if (!aligned) {
    Value start = op.getSourceIndices().back();
    Value startOk = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, start, kl.cst(vec)), kl.cst(0));
    Value ok = arith::AndIOp::create(b, loc, copyAsyncAligned(kl, op), startOk);
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/true);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scalarPath();
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  {
    int64_t chunks = 1;
    for (int64_t d : shape)
      chunks *= d;
    chunks /= vec;
    auto tokenType = ::mlir::nvgpu::DeviceAsyncTokenType::get(b.getContext());
    // Chunk c = tid + j * threads; unrolled (constant j) so that the
    // address arithmetic folds and the copies are independent.
    std::function<void(function_ref<void(Value)>)> forEachChunk =
        [&](function_ref<void(Value)> fn) {
      for (int64_t j = 0; j * kl.threads < chunks; ++j) {
        Value c = arith::AddIOp::create(b, loc, kl.tid,
                                        kl.cst(j * kl.threads));
        if ((j + 1) * kl.threads <= chunks) {
          fn(c);
          continue;
        }
        kl.ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                        kl.cst(chunks)),
                  [&] { fn(c); });
      }
    };
    if (chunks > 64 * kl.threads)
      forEachChunk = [&](function_ref<void(Value)> fn) {
        kl.forEachLinear(chunks, fn);
      };
    forEachChunk([&](Value c) {
      Value first = arith::MulIOp::create(b, loc, c, kl.cst(vec));
      SmallVector<Value> idx = kl.delinearize(shape, first);
      SmallVector<Value> offsets = op.expandTileIndex(idx, kl.cst(0));
      SmallVector<Value> gidx;
      Value rowOk = guard;
      for (int64_t d = 0; d < rank; ++d) {
        Value gd = arith::AddIOp::create(b, loc, op.getSourceIndices()[d],
                                         offsets[d]);
        gidx.push_back(gd);
        if (d == rank - 1)
          break;
        Value ext = memref::DimOp::create(b, loc, src, d);
        Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         gd, ext);
        rowOk = rowOk ? (Value)arith::AndIOp::create(b, loc, rowOk, in) : in;
      }
      // Valid elements of the chunk: clamp(lastDim - column, 0, vec). An
      // out-of-bounds chunk is a zero-byte copy (src-size 0 reads nothing,
      // so its address needs no clamping).
      Value col = gidx.back();
      Value colIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          col, lastDim);
      Value left = arith::SubIOp::create(b, loc, lastDim, col);
      Value valid = arith::MinUIOp::create(b, loc, left, kl.cst(vec));
      Value any = rowOk ? (Value)arith::AndIOp::create(b, loc, rowOk, colIn)
                        : colIn;
      valid = arith::SelectOp::create(b, loc, any, valid, kl.cst(0));
      Value dst = kl.sharedIndex(*db, idx);
      ::mlir::nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokenType, db->storage, ValueRange{dst}, src, gidx,
          b.getIndexAttr(vec), valid, /*bypassL1=*/b.getUnitAttr());
    });
    if (commitAndWait) {
      Value group = ::mlir::nvgpu::DeviceAsyncCreateGroupOp::create(
          b, loc, tokenType, ValueRange{});
      ::mlir::nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                               b.getI32IntegerAttr(0));
    }
  }
  return success();
}
