//===- Gemm.cpp - tile.gemm to per-thread code ----------------------------===//
//
// Tensor cores: mma.sync (m16n8k16 f16/bf16, m16n8k8 tf32) when C has the
// mma accumulator layout (tile-infer-layouts) and B is shared; operand
// fragments come from ldmatrix (f16/bf16, any transposition) or scalar
// shared loads (tf32). Each warp owns a (M/wm) x (N/wn) tile of C. A is
// shared, or (f16/bf16) a fragment in the A-operand register layout: the
// accumulator layout with whole rows per warp, where the registers of n8
// tiles 2kk and 2kk+1 are the m16n8k16 A fragment of k-step kk (P of P.V
// in attention, converted elementwise from the S accumulator) -- read
// straight from its registers.
//
// Otherwise (SIMT, with a remark when asked for): every thread accumulates
// the C elements its fragment registers hold over K, reading A and B from
// on-chip buffers (a fragment A operand is staged through shared memory
// first).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

//===----------------------------------------------------------------------===//
// gemm (SIMT unless lowerGemmMma applies)
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerGemm(GemmOp op) {
  Buffer *ab = lookup(op.getA()), *bb = lookup(op.getB()),
         *cb = lookup(op.getC());
  if (!ab || !bb || !cb || cb->scope != MemoryScope::fragment)
    return op.emitError("gemm operands must be tile.alloc buffers with a "
                        "fragment accumulator");
  // wgmma when planned (run()); clones of a planned gemm (the versions of a
  // software-pipelined loop) use the same aligned operands.
  if (!wgmmaPlans.empty() && wgmmaOperands.contains(op.getB()) &&
      (ab->scope == MemoryScope::fragment ||
       wgmmaOperands.contains(op.getA()))) {
    std::string whyNot;
    if (auto plan = planWgmma(op, chip, whyNot)) {
      lowerGemmWgmma(*this, op, *plan);
      return success();
    }
  }
  Type accType = cb->type.getElementType();
  if (op.getClear())
    forEachRegister(cb->registers, [&](Value r, int64_t) {
      storeRegister(*cb, r, zeroOf(accType));
    });
  std::string whyNot = "an operand is a local buffer";
  if (ab->scope != MemoryScope::local && bb->scope != MemoryScope::local &&
      succeeded(matrixGemm(*this, op, whyNot)))
    return success();
  if (remarks)
    op.emitRemark("tile.gemm lowered to SIMT FMAs (no tensor cores): ")
        << whyNot;

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

LogicalResult mlir::tile::nvgpu_lowering::lowerGemmMma(KernelLowering &kl,
                                                       GemmOp op,
                                                       std::string &whyNot) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  Buffer *ab = kl.lookup(op.getA()), *bb = kl.lookup(op.getB()),
         *cb = kl.lookup(op.getC());
  auto fail = [&](const Twine &why) {
    whyNot = why.str();
    return failure();
  };
  if (smVersion(kl.chip) < 80)
    return fail("chip " + kl.chip + " has no mma.sync (sm_80 or newer)");
  if (bb->scope != MemoryScope::shared)
    return fail("B is not a shared buffer");
  bool fragA = ab->scope == MemoryScope::fragment;
  if (!fragA && ab->scope != MemoryScope::shared)
    return fail("A is neither a shared buffer nor a fragment");
  auto tiling = matchMmaAccumulatorLayout(cb->layout, cb->type.getShape());
  if (!tiling)
    return fail("C does not have the mma.sync accumulator layout (M a "
                "multiple of 16 per warp row, N of 8 per warp column)");
  Type at = ab->type.getElementType(), bt = bb->type.getElementType(),
       ct = cb->type.getElementType();
  if (at != bt)
    return fail("A and B have different element types");
  bool half = at.isF16() || at.isBF16();
  bool tf32 = at.isF32();
  if (!(at.isF16() && (ct.isF16() || ct.isF32())) &&
      !(at.isBF16() && ct.isF32()) && !(tf32 && ct.isF32()))
    return fail("no mma.sync for these element types (f16 x f16 -> f16/f32, "
                "bf16 x bf16 -> f32, f32 (tf32) -> f32)");
  int64_t kStep = half ? 16 : 8;
  if (op.getK() % kStep)
    return fail("K = " + Twine(op.getK()) + " is not a multiple of " +
                Twine(kStep));
  // A fragment A operand: the accumulator layout of M x K with whole rows
  // per warp and the same warp rows as C (tile-infer-layouts chooses it).
  std::optional<MmaWarpTiling> aTiling;
  if (fragA) {
    if (!half)
      return fail("a fragment A operand must be f16 or bf16");
    if (op.getTransposeA())
      return fail("a fragment A operand cannot be transposed");
    aTiling = matchMmaAccumulatorLayout(ab->layout, ab->type.getShape());
    if (!aTiling || aTiling->warpsN != 1 || tiling->warpsN != 1 ||
        aTiling->warpsM != tiling->warpsM)
      return fail("the fragment A operand is not in the mma A-operand "
                  "register layout (the accumulator layout with whole rows "
                  "per warp, warp rows as in C)");
  }
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
    if (fragA) {
      // Registers of n8 tiles 2kk, 2kk+1 of m16 tile mi (constant k0).
      int64_t kk = *getConstantIntValue(k0) / 16;
      int64_t base = (mi * (aTiling->warpN / 8) + 2 * kk) * 4;
      SmallVector<Value> elts;
      for (int64_t r = 0; r < 8; ++r)
        elts.push_back(kl.loadRegister(*ab, kl.cst(base + r)));
      aFrags.push_back(vector::FromElementsOp::create(
          b, loc, vecType(4, 2, at), elts));
      continue;
    }
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
  if (op.getK() / kStep <= 8 || fragA) {
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
