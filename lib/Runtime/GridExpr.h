//===- GridExpr.h - Compiled grid-size expressions ------------------------===//
//
// The metadata's grid expression trees are compiled once, at load time, into
// a postfix program that a tiny stack machine evaluates per launch: no
// recursion, no allocation, no JSON on the hot path.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_GRIDEXPR_H
#define TILE_LIB_RUNTIME_GRIDEXPR_H

#include <cstdint>
#include <string>
#include <vector>

namespace tile::rt {

enum class GridOp : uint8_t {
  Const, Sym, Scalar, // leaves: push imm / symbol value / int scalar value
  Add, Sub, Mul,
  DivU, DivS, CeilDivU, CeilDivS, RemU, RemS,
  MinU, MaxU, MinS, MaxS,
};

struct GridInstr {
  GridOp op;
  int64_t imm; // Const: value, Sym: symbol index, Scalar: param index
};

class GridExpr {
public:
  static constexpr int kMaxDepth = 32;

  /// Appends an instruction; the parser validates operand counts.
  void push(GridOp op, int64_t imm = 0) { code_.push_back({op, imm}); }
  /// Computes the stack depth; false if malformed or deeper than kMaxDepth.
  bool finalize();

  /// Evaluates with symbol values `syms` (-1 = unbound) and integer scalar
  /// values `scalars` (indexed by parameter). Arithmetic wraps (two's
  /// complement) and a division or remainder by zero yields 0 (so the grid
  /// is empty), exactly like the native wrappers' generated i64 code.
  /// Returns false, with the symbol index in `unboundSym`, if a symbol is
  /// unbound.
  bool eval(const int64_t *syms, const int64_t *scalars, int64_t &out,
            int64_t &unboundSym) const;

  const std::vector<GridInstr> &code() const { return code_; }

  /// The expression as text in the compiler's #tile.grid_expr syntax:
  /// `ceildivu("M", scalar(3))` (symbols quoted, scalar params by index).
  /// Call after finalize() succeeded.
  std::string format(const std::vector<std::string> &symbols) const;

private:
  std::vector<GridInstr> code_;
};

/// Parses an op name ("ceildivu", ...); false if unknown.
bool parseGridOp(const std::string &name, GridOp &op);
/// The name of a binary op ("ceildivu"); "" for a leaf.
const char *gridOpName(GridOp op);

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_GRIDEXPR_H
