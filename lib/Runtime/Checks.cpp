//===- Checks.cpp - Metadata-driven argument checks and their messages ----===//
//
// checkTensorArgs is the ffi backend's interpretation of the documented
// check sequence; the compiler's native wrappers implement the same sequence
// in straight-line code. Both report a tile_check_error, and
// formatCheckError is the only place that turns one into text.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

namespace tile::rt {

int32_t checkTensorArgs(const KernelPlan &plan, DLTensor *const *tensors,
                        int64_t *syms, tile_check_error &e) {
  auto failAt = [&](int32_t code, int32_t param, int32_t dim, int64_t expected,
                    int64_t actual) {
    e.code = code;
    e.param = param;
    e.dim = dim;
    e.reserved = 0;
    e.expected = expected;
    e.actual = actual;
    return code;
  };
  const int32_t np = static_cast<int32_t>(plan.params.size());
  bool haveDevice = false;
  int32_t deviceId = 0;
  for (int32_t i = 0; i < np; ++i) {
    const ParamPlan &p = plan.params[i];
    if (!p.isTensor)
      continue;
    const DLTensor *t = tensors[i];
    if (!t) {
      if (p.outSlot >= 0)
        continue; // omitted output: allocated after the walk
      return failAt(TILE_CHECK_NULL_TENSOR, i, -1, 0, 0);
    }
    if (t->device.device_type != plan.deviceType)
      return failAt(TILE_CHECK_DEVICE_TYPE, i, -1, plan.deviceType,
                    t->device.device_type);
    if (!haveDevice) {
      haveDevice = true;
      deviceId = t->device.device_id;
    } else if (t->device.device_id != deviceId) {
      return failAt(TILE_CHECK_DEVICE_ID, i, -1, deviceId,
                    t->device.device_id);
    }
    if (t->dtype.code != p.dtype.code || t->dtype.bits != p.dtype.bits ||
        t->dtype.lanes != p.dtype.lanes)
      return failAt(TILE_CHECK_DTYPE, i, -1, packDType(p.dtype),
                    packDType(t->dtype));
    if (t->ndim != p.rank)
      return failAt(TILE_CHECK_RANK, i, -1, p.rank, t->ndim);
    // Per dim: NEGATIVE_DIM, STATIC_DIM, SYMBOL (the generated wrappers'
    // order, docs/bundle.md).
    const int64_t *shape = t->shape;
    int64_t elems = 1;
    for (int32_t d = 0; d < p.rank; ++d) {
      int64_t v = shape[d];
      if (v < 0)
        return failAt(TILE_CHECK_NEGATIVE_DIM, i, d, 0, v);
      if (p.shape[d] >= 0 && v != p.shape[d])
        return failAt(TILE_CHECK_STATIC_DIM, i, d, p.shape[d], v);
      if (p.dimSym[d] >= 0) {
        int64_t &bound = syms[p.dimSym[d]];
        if (bound < 0)
          bound = v;
        else if (bound != v)
          return failAt(TILE_CHECK_SYMBOL, i, d, bound, v);
      }
      elems *= v;
    }
    // Innermost dim first; dims of extent 0 or 1 accept any stride.
    if (const int64_t *strides = t->strides) {
      int64_t expected = 1;
      for (int32_t d = p.rank - 1; d >= 0; --d) {
        if (shape[d] > 1 && strides[d] != expected)
          return failAt(TILE_CHECK_STRIDE, i, d, expected, strides[d]);
        expected *= shape[d];
      }
    }
    if (elems > 0 && !t->data)
      return failAt(TILE_CHECK_NULL_DATA, i, -1, 0, 0);
    uintptr_t addr = reinterpret_cast<uintptr_t>(t->data) + t->byte_offset;
    if (p.elemBytes > 1 && addr % uint64_t(p.elemBytes) != 0)
      return failAt(TILE_CHECK_ALIGNMENT, i, -1, p.elemBytes,
                    int64_t(addr % uint64_t(p.elemBytes)));
  }
  e.code = TILE_CHECK_OK;
  return TILE_CHECK_OK;
}

std::string formatCheckError(const KernelPlan &plan,
                             const tile_check_error &e) {
  const int32_t np = static_cast<int32_t>(plan.params.size());
  switch (e.code) {
  case TILE_CHECK_GRID_TOO_LARGE:
    return "kernel '" + plan.name +
           "': grid is too large (block count overflows at dimension " +
           str(e.dim) + ", extent " + str(e.actual) + ")";
  default:
    break;
  }
  if (e.param < 0 || e.param >= np)
    return "kernel '" + plan.name + "': argument check " + str(e.code) +
           " failed for unknown parameter #" + str(e.param);
  const ParamPlan &p = plan.params[e.param];
  std::string head = "argument '" + p.name + "' (#" + str(e.param) + "): ";
  bool dimOk = e.dim >= 0 && e.dim < p.rank;
  std::string sym = dimOk ? p.dims[e.dim] : std::string("?");
  switch (e.code) {
  case TILE_CHECK_NULL_TENSOR:
    return head + "tensor is NULL";
  case TILE_CHECK_DEVICE_TYPE:
    return head + "expected a " + deviceTypeName(e.expected) +
           " tensor, got a " + deviceTypeName(e.actual) + " tensor";
  case TILE_CHECK_DEVICE_ID:
    return head + "is on device " + str(e.actual) +
           ", but the first tensor argument is on device " + str(e.expected);
  case TILE_CHECK_DTYPE:
    return head + "expected dtype " + dtypeName(unpackDType(e.expected)) +
           ", got " + dtypeName(unpackDType(e.actual));
  case TILE_CHECK_RANK:
    return head + "expected rank " + str(e.expected) + ", got " +
           str(e.actual);
  case TILE_CHECK_NEGATIVE_DIM:
    return head + "dim " + str(e.dim) + " is negative (" + str(e.actual) +
           ")";
  case TILE_CHECK_STATIC_DIM:
    return head + "dim " + str(e.dim) + " is " + str(e.actual) +
           " but must be " + str(e.expected);
  case TILE_CHECK_SYMBOL:
    return head + "dim " + str(e.dim) + " is " + str(e.actual) +
           " but symbol '" + sym + "' was bound to " + str(e.expected) +
           " by an earlier argument";
  case TILE_CHECK_STRIDE:
    return head + "not contiguous: stride of dim " + str(e.dim) + " is " +
           str(e.actual) + ", expected " + str(e.expected);
  case TILE_CHECK_NULL_DATA:
    return head + "data pointer is NULL";
  case TILE_CHECK_ALIGNMENT:
    return head + "data is not aligned to " + str(e.expected) +
           " bytes (address mod " + str(e.expected) + " = " + str(e.actual) +
           ")";
  case TILE_CHECK_UNBOUND_SYMBOL:
    return head + "cannot allocate the omitted output: dim " + str(e.dim) +
           " uses symbol '" + sym + "', which no argument binds";
  default:
    return head + "argument check " + str(e.code) + " failed";
  }
}

} // namespace tile::rt
