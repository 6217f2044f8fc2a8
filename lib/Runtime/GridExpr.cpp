//===- GridExpr.cpp - Compiled grid-size expressions ----------------------===//
#include "GridExpr.h"

#include <cstring>

namespace tile::rt {

namespace {
const struct {
  const char *name;
  GridOp op;
} kOps[] = {
    {"add", GridOp::Add},           {"sub", GridOp::Sub},
    {"mul", GridOp::Mul},           {"divu", GridOp::DivU},
    {"divs", GridOp::DivS},         {"ceildivu", GridOp::CeilDivU},
    {"ceildivs", GridOp::CeilDivS}, {"remu", GridOp::RemU},
    {"rems", GridOp::RemS},         {"minu", GridOp::MinU},
    {"maxu", GridOp::MaxU},         {"mins", GridOp::MinS},
    {"maxs", GridOp::MaxS},
};
} // namespace

bool parseGridOp(const std::string &name, GridOp &op) {
  for (const auto &e : kOps)
    if (name == e.name) {
      op = e.op;
      return true;
    }
  return false;
}

const char *gridOpName(GridOp op) {
  for (const auto &e : kOps)
    if (op == e.op)
      return e.name;
  return "";
}

std::string GridExpr::format(const std::vector<std::string> &symbols) const {
  std::vector<std::string> stack;
  for (const GridInstr &in : code_) {
    switch (in.op) {
    case GridOp::Const:
      stack.push_back(std::to_string(in.imm));
      continue;
    case GridOp::Sym:
      stack.push_back("\"" + symbols[size_t(in.imm)] + "\"");
      continue;
    case GridOp::Scalar:
      stack.push_back("scalar(" + std::to_string(in.imm) + ")");
      continue;
    default:
      break;
    }
    std::string b = std::move(stack.back());
    stack.pop_back();
    stack.back() =
        std::string(gridOpName(in.op)) + "(" + stack.back() + ", " + b + ")";
  }
  return stack.empty() ? std::string() : stack.back();
}

bool GridExpr::finalize() {
  int depth = 0;
  for (const GridInstr &in : code_) {
    if (in.op <= GridOp::Scalar)
      ++depth;
    else if (--depth < 1)
      return false;
    if (depth > kMaxDepth)
      return false;
  }
  return depth == 1;
}

bool GridExpr::eval(const int64_t *syms, const int64_t *scalars, int64_t &out,
                    int64_t &unboundSym) const {
  int64_t stack[kMaxDepth];
  int sp = 0;
  for (const GridInstr &in : code_) {
    switch (in.op) {
    case GridOp::Const:
      stack[sp++] = in.imm;
      continue;
    case GridOp::Sym:
      if (syms[in.imm] < 0) {
        unboundSym = in.imm;
        return false;
      }
      stack[sp++] = syms[in.imm];
      continue;
    case GridOp::Scalar:
      stack[sp++] = scalars[in.imm];
      continue;
    default:
      break;
    }
    int64_t b = stack[--sp], a = stack[sp - 1];
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    int64_t r = 0;
    switch (in.op) {
    case GridOp::Add: r = static_cast<int64_t>(ua + ub); break;
    case GridOp::Sub: r = static_cast<int64_t>(ua - ub); break;
    case GridOp::Mul: r = static_cast<int64_t>(ua * ub); break;
    case GridOp::MinU: r = ua < ub ? a : b; break;
    case GridOp::MaxU: r = ua > ub ? a : b; break;
    case GridOp::MinS: r = a < b ? a : b; break;
    case GridOp::MaxS: r = a > b ? a : b; break;
    default: {
      if (b == 0) {
        r = 0;
        break;
      }
      // INT64_MIN / -1 overflows in C++; define it as wrapping like i64 IR.
      bool overflow = a == INT64_MIN && b == -1;
      switch (in.op) {
      case GridOp::DivU: r = static_cast<int64_t>(ua / ub); break;
      case GridOp::RemU: r = static_cast<int64_t>(ua % ub); break;
      case GridOp::CeilDivU:
        r = static_cast<int64_t>(ua / ub + (ua % ub != 0));
        break;
      case GridOp::DivS: r = overflow ? a : a / b; break;
      case GridOp::RemS: r = overflow ? 0 : a % b; break;
      case GridOp::CeilDivS: {
        if (overflow) {
          r = a;
          break;
        }
        int64_t q = a / b;
        // C++ truncates toward zero; round up when the exact quotient is
        // positive and inexact.
        if (a % b != 0 && ((a < 0) == (b < 0)))
          ++q;
        r = q;
        break;
      }
      default: r = 0; break;
      }
    }
    }
    stack[sp - 1] = r;
  }
  out = stack[0];
  return true;
}

} // namespace tile::rt
