//===- TypeConversion.h - gpu-level types to C++ source types ---*- C++ -*-===//
//
// Internal to convert-gpu-to-emitc. Scalars keep their EmitC types (index
// is size_t); the 16-bit floats, memrefs, vectors, async tokens and the
// homogeneous LLVM structs of nvvm.mma.sync become the device library's
// types (include/tile/device/cuda/types.cuh, memref.cuh).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_CONVERSION_GPUTOEMITC_TYPECONVERSION_H
#define TILE_LIB_CONVERSION_GPUTOEMITC_TYPECONVERSION_H

#include "tile/Conversion/GPUToEmitC.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <optional>
#include <string>

namespace mlir::tile::emitc_lowering {

/// The target's spelling of a scalar element type ("float", "tile::half",
/// "int32_t", "size_t"), or nullopt for a type the library has no name for.
std::optional<std::string> cppScalarName(Type type, const SourceTarget &target);

/// `elem` with the source target's address-space qualifier of memory in
/// `memorySpace` (a memref's memory space; `isPrivate` for per-thread
/// arrays): "float", or "device float" for MSL.
std::string qualifiedElementName(const SourceTarget &target, StringRef elem,
                                 Attribute memorySpace, bool isPrivate = false);

/// The type converter of the whole conversion.
class SourceTypeConverter : public TypeConverter {
public:
  SourceTypeConverter(MLIRContext *ctx, const SourceTarget &target);
  const SourceTarget &getSourceTarget() const { return target; }

private:
  const SourceTarget &target;
};

/// `emitc.call_opaque callee(operands) : result` (no result when null).
Value callOpaque(OpBuilder &b, Location loc, Type result, StringRef callee,
                 ValueRange operands);

/// Emits an error naming the first op under `root` that the patterns cannot
/// lower for a reason they know before trying (an unsupported kind, type or
/// use), so the user gets that reason rather than "failed to legalize".
LogicalResult checkSupported(Operation *root);

/// Adds the patterns for gpu, memref, vector, nvgpu, nvvm, llvm and the
/// arith/math ops without a C++ operator (GPUToEmitCPatterns.cpp).
void populateDevicePatterns(const TypeConverter &converter,
                            RewritePatternSet &patterns);

} // namespace mlir::tile::emitc_lowering

#endif // TILE_LIB_CONVERSION_GPUTOEMITC_TYPECONVERSION_H
