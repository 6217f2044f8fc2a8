//===- GemmMatch.cpp - the GEMM launches the sm90 kernel implements -------===//
//
// Pattern match over tile IR (GemmMatch.h); nothing here builds IR.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/TileToSM90/Analysis/GemmMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::sm90;

static std::optional<int64_t> constIndex(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value();
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return i.getInt();
  return std::nullopt;
}

/// v == iv * kt (either operand order).
static bool isIvTimes(Value v, Value iv, int64_t kt) {
  auto mul = v.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  Value l = mul.getLhs(), r = mul.getRhs();
  return (l == iv && constIndex(r) == kt) || (r == iv && constIndex(l) == kt);
}

/// v == memref.dim(mem, dim).
static bool isDimOf(Value v, Value mem, int64_t dim) {
  auto d = v.getDefiningOp<memref::DimOp>();
  return d && d.getSource() == mem && constIndex(d.getIndex()) == dim;
}

/// ub == ceildiv(K, kt) with K = A's last dim (`aKDim`) or B's K dim
/// (`bKDim`): divui(addi(K, kt - 1), kt), or ceildivui / ceildivsi(K, kt).
static bool isTripCount(Value ub, Value A, int64_t aKDim, Value B,
                        int64_t bKDim, int64_t kt) {
  auto isK = [&](Value k) {
    return isDimOf(k, A, aKDim) || isDimOf(k, B, bKDim);
  };
  if (auto c = ub.getDefiningOp<arith::CeilDivUIOp>())
    return isK(c.getLhs()) && constIndex(c.getRhs()) == kt;
  if (auto c = ub.getDefiningOp<arith::CeilDivSIOp>())
    return isK(c.getLhs()) && constIndex(c.getRhs()) == kt;
  Value num;
  if (auto d = ub.getDefiningOp<arith::DivUIOp>()) {
    if (constIndex(d.getRhs()) != kt)
      return false;
    num = d.getLhs();
  } else if (auto d = ub.getDefiningOp<arith::DivSIOp>()) {
    if (constIndex(d.getRhs()) != kt)
      return false;
    num = d.getLhs();
  } else {
    return false;
  }
  auto add = num.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  return (isK(add.getLhs()) && constIndex(add.getRhs()) == kt - 1) ||
         (isK(add.getRhs()) && constIndex(add.getLhs()) == kt - 1);
}

static bool isPureScalar(Operation &op) {
  return op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
         llvm::all_of(op.getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); });
}

/// A row-major global memref of rank 2 (a matrix) to 5 (a batch of them:
/// the dims above the last two), a kernel argument. A TMA map has at most
/// 5 dims.
static bool isGlobalMatrices(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getRank() >= 2 && t.getRank() <= 5 && isGlobal(t) &&
         t.getLayout().isIdentity() && isa<BlockArgument>(v);
}

/// Whether `copy`, between a rank-`rank` global tensor and a 2-D tile,
/// drops exactly the dims above the last two (the batch dims): none for a
/// matrix, [0] for a BxMxK tensor, ...
static bool dropsBatchDims(CopyOp copy, int64_t rank) {
  ArrayRef<int64_t> drop = copy.getDropDims().value_or(ArrayRef<int64_t>{});
  if (int64_t(drop.size()) != rank - 2)
    return false;
  for (auto [i, d] : llvm::enumerate(drop))
    if (d != int64_t(i))
      return false;
  return true;
}

static bool isDefinedOutside(Value v, Operation *region) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return !region->isAncestor(cast<BlockArgument>(v).getOwner()->getParentOp());
  return !region->isAncestor(def);
}

/// Why the staged operand `s` cannot be read from global memory by the
/// epilogue (an empty string when it can): see GemmMatch.h.
static std::string
stagedProblem(StagedOperand s, Value C,
              function_ref<bool(Operation *)> inEpilogue) {
  Value buf = s.alloc.getBuffer();
  if (!s.fill)
    return "one is not filled by a copy from a global tensor";
  Value src = s.fill.getSource();
  if (!isGlobal(cast<MemRefType>(src.getType())) || !isa<BlockArgument>(src))
    return "one is filled from a buffer other than a kernel argument";
  if (src == C)
    return "one is filled from C, which the kernel writes";
  Type from = cast<MemRefType>(src.getType()).getElementType();
  Type to = cast<MemRefType>(buf.getType()).getElementType();
  if (from != to && !(isa<FloatType>(from) && isa<FloatType>(to)))
    return "one is filled by an integer-converting copy";
  for (Operation *user : buf.getUsers()) {
    if (user == s.fill.getOperation())
      continue;
    if (!isa<memref::LoadOp>(user) || !inEpilogue(user))
      return "one has uses other than its copy and loads in the epilogue";
  }
  return "";
}

/// Why `par` is not an elementwise epilogue on the accumulator `acc` (an
/// empty string when it is one): see GemmMatch.h.
static std::string epilogueProblem(ParallelOp par, Value acc, LaunchOp launch,
                                   const DenseSet<Value> &staged) {
  auto accType = cast<MemRefType>(acc.getType());
  if (par.getExtents() != accType.getShape())
    return "its extents are not the accumulator's shape";
  Block &body = par.getBodyBlock();
  auto atIvs = [&](ValueRange idx) {
    return idx.size() == 2 && idx[0] == body.getArgument(0) &&
           idx[1] == body.getArgument(1);
  };
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0)
      return "its body has an op with regions ('" +
             op.getName().getStringRef().str() + "')";
    if (auto load = dyn_cast<memref::LoadOp>(&op)) {
      Value mem = load.getMemRef();
      if (mem == acc) {
        if (!atIvs(load.getIndices()))
          return "it reads the accumulator at another element than the "
                 "iteration's";
        continue;
      }
      if (staged.contains(mem))
        continue;
      if (!isGlobal(cast<MemRefType>(mem.getType())) ||
          !isDefinedOutside(mem, launch))
        return "it reads a buffer other than the accumulator, global "
               "tensors and on-chip buffers one copy fills from a global "
               "tensor";
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(&op)) {
      if (store.getMemRef() != acc || !atIvs(store.getIndices()))
        return "it stores elsewhere than the accumulator at the iteration's "
               "element";
      continue;
    }
    if (!isMemoryEffectFree(&op))
      return "its body has an op with side effects ('" +
             op.getName().getStringRef().str() + "')";
  }
  return "";
}

FailureOr<GemmMatch> sm90::matchSM90Gemm(PipelinedOp loop, std::string &why) {
  auto fail = [&](const Twine &msg) -> FailureOr<GemmMatch> {
    why = msg.str();
    return failure();
  };
  GemmMatch m;
  m.loop = loop;
  m.launch = dyn_cast<LaunchOp>(loop->getParentOp());
  if (!m.launch)
    return fail("the loop is not directly in a tile.launch");
  if (constIndex(loop.getLowerBound()) != 0 || constIndex(loop.getStep()) != 1)
    return fail("the loop does not run from 0 with step 1");

  // Loop body: pure index ops, two copies global -> shared, one gemm.
  Value iv = loop.getInductionVar();
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (auto copy = dyn_cast<CopyOp>(&op)) {
      if (m.gemm)
        return fail("a copy follows the gemm in the loop");
      if (!m.copyA)
        m.copyA = copy;
      else if (!m.copyB)
        m.copyB = copy;
      else
        return fail("more than two copies in the loop");
      continue;
    }
    if (auto gemm = dyn_cast<GemmOp>(&op)) {
      if (m.gemm)
        return fail("more than one gemm in the loop");
      m.gemm = gemm;
      continue;
    }
    if (!isPureScalar(op))
      return fail("the loop body has an op other than index arithmetic, "
                  "two copies and a gemm: '" +
                  op.getName().getStringRef() + "'");
  }
  if (!m.copyA || !m.copyB || !m.gemm)
    return fail("the loop body is not two copies and a gemm");
  GemmOp g = m.gemm;
  if (g.getClear())
    return fail("the gemm clears its accumulator (the TMA path clears it "
                "once, before the loop)");
  m.transA = g.getTransposeA();
  m.transB = g.getTransposeB();
  // Order the copies by the gemm operand they fill.
  if (m.copyA.getTarget() == g.getB() && m.copyB.getTarget() == g.getA())
    std::swap(m.copyA, m.copyB);
  if (m.copyA.getTarget() != g.getA() || m.copyB.getTarget() != g.getB())
    return fail("the copies do not fill the gemm's A and B operands");

  m.A = m.copyA.getSource();
  m.B = m.copyB.getSource();
  if (!isGlobalMatrices(m.A) || !isGlobalMatrices(m.B))
    return fail("A and B must be row-major kernel arguments of rank 2 to 5");
  const int64_t rankA = cast<MemRefType>(m.A.getType()).getRank();
  const int64_t rankB = cast<MemRefType>(m.B.getType()).getRank();
  // A batch of matrices: the copies drop exactly the batch dims.
  if (!dropsBatchDims(m.copyA, rankA) || !dropsBatchDims(m.copyB, rankB))
    return fail(Twine("the 'tile.copy' of ") +
                (dropsBatchDims(m.copyA, rankA) ? "B" : "A") +
                " does not take a tile of the last two dims (a batched "
                "operand's copy drops exactly its leading dims)");
  auto aTy = cast<MemRefType>(g.getA().getType());
  auto bTy = cast<MemRefType>(g.getB().getType());
  auto cTy = cast<MemRefType>(g.getC().getType());
  if (getMemoryScope(aTy) != MemoryScope::shared ||
      getMemoryScope(bTy) != MemoryScope::shared ||
      getMemoryScope(cTy) != MemoryScope::fragment)
    return fail("A and B must be shared buffers, C a fragment");
  m.inType = aTy.getElementType();
  if (!(m.inType.isF16() || m.inType.isBF16()) ||
      bTy.getElementType() != m.inType ||
      cast<MemRefType>(m.A.getType()).getElementType() != m.inType ||
      cast<MemRefType>(m.B.getType()).getElementType() != m.inType)
    return fail("operands must all be f16 or all bf16 (no converting copy)");
  if (!cTy.getElementType().isF32())
    return fail("the accumulator must be f32");
  m.tileM = aTy.getDimSize(m.transA ? 1 : 0);
  m.kt = aTy.getDimSize(m.transA ? 0 : 1);
  m.tileN = bTy.getDimSize(m.transB ? 0 : 1);
  if (m.tileM != 64 && (m.tileM % 128 != 0 || m.tileM > kMaxSplitTileM))
    return fail("tile M must be 64 or a multiple of 128 up to " +
                std::to_string(kMaxSplitTileM));
  if (m.tileN % 64 != 0 || m.tileN > 256)
    return fail("tile N must be a multiple of 64 up to 256");
  if (m.kt != 16 && m.kt != 32 && m.kt != 64 && m.kt != 128)
    return fail("tile K must be 16, 32, 64 or 128");

  // Copy indices: A[row, k*kt] (transpose_a: A[k*kt, row]), B[k*kt, col]
  // (transpose_b: B[col, k*kt]); row/col loop-invariant.
  // Batched operands: their batch indices first.
  auto ai = m.copyA.getSourceIndices(), bi = m.copyB.getSourceIndices();
  m.aBatch = llvm::to_vector(ai.drop_back(2));
  m.bBatch = llvm::to_vector(bi.drop_back(2));
  ai = ai.take_back(2);
  bi = bi.take_back(2);
  const unsigned aK = m.transA ? 0 : 1; // A's K dim (of its last two)
  const unsigned bK = m.transB ? 1 : 0; // B's K dim (of its last two)
  if (!isIvTimes(ai[aK], iv, m.kt) || !isIvTimes(bi[bK], iv, m.kt))
    return fail(Twine("the copies must read ") +
                (m.transA ? "A[k*KT, m]" : "A[m, k*KT]") + " and " +
                (m.transB ? "B[n, k*KT]" : "B[k*KT, n]"));
  m.aRow = ai[1 - aK];
  m.bCol = bi[1 - bK];
  if (!isDefinedOutside(m.aRow, loop) || !isDefinedOutside(m.bCol, loop))
    return fail("the tile origins must not depend on the loop");
  if (llvm::any_of(llvm::concat<Value>(m.aBatch, m.bBatch),
                   [&](Value v) { return !isDefinedOutside(v, loop); }))
    return fail("the batch indices must not depend on the loop");
  if (!isTripCount(loop.getUpperBound(), m.A, rankA - 2 + aK, m.B,
                   rankB - 2 + bK, m.kt))
    return fail("the trip count must be ceildiv(K, KT) of A's or B's K");

  // Launch body: allocs, pure ops, clear C, the loop, copy C out; other
  // buffers only as staged epilogue operands (GemmMatch.h).
  DenseSet<Value> staged;
  for (Operation &op : m.launch.getBodyBlock().without_terminator())
    if (auto a = dyn_cast<AllocOp>(&op))
      if (!llvm::is_contained({g.getA(), g.getB(), g.getC()}, a.getBuffer()))
        staged.insert(a.getBuffer());
  for (Operation &op : m.launch.getBodyBlock().without_terminator()) {
    if (&op == loop.getOperation())
      continue;
    if (auto a = dyn_cast<AllocOp>(&op)) {
      Value r = a.getBuffer();
      if (r == g.getA())
        m.aAlloc = a;
      else if (r == g.getB())
        m.bAlloc = a;
      else if (r == g.getC())
        m.cAlloc = a;
      else
        m.staged.push_back({a, CopyOp{}});
      continue;
    }
    if (auto c = dyn_cast<CopyOp>(&op); c && staged.contains(c.getTarget())) {
      auto it = llvm::find_if(m.staged, [&](StagedOperand &s) {
        return s.alloc.getBuffer() == c.getTarget();
      });
      if (it == m.staged.end() || it->fill)
        return fail("the launch allocates other buffers than A, B and C, "
                    "and one is filled more than once or before its alloc");
      if (!m.epilogue.empty() || m.copyOut)
        return fail("a buffer the epilogue reads is filled after the "
                    "epilogue starts");
      it->fill = c;
      continue;
    }
    if (auto c = dyn_cast<ClearOp>(&op)) {
      if (c.getBuffer() != g.getC() || m.clear || !op.isBeforeInBlock(loop))
        return fail("unexpected tile.clear");
      m.clear = c;
      continue;
    }
    if (auto c = dyn_cast<CopyOp>(&op)) {
      if (c.getSource() != g.getC() || m.copyOut || !loop->isBeforeInBlock(&op))
        return fail("unexpected copy in the launch");
      m.copyOut = c;
      continue;
    }
    if (auto par = dyn_cast<ParallelOp>(&op)) {
      if (!loop->isBeforeInBlock(&op) || m.copyOut)
        return fail("a 'tile.parallel' outside the epilogue (between the "
                    "loop and the copy of C out)");
      std::string problem = epilogueProblem(par, g.getC(), m.launch, staged);
      if (!problem.empty())
        return fail("the 'tile.parallel' after the loop is not an "
                    "elementwise epilogue on the accumulator: " + problem);
      m.epilogue.push_back(par);
      continue;
    }
    if (!isPureScalar(op))
      return fail("the launch body has an unexpected op '" +
                  op.getName().getStringRef() + "'");
  }
  if (!m.aAlloc || !m.bAlloc || !m.cAlloc || !m.clear || !m.copyOut)
    return fail("the launch is not allocs, clear, loop and copy out");
  if (m.aAlloc.getLayoutAttr() || m.bAlloc.getLayoutAttr() ||
      m.cAlloc.getLayoutAttr())
    return fail("user-specified layouts");
  m.C = m.copyOut.getTarget();
  if (!isGlobalMatrices(m.C))
    return fail("C must be a row-major kernel argument of rank 2 to 5");
  auto cOutTy = cast<MemRefType>(m.C.getType());
  if (!dropsBatchDims(m.copyOut, cOutTy.getRank()))
    return fail("the 'tile.copy' of C does not write a tile of the last two "
                "dims (a batched C's copy drops exactly its leading dims)");
  m.outType = cOutTy.getElementType();
  if (!(m.outType.isF16() || m.outType.isBF16() || m.outType.isF32()))
    return fail("C must be f16, bf16 or f32");
  auto ci = m.copyOut.getTargetIndices();
  m.cBatch = llvm::to_vector(ci.drop_back(2));
  m.cRow = ci[ci.size() - 2];
  m.cCol = ci[ci.size() - 1];
  // Nothing else may touch the buffers.
  auto inEpilogue = [&](Operation *user) {
    return llvm::any_of(m.epilogue, [&](ParallelOp p) {
      return p->isProperAncestor(user);
    });
  };
  for (Value buf : {g.getA(), g.getB(), g.getC()})
    for (Operation *user : buf.getUsers())
      if (user != m.copyA && user != m.copyB && user != g &&
          user != m.clear && user != m.copyOut &&
          !(buf == g.getC() && inEpilogue(user)))
        return fail("a buffer has other uses");
  for (StagedOperand s : m.staged) {
    if (std::string problem = stagedProblem(s, m.C, inEpilogue);
        !problem.empty())
      return fail("the launch allocates other buffers than A, B and C, and " +
                  problem);
  }
  return m;
}

/// Whether `v` is computed from `arg` (through ops of the launch body).
static bool dependsOn(Value v, Value arg, LaunchOp launch) {
  if (v == arg)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || !launch->isProperAncestor(def))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOn(operand, arg, launch);
  });
}

/// The grid axes of `c` (coarseTile's rule) for `wantRows` blocks (or
/// parts) along A's rows and `wantCols` along B's columns: c.rowAxis /
/// c.colAxis stay -1 where no axis qualifies or the factor is 1.
static void findCoarseAxes(const GemmMatch &m, int64_t wantRows,
                           int64_t wantCols, CoarseTile &c) {
  LaunchOp launch = m.launch;
  ValueRange blocks = launch.getBlockIndices();
  auto moves = [&](Value v, unsigned d) {
    return dependsOn(v, blocks[d], m.launch);
  };
  auto movesBatch = [&](unsigned d) {
    return llvm::any_of(m.aBatch, [&](Value v) { return moves(v, d); }) ||
           llvm::any_of(m.bBatch, [&](Value v) { return moves(v, d); });
  };
  for (unsigned d = 0; d < blocks.size() && wantRows > 1; ++d)
    if (moves(m.aRow, d) && !moves(m.bCol, d) && !movesBatch(d)) {
      c.rowAxis = d;
      break;
    }
  for (unsigned d = 0; d < blocks.size() && wantCols > 1; ++d)
    if (int64_t(d) != c.rowAxis && moves(m.bCol, d) && !moves(m.aRow, d) &&
        !movesBatch(d)) {
      c.colAxis = d;
      c.cols = wantCols;
      break;
    }
}

FailureOr<CoarseTile> sm90::coarseTile(const GemmMatch &m, int64_t ctaM,
                                       int64_t ctaN, std::string &why) {
  CoarseTile c;
  const int64_t wantRows =
      m.tileM < ctaM && ctaM % m.tileM == 0 ? ctaM / m.tileM : 1;
  const int64_t wantCols =
      m.tileN < ctaN && ctaN % m.tileN == 0 ? ctaN / m.tileN : 1;
  if (wantRows == 1 && wantCols == 1) {
    const std::string launchTile =
        std::to_string(m.tileM) + "x" + std::to_string(m.tileN);
    const std::string cta = std::to_string(ctaM) + "x" + std::to_string(ctaN);
    why = m.tileM >= ctaM && m.tileN >= ctaN
              ? "the launch tile is already " + launchTile
              : "no " + cta + " tile is made of several " + launchTile +
                    " launch tiles";
    return failure();
  }
  findCoarseAxes(m, wantRows, wantCols, c);
  if (c.rowAxis >= 0)
    c.rows = wantRows;
  if (c.blocks() > 1)
    return c;
  why = "no launch grid axis moves only A's tile row or only B's tile "
        "column (and no batch index)";
  return failure();
}

FailureOr<CoarseTile> sm90::splitTile(const GemmMatch &m, int64_t ctaN,
                                      std::string &why) {
  CoarseTile c;
  const int64_t wantCols =
      m.tileN < ctaN && ctaN % m.tileN == 0 ? ctaN / m.tileN : 1;
  findCoarseAxes(m, m.tileM / 128, wantCols, c);
  if (c.rowAxis < 0) {
    why = "no launch grid axis moves only A's tile row (and no batch "
          "index)";
    return failure();
  }
  c.parts = m.tileM / 128;
  return c;
}

/// Throughput of a CTA tile shape relative to cuBLAS, in percent
/// (coarseSpeedupPct's table).
static int64_t tileThroughputPct(int64_t tileM, int64_t tileN) {
  if (tileM >= 128)
    return tileN >= 256 ? 95 : tileN >= 192 ? 88 : tileN >= 128 ? 76 : 48;
  return tileN >= 256 ? 62 : tileN >= 192 ? 58 : tileN >= 128 ? 54 : 35;
}

int64_t sm90::coarseSpeedupPct(int64_t tileM, int64_t tileN, int64_t coarseM,
                               int64_t coarseN) {
  return std::clamp<int64_t>(100 * tileThroughputPct(coarseM, coarseN) /
                                 tileThroughputPct(tileM, tileN),
                             100, 10000);
}

/// Whether `v` is provably >= 0: a block index of `launch`, a non-negative
/// integer constant, or a sum, product, unsigned quotient / remainder,
/// unsigned min / max of such (index arithmetic; tile origins are far from
/// overflowing).
static bool provablyNonNegative(Value v, LaunchOp launch) {
  if (llvm::is_contained(launch.getBlockIndices(), v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto c = dyn_cast<arith::ConstantIndexOp>(def))
    return c.value() >= 0;
  if (auto c = dyn_cast<arith::ConstantIntOp>(def))
    return c.value() >= 0;
  if (!launch->isProperAncestor(def) ||
      !isa<arith::AddIOp, arith::MulIOp, arith::DivUIOp, arith::RemUIOp,
           arith::CeilDivUIOp, arith::MinUIOp, arith::MaxUIOp>(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return provablyNonNegative(operand, launch);
  });
}

LogicalResult sm90::narrowRowsApply(const GemmMatch &m, int64_t rows,
                                    std::string &why) {
  if (m.transA) {
    why = "A is stored K x M (transpose_a: the narrow kernel reads A's rows "
          "as K-major boxes)";
    return failure();
  }
  if (m.batched()) {
    why = "the operands are batched (the runtime's max_rows rule reads the "
          "rows from dim 0)";
    return failure();
  }
  if (m.tileM < rows) {
    why = "the launch tile has " + std::to_string(m.tileM) + " rows, fewer "
          "than " + std::to_string(rows);
    return failure();
  }
  if (!provablyNonNegative(m.aRow, m.launch) ||
      !provablyNonNegative(m.cRow, m.launch)) {
    why = "the tile row origins of A and C are not provably non-negative "
          "(block indices, constants, +, *, unsigned / and %)";
    return failure();
  }
  return success();
}
