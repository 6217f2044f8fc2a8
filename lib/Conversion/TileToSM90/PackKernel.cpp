//===- PackKernel.cpp - the runtime's operand repack kernel ---------------===//

#include "PackKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

std::string sm90::packKernelName(StringRef name, int64_t elemBytes) {
  return (name + "_pack2_b" + Twine(elemBytes)).str();
}

std::string sm90::buildPackKernel(OpBuilder &b, Location loc,
                                  gpu::GPUModuleOp gpuModule, StringRef name,
                                  int64_t elemBytes) {
  std::string kernelName = packKernelName(name, elemBytes);
  if (gpuModule.lookupSymbol(kernelName))
    return kernelName;
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto ptrT = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type();
  SmallVector<Type> params;
  for (int64_t g = 0; g < kPackOperands; ++g)
    params.append({ptrT, ptrT, i64, i64, i64, i64});
  auto fn = gpu::GPUFuncOp::create(b, loc, kernelName,
                                   FunctionType::get(ctx, params, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  Block &entry = fn.getBody().front();
  b.setInsertionPointToStart(&entry);
  // The group this CTA copies: blockIdx.y (selects, no divergence: the
  // whole CTA takes the same group).
  Value group = arith::IndexCastUIOp::create(
      b, loc, i64, gpu::BlockIdOp::create(b, loc, gpu::Dimension::y));
  SmallVector<Value> isGroup; // [g - 1]: blockIdx.y == g
  for (int64_t g = 1; g < kPackOperands; ++g)
    isGroup.push_back(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, group,
        arith::ConstantIntOp::create(b, loc, i64, g)));
  auto arg = [&](int64_t i) {
    Value v = entry.getArgument(i);
    for (int64_t g = 1; g < kPackOperands; ++g)
      v = arith::SelectOp::create(b, loc, isGroup[g - 1],
                                  entry.getArgument(6 * g + i), v);
    return v;
  };
  Value src = arg(0), dst = arg(1);
  Value rows = arg(2), cols = arg(3);
  Value srcPitch = arg(4), dstPitch = arg(5);

  const int64_t per = 16 / elemBytes; // elements per 16-byte chunk
  auto elt = b.getIntegerType(unsigned(elemBytes * 8)); // bits, not values
  auto vecT = VectorType::get({per}, elt);
  auto c64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
  };
  auto sreg = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, i64, v).getResult();
  };
  Value chunksPerRow = arith::DivSIOp::create(b, loc, dstPitch, c64(per));
  Value total = arith::MulIOp::create(b, loc, rows, chunksPerRow);
  Value threads = arith::MulIOp::create(
      b, loc, sreg(gpu::GridDimOp::create(b, loc, gpu::Dimension::x)),
      sreg(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x)));
  Value first = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, sreg(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x)),
          sreg(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x))),
      sreg(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x)));
  Value lastCol = arith::SubIOp::create(b, loc, cols, c64(1));
  Value zero = arith::ConstantOp::create(b, loc, elt, b.getZeroAttr(elt));

  auto loop = scf::ForOp::create(b, loc, first, total, threads);
  b.setInsertionPointToStart(loop.getBody());
  Value i = loop.getInductionVar();
  Value r = arith::DivSIOp::create(b, loc, i, chunksPerRow);
  Value c = arith::SubIOp::create(
      b, loc, i, arith::MulIOp::create(b, loc, r, chunksPerRow));
  Value col0 = arith::MulIOp::create(b, loc, c, c64(per));
  Value srcRow = LLVM::GEPOp::create(
      b, loc, ptrT, elt, src,
      ValueRange{arith::MulIOp::create(b, loc, r, srcPitch).getResult()});
  Value vec = LLVM::PoisonOp::create(b, loc, vecT);
  for (int64_t j = 0; j < per; ++j) {
    // The padding past `cols` reads the row's last element (a valid
    // address) and stores zero.
    Value col = arith::AddIOp::create(b, loc, col0, c64(j));
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         col, cols);
    Value at = arith::MinSIOp::create(b, loc, col, lastCol);
    Value p = LLVM::GEPOp::create(b, loc, ptrT, elt, srcRow, ValueRange{at});
    Value v = LLVM::LoadOp::create(b, loc, elt, p, /*alignment=*/elemBytes);
    v = arith::SelectOp::create(b, loc, inside, v, zero);
    vec = LLVM::InsertElementOp::create(b, loc, vec, v, c64(j));
  }
  Value dstAt = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, r, dstPitch), col0);
  Value dstPtr =
      LLVM::GEPOp::create(b, loc, ptrT, elt, dst, ValueRange{dstAt});
  LLVM::StoreOp::create(b, loc, vec, dstPtr, /*alignment=*/16);
  b.setInsertionPointAfter(loop);
  gpu::ReturnOp::create(b, loc);
  return kernelName;
}
