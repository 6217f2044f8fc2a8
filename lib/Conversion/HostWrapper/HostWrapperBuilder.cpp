//===- HostWrapperBuilder.cpp - generate native host wrappers -------------===//

#include "tile/Conversion/HostWrapperBuilder.h"

#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "llvm/ADT/StringMap.h"

#include <cstddef>
#include <limits>

using namespace mlir;
using namespace mlir::tile;

//===----------------------------------------------------------------------===//
// HostCodeBuilder
//===----------------------------------------------------------------------===//

HostCodeBuilder::HostCodeBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {
  MLIRContext *ctx = b.getContext();
  ptrType = LLVM::LLVMPointerType::get(ctx);
  i8Type = b.getI8Type();
  i16Type = b.getI16Type();
  i32Type = b.getI32Type();
  i64Type = b.getI64Type();
}

Value HostCodeBuilder::i32(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i32Type, b.getI32IntegerAttr(v));
}
Value HostCodeBuilder::i64(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i64Type, b.getI64IntegerAttr(v));
}
Value HostCodeBuilder::nullPtr() { return LLVM::ZeroOp::create(b, loc, ptrType); }

Value HostCodeBuilder::byteGEP(Value base, int64_t offset) {
  if (offset == 0)
    return base;
  return LLVM::GEPOp::create(b, loc, ptrType, i8Type, base,
                             ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
}
Value HostCodeBuilder::byteGEP(Value base, Value offset) {
  return LLVM::GEPOp::create(b, loc, ptrType, i8Type, base, ValueRange{offset});
}
Value HostCodeBuilder::loadAt(Type type, Value base, int64_t offset) {
  return LLVM::LoadOp::create(b, loc, type, byteGEP(base, offset));
}
Value HostCodeBuilder::loadPtrAt(Value array, int64_t i) {
  return loadAt(ptrType, array, i * 8);
}
void HostCodeBuilder::storeAt(Value value, Value base, int64_t offset) {
  LLVM::StoreOp::create(b, loc, value, byteGEP(base, offset));
}
Value HostCodeBuilder::entryAlloca(Type type, int64_t count) {
  OpBuilder::InsertionGuard guard(b);
  Block *entry = &b.getInsertionBlock()->getParent()->front();
  b.setInsertionPointToStart(entry);
  Value n = LLVM::ConstantOp::create(b, loc, i64Type, b.getI64IntegerAttr(count));
  return LLVM::AllocaOp::create(b, loc, ptrType, type, n, /*alignment=*/16);
}

//===----------------------------------------------------------------------===//
// Native wrapper
//===----------------------------------------------------------------------===//

namespace {

// Every offset, width and code below comes from tile_abi.h / dlpack.h
// (offsetof, sizeof, TILE_*), so the wrappers follow the header by
// construction. The static_asserts pin the IR types the loads and stores use
// (i8/i16/i32/i64/ptr) to the header's field types: changing a field's type
// there stops this file from compiling instead of miscompiling wrappers. The
// compiler runs on the host whose ABI the CPU code and the GPU host wrappers
// target, so its offsetof is theirs.

// DLTensor (dlpack.h) fields the wrapper reads.
constexpr int64_t kDataOff = offsetof(DLTensor, data);
constexpr int64_t kDeviceTypeOff =
    offsetof(DLTensor, device) + offsetof(DLDevice, device_type);
constexpr int64_t kDeviceIdOff =
    offsetof(DLTensor, device) + offsetof(DLDevice, device_id);
constexpr int64_t kNdimOff = offsetof(DLTensor, ndim);
constexpr int64_t kDTypeCodeOff =
    offsetof(DLTensor, dtype) + offsetof(DLDataType, code);
constexpr int64_t kDTypeBitsOff =
    offsetof(DLTensor, dtype) + offsetof(DLDataType, bits);
constexpr int64_t kDTypeLanesOff =
    offsetof(DLTensor, dtype) + offsetof(DLDataType, lanes);
constexpr int64_t kShapeOff = offsetof(DLTensor, shape);
constexpr int64_t kStridesOff = offsetof(DLTensor, strides);
constexpr int64_t kByteOffsetOff = offsetof(DLTensor, byte_offset);
static_assert(sizeof(DLDevice::device_type) == 4 &&
                  sizeof(DLDevice::device_id) == 4 &&
                  sizeof(DLTensor::ndim) == 4,
              "read as i32");
static_assert(sizeof(DLDataType::code) == 1 && sizeof(DLDataType::bits) == 1 &&
                  sizeof(DLDataType::lanes) == 2,
              "read as i8, i8, i16");
static_assert(sizeof(DLTensor::byte_offset) == 8 &&
                  sizeof(*DLTensor::shape) == 8 &&
                  sizeof(*DLTensor::strides) == 8,
              "read as i64");

// tile_native_env fields.
constexpr int64_t kEnvCtxOff = offsetof(tile_native_env, ctx);
constexpr int64_t kEnvAllocOff = offsetof(tile_native_env, alloc_output);
constexpr int64_t kEnvRunOff = offsetof(tile_native_env, run);
constexpr int64_t kEnvErrorOff = offsetof(tile_native_env, error);

// tile_check_error fields, written by the error block as i32 x4, i64 x2.
constexpr int64_t kErrCodeOff = offsetof(tile_check_error, code);
constexpr int64_t kErrParamOff = offsetof(tile_check_error, param);
constexpr int64_t kErrDimOff = offsetof(tile_check_error, dim);
constexpr int64_t kErrReservedOff = offsetof(tile_check_error, reserved);
constexpr int64_t kErrExpectedOff = offsetof(tile_check_error, expected);
constexpr int64_t kErrActualOff = offsetof(tile_check_error, actual);
static_assert(sizeof(tile_check_error::code) == 4 &&
                  sizeof(tile_check_error::param) == 4 &&
                  sizeof(tile_check_error::dim) == 4 &&
                  sizeof(tile_check_error::reserved) == 4 &&
                  sizeof(tile_check_error::expected) == 8 &&
                  sizeof(tile_check_error::actual) == 8,
              "written as i32 x4, i64 x2");

// Memref descriptor head (the sizes/strides follow: TILE_MEMREF_*_OFFSET).
constexpr int64_t kMemrefAllocatedOff = offsetof(tile_memref_head, allocated);
constexpr int64_t kMemrefAlignedOff = offsetof(tile_memref_head, aligned);
constexpr int64_t kMemrefOffsetOff = offsetof(tile_memref_head, offset);
static_assert(sizeof(tile_memref_head::offset) == 8 &&
                  sizeof(tile_memref_head) == 8 * TILE_MEMREF_WORDS(0),
              "a head of 3 words, written as ptr, ptr, i64");

// Pointer arrays (tensors, scalars, args) are indexed in 8-byte steps.
static_assert(sizeof(void *) == 8, "64-bit hosts only");

class NativeWrapperGen {
public:
  NativeWrapperGen(ModuleOp module, const KernelMetadata &md, int32_t devType)
      : module(module), md(md), deviceType(devType),
        builder(OpBuilder::atBlockEnd(module.getBody())),
        h(builder, module.getLoc()) {}

  LogicalResult generate();

private:
  Value i1(bool v) {
    return LLVM::ConstantOp::create(builder, h.loc, builder.getI1Type(),
                                    builder.getBoolAttr(v));
  }
  Value cmp(LLVM::ICmpPredicate p, Value a, Value b) {
    return LLVM::ICmpOp::create(builder, h.loc, p, a, b);
  }
  Block *newBlock() {
    Block *block = new Block();
    fn.getBody().push_back(block);
    return block;
  }
  /// Continues in a fresh block when `ok`, else reports the check error.
  void check(Value ok, int32_t code, int64_t param, int64_t dim,
             Value expected, Value actual) {
    Block *cont = newBlock();
    SmallVector<Value> errArgs = {h.i32(code), h.i32(param), h.i32(dim),
                                  expected, actual};
    LLVM::CondBrOp::create(builder, h.loc, ok, cont, ValueRange{}, errorBlock,
                           errArgs);
    builder.setInsertionPointToStart(cont);
  }
  /// if (cond) then() else otherwise(); both continue at a join block.
  void ifThenElse(Value cond, function_ref<void()> then,
                  function_ref<void()> otherwise) {
    Block *thenBlock = newBlock(), *elseBlock = newBlock();
    Block *join = newBlock();
    LLVM::CondBrOp::create(builder, h.loc, cond, thenBlock, elseBlock);
    builder.setInsertionPointToStart(thenBlock);
    then();
    LLVM::BrOp::create(builder, h.loc, join);
    builder.setInsertionPointToStart(elseBlock);
    otherwise();
    LLVM::BrOp::create(builder, h.loc, join);
    builder.setInsertionPointToStart(join);
  }

  void buildErrorBlock();
  void checkTensor(int64_t i);
  void bindSymbol(int64_t param, int64_t dim, const std::string &sym,
                  Value size);
  void allocateOutput(int64_t i);
  Value buildDescriptor(int64_t i);
  Value evalGrid(const GridExpr &e);

  ModuleOp module;
  const KernelMetadata &md;
  int32_t deviceType;
  OpBuilder builder;
  HostCodeBuilder h;
  LLVM::LLVMFuncOp fn;
  Block *errorBlock = nullptr;
  Value tensorsArg, scalarsArg, envArg;
  SmallVector<Value> tensorSlots;               // per param (null: scalar)
  llvm::StringMap<std::pair<Value, Value>> symbolSlots; // value, bound flag
  Value deviceIdSlot, deviceIdBound;
};

void NativeWrapperGen::buildErrorBlock() {
  OpBuilder::InsertionGuard guard(builder);
  errorBlock = newBlock();
  Type i32 = h.i32Type, i64 = h.i64Type;
  for (Type t : {i32, i32, i32, i64, i64})
    errorBlock->addArgument(t, h.loc);
  builder.setInsertionPointToStart(errorBlock);
  Value err = h.loadAt(h.ptrType, envArg, kEnvErrorOff);
  h.storeAt(errorBlock->getArgument(0), err, kErrCodeOff);
  h.storeAt(errorBlock->getArgument(1), err, kErrParamOff);
  h.storeAt(errorBlock->getArgument(2), err, kErrDimOff);
  h.storeAt(h.i32(0), err, kErrReservedOff);
  h.storeAt(errorBlock->getArgument(3), err, kErrExpectedOff);
  h.storeAt(errorBlock->getArgument(4), err, kErrActualOff);
  LLVM::ReturnOp::create(builder, h.loc, h.i32(TILE_STATUS_INVALID_ARGUMENT));
}

void NativeWrapperGen::bindSymbol(int64_t param, int64_t dim,
                                  const std::string &sym, Value size) {
  auto [slot, flag] = symbolSlots.lookup(sym);
  Value bound = LLVM::LoadOp::create(builder, h.loc, h.i8Type, flag);
  Value isBound = cmp(LLVM::ICmpPredicate::ne, bound,
                      LLVM::ConstantOp::create(builder, h.loc, h.i8Type,
                                               builder.getI8IntegerAttr(0)));
  ifThenElse(
      isBound,
      [&] {
        Value prev = LLVM::LoadOp::create(builder, h.loc, h.i64Type, slot);
        check(cmp(LLVM::ICmpPredicate::eq, size, prev), TILE_CHECK_SYMBOL,
              param, dim, prev, size);
      },
      [&] {
        LLVM::StoreOp::create(builder, h.loc, size, slot);
        LLVM::StoreOp::create(builder, h.loc,
                              LLVM::ConstantOp::create(
                                  builder, h.loc, h.i8Type,
                                  builder.getI8IntegerAttr(1)),
                              flag);
      });
}

void NativeWrapperGen::checkTensor(int64_t i) {
  const ParamInfo &p = md.params[i];
  Value t = h.loadPtrAt(tensorsArg, i);
  LLVM::StoreOp::create(builder, h.loc, t, tensorSlots[i]);
  Value isNull = cmp(LLVM::ICmpPredicate::eq, t, h.nullPtr());
  Block *next = newBlock();
  if (p.isOutput) {
    // An omitted output is allocated after the walk.
    Block *present = newBlock();
    LLVM::CondBrOp::create(builder, h.loc, isNull, next, present);
    builder.setInsertionPointToStart(present);
  } else {
    check(LLVM::XOrOp::create(builder, h.loc, isNull, i1(true)),
          TILE_CHECK_NULL_TENSOR, i, -1, h.i64(0), h.i64(0));
  }
  Value devType = h.loadAt(h.i32Type, t, kDeviceTypeOff);
  check(cmp(LLVM::ICmpPredicate::eq, devType, h.i32(deviceType)),
        TILE_CHECK_DEVICE_TYPE, i, -1, h.i64(deviceType),
        LLVM::SExtOp::create(builder, h.loc, h.i64Type, devType));
  Value devId = h.loadAt(h.i32Type, t, kDeviceIdOff);
  Value idBound = LLVM::LoadOp::create(builder, h.loc, h.i8Type, deviceIdBound);
  ifThenElse(
      cmp(LLVM::ICmpPredicate::ne, idBound,
          LLVM::ConstantOp::create(builder, h.loc, h.i8Type,
                                   builder.getI8IntegerAttr(0))),
      [&] {
        Value first =
            LLVM::LoadOp::create(builder, h.loc, h.i32Type, deviceIdSlot);
        check(cmp(LLVM::ICmpPredicate::eq, devId, first), TILE_CHECK_DEVICE_ID,
              i, -1, LLVM::SExtOp::create(builder, h.loc, h.i64Type, first),
              LLVM::SExtOp::create(builder, h.loc, h.i64Type, devId));
      },
      [&] {
        LLVM::StoreOp::create(builder, h.loc, devId, deviceIdSlot);
        LLVM::StoreOp::create(builder, h.loc,
                              LLVM::ConstantOp::create(
                                  builder, h.loc, h.i8Type,
                                  builder.getI8IntegerAttr(1)),
                              deviceIdBound);
      });
  // dtype packed as code << 16 | bits << 8 | lanes.
  DLDataType dtype;
  if (!tile_dtype_from_name(p.dtype.c_str(), &dtype))
    llvm_unreachable("unknown dtype (rejected when the metadata was read)");
  Value c = LLVM::ZExtOp::create(builder, h.loc, h.i64Type,
                                 h.loadAt(h.i8Type, t, kDTypeCodeOff));
  Value bt = LLVM::ZExtOp::create(builder, h.loc, h.i64Type,
                                  h.loadAt(h.i8Type, t, kDTypeBitsOff));
  Value ln = LLVM::ZExtOp::create(builder, h.loc, h.i64Type,
                                  h.loadAt(h.i16Type, t, kDTypeLanesOff));
  Value packed = LLVM::OrOp::create(
      builder, h.loc,
      LLVM::OrOp::create(builder, h.loc,
                         LLVM::ShlOp::create(builder, h.loc, c, h.i64(16)),
                         LLVM::ShlOp::create(builder, h.loc, bt, h.i64(8))),
      ln);
  int64_t expectedPacked = TILE_PACK_DTYPE(dtype.code, dtype.bits, dtype.lanes);
  check(cmp(LLVM::ICmpPredicate::eq, packed, h.i64(expectedPacked)),
        TILE_CHECK_DTYPE, i, -1, h.i64(expectedPacked), packed);
  Value ndim = h.loadAt(h.i32Type, t, kNdimOff);
  check(cmp(LLVM::ICmpPredicate::eq, ndim, h.i32(p.rank)), TILE_CHECK_RANK, i,
        -1, h.i64(p.rank),
        LLVM::SExtOp::create(builder, h.loc, h.i64Type, ndim));
  Value shape = h.loadAt(h.ptrType, t, kShapeOff);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < p.rank; ++d) {
    Value size = h.loadAt(h.i64Type, shape, d * 8);
    sizes.push_back(size);
    check(cmp(LLVM::ICmpPredicate::sge, size, h.i64(0)),
          TILE_CHECK_NEGATIVE_DIM, i, d, h.i64(0), size);
    if (p.shape[d] >= 0)
      check(cmp(LLVM::ICmpPredicate::eq, size, h.i64(p.shape[d])),
            TILE_CHECK_STATIC_DIM, i, d, h.i64(p.shape[d]), size);
    if (!p.dims[d].empty())
      bindSymbol(i, d, p.dims[d], size);
  }
  // Strides: NULL means compact row-major; otherwise every dim of extent > 1
  // must have the row-major stride.
  Value strides = h.loadAt(h.ptrType, t, kStridesOff);
  ifThenElse(
      cmp(LLVM::ICmpPredicate::ne, strides, h.nullPtr()),
      [&] {
        Value expected = h.i64(1);
        for (int64_t d = p.rank - 1; d >= 0; --d) {
          Value stride = h.loadAt(h.i64Type, strides, d * 8);
          Value trivial = cmp(LLVM::ICmpPredicate::sle, sizes[d], h.i64(1));
          Value matches = cmp(LLVM::ICmpPredicate::eq, stride, expected);
          check(LLVM::OrOp::create(builder, h.loc, trivial, matches),
                TILE_CHECK_STRIDE, i, d, expected, stride);
          expected = LLVM::MulOp::create(builder, h.loc, expected, sizes[d]);
        }
      },
      [] {});
  Value numel = h.i64(1);
  for (Value s : sizes)
    numel = LLVM::MulOp::create(builder, h.loc, numel, s);
  Value data = h.loadAt(h.ptrType, t, kDataOff);
  Value empty = cmp(LLVM::ICmpPredicate::eq, numel, h.i64(0));
  Value hasData = cmp(LLVM::ICmpPredicate::ne, data, h.nullPtr());
  check(LLVM::OrOp::create(builder, h.loc, empty, hasData),
        TILE_CHECK_NULL_DATA, i, -1, h.i64(0), h.i64(0));
  Value byteOffset = h.loadAt(h.i64Type, t, kByteOffsetOff);
  Value address = LLVM::AddOp::create(
      builder, h.loc, LLVM::PtrToIntOp::create(builder, h.loc, h.i64Type, data),
      byteOffset);
  Value misalign =
      LLVM::URemOp::create(builder, h.loc, address, h.i64(p.elementBytes));
  check(cmp(LLVM::ICmpPredicate::eq, misalign, h.i64(0)), TILE_CHECK_ALIGNMENT,
        i, -1, h.i64(p.elementBytes), misalign);
  LLVM::BrOp::create(builder, h.loc, next);
  builder.setInsertionPointToStart(next);
}

void NativeWrapperGen::allocateOutput(int64_t i) {
  const ParamInfo &p = md.params[i];
  Value t = LLVM::LoadOp::create(builder, h.loc, h.ptrType, tensorSlots[i]);
  Value isNull = cmp(LLVM::ICmpPredicate::eq, t, h.nullPtr());
  ifThenElse(
      isNull,
      [&] {
        Value shape = h.entryAlloca(h.i64Type, std::max<int64_t>(p.rank, 1));
        for (int64_t d = 0; d < p.rank; ++d) {
          Value size;
          if (p.shape[d] >= 0) {
            size = h.i64(p.shape[d]);
          } else {
            auto [slot, flag] = symbolSlots.lookup(p.dims[d]);
            Value bound = LLVM::LoadOp::create(builder, h.loc, h.i8Type, flag);
            check(cmp(LLVM::ICmpPredicate::ne, bound,
                      LLVM::ConstantOp::create(builder, h.loc, h.i8Type,
                                               builder.getI8IntegerAttr(0))),
                  TILE_CHECK_UNBOUND_SYMBOL, i, d, h.i64(0), h.i64(0));
            size = LLVM::LoadOp::create(builder, h.loc, h.i64Type, slot);
          }
          h.storeAt(size, shape, d * 8);
        }
        Value ctx = h.loadAt(h.ptrType, envArg, kEnvCtxOff);
        Value allocFn = h.loadAt(h.ptrType, envArg, kEnvAllocOff);
        auto allocType = LLVM::LLVMFunctionType::get(
            h.ptrType, {h.ptrType, h.i32Type, h.ptrType});
        Value created =
            LLVM::CallOp::create(builder, h.loc, allocType,
                                 ValueRange{allocFn, ctx, h.i32(i), shape})
                .getResult();
        Block *ok = newBlock(), *oom = newBlock();
        LLVM::CondBrOp::create(builder, h.loc,
                               cmp(LLVM::ICmpPredicate::ne, created, h.nullPtr()),
                               ok, oom);
        builder.setInsertionPointToStart(oom);
        LLVM::ReturnOp::create(builder, h.loc,
                               h.i32(TILE_STATUS_OUT_OF_MEMORY));
        builder.setInsertionPointToStart(ok);
        LLVM::StoreOp::create(builder, h.loc, created, tensorSlots[i]);
      },
      [] {});
}

/// A memref descriptor {allocated, aligned, offset, sizes[r], strides[r]} for
/// tensor param `i`, with compact row-major strides (checked above).
Value NativeWrapperGen::buildDescriptor(int64_t i) {
  const ParamInfo &p = md.params[i];
  Value t = LLVM::LoadOp::create(builder, h.loc, h.ptrType, tensorSlots[i]);
  Value desc = h.entryAlloca(h.i64Type, TILE_MEMREF_WORDS(p.rank));
  Value data = h.loadAt(h.ptrType, t, kDataOff);
  Value byteOffset = h.loadAt(h.i64Type, t, kByteOffsetOff);
  Value base = h.byteGEP(data, byteOffset);
  h.storeAt(base, desc, kMemrefAllocatedOff);
  h.storeAt(base, desc, kMemrefAlignedOff);
  h.storeAt(h.i64(0), desc, kMemrefOffsetOff);
  Value shape = h.loadAt(h.ptrType, t, kShapeOff);
  Value stride = h.i64(1);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < p.rank; ++d)
    sizes.push_back(h.loadAt(h.i64Type, shape, d * 8));
  for (int64_t d = p.rank - 1; d >= 0; --d) {
    h.storeAt(sizes[d], desc, TILE_MEMREF_SIZE_OFFSET(p.rank, d));
    h.storeAt(stride, desc, TILE_MEMREF_STRIDE_OFFSET(p.rank, d));
    stride = LLVM::MulOp::create(builder, h.loc, stride, sizes[d]);
  }
  return desc;
}

/// Grid expressions in i64, evaluated exactly as the runtime's ffi backend
/// does.
Value NativeWrapperGen::evalGrid(const GridExpr &e) {
  switch (e.kind) {
  case GridExpr::Kind::Const:
    return h.i64(e.value);
  case GridExpr::Kind::Sym:
    return LLVM::LoadOp::create(builder, h.loc, h.i64Type,
                                symbolSlots.lookup(e.name).first);
  case GridExpr::Kind::Scalar: {
    const ParamInfo &p = md.params[e.param];
    Value slot = h.loadPtrAt(scalarsArg, e.param);
    if (p.dtype == "int32")
      return LLVM::SExtOp::create(builder, h.loc, h.i64Type,
                                  LLVM::LoadOp::create(builder, h.loc,
                                                       h.i32Type, slot));
    return LLVM::LoadOp::create(builder, h.loc, h.i64Type, slot);
  }
  case GridExpr::Kind::Op:
    break;
  }
  Value a = evalGrid(e.args[0]), b = evalGrid(e.args[1]);
  using P = LLVM::ICmpPredicate;
  auto select = [&](P pred, Value x, Value y) -> Value {
    return LLVM::SelectOp::create(builder, h.loc, cmp(pred, x, y), x, y);
  };
  StringRef op = e.name;
  if (op == "add")
    return LLVM::AddOp::create(builder, h.loc, a, b);
  if (op == "sub")
    return LLVM::SubOp::create(builder, h.loc, a, b);
  if (op == "mul")
    return LLVM::MulOp::create(builder, h.loc, a, b);
  if (op == "minu")
    return select(P::ult, a, b);
  if (op == "maxu")
    return select(P::ugt, a, b);
  if (op == "mins")
    return select(P::slt, a, b);
  if (op == "maxs")
    return select(P::sgt, a, b);
  // Division semantics mirror the runtime's evaluator (lib/Runtime/
  // GridExpr.cpp): x / 0 and x % 0 give 0; the one signed overflow,
  // INT64_MIN / -1, gives INT64_MIN (and remainder 0) instead of trapping.
  Value isZero = cmp(P::eq, b, h.i64(0));
  Value overflow = LLVM::AndOp::create(
      builder, h.loc, cmp(P::eq, a, h.i64(std::numeric_limits<int64_t>::min())),
      cmp(P::eq, b, h.i64(-1)));
  Value unsafe = LLVM::OrOp::create(builder, h.loc, isZero, overflow);
  Value safe = LLVM::SelectOp::create(builder, h.loc, unsafe, h.i64(1), b);
  Value r;
  if (op == "divu") {
    r = LLVM::UDivOp::create(builder, h.loc, a, safe);
  } else if (op == "remu") {
    r = LLVM::URemOp::create(builder, h.loc, a, safe);
  } else if (op == "ceildivu") {
    Value q = LLVM::UDivOp::create(builder, h.loc, a, safe);
    Value rem = LLVM::URemOp::create(builder, h.loc, a, safe);
    Value inexact = LLVM::ZExtOp::create(builder, h.loc, h.i64Type,
                                         cmp(P::ne, rem, h.i64(0)));
    r = LLVM::AddOp::create(builder, h.loc, q, inexact);
  } else if (op == "divs" || op == "ceildivs" || op == "rems") {
    Value q = LLVM::SDivOp::create(builder, h.loc, a, safe);
    Value rem = LLVM::SRemOp::create(builder, h.loc, a, safe);
    if (op == "rems") {
      r = LLVM::SelectOp::create(builder, h.loc, overflow, h.i64(0), rem);
    } else {
      if (op == "ceildivs") {
        // Truncation rounds toward zero: round up when the exact quotient
        // is positive and inexact.
        Value sameSign = cmp(P::eq, cmp(P::slt, a, h.i64(0)),
                             cmp(P::slt, b, h.i64(0)));
        Value up = LLVM::AndOp::create(builder, h.loc,
                                       cmp(P::ne, rem, h.i64(0)), sameSign);
        q = LLVM::AddOp::create(
            builder, h.loc, q,
            LLVM::ZExtOp::create(builder, h.loc, h.i64Type, up));
      }
      r = LLVM::SelectOp::create(builder, h.loc, overflow, a, q);
    }
  } else {
    llvm_unreachable("unknown grid op (rejected when the metadata was read)");
  }
  return LLVM::SelectOp::create(builder, h.loc, isZero, h.i64(0), r);
}

LogicalResult NativeWrapperGen::generate() {
  auto fnType = LLVM::LLVMFunctionType::get(
      h.i32Type, {h.ptrType, h.ptrType, h.ptrType});
  fn = LLVM::LLVMFuncOp::create(builder, h.loc, md.nativeEntry(), fnType);
  Block *entry = fn.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  tensorsArg = entry->getArgument(0);
  scalarsArg = entry->getArgument(1);
  envArg = entry->getArgument(2);
  buildErrorBlock();

  Value zero8 = LLVM::ConstantOp::create(builder, h.loc, h.i8Type,
                                         builder.getI8IntegerAttr(0));
  for (const std::string &sym : md.symbols) {
    Value slot = h.entryAlloca(h.i64Type);
    Value flag = h.entryAlloca(h.i8Type);
    LLVM::StoreOp::create(builder, h.loc, h.i64(0), slot);
    LLVM::StoreOp::create(builder, h.loc, zero8, flag);
    symbolSlots[sym] = {slot, flag};
  }
  deviceIdSlot = h.entryAlloca(h.i32Type);
  deviceIdBound = h.entryAlloca(h.i8Type);
  LLVM::StoreOp::create(builder, h.loc, zero8, deviceIdBound);
  for (const ParamInfo &p : md.params)
    tensorSlots.push_back(p.isTensor ? h.entryAlloca(h.ptrType) : Value());

  for (auto [i, p] : llvm::enumerate(md.params))
    if (p.isTensor)
      checkTensor(i);
  for (auto [i, p] : llvm::enumerate(md.params))
    if (p.isTensor && p.isOutput)
      allocateOutput(i);

  int64_t n = md.params.size();
  Value args = h.entryAlloca(h.ptrType, std::max<int64_t>(n, 1));
  for (auto [i, p] : llvm::enumerate(md.params)) {
    Value slot = p.isTensor ? buildDescriptor(i) : h.loadPtrAt(scalarsArg, i);
    h.storeAt(slot, args, i * 8);
  }
  Value grid[3];
  for (int d = 0; d < 3; ++d)
    grid[d] = evalGrid(md.grid[d]);
  Value empty = i1(false);
  for (Value g : grid)
    empty = LLVM::OrOp::create(builder, h.loc, empty,
                               cmp(LLVM::ICmpPredicate::sle, g, h.i64(0)));
  Block *launch = newBlock(), *nothing = newBlock();
  LLVM::CondBrOp::create(builder, h.loc, empty, nothing, launch);
  builder.setInsertionPointToStart(nothing);
  LLVM::ReturnOp::create(builder, h.loc, h.i32(TILE_STATUS_OK));
  builder.setInsertionPointToStart(launch);
  Value runCtx = h.loadAt(h.ptrType, envArg, kEnvCtxOff);
  Value runFn = h.loadAt(h.ptrType, envArg, kEnvRunOff);
  auto runType = LLVM::LLVMFunctionType::get(
      h.i32Type, {h.ptrType, h.ptrType, h.i64Type, h.i64Type, h.i64Type});
  Value status = LLVM::CallOp::create(
                     builder, h.loc, runType,
                     ValueRange{runFn, runCtx, args, grid[0], grid[1], grid[2]})
                     .getResult();
  LLVM::ReturnOp::create(builder, h.loc, status);
  return success();
}

} // namespace

LogicalResult mlir::tile::buildNativeWrapper(ModuleOp module,
                                             const KernelMetadata &md,
                                             int32_t deviceType) {
  return NativeWrapperGen(module, md, deviceType).generate();
}
