//===- AffineEval.h - affine maps evaluated at integer points ---*- C++ -*-===//
//
// Evaluation of an affine map at a point of integers without creating any
// attribute or expression. The layout verifier and the lowerings evaluate
// fragment layouts at every element of a tile (a 128x128 accumulator: 16384
// elements, three maps each, on every verification of the op);
// AffineMap::compose(ArrayRef<int64_t>) builds and uniques constant
// expressions in the context for each call, which made that verification
// about 0.1 s per kernel. AffineMapEvaluator flattens the map's expressions
// once into postfix code and then evaluates points with plain arithmetic.
//
// Semantics are MLIR's: `floordiv` and `ceildiv` round toward minus and
// plus infinity, `mod` is the non-negative remainder of a positive divisor.
// Where MLIR's folding would fail or a value would overflow int64 (division
// or modulo by zero, `mod` by a negative value, INT64_MIN divided by -1,
// any overflowing sum or product), evaluation fails instead.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_IR_AFFINEEVAL_H
#define TILE_DIALECT_TILE_IR_AFFINEEVAL_H

#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::tile {

/// A map without symbols, flattened for repeated evaluation.
class AffineMapEvaluator {
public:
  explicit AffineMapEvaluator(AffineMap map);

  /// Result `i` at `dims`, or nullopt (see above; also for a map with
  /// symbols or a point with too few dims).
  std::optional<int64_t> evaluateResult(unsigned i,
                                        ArrayRef<int64_t> dims) const;
  /// Every result at `dims` into `results` (cleared first); false when one
  /// of them cannot be evaluated.
  bool evaluateAll(ArrayRef<int64_t> dims,
                   SmallVectorImpl<int64_t> &results) const;

private:
  enum class Op : uint8_t { Const, Dim, Add, Mul, FloorDiv, CeilDiv, Mod };
  struct Instr {
    Op op;
    int64_t value; // the constant, or the dim position
  };
  bool flatten(AffineExpr e, SmallVectorImpl<Instr> &code);

  SmallVector<SmallVector<Instr, 16>, 2> code; // one program per result
  unsigned numDims = 0;
  bool valid = true;
};

/// The results of `map` at `dims`, or false (AffineMapEvaluator's rules);
/// for one-off evaluations.
bool evaluateAffineMap(AffineMap map, ArrayRef<int64_t> dims,
                       SmallVectorImpl<int64_t> &results);

/// The results of `map` at `dims`, for maps already verified over the
/// points asked for (the layouts of a verified op): asserts that they
/// evaluate.
SmallVector<int64_t> evaluateVerifiedAffineMap(AffineMap map,
                                               ArrayRef<int64_t> dims);

} // namespace mlir::tile

#endif // TILE_DIALECT_TILE_IR_AFFINEEVAL_H
