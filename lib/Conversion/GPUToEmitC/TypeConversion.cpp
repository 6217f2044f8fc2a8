//===- TypeConversion.cpp - gpu-level types to C++ source types -----------===//

#include "TypeConversion.h"

#include "mlir/Dialect/EmitC/Transforms/TypeConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::tile::emitc_lowering;

std::optional<std::string>
mlir::tile::emitc_lowering::cppScalarName(Type t, const SourceTarget &target) {
  if (t.isF16())
    return target.f16Name.str();
  if (t.isBF16())
    return target.bf16Name.str();
  if (t.isF32())
    return std::string("float");
  if (t.isF64()) {
    if (!target.hasF64)
      return std::nullopt;
    return std::string("double");
  }
  if (isa<IndexType>(t))
    return std::string("size_t");
  if (auto i = dyn_cast<IntegerType>(t)) {
    unsigned w = i.getWidth();
    if (w == 1)
      return std::string("bool");
    if (w != 8 && w != 16 && w != 32 && w != 64)
      return std::nullopt;
    return (i.isUnsigned() ? "uint" : "int") + std::to_string(w) + "_t";
  }
  return std::nullopt;
}

Value mlir::tile::emitc_lowering::callOpaque(OpBuilder &b, Location loc,
                                             Type result, StringRef callee,
                                             ValueRange operands) {
  SmallVector<Type> results;
  if (result)
    results.push_back(result);
  auto call = emitc::CallOpaqueOp::create(b, loc, results, callee, operands);
  return result ? call.getResult(0) : Value();
}

std::string mlir::tile::emitc_lowering::qualifiedElementName(
    const SourceTarget &target, StringRef elem, Attribute memorySpace,
    bool isPrivate) {
  StringRef space = target.globalSpace;
  if (auto gpuSpace = dyn_cast_or_null<gpu::AddressSpaceAttr>(memorySpace)) {
    if (gpuSpace.getValue() == gpu::AddressSpace::Workgroup)
      space = target.sharedSpace;
    else if (gpuSpace.getValue() == gpu::AddressSpace::Private)
      space = target.privateSpace;
  }
  if (isPrivate)
    space = target.privateSpace;
  if (space.empty())
    return elem.str();
  return (space + " " + elem).str();
}

SourceTypeConverter::SourceTypeConverter(MLIRContext *ctx,
                                         const SourceTarget &target)
    : target(target) {
  addConversion([](Type t) -> std::optional<Type> {
    if (isa<emitc::EmitCDialect>(t.getDialect()))
      return t;
    return std::nullopt;
  });
  addConversion([ctx, &target](FloatType t) -> std::optional<Type> {
    if (t.isF16() || t.isBF16())
      return emitc::OpaqueType::get(ctx, *cppScalarName(t, target));
    if (t.isF32() || (t.isF64() && target.hasF64))
      return t;
    return std::nullopt;
  });
  addConversion([&target](IntegerType t) -> std::optional<Type> {
    if (cppScalarName(t, target))
      return t;
    return std::nullopt;
  });
  populateEmitCSizeTTypeConversions(*this);
  addConversion([ctx, &target](MemRefType t) -> std::optional<Type> {
    auto elem = cppScalarName(t.getElementType(), target);
    if (!elem)
      return std::nullopt;
    std::string qualified =
        qualifiedElementName(target, *elem, t.getMemorySpace());
    return emitc::OpaqueType::get(ctx, "tile::memref<" + qualified + ", " +
                                           std::to_string(t.getRank()) + ">");
  });
  addConversion([ctx, &target](VectorType t) -> std::optional<Type> {
    auto elem = cppScalarName(t.getElementType(), target);
    if (!elem || t.isScalable())
      return std::nullopt;
    return emitc::OpaqueType::get(ctx, "tile::vec<" + *elem + ", " +
                                           std::to_string(t.getNumElements()) +
                                           ">");
  });
  // nvvm.mma.sync's accumulator struct: a vector of its one element type.
  addConversion([ctx, &target](LLVM::LLVMStructType t) -> std::optional<Type> {
    ArrayRef<Type> body = t.getBody();
    if (body.empty() || llvm::any_of(body, [&](Type e) { return e != body[0]; }))
      return std::nullopt;
    auto elem = cppScalarName(body[0], target);
    if (!elem)
      return std::nullopt;
    return emitc::OpaqueType::get(ctx, "tile::vec<" + *elem + ", " +
                                           std::to_string(body.size()) + ">");
  });
  // cp.async group tokens carry no value in C++: an int the calls return.
  addConversion([ctx](nvgpu::DeviceAsyncTokenType) -> std::optional<Type> {
    return IntegerType::get(ctx, 32);
  });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                 Location loc) -> Value {
    if (inputs.size() != 1)
      return Value();
    return UnrealizedConversionCastOp::create(b, loc, type, inputs)
        .getResult(0);
  };
  addSourceMaterialization(cast);
  addTargetMaterialization(cast);
}
