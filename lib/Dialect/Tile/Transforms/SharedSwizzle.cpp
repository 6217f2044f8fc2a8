//===- SharedSwizzle.cpp - bank-conflict-avoiding shared swizzles ---------===//
//
// tile-infer-layouts' choice of a #tile.swizzle for a shared buffer that is
// no gemm operand (a transpose's staging tile, a lookup table): the accesses
// the GPU lowering will emit are enumerated warp by warp, the shared-memory
// wavefronts each needs are counted for every candidate swizzle, and the
// cheapest wins when it beats the row-major layout.
//
// Why a search and not a rule: whether a layout conflicts depends on which
// elements the 32 lanes of one instruction touch, which follows from the
// fragment layout driving a tile.parallel, the index permutation its body
// applies, and the copy widths; a transpose read `s[j, i]` in a 16-lane-per-
// row fragment hits one bank 16 times in the row-major layout and twice
// with rows XORed into the 16-byte chunk index. The model is the lowering's
// (convert-tile-to-nvgpu):
//  * tile.parallel: iteration (t, r) of the driving fragment's inverse map
//    (a fragment stored, else loaded, at exactly the induction variables),
//    else iteration l = t + k * T (row-major); one instruction per register;
//  * global -> shared copies: chunk c = t + k * T of 16 bytes (cp.async);
//  * shared <-> fragment copies: per register, the fragment's inverse map;
//  * shared -> global and shared <-> shared copies: element l = t + k * T.
// Shared memory: 32 banks of 4 bytes; an instruction takes, per phase of
// 128 bytes' worth of lanes (32 lanes of <= 4 bytes, 16 of 8, 8 of 16), as
// many wavefronts as the most distinct words that one bank holds.
//
// Only 16-byte units move (base 4), so every 16-byte cp.async chunk and
// vector access stays whole and aligned, and at most 3 bits (an 8-chunk
// 128-byte window) so that any 128-byte-aligned run of lanes stays
// conflict-free (clears, fills and row-contiguous accesses).
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/Transforms/Layouts.h"
#include "tile/Dialect/Tile/IR/AffineEval.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// One warp-wide instruction: the byte offset each lane touches (-1: the
/// lane is idle) and the access width.
struct WarpAccess {
  SmallVector<int64_t> offsets;
  int64_t bytes;
};

constexpr int64_t kBanks = 32;
constexpr int64_t kBankBytes = 4;
constexpr int64_t kChunkLog2 = 4; // 16-byte units
constexpr int64_t kMaxBits = 3;   // an 8-chunk (128-byte) bank window
// Lane-offsets enumerated per candidate at most: keeps the search cheap
// for the largest tiles (1024 threads x 64 registers).
constexpr int64_t kMaxLaneOffsets = int64_t(1) << 18;

/// The element count, or nullopt when it overflows int64 (a fuzzed
/// parallel's extents can).
std::optional<int64_t> numElementsOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      return std::nullopt;
  return n;
}

int64_t linearIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> idx) {
  int64_t l = 0;
  for (auto [d, i] : llvm::zip(shape, idx))
    l = l * d + i;
  return l;
}

SmallVector<int64_t> delinearize(ArrayRef<int64_t> shape, int64_t l) {
  SmallVector<int64_t> idx(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    idx[d] = l % shape[d];
    l /= shape[d];
  }
  return idx;
}

/// Wavefronts of one instruction after `swizzle` (bits, shift; base 4).
int64_t wavefronts(const WarpAccess &a, int64_t bits, int64_t shift) {
  int64_t mask = ((int64_t(1) << bits) - 1) << (kChunkLog2 + shift);
  int64_t phaseLanes =
      a.bytes <= kBankBytes ? int64_t(a.offsets.size())
                            : std::max<int64_t>(1, kBanks * kBankBytes / a.bytes);
  int64_t total = 0;
  for (size_t p = 0; p < a.offsets.size(); p += phaseLanes) {
    llvm::DenseMap<int64_t, llvm::SmallDenseSet<int64_t, 4>> words;
    size_t end = std::min(a.offsets.size(), p + size_t(phaseLanes));
    for (size_t lane = p; lane < end; ++lane) {
      int64_t off = a.offsets[lane];
      if (off < 0)
        continue;
      if (bits)
        off ^= (off & mask) >> shift;
      for (int64_t w = off / kBankBytes,
                   e = (off + a.bytes + kBankBytes - 1) / kBankBytes;
           w < e; ++w)
        words[w % kBanks].insert(w);
    }
    int64_t most = 0;
    for (auto &[bank, set] : words)
      most = std::max<int64_t>(most, set.size());
    total += most;
  }
  return total;
}

/// Collects the warp-wide accesses the lowering emits for `buf`.
class AccessModel {
public:
  AccessModel(Value buf, int64_t threads, int64_t lanes,
              function_ref<FragmentLayoutAttr(Value)> layoutOf)
      : buf(buf), type(cast<MemRefType>(buf.getType())), threads(threads),
        lanes(lanes), layoutOf(layoutOf),
        eltBytes(std::max<int64_t>(1, type.getElementTypeBitWidth() / 8)) {}

  /// False when a use is not modeled, or the accesses are too many to
  /// enumerate (the buffer then keeps its layout).
  bool collect() {
    for (OpOperand &use : buf.getUses()) {
      Operation *user = use.getOwner();
      if (auto copy = dyn_cast<CopyOp>(user)) {
        if (!addCopy(copy))
          return false;
      } else if (isa<ClearOp, FillOp>(user)) {
        // Row-major element runs: unchanged by a 128-byte-window swizzle.
      } else if (isa<memref::LoadOp, memref::StoreOp>(user)) {
        if (!addElementAccess(user))
          return false;
      } else {
        return false;
      }
      if (tooLarge)
        return false;
    }
    return true;
  }

  int64_t cost(int64_t bits, int64_t shift) const {
    int64_t c = 0;
    for (const WarpAccess &a : accesses)
      c += wavefronts(a, bits, shift);
    return c;
  }

private:
  /// Adds one instruction per (warp, k) over `count` iterations with the
  /// element of lane `t` given by `element(t, k)` (-1: none).
  void addInstructions(int64_t count, int64_t bytes,
                       function_ref<int64_t(int64_t, int64_t)> element) {
    // The budget is checked before enumerating anything.
    int64_t warps = llvm::divideCeil(threads, lanes), needed = 0;
    if (count < 0 || llvm::MulOverflow(warps * lanes, count, needed) ||
        needed > kMaxLaneOffsets - laneOffsets) {
      tooLarge = true;
      return;
    }
    laneOffsets += needed;
    for (int64_t w = 0; w * lanes < threads; ++w)
      for (int64_t k = 0; k < count; ++k) {
        WarpAccess a{{}, bytes};
        for (int64_t lane = 0; lane < lanes; ++lane) {
          int64_t t = w * lanes + lane;
          int64_t e = t < threads ? element(t, k) : -1;
          a.offsets.push_back(e < 0 ? -1 : e * eltBytes);
        }
        accesses.push_back(std::move(a));
      }
  }

  /// Linear distribution of `n` units of `unit` elements: unit t + k * T.
  void addLinear(int64_t n, int64_t unit) {
    addInstructions(llvm::divideCeil(n, threads), unit * eltBytes,
                    [&](int64_t t, int64_t k) {
                      int64_t u = t + k * threads;
                      return u < n ? u * unit : -1;
                    });
  }

  /// Per register of `layout` (over the buffer's shape): its element.
  bool addFragmentRegisters(FragmentLayoutAttr layout) {
    if (!layout || !layout.getInverse())
      return false;
    ArrayRef<int64_t> shape = type.getShape();
    AffineMap inv = layout.getInverse();
    addInstructions(layout.getNumRegisters(shape), eltBytes,
                    [&](int64_t t, int64_t r) {
                      SmallVector<int64_t> idx =
                          evaluateVerifiedAffineMap(inv, {t, r});
                      return linearIndex(shape, idx);
                    });
    return true;
  }

  bool addCopy(CopyOp copy) {
    Value other = copy.getSource() == buf ? copy.getTarget() : copy.getSource();
    auto otherType = cast<MemRefType>(other.getType());
    std::optional<int64_t> count = numElementsOf(type.getShape());
    if (!count)
      return false;
    int64_t n = *count;
    std::optional<MemoryScope> scope = getMemoryScope(otherType);
    if (!scope) {
      // Global side: cp.async chunks into shared, elements out of it.
      int64_t vec = 16 / eltBytes;
      if (copy.getTarget() == buf && eltBytes <= 16 && 16 % eltBytes == 0 &&
          type.getShape().back() % vec == 0)
        addLinear(n / vec, vec);
      else
        addLinear(n, 1);
      return true;
    }
    if (*scope == MemoryScope::fragment)
      return addFragmentRegisters(layoutOf(other));
    if (*scope == MemoryScope::shared) {
      addLinear(n, 1);
      return true;
    }
    return false; // local: every thread copies the whole tile
  }

  /// A memref.load/store of `buf` in a tile.parallel body.
  bool addElementAccess(Operation *op) {
    auto par = op->getParentOfType<ParallelOp>();
    if (!par)
      return false;
    Block &body = par.getBodyBlock();
    ValueRange indices = isa<memref::LoadOp>(op)
                             ? cast<memref::LoadOp>(op).getIndices()
                             : cast<memref::StoreOp>(op).getIndices();
    // Each index: iv position + constant offset, or a constant (-1 iv).
    SmallVector<std::pair<int64_t, int64_t>> terms;
    for (Value v : indices) {
      int64_t add = 0;
      if (auto addi = v.getDefiningOp<arith::AddIOp>()) {
        if (auto c = getConstantIntValue(addi.getRhs())) {
          add = *c;
          v = addi.getLhs();
        } else if (auto c = getConstantIntValue(addi.getLhs())) {
          add = *c;
          v = addi.getRhs();
        }
      }
      if (auto c = getConstantIntValue(v)) {
        int64_t sum = 0;
        if (llvm::AddOverflow(*c, add, sum))
          return false;
        terms.push_back({-1, sum});
        continue;
      }
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &body)
        return false;
      terms.push_back({int64_t(arg.getArgNumber()), add});
    }
    ArrayRef<int64_t> shape = type.getShape();
    auto element = [&](ArrayRef<int64_t> ivs) -> int64_t {
      SmallVector<int64_t> idx;
      for (auto [d, term] : llvm::enumerate(terms)) {
        int64_t i = 0;
        if (llvm::AddOverflow(term.first >= 0 ? ivs[term.first] : 0,
                              term.second, i) ||
            i < 0 || i >= shape[d])
          return -1;
        idx.push_back(i);
      }
      return linearIndex(shape, idx);
    };
    ArrayRef<int64_t> extents = par.getExtents();
    if (FragmentLayoutAttr driver = driverLayout(par)) {
      AffineMap inv = driver.getInverse();
      addInstructions(driver.getNumRegisters(extents), eltBytes,
                      [&](int64_t t, int64_t r) {
                        return element(
                            evaluateVerifiedAffineMap(inv, {t, r}));
                      });
      return true;
    }
    std::optional<int64_t> count = numElementsOf(extents);
    if (!count)
      return false;
    int64_t n = *count;
    addInstructions(llvm::divideCeil(n, threads), eltBytes,
                    [&](int64_t t, int64_t k) {
                      int64_t l = t + k * threads;
                      return l < n ? element(delinearize(extents, l)) : -1;
                    });
    return true;
  }

  /// The layout of the fragment that drives `par` (stored, else loaded, at
  /// exactly the induction variables), as convert-tile-to-nvgpu picks it.
  FragmentLayoutAttr driverLayout(ParallelOp par) {
    Block &body = par.getBodyBlock();
    for (bool stores : {true, false}) {
      FragmentLayoutAttr found;
      body.walk([&](Operation *op) {
        if (found || isa<memref::StoreOp>(op) != stores)
          return;
        Value m;
        ValueRange idx;
        if (auto l = dyn_cast<memref::LoadOp>(op)) {
          m = l.getMemRef();
          idx = l.getIndices();
        } else if (auto s = dyn_cast<memref::StoreOp>(op)) {
          m = s.getMemRef();
          idx = s.getIndices();
        } else {
          return;
        }
        auto t = cast<MemRefType>(m.getType());
        if (getMemoryScope(t) != MemoryScope::fragment ||
            t.getShape() != par.getExtents())
          return;
        for (auto [d, v] : llvm::enumerate(idx)) {
          auto arg = dyn_cast<BlockArgument>(v);
          if (!arg || arg.getOwner() != &body || arg.getArgNumber() != d)
            return;
        }
        FragmentLayoutAttr layout = layoutOf(m);
        if (layout && layout.getInverse())
          found = layout;
      });
      if (found)
        return found;
    }
    return nullptr;
  }

  Value buf;
  MemRefType type;
  int64_t threads, lanes;
  function_ref<FragmentLayoutAttr(Value)> layoutOf;
  int64_t eltBytes;
  int64_t laneOffsets = 0;
  bool tooLarge = false;
  SmallVector<WarpAccess> accesses;
};

} // namespace

SwizzleAttr mlir::tile::chooseBankConflictSwizzle(
    Value buf, int64_t threads, int64_t lanes,
    function_ref<FragmentLayoutAttr(Value)> layoutOf) {
  auto type = cast<MemRefType>(buf.getType());
  if (!type.hasStaticShape() || type.getRank() == 0 ||
      !type.getElementType().isIntOrFloat() || threads <= 0 || lanes <= 0)
    return nullptr;
  int64_t bitsPerElt = type.getElementTypeBitWidth();
  if (bitsPerElt < 8 || bitsPerElt % 8 || bitsPerElt > 128 ||
      !llvm::isPowerOf2_64(bitsPerElt))
    return nullptr;
  std::optional<int64_t> elements = numElementsOf(type.getShape());
  int64_t totalBytes = 0;
  if (!elements || llvm::MulOverflow(*elements, bitsPerElt / 8, totalBytes))
    return nullptr;
  AccessModel model(buf, threads, lanes, layoutOf);
  if (!model.collect())
    return nullptr;
  int64_t bestCost = model.cost(0, 0), bestBits = 0, bestShift = 0;
  int64_t identity = bestCost;
  for (int64_t bits = 1; bits <= kMaxBits; ++bits)
    for (int64_t shift = bits;; ++shift) {
      // The lowering needs the swizzle's period to divide the buffer.
      int64_t period = int64_t(1) << (kChunkLog2 + bits + shift);
      if (period > totalBytes || totalBytes % period)
        break;
      int64_t c = model.cost(bits, shift);
      if (c < bestCost) {
        bestCost = c;
        bestBits = bits;
        bestShift = shift;
      }
    }
  if (!bestBits || bestCost >= identity)
    return nullptr;
  return SwizzleAttr::get(buf.getContext(), bestBits, kChunkLog2, bestShift);
}
