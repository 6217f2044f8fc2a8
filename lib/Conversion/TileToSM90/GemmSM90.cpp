//===- GemmSM90.cpp - convert-tile-gemm-to-sm90 ----------------------------===//
//
// Builds the Hopper variant of a warp-specialized GEMM kernel (SM90.h) next
// to the generic one. For a launch tagged by tile-warp-specialize:
//
//   gpu.module @NAME_sm90_module {
//     gpu.func @NAME_kernel_sm90(<kernel params>, %tmaA: !llvm.ptr,
//                                %tmaB: !llvm.ptr) kernel
//   }
//
// Threads: `consumers` warpgroups (wgmma, 64 accumulator rows each), then
// one producer warpgroup whose first thread issues the TMA loads. Shared
// memory (dynamic, base rounded up to 1024 bytes for the 128B swizzle):
// `stages` stage buffers, each A (TMx64, one TMA box) then B (64xTN, TN/64
// TMA boxes of 64x64); the epilogue reuses the front as a TMxTN f32 tile.
// Two mbarrier groups of `stages` barriers: full[s] (1 arrival + the TMA
// transaction bytes) and empty[s] (one arrival per consumer warpgroup).
//
//   producer, iteration i (stage s = i % S, round r = i / S):
//     try_wait.parity empty[s], !(r & 1)    (a fresh barrier passes parity 1)
//     arrive.expect_tx full[s], bytes; tma.async.load A, B -> stage s
//   consumer, iteration i:
//     try_wait.parity full[s], (r & 1)
//     warpgroup.mma (wait_group 1: the previous stage is no longer read)
//     arrive empty[(i-1) % S]        (one thread per consumer warpgroup)
//   epilogue: wgmma wait 0; consumers' named barrier; accumulators ->
//     shared f32 tile; barrier; bounds-checked (vectorized when aligned)
//     stores of C converted to its element type.
//
// Persistent (ws.persistent; metadata "grid": "sms"): producer and
// consumers loop over the launch's tiles (t = linear CTA id, step = number
// of CTAs; t -> block indices with the launch's rasterization), carrying
// the global iteration g0 so stages and mbarrier parities continue across
// tiles; consumers release the tile's last stage after wait_group 0 and
// store the accumulators straight from registers (no staging tile, so the
// producer refills the stages for the next tile meanwhile).
//
// Ping-pong (ws.pingpong, implies persistent; two consumer warpgroups):
// each launch tile is cut into TMx`unitN` units (unitN = min(TN,
// 16384/TM): 128 accumulator registers per thread); the CTA's units j =
// 0, 1, ... (tile bid + (j / units per tile) * #CTAs) are loaded by the
// producer in order, one stage = A (TMx64) + B (64 x unitN), and consumer
// warpgroup c computes units c, c + 2, ... whole (nvgpu.warpgroup.mma with
// a TM-row accumulator). Mainloops alternate through named barriers 2 and
// 3 (256 threads: bar.sync by the waiter, bar.arrive by the signaller once
// its mainloop is issued), so one warpgroup's wait_group 0 + epilogue from
// registers overlaps the other's mainloop. empty[s] expects one arrival.
//
// TMA-store epilogue (ws.tmaStore, persistent cooperative, 16-bit C;
// experimental): the kernel takes a third tensor map (C, box 64x64, 128B
// swizzle); each consumer warpgroup writes its accumulators 64 columns at
// a time into one of its two swizzled 64x64 staging buffers (after the
// stages) and thread 0 of the warpgroup stores the chunk with
// cp.async.bulk.tensor, reusing a buffer only after wait_group.read 1
// (epilogueTma); the stores overlap the next tile's mainloop.
//
// The K tile is 64 (one 128-byte swizzle row) whatever the loop's KT: the
// loop runs ceildiv(K, KT) iterations of KT, i.e. ceildiv(that, 64/KT)
// hardware iterations; the columns past K*... are zero-filled by TMA (the
// matcher checks that the trip count is ceildiv(K, KT) so nothing past the
// last KT tile is inside K).
//
//===----------------------------------------------------------------------===//

#include "SM90.h"

#include "tile/Conversion/LaunchUtils.h"
#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include <array>
#include <functional>

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILEGEMMTOSM90
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

namespace {

// cloneComputation and rasterize come from LaunchUtils: the sm90 kernel
// computes block indices exactly as the generic lowerings do.

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, GemmMatch m,
                const WarpSpecialization &ws)
      : b(b), loc(loc), m(m), ws(ws), ctx(b.getContext()) {}

  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divu(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remu(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value toI32(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  }

  Attribute smemSpace() {
    return gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  }
  MemRefType smemType(ArrayRef<int64_t> shape, Type elt) {
    return MemRefType::get(shape, elt, MemRefLayoutAttrInterface{},
                           smemSpace());
  }
  /// A view of the dynamic shared memory at `pad + byteOffset`.
  Value view(MemRefType type, Value byteOffset) {
    return memref::ViewOp::create(b, loc, type, smem, add(pad, byteOffset),
                                  ValueRange{});
  }
  nvgpu::TensorMapDescriptorType tmaType(ArrayRef<int64_t> box,
                                         Type elt = {}) {
    return nvgpu::TensorMapDescriptorType::get(
        ctx, smemType(box, elt ? elt : m.inType), nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  }

  int64_t aBytes() const { return m.tileM * kBlockK * 2; }
  int64_t bBoxBytes() const { return kBlockK * 64 * 2; }
  /// B columns one stage holds: the tile's, or a ping-pong unit's.
  int64_t loadN() const { return ws.pingpong ? ws.unitN : m.tileN; }
  /// Accumulator rows per consumer warpgroup: 64 (cooperative) or the
  /// whole tile (ping-pong).
  int64_t accRows() const { return ws.pingpong ? m.tileM : 64; }
  int64_t stageBytes() const { return (m.tileM + loadN()) * kBlockK * 2; }
  int64_t sharedBytes() const {
    // The persistent kernel's epilogue stores from registers: no staging.
    if (ws.persistent)
      return 1024 + ws.stages * stageBytes() + ws.stagingBytes();
    return 1024 + std::max(ws.stages * stageBytes(), m.tileM * m.tileN * 4);
  }

  /// Persistent kernels: maps the launch's block indices (and the launch
  /// body's index computations) for linear tile `t` into `mapping`.
  std::function<void(Value t, IRMapping &mapping)> mapTile;
  /// Persistent kernels: the number of output tiles (the launch's grid).
  Value numTiles;

  /// Emits the kernel body; `args` are the gpu.func's entry arguments
  /// (kernel params then the two tensor-map pointers), `mapping` maps the
  /// launch's values to the kernel's.
  void build(IRMapping &mapping, Value tmaAPtr, Value tmaBPtr,
             Value tmaCPtr = {});

private:
  void producer(Value nIter, Value tmaA, Value tmaB, Value full, Value empty,
                Value aRow, Value bCol);
  void emitLoad(Value it, Value kIt, Value tmaA, Value tmaB, Value full,
                Value empty, Value aRow, Value bCol);
  Value mainLoop(Value nIter, Value g0, Value tmaA, Value tmaB, Value full,
                 Value empty, Value signaller);
  void persistentProducer(Value nIter, Value tmaA, Value tmaB, Value full,
                          Value empty, IRMapping &mapping);
  void persistentConsumer(Value nIter, Value tmaA, Value tmaB, Value full,
                          Value empty, IRMapping &mapping);
  void consumer(Value nIter, Value tmaA, Value tmaB, Value full, Value empty,
                IRMapping &mapping);
  void epilogue(Value acc, IRMapping &mapping);
  /// ws.tmaStore: the accumulators through the swizzled staging buffers
  /// and cp.async.bulk.tensor stores (see WarpSpecialization::tmaStore).
  void epilogueTma(Value acc, IRMapping &mapping);
  void epilogueFromRegisters(Value acc, IRMapping &mapping, Value colOff,
                             Value rowOff);
  void pingpongProducer(Value nIter, Value tmaA, Value tmaB, Value full,
                        Value empty, IRMapping &mapping);
  void pingpongConsumer(Value nIter, Value tmaA, Value tmaB, Value full,
                        Value empty, IRMapping &mapping);
  /// Ping-pong: the number of units this CTA owns and, for its unit `j`,
  /// the tile mapping and the unit's column offset in the tile.
  Value localUnits();
  Value mapUnit(Value j, IRMapping &mapping, IRMapping &tm);
  /// The persistent loop over this CTA's tiles: t = linear block id, step
  /// = number of CTAs; carries the global pipeline iteration count (for the
  /// stage index and mbarrier phase). `body(tileMapping, g0)` emits one
  /// tile; returns nothing (the loop's result is unused).
  void forEachTile(Value nIter, IRMapping &mapping,
                   function_ref<void(IRMapping &, Value)> body);
  void namedBarrier(int64_t id, int64_t threads) {
    NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(id), i32(threads),
                            /*reductionOp=*/{}, /*reductionPredicate=*/Value{});
  }

  OpBuilder &b;
  Location loc;
  GemmMatch m;
  const WarpSpecialization &ws;
  MLIRContext *ctx;
  Value smem, pad, tid, wg;
  Value tmaC; // ws.tmaStore: C's tensor map (box 64x64, 128B swizzle)
  Value ctaId, ctaCount; // ping-pong: set by localUnits()
};

void KernelBuilder::build(IRMapping &mapping, Value tmaAPtr, Value tmaBPtr,
                          Value tmaCPtr) {
  auto smemRawType =
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, smemSpace());
  smem = gpu::DynamicSharedMemoryOp::create(b, loc, smemRawType);
  // Round the dynamic shared memory base up to 1024 bytes (the 128B swizzle
  // pattern repeats every 1024 bytes; TMA and wgmma assume that alignment).
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  pad = remu(arith::SubIOp::create(b, loc, cst(1024), remu(base, cst(1024))),
             cst(1024));
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  wg = divu(tid, cst(128));

  Value tmaA = UnrealizedConversionCastOp::create(
                   b, loc, tmaType({m.tileM, kBlockK}), tmaAPtr)
                   .getResult(0);
  Value tmaB = UnrealizedConversionCastOp::create(
                   b, loc, tmaType({kBlockK, 64}), tmaBPtr)
                   .getResult(0);

  auto barType = nvgpu::MBarrierGroupType::get(ctx, smemSpace(), ws.stages);
  Value full = nvgpu::MBarrierCreateOp::create(b, loc, barType);
  Value empty = nvgpu::MBarrierCreateOp::create(b, loc, barType);
  Value first = cmp(arith::CmpIPredicate::eq, tid, cst(0));
  for (int64_t s = 0; s < ws.stages; ++s) {
    nvgpu::MBarrierInitOp::create(b, loc, full, cst(1), cst(s), first);
    // Ping-pong: one consumer warpgroup reads (and releases) each stage.
    nvgpu::MBarrierInitOp::create(b, loc, empty,
                                  cst(ws.pingpong ? 1 : ws.consumers), cst(s),
                                  first);
  }
  nvgpu::TmaPrefetchOp::create(b, loc, tmaA, first);
  nvgpu::TmaPrefetchOp::create(b, loc, tmaB, first);
  if (ws.tmaStore) {
    tmaC = UnrealizedConversionCastOp::create(
               b, loc, tmaType({64, 64}, m.outType), tmaCPtr)
               .getResult(0);
    nvgpu::TmaPrefetchOp::create(b, loc, tmaC, first);
  }
  gpu::BarrierOp::create(b, loc);

  // Hardware iterations: ceildiv(loop trip count, 64 / KT).
  int64_t unroll = kBlockK / m.kt;
  Value ub = mapping.lookup(m.loop.getUpperBound());
  Value nIter = divu(add(ub, cst(unroll - 1)), cst(unroll));

  // One if/else: warpgroup roles (setmaxnreg needs this shape).
  Value isProducer = cmp(arith::CmpIPredicate::uge, wg, cst(ws.consumers));
  auto roles = scf::IfOp::create(b, loc, TypeRange{}, isProducer,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    if (ws.pingpong)
      pingpongProducer(nIter, tmaA, tmaB, full, empty, mapping);
    else if (ws.persistent)
      persistentProducer(nIter, tmaA, tmaB, full, empty, mapping);
    else
      producer(nIter, tmaA, tmaB, full, empty, mapping.lookup(m.aRow),
               mapping.lookup(m.bCol));
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    if (ws.pingpong)
      pingpongConsumer(nIter, tmaA, tmaB, full, empty, mapping);
    else if (ws.persistent)
      persistentConsumer(nIter, tmaA, tmaB, full, empty, mapping);
    else
      consumer(nIter, tmaA, tmaB, full, empty, mapping);
  }
}

void KernelBuilder::forEachTile(
    Value nIter, IRMapping &mapping,
    function_ref<void(IRMapping &, Value)> body) {
  // Linear CTA id and count over the whole launch grid: correct (and
  // without duplicated work) whatever grid the kernel is launched with.
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gdx = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value gdy = gpu::GridDimOp::create(b, loc, gpu::Dimension::y);
  Value gdz = gpu::GridDimOp::create(b, loc, gpu::Dimension::z);
  bid = add(bid, mul(gdx, add(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
                              mul(gdy, gpu::BlockIdOp::create(
                                           b, loc, gpu::Dimension::z)))));
  Value ctas = mul(gdx, mul(gdy, gdz));
  auto loop =
      scf::ForOp::create(b, loc, bid, numTiles, ctas, ValueRange{cst(0)});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  IRMapping tileMapping = mapping;
  mapTile(loop.getInductionVar(), tileMapping);
  Value g0 = loop.getRegionIterArg(0);
  body(tileMapping, g0);
  scf::YieldOp::create(b, loc, add(g0, nIter));
}

void KernelBuilder::persistentProducer(Value nIter, Value tmaA, Value tmaB,
                                       Value full, Value empty,
                                       IRMapping &mapping) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(ws.producerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::decrease));
  Value issuer = cmp(arith::CmpIPredicate::eq, tid, cst(ws.consumers * 128));
  auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
  forEachTile(nIter, mapping, [&](IRMapping &tm, Value g0) {
    Value aRow = tm.lookup(m.aRow), bCol = tm.lookup(m.bCol);
    auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    emitLoad(add(g0, i), i, tmaA, tmaB, full, empty, aRow, bCol);
  });
}

void KernelBuilder::persistentConsumer(Value nIter, Value tmaA, Value tmaB,
                                       Value full, Value empty,
                                       IRMapping &mapping) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(ws.consumerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::increase));
  Value signaller = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
  forEachTile(nIter, mapping, [&](IRMapping &tm, Value g0) {
    Value acc = mainLoop(nIter, g0, tmaA, tmaB, full, empty, signaller);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    // The tile's last stage is free now (the in-loop releases stop one
    // short); the producer may be filling the others for the next tile.
    Value release = arith::AndIOp::create(
        b, loc, signaller, cmp(arith::CmpIPredicate::ugt, nIter, cst(0)));
    auto ifRelease = scf::IfOp::create(b, loc, TypeRange{}, release, false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifRelease.getThenRegion().front());
      Value last = arith::SubIOp::create(b, loc, add(g0, nIter), cst(1));
      nvgpu::MBarrierArriveOp::create(b, loc, empty,
                                      remu(last, cst(ws.stages)));
    }
    if (ws.tmaStore)
      epilogueTma(acc, tm);
    else
      epilogueFromRegisters(acc, tm, cst(0), mul(wg, cst(64)));
  });
  if (ws.tmaStore) {
    // The last tile's stores have completed before the CTA exits.
    Value issuer = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
    auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                         UnitAttr{});
  }
}

void KernelBuilder::epilogueTma(Value acc, IRMapping &mapping) {
  // Accumulator layout as in epilogueFromRegisters: warp w, lane l hold,
  // for 8-column group j, (4j, 4j+1) at row 16w + l/4, columns 8j +
  // 2(l%4) + {0,1}, and (4j+2, 4j+3) 8 rows below. Chunk c (columns
  // 64c..64c+63) goes to staging buffer c % 2 of this warpgroup, a 64x64
  // tile with the 128B swizzle (16-byte unit u of row r at u ^ (r % 8));
  // r % 8 = l / 4, so a warp's pair stores hit 32 distinct banks.
  int64_t width = m.tileN;
  int64_t n = width / 2;
  auto f32 = b.getF32Type();
  auto inner =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n, f32));
  auto outer = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>{inner});
  Value whole =
      UnrealizedConversionCastOp::create(b, loc, outer, acc).getResult(0);
  Value s0 = LLVM::ExtractValueOp::create(b, loc, whole, ArrayRef<int64_t>{0});
  SmallVector<Value> vals;
  for (int64_t i = 0; i < n; ++i)
    vals.push_back(
        LLVM::ExtractValueOp::create(b, loc, s0, ArrayRef<int64_t>{i}));

  Value cRow = add(mapping.lookup(m.cRow), mul(wg, cst(64)));
  Value cCol = mapping.lookup(m.cCol);
  Value lane = remu(tid, cst(32));
  Value warp = remu(divu(tid, cst(32)), cst(4));
  Value quad = divu(lane, cst(4));         // row % 8
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
    // The buffer's previous store (two commits ago) has read it.
    {
      auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(1),
                                           b.getUnitAttr());
    }
    bar();
    Value buf = view(smemType({64, 64}, m.outType),
                     add(bufBase, cst((c % 2) * 8192)));
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
    // Generic-proxy writes visible to the async proxy, then one thread
    // stores the chunk (TMA clips rows/columns outside C).
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    bar();
    auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
    nvgpu::TmaAsyncStoreOp::create(b, loc, buf, tmaC,
                                   ValueRange{add(cCol, cst(64 * c)), cRow},
                                   Value{});
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  }
}

Value KernelBuilder::localUnits() {
  // The CTA's tiles (t = bid, bid + ctas, ...), times units per tile.
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gdx = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value gdy = gpu::GridDimOp::create(b, loc, gpu::Dimension::y);
  Value gdz = gpu::GridDimOp::create(b, loc, gpu::Dimension::z);
  bid = add(bid, mul(gdx, add(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
                              mul(gdy, gpu::BlockIdOp::create(
                                           b, loc, gpu::Dimension::z)))));
  ctaId = bid;
  ctaCount = mul(gdx, mul(gdy, gdz));
  Value some = cmp(arith::CmpIPredicate::ult, bid, numTiles);
  Value left = arith::SubIOp::create(
      b, loc, arith::SelectOp::create(b, loc, some, numTiles, bid), bid);
  Value tiles = divu(add(left, arith::SubIOp::create(b, loc, ctaCount, cst(1))),
                     ctaCount);
  return mul(tiles, cst(m.tileN / ws.unitN));
}

Value KernelBuilder::mapUnit(Value j, IRMapping &mapping, IRMapping &tm) {
  int64_t subs = m.tileN / ws.unitN;
  Value t = add(ctaId, mul(divu(j, cst(subs)), ctaCount));
  tm = mapping;
  mapTile(t, tm);
  return mul(remu(j, cst(subs)), cst(ws.unitN));
}

void KernelBuilder::pingpongProducer(Value nIter, Value tmaA, Value tmaB,
                                     Value full, Value empty,
                                     IRMapping &mapping) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(ws.producerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::decrease));
  Value issuer = cmp(arith::CmpIPredicate::eq, tid, cst(ws.consumers * 128));
  auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
  // Every unit of the CTA in order (both consumers' units interleaved), so
  // the stage ring's global iteration of unit j, step i is j * nIter + i.
  Value units = localUnits();
  auto loop = scf::ForOp::create(b, loc, cst(0), units, cst(1));
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  IRMapping tm;
  Value colOff = mapUnit(j, mapping, tm);
  Value aRow = tm.lookup(m.aRow), bCol = add(tm.lookup(m.bCol), colOff);
  Value g0 = mul(j, nIter);
  auto inner = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
  b.setInsertionPointToStart(inner.getBody());
  Value i = inner.getInductionVar();
  emitLoad(add(g0, i), i, tmaA, tmaB, full, empty, aRow, bCol);
}

void KernelBuilder::pingpongConsumer(Value nIter, Value tmaA, Value tmaB,
                                     Value full, Value empty,
                                     IRMapping &mapping) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(ws.consumerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::increase));
  Value signaller = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
  // Consumer warpgroup c (= wg) takes the CTA's units c, c + 2, ...
  // Mainloops alternate: c waits on named barrier 2 + c before each unit
  // but its first (the other warpgroup's mainloop of the previous unit is
  // issued) and, once its own mainloop is issued, signals barrier 3 - c if
  // a next unit exists; so one warpgroup's epilogue overlaps the other's
  // mainloop. Waits and signals pair up exactly (no dangling arrivals).
  // The warpgroup index through shfl.sync from lane 0 (as CUTLASS's
  // canonical_warp_group_idx): ptxas then knows it is warp-uniform; with
  // tid / 128 the unit loop (and its wgmmas) counts as divergent and ptxas
  // serializes the wgmmas (C7520).
  Value wgI32 = gpu::ShuffleOp::create(b, loc, toI32(wg), i32(0), i32(32),
                                       gpu::ShuffleMode::IDX)
                    .getShuffleResult();
  Value wgU = arith::IndexCastOp::create(b, loc, b.getIndexType(), wgI32);
  Value units = localUnits();
  Value waitId = toI32(add(wgU, cst(2)));
  Value signalId = toI32(arith::SubIOp::create(b, loc, cst(3), wgU));
  Value pair = i32(2 * 128);
  auto loop = scf::ForOp::create(b, loc, wgU, units, cst(2));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  IRMapping tm;
  Value colOff = mapUnit(j, mapping, tm);
  Value g0 = mul(j, nIter);
  {
    auto ifWait = scf::IfOp::create(
        b, loc, TypeRange{}, cmp(arith::CmpIPredicate::ugt, j, cst(0)), false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifWait.getThenRegion().front());
    NVVM::BarrierOp::create(b, loc, TypeRange{}, waitId, pair,
                            /*reductionOp=*/{}, /*reductionPredicate=*/Value{});
  }
  Value acc = mainLoop(nIter, g0, tmaA, tmaB, full, empty, signaller);
  {
    auto ifSignal = scf::IfOp::create(
        b, loc, TypeRange{},
        cmp(arith::CmpIPredicate::ult, add(j, cst(1)), units), false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifSignal.getThenRegion().front());
    NVVM::BarrierArriveOp::create(b, loc, signalId, pair);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  Value release = arith::AndIOp::create(
      b, loc, signaller, cmp(arith::CmpIPredicate::ugt, nIter, cst(0)));
  {
    auto ifRelease = scf::IfOp::create(b, loc, TypeRange{}, release, false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifRelease.getThenRegion().front());
    Value last = arith::SubIOp::create(b, loc, add(g0, nIter), cst(1));
    nvgpu::MBarrierArriveOp::create(b, loc, empty, remu(last, cst(ws.stages)));
  }
  epilogueFromRegisters(acc, tm, colOff, cst(0));
}

void KernelBuilder::producer(Value nIter, Value tmaA, Value tmaB, Value full,
                             Value empty, Value aRow, Value bCol) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(ws.producerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::decrease));
  Value issuer = cmp(arith::CmpIPredicate::eq, tid, cst(ws.consumers * 128));
  auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
  auto loop = scf::ForOp::create(b, loc, cst(0), nIter, cst(1));
  b.setInsertionPointToStart(loop.getBody());
  Value it = loop.getInductionVar();
  emitLoad(it, it, tmaA, tmaB, full, empty, aRow, bCol);
}

void KernelBuilder::emitLoad(Value it, Value kIt, Value tmaA, Value tmaB,
                             Value full, Value empty, Value aRow, Value bCol) {
  // `it`: the pipeline iteration (stage, phase); `kIt`: the K tile.
  Value stage = remu(it, cst(ws.stages));
  Value round = divu(it, cst(ws.stages));
  // Wait until the consumers released this stage's previous contents; the
  // first round waits for parity 1, which a fresh barrier reports complete.
  Value parity = cmp(arith::CmpIPredicate::eq, remu(round, cst(2)), cst(0));
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, empty, parity,
                                         cst(10000000), stage);
  int64_t bytes = stageBytes();
  nvgpu::MBarrierArriveExpectTxOp::create(b, loc, full, cst(bytes), stage,
                                          Value{});
  Value stageOff = mul(stage, cst(stageBytes()));
  Value k0 = mul(kIt, cst(kBlockK));
  Value aDst = view(smemType({m.tileM, kBlockK}, m.inType), stageOff);
  nvgpu::TmaAsyncLoadOp::create(b, loc, aDst, full, tmaA,
                                ValueRange{k0, aRow}, stage, Value{}, Value{});
  for (int64_t h = 0; h < loadN() / 64; ++h) {
    Value bDst = view(smemType({kBlockK, 64}, m.inType),
                      add(stageOff, cst(aBytes() + h * bBoxBytes())));
    nvgpu::TmaAsyncLoadOp::create(b, loc, bDst, full, tmaB,
                                  ValueRange{add(bCol, cst(h * 64)), k0},
                                  stage, Value{}, Value{});
  }
}

void KernelBuilder::consumer(Value nIter, Value tmaA, Value tmaB, Value full,
                             Value empty, IRMapping &mapping) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(ws.consumerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::increase));
  Value signaller = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
  Value acc = mainLoop(nIter, cst(0), tmaA, tmaB, full, empty, signaller);
  epilogue(acc, mapping);
}

Value KernelBuilder::mainLoop(Value nIter, Value g0, Value tmaA, Value tmaB,
                              Value full, Value empty, Value signaller) {
  auto accType = nvgpu::WarpgroupAccumulatorType::get(
      ctx, VectorType::get({accRows(), loadN()}, b.getF32Type()));
  auto descAType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType({accRows(), kBlockK}, m.inType));
  auto descBType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType({kBlockK, loadN()}, m.inType));
  Value acc0 = nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accType);
  // This warpgroup's rows (cooperative); ping-pong reads all of A.
  Value aRowOff = ws.pingpong ? cst(0) : mul(wg, cst(64 * kBlockK * 2));

  auto loop =
      scf::ForOp::create(b, loc, cst(0), nIter, cst(1), ValueRange{acc0});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value it = add(g0, i); // the pipeline iteration (stage, phase)
    Value acc = loop.getRegionIterArg(0);
    Value stage = remu(it, cst(ws.stages));
    Value round = divu(it, cst(ws.stages));
    Value parity = cmp(arith::CmpIPredicate::eq, remu(round, cst(2)), cst(1));
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, full, parity,
                                           cst(10000000), stage);
    Value stageOff = mul(stage, cst(stageBytes()));
    Value aTile =
        view(smemType({accRows(), kBlockK}, m.inType), add(stageOff, aRowOff));
    Value bTile = view(smemType({kBlockK, loadN()}, m.inType),
                       add(stageOff, cst(aBytes())));
    Value descA = nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc, descAType, aTile, tmaA);
    Value descB = nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc, descBType, bTile, tmaB);
    // wait_group 1: when it returns, the previous iteration's wgmma group
    // is complete, so that stage may be refilled.
    Value next = nvgpu::WarpgroupMmaOp::create(
        b, loc, accType, descA, descB, b.getI64IntegerAttr(1),
        /*transposeA=*/UnitAttr{}, /*transposeB=*/b.getUnitAttr(), acc);
    Value release = arith::AndIOp::create(
        b, loc, signaller, cmp(arith::CmpIPredicate::ugt, i, cst(0)));
    auto ifRelease = scf::IfOp::create(b, loc, TypeRange{}, release, false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifRelease.getThenRegion().front());
      Value prev = remu(add(it, cst(ws.stages - 1)), cst(ws.stages));
      nvgpu::MBarrierArriveOp::create(b, loc, empty, prev);
    }
    scf::YieldOp::create(b, loc, next);
  }
  return loop.getResult(0);
}

void KernelBuilder::epilogue(Value acc, IRMapping &mapping) {
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

void KernelBuilder::epilogueFromRegisters(Value acc, IRMapping &mapping,
                                          Value colOff, Value rowOff) {
  // wgmma's accumulator layout (m64nNk16, f32): in each consumer
  // warpgroup, warp w (of 4) and lane l hold, for every 8-column group j,
  // elements 4j, 4j+1 at row 16w + l/4, columns 8j + 2(l%4) + {0, 1}, and
  // 4j+2, 4j+3 eight rows below. Stored directly (pairs of C's element
  // type): no shared memory, so the producer keeps refilling the stages.
  // An accumulator of 64q rows is q such blocks (one inner struct each),
  // block q at rows 64q.. of the warpgroup's rows `rowOff`...
  int64_t width = loadN();
  int64_t n = width / 2; // values per thread per 64-row block
  int64_t blocks = accRows() / 64;
  auto f32 = b.getF32Type();
  auto inner = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n, f32));
  auto outer = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(blocks, inner));
  Value whole =
      UnrealizedConversionCastOp::create(b, loc, outer, acc).getResult(0);
  SmallVector<SmallVector<Value>> blockVals;
  for (int64_t q = 0; q < blocks; ++q) {
    Value s = LLVM::ExtractValueOp::create(b, loc, whole, ArrayRef<int64_t>{q});
    SmallVector<Value> vals;
    for (int64_t i = 0; i < n; ++i)
      vals.push_back(
          LLVM::ExtractValueOp::create(b, loc, s, ArrayRef<int64_t>{i}));
    blockVals.push_back(std::move(vals));
  }

  Value C = mapping.lookup(m.C);
  Value cRow = add(mapping.lookup(m.cRow), rowOff);
  Value cCol = add(mapping.lookup(m.cCol), colOff);
  Value M = memref::DimOp::create(b, loc, C, 0);
  Value N = memref::DimOp::create(b, loc, C, 1);
  Value lane = remu(tid, cst(32));
  Value warp = remu(divu(tid, cst(32)), cst(4));
  Value row0 = add(cRow, add(mul(warp, cst(16)), divu(lane, cst(4))));
  Value col0 = add(cCol, mul(remu(lane, cst(4)), cst(2)));
  int64_t outBytes = m.outType.getIntOrFloatBitWidth() / 8;
  Value cBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, C);
  // Pair stores need the base and every row start aligned to 2 elements
  // (N even) and the tile's columns inside N.
  Value even = [&](Value v) {
    return cmp(arith::CmpIPredicate::eq, remu(v, cst(2)), cst(0));
  }(N);
  Value fast = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc,
          cmp(arith::CmpIPredicate::eq, remu(cBase, cst(2 * outBytes)), cst(0)),
          even),
      arith::AndIOp::create(
          b, loc, cmp(arith::CmpIPredicate::eq, remu(cCol, cst(2)), cst(0)),
          cmp(arith::CmpIPredicate::ule, add(cCol, cst(width)), N)));
  auto v2f32 = VectorType::get({2}, f32);
  auto v2out = VectorType::get({2}, m.outType);
  SmallVector<std::array<Value, 2>> blockRows;
  for (int64_t q = 0; q < blocks; ++q) {
    Value rowQ = q == 0 ? row0 : add(row0, cst(64 * q));
    blockRows.push_back({rowQ, add(rowQ, cst(8))});
  }
  auto ifFast = scf::IfOp::create(b, loc, TypeRange{}, fast, true);
  OpBuilder::InsertionGuard g(b);
  for (int64_t q = 0; q < blocks; ++q) {
  ArrayRef<Value> vals = blockVals[q];
  std::array<Value, 2> rows = blockRows[q];
  for (int64_t half = 0; half < 2; ++half) {
    b.setInsertionPoint(ifFast.getThenRegion().front().getTerminator());
    Value row = rows[half];
    auto ifRow = scf::IfOp::create(
        b, loc, TypeRange{}, cmp(arith::CmpIPredicate::ult, row, M), false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifRow.getThenRegion().front());
      for (int64_t j = 0; j < width / 8; ++j) {
        Value v = vector::FromElementsOp::create(
            b, loc, v2f32,
            ValueRange{vals[4 * j + 2 * half], vals[4 * j + 2 * half + 1]});
        if (!m.outType.isF32())
          v = arith::TruncFOp::create(b, loc, v2out, v);
        auto st = vector::StoreOp::create(b, loc, v, C,
                                          ValueRange{row, add(col0, cst(8 * j))});
        st.setAlignment(2 * outBytes);
      }
    }
    // Slow path: element by element, both bounds checked.
    b.setInsertionPoint(ifFast.getElseRegion().front().getTerminator());
    auto ifRow2 = scf::IfOp::create(
        b, loc, TypeRange{}, cmp(arith::CmpIPredicate::ult, row, M), false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifRow2.getThenRegion().front());
      for (int64_t j = 0; j < width / 8; ++j)
        for (int64_t e = 0; e < 2; ++e) {
          Value col = add(col0, cst(8 * j + e));
          auto ifCol = scf::IfOp::create(
              b, loc, TypeRange{}, cmp(arith::CmpIPredicate::ult, col, N),
              false);
          OpBuilder::InsertionGuard g3(b);
          b.setInsertionPointToStart(&ifCol.getThenRegion().front());
          Value x = vals[4 * j + 2 * half + e];
          if (!m.outType.isF32())
            x = arith::TruncFOp::create(b, loc, m.outType, x);
          memref::StoreOp::create(b, loc, x, C, ValueRange{row, col});
        }
    }
  }
  }
}

struct ConvertTileGemmToSM90Pass
    : public tile::impl::ConvertTileGemmToSM90Base<ConvertTileGemmToSM90Pass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(TileDialect::kKernelAttrName))
        kernels.push_back(func);
    auto info = module->getAttrOfType<KernelInfoAttr>(
        TileDialect::kKernelInfoAttrName);
    SmallVector<KernelVariantAttr> variants;
    if (info)
      variants.append(info.getVariants().begin(), info.getVariants().end());
    for (func::FuncOp kernel : kernels) {
      PipelinedOp tagged;
      kernel.walk([&](PipelinedOp loop) {
        if (loop->hasAttr(kWarpSpecializeAttr))
          tagged = loop;
      });
      if (!tagged)
        continue;
      auto ws = WarpSpecialization::fromAttr(
          tagged->getAttr(kWarpSpecializeAttr));
      std::string why;
      auto m = matchSM90Gemm(tagged, why);
      if (failed(ws) || failed(m)) {
        tagged->emitError("sm90: tagged loop no longer matches: ") << why;
        return signalPassFailure();
      }
      tagged->removeAttr(kWarpSpecializeAttr);
      // The small-grid TMA-store variant first (the runtime tries the
      // variants in order; its "max_tiles" rule sends larger grids on).
      if (ws->tmaStoreMaxTiles > 0) {
        WarpSpecialization t = decideWarpSpecialization(
            *m, PersistentMode::On, ScheduleMode::Auto, EpilogueMode::Tma);
        if (!t.tmaStore) {
          tagged->emitError("sm90: no TMA-store epilogue for this match");
          return signalPassFailure();
        }
        auto small = build(kernel, *m, t, "_t", ws->tmaStoreMaxTiles);
        if (failed(small))
          return signalPassFailure();
        variants.push_back(*small);
      }
      auto variant = build(kernel, *m, *ws);
      if (failed(variant))
        return signalPassFailure();
      variants.push_back(*variant);
    }
    if (info && variants.size() != info.getVariants().size())
      setKernelInfo(module, info.withVariants(variants));
  }

  /// Persistent kernels: the tile count from the launch's grid and the
  /// per-tile mapping (linear tile -> block indices, rasterized like the
  /// launch; the launch body's index computations cloned per tile).
  LogicalResult buildPersistentMapping(OpBuilder &b, Location loc,
                                       GemmMatch &m, IRMapping &mapping,
                                       KernelBuilder &kb) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(m.launch.getBody(), captured);
    for (Value v : m.launch.getGridSizes())
      captured.insert(v);
    for (Value v : captured)
      if (failed(cloneComputation(b, v, mapping, m.launch)))
        return failure();
    SmallVector<Value> grid;
    for (Value v : m.launch.getGridSizes())
      grid.push_back(mapping.lookup(v));
    Value total = grid[0];
    for (size_t d = 1; d < grid.size(); ++d)
      total = arith::MulIOp::create(b, loc, total, grid[d]);
    kb.numTiles = total;
    LaunchOp launch = m.launch;
    kb.mapTile = [&b, loc, launch, grid](Value t, IRMapping &tm) mutable {
      SmallVector<Value> idx;
      Value rest = t;
      for (size_t d = 0; d < grid.size(); ++d) {
        if (d + 1 == grid.size()) {
          idx.push_back(rest);
          break;
        }
        idx.push_back(arith::RemUIOp::create(b, loc, rest, grid[d]));
        rest = arith::DivUIOp::create(b, loc, rest, grid[d]);
      }
      if (auto raster = launch.getRasterAttr(); raster && grid.size() == 2) {
        auto [bx, by] = rasterize(b, loc, raster, idx[0], idx[1], grid[0],
                                  grid[1]);
        idx[0] = bx;
        idx[1] = by;
      }
      for (unsigned d = 0; d < launch.getGridRank(); ++d)
        tm.map(launch.getBlockIndices()[d], idx[d]);
      for (Operation &op : launch.getBodyBlock().without_terminator())
        if (op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
            !isa<AllocOp>(op))
          b.clone(op, tm);
    };
    return success();
  }

  /// Builds the kernel NAME_kernel_sm90<suffix> into NAME_sm90_module
  /// (created by the first variant of the kernel) and returns its
  /// description (used for launches of at most `maxTiles` tiles, 0: any).
  FailureOr<KernelVariantAttr> build(func::FuncOp kernel, GemmMatch m,
                                     const WarpSpecialization &ws,
                                     StringRef suffix = "",
                                     int64_t maxTiles = 0) {
    MLIRContext *ctx = &getContext();
    Location loc = m.launch.getLoc();
    ModuleOp module = getOperation();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    OpBuilder b(kernel);
    std::string name = kernel.getSymName().str();
    auto gpuModule =
        module.lookupSymbol<gpu::GPUModuleOp>(name + "_sm90_module");
    if (!gpuModule)
      gpuModule = gpu::GPUModuleOp::create(b, loc, name + "_sm90_module");
    b.setInsertionPointToStart(gpuModule.getBody());
    SmallVector<Type> argTypes(kernel.getArgumentTypes());
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    argTypes.push_back(ptrType);
    argTypes.push_back(ptrType);
    if (ws.tmaStore)
      argTypes.push_back(ptrType);
    std::string kernelName = name + "_kernel_sm90" + suffix.str();
    auto fn = gpu::GPUFuncOp::create(b, loc, kernelName,
                                     FunctionType::get(ctx, argTypes, {}));
    fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
    fn.setKnownBlockSizeAttr(
        DenseI32ArrayAttr::get(ctx, {(int32_t)ws.threads(), 1, 1}));
    // One block per multiprocessor: the register cap setmaxnreg needs.
    fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                b.getI32IntegerAttr(1));
    Block &entry = fn.getBody().front();
    b.setInsertionPointToStart(&entry);

    IRMapping mapping;
    unsigned nargs = kernel.getNumArguments();
    for (unsigned i = 0; i < nargs; ++i)
      mapping.map(kernel.getArgument(i), entry.getArgument(i));
    KernelBuilder kb(b, loc, m, ws);
    if (ws.persistent) {
      if (failed(buildPersistentMapping(b, loc, m, mapping, kb)))
        return failure();
    } else {
    SmallVector<Value> blockIdx, gridDim;
    for (gpu::Dimension d :
         {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
      blockIdx.push_back(gpu::BlockIdOp::create(b, loc, d));
      gridDim.push_back(gpu::GridDimOp::create(b, loc, d));
    }
    if (auto raster = m.launch.getRasterAttr()) {
      auto [bx, by] = rasterize(b, loc, raster, blockIdx[0], blockIdx[1],
                                gridDim[0], gridDim[1]);
      blockIdx[0] = bx;
      blockIdx[1] = by;
    }
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(m.launch.getBody(), captured);
    for (Value v : captured)
      if (failed(cloneComputation(b, v, mapping, m.launch)))
        return failure();
    for (unsigned d = 0; d < m.launch.getGridRank(); ++d)
      mapping.map(m.launch.getBlockIndices()[d], blockIdx[d]);
    // The launch body's index computations (tile origins).
    for (Operation &op : m.launch.getBodyBlock().without_terminator())
      if (op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
          !isa<AllocOp>(op))
        b.clone(op, mapping);
    }

    kb.build(mapping, entry.getArgument(nargs), entry.getArgument(nargs + 1),
             ws.tmaStore ? entry.getArgument(nargs + 2) : Value{});
    gpu::ReturnOp::create(b, loc);

    // The variant's description (docs/bundle.md, "variants"): TMA maps of
    // A, B (and C for the TMA-store epilogue), 128B swizzle, 256B L2
    // promotion, zero fill out of bounds.
    auto tma = [&](Value param, int64_t inner, int64_t outer, Type elt) {
      return TmaDescAttr::get(ctx, cast<BlockArgument>(param).getArgNumber(),
                              elt, {inner, outer}, {1, 1}, /*interleave=*/0,
                              /*swizzle=*/128, /*l2Promotion=*/256,
                              TmaOobFill::zero);
    };
    SmallVector<TmaDescAttr> maps = {tma(m.A, kBlockK, m.tileM, m.inType),
                                     tma(m.B, 64, kBlockK, m.inType)};
    if (ws.tmaStore)
      maps.push_back(tma(m.C, 64, 64, m.outType));
    // Persistent: one CTA per SM (capped at the tile count), each looping
    // over tiles. The schedule is informational (launched alike).
    return KernelVariantAttr::get(
        ctx, b.getStringAttr("sm90_tma_wgmma"), b.getStringAttr("sm_90a"),
        b.getStringAttr(kernelName), {ws.threads(), 1, 1}, kb.sharedBytes(),
        ws.persistent ? VariantGrid::sms : VariantGrid::launch, maxTiles,
        ws.pingpong ? b.getStringAttr("pingpong") : StringAttr(), maps);
  }
};

} // namespace
