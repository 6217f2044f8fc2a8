//===- CopyAsync.cpp - tile.copy global -> shared through cp.async --------===//
//
// cp.async (nvgpu.device_async_copy) with src-size zero fill for
// out-of-bounds tails (zero-byte copies for chunks wholly outside,
// addresses not clamped), in the widest chunk the launch's alignment
// allows: a runtime check (row length, start column and base address)
// picks 16-byte chunks (L1 bypassed), else (outside software pipelines,
// whose loop registers are scarce) 8 or 4 bytes (cp.async.ca),
// else 16-byte chunks staged through registers (lowerCopyStaged: element
// loads, one vector store per chunk). So an odd row pitch
// (e.g. 4100 f16 columns: 8-byte rows) still copies asynchronously.
// Producers of a versioned software pipeline (Pipeline.cpp) skip the check
// (16 bytes, checked once before the loop) and take the iteration's range
// as a predicate.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

std::optional<int64_t>
mlir::tile::nvgpu_lowering::copyAsyncVector(KernelLowering &kl, CopyOp op,
                                            int64_t chunkBytes) {
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
  if (chunkBytes < eltBytes || chunkBytes % eltBytes)
    return std::nullopt;
  int64_t vec = chunkBytes / eltBytes;
  if (db->type.getShape().back() % vec)
    return std::nullopt;
  // A swizzle moves units of 2^base bytes: a chunk must not straddle two.
  if (db->swizzle && db->swizzle.getBits() &&
      (int64_t(1) << db->swizzle.getBase()) < chunkBytes)
    return std::nullopt;
  return vec;
}

Value mlir::tile::nvgpu_lowering::copyAsyncAligned(KernelLowering &kl,
                                                   CopyOp op,
                                                   int64_t chunkBytes) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  Value src = op.getSource();
  int64_t rank = cast<MemRefType>(src.getType()).getRank();
  int64_t vec = *copyAsyncVector(kl, op, chunkBytes);
  Value lastDim = memref::DimOp::create(b, loc, src, rank - 1);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, src);
  auto zeroRem = [&](Value v, int64_t m) -> Value {
    Value r = arith::RemUIOp::create(b, loc, v, kl.cst(m));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, r,
                                 kl.cst(0));
  };
  return arith::AndIOp::create(b, loc, zeroRem(lastDim, vec),
                               zeroRem(ptr, chunkBytes));
}

LogicalResult mlir::tile::nvgpu_lowering::lowerCopyAsync(
    KernelLowering &kl, CopyOp op, function_ref<void()> scalarPath,
    bool commitAndWait) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  // The chunk sizes cp.async has, widest first, that fit the tile statically.
  SmallVector<std::pair<int64_t, int64_t>> widths; // (bytes, elements)
  // A software-pipeline producer takes 16 bytes or the scalar path: the
  // narrower widths' code inside the loop costs registers the loop's gemm
  // accumulator needs (measured: spills in the sm_80 GEMM).
  bool producer = !commitAndWait;
  for (int64_t bytes : {16, 8, 4})
    if (std::optional<int64_t> vec = copyAsyncVector(kl, op, bytes))
      if (bytes == 16 || !producer)
        widths.push_back({bytes, *vec});
  if (widths.empty() || widths.front().first != 16)
    return failure();
  Buffer *db = kl.lookup(op.getTarget());
  Value src = op.getSource();
  ArrayRef<int64_t> shape = db->type.getShape();
  // The global rank (a rank-reducing copy's source has more dims).
  int64_t rank = cast<MemRefType>(src.getType()).getRank();
  Value lastDim = memref::DimOp::create(b, loc, src, rank - 1);
  // A producer of a versioned pipeline (lowerPipelined) is aligned for the
  // whole loop: no check here; `guard` false makes every chunk zero-byte.
  bool aligned = kl.alignedCopies.contains(op);
  Value guard = kl.copyGuards.lookup(op);

  // The copy in chunks of `vec` elements (`bytes` bytes).
  auto emitChunks = [&](int64_t bytes, int64_t vec) {
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
      // Only 16-byte copies may bypass L1 (cp.async.cg).
      ::mlir::nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokenType, db->storage, ValueRange{dst}, src, gidx,
          b.getIndexAttr(vec), valid,
          bytes == 16 ? b.getUnitAttr() : UnitAttr());
    });
    if (commitAndWait) {
      Value group = ::mlir::nvgpu::DeviceAsyncCreateGroupOp::create(
          b, loc, tokenType, ValueRange{});
      ::mlir::nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                               b.getI32IntegerAttr(0));
    }
  };

  if (aligned) {
    emitChunks(widths.front().first, widths.front().second);
    return success();
  }
  // Runtime: rows of the global tensor and the start column are whole
  // chunks and the base address is chunk-aligned; widest width first.
  OpBuilder::InsertionGuard outer(b);
  Value start = op.getSourceIndices().back();
  for (auto [bytes, vec] : widths) {
    Value startOk = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, start, kl.cst(vec)), kl.cst(0));
    Value ok = arith::AndIOp::create(
        b, loc, copyAsyncAligned(kl, op, bytes), startOk);
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/true);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    emitChunks(bytes, vec);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  }
  scalarPath();
  return success();
}

LogicalResult mlir::tile::nvgpu_lowering::lowerCopyStaged(KernelLowering &kl,
                                                          CopyOp op) {
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  std::optional<int64_t> maybeVec = copyAsyncVector(kl, op, 16);
  if (!maybeVec)
    return failure();
  int64_t vec = *maybeVec;
  Buffer *db = kl.lookup(op.getTarget());
  Value src = op.getSource();
  ArrayRef<int64_t> shape = db->type.getShape();
  int64_t chunks = 1;
  for (int64_t d : shape)
    chunks *= d;
  chunks /= vec;
  // Batches of kBatch chunks in a loop: their loads are in flight together,
  // and the registers held stay bounded (a gemm accumulator in the same
  // pipelined loop needs most of them; unrolled further, LLVM hoists the
  // addresses out of the pipeline and they spill).
  constexpr int64_t kBatch = 2;
  if (chunks % (kl.threads * kBatch))
    return failure();
  Type elt = db->type.getElementType();
  int64_t rank = cast<MemRefType>(src.getType()).getRank();
  Value lastDim = memref::DimOp::create(b, loc, src, rank - 1);
  auto loop = scf::ForOp::create(b, loc, kl.cst(0),
                                 kl.cst(chunks / kl.threads), kl.cst(kBatch));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));
  SmallVector<std::pair<Value, Value>> staged; // (shared index, vector)
  for (int64_t j = 0; j < kBatch; ++j) {
    Value c = arith::AddIOp::create(
        b, loc, kl.tid,
        arith::MulIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, loop.getInductionVar(), kl.cst(j)),
            kl.cst(kl.threads)));
    SmallVector<Value> idx =
        kl.delinearize(shape, arith::MulIOp::create(b, loc, c, kl.cst(vec)));
    SmallVector<Value> offsets = op.expandTileIndex(idx, kl.cst(0));
    SmallVector<Value> gidx;
    Value rowOk;
    for (int64_t d = 0; d < rank; ++d) {
      Value gd = arith::AddIOp::create(b, loc, op.getSourceIndices()[d],
                                       offsets[d]);
      gidx.push_back(gd);
      if (d == rank - 1)
        break;
      Value ext = memref::DimOp::create(b, loc, src, d);
      Value in =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gd, ext);
      rowOk = rowOk ? (Value)arith::AndIOp::create(b, loc, rowOk, in) : in;
    }
    SmallVector<Value> elements;
    for (int64_t e = 0; e < vec; ++e) {
      SmallVector<Value> ge(gidx);
      ge.back() = arith::AddIOp::create(b, loc, gidx.back(), kl.cst(e));
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       ge.back(), lastDim);
      if (rowOk)
        ok = arith::AndIOp::create(b, loc, rowOk, ok);
      auto ifOp = scf::IfOp::create(
          b, loc, ok,
          [&](OpBuilder &tb, Location tl) {
            scf::YieldOp::create(tb, tl,
                                 memref::LoadOp::create(tb, tl, src, ge)
                                     .getResult());
          },
          [&](OpBuilder &eb, Location el) {
            scf::YieldOp::create(eb, el, zero);
          });
      elements.push_back(ifOp.getResult(0));
    }
    Value packed = vector::FromElementsOp::create(
        b, loc, VectorType::get({vec}, elt), elements);
    staged.push_back({kl.sharedIndex(*db, idx), packed});
  }
  for (auto [dst, packed] : staged)
    vector::StoreOp::create(b, loc, packed, db->storage, ValueRange{dst},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  return success();
}
