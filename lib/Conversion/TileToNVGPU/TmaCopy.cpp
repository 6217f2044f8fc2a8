//===- TmaCopy.cpp - a pipelined copy as TMA loads ------------------------===//
//
// The warp-specialized variant with a TMA producer (WarpSpecialize.cpp):
// per stage, each producer copy of a software pipeline is one
// mbarrier.arrive.expect_tx of the tile's bytes and one
// cp.async.bulk.tensor per box, issued by one thread, instead of 16-byte
// cp.async spread over a warpgroup. The thread needs few registers, so the
// consumers get more (WarpSpecializedKernel::kTmaProducerRegisters).
//
// A copy qualifies when what TMA writes is the buffer's layout:
// - its global side is a kernel parameter: a row-major tensor of rank <= 5
//   (the runtime describes it by a CUtensorMap per launch) of the tile's
//   element type (TMA does not convert);
// - the tile's innermost dim is the tensor's innermost (not dropped), so a
//   box row is a contiguous global row;
// - the shared layout is row-major without swizzle (rows whole 16-byte
//   chunks), or the (16 << bits)-byte swizzle (#tile.swizzle<bits = 1..3,
//   base = 4, shift = 3>: TMA's 32/64/128B modes XOR 16-byte chunk bits
//   4.. with row bits 7..) over rows of exactly that width, or over
//   128-byte column panels in the 128-byte swizzle (one box per panel).
// Each box dim is at most 256. The stages are 1024-byte aligned
// (createBuffers aligns TMA targets like wgmma operands). Out-of-bounds
// elements are zero-filled by TMA, as tile.copy defines, and still count
// in the transaction bytes. A tensor the runtime cannot describe (its base
// or row pitch not a multiple of 16 bytes) makes it launch the next
// variant (the cp.async producer).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

std::optional<TmaCopyPlan>
nvgpu_lowering::planTmaCopy(CopyOp op, gpu::GPUFuncOp func,
                            std::string &whyNot) {
  auto fail = [&](const Twine &why) -> std::optional<TmaCopyPlan> {
    whyNot = why.str();
    return std::nullopt;
  };
  auto arg = dyn_cast<BlockArgument>(op.getSource());
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      arg.getArgNumber() >= func.getNumArguments())
    return fail("does not read a kernel parameter");
  auto global = cast<MemRefType>(arg.getType());
  int64_t rank = global.getRank();
  if (!global.getLayout().isIdentity() || rank > 5)
    return fail("reads a tensor that is not row-major of rank 5 or less");
  auto alloc = op.getTarget().getDefiningOp<AllocOp>();
  if (!alloc || alloc.getScope() != MemoryScope::shared)
    return fail("does not write a shared tile.alloc");
  MemRefType tile = alloc.getType();
  Type elt = tile.getElementType();
  if (elt != global.getElementType())
    return fail("converts the element type");
  int64_t eltBits = elt.getIntOrFloatBitWidth();
  if (eltBits != 8 && eltBits != 16 && eltBits != 32)
    return fail("moves elements that are not 1, 2 or 4 bytes");
  int64_t eltBytes = eltBits / 8;
  if (llvm::is_contained(op.getDropDims().value_or(ArrayRef<int64_t>{}),
                         rank - 1))
    return fail("drops the tensor's innermost dim");

  TmaCopyPlan plan;
  plan.param = arg.getArgNumber();
  plan.elementType = elt;
  SmallVector<int64_t> extent = op.getGlobalTileShape();
  int64_t cols = tile.getShape().back();
  int64_t rowBytes = cols * eltBytes;
  int64_t rows = numElements(tile.getShape()) / cols;
  plan.bytes = rows * rowBytes;
  plan.boxElements = cols;
  auto swizzle = dyn_cast_or_null<SwizzleAttr>(alloc.getLayoutAttr());
  if (!swizzle || swizzle.getBits() == 0) {
    if ((swizzle && swizzle.getPanel()) || rowBytes % 16)
      return fail("writes unswizzled rows that are not whole 16-byte chunks");
  } else {
    if (swizzle.getBase() != 4 || swizzle.getShift() != 3)
      return fail("writes a swizzle that is not TMA's (base 4, shift 3)");
    plan.swizzleBytes = int64_t(16) << swizzle.getBits();
    int64_t panel = swizzle.getPanel();
    if (panel && panel < rowBytes) {
      if (panel != 128 || plan.swizzleBytes != 128 || rowBytes % panel)
        return fail("writes column panels that are not 128-byte panels in "
                    "the 128-byte swizzle");
      plan.boxElements = panel / eltBytes;
      plan.boxes = rowBytes / panel;
    } else if (rowBytes != plan.swizzleBytes) {
      return fail("writes " + Twine(rowBytes) + "-byte rows, not the " +
                  Twine(plan.swizzleBytes) + "-byte swizzle's width");
    }
  }
  plan.boxBytes = rows * plan.boxElements * eltBytes;
  if (plan.boxes > 1 && plan.boxBytes % 1024)
    return fail("writes panels that do not start on 1024-byte boundaries");
  extent.back() = plan.boxElements;
  plan.box.assign(extent.rbegin(), extent.rend());
  for (int64_t d : plan.box)
    if (d > 256)
      return fail("needs a box dim larger than 256 (" + Twine(d) + ")");
  return plan;
}

void nvgpu_lowering::emitTmaLoads(OpBuilder &b, Location loc,
                                  const TmaCopyPlan &plan, ValueRange start,
                                  Value stageAddress, Value mbar) {
  // Signed 32-bit coordinates; a start beyond that range is clamped to
  // its end, which is out of bounds all the same (the runtime maps only
  // dims below 2^31), so the box still reads as zero.
  auto i32 = [&](Value index) {
    Value wide = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    Value lo = arith::ConstantIntOp::create(b, loc, INT32_MIN, 64);
    Value hi = arith::ConstantIntOp::create(b, loc, INT32_MAX, 64);
    Value clamped = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, wide, lo), hi);
    return arith::TruncIOp::create(b, loc, b.getI32Type(), clamped)
        .getResult();
  };
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto clusterPtr = LLVM::LLVMPointerType::get(b.getContext(), 7);
  // Coordinates innermost first (the tensor's dims reversed).
  SmallVector<Value> coords;
  for (Value v : llvm::reverse(start))
    coords.push_back(i32(v));
  Value col0 = coords.front();
  for (int64_t box = 0; box < plan.boxes; ++box) {
    Value address = arith::AddIOp::create(
        b, loc, stageAddress,
        arith::ConstantIndexOp::create(b, loc, box * plan.boxBytes));
    // A shared::cta address is the CTA's own shared::cluster address.
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, loc, clusterPtr,
        LLVM::IntToPtrOp::create(
            b, loc, sharedPtr,
            arith::IndexCastOp::create(b, loc, b.getI64Type(), address)
                .getResult()));
    if (box)
      coords.front() = arith::AddIOp::create(
          b, loc, col0,
          arith::ConstantIntOp::create(b, loc, box * plan.boxElements, 32));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, plan.map, coords, mbar, /*im2colOffsets=*/ValueRange{},
        /*multicastMask=*/Value{}, /*l2CacheHint=*/Value{},
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, /*group=*/{},
        /*predicate=*/Value{});
  }
}

bool KernelLowering::planTmaProducer(std::string &whyNot) {
  WarpSpecializedKernel &ws = *specialized;
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  // Program order, as the producer issues them (the maps' order).
  SmallVector<Operation *> copies;
  func.walk([&](PipelinedOp loop) {
    auto it = pipelines.find(loop);
    if (it != pipelines.end())
      copies.append(it->second.producers.begin(), it->second.producers.end());
  });
  SmallVector<TmaCopyPlan> plans;
  for (Operation *p : copies) {
    std::string why;
    std::optional<TmaCopyPlan> plan = planTmaCopy(cast<CopyOp>(p), func, why);
    if (!plan) {
      whyNot = "a pipelined copy " + why;
      return false;
    }
    plans.push_back(*plan);
  }
  // Copies before the loops (e.g. FlashAttention's Q tile) that TMA can
  // make are the producer's too; the others stay with the consumers.
  for (Operation *h : collectHeadCopies()) {
    std::string why;
    if (std::optional<TmaCopyPlan> plan =
            planTmaCopy(cast<CopyOp>(h), func, why)) {
      copies.push_back(h);
      plans.push_back(*plan);
      ws.headCopies.push_back(h);
    }
  }
  // The maps follow the kernel's parameters (the runtime appends them).
  for (auto [p, plan] : llvm::zip(copies, plans)) {
    unsigned at = func.getNumArguments();
    if (failed(func.insertArgument(at, ptr, DictionaryAttr::get(ctx),
                                   func.getLoc()))) {
      whyNot = "cannot add the tensor map parameters";
      return false;
    }
    plan.map = func.getArgument(at);
    SmallVector<int64_t> strides(plan.box.size(), 1);
    tmaMaps.push_back(TmaDescAttr::get(
        ctx, plan.param, plan.elementType, plan.box, strides,
        /*interleave=*/0, plan.swizzleBytes, /*l2Promotion=*/256,
        TmaOobFill::zero, /*optional=*/false));
    ws.tmaCopies[p] = plan;
  }
  ws.tma = true;
  return true;
}
