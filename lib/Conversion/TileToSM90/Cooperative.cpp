//===- Cooperative.cpp - one output tile per CTA --------------------------===//
//
// The non-persistent schedule (KernelBuilder.h): the launch's grid, one
// tile per CTA. `consumers` warpgroups each own 64 accumulator rows; the
// producer runs the tile's K tiles through the stages once. Epilogue:
// wgmma wait 0; consumers' named barrier; accumulators -> a TMxTN f32
// staging tile over the front of the (now idle) stage buffers; barrier;
// bounds-checked (vectorized when aligned) stores of C converted to its
// element type.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tile/Conversion/LaunchUtils.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

LogicalResult CooperativeKernel::mapLaunch(IRMapping &mapping) {
  SmallVector<Value> blockIdx, gridDim;
  for (gpu::Dimension d :
       {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
    blockIdx.push_back(gpu::BlockIdOp::create(b, loc, d));
    gridDim.push_back(gpu::GridDimOp::create(b, loc, d));
  }
  // The launch body's index computations (tile origins); the rest of the
  // body is what this kernel implements.
  if (failed(cloneLaunchBody(b, m.launch, mapping, blockIdx, gridDim,
                             [](Operation &op) {
                               return op.getNumRegions() == 0 &&
                                      isMemoryEffectFree(&op) &&
                                      !isa<AllocOp>(op);
                             })))
    return failure();
  mapBatchOfC(mapping);
  return success();
}

void CooperativeKernel::producer(IRMapping &mapping) {
  Value aRow = mapping.lookup(m.aRow), bCol = mapping.lookup(m.bCol);
  auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
  b.setInsertionPointToStart(loop.getBody());
  Value it = loop.getInductionVar();
  emitLoad(it, it, aRow, bCol, batchValues(m.aBatch, mapping),
           batchValues(m.bBatch, mapping));
}

void CooperativeKernel::consumer(IRMapping &mapping) {
  Value acc = mainLoop(cst(0));
  epilogue(acc, mapping);
}

void CooperativeKernel::epilogue(Value acc, IRMapping &mapping) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  int64_t consumerThreads = ws.consumers * 128;
  // Every consumer is done reading the stage buffers the staging tile
  // overlaps.
  namedBarrier(1, consumerThreads);
  // warpgroup.mma.store places rows by the CTA-wide warp id (warp w owns
  // rows 16w..16w+15), so each consumer warpgroup, given the tile's base,
  // writes its own 64 rows of the TMxTN staging tile.
  Value staging =
      view(smemType({64, m.tileN}, b.getF32Type()), cst(0));
  nvgpu::WarpgroupMmaStoreOp::create(b, loc, acc, staging);
  namedBarrier(1, consumerThreads);

  Value tileF32 = view(smemType({m.tileM, m.tileN}, b.getF32Type()), cst(0));
  Value C = mapping.lookup(m.C);
  Value cRow = mapping.lookup(m.cRow), cCol = mapping.lookup(m.cCol);
  Value M = memref::DimOp::create(b, loc, C, 0);
  Value N = memref::DimOp::create(b, loc, C, 1);
  constexpr int64_t vec = 4;
  int64_t outBytes = m.outType.getIntOrFloatBitWidth() / 8;
  // Whole 4-element stores need N % 4 == 0, the column start % 4 == 0 and
  // the base aligned to 4 elements (row starts then are).
  Value cBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, C);
  Value aligned = arith::AndIOp::create(
      b, loc,
      cmp(arith::CmpIPredicate::eq, remu(cBase, cst(vec * outBytes)), cst(0)),
      arith::AndIOp::create(
          b, loc, cmp(arith::CmpIPredicate::eq, remu(N, cst(vec)), cst(0)),
          cmp(arith::CmpIPredicate::eq, remu(cCol, cst(vec)), cst(0))));
  int64_t total = m.tileM * m.tileN;
  int64_t iters = total / (vec * consumerThreads);
  auto vf32 = VectorType::get({vec}, b.getF32Type());
  auto vout = VectorType::get({vec}, m.outType);
  auto loop = scf::ForOp::create(b, loc, cst(0), cst(iters), cst(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value e = mul(add(mul(loop.getInductionVar(), cst(consumerThreads)), tid),
                cst(vec));
  Value r = divu(e, cst(m.tileN)), c = remu(e, cst(m.tileN));
  Value gr = add(cRow, r), gc = add(cCol, c);
  Value v = vector::LoadOp::create(b, loc, vf32, tileF32, ValueRange{r, c});
  if (!m.epilogue.empty()) {
    // The launch's elementwise epilogue, element by element.
    SmallVector<Value> elts;
    for (int64_t j = 0; j < vec; ++j)
      elts.push_back(applyEpilogue(
          mapping, vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{j}),
          r, add(c, cst(j))));
    v = vector::FromElementsOp::create(b, loc, vf32, elts);
  }
  if (!m.outType.isF32())
    v = arith::TruncFOp::create(b, loc, vout, v);
  Value rowOk = cmp(arith::CmpIPredicate::ult, gr, M);
  Value whole = arith::AndIOp::create(
      b, loc, aligned, cmp(arith::CmpIPredicate::ule, add(gc, cst(vec)), N));
  auto ifRow = scf::IfOp::create(b, loc, TypeRange{}, rowOk, false);
  b.setInsertionPointToStart(&ifRow.getThenRegion().front());
  auto ifWhole = scf::IfOp::create(b, loc, TypeRange{}, whole, true);
  b.setInsertionPointToStart(&ifWhole.getThenRegion().front());
  auto st = vector::StoreOp::create(b, loc, v, C, ValueRange{gr, gc});
  st.setAlignment(vec * outBytes);
  b.setInsertionPointToStart(&ifWhole.getElseRegion().front());
  for (int64_t j = 0; j < vec; ++j) {
    Value col = add(gc, cst(j));
    auto ifCol = scf::IfOp::create(
        b, loc, TypeRange{}, cmp(arith::CmpIPredicate::ult, col, N), false);
    OpBuilder::InsertionGuard g3(b);
    b.setInsertionPointToStart(&ifCol.getThenRegion().front());
    Value x = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{j});
    memref::StoreOp::create(b, loc, x, C, ValueRange{gr, col});
  }
}
