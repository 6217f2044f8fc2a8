//===- DevicePatterns.cpp - gpu/nvgpu/memref/vector ops to library calls --===//
//
// Every op here becomes `emitc.call_opaque "tile::<name>"` of the device
// header library (include/tile/device/cuda/*.cuh): the intrinsic table of
// the source targets. The names say what the op does, not how a target
// does it, so HIP or MSL libraries can implement the same calls.
//
//===----------------------------------------------------------------------===//

#include "TypeConversion.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/EmitC/Transforms/TypeConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::emitc_lowering;

namespace {

bool isSupportedAtomic(arith::AtomicRMWKind kind) {
  using K = arith::AtomicRMWKind;
  return kind == K::addf || kind == K::addi || kind == K::maxs ||
         kind == K::mins || kind == K::maximumf || kind == K::minimumf;
}

bool isSupportedNVVMMma(NVVM::MmaOp op) {
  auto typeA = op.getMultiplicandAPtxType();
  return op.getLayoutA() == NVVM::MMALayout::row &&
         op.getLayoutB() == NVVM::MMALayout::col && typeA &&
         (*typeA == NVVM::MMATypes::bf16 || *typeA == NVVM::MMATypes::tf32);
}

std::string typeName(Type t, const TypeConverter *c);

/// An index constant (size_t) for the library's index arguments.
Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return emitc::ConstantOp::create(b, loc, emitc::SizeTType::get(b.getContext()),
                                   b.getIndexAttr(v));
}

const SourceTarget &sourceTarget(const TypeConverter *c) {
  return static_cast<const SourceTypeConverter *>(c)->getSourceTarget();
}

/// The target's spelling of scalar type `t` ("void" if it has none).
std::string typeName(Type t, const TypeConverter *c) {
  return cppScalarName(t, sourceTarget(c)).value_or("void");
}

Value i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return emitc::ConstantOp::create(b, loc, b.getI32Type(),
                                   b.getI32IntegerAttr(int32_t(v)));
}

/// A pattern replacing an op by one library call on its converted operands.
template <typename Op>
struct CallPattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  using Adaptor = typename Op::Adaptor;
  /// The callee and extra leading/trailing arguments; empty callee = no
  /// match.
  virtual FailureOr<std::string> callee(Op op, Adaptor adaptor,
                                        ConversionPatternRewriter &rewriter,
                                        SmallVectorImpl<Value> &args) const = 0;

  LogicalResult
  matchAndRewrite(Op op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> args;
    FailureOr<std::string> name = callee(op, adaptor, rewriter, args);
    if (failed(name))
      return failure();
    Type result;
    if (op->getNumResults() >= 1) {
      result = this->getTypeConverter()->convertType(op->getResult(0).getType());
      if (!result)
        return rewriter.notifyMatchFailure(op, "result type");
    }
    Value call = callOpaque(rewriter, op->getLoc(), result, *name, args);
    SmallVector<Value> replacements;
    if (result)
      replacements.push_back(call);
    // Extra results (gpu.shuffle's `valid`) are handled by the caller.
    if (op->getNumResults() > replacements.size())
      return rewriter.notifyMatchFailure(op, "unhandled results");
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

// ---- gpu ------------------------------------------------------------------------

template <typename Op>
struct GPUIndexPattern : CallPattern<Op> {
  GPUIndexPattern(const TypeConverter &c, MLIRContext *ctx, StringRef what)
      : CallPattern<Op>(c, ctx), what(what) {}
  FailureOr<std::string> callee(Op op, typename Op::Adaptor,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &) const override {
    std::string name =
        ("tile::" + what + "_" + gpu::stringifyDimension(op.getDimension()))
            .str();
    // The bound lets the C++ compiler fold what LLVM folds from the range
    // of the NVVM intrinsic (e.g. (tid + 384) / 128 == 3 with 128 threads:
    // a constant register index instead of local memory).
    if (auto bound = op.getUpperBound())
      name += "<" + std::to_string(bound->getZExtValue()) + ">";
    return name;
  }
  std::string what;
};

struct BarrierPattern : CallPattern<gpu::BarrierOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(gpu::BarrierOp, Adaptor,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &) const override {
    return std::string("tile::barrier");
  }
};

struct DynamicSharedPattern : CallPattern<gpu::DynamicSharedMemoryOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(gpu::DynamicSharedMemoryOp, Adaptor,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &) const override {
    return std::string("tile::dynamic_shared_memory");
  }
};

/// gpu.shuffle: the value from the library; `valid` is true for the
/// in-range lanes the lowering uses (full warps), so it must be unused.
struct ShufflePattern : OpConversionPattern<gpu::ShuffleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::ShuffleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getValid().use_empty())
      return rewriter.notifyMatchFailure(op, "`valid` is used");
    Type t = getTypeConverter()->convertType(op.getShuffleResult().getType());
    std::string name =
        ("tile::shuffle_" + gpu::stringifyShuffleMode(op.getMode())).str();
    Value v = callOpaque(rewriter, op.getLoc(), t, name,
                         {adaptor.getValue(), adaptor.getOffset(),
                          adaptor.getWidth()});
    rewriter.replaceOp(op, {v, Value()});
    return success();
  }
};

// ---- memref -------------------------------------------------------------------

struct LoadPattern : CallPattern<memref::LoadOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(memref::LoadOp, Adaptor a,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &args) const override {
    args.push_back(a.getMemref());
    llvm::append_range(args, a.getIndices());
    return std::string("tile::load");
  }
};

struct StorePattern : CallPattern<memref::StoreOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(memref::StoreOp, Adaptor a,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &args) const override {
    args.push_back(a.getMemref());
    args.push_back(a.getValue());
    llvm::append_range(args, a.getIndices());
    return std::string("tile::store");
  }
};

struct DimPattern : CallPattern<memref::DimOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(memref::DimOp, Adaptor a,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &args) const override {
    args.push_back(a.getSource());
    args.push_back(a.getIndex());
    return std::string("tile::dim");
  }
};

struct AlignedPointerPattern
    : CallPattern<memref::ExtractAlignedPointerAsIndexOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(memref::ExtractAlignedPointerAsIndexOp,
                                Adaptor a, ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &args) const override {
    args.push_back(a.getSource());
    return std::string("tile::aligned_address");
  }
};

/// memref.view of the dynamic shared memory: a contiguous memref of the
/// result's sizes at the byte shift.
struct ViewPattern : CallPattern<memref::ViewOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(memref::ViewOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    MemRefType type = op.getType();
    if (!type.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "non-identity view");
    args.push_back(a.getSource());
    args.push_back(a.getByteShift());
    unsigned dyn = 0;
    for (int64_t s : type.getShape())
      args.push_back(ShapedType::isDynamic(s)
                         ? a.getSizes()[dyn++]
                         : indexConstant(rewriter, op.getLoc(), s));
    return "tile::view<" +
           qualifiedElementName(sourceTarget(getTypeConverter()),
                                typeName(type.getElementType(), getTypeConverter()),
                                type.getMemorySpace()) +
           ", " + std::to_string(type.getRank()) + ">";
  }
};

/// memref.alloca (a per-thread array of static shape): a C array and a
/// contiguous memref over it.
struct AllocaPattern : OpConversionPattern<memref::AllocaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::AllocaOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MemRefType type = op.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "dynamic or strided");
    Type resultType = getTypeConverter()->convertType(type);
    auto elem =
        cppScalarName(type.getElementType(), sourceTarget(getTypeConverter()));
    if (!resultType || !elem)
      return rewriter.notifyMatchFailure(op, "element type");
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    Type elemType = getTypeConverter()->convertType(type.getElementType());
    auto array = emitc::ArrayType::get({type.getNumElements()}, elemType);
    Value storage = emitc::VariableOp::create(rewriter, loc, array,
                                              emitc::OpaqueAttr::get(ctx, ""));
    SmallVector<Value> args = {storage};
    for (int64_t s : type.getShape())
      args.push_back(indexConstant(rewriter, loc, s));
    // With address spaces (MSL) the element type is spelled out: the
    // array is `thread` memory.
    std::string templateArgs = std::to_string(type.getRank());
    const SourceTarget &target = sourceTarget(getTypeConverter());
    if (!target.privateSpace.empty())
      templateArgs += ", " + qualifiedElementName(target, *elem, Attribute(),
                                                  /*isPrivate=*/true);
    Value m = callOpaque(rewriter, loc, resultType,
                         "tile::contiguous<" + templateArgs + ">", args);
    rewriter.replaceOp(op, m);
    return success();
  }
};

struct AtomicRMWPattern : CallPattern<memref::AtomicRMWOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(memref::AtomicRMWOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    std::string kind = arith::stringifyAtomicRMWKind(op.getKind()).str();
    if (!isSupportedAtomic(op.getKind()))
      return rewriter.notifyMatchFailure(op, "atomic kind");
    args.push_back(a.getMemref());
    args.push_back(a.getValue());
    llvm::append_range(args, a.getIndices());
    return "tile::atomic_" + kind;
  }
};

/// expand-strided-metadata's output: the base buffer, offset, sizes and
/// strides of a memref.
struct ExtractStridedMetadataPattern
    : OpConversionPattern<memref::ExtractStridedMetadataOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::ExtractStridedMetadataOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const TypeConverter &c = *getTypeConverter();
    SmallVector<Value> results;
    results.push_back(callOpaque(rewriter, loc,
                                 c.convertType(op.getBaseBuffer().getType()),
                                 "tile::base", {a.getSource()}));
    Type index = c.convertType(rewriter.getIndexType());
    results.push_back(
        callOpaque(rewriter, loc, index, "tile::offset", {a.getSource()}));
    int64_t rank = op.getSizes().size();
    for (int64_t k = 0; k < rank; ++k)
      results.push_back(callOpaque(rewriter, loc, index, "tile::dim",
                                   {a.getSource(), indexConstant(rewriter, loc, k)}));
    for (int64_t k = 0; k < rank; ++k)
      results.push_back(callOpaque(rewriter, loc, index, "tile::stride",
                                   {a.getSource(), indexConstant(rewriter, loc, k)}));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ReinterpretCastPattern : CallPattern<memref::ReinterpretCastOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(memref::ReinterpretCastOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    Location loc = op.getLoc();
    args.push_back(a.getSource());
    auto mixed = [&](ArrayRef<int64_t> statics, ValueRange dynamics) {
      unsigned d = 0;
      for (int64_t s : statics)
        args.push_back(ShapedType::isDynamic(s) ? dynamics[d++]
                                                : indexConstant(rewriter, loc, s));
    };
    mixed(op.getStaticOffsets(), a.getOffsets());
    mixed(op.getStaticSizes(), a.getSizes());
    mixed(op.getStaticStrides(), a.getStrides());
    return "tile::reinterpret<" + std::to_string(op.getType().getRank()) + ">";
  }
};

// ---- vector ---------------------------------------------------------------------

int64_t rowLength(VectorType t) {
  return t.getRank() > 1 ? t.getShape().back() : 1;
}

struct FromElementsPattern : CallPattern<vector::FromElementsOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(vector::FromElementsOp, Adaptor a,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &args) const override {
    llvm::append_range(args, a.getElements());
    return std::string("tile::make_vec");
  }
};

/// vector.extract at static positions: an element, or a row of a 2-D vector.
struct ExtractPattern : CallPattern<vector::ExtractOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(vector::ExtractOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    if (!op.getDynamicPosition().empty())
      return rewriter.notifyMatchFailure(op, "dynamic position");
    VectorType src = op.getSourceVectorType();
    ArrayRef<int64_t> pos = op.getStaticPosition();
    ArrayRef<int64_t> shape = src.getShape();
    int64_t flat = 0;
    for (size_t k = 0; k < shape.size(); ++k)
      flat = flat * shape[k] + (k < pos.size() ? pos[k] : 0);
    args.push_back(a.getSource());
    if (pos.size() == shape.size()) {
      args.push_back(i32Constant(rewriter, op.getLoc(), flat));
      return std::string("tile::extract");
    }
    if (pos.size() + 1 != shape.size())
      return rewriter.notifyMatchFailure(op, "extract of a sub-vector");
    args.push_back(i32Constant(rewriter, op.getLoc(), pos.back()));
    return "tile::extract_row<" + std::to_string(shape.back()) + ">";
  }
};

/// vector.shuffle of the leading dimension.
struct ShuffleVectorPattern : CallPattern<vector::ShuffleOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(vector::ShuffleOp op, Adaptor a,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &args) const override {
    args.push_back(a.getV1());
    args.push_back(a.getV2());
    std::string name =
        "tile::shuffle<" + std::to_string(rowLength(op.getV1VectorType()));
    for (int64_t m : op.getMask())
      name += ", " + std::to_string(m);
    return name + ">";
  }
};

struct VectorStorePattern : CallPattern<vector::StoreOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(vector::StoreOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    if (op.getVectorType().getRank() != 1)
      return rewriter.notifyMatchFailure(op, "vector.store of rank > 1");
    args.push_back(a.getBase());
    args.push_back(a.getValueToStore());
    llvm::append_range(args, a.getIndices());
    return std::string("tile::store_vec");
  }
};

struct VectorLoadPattern : CallPattern<vector::LoadOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(vector::LoadOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    if (op.getVectorType().getRank() != 1)
      return rewriter.notifyMatchFailure(op, "vector.load of rank > 1");
    args.push_back(a.getBase());
    llvm::append_range(args, a.getIndices());
    return "tile::load_vec<" +
           std::to_string(op.getVectorType().getNumElements()) + ">";
  }
};

// ---- llvm (the operand plumbing of nvvm.mma.sync) -------------------------------

struct BitcastPattern : CallPattern<LLVM::BitcastOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(LLVM::BitcastOp op, Adaptor a,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &args) const override {
    args.push_back(a.getArg());
    Type to = getTypeConverter()->convertType(op.getType());
    std::string name;
    if (auto opaque = dyn_cast_or_null<emitc::OpaqueType>(to))
      name = opaque.getValue().str();
    else
      name = typeName(op.getType(), getTypeConverter());
    return "tile::bitcast<" + name + ">";
  }
};

struct ExtractValuePattern : CallPattern<LLVM::ExtractValueOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(LLVM::ExtractValueOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    if (op.getPosition().size() != 1)
      return rewriter.notifyMatchFailure(op, "nested position");
    args.push_back(a.getContainer());
    args.push_back(i32Constant(rewriter, op.getLoc(), op.getPosition()[0]));
    return std::string("tile::extract");
  }
};

// ---- nvgpu / nvvm (sm_80 tensor cores and async copies) -------------------------

/// A pointer to element `indices` of memref `m` (tile::element), in the
/// address space of `type` (the original memref type).
Value elementPointer(OpBuilder &b, Location loc, const TypeConverter *c,
                     Value m, MemRefType type, Type elem, ValueRange indices) {
  SmallVector<Value> args = {m};
  llvm::append_range(args, indices);
  std::string qualified = qualifiedElementName(
      sourceTarget(c), typeName(type.getElementType(), c),
      type.getMemorySpace());
  if (qualified != typeName(type.getElementType(), c))
    elem = emitc::OpaqueType::get(b.getContext(), qualified);
  Type ptr = emitc::PointerType::get(elem);
  return callOpaque(b, loc, ptr, "tile::element", args);
}

struct AsyncCopyPattern : OpConversionPattern<nvgpu::DeviceAsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(nvgpu::DeviceAsyncCopyOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = op.getDst().getType().getElementType();
    Type cElem = getTypeConverter()->convertType(elem);
    int64_t bits = elem.getIntOrFloatBitWidth();
    int64_t bytes = op.getDstElements().getZExtValue() * bits / 8;
    Value dst = elementPointer(rewriter, loc, getTypeConverter(), a.getDst(),
                               op.getDst().getType(), cElem, a.getDstIndices());
    Value src = elementPointer(rewriter, loc, getTypeConverter(), a.getSrc(),
                               op.getSrc().getType(), cElem, a.getSrcIndices());
    Value srcBytes;
    if (Value n = a.getSrcElements()) {
      // src-size in bytes: elements * element size (an index value).
      Type i32 = rewriter.getI32Type();
      Value n32 = emitc::CastOp::create(rewriter, loc, i32, n);
      srcBytes = emitc::MulOp::create(rewriter, loc, i32, n32,
                                      i32Constant(rewriter, loc, bits / 8));
    } else {
      srcBytes = i32Constant(rewriter, loc, bytes);
    }
    bool bypass = op.getBypassL1().has_value();
    std::string name = "tile::cp_async<" + std::to_string(bytes) + ", " +
                       (bypass ? "true" : "false") + ">";
    Value token = callOpaque(rewriter, loc, rewriter.getI32Type(), name,
                             {dst, src, srcBytes});
    rewriter.replaceOp(op, token);
    return success();
  }
};

struct AsyncCommitPattern : CallPattern<nvgpu::DeviceAsyncCreateGroupOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(nvgpu::DeviceAsyncCreateGroupOp, Adaptor,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &) const override {
    return std::string("tile::cp_async_commit");
  }
};

struct AsyncWaitPattern : CallPattern<nvgpu::DeviceAsyncWaitOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(nvgpu::DeviceAsyncWaitOp op, Adaptor,
                                ConversionPatternRewriter &,
                                SmallVectorImpl<Value> &) const override {
    return "tile::cp_async_wait<" +
           std::to_string(op.getNumGroups().value_or(0)) + ">";
  }
};

struct LdMatrixPattern : CallPattern<nvgpu::LdMatrixOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(nvgpu::LdMatrixOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    Type elem = getTypeConverter()->convertType(
        op.getSrcMemref().getType().getElementType());
    args.push_back(elementPointer(rewriter, op.getLoc(), getTypeConverter(),
                                  a.getSrcMemref(), op.getSrcMemref().getType(),
                                  elem, a.getIndices()));
    return "tile::ldmatrix<" + std::to_string(op.getNumTiles()) + ", " +
           (op.getTranspose() ? "true" : "false") + ">";
  }
};

struct MmaSyncPattern : CallPattern<nvgpu::MmaSyncOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(nvgpu::MmaSyncOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    if (op.getTf32Enabled())
      return rewriter.notifyMatchFailure(op, "tf32");
    auto s = op.getMmaShapeAsArray();
    args.append({a.getMatrixA(), a.getMatrixB(), a.getMatrixC()});
    return "tile::mma_sync_m" + std::to_string(s[0]) + "n" +
           std::to_string(s[1]) + "k" + std::to_string(s[2]);
  }
};

/// nvvm.mma.sync (bf16 and tf32 in b32 registers): the operands flattened.
struct NVVMMmaPattern : CallPattern<NVVM::MmaOp> {
  using CallPattern::CallPattern;
  FailureOr<std::string> callee(NVVM::MmaOp op, Adaptor a,
                                ConversionPatternRewriter &rewriter,
                                SmallVectorImpl<Value> &args) const override {
    auto typeA = op.getMultiplicandAPtxType();
    if (!isSupportedNVVMMma(op))
      return rewriter.notifyMatchFailure(op, "layout or types");
    NVVM::MMAShapeAttr shape = op.getShape();
    llvm::append_range(args, a.getOperands());
    return "tile::mma_sync_m" + std::to_string(shape.getM()) + "n" +
           std::to_string(shape.getN()) + "k" + std::to_string(shape.getK()) +
           "_" + NVVM::stringifyMMATypes(*typeA).str();
  }
};

// ---- arith / math without a C++ operator -------------------------------------------

/// Any op of the table: tile::<name>(operands). Upstream ArithToEmitC runs
/// first (higher benefit); this catches what it leaves: ops with no C++
/// operator, and arithmetic on the library's 16-bit float types.
struct TableCallPattern : ConversionPattern {
  TableCallPattern(const TypeConverter &c, MLIRContext *ctx, StringRef opName,
                   StringRef function)
      : ConversionPattern(c, opName, /*benefit=*/0, ctx), function(function) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1)
      return failure();
    Type result = getTypeConverter()->convertType(op->getResult(0).getType());
    if (!result)
      return rewriter.notifyMatchFailure(op, "result type");
    std::string name = function;
    // "f<>": the result type as the template argument (conversions; integer
    // helpers, whose operands may be literals of another type).
    if (StringRef(name).ends_with("<>"))
      name = name.substr(0, name.size() - 2) + "<" +
             typeName(op->getResult(0).getType(), getTypeConverter()) + ">";
    rewriter.replaceOp(op, callOpaque(rewriter, op->getLoc(), result, name,
                                      operands));
    return success();
  }

  std::string function;
};

/// arith.maxsi(x, 0 - x) (either order), the integer absolute value the
/// tile lowerings build (LaunchUtils' reduceCombine): tile::absi<T>(x), an
/// abs.s32/.s64. Spelled as max and negation, ptxas 13.0 (sm_90) folds it
/// with a following max into one three-input max that drops the negation
/// (VIMNMX3 R, x, x, acc): absmax reductions came out as plain max.
struct AbsIdiomPattern : OpConversionPattern<arith::MaxSIOp> {
  AbsIdiomPattern(const TypeConverter &c, MLIRContext *ctx)
      : OpConversionPattern(c, ctx, /*benefit=*/1) {}
  LogicalResult
  matchAndRewrite(arith::MaxSIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto isNegationOf = [](Value v, Value x) {
      auto sub = v.getDefiningOp<arith::SubIOp>();
      return sub && sub.getRhs() == x && matchPattern(sub.getLhs(), m_Zero());
    };
    Value x;
    if (isNegationOf(op.getRhs(), op.getLhs()))
      x = adaptor.getLhs();
    else if (isNegationOf(op.getLhs(), op.getRhs()))
      x = adaptor.getRhs();
    else
      return rewriter.notifyMatchFailure(op, "not max(x, 0 - x)");
    Type result = getTypeConverter()->convertType(op.getType());
    if (!result || isa<VectorType>(op.getType()))
      return rewriter.notifyMatchFailure(op, "result type");
    rewriter.replaceOp(op, callOpaque(rewriter, op.getLoc(), result,
                                      "tile::absi<" + typeName(op.getType(), getTypeConverter()) +
                                          ">",
                                      ValueRange{x}));
    return success();
  }
};

/// arith.constant of the library's float types and of splat vectors.
struct ConstantPattern : OpConversionPattern<arith::ConstantOp> {
  ConstantPattern(const TypeConverter &c, MLIRContext *ctx)
      : OpConversionPattern(c, ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    auto scalar = [&](Attribute value, Type t) -> Value {
      if (t.isF16() || t.isBF16()) {
        double v = cast<FloatAttr>(value).getValueAsDouble();
        Value f = emitc::ConstantOp::create(
            rewriter, loc, rewriter.getF32Type(),
            rewriter.getF32FloatAttr(float(v)));
        return callOpaque(rewriter, loc, getTypeConverter()->convertType(t),
                          typeName(t, getTypeConverter()), {f});
      }
      Type ct = getTypeConverter()->convertType(t);
      if (isa<IndexType>(t))
        value = rewriter.getIndexAttr(cast<IntegerAttr>(value).getInt());
      return emitc::ConstantOp::create(rewriter, loc, ct, cast<TypedAttr>(value));
    };
    if (auto vt = dyn_cast<VectorType>(type)) {
      auto dense = dyn_cast<SplatElementsAttr>(op.getValue());
      if (!dense)
        return rewriter.notifyMatchFailure(op, "non-splat vector");
      Value e = scalar(dense.getSplatValue<Attribute>(), vt.getElementType());
      SmallVector<Value> elems(vt.getNumElements(), e);
      rewriter.replaceOp(op, callOpaque(rewriter, loc,
                                        getTypeConverter()->convertType(vt),
                                        "tile::make_vec", elems));
      return success();
    }
    if (!type.isF16() && !type.isBF16())
      return failure();
    rewriter.replaceOp(op, scalar(op.getValue(), type));
    return success();
  }
};

} // namespace

LogicalResult mlir::tile::emitc_lowering::checkSupported(Operation *root) {
  WalkResult r = root->walk([](Operation *op) -> WalkResult {
    auto reject = [&](const Twine &what) {
      op->emitError() << what << " has no C++ source lowering";
      return WalkResult::interrupt();
    };
    if (auto sh = dyn_cast<gpu::ShuffleOp>(op); sh && !sh.getValid().use_empty())
      return reject("gpu.shuffle's `valid` result (only the value is "
                    "available)");
    if (auto a = dyn_cast<memref::AllocaOp>(op);
        a && (!a.getType().hasStaticShape() ||
              !a.getType().getLayout().isIdentity()))
      return reject("memref.alloca of a dynamic shape or a strided layout");
    if (auto a = dyn_cast<memref::AtomicRMWOp>(op);
        a && !isSupportedAtomic(a.getKind()))
      return reject("memref.atomic_rmw " +
                    arith::stringifyAtomicRMWKind(a.getKind()));
    if (auto m = dyn_cast<nvgpu::MmaSyncOp>(op); m && m.getTf32Enabled())
      return reject("nvgpu.mma.sync with tf32 (the lowering uses "
                    "nvvm.mma.sync)");
    if (auto m = dyn_cast<NVVM::MmaOp>(op); m && !isSupportedNVVMMma(m))
      return reject("nvvm.mma.sync other than row.col bf16/tf32");
    if (auto c = dyn_cast<arith::ConstantOp>(op);
        c && isa<VectorType>(c.getType()) &&
        !isa<SplatElementsAttr>(c.getValue()))
      return reject("arith.constant of a non-splat vector");
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

void mlir::tile::emitc_lowering::populateDevicePatterns(
    const TypeConverter &c, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<GPUIndexPattern<gpu::ThreadIdOp>>(c, ctx, "thread_id");
  patterns.add<GPUIndexPattern<gpu::BlockIdOp>>(c, ctx, "block_id");
  patterns.add<GPUIndexPattern<gpu::BlockDimOp>>(c, ctx, "block_dim");
  patterns.add<GPUIndexPattern<gpu::GridDimOp>>(c, ctx, "grid_dim");
  patterns.add<BarrierPattern, DynamicSharedPattern, ShufflePattern,
               LoadPattern, StorePattern, DimPattern, AlignedPointerPattern,
               ViewPattern, AllocaPattern, AtomicRMWPattern,
               ExtractStridedMetadataPattern, ReinterpretCastPattern,
               FromElementsPattern, ExtractPattern, ShuffleVectorPattern,
               VectorStorePattern, VectorLoadPattern, BitcastPattern,
               ExtractValuePattern, AsyncCopyPattern, AsyncCommitPattern,
               AsyncWaitPattern, LdMatrixPattern, MmaSyncPattern,
               NVVMMmaPattern, ConstantPattern, AbsIdiomPattern>(c, ctx);
  // The intrinsic table of the arith and math ops C++ spells as calls.
  static const std::pair<StringRef, StringRef> table[] = {
      {"arith.maximumf", "tile::maximumf"}, {"arith.minimumf", "tile::minimumf"},
      {"arith.maxnumf", "tile::maxnumf"},   {"arith.minnumf", "tile::minnumf"},
      {"arith.maxui", "tile::maxui<>"},       {"arith.minui", "tile::minui<>"},
      {"arith.maxsi", "tile::maxsi<>"},       {"arith.minsi", "tile::minsi<>"},
      {"arith.divui", "tile::divui<>"},       {"arith.remui", "tile::remui<>"},
      {"arith.divsi", "tile::divsi<>"},       {"arith.remsi", "tile::remsi<>"},
      {"arith.andi", "tile::andi<>"},         {"arith.ori", "tile::ori<>"},
      {"arith.xori", "tile::xori<>"},
      {"arith.ceildivui", "tile::ceildivui<>"},
      {"arith.ceildivsi", "tile::ceildivsi<>"},
      {"arith.floordivsi", "tile::floordivsi<>"},
      {"arith.remf", "tile::remf"},         {"arith.shrsi", "tile::shrsi<>"},
      {"arith.extf", "tile::convert<>"},    {"arith.truncf", "tile::convert<>"},
      {"arith.sitofp", "tile::convert<>"},  {"arith.fptosi", "tile::convert<>"},
      {"arith.uitofp", "tile::convert<>"},  {"math.exp", "tile::exp"},
      {"math.exp2", "tile::exp2"},          {"math.log", "tile::log"},
      {"math.log2", "tile::log2"},          {"math.sqrt", "tile::sqrt"},
      {"math.rsqrt", "tile::rsqrt"},        {"math.absf", "tile::absf"},
      {"math.absi", "tile::absi<>"},
      {"math.tanh", "tile::tanh"},          {"math.sin", "tile::sin"},
      {"math.cos", "tile::cos"},            {"math.erf", "tile::erf"},
      {"math.floor", "tile::floor"},        {"math.ceil", "tile::ceil"},
      {"math.powf", "tile::powf"},          {"math.fma", "tile::fma"},
      {"math.log10", "tile::log10"},        {"math.log1p", "tile::log1p"},
      {"math.tan", "tile::tan"},            {"math.trunc", "tile::trunc"},
      {"math.roundeven", "tile::roundeven"}};
  for (auto [op, fn] : table)
    patterns.add<TableCallPattern>(c, ctx, op, fn);
}
