//===- KernelBuilder.cpp - the skeleton of the Hopper GEMM kernels --------===//
//
// What every schedule shares (KernelBuilder.h): the prologue, the warpgroup
// roles, the producer's TMA stage loads and the consumers' wgmma loop.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

std::unique_ptr<KernelBuilder>
sm90::createKernelBuilder(OpBuilder &b, Location loc, const GemmMatch &m,
                          const WarpSpecialization &ws) {
  // WarpSpecialization::fromAttr guarantees that ping-pong and the
  // TMA-store epilogue come with persistent, and not together.
  if (ws.pingpong)
    return std::make_unique<PingPongKernel>(b, loc, m, ws);
  if (ws.tmaStore)
    return std::make_unique<TmaStoreKernel>(b, loc, m, ws);
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
                                   ArrayRef<Value> tensorMaps) {
  assert(tensorMaps.size() == numTensorMaps() && "one pointer per map");
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

  tmaA = UnrealizedConversionCastOp::create(
             b, loc, tmaType({m.tileM, kBlockK}), tensorMaps[0])
             .getResult(0);
  tmaB = UnrealizedConversionCastOp::create(
             b, loc, tmaType({kBlockK, 64}), tensorMaps[1])
             .getResult(0);

  auto barType = nvgpu::MBarrierGroupType::get(ctx, smemSpace(), ws.stages);
  full = nvgpu::MBarrierCreateOp::create(b, loc, barType);
  empty = nvgpu::MBarrierCreateOp::create(b, loc, barType);
  Value first = cmp(arith::CmpIPredicate::eq, tid, cst(0));
  for (int64_t s = 0; s < ws.stages; ++s) {
    nvgpu::MBarrierInitOp::create(b, loc, full, cst(1), cst(s), first);
    nvgpu::MBarrierInitOp::create(b, loc, empty, cst(stageReaders()), cst(s),
                                  first);
  }
  nvgpu::TmaPrefetchOp::create(b, loc, tmaA, first);
  nvgpu::TmaPrefetchOp::create(b, loc, tmaB, first);
  if (tensorMaps.size() > 2) {
    // C's map for the TMA-store epilogue (box 64x64, 128B swizzle).
    tmaC = UnrealizedConversionCastOp::create(
               b, loc, tmaType({64, 64}, m.outType), tensorMaps[2])
               .getResult(0);
    nvgpu::TmaPrefetchOp::create(b, loc, tmaC, first);
  }
  gpu::BarrierOp::create(b, loc);

  // Hardware iterations: ceildiv(loop trip count, 64 / KT).
  int64_t unroll = kBlockK / m.kt;
  Value ub = mapping.lookup(m.loop.getUpperBound());
  nIter = divu(add(ub, cst(unroll - 1)), cst(unroll));

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
    setMaxRegisters(ws.producerRegs, NVVM::SetMaxRegisterAction::decrease);
    Value issuer = cmp(arith::CmpIPredicate::eq, tid, cst(ws.consumers * 128));
    auto ifIssuer = scf::IfOp::create(b, loc, TypeRange{}, issuer, false);
    b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
    producer(mapping);
  }
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    setMaxRegisters(ws.consumerRegs, NVVM::SetMaxRegisterAction::increase);
    signaller = cmp(arith::CmpIPredicate::eq, remu(tid, cst(128)), cst(0));
    consumer(mapping);
  }
  return success();
}

void KernelBuilder::emitLoad(Value it, Value kIt, Value aRow, Value bCol) {
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

Value KernelBuilder::mainLoop(Value g0) {
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
      if (auto store = dyn_cast<memref::StoreOp>(&op)) {
        acc = mapping.lookup(store.getValue()); // the matcher: only to acc0
        continue;
      }
      b.clone(op, mapping);
    }
  }
  return acc;
}
