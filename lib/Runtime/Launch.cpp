//===- Launch.cpp - Argument binding and the ffi / native backends --------===//
//
// A launch works in a per-call frame (KernelPlan::frame) on the caller's
// stack: no heap traffic beyond the outputs the caller asked the runtime to
// allocate, no shared mutable state, so one kernel can be launched from any
// number of threads at once.
//
// Steps: (1) map args to params and convert scalars (shared by both
// backends), (2a) ffi: check tensors from metadata, allocate omitted outputs,
// evaluate the grid, build memref descriptors, run; or (2b) native: hand the
// tensors and scalar slots to the compiled wrapper, which does the same in
// straight-line code and calls back for allocation and the grid run.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

namespace tile::rt {

std::atomic<const tile_allocator *> &globalAllocator() {
  static std::atomic<const tile_allocator *> slot{nullptr};
  return slot;
}

namespace {

/// Views of the frame regions (see FrameLayout).
struct Frame {
  void **args;
  DLTensor **tensors;
  void **scalarPtrs;
  DLManagedTensor **allocated;
  int64_t *syms;
  int64_t *scalarInts;
  unsigned char *base;

  Frame(unsigned char *mem, const KernelPlan &plan) : base(mem) {
    const FrameLayout &f = plan.frame;
    args = reinterpret_cast<void **>(mem + f.args);
    tensors = reinterpret_cast<DLTensor **>(mem + f.tensors);
    scalarPtrs = reinterpret_cast<void **>(mem + f.scalarPtrs);
    allocated = reinterpret_cast<DLManagedTensor **>(mem + f.allocated);
    syms = reinterpret_cast<int64_t *>(mem + f.syms);
    scalarInts = reinterpret_cast<int64_t *>(mem + f.scalarInts);
    const size_t np = plan.params.size();
    std::memset(tensors, 0, np * sizeof(void *));
    std::memset(scalarPtrs, 0, np * sizeof(void *));
    std::memset(allocated, 0, np * sizeof(void *));
    for (size_t s = 0; s < plan.symbols.size(); ++s)
      syms[s] = -1;
  }
  void *slot(const ParamPlan &p) const { return base + p.slotOffset; }
};

/// State shared with the native wrapper's callbacks.
struct Call {
  const tile_kernel &kernel;
  const KernelPlan &plan;
  Frame &frame;
  void *stream;
  int32_t device; // device id of the first tensor argument (0 if none)
  const tile_allocator *allocator;
  tile_status callbackStatus = TILE_STATUS_OK; // set with fail() by callbacks
};

tile_status argError(const KernelPlan &plan, int32_t i, const std::string &m) {
  return fail(TILE_STATUS_INVALID_ARGUMENT, "argument '" + plan.params[i].name +
                                                "' (#" + str(i) + "): " + m);
}

const char *argKindName(int32_t kind) {
  switch (kind) {
  case TILE_ARG_TENSOR: return "a tensor";
  case TILE_ARG_INT: return "an int";
  case TILE_ARG_FLOAT: return "a float";
  case TILE_ARG_NONE: return "nothing (TILE_ARG_NONE)";
  default: return "an unknown argument kind";
  }
}

/// True if integer `v` survives a round trip through the float type.
bool exactlyRepresentable(int64_t v, ScalarType t) {
  // 2^63 is exact in both types; values at or beyond it would make the cast
  // back to int64 undefined.
  constexpr double kLimit = 9223372036854775808.0;
  double d = t == ScalarType::F32 ? static_cast<double>(static_cast<float>(v))
                                  : static_cast<double>(v);
  return d < kLimit && d >= -kLimit && static_cast<int64_t>(d) == v;
}

/// Converts a scalar argument into the param's slot. Policy (docs/runtime.md):
/// ints convert to int params with a range check; floats never silently
/// truncate into ints; ints convert to float params when exactly
/// representable (so `alpha=2` works, `alpha=2**53+1` does not).
tile_status convertScalar(const KernelPlan &plan, int32_t i, const tile_arg &a,
                          Frame &f) {
  const ParamPlan &p = plan.params[i];
  void *slot = f.slot(p);
  f.args[i] = slot;
  f.scalarPtrs[i] = slot;
  const bool isInt = p.scalar == ScalarType::I32 || p.scalar == ScalarType::I64;
  if (a.kind != TILE_ARG_INT && a.kind != TILE_ARG_FLOAT)
    return argError(plan, i, "expected a " + p.dtypeName + " scalar, got " +
                                 argKindName(a.kind));
  if (isInt) {
    if (a.kind != TILE_ARG_INT)
      return argError(plan, i, "expected an integer (" + p.dtypeName +
                                   "), got a float");
    int64_t v = a.v.i;
    if (p.scalar == ScalarType::I32) {
      if (v < INT32_MIN || v > INT32_MAX)
        return argError(plan, i, str(v) + " is out of range for int32");
      int32_t v32 = static_cast<int32_t>(v);
      std::memcpy(slot, &v32, sizeof v32);
    } else {
      std::memcpy(slot, &v, sizeof v);
    }
    f.scalarInts[i] = v;
    return TILE_STATUS_OK;
  }
  double d;
  if (a.kind == TILE_ARG_INT) {
    d = static_cast<double>(a.v.i);
    if (!exactlyRepresentable(a.v.i, p.scalar))
      return argError(plan, i, "integer " + str(a.v.i) +
                                   " is not exactly representable as " +
                                   p.dtypeName);
  } else {
    d = a.v.f;
  }
  if (p.scalar == ScalarType::F32) {
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max())
      return argError(plan, i, "value is out of range for float32");
    float v = static_cast<float>(d);
    std::memcpy(slot, &v, sizeof v);
  } else {
    std::memcpy(slot, &d, sizeof d);
  }
  return TILE_STATUS_OK;
}

/// Step 1: maps args to params, fills tensor pointers and scalar slots.
tile_status bindArgs(const KernelPlan &plan, const tile_arg *args,
                     int32_t nargs, Frame &f, bool &anyOmitted) {
  const int32_t np = static_cast<int32_t>(plan.params.size());
  const int32_t ninputs = static_cast<int32_t>(plan.inputParams.size());
  const bool full = nargs == np;
  if (!full && nargs != ninputs) {
    std::string m = "kernel '" + plan.name + "' takes " + str(np) +
                    " arguments";
    if (ninputs != np)
      m += " (or " + str(ninputs) + " with all outputs omitted)";
    return fail(TILE_STATUS_INVALID_ARGUMENT, m + ", got " + str(nargs));
  }
  if (nargs > 0 && !args)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "args is NULL");
  anyOmitted = false;
  int32_t next = 0;
  for (int32_t i = 0; i < np; ++i) {
    const ParamPlan &p = plan.params[i];
    tile_arg none{};
    const tile_arg &a = full ? args[i] : p.outSlot >= 0 ? none : args[next++];
    if (!p.isTensor) {
      if (tile_status st = convertScalar(plan, i, a, f))
        return st;
      continue;
    }
    f.args[i] = f.slot(p);
    if (a.kind == TILE_ARG_TENSOR) {
      f.tensors[i] = a.v.tensor;
      anyOmitted |= !a.v.tensor && p.outSlot >= 0;
    } else if (a.kind == TILE_ARG_NONE && p.outSlot >= 0) {
      anyOmitted = true;
    } else if (a.kind == TILE_ARG_NONE) {
      return argError(plan, i, "omitted, but only the outputs listed in "
                               "out_idx may be omitted");
    } else {
      return argError(plan, i, "expected a tensor, got " +
                                   std::string(argKindName(a.kind)));
    }
  }
  return TILE_STATUS_OK;
}

std::string shapeString(int32_t ndim, const int64_t *shape) {
  std::string s = "[";
  for (int32_t d = 0; d < ndim; ++d)
    s += (d ? ", " : "") + str(shape[d]);
  return s + "]";
}

/// Allocates omitted output `i` (both backends come through here) and
/// validates what the allocator returned.
DLTensor *allocateOutput(Call &c, int32_t i, const int64_t *shape) {
  const KernelPlan &plan = c.plan;
  Frame &f = c.frame;
  if (i < 0 || size_t(i) >= plan.params.size() ||
      plan.params[i].outSlot < 0 || f.tensors[i]) {
    c.callbackStatus = fail(TILE_STATUS_INTERNAL,
                            "kernel '" + plan.name + "': the wrapper asked to "
                            "allocate parameter #" + str(i) +
                                ", which is not an omitted output");
    return nullptr;
  }
  const ParamPlan &p = plan.params[i];
  DLDevice device{static_cast<DLDeviceType>(plan.deviceType), c.device};
  DLManagedTensor *mt =
      c.allocator ? c.allocator->alloc(c.allocator->ctx, device, p.dtype,
                                       p.rank, shape, c.stream)
                  : c.kernel.module->allocate(p.dtype, p.rank, shape,
                                              c.stream, c.device);
  std::string what = "output '" + p.name + "' (#" + str(i) + ")";
  if (!mt) {
    c.callbackStatus = fail(TILE_STATUS_OUT_OF_MEMORY,
                            "cannot allocate " + what + " with shape " +
                                shapeString(p.rank, shape));
    return nullptr;
  }
  // A custom allocator is user code: check it honoured the request.
  const DLTensor &t = mt->dl_tensor;
  std::string bad;
  if (t.ndim != p.rank || (p.rank && !t.shape))
    bad = "rank " + str(t.ndim) + " instead of " + str(p.rank);
  else if (t.dtype.code != p.dtype.code || t.dtype.bits != p.dtype.bits ||
           t.dtype.lanes != p.dtype.lanes)
    bad = "dtype " + dtypeName(t.dtype) + " instead of " + p.dtypeName;
  else if (t.device.device_type != plan.deviceType)
    bad = "a " + deviceTypeName(t.device.device_type) + " tensor";
  else if (plan.deviceType != kDLCPU && t.device.device_id != c.device)
    bad = "a tensor on device " + str(t.device.device_id) + " instead of " +
          str(c.device);
  else {
    int64_t elems = 1, stride = 1;
    for (int32_t d = p.rank - 1; d >= 0 && bad.empty(); --d) {
      if (t.shape[d] != shape[d])
        bad = "shape " + shapeString(t.ndim, t.shape) + " instead of " +
              shapeString(p.rank, shape);
      else if (t.strides && shape[d] != 1 && t.strides[d] != stride)
        bad = "a non-contiguous tensor";
      stride *= shape[d];
      elems *= shape[d];
    }
    if (bad.empty() && elems > 0 && !t.data)
      bad = "a NULL data pointer";
  }
  if (!bad.empty()) {
    if (mt->deleter)
      mt->deleter(mt);
    c.callbackStatus = fail(TILE_STATUS_INVALID_ARGUMENT,
                            "the allocator returned " + bad + " for " + what);
    return nullptr;
  }
  f.allocated[i] = mt;
  f.tensors[i] = &mt->dl_tensor;
  return &mt->dl_tensor;
}

/// The bytes [lo, hi) of tensor param `p`'s memref descriptor (both
/// backends pass contiguous row-major tensors).
void tensorBytes(const ParamPlan &p, const void *desc, uintptr_t &lo,
                 uintptr_t &hi) {
  const char *d = static_cast<const char *>(desc);
  char *aligned;
  int64_t offset, n = 1;
  std::memcpy(&aligned, d + 8, sizeof aligned);
  std::memcpy(&offset, d + 16, sizeof offset);
  for (int32_t i = 0; i < p.rank; ++i) {
    int64_t size;
    std::memcpy(&size, d + 24 + 8 * i, sizeof size);
    n *= size;
  }
  lo = reinterpret_cast<uintptr_t>(aligned) + uintptr_t(offset * p.elemBytes);
  hi = lo + uintptr_t(n * p.elemBytes);
}

/// Refuses a launch in which a tensor the kernel writes shares memory with
/// another tensor argument: blocks would read elements another block has
/// already overwritten (C aliasing A in a GEMM) or race on them. Allowed
/// only when both are exactly the same memory and every written one of the
/// two is declared inplace (the kernel reads each element before writing
/// it, in the same thread). Empty tensors overlap nothing.
tile_status checkOverlaps(const KernelPlan &plan, void *const *args) {
  const int32_t np = static_cast<int32_t>(plan.params.size());
  for (int32_t i = 0; i < np; ++i) {
    const ParamPlan &w = plan.params[i];
    if (!w.isTensor || !w.written())
      continue;
    uintptr_t wlo, whi;
    tensorBytes(w, args[i], wlo, whi);
    if (wlo == whi)
      continue;
    for (int32_t j = 0; j < np; ++j) {
      const ParamPlan &o = plan.params[j];
      // Pairs of two written params are looked at once, from the first.
      if (j == i || !o.isTensor || (o.written() && j < i))
        continue;
      uintptr_t olo, ohi;
      tensorBytes(o, args[j], olo, ohi);
      if (olo == ohi || ohi <= wlo || whi <= olo)
        continue;
      if (wlo == olo && whi == ohi && w.inplace &&
          (!o.written() || o.inplace))
        continue;
      std::string m = "argument '" + w.name + "' (#" + str(i) +
                      "), which the kernel writes, overlaps argument '" +
                      o.name + "' (#" + str(j) + ")";
      m += wlo == olo && whi == ohi
               ? ": pass distinct memory (the kernel does not declare '" +
                     (w.inplace ? o.name : w.name) + "' tile.inplace)"
               : ": pass distinct memory (a partial overlap is never "
                 "allowed)";
      return fail(TILE_STATUS_INVALID_ARGUMENT, "kernel '" + plan.name +
                                                    "': " + m);
    }
  }
  return TILE_STATUS_OK;
}

/// Runs the grid. Like the generated wrappers, a grid with an extent <= 0
/// is empty: nothing runs and the launch succeeds. Only a block count that
/// overflows int64 is an error.
tile_status runGrid(Call &c, void **args, const int64_t g[3]) {
  if (g[0] <= 0 || g[1] <= 0 || g[2] <= 0)
    return TILE_STATUS_OK;
  // Here, where both backends end up once something is to run (a native
  // wrapper does not call `run` for an empty grid).
  if (c.plan.anyWritten)
    if (tile_status st = checkOverlaps(c.plan, args))
      return st;
  if (g[0] > INT64_MAX / g[1] || g[0] * g[1] > INT64_MAX / g[2]) {
    int32_t axis = g[0] > INT64_MAX / g[1] ? 1 : 2;
    tile_check_error e{TILE_CHECK_GRID_TOO_LARGE, -1, axis, 0, 0, g[axis]};
    return fail(TILE_STATUS_INVALID_ARGUMENT, formatCheckError(c.plan, e));
  }
  return c.kernel.module->run(args, g[0], g[1], g[2], c.stream, c.device);
}

tile_status launchFfi(Call &c) {
  const KernelPlan &plan = c.plan;
  Frame &f = c.frame;
  tile_check_error e{};
  if (checkTensorArgs(plan, f.tensors, f.syms, e))
    return fail(TILE_STATUS_INVALID_ARGUMENT, formatCheckError(plan, e));

  // Omitted outputs, in parameter order, shaped by the bound symbols.
  for (int32_t i = 0; i < int32_t(plan.params.size()); ++i) {
    const ParamPlan &p = plan.params[i];
    if (!p.isTensor || p.outSlot < 0 || f.tensors[i])
      continue;
    int64_t shape[32];
    for (int32_t d = 0; d < p.rank; ++d) {
      shape[d] = p.shape[d] >= 0  ? p.shape[d]
                 : p.dimSym[d] >= 0 ? f.syms[p.dimSym[d]]
                                    : -1;
      if (shape[d] < 0) {
        e = {TILE_CHECK_UNBOUND_SYMBOL, i, d, 0, 0, 0};
        return fail(TILE_STATUS_INVALID_ARGUMENT, formatCheckError(plan, e));
      }
    }
    if (!allocateOutput(c, i, shape))
      return c.callbackStatus;
  }

  int64_t g[3];
  for (int32_t d = 0; d < 3; ++d) {
    int64_t sym = 0;
    if (!plan.grid[d].eval(f.syms, f.scalarInts, g[d], sym))
      // Unreachable: metadata validation guarantees every grid symbol is
      // bound by some tensor dim, and all tensors are present by now.
      return fail(TILE_STATUS_INTERNAL, "kernel '" + plan.name +
                                            "': grid symbol '" +
                                            plan.symbols[sym] +
                                            "' is unbound");
  }

  // Memref descriptors: {allocated, aligned, offset, sizes[], strides[]}.
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamPlan &p = plan.params[i];
    if (!p.isTensor)
      continue;
    const DLTensor *t = f.tensors[i];
    auto *desc = static_cast<int64_t *>(f.slot(p));
    // allocated = aligned = data + byte_offset, as the wrappers build it.
    void *aligned = static_cast<char *>(t->data) + t->byte_offset;
    std::memcpy(&desc[0], &aligned, sizeof(void *));
    std::memcpy(&desc[1], &aligned, sizeof(void *));
    desc[2] = 0;
    int64_t stride = 1;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      desc[3 + d] = t->shape[d];
      desc[3 + p.rank + d] = stride;
      stride *= t->shape[d];
    }
  }
  return runGrid(c, f.args, g);
}

DLTensor *nativeAlloc(void *ctx, int32_t param, const int64_t *shape) {
  return allocateOutput(*static_cast<Call *>(ctx), param, shape);
}

int32_t nativeRun(void *ctx, void **args, int64_t gx, int64_t gy,
                  int64_t gz) {
  Call &c = *static_cast<Call *>(ctx);
  const int64_t g[3] = {gx, gy, gz};
  tile_status st = runGrid(c, args, g);
  if (st != TILE_STATUS_OK)
    c.callbackStatus = st;
  return st;
}

tile_status launchNative(Call &c) {
  tile_check_error e{};
  tile_native_env env{&c, nativeAlloc, nativeRun, &e};
  int32_t rc = c.kernel.native(c.frame.tensors, c.frame.scalarPtrs, &env);
  if (rc == TILE_STATUS_OK && c.callbackStatus == TILE_STATUS_OK)
    return TILE_STATUS_OK;
  // A callback's failure has the precise message already.
  if (c.callbackStatus != TILE_STATUS_OK)
    return c.callbackStatus;
  if (e.code != TILE_CHECK_OK)
    return fail(rc == TILE_STATUS_OK ? TILE_STATUS_INVALID_ARGUMENT
                                     : static_cast<tile_status>(rc),
                formatCheckError(c.plan, e));
  if (rc < 0 || rc > TILE_STATUS_INTERNAL)
    rc = TILE_STATUS_INTERNAL;
  return fail(static_cast<tile_status>(rc),
              "kernel '" + c.plan.name + "': native wrapper failed with " +
                  tile_status_name(static_cast<tile_status>(rc)));
}

} // namespace

tile_status launchKernel(const tile_kernel &kernel, const tile_arg *args,
                         int32_t nargs, void *stream, tile_outputs *outs) {
  const KernelPlan &plan = kernel.plan;
  // The frame is a few hundred bytes for real kernels; only absurd
  // parameter lists fall back to the heap.
  alignas(16) unsigned char stackFrame[2048];
  std::unique_ptr<unsigned char[]> heapFrame;
  unsigned char *mem = stackFrame;
  if (plan.frame.total > sizeof(stackFrame)) {
    heapFrame.reset(new (std::nothrow) unsigned char[plan.frame.total + 16]);
    if (!heapFrame)
      return fail(TILE_STATUS_OUT_OF_MEMORY, "cannot allocate launch frame");
    mem = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(heapFrame.get()) + 15) & ~uintptr_t(15));
  }
  Frame frame(mem, plan);
  if (outs)
    outs->count = 0;

  bool anyOmitted = false;
  if (tile_status st = bindArgs(plan, args, nargs, frame, anyOmitted))
    return st;
  const int32_t nout = static_cast<int32_t>(plan.outIdx.size());
  if (anyOmitted && (!outs || !outs->tensors || outs->capacity < nout))
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                "kernel '" + plan.name + "': outputs were omitted, so 'outs' "
                "must have room for " + str(nout) + " tensors");

  // Outputs go where the inputs are (the checks require one device id).
  int32_t device = 0;
  for (size_t i = 0; i < plan.params.size(); ++i)
    if (frame.tensors[i]) {
      device = frame.tensors[i]->device.device_id;
      break;
    }
  Call call{kernel, plan, frame, stream, device,
            kernel.allocator.load(std::memory_order_acquire)};
  if (!call.allocator)
    call.allocator = globalAllocator().load(std::memory_order_acquire);
  tile_status st = kernel.backend == Backend::Native ? launchNative(call)
                                                     : launchFfi(call);
  if (st != TILE_STATUS_OK) {
    for (size_t i = 0; i < plan.params.size(); ++i)
      if (DLManagedTensor *mt = frame.allocated[i])
        if (mt->deleter)
          mt->deleter(mt);
    return st;
  }
  if (outs) {
    outs->count = nout;
    for (int32_t j = 0; j < nout && j < outs->capacity && outs->tensors; ++j)
      outs->tensors[j] = frame.allocated[plan.outIdx[j]];
  }
  return TILE_STATUS_OK;
}

} // namespace tile::rt
