//===- HostWrapperBuilder.h - generate native host wrappers -----*- C++ -*-===//
//
// Builds, in the LLVM dialect, the native backend's per-kernel host wrapper
// `NAME__tile_native(tensors, scalars, env)`: straight-line DLTensor checks in
// the order docs/bundle.md fixes (the runtime's ffi backend checks in the same
// order and both report through tile_check_error, so messages are identical),
// symbol binding, allocation of omitted outputs, memref descriptors, grid
// computation and the launch through `env->run`.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_CONVERSION_HOSTWRAPPERBUILDER_H
#define TILE_CONVERSION_HOSTWRAPPERBUILDER_H

// The ABI the wrappers implement: statuses, check codes, dtypes, struct
// layouts, and (through dlpack.h) the DLPack device types callers pass.
#include "tile/Runtime/tile_abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tile {

struct KernelMetadata;
struct GridExpr;

/// Small helpers over an OpBuilder for LLVM-dialect host code.
class HostCodeBuilder {
public:
  HostCodeBuilder(OpBuilder &b, Location loc);
  Value i32(int64_t v);
  Value i64(int64_t v);
  Value nullPtr();
  /// `base + offset` bytes.
  Value byteGEP(Value base, int64_t offset);
  Value byteGEP(Value base, Value offset);
  /// Loads a value of `type` at `base + offset` bytes.
  Value loadAt(Type type, Value base, int64_t offset);
  /// Loads the pointer at index `i` of a pointer array.
  Value loadPtrAt(Value array, int64_t i);
  void storeAt(Value value, Value base, int64_t offset);
  /// An entry-block stack slot of `type`.
  Value entryAlloca(Type type, int64_t count = 1);

  OpBuilder &b;
  Location loc;
  Type ptrType, i8Type, i16Type, i32Type, i64Type;
};

/// Adds `NAME__tile_native` to `module`; `deviceType` is the DLPack device
/// type every tensor must have (kDLCPU, kDLCUDA, ...).
LogicalResult buildNativeWrapper(ModuleOp module, const KernelMetadata &md,
                                 int32_t deviceType);

} // namespace mlir::tile

#endif // TILE_CONVERSION_HOSTWRAPPERBUILDER_H
