//===- GPUToEmitC.cpp - the convert-gpu-to-emitc pass ---------------------===//
//
// gpu.module { gpu.func kernel } -> top-level emitc.func with the kernel
// ABI of docs/bundle.md. The body converts with one type converter and
// three pattern sets (upstream arith and scf, ours for the rest); the ABI
// expansion of memref parameters happens afterwards, on the emitc.func
// (a memref parameter is one tile::memref<T, R> value during the
// conversion, and 3 + 2R C++ parameters in the end).
//
//===----------------------------------------------------------------------===//

#include "TypeConversion.h"

#include "tile/Conversion/GPUToEmitC.h"
#include "tile/Conversion/Passes.h"

#include "mlir/Conversion/ArithToEmitC/ArithToEmitC.h"
#include "mlir/Conversion/SCFToEmitC/SCFToEmitC.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTGPUTOEMITC
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::emitc_lowering;

namespace {

/// gpu.func -> emitc.func with converted (1:1) argument types and the
/// source target's kernel specifiers.
struct GPUFuncToEmitC : OpConversionPattern<gpu::GPUFuncOp> {
  GPUFuncToEmitC(const TypeConverter &converter, MLIRContext *ctx,
                 const SourceTarget &target)
      : OpConversionPattern(converter, ctx), target(target) {}

  LogicalResult
  matchAndRewrite(gpu::GPUFuncOp func, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (func.getNumResults() != 0)
      return rewriter.notifyMatchFailure(func, "kernel with results");
    FunctionType type = func.getFunctionType();
    TypeConverter::SignatureConversion signature(type.getNumInputs());
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      Type converted = getTypeConverter()->convertType(t);
      if (!converted)
        return rewriter.notifyMatchFailure(func, "parameter type");
      signature.addInputs(i, converted);
    }
    auto newFunc = emitc::FuncOp::create(
        rewriter, func.getLoc(), func.getName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), {}));
    SmallVector<StringRef> specifiers(target.kernelSpecifiers);
    std::string bounds;
    if (auto known = func.getKnownBlockSizeAttr()) {
      int64_t threads = 1;
      for (int32_t d : known.asArrayRef())
        threads *= d;
      bounds = target.launchBounds(threads);
      if (!bounds.empty())
        specifiers.push_back(bounds);
    }
    newFunc.setSpecifiersAttr(rewriter.getStrArrayAttr(specifiers));
    rewriter.inlineRegionBefore(func.getBody(), newFunc.getBody(),
                                newFunc.end());
    if (failed(rewriter.convertRegionTypes(&newFunc.getBody(),
                                           *getTypeConverter(), &signature)))
      return failure();
    rewriter.eraseOp(func);
    return success();
  }

  const SourceTarget &target;
};

struct GPUReturnToEmitC : OpConversionPattern<gpu::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getNumOperands() != 0)
      return rewriter.notifyMatchFailure(op, "return with values");
    rewriter.replaceOpWithNewOp<emitc::ReturnOp>(op, Value());
    return success();
  }
};

/// Replaces each tile::memref<T, R> parameter of `func` by the kernel ABI's
/// 3 + 2R parameters (allocated, aligned, offset, sizes, strides) and
/// rebuilds the memref at entry with tile::make_memref<R>.
void expandMemRefParams(emitc::FuncOp func, ArrayRef<Type> originalInputs,
                        const SourceTarget &target) {
  MLIRContext *ctx = func.getContext();
  Block &entry = func.getBody().front();
  OpBuilder b(ctx);
  b.setInsertionPointToStart(&entry);
  Type i64 = IntegerType::get(ctx, 64);
  unsigned oldCount = entry.getNumArguments();
  for (unsigned i = 0; i < oldCount; ++i) {
    auto memref = dyn_cast<MemRefType>(originalInputs[i]);
    if (!memref)
      continue;
    BlockArgument old = entry.getArgument(i);
    Location loc = old.getLoc();
    auto elem = cppScalarName(memref.getElementType(), target);
    Type ptr = emitc::PointerType::get(emitc::OpaqueType::get(
        ctx, qualifiedElementName(target, elem.value_or("void"),
                                  memref.getMemorySpace())));
    SmallVector<Value> params;
    params.push_back(entry.addArgument(ptr, loc));
    params.push_back(entry.addArgument(ptr, loc));
    for (int64_t k = 0; k < 1 + 2 * memref.getRank(); ++k)
      params.push_back(entry.addArgument(i64, loc));
    // What the type says statically (static sizes; the identity layout's
    // offset 0 and row-major strides; a strided layout's static entries)
    // is a constant, as on the LLVM path, which never reads those fields:
    // the C++ compiler then folds the address arithmetic the same way.
    auto constant = [&](int64_t v) -> Value {
      return emitc::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    int64_t rank = memref.getRank();
    SmallVector<int64_t> strides;
    int64_t offset;
    bool strided = succeeded(memref.getStridesAndOffset(strides, offset));
    SmallVector<Value> fields = {params[0], params[1]};
    fields.push_back(strided && !ShapedType::isDynamic(offset)
                         ? constant(offset)
                         : params[2]);
    SmallVector<Value> sizes;
    for (int64_t k = 0; k < rank; ++k) {
      int64_t s = memref.getDimSize(k);
      sizes.push_back(ShapedType::isDynamic(s) ? params[3 + k] : constant(s));
    }
    llvm::append_range(fields, sizes);
    SmallVector<Value> strideValues(rank);
    for (int64_t k = rank - 1; k >= 0; --k) {
      if (memref.getLayout().isIdentity())
        strideValues[k] =
            k == rank - 1
                ? constant(1)
                : emitc::MulOp::create(b, loc, i64, strideValues[k + 1],
                                       sizes[k + 1])
                      .getResult();
      else if (strided && !ShapedType::isDynamic(strides[k]))
        strideValues[k] = constant(strides[k]);
      else
        strideValues[k] = params[3 + rank + k];
    }
    llvm::append_range(fields, strideValues);
    Value rebuilt = callOpaque(
        b, loc, old.getType(),
        "tile::make_memref<" + std::to_string(memref.getRank()) + ">",
        fields);
    old.replaceAllUsesWith(rebuilt);
  }
  // The new arguments were appended: drop the originals (now unused) and
  // keep the order of the ABI (parameter by parameter: a scalar stays where
  // it was relative to the memrefs' expansions).
  SmallVector<Type> types;
  SmallVector<Value> order;
  unsigned next = oldCount;
  for (unsigned i = 0; i < oldCount; ++i) {
    if (auto memref = dyn_cast<MemRefType>(originalInputs[i])) {
      for (int64_t k = 0; k < 3 + 2 * memref.getRank(); ++k)
        order.push_back(entry.getArgument(next++));
    } else {
      order.push_back(entry.getArgument(i));
    }
  }
  // Rebuild the block's argument list in ABI order: add fresh arguments in
  // order, forward every old one to its fresh copy, erase the old ones.
  unsigned total = entry.getNumArguments();
  for (Value v : order) {
    BlockArgument fresh = entry.addArgument(v.getType(), v.getLoc());
    v.replaceAllUsesWith(fresh);
    types.push_back(v.getType());
  }
  entry.eraseArguments(0, total);
  func.setFunctionType(FunctionType::get(ctx, types, {}));
}

struct ConvertGPUToEmitCPass
    : public tile::impl::ConvertGPUToEmitCBase<ConvertGPUToEmitCPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    const SourceTarget *sourceTarget = lookupSourceTarget(target);
    if (!sourceTarget) {
      module.emitError("convert-gpu-to-emitc: unknown source target '")
          << target << "' (known: cuda, metal)";
      return signalPassFailure();
    }

    if (failed(checkSupported(module)))
      return signalPassFailure();
    // Thread indices are below the kernel's known block size (the LLVM path
    // gets the same fact from the intrinsic's range).
    module.walk([](gpu::GPUFuncOp func) {
      auto known = func.getKnownBlockSizeAttr();
      if (!known)
        return;
      func.walk([&](Operation *op) {
        auto setBound = [&](auto idOp) {
          if (!idOp.getUpperBoundAttr())
            idOp.setUpperBoundAttr(IntegerAttr::get(
                IndexType::get(op->getContext()),
                known[static_cast<unsigned>(idOp.getDimension())]));
        };
        if (auto t = dyn_cast<gpu::ThreadIdOp>(op))
          setBound(t);
        else if (auto d = dyn_cast<gpu::BlockDimOp>(op))
          setBound(d);
      });
    });

    // Hoist the kernels out of their gpu.modules: C++ has one namespace.
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    DenseMap<StringAttr, SmallVector<Type>> originalInputs;
    for (gpu::GPUModuleOp gm : gpuModules) {
      for (Operation &op : llvm::make_early_inc_range(gm.getBody()->getOperations())) {
        auto func = dyn_cast<gpu::GPUFuncOp>(op);
        if (!func) {
          op.emitError("convert-gpu-to-emitc: only gpu.func kernels can be "
                       "printed as C++ source, not '")
              << op.getName() << "'";
          return signalPassFailure();
        }
        originalInputs[func.getNameAttr()] =
            llvm::to_vector(func.getFunctionType().getInputs());
        func->moveBefore(gm);
      }
      gm.erase();
    }

    SourceTypeConverter converter(ctx, *sourceTarget);
    RewritePatternSet patterns(ctx);
    populateArithToEmitCPatterns(converter, patterns);
    populateSCFToEmitCConversionPatterns(patterns, converter);
    populateDevicePatterns(converter, patterns);
    patterns.add<GPUFuncToEmitC>(converter, ctx, *sourceTarget);
    patterns.add<GPUReturnToEmitC>(converter, ctx);

    ConversionTarget conversionTarget(*ctx);
    conversionTarget.addLegalDialect<emitc::EmitCDialect>();
    conversionTarget.addLegalOp<ModuleOp>();
    conversionTarget.addIllegalDialect<
        gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect,
        LLVM::LLVMDialect, memref::MemRefDialect, vector::VectorDialect,
        arith::ArithDialect, math::MathDialect, scf::SCFDialect>();
    ConversionConfig config;
    if (failed(applyPartialConversion(module, conversionTarget,
                                      std::move(patterns), config)))
      return signalPassFailure();

    SmallVector<UnrealizedConversionCastOp> casts;
    module.walk([&](UnrealizedConversionCastOp c) { casts.push_back(c); });
    reconcileUnrealizedCasts(casts);

    // Anything left that is not EmitC has no C++ spelling.
    WalkResult left = module.walk([&](Operation *op) {
      if (isa<ModuleOp>(op) || isa<emitc::EmitCDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError("convert-gpu-to-emitc: no C++ source lowering for '")
          << op->getName() << "' (target " << target << ")";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      return signalPassFailure();

    for (auto func : module.getOps<emitc::FuncOp>()) {
      auto it = originalInputs.find(func.getSymNameAttr());
      if (it != originalInputs.end())
        expandMemRefParams(func, it->second, *sourceTarget);
    }
  }
};

} // namespace
