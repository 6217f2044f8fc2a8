//===- Mfma.cpp - tile.gemm on AMD matrix cores (amdgpu.mfma) -------------===//
//
// The MFMA gemm of convert-tile-to-amdgpu (GPUTargetInfo::matrixGemm): C is
// an f32 fragment in the MFMA 16x16 accumulator layout
// (tile-infer-layouts{matrix-core=mfma}), A and B are f16 or bf16 buffers
// in LDS. Each wave owns a warpM x warpN block of C made of 16x16 tiles;
// per 16-deep k step, lane l reads 4 consecutive k of row l % 16 of each A
// tile (k offset 4 * (l / 16)) and of column l % 16 of each B tile, and
// every (A tile, B tile) pair is one amdgpu.mfma 16x16x16 (gfx90a/gfx942:
// v_mfma_f32_16x16x16{f16,bf16_1k}) on that tile's 4 accumulator registers.
// Operand rows with k contiguous in LDS (A, and B^T) are one 8-byte
// ds_read per lane; the 8-byte-chunk swizzle of getMfmaLdsSwizzle keeps the
// chunk whole and the 16 rows on distinct banks.
//
//===----------------------------------------------------------------------===//

#include "TileToROCDL.h"

#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

/// 4 consecutive elements along the contiguous (last) dim of `buf` at
/// `idx`: one 8-byte vector load when the swizzle keeps 8-byte chunks whole.
static Value loadFour(KernelLowering &kl, const Buffer &buf,
                      SmallVector<Value> idx, bool contiguous) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  Type elt = buf.type.getElementType();
  auto vecType = VectorType::get({4}, elt);
  if (contiguous)
    return vector::LoadOp::create(b, loc, vecType, buf.storage,
                                  ValueRange{kl.sharedIndex(buf, idx)},
                                  /*nontemporal=*/false, llvm::Align(8));
  // k strided (B not transposed): 4 scalar LDS reads.
  SmallVector<Value> elts;
  Value k0 = idx[0];
  for (int64_t v = 0; v < 4; ++v) {
    idx[0] = arith::AddIOp::create(b, loc, k0, kl.cst(v));
    elts.push_back(kl.loadOnChip(buf, idx));
  }
  return vector::FromElementsOp::create(b, loc, vecType, elts);
}

LogicalResult mlir::tile::rocdl_lowering::lowerGemmMfma(KernelLowering &kl,
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
  if (ab->scope != MemoryScope::shared || bb->scope != MemoryScope::shared)
    return fail("MFMA reads A and B from LDS: an operand is not a shared "
                "buffer");
  Type at = ab->type.getElementType(), bt = bb->type.getElementType(),
       ct = cb->type.getElementType();
  if (at != bt || !(at.isF16() || at.isBF16()) || !ct.isF32())
    return fail("no MFMA for these element types (f16 x f16 -> f32, "
                "bf16 x bf16 -> f32)");
  auto tiling = matchMfmaAccumulatorLayout(cb->layout, cb->type.getShape());
  if (!tiling)
    return fail("C does not have the MFMA 16x16 accumulator layout (M and N "
                "multiples of 16 per wave, threads a multiple of 64)");
  int64_t kDim = op.getK();
  if (kDim % 16 != 0)
    return fail("K (" + Twine(kDim) + ") is not a multiple of 16");
  // A chunk of 4 k-contiguous elements must stay whole under the swizzle.
  auto chunkWhole = [](Buffer *buf) {
    return !buf->swizzle || buf->swizzle.getBits() == 0 ||
           buf->swizzle.getBase() >= 3;
  };
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  bool aContig = !ta && chunkWhole(ab) && ab->type.getShape()[1] % 4 == 0;
  bool bContig = tb && chunkWhole(bb) && bb->type.getShape()[1] % 4 == 0;

  int64_t tilesM = tiling->warpM / 16, tilesN = tiling->warpN / 16;
  Value waveRow = arith::DivUIOp::create(b, loc, kl.warpId,
                                         kl.cst(tiling->warpsN));
  Value waveCol = arith::RemUIOp::create(b, loc, kl.warpId,
                                         kl.cst(tiling->warpsN));
  Value mBase = arith::MulIOp::create(b, loc, waveRow, kl.cst(tiling->warpM));
  Value nBase = arith::MulIOp::create(b, loc, waveCol, kl.cst(tiling->warpN));
  Value row = arith::RemUIOp::create(b, loc, kl.laneId, kl.cst(16));
  Value kOff = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, kl.laneId, kl.cst(16)),
      kl.cst(4));
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto f32x4 = VectorType::get({4}, b.getF32Type());

  auto loop = scf::ForOp::create(b, loc, kl.cst(0), kl.cst(kDim), kl.cst(16));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value k = add(loop.getInductionVar(), kOff);
  SmallVector<Value> aFrags, bFrags;
  for (int64_t tm = 0; tm < tilesM; ++tm) {
    Value i = add(mBase, add(kl.cst(tm * 16), row));
    aFrags.push_back(loadFour(kl, *ab, ta ? SmallVector<Value>{k, i}
                                          : SmallVector<Value>{i, k},
                              aContig));
  }
  for (int64_t tn = 0; tn < tilesN; ++tn) {
    Value j = add(nBase, add(kl.cst(tn * 16), row));
    bFrags.push_back(loadFour(kl, *bb, tb ? SmallVector<Value>{j, k}
                                          : SmallVector<Value>{k, j},
                              bContig));
  }
  for (int64_t tm = 0; tm < tilesM; ++tm)
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      int64_t base = (tm * tilesN + tn) * 4;
      SmallVector<Value> acc;
      for (int64_t r = 0; r < 4; ++r)
        acc.push_back(kl.loadRegister(*cb, kl.cst(base + r)));
      Value c = vector::FromElementsOp::create(b, loc, f32x4, acc);
      Value d = amdgpu::MFMAOp::create(b, loc, f32x4, /*m=*/16, /*n=*/16,
                                       /*k=*/16, /*blocks=*/1, aFrags[tm],
                                       bFrags[tn], c, /*cbsz=*/0,
                                       /*abid=*/0, amdgpu::MFMAPermB::none,
                                       false, false, false, false);
      for (int64_t r = 0; r < 4; ++r)
        kl.storeRegister(*cb, kl.cst(base + r),
                         vector::ExtractOp::create(b, loc, d, r));
    }
  return success();
}
