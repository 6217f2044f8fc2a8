//===- Narrow.cpp - skinny GEMMs as a swapped product ---------------------===//
//
// The narrow schedule (KernelBuilder.h, NarrowKernel; metadata "max_rows"):
// for launches whose A and C have at most R = ws.narrowRows rows (a GEMV-
// like M <= 16), the split-K kernel (grid (tiles, S), the K range of slice
// s, the workspace tree of SplitK.cpp) computes only the first R rows of
// each launch tile, as
//
//   C^T[TN x R] = B^T[TN x K] . A^T[K x R]
//
// so that N fills wgmma's 64-row M dimension and the R rows of A its N:
// an m64nRk16 wgmma per 16 K, one 64-column box of B per consumer
// warpgroup. The stage layout is the one TMA writes for the other
// variants: A's R x 64 box, K-major with the 128B swizzle (wgmma's B
// operand as it is, K-major), then B's 64 x 64 boxes, N contiguous (wgmma's
// A operand transposed, MN-major: the same descriptor the other kernels
// give B, 8-row groups 1024 bytes apart; an N x K B's boxes, transpose_b,
// are K-major and read as they are). A 16 K step advances A's descriptor
// by 32 bytes within its swizzled rows and B's by 16 rows (2048 bytes; a
// K-major box also by 32 bytes).
//
// Why: the 128-row split-K kernel runs a 1-row GEMM as 128-row tiles (one
// CTA per SM, 128x the tensor work, the second consumer warpgroup idle);
// profiled on the H200 it waited on its loads with SMs active 65% of the
// time (docs/performance.md, "Skinny GEMMs"). The narrow CTA is small
// (ws.ctasPerSm CTAs per SM, each with its stages of B in flight) and its
// partials are R x TN, so the tree moves little.
//
// Correctness for any launch it is given rests on two facts: the runtime
// launches it only when A and C have at most R rows (max_rows), and the
// matcher proved the tile row origins non-negative (narrowRowsApply), so
// every row of C the launch stores is in the first R rows of its tile.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

Value NarrowKernel::swappedMainLoop() {
  auto f32 = b.getF32Type();
  const int64_t R = ws.narrowRows;
  const int64_t perThread = 64 * R / 128;
  auto accT =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(perThread, f32));
  Value zero = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
  Value acc0 = LLVM::PoisonOp::create(b, loc, accT);
  for (int64_t i = 0; i < perThread; ++i)
    acc0 = LLVM::InsertValueOp::create(b, loc, acc0, zero,
                                       ArrayRef<int64_t>{i});

  auto descAType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType({R, kBlockK}, m.inType));
  auto descBType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType(bBoxShape(), m.inType));
  auto wgmmaType = [&](Type t) {
    return NVVM::WGMMATypesAttr::get(
        ctx, t.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16);
  };
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, int(R), 16);
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // wgmma's A is B's box: transposed (col, MN-major), or, for an N x K B
  // (transpose_b), K-major (row) like A's; wgmma's B (col): K-major. A 16
  // K step moves a K-major operand 32 bytes along its swizzled rows, an
  // MN-major one 16 rows of 128 bytes.
  auto col = NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col);
  auto layoutA = m.transB ? NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row)
                          : col;
  const int64_t colsStep = m.transB ? 16 * 2 : 16 * 128;

  auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1),
                                 ValueRange{acc0});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value acc = loop.getRegionIterArg(0);
    Value stage = waitFull(i);
    Value stageOff = mul(stage, cst(stageBytes()));
    Value aTile = view(smemType({R, kBlockK}, m.inType), stageOff);
    Value bBox = view(smemType(bBoxShape(), m.inType),
                      add(stageOff, add(cst(aBytes()),
                                        mul(wg, cst(bBoxBytes())))));
    Value rowsDesc = descriptorBits(nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc, descAType, aTile, tmaA));
    Value colsDesc = descriptorBits(nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc, descBType, bBox, tmaB));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kk = 0; kk < kBlockK / 16; ++kk)
      acc = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, accT, acc, descriptorPlus(colsDesc, kk * colsStep),
          descriptorPlus(rowsDesc, kk * 16 * 2), shape, wgmmaType(m.inType),
          wgmmaType(m.inType),
          NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
          NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one,
          one, layoutA, col, NVVM::MMAIntOverflowAttr{});
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    // wait_group 1: the previous iteration's group is complete, so its
    // stage may be refilled (finishTile releases the last one).
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
    releasePrevious(i, i);
    scf::YieldOp::create(b, loc, acc);
  }
  return loop.getResult(0);
}

void NarrowKernel::consumer(IRMapping &mapping) {
  IRMapping tm = mapping;
  mapTile(tileId, tm);
  Value acc = swappedMainLoop();
  finishTile(cst(0));
  // The values only after wait_group 0 (finishTile).
  SmallVector<Value> vals;
  for (int64_t v = 0; v < 64 * ws.narrowRows / 128; ++v)
    vals.push_back(
        LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{v}));

  // wgmma's m64nR f32 accumulator layout, read as C^T: warp w (of the
  // warpgroup's 4) and lane l hold, for each 8-column group j of the
  // product (8 rows of C), values 4j + e at product row 16w + l/4 +
  // 8(e/2) (a column of C: this warpgroup's 64 columns) and product
  // column 8j + 2(l%4) + e%2 (a row of C). Relative to the tile origin:
  Value lane = remu(tid, cst(32));
  Value warp = remu(divu(tid, cst(32)), cst(4));
  Value colRel =
      add(mul(wg, cst(64)), add(mul(warp, cst(16)), divu(lane, cst(4))));
  Value rowRel = mul(remu(lane, cst(4)), cst(2));
  auto rowOf = [&](int64_t v) { return add(rowRel, cst(8 * (v / 4) + v % 2)); };
  auto colOf = [&](int64_t v) { return add(colRel, cst(8 * ((v % 4) / 2))); };

  Value C = tm.lookup(m.C);
  Value cRow = tm.lookup(m.cRow), cCol = tm.lookup(m.cCol);
  Value M = memref::DimOp::create(b, loc, C, 0);
  Value N = memref::DimOp::create(b, loc, C, 1);
  // Vector j (values 4j..4j+3: rows rowRel + 8j + {0, 1}, columns colRel +
  // {0, 8}) goes through the slots when its first row and column are in C:
  // a 1-row GEMM moves a quarter of the lanes' first vector only.
  Value colLive = cmp(arith::CmpIPredicate::ult, add(cCol, colRel), N);
  auto vectorLive = [&](int64_t j) -> Value {
    Value rowLive =
        cmp(arith::CmpIPredicate::ult, add(cRow, rowOf(4 * j)), M);
    return arith::AndIOp::create(b, loc, rowLive, colLive).getResult();
  };
  auto [root, total] = reduceSlices(vals, 4, vectorLive);

  // The root: the launch's elementwise epilogue on each value, then C's
  // elements (rows < M, columns < N) as predicated stores.
  auto ifRoot = scf::IfOp::create(b, loc, TypeRange{}, root, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifRoot.getThenRegion().front());
  for (int64_t v = 0; v < int64_t(total.size()); ++v) {
    Value r = rowOf(v), c = colOf(v);
    Value out = applyEpilogue(tm, total[v], r, c);
    if (!m.outType.isF32())
      out = arith::TruncFOp::create(b, loc, m.outType, out);
    Value row = add(cRow, r), colC = add(cCol, c);
    Value ok = arith::AndIOp::create(
        b, loc, cmp(arith::CmpIPredicate::ult, row, M),
        cmp(arith::CmpIPredicate::ult, colC, N));
    predicatedStore(C, row, colC, out, ok);
  }
}
