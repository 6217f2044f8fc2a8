//===- GemmWgmma.cpp - tile.gemm to Hopper warpgroup MMA (wgmma) ----------===//
//
// sm_90a, any tile program (not only the GEMMs tile-warp-specialize
// matches): a tile.gemm whose accumulator C (f32) has the mma accumulator
// layout with 16-row strips per warp (warps stacked along M, warpsN = 1;
// tile-infer-layouts chooses it for accumulators whose rows feed another
// gemm, P of P.V, and prefers it on sm_90a) is exactly wgmma's m64nNk16
// accumulator fragment: warpgroup g (warps 4g..4g+3) owns rows
// 64g..64g+63, and register 4t + 2h + c of a thread is, in both, row
// 16w + l/4 + 8h, column 8t + 2(l%4) + c. So C stays in its registers and
// each warpgroup issues one chain of wgmma.mma_async per N chunk (at most
// 256 columns), K/16 deep:
//   A  a shared buffer through a matrix descriptor (K-major; transposed:
//      M-major), or a fragment in the mma A-operand register layout, read
//      from registers (the m64k16 register A fragment of a warp is the
//      m16n8k16 one of mma.sync: the accumulator registers of n8 tiles 2kk
//      and 2kk + 1);
//   B  a shared buffer, K-major when transposed (K^T in attention), else
//      N-major (the instruction's transpose bit).
// then wgmma.commit_group and wgmma.wait_group 0 (the gemm is synchronous
// to the code around it: that code reads C, and overlap comes from the
// other warpgroups of the block).
//
// Shared operands must be in a canonical wgmma layout (tile-infer-layouts
// gives every shared gemm operand one): K-major rows of 32, 64 or 128 bytes
// in the swizzle of that width, or 128-byte column panels in the 128-byte
// swizzle (SwizzleAttr `panel`); M/N-major rows in the 128-byte swizzle
// (panels when longer). The swizzle acts on address bits, so these buffers
// start on 1024-byte boundaries (createBuffers aligns them and the dynamic
// shared memory base). Their contents are written by the generic proxy
// (cp.async, st.shared) and read by wgmma through the async proxy: every
// block barrier of a kernel with wgmma is preceded by fence.proxy.async
// (run()).
//
// Descriptors (PTX ISA "Matrix Descriptor Format"): start address >> 4
// (bits 0-13), leading byte offset >> 4 (16-29), stride byte offset >> 4
// (32-45), swizzle mode (62-63: 1 = 128B, 2 = 64B, 3 = 32B). K-major: SBO =
// 8 rows of the swizzle width (the stride between 8-row core matrix
// groups), LBO unused (1); M/N-major (128B): SBO = 1024 (8 K rows), LBO =
// the stride between 64-element panels.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "tile/Dialect/Tile/Transforms/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

namespace {

/// How one shared operand is addressed by descriptors.
struct SharedOperand {
  bool kMajor = true;     // rows run along K (else along M/N)
  int64_t rows = 0;       // the buffer's rows (leading dims)
  int64_t rowBytes = 0;   // bytes of one row
  int64_t swizzleBytes = 0; // 32, 64 or 128: the swizzle (and panel) width
};

std::optional<SharedOperand> matchSharedOperand(Value v, bool kMajor,
                                                std::string &whyNot,
                                                StringRef name) {
  auto fail = [&](const Twine &why) -> std::optional<SharedOperand> {
    whyNot = (name + " " + why).str();
    return std::nullopt;
  };
  auto alloc = v.getDefiningOp<AllocOp>();
  auto type = cast<MemRefType>(v.getType());
  if (!alloc || type.getRank() != 2)
    return fail("is not a 2-D tile.alloc buffer");
  auto swz = dyn_cast_or_null<SwizzleAttr>(alloc.getLayoutAttr());
  SharedOperand s;
  s.kMajor = kMajor;
  s.rows = type.getShape()[0];
  s.rowBytes = type.getShape()[1] * (type.getElementTypeBitWidth() / 8);
  if (!swz || swz.getBits() == 0 || swz.getBase() != 4 || swz.getShift() != 3)
    return fail("has no wgmma swizzle (#tile.swizzle<bits = 1|2|3, base = "
                "4, shift = 3>)");
  s.swizzleBytes = int64_t(16) << swz.getBits();
  if (s.rows % 8)
    return fail("has " + Twine(s.rows) + " rows, not a multiple of 8");
  bool panels = swz.getPanel() == s.swizzleBytes && s.swizzleBytes == 128 &&
                s.rowBytes % 128 == 0;
  if (s.rowBytes != s.swizzleBytes && !panels)
    return fail("rows of " + Twine(s.rowBytes) + " bytes are not in a " +
                "canonical wgmma layout (rows of the swizzle width, or " +
                "128-byte panels)");
  if (!kMajor && s.swizzleBytes != 128)
    return fail("is M/N-major (transposed) with a " +
                Twine(s.swizzleBytes) + "-byte swizzle (wgmma's transposed "
                "operands are lowered for the 128-byte swizzle)");
  return s;
}

} // namespace

std::optional<WgmmaPlan> mlir::tile::nvgpu_lowering::planWgmma(
    GemmOp op, StringRef chip, std::string &whyNot) {
  auto fail = [&](const Twine &why) -> std::optional<WgmmaPlan> {
    whyNot = why.str();
    return std::nullopt;
  };
  if (chip != "sm_90a")
    return fail("chip " + chip + " has no wgmma (sm_90a)");
  auto ct = cast<MemRefType>(op.getC().getType());
  auto at = cast<MemRefType>(op.getA().getType());
  auto bt = cast<MemRefType>(op.getB().getType());
  Type elt = at.getElementType();
  if (elt != bt.getElementType() || !(elt.isF16() || elt.isBF16()))
    return fail("A and B are not both f16 or both bf16");
  if (!ct.getElementType().isF32())
    return fail("the accumulator is not f32");
  auto cAlloc = op.getC().getDefiningOp<AllocOp>();
  auto cLayout =
      cAlloc ? dyn_cast_or_null<FragmentLayoutAttr>(cAlloc.getLayoutAttr())
             : nullptr;
  if (!cLayout || getMemoryScope(ct) != MemoryScope::fragment)
    return fail("C is not a fragment with a layout");
  auto tiling = matchMmaAccumulatorLayout(cLayout, ct.getShape());
  if (!tiling || tiling->warpsN != 1 || tiling->warpM != 16 ||
      cLayout.getThreads() % 128)
    return fail("C's layout does not give each warp one 16-row strip "
                "(wgmma: 64 rows per warpgroup of 128 threads)");
  WgmmaPlan plan;
  plan.m = ct.getShape()[0];
  plan.n = ct.getShape()[1];
  plan.k = op.getK();
  plan.bf16 = elt.isBF16();
  if (plan.k % 16)
    return fail("K = " + Twine(plan.k) + " is not a multiple of 16");
  std::optional<MemoryScope> as = getMemoryScope(at), bs = getMemoryScope(bt);
  if (bs != MemoryScope::shared)
    return fail("B is not a shared buffer");
  plan.bKMajor = op.getTransposeB();
  if (!matchSharedOperand(op.getB(), plan.bKMajor, whyNot, "B"))
    return std::nullopt;
  if (!plan.bKMajor && plan.n % 64)
    return fail("an N-major B needs N a multiple of 64, got " +
                Twine(plan.n));
  if (as == MemoryScope::fragment) {
    if (op.getTransposeA())
      return fail("a fragment A operand cannot be transposed");
    auto aAlloc = op.getA().getDefiningOp<AllocOp>();
    auto aLayout =
        aAlloc ? dyn_cast_or_null<FragmentLayoutAttr>(aAlloc.getLayoutAttr())
               : nullptr;
    auto aTiling = matchMmaAccumulatorLayout(aLayout, at.getShape());
    if (!aTiling || aTiling->warpsN != 1 || aTiling->warpM != 16)
      return fail("the fragment A operand is not in the mma A-operand "
                  "register layout with 16-row strips per warp");
    plan.fragmentA = true;
    return plan;
  }
  if (as != MemoryScope::shared)
    return fail("A is neither a shared buffer nor a fragment");
  plan.aKMajor = !op.getTransposeA();
  if (!matchSharedOperand(op.getA(), plan.aKMajor, whyNot, "A"))
    return std::nullopt;
  return plan;
}

namespace {

class WgmmaEmitter {
public:
  WgmmaEmitter(KernelLowering &kl, GemmOp op, const WgmmaPlan &plan)
      : kl(kl), b(kl.b), loc(kl.loc), op(op), plan(plan) {}

  void emit();

private:
  Value i64(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                    b.getI64IntegerAttr(v));
  }
  Value add(Value x, Value y) { return LLVM::AddOp::create(b, loc, x, y); }
  /// The shared address of a buffer's storage, as i64.
  Value addressOf(const Buffer &buf) {
    Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc,
                                                             buf.storage);
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), p);
  }
  /// Byte offset, before swizzling, of element (row, col) of a shared
  /// operand (panels: column panels of 128 bytes).
  static int64_t byteOffset(const SharedOperand &s, int64_t row, int64_t col,
                            int64_t eltBytes) {
    int64_t c = col * eltBytes;
    if (s.rowBytes == s.swizzleBytes)
      return row * s.rowBytes + c;
    return (c / 128) * (s.rows * 128) + row * 128 + c % 128;
  }
  Value i32c(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                    b.getI32IntegerAttr(v));
  }
  /// The 14-bit start-address field (address / 16) of a shared address.
  Value addressField(Value address) {
    Value a32 = LLVM::TruncOp::create(b, loc, b.getI32Type(), address);
    return LLVM::AndOp::create(
        b, loc, LLVM::LShrOp::create(b, loc, a32, i32c(4)), i32c(0x3FFF));
  }
  /// The descriptor of the 8-row groups starting at byte `offset` (plus
  /// the warpgroup's `dynField`, in 16-byte units) of a shared operand
  /// whose address field is `baseField`.
  ///
  /// The arithmetic is 32-bit and one add per descriptor: a shared address
  /// is below 256 KiB (228 KiB on sm_90), so the field of base + offset is
  /// the base's field + offset / 16 with no carry out of its 14 bits, and
  /// the leading-byte-offset field above it is added as a constant. The
  /// upper word (stride, swizzle mode) is a constant. In 64 bits, as
  /// before, each wgmma of FlashAttention's loop cost six uniform-datapath
  /// instructions (add with carry, 64-bit shift, two masks, a move) of the
  /// issue slots the softmax needs.
  Value descriptor(Value baseField, const SharedOperand &s, int64_t offset,
                   Value dynField) {
    assert(offset % 16 == 0 && "wgmma operand offsets are 16-byte aligned");
    int64_t mode = s.swizzleBytes == 128 ? 1 : s.swizzleBytes == 64 ? 2 : 3;
    int64_t lbo, sbo;
    if (s.kMajor) {
      lbo = 16; // unused for swizzled K-major layouts
      sbo = 8 * s.swizzleBytes;
    } else {
      lbo = s.rows * 128; // between 64-element panels
      sbo = 1024;         // between groups of 8 K rows
    }
    int64_t fixedLo = ((lbo >> 4) & 0x3FFF) << 16;
    int64_t fixedHi = ((sbo >> 4) & 0x3FFF) | (mode << 30);
    Value lo = baseField;
    if (dynField)
      lo = LLVM::AddOp::create(b, loc, lo, dynField);
    lo = LLVM::AddOp::create(b, loc, lo, i32c((offset >> 4) + fixedLo));
    Value wide = LLVM::ZExtOp::create(b, loc, b.getI64Type(), lo);
    return LLVM::OrOp::create(b, loc, wide, i64(fixedHi << 32));
  }

  KernelLowering &kl;
  OpBuilder &b;
  Location loc;
  GemmOp op;
  const WgmmaPlan &plan;
};

/// Passes `values` (all of one type) through an empty asm that claims to
/// change them: the compiler cannot move their computation below, or their
/// uses above, this point (CUTLASS's warpgroup_fence_operand). Used around
/// the wgmma group: the registers wgmma reads are final before
/// wgmma.fence, and the accumulators are read only after wgmma.wait_group.
static void fenceOperands(OpBuilder &b, Location loc,
                          MutableArrayRef<Value> values) {
  if (values.empty())
    return;
  Type t = values.front().getType();
  std::string constraints;
  StringRef c = t.isF32() ? "f" : "r";
  for (size_t i = 0; i < values.size(); ++i)
    constraints += (i ? ",=" : "=") + c.str();
  for (size_t i = 0; i < values.size(); ++i)
    constraints += "," + std::to_string(i);
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(values.size(), t));
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, type, ValueRange(values), "", constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0),
                                             ArrayRef<int64_t>{(int64_t)i});
}

void WgmmaEmitter::emit() {
  Buffer *ab = kl.lookup(op.getA()), *bb = kl.lookup(op.getB()),
         *cb = kl.lookup(op.getC());
  std::string ignored;
  SharedOperand bs = *matchSharedOperand(op.getB(), plan.bKMajor, ignored, "B");
  std::optional<SharedOperand> as;
  if (!plan.fragmentA)
    as = matchSharedOperand(op.getA(), plan.aKMajor, ignored, "A");
  const int64_t eltBytes = 2;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  StringRef eltName = plan.bf16 ? "bf16" : "f16";

  // This thread's warpgroup: rows 64 * wg of C and of a shared A.
  Value wg32 = kl.uniformWarpgroup();
  Value aBase, bBase = addressField(addressOf(*bb));
  Value aWgField;
  if (as) {
    aBase = addressField(addressOf(*ab));
    // K-major A: 64 rows further; M-major A: one 64-element panel further.
    int64_t perWg = as->kMajor ? byteOffset(*as, 64, 0, eltBytes)
                               : byteOffset(*as, 0, 64, eltBytes);
    aWgField = LLVM::MulOp::create(b, loc, wg32, i32c(perWg >> 4));
  }

  // The accumulators of every N chunk and (fragment A) the packed A
  // registers of every k-step, final before wgmma.fence.
  struct Chunk {
    int64_t n0, nc, regBase;
    SmallVector<Value> acc;
  };
  SmallVector<Chunk> chunks;
  for (int64_t n0 = 0; n0 < plan.n; n0 += 256) {
    Chunk ch{n0, std::min<int64_t>(256, plan.n - n0), n0 / 8 * 4, {}};
    // A clearing gemm ignores C's old values (scale-d 0 on its first
    // k-step): poison, so that they are neither kept alive (e.g. S of the
    // previous loop iteration) nor materialized (zeros cost one mov per
    // register per iteration).
    Value poison = op.getClear() ? LLVM::PoisonOp::create(b, loc, f32) : Value();
    for (int64_t r = 0; r < ch.nc / 2; ++r)
      ch.acc.push_back(op.getClear()
                           ? poison
                           : kl.loadRegister(*cb, kl.cst(ch.regBase + r)));
    fenceOperands(b, loc, ch.acc);
    chunks.push_back(std::move(ch));
  }
  SmallVector<Value> aRegs;
  if (plan.fragmentA) {
    // k-step kk: the registers of n8 tiles 2kk, 2kk + 1 in pairs (b32).
    for (int64_t r = 0; r < plan.k / 4; ++r) {
      Value lo = kl.loadRegister(*ab, kl.cst(2 * r));
      Value hi = kl.loadRegister(*ab, kl.cst(2 * r + 1));
      Value pair = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, lo.getType()), ValueRange{lo, hi});
      aRegs.push_back(LLVM::BitcastOp::create(b, loc, i32, pair));
    }
    fenceOperands(b, loc, aRegs);
  }

  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (Chunk &ch : chunks) {
    int64_t nRegs = ch.nc / 2;
    auto accType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(nRegs, f32));
    for (int64_t k0 = 0; k0 < plan.k; k0 += 16) {
      // Operands: the accumulators (tied in/out), A (descriptor or four
      // registers), B's descriptor.
      SmallVector<Value> operands(ch.acc.begin(), ch.acc.end());
      std::string constraints, text;
      llvm::raw_string_ostream asmText(text);
      for (int64_t r = 0; r < nRegs; ++r)
        constraints += (r ? ",=f" : "=f");
      for (int64_t r = 0; r < nRegs; ++r)
        constraints += "," + std::to_string(r);
      // Operand numbers: the outputs, the tied inputs, then A and B.
      int64_t next = 2 * nRegs;
      std::string aText;
      if (plan.fragmentA) {
        aText = "{";
        for (int64_t p = 0; p < 4; ++p) {
          operands.push_back(aRegs[k0 / 16 * 4 + p]);
          constraints += ",r";
          aText += (p ? ", $" : "$") + std::to_string(next++);
        }
        aText += "}";
      } else {
        int64_t off = as->kMajor ? byteOffset(*as, 0, k0, eltBytes)
                                 : byteOffset(*as, k0, 0, eltBytes);
        operands.push_back(descriptor(aBase, *as, off, aWgField));
        constraints += ",l";
        aText = "$" + std::to_string(next++);
      }
      int64_t bOff = bs.kMajor ? byteOffset(bs, ch.n0, k0, eltBytes)
                               : byteOffset(bs, k0, ch.n0, eltBytes);
      operands.push_back(descriptor(bBase, bs, bOff, Value()));
      constraints += ",l";
      std::string bText = "$" + std::to_string(next++);
      // scale-d 0 on the first k-step of a clearing gemm (C = A B).
      bool accumulate = !(op.getClear() && k0 == 0);
      asmText << "{\n.reg .pred p;\nsetp.ne.b32 p, " << (accumulate ? 1 : 0)
              << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << ch.nc
              << "k16.f32." << eltName << "." << eltName << " {";
      for (int64_t r = 0; r < nRegs; ++r)
        asmText << (r ? ", $" : "$") << r;
      asmText << "}, " << aText << ", " << bText << ", p, 1, 1";
      if (!plan.fragmentA)
        asmText << ", " << (as->kMajor ? 0 : 1);
      asmText << ", " << (bs.kMajor ? 0 : 1) << ";\n}\n";
      auto asmOp = LLVM::InlineAsmOp::create(
          b, loc, accType, operands, text, constraints,
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
      for (int64_t r = 0; r < nRegs; ++r)
        ch.acc[r] = LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0),
                                                 ArrayRef<int64_t>{r});
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // Asynchronous (a rotated loop): the registers are the asm's results now
  // and valid after a later wgmma.wait_group (fenceWgmmaRegisters there).
  bool async = kl.asyncWgmma.contains(op);
  if (!async)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  for (Chunk &ch : chunks) {
    if (!async)
      fenceOperands(b, loc, ch.acc);
    for (int64_t r = 0; r < (int64_t)ch.acc.size(); ++r)
      kl.storeRegister(*cb, kl.cst(ch.regBase + r), ch.acc[r]);
  }
}

} // namespace

void mlir::tile::nvgpu_lowering::fenceWgmmaRegisters(KernelLowering &kl,
                                                     Buffer &buffer) {
  SmallVector<Value> regs;
  for (int64_t r = 0; r < buffer.registers; ++r)
    regs.push_back(kl.loadRegister(buffer, kl.cst(r)));
  fenceOperands(kl.b, kl.loc, regs);
  for (int64_t r = 0; r < buffer.registers; ++r)
    kl.storeRegister(buffer, kl.cst(r), regs[r]);
}

void mlir::tile::nvgpu_lowering::lowerGemmWgmma(KernelLowering &kl, GemmOp op,
                                                const WgmmaPlan &plan) {
  WgmmaEmitter(kl, op, plan).emit();
}
