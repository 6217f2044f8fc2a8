//===- WideCopy.cpp - tile.copy global -> LDS with 16-byte loads ----------===//
//
// AMD has no cp.async: a global tile is copied into LDS through registers
// (GPUTargetInfo::copyToShared). Each thread moves 16-byte chunks of the
// tile's rows: one global_load_dwordx4 per chunk when the source is 16-byte
// aligned (base, row pitch and start column, a runtime check) and the chunk
// is inside the tensor, else predicated element loads with zero fill (the
// tails). Loads of a batch are issued before its stores, so they are in
// flight together. The LDS stores follow the buffer's swizzle: in units of
// its 2^base bytes (8 for the MFMA operand swizzle: ds_write_b64), else the
// whole chunk (ds_write_b128).
//
//===----------------------------------------------------------------------===//

#include "TileToROCDL.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

LogicalResult mlir::tile::rocdl_lowering::lowerCopyWide(KernelLowering &kl,
                                                        CopyOp op) {
  constexpr int64_t kChunkBytes = 16;
  OpBuilder &b = kl.b;
  Location loc = kl.loc;
  Buffer *db = kl.lookup(op.getTarget());
  Value src = op.getSource();
  auto srcType = dyn_cast<MemRefType>(src.getType());
  if (!db || db->scope != MemoryScope::shared || kl.lookup(src) || !srcType ||
      !srcType.getLayout().isIdentity())
    return failure();
  Type elt = db->type.getElementType();
  if (srcType.getElementType() != elt || !elt.isIntOrFloat() ||
      elt.getIntOrFloatBitWidth() < 8 ||
      kChunkBytes % (elt.getIntOrFloatBitWidth() / 8))
    return failure();
  int64_t rank = db->type.getRank(), srcRank = srcType.getRank();
  // Chunks run along the tile's last dim, which must be the source's
  // contiguous last dim (not a dropped unit dim).
  if (op.getGlobalDim(rank - 1) != srcRank - 1)
    return failure();
  int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  int64_t vec = kChunkBytes / eltBytes;
  ArrayRef<int64_t> shape = db->type.getShape();
  if (shape.back() % vec)
    return failure();
  // LDS stores in units the swizzle keeps whole.
  int64_t unitBytes = kChunkBytes;
  if (db->swizzle && db->swizzle.getBits())
    unitBytes = std::min<int64_t>(kChunkBytes, int64_t(1)
                                                   << db->swizzle.getBase());
  if (unitBytes < eltBytes)
    return failure();
  int64_t unit = unitBytes / eltBytes;
  int64_t chunks = numElements(shape) / vec;
  constexpr int64_t kBatch = 2;
  if (chunks % (kl.threads * kBatch))
    return failure();

  // The runtime alignment of the source: base, row pitch, start column.
  Value lastDim = memref::DimOp::create(b, loc, src, srcRank - 1);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, src);
  auto zeroRem = [&](Value v, int64_t m) -> Value {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, v, kl.cst(m)), kl.cst(0));
  };
  Value aligned = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, zeroRem(lastDim, vec),
                            zeroRem(ptr, kChunkBytes)),
      zeroRem(op.getSourceIndices()[srcRank - 1], vec));
  auto vecType = VectorType::get({vec}, elt);
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));

  auto loop = scf::ForOp::create(b, loc, kl.cst(0),
                                 kl.cst(chunks / kl.threads), kl.cst(kBatch));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<std::pair<SmallVector<Value>, Value>> staged; // (idx, chunk)
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
    for (int64_t d = 0; d < srcRank; ++d) {
      Value gd = arith::AddIOp::create(b, loc, op.getSourceIndices()[d],
                                       offsets[d]);
      gidx.push_back(gd);
      if (d == srcRank - 1)
        break;
      Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gd,
                                       memref::DimOp::create(b, loc, src, d));
      rowOk = rowOk ? (Value)arith::AndIOp::create(b, loc, rowOk, in) : in;
    }
    // The whole chunk inside the row (col + vec <= lastDim, no overflow).
    Value whole = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule,
        arith::AddIOp::create(b, loc, gidx.back(), kl.cst(vec)), lastDim);
    Value fast = arith::AndIOp::create(b, loc, aligned, whole);
    if (rowOk)
      fast = arith::AndIOp::create(b, loc, fast, rowOk);
    auto ifOp = scf::IfOp::create(
        b, loc, fast,
        [&](OpBuilder &tb, Location tl) {
          Value v = vector::LoadOp::create(tb, tl, vecType, src, gidx,
                                           /*nontemporal=*/false,
                                           llvm::Align(kChunkBytes));
          scf::YieldOp::create(tb, tl, v);
        },
        [&](OpBuilder &eb, Location el) {
          // Tails and unaligned sources: predicated element loads.
          OpBuilder::InsertionGuard eg(b);
          b.setInsertionPoint(eb.getInsertionBlock(),
                              eb.getInsertionPoint());
          SmallVector<Value> elements;
          for (int64_t e = 0; e < vec; ++e) {
            SmallVector<Value> ge(gidx);
            ge.back() = arith::AddIOp::create(b, el, gidx.back(), kl.cst(e));
            Value ok = arith::CmpIOp::create(b, el, arith::CmpIPredicate::ult,
                                             ge.back(), lastDim);
            if (rowOk)
              ok = arith::AndIOp::create(b, el, rowOk, ok);
            auto one = scf::IfOp::create(
                b, el, ok,
                [&](OpBuilder &ib, Location il) {
                  scf::YieldOp::create(
                      ib, il, memref::LoadOp::create(ib, il, src, ge)
                                  .getResult());
                },
                [&](OpBuilder &ib, Location il) {
                  scf::YieldOp::create(ib, il, zero);
                });
            elements.push_back(one.getResult(0));
          }
          scf::YieldOp::create(
              b, el, vector::FromElementsOp::create(b, el, vecType, elements)
                         .getResult());
        });
    staged.push_back({idx, ifOp.getResult(0)});
  }
  for (auto &[idx, chunk] : staged)
    for (int64_t u = 0; u < vec; u += unit) {
      SmallVector<Value> at(idx);
      at.back() = arith::AddIOp::create(b, loc, idx.back(), kl.cst(u));
      // A 1-D shuffle (llvm.shufflevector) takes the unit out of the chunk.
      SmallVector<int64_t> lanes;
      for (int64_t e = 0; e < unit; ++e)
        lanes.push_back(u + e);
      Value part = unit == vec ? chunk
                               : (Value)vector::ShuffleOp::create(
                                     b, loc, chunk, chunk, lanes);
      vector::StoreOp::create(b, loc, part, db->storage,
                              ValueRange{kl.sharedIndex(*db, at)},
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(unitBytes));
    }
  return success();
}
