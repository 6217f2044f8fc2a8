//===- KernelBuilder.cpp - the skeleton of the Hopper GEMM kernels --------===//
//
// What every schedule shares (KernelBuilder.h): the prologue, the warpgroup
// roles, the producer's TMA stage loads and the consumers' wgmma loop.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

std::unique_ptr<KernelBuilder>
sm90::createKernelBuilder(OpBuilder &b, Location loc, const GemmMatch &m,
                          const WarpSpecialization &ws) {
  // WarpSpecialization::fromAttr guarantees that ping-pong and the
  // TMA-store epilogue come with persistent, and not together; the
  // persistent and wide-tile kernels implement the TMA-store epilogue.
  if (ws.narrowRows > 0)
    return std::make_unique<NarrowKernel>(b, loc, m, ws);
  if (ws.splitK)
    return std::make_unique<SplitKKernel>(b, loc, m, ws);
  if (ws.coarse.any())
    return std::make_unique<WideTileKernel>(b, loc, m, ws);
  if (ws.pingpong)
    return std::make_unique<PingPongKernel>(b, loc, m, ws);
  if (ws.persistent)
    return std::make_unique<PersistentKernel>(b, loc, m, ws);
  return std::make_unique<CooperativeKernel>(b, loc, m, ws);
}

nvgpu::TensorMapDescriptorType KernelBuilder::tmaType(ArrayRef<int64_t> box,
                                                      Type elt) {
  return nvgpu::TensorMapDescriptorType::get(
      ctx, smemType(box, elt ? elt : m.inType),
      nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

void KernelBuilder::namedBarrier(int64_t id, int64_t threads) {
  NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(id), i32(threads),
                          /*reductionOp=*/{}, /*reductionPredicate=*/Value{});
}

LogicalResult KernelBuilder::build(IRMapping &mapping,
                                   ArrayRef<Value> tensorMaps,
                                   Value workspaceParam) {
  assert(tensorMaps.size() == numTensorMaps() && "one pointer per map");
  assert(bool(workspaceParam) == takesWorkspace() &&
         "a workspace param exactly when the kernel takes one");
  workspace = workspaceParam;
  // The params, before mapLaunch maps a batched C to a view (mapBatchOfC).
  globalA = mapping.lookup(m.A);
  globalB = mapping.lookup(m.B);
  globalC = mapping.lookup(m.C);
  if (failed(mapLaunch(mapping)))
    return failure();

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
  {
    // The warpgroup index comes from lane 0 by shfl.sync, which ptxas sees
    // as warp-uniform. From tid / 128, without setmaxnreg (whose .aligned
    // form tells ptxas that each role branch is warpgroup-uniform) ptxas
    // serialized every wgmma behind the role branch (C7520); with it, a
    // branch on `wg` inside a role (the wide tiles' epilogue per block
    // row) made ptxas treat the persistent loop's counters as per-thread:
    // stage and descriptor addresses in vector registers, moved to uniform
    // ones before every wgmma (the 64x64 program's 128x128 tiles ran their
    // K loop 1.5x slower, docs/performance.md).
    auto i32T = b.getI32Type();
    Value lane0 = NVVM::ShflOp::create(
        b, loc, i32T, i32(-1), toI32(wg), i32(0), i32(31),
        NVVM::ShflKindAttr::get(ctx, NVVM::ShflKind::idx), UnitAttr{});
    wg = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), lane0);
  }

  // Without TMA the descriptors' types still tell the wgmma descriptors
  // the swizzle (their lowering reads only the type): casts of null.
  Value nullPtr;
  if (ws.ldgLoads)
    nullPtr = LLVM::ZeroOp::create(b, loc, LLVM::LLVMPointerType::get(ctx));
  tmaA = UnrealizedConversionCastOp::create(
             b, loc, tmaType(aBoxShape()),
             ws.ldgLoads ? nullPtr : tensorMaps[0])
             .getResult(0);
  tmaB = UnrealizedConversionCastOp::create(
             b, loc, tmaType(bBoxShape()),
             ws.ldgLoads ? nullPtr : tensorMaps[1])
             .getResult(0);
  tmaALoad = tmaA;
  tmaBLoad = tmaB;
  if (!ws.ldgLoads && !m.aBatch.empty())
    tmaALoad = UnrealizedConversionCastOp::create(
                   b, loc, tmaType(batchBox(m.A, aBoxShape())),
                   tensorMaps[0])
                   .getResult(0);
  if (!ws.ldgLoads && !m.bBatch.empty())
    tmaBLoad = UnrealizedConversionCastOp::create(
                   b, loc, tmaType(batchBox(m.B, bBoxShape())), tensorMaps[1])
                   .getResult(0);

  auto barType = nvgpu::MBarrierGroupType::get(ctx, smemSpace(), ws.stages);
  full = nvgpu::MBarrierCreateOp::create(b, loc, barType);
  empty = nvgpu::MBarrierCreateOp::create(b, loc, barType);
  Value first = cmp(arith::CmpIPredicate::eq, tid, cst(0));
  // Full: one arrival (with the TMA byte count), or one per producer
  // thread without TMA.
  int64_t fillers = ws.ldgLoads ? 128 * ws.producers : 1;
  for (int64_t s = 0; s < ws.stages; ++s) {
    nvgpu::MBarrierInitOp::create(b, loc, full, cst(fillers), cst(s), first);
    nvgpu::MBarrierInitOp::create(b, loc, empty, cst(stageReaders()), cst(s),
                                  first);
  }
  if (!ws.ldgLoads) {
    nvgpu::TmaPrefetchOp::create(b, loc, tmaALoad, first);
    nvgpu::TmaPrefetchOp::create(b, loc, tmaBLoad, first);
  }
  if (tensorMaps.size() > 2) {
    // C's map for the TMA-store epilogue (box 64x64, 128B swizzle). It is
    // optional (metadata): null when no tensor map describes the launch's
    // C (e.g. a row pitch that is not a multiple of 16 bytes), and then
    // the epilogue copies its staged chunks out itself (storeValues).
    Value cMap = tensorMaps[2];
    Value cMapBits =
        LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), cMap).getResult();
    cMapPresent = cmp(arith::CmpIPredicate::ne, cMapBits,
                      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
    tmaC = UnrealizedConversionCastOp::create(
               b, loc, tmaType(batchBox(m.C, {64, 64}), m.outType), cMap)
               .getResult(0);
    nvgpu::TmaPrefetchOp::create(
        b, loc, tmaC, arith::AndIOp::create(b, loc, first, cMapPresent));
  }
  gpu::BarrierOp::create(b, loc);

  // Hardware iterations of kBlockK: ceildiv(loop trip count, 64 / KT), or
  // the trip count times KT / 64 for KT = 128 (the last may lie past K:
  // zero filled).
  Value ub = mapping.lookup(m.loop.getUpperBound());
  if (m.kt > kBlockK) {
    nIter = ctaIterations(mul(ub, cst(m.kt / kBlockK)));
  } else {
    int64_t unroll = kBlockK / m.kt;
    nIter = ctaIterations(divu(add(ub, cst(unroll - 1)), cst(unroll)));
  }

  // One if/else: warpgroup roles (setmaxnreg needs this shape).
  auto setMaxRegisters = [&](int64_t regs, NVVM::SetMaxRegisterAction act) {
    NVVM::SetMaxRegisterOp::create(
        b, loc, b.getI32IntegerAttr(regs),
        NVVM::SetMaxRegisterActionAttr::get(ctx, act));
  };
  Value isProducer = cmp(arith::CmpIPredicate::uge, wg, cst(ws.consumers));
  auto roles = scf::IfOp::create(b, loc, TypeRange{}, isProducer,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    // Several CTAs per multiprocessor (ws.ctasPerSm): no setmaxnreg, the
    // registers are the launch bounds'.
    if (ws.producerRegs > 0)
      setMaxRegisters(ws.producerRegs, NVVM::SetMaxRegisterAction::decrease);
    if (!ws.ldgLoads) {
      Value issuer =
          cmp(arith::CmpIPredicate::eq, tid, cst(ws.consumers * 128));
      auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
      b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
    }
    producer(mapping);
  }
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    if (ws.consumerRegs > 0)
      setMaxRegisters(ws.consumerRegs, NVVM::SetMaxRegisterAction::increase);
    signaller = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
    consumer(mapping);
  }
  return success();
}

Value KernelBuilder::matrixView(Value global, ValueRange batch) {
  if (batch.empty())
    return global;
  auto type = cast<MemRefType>(global.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(batch.begin(), batch.end());
  SmallVector<OpFoldResult> sizes(batch.size(), b.getIndexAttr(1));
  // A batch index outside the tensor (a launch grid larger than the batch)
  // gives a matrix of no rows, so that every load of it is zero and every
  // store to it skipped, as tile.copy defines out-of-bounds elements (the
  // TMA maps clip the batch dims themselves).
  Value inside;
  for (auto [d, index] : llvm::enumerate(batch)) {
    Value ok = cmp(arith::CmpIPredicate::ult, index,
                   memref::DimOp::create(b, loc, global, d));
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
  }
  Value rows = arith::SelectOp::create(
      b, loc, inside, memref::DimOp::create(b, loc, global, rank - 2),
      cst(0));
  offsets.append({b.getIndexAttr(0), b.getIndexAttr(0)});
  sizes.append(
      {rows, memref::DimOp::create(b, loc, global, rank - 1).getResult()});
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      {ShapedType::kDynamic, ShapedType::kDynamic}, type, offsets, sizes,
      strides);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType), global,
                                   offsets, sizes, strides);
}

void KernelBuilder::emitLoad(Value it, Value kIt, Value aRow, Value bCol,
                             ValueRange aBatch, ValueRange bBatch) {
  Value stage = remu(it, cst(ws.stages));
  Value round = divu(it, cst(ws.stages));
  // Wait until the consumers released this stage's previous contents; the
  // first round waits for parity 1, which a fresh barrier reports complete.
  Value parity = cmp(arith::CmpIPredicate::eq, remu(round, cst(2)), cst(0));
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, empty, parity,
                                         cst(10000000), stage);
  if (ws.ldgLoads) {
    emitLoadWithoutTma(mul(stage, cst(stageBytes())), mul(kIt, cst(kBlockK)),
                       aRow, bCol, matrixView(globalA, aBatch),
                       matrixView(globalB, bBatch));
    // The generic-proxy writes visible to wgmma (async proxy), then this
    // thread's arrival (release: the consumers' wait acquires them).
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    nvgpu::MBarrierArriveOp::create(b, loc, full, stage);
    return;
  }
  int64_t bytes = stageBytes();
  nvgpu::MBarrierArriveExpectTxOp::create(b, loc, full, cst(bytes), stage,
                                          Value{});
  Value stageOff = mul(stage, cst(stageBytes()));
  Value k0 = mul(kIt, cst(kBlockK));
  // The boxes as the maps' rank has them (batchBox: unit batch dims). A
  // K x M A (transpose_a): aBoxRows() / 64 boxes of 64 columns per loadRow
  // group, coordinates (column of M, K row).
  const int64_t perGroup = aBoxRows() / aBoxM();
  for (int64_t a = 0; a < aRows() / aBoxM(); ++a) {
    Value aDst = view(smemType(batchBox(m.A, aBoxShape()), m.inType),
                      a == 0 ? stageOff
                             : add(stageOff, cst(a * aBoxM() * kBlockK * 2)));
    Value row = loadRow(a / perGroup, aRow);
    if (a % perGroup)
      row = add(row, cst((a % perGroup) * aBoxM()));
    nvgpu::TmaAsyncLoadOp::create(
        b, loc, aDst, full, tmaALoad,
        tmaCoords(m.transA ? ArrayRef<Value>{row, k0}
                           : ArrayRef<Value>{k0, row},
                  aBatch),
        stage, Value{}, Value{});
  }
  for (int64_t h = 0; h < loadN() / 64; ++h) {
    Value bDst = view(smemType(batchBox(m.B, bBoxShape()), m.inType),
                      add(stageOff, cst(aBytes() + h * bBoxBytes())));
    // Coordinates innermost first: (column, K row), or (K, row of N x K).
    Value col = loadColumn(h, bCol);
    nvgpu::TmaAsyncLoadOp::create(
        b, loc, bDst, full, tmaBLoad,
        tmaCoords(m.transB ? ArrayRef<Value>{k0, col}
                           : ArrayRef<Value>{col, k0},
                  bBatch),
        stage, Value{}, Value{});
  }
}

void KernelBuilder::emitLoadWithoutTma(Value stageOff, Value k0, Value aRow,
                                       Value bCol, Value a, Value bMat) {
  // The stage as 16-bit elements; a 16-byte chunk is 8 of them. TMA's 128B
  // swizzle: in each 128-byte row r (64 elements) of a box, chunk c lives
  // at chunk c ^ (r % 8) (the stage base is 1024-byte aligned).
  constexpr int64_t kChunk = 8;
  Value stage = view(smemType({stageBytes() / 2}, m.inType), stageOff);
  Value p = remu(tid, cst(128)); // the producer thread
  Value M = memref::DimOp::create(b, loc, a, m.transA ? 1 : 0);
  Value K = memref::DimOp::create(b, loc, a, m.aKDim());
  Value N = memref::DimOp::create(b, loc, bMat, m.transB ? 0 : 1);
  Value zero =
      arith::ConstantOp::create(b, loc, m.inType, b.getZeroAttr(m.inType));
  auto lt = [&](Value x, Value y) { return cmp(arith::CmpIPredicate::ult, x, y); };
  // One chunk's loads: global (row, col .. col + 7) of `src` (rows < rows,
  // columns < cols, zero outside) as 8 values.
  auto loadChunk = [&](Value src, Value row, Value col, Value rows,
                       Value cols) {
    Value rowOk = lt(row, rows);
    SmallVector<Value> elements;
    for (int64_t e = 0; e < kChunk; ++e) {
      Value c = add(col, cst(e));
      auto ifOp = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, rowOk, lt(c, cols)),
          [&](OpBuilder &tb, Location tl) {
            scf::YieldOp::create(
                tb, tl,
                memref::LoadOp::create(tb, tl, src, ValueRange{row, c})
                    .getResult());
          },
          [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, zero); });
      elements.push_back(ifOp.getResult(0));
    }
    return vector::FromElementsOp::create(
               b, loc, VectorType::get({kChunk}, m.inType), elements)
        .getResult();
  };
  // The loads of kBatch chunks are issued before their shared stores (each
  // element's load sits behind a branch, across which ptxas does not hoist
  // the next chunk's loads). Measured on the H200: 1-4% faster than a store
  // per chunk; 8 chunks spill at 168 registers. Branch-free clamped loads
  // let ptxas hoist everything and spill: 15-35% slower.
  constexpr int64_t kBatch = 4;
  SmallVector<std::pair<Value, Value>> pending; // (vector, stage element)
  auto flush = [&] {
    for (auto [v, dst] : pending)
      vector::StoreOp::create(b, loc, v, stage, ValueRange{dst},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    pending.clear();
  };
  auto chunk = [&](Value src, Value row, Value col, Value rows, Value cols,
                   Value dst) {
    pending.push_back({loadChunk(src, row, col, rows, cols), dst});
    if (static_cast<int64_t>(pending.size()) == kBatch)
      flush();
  };
  auto swizzled = [&](Value row, Value c) {
    // row * 64 + ((c ^ (row % 8)) * 8)
    Value x = arith::XOrIOp::create(b, loc, c, remu(row, cst(8)));
    return add(mul(row, cst(64)), mul(x, cst(kChunk)));
  };
  // A: TM rows x 8 chunks, or (transpose_a) TM / 64 boxes of 64 K rows x
  // 8 chunks of M columns, laid out like B's boxes below.
  for (int64_t j = 0; j < aRows() * 8 / 128; ++j) {
    Value q = add(p, cst(128 * j));
    if (m.transA) {
      Value h = divu(q, cst(512)), rem = remu(q, cst(512));
      Value r = divu(rem, cst(8)), c = remu(rem, cst(8));
      Value col = add(add(aRow, mul(h, cst(64))), mul(c, cst(kChunk)));
      chunk(a, add(k0, r), col, K, M,
            add(mul(h, cst(kBlockK * 64)), swizzled(r, c)));
      continue;
    }
    Value r = divu(q, cst(8)), c = remu(q, cst(8));
    chunk(a, add(aRow, r), add(k0, mul(c, cst(kChunk))), M, K,
          swizzled(r, c));
  }
  // B: loadN() / 64 boxes of 64 K rows x 8 chunks of columns (transpose_b:
  // 64 rows of N x 8 chunks of K, like A's), after A.
  int64_t bBase = aBytes() / 2, box = bBoxBytes() / 2;
  for (int64_t j = 0; j < loadN() * 8 / 128; ++j) {
    Value q = add(p, cst(128 * j));
    Value h = divu(q, cst(512)), rem = remu(q, cst(512));
    Value r = divu(rem, cst(8)), c = remu(rem, cst(8));
    Value dst = add(cst(bBase), add(mul(h, cst(box)), swizzled(r, c)));
    if (m.transB) {
      Value row = add(add(bCol, mul(h, cst(64))), r);
      chunk(bMat, row, add(k0, mul(c, cst(kChunk))), N, K, dst);
      continue;
    }
    Value col = add(add(bCol, mul(h, cst(64))), mul(c, cst(kChunk)));
    chunk(bMat, add(k0, r), col, K, N, dst);
  }
  flush();
}

Value KernelBuilder::mainLoop(Value g0) {
  if (m.transB || m.transA)
    return mainLoopOwnWgmmas(g0);
  auto accType = nvgpu::WarpgroupAccumulatorType::get(
      ctx, VectorType::get({accRows(), loadN()}, b.getF32Type()));
  auto descAType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType({accRows(), kBlockK}, m.inType));
  auto descBType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType({kBlockK, loadN()}, m.inType));
  Value acc0 = nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accType);
  Value aRowOff = aRowOffset();

  auto loop =
      scf::ForOp::create(b, loc, cst(0), nIter, cst(1), ValueRange{acc0});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value it = add(g0, i); // the pipeline iteration (stage, phase)
    Value acc = loop.getRegionIterArg(0);
    Value stage = waitFull(it);
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
    releasePrevious(it, i);
    scf::YieldOp::create(b, loc, next);
  }
  return loop.getResult(0);
}

Value KernelBuilder::mainLoopOwnWgmmas(Value g0) {
  // Operands as TMA wrote the stage (128B swizzle). A K-major operand (A
  // of an M x K A, B of an N x K B) is rows of 64 K, one descriptor
  // covering the wgmma's rows (8-row groups 1024 bytes apart); a 16 K step
  // moves it 32 bytes along its rows. An MN-major operand (a K x M A, a
  // K x N B) is boxes of 64 K rows x 64 columns; a 16 K step moves it 16
  // rows (2048 bytes). Per 16 K: m64nNk16 (N = loadN()) for each 64-row
  // block of this warpgroup's A; A's blocks are 8192 bytes apart in both
  // layouts (64 rows of 64 K, or one box of 64 columns).
  const int64_t blocks = accRows() / 64, n = loadN();
  auto f32 = b.getF32Type();
  auto blockT = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, f32));
  auto accT = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(blocks, blockT));
  Value zero = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
  Value blockZero = LLVM::PoisonOp::create(b, loc, blockT);
  for (int64_t i = 0; i < n / 2; ++i)
    blockZero = LLVM::InsertValueOp::create(b, loc, blockZero, zero,
                                            ArrayRef<int64_t>{i});
  Value acc0 = LLVM::PoisonOp::create(b, loc, accT);
  for (int64_t q = 0; q < blocks; ++q)
    acc0 = LLVM::InsertValueOp::create(b, loc, acc0, blockZero,
                                       ArrayRef<int64_t>{q});

  auto descAType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType(m.transA ? SmallVector<int64_t>{kBlockK, 64}
                             : SmallVector<int64_t>{accRows(), kBlockK},
                    m.inType));
  SmallVector<int64_t> bShape = m.transB ? SmallVector<int64_t>{n, kBlockK}
                                         : SmallVector<int64_t>{kBlockK, n};
  auto descBType = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, smemType(bShape, m.inType));
  auto wgmmaType = NVVM::WGMMATypesAttr::get(
      ctx, m.inType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, int(n), 16);
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // K-major: A row, B col; MN-major: A col, B row.
  auto row = NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row);
  auto col = NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col);
  auto layoutA = m.transA ? col : row;
  auto layoutB = m.transB ? col : row;
  const int64_t aStep = m.transA ? 16 * 128 : 16 * 2;
  const int64_t bStep = m.transB ? 16 * 2 : 16 * 128;
  Value aRowOff = aRowOffset();

  auto loop =
      scf::ForOp::create(b, loc, cst(0), nIter, cst(1), ValueRange{acc0});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value it = add(g0, i);
    Value acc = loop.getRegionIterArg(0);
    Value stage = waitFull(it);
    Value stageOff = mul(stage, cst(stageBytes()));
    Value aTile = view(descAType.getTensor(), add(stageOff, aRowOff));
    Value bTile = view(descBType.getTensor(), add(stageOff, cst(aBytes())));
    Value descA = descriptorBits(nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc, descAType, aTile, tmaA));
    Value descB = descriptorBits(nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc, descBType, bTile, tmaB));
    SmallVector<Value> blockAcc;
    for (int64_t q = 0; q < blocks; ++q)
      blockAcc.push_back(
          LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{q}));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kk = 0; kk < kBlockK / 16; ++kk)
      for (int64_t q = 0; q < blocks; ++q)
        blockAcc[q] = NVVM::WgmmaMmaAsyncOp::create(
            b, loc, blockT, blockAcc[q],
            descriptorPlus(descA, q * 64 * 128 + kk * aStep),
            descriptorPlus(descB, kk * bStep), shape, wgmmaType, wgmmaType,
            NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
            NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one,
            one, layoutA, layoutB, NVVM::MMAIntOverflowAttr{});
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    // wait_group 1: the previous iteration's group is complete, so its
    // stage may be refilled.
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
    Value next = LLVM::PoisonOp::create(b, loc, accT);
    for (int64_t q = 0; q < blocks; ++q)
      next = LLVM::InsertValueOp::create(b, loc, next, blockAcc[q],
                                         ArrayRef<int64_t>{q});
    releasePrevious(it, i);
    scf::YieldOp::create(b, loc, next);
  }
  // The schedules read the accumulator as nvgpu's (the same LLVM struct
  // once nvgpu is lowered).
  auto nvgpuAccType = nvgpu::WarpgroupAccumulatorType::get(
      ctx, VectorType::get({accRows(), n}, f32));
  return UnrealizedConversionCastOp::create(b, loc, nvgpuAccType,
                                            loop.getResult(0))
      .getResult(0);
}

Value KernelBuilder::descriptorBits(Value desc) {
  return UnrealizedConversionCastOp::create(b, loc, b.getI64Type(), desc)
      .getResult(0);
}

Value KernelBuilder::descriptorPlus(Value desc, int64_t bytes) {
  if (bytes == 0)
    return desc;
  // The address field counts 16-byte units (bits 0-13); shared offsets
  // stay below 2^18 bytes, so no carry leaves the field.
  auto i64 = b.getI64Type();
  return LLVM::AddOp::create(
      b, loc, desc,
      LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(bytes >> 4)));
}

Value KernelBuilder::waitFull(Value it) {
  Value stage = remu(it, cst(ws.stages));
  Value round = divu(it, cst(ws.stages));
  Value parity = cmp(arith::CmpIPredicate::eq, remu(round, cst(2)), cst(1));
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, full, parity, cst(10000000),
                                         stage);
  return stage;
}

void KernelBuilder::releasePrevious(Value it, Value i) {
  Value release = arith::AndIOp::create(
      b, loc, signaller, cmp(arith::CmpIPredicate::ugt, i, cst(0)));
  auto ifRelease = scf::IfOp::create(b, loc, TypeRange{}, release, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifRelease.getThenRegion().front());
  Value prev = remu(add(it, cst(ws.stages - 1)), cst(ws.stages));
  nvgpu::MBarrierArriveOp::create(b, loc, empty, prev);
}

Value KernelBuilder::applyEpilogue(IRMapping &mapping, Value acc, Value row,
                                   Value col) {
  Value acc0 = m.gemm.getC();
  for (ParallelOp par : m.epilogue) {
    Block &body = par.getBodyBlock();
    mapping.map(body.getArgument(0), row);
    mapping.map(body.getArgument(1), col);
    for (Operation &op : body.without_terminator()) {
      if (auto load = dyn_cast<memref::LoadOp>(&op);
          load && load.getMemRef() == acc0) {
        mapping.map(load.getResult(), acc);
        continue;
      }
      if (auto load = dyn_cast<memref::LoadOp>(&op))
        if (const StagedOperand *s = m.stagedFor(load.getMemRef())) {
          mapping.map(load.getResult(), stagedLoad(*s, load, mapping));
          continue;
        }
      if (auto store = dyn_cast<memref::StoreOp>(&op)) {
        // The matcher: only to acc0; the value may come from outside the
        // parallel (a constant).
        acc = mapping.lookupOrDefault(store.getValue());
        continue;
      }
      b.clone(op, mapping);
    }
  }
  return acc;
}

Value KernelBuilder::stagedLoad(StagedOperand s, memref::LoadOp load,
                                IRMapping &mapping) {
  // The global element the fill copied to this tile index: the copy's start
  // plus the index (dropped dims: the start alone), zero out of bounds.
  CopyOp fill = s.fill;
  Value src = mapping.lookup(fill.getSource());
  SmallVector<Value> tileIndex;
  for (Value v : load.getIndices())
    tileIndex.push_back(mapping.lookup(v));
  SmallVector<Value> offsets = fill.expandTileIndex(tileIndex, cst(0));
  SmallVector<Value> at;
  Value inBounds;
  for (auto [d, start] : llvm::enumerate(fill.getSourceIndices())) {
    Value x = add(mapping.lookup(start), offsets[d]);
    Value ok = cmp(arith::CmpIPredicate::ult, x,
                   memref::DimOp::create(b, loc, src, d));
    inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, ok) : ok;
    at.push_back(x);
  }
  Type from = cast<MemRefType>(src.getType()).getElementType();
  Value v;
  const int64_t bits = from.getIntOrFloatBitWidth();
  if (bits == 16 || bits == 32) {
    // One predicated PTX load (zero unless in bounds) at the address
    // memref.load would use: no branch per element (a branch each made the
    // epilogue 5-9% slower than clamped loads on the H200), and the address
    // is only dereferenced in bounds, so an empty tensor is never read.
    Value ptr = elementPointer(src, at, bits / 8);
    auto intT = b.getIntegerType(unsigned(bits));
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, intT, ValueRange{ptr, inBounds},
        bits == 16 ? "{ mov.b16 $0, 0; @$2 ld.global.b16 $0, [$1]; }"
                   : "{ mov.b32 $0, 0; @$2 ld.global.b32 $0, [$1]; }",
        bits == 16 ? "=h,l,b" : "=r,l,b",
        /*has_side_effects=*/false, /*is_align_stack=*/false,
        LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    v = arith::BitcastOp::create(b, loc, from, asmOp.getResult(0));
  } else {
    auto ifOp = scf::IfOp::create(
        b, loc, inBounds,
        [&](OpBuilder &tb, Location tl) {
          scf::YieldOp::create(
              tb, tl, memref::LoadOp::create(tb, tl, src, at).getResult());
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(
              eb, el,
              arith::ConstantOp::create(eb, el, from, eb.getZeroAttr(from))
                  .getResult());
        });
    v = ifOp.getResult(0);
  }
  Type to = load.getType();
  if (from == to)
    return v;
  // A converting copy (float to float; the matcher refuses integers).
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

Value KernelBuilder::elementPointer(Value mem, ValueRange indices,
                                   int64_t bytes) {
  // The element's address as memref.load/store computes it: the aligned
  // pointer plus (offset + sum of index * stride) elements (the
  // descriptor's offset and strides, whatever the caller passed).
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, mem);
  Value element = meta.getOffset();
  for (auto [d, x] : llvm::enumerate(indices))
    element = add(element, mul(x, meta.getStrides()[d]));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  Value addr = arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(), add(base, mul(element, cst(bytes))));
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                                  addr);
}

void KernelBuilder::predicatedStore(Value C, Value row, Value col, Value v,
                                    Value pred) {
  const int64_t bytes = v.getType().getIntOrFloatBitWidth() / 8;
  assert((bytes == 2 || bytes == 4) && "16- or 32-bit elements");
  Value ptr = elementPointer(C, {row, col}, bytes);
  Value bits = arith::BitcastOp::create(
      b, loc, b.getIntegerType(unsigned(8 * bytes)), v);
  NVVM::InlinePtxOp::create(b, loc, TypeRange{}, ValueRange{ptr, bits},
                            ValueRange{},
                            bytes == 2 ? "st.b16 [$0], $1;" : "st.b32 [$0], $1;",
                            pred);
}
