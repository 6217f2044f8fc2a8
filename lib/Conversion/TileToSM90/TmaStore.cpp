//===- TmaStore.cpp - the persistent kernel's TMA-store epilogue ----------===//
//
// ws.tmaStore (persistent cooperative and wide-tile kernels, 16-bit C;
// KernelBuilder.h): the kernel takes a third tensor map (C, box 64x64,
// 128B swizzle); each consumer warpgroup writes its accumulators 64
// columns at a time into one of its two swizzled 64x64 staging buffers
// (after the stages) and thread 0 of the warpgroup stores the chunk with
// cp.async.bulk.tensor, reusing a buffer only after wait_group.read 1; the
// stores overlap the next tile's main loop. The map is optional: for a
// launch whose C no tensor map describes the runtime passes null, and the
// warpgroup copies each staged chunk to C itself (copyOutChunk).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

void PersistentKernel::afterLastTile() {
  if (!ws.tmaStore)
    return;
  // The last tile's stores have completed before the CTA exits (nothing
  // is pending when C's map was null).
  Value issuer = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
  auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                       UnitAttr{});
}

void PersistentKernel::stagedStoreValues(ArrayRef<Value> vals,
                                         IRMapping &mapping,
                                         int64_t firstChunk, bool viaTma) {
  // Accumulator layout as in epilogueFromRegisters: warp w, lane l hold,
  // for 8-column group j, (4j, 4j+1) at row 16w + l/4, columns 8j +
  // 2(l%4) + {0,1}, and (4j+2, 4j+3) 8 rows below. Chunk c (columns
  // 64c..64c+63) goes to staging buffer (firstChunk + c) % 2 of this
  // warpgroup (chunks per CTA tile are even, so the alternation continues
  // across tiles), a 64x64
  // tile with the 128B swizzle (16-byte unit u of row r at u ^ (r % 8));
  // r % 8 = l / 4, so a warp's pair stores hit 32 distinct banks.
  // Without TMA (viaTma false: C's map is null for this launch) the
  // warpgroup then copies the chunk out itself, a row segment of 32
  // elements per warp instruction (64 bytes: 2 sectors, against 8 rows
  // per instruction for stores straight from the accumulator layout),
  // bounds-checked element by element, since C's pitch need not allow
  // anything wider.
  int64_t width = 2 * int64_t(vals.size());
  assert(width % 64 == 0 && "whole 64-column chunks");
  auto f32 = b.getF32Type();

  Value cRow = add(mapping.lookup(m.cRow), rowInTile());
  Value cCol = mapping.lookup(m.cCol);
  Value lane = remu(tid, cst(32));
  Value warp = remu(divu(tid, cst(32)), cst(4));
  Value quad = divu(lane, cst(4)); // row % 8
  Value pairCol = mul(remu(lane, cst(4)), cst(2));
  Value row0 = add(mul(warp, cst(16)), quad);
  Value row1 = add(row0, cst(8));
  Value issuer = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
  int64_t barrier = 4 + 0; // + wg below (ids 4, 5; 1-3 are taken)
  Value barId = toI32(add(wg, cst(barrier)));
  auto bar = [&]() {
    NVVM::BarrierOp::create(b, loc, TypeRange{}, barId, i32(128),
                            /*reductionOp=*/{}, /*reductionPredicate=*/Value{});
  };
  auto v2f32 = VectorType::get({2}, f32);
  auto v2out = VectorType::get({2}, m.outType);
  Value bufBase = add(cst(ws.stages * stageBytes()), mul(wg, cst(2 * 8192)));
  for (int64_t c = 0; c < width / 64; ++c) {
    // The buffer's previous store (two commits ago) has read it. A tile's
    // first chunk waits for every store when a tile may have committed an
    // odd number of chunks (the last commit may then be this buffer's).
    if (viaTma) {
      auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
      const bool allDone = firstChunk + c == 0 && oddChunkCounts();
      NVVM::CpAsyncBulkWaitGroupOp::create(
          b, loc, b.getI32IntegerAttr(allDone ? 0 : 1), b.getUnitAttr());
    }
    bar();
    Value buf = view(smemType({64, 64}, m.outType),
                     add(bufBase, cst(((firstChunk + c) % 2) * 8192)));
    for (int64_t jj = 0; jj < 8; ++jj) {
      int64_t j = c * 8 + jj;
      Value col = add(mul(arith::XOrIOp::create(b, loc, quad, cst(jj)),
                          cst(8)),
                      pairCol);
      for (int64_t half = 0; half < 2; ++half) {
        Value v = vector::FromElementsOp::create(
            b, loc, v2f32,
            ValueRange{vals[4 * j + 2 * half], vals[4 * j + 2 * half + 1]});
        v = arith::TruncFOp::create(b, loc, v2out, v);
        auto st = vector::StoreOp::create(b, loc, v, buf,
                                          ValueRange{half ? row1 : row0, col});
        st.setAlignment(4);
      }
    }
    if (!viaTma) {
      bar();
      copyOutChunk(buf, mapping, cRow, add(cCol, cst(64 * c)));
      continue;
    }
    // Generic-proxy writes visible to the async proxy, then one thread
    // stores the chunk (TMA clips rows/columns outside C).
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    bar();
    auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
    // The buffer as C's map has it (unit batch dims first, batchBox).
    Value src = buf;
    if (!m.cBatch.empty())
      src = view(smemType(batchBox(m.C, {64, 64}), m.outType),
                 add(bufBase, cst(((firstChunk + c) % 2) * 8192)));
    nvgpu::TmaAsyncStoreOp::create(
        b, loc, src, tmaC,
        tmaCoords({add(cCol, cst(64 * c)), cRow},
                  batchValues(m.cBatch, mapping)),
        Value{});
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  }
}

void PersistentKernel::copyOutChunk(Value buf, IRMapping &mapping, Value row0,
                                    Value col0) {
  // Thread p of the warpgroup: column p % 64, rows p / 64, + 2, + 4, ...;
  // a warp covers 32 consecutive columns of one row. The staging layout
  // (128B swizzle): element (r, c) at (((c / 8) ^ (r % 8)) * 8 + c % 8).
  Value C = mapping.lookup(m.C);
  Value M = memref::DimOp::create(b, loc, C, 0);
  Value N = memref::DimOp::create(b, loc, C, 1);
  Value p = remu(tid, cst(128));
  Value colIn = remu(p, cst(64));
  Value rowHalf = divu(p, cst(64));
  Value within = remu(colIn, cst(8));
  Value col = add(col0, colIn);
  Value colOk = cmp(arith::CmpIPredicate::ult, col, N);
  // kRows rows per iteration, their shared loads issued before their
  // stores: one load and one store per iteration waited out the shared
  // load's latency 32 times per chunk (the whole chunk unrolled spilled
  // in the wide kernel, which holds the other half's accumulator values
  // meanwhile). The stores are predicated PTX stores, not branches: with
  // a branch around each store, ptxas moved every shared load next to
  // its store again (the SASS of the unrolled loop: LDS, branch, STG, 32
  // times in a row). Row rowHalf + 16i + 2k has r % 8 = rowHalf ^ (2k %
  // 8) (rowHalf is 0 or 1), so each k's swizzled column is loop
  // invariant.
  constexpr int64_t kRows = 8;
  Value unitHalf = arith::XOrIOp::create(b, loc, divu(colIn, cst(8)), rowHalf);
  SmallVector<Value> swz;
  for (int64_t k = 0; k < kRows; ++k)
    swz.push_back(add(
        mul(arith::XOrIOp::create(b, loc, unitHalf, cst((2 * k) % 8)), cst(8)),
        within));
  auto loop = scf::ForOp::create(b, loc, cst(0), cst(64 / (2 * kRows)),
                                 cst(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value rBase = add(rowHalf, mul(loop.getInductionVar(), cst(2 * kRows)));
  SmallVector<Value> rows, vals;
  for (int64_t k = 0; k < kRows; ++k) {
    rows.push_back(add(rBase, cst(2 * k)));
    vals.push_back(
        memref::LoadOp::create(b, loc, buf, ValueRange{rows.back(), swz[k]}));
  }
  for (int64_t k = 0; k < kRows; ++k) {
    Value row = add(row0, rows[k]);
    Value ok = arith::AndIOp::create(
        b, loc, cmp(arith::CmpIPredicate::ult, row, M), colOk);
    predicatedStore(C, row, col, vals[k], ok);
  }
}
