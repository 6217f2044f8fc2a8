//===- AffineEval.cpp - affine maps evaluated at integer points -----------===//

#include "tile/Dialect/Tile/IR/AffineEval.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::tile;

AffineMapEvaluator::AffineMapEvaluator(AffineMap map)
    : numDims(map.getNumDims()) {
  if (map.getNumSymbols() != 0)
    valid = false;
  for (AffineExpr e : map.getResults()) {
    code.emplace_back();
    if (!flatten(e, code.back()))
      valid = false;
  }
}

bool AffineMapEvaluator::flatten(AffineExpr e, SmallVectorImpl<Instr> &out) {
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    out.push_back({Op::Const, c.getValue()});
    return true;
  }
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    out.push_back({Op::Dim, int64_t(d.getPosition())});
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin || !flatten(bin.getLHS(), out) || !flatten(bin.getRHS(), out))
    return false; // a symbol
  switch (e.getKind()) {
  case AffineExprKind::Add:
    out.push_back({Op::Add, 0});
    return true;
  case AffineExprKind::Mul:
    out.push_back({Op::Mul, 0});
    return true;
  case AffineExprKind::FloorDiv:
    out.push_back({Op::FloorDiv, 0});
    return true;
  case AffineExprKind::CeilDiv:
    out.push_back({Op::CeilDiv, 0});
    return true;
  case AffineExprKind::Mod:
    out.push_back({Op::Mod, 0});
    return true;
  default:
    return false;
  }
}

std::optional<int64_t>
AffineMapEvaluator::evaluateResult(unsigned i, ArrayRef<int64_t> dims) const {
  if (!valid || i >= code.size() || dims.size() < numDims)
    return std::nullopt;
  SmallVector<int64_t, 16> stack;
  for (const Instr &in : code[i]) {
    if (in.op == Op::Const) {
      stack.push_back(in.value);
      continue;
    }
    if (in.op == Op::Dim) {
      stack.push_back(dims[in.value]);
      continue;
    }
    int64_t b = stack.pop_back_val(), a = stack.back(), out = 0;
    switch (in.op) {
    case Op::Add:
      if (llvm::AddOverflow(a, b, out))
        return std::nullopt;
      break;
    case Op::Mul:
      if (llvm::MulOverflow(a, b, out))
        return std::nullopt;
      break;
    case Op::FloorDiv:
    case Op::CeilDiv:
      // INT64_MIN also rules out the bias of divideCeilSigned overflowing.
      if (b == 0 || a == std::numeric_limits<int64_t>::min())
        return std::nullopt;
      out = in.op == Op::FloorDiv ? llvm::divideFloorSigned(a, b)
                                  : llvm::divideCeilSigned(a, b);
      break;
    case Op::Mod:
      if (b <= 0)
        return std::nullopt;
      out = llvm::mod(a, b);
      break;
    default:
      return std::nullopt;
    }
    stack.back() = out;
  }
  return stack.back();
}

bool AffineMapEvaluator::evaluateAll(ArrayRef<int64_t> dims,
                                  SmallVectorImpl<int64_t> &results) const {
  results.clear();
  for (unsigned i = 0; i < code.size(); ++i) {
    std::optional<int64_t> v = evaluateResult(i, dims);
    if (!v)
      return false;
    results.push_back(*v);
  }
  return true;
}

bool mlir::tile::evaluateAffineMap(AffineMap map, ArrayRef<int64_t> dims,
                                   SmallVectorImpl<int64_t> &results) {
  if (dims.size() != map.getNumDims()) {
    results.clear();
    return false;
  }
  return AffineMapEvaluator(map).evaluateAll(dims, results);
}

SmallVector<int64_t>
mlir::tile::evaluateVerifiedAffineMap(AffineMap map, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> results;
  if (!evaluateAffineMap(map, dims, results)) {
    assert(false && "the map was verified at this point");
    results.assign(map.getNumResults(), 0); // keeps release builds defined
  }
  return results;
}
