//===- runtime_ext.cpp - tile._runtime: the kernel runtime for Python ------===//
//
// A nanobind extension over the runtime's C API (tile_runtime.h). No LLVM.
//
// The call path (KernelHandle.__call__) is C++ end to end: arguments are
// converted without per-call Python code, through a strategy cached per
// Python type:
//   * int / float (and their subclasses)   -> TILE_ARG_INT / TILE_ARG_FLOAT
//   * None                                 -> TILE_ARG_NONE (omitted output)
//   * numpy.ndarray (and subclasses)       -> the array struct is read directly
//     (data, dims, strides, descr: numpy's stable PyArrayObject_fields layout),
//     the descr's DLPack dtype cached per descr (ml_dtypes bfloat16/float8
//     included); set TILE_PY_NUMPY_DLPACK=1 to route numpy through __dlpack__
//   * a type with the DLPack C exchange API (torch >= 2.10:
//     __dlpack_c_exchange_api__)           -> its dltensor_from_py_object_no_sync
//     fills our stack DLTensor (no capsule, no Python call); the default
//     CUDA stream from its current_work_stream. TILE_PY_NO_DLPACK_EXCHANGE=1
//     turns this off; an explicit stream= takes the capsule route
//   * torch tensors without it             -> torch._C._to_dlpack_versioned
//   * anything else with __dlpack__        -> a DLPack capsule per call
//     (__dlpack__(max_version=(1, 0)) when the type accepts it, else the
//     legacy __dlpack__()), borrowed for the launch, released after it
//   * other numbers (numpy scalars, ...)   -> __index__ / __float__
// The per-type facts (framework, versioned DLPack, allocator for omitted
// outputs, post-processing) come from tile._frameworks.probe() once per type.
//
// Omitted outputs are allocated by a tile_allocator installed on every kernel:
// it calls the framework's allocator of the first tensor argument (numpy in ->
// numpy out, torch in -> torch out) and hands the runtime a DLManagedTensor
// that owns a reference to the new Python object.
//
//===----------------------------------------------------------------------===//

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "foreign_abi.h"
#include "jit_dispatch.h"
#include "kernel_info.h"
#include "tile/Runtime/tile_runtime.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;
using namespace tile::python;

namespace {

// ---- module state (all accessed with the GIL held) ------------------------

enum class Conv : uint8_t { Numpy, DLPack, Export, Exchange, Int, Float };

struct TypeStrategy {
  Conv conv = Conv::DLPack;
  bool versioned = false;  // __dlpack__ accepts max_version
  bool is_torch = false;   // default CUDA stream: torch's current stream
  PyObject *exportFn = nullptr; // Conv::Export: exportFn(obj) -> capsule
  // Conv::Exchange: the type's DLPack C exchange API (no capsule, no Python
  // call per tensor); the capsule route (exportFn / __dlpack__) remains for
  // launches with an explicit stream= (stream handshake).
  const DLPackExchangeAPIV1 *xapi = nullptr;
  PyObject *alloc = nullptr;   // allocator(shape, dtype, dev_type, dev_id)
  PyObject *finish = nullptr;  // finish(obj) -> obj, or nullptr
};

struct DescrInfo {
  DLDataType dtype;
  int itemsize;
  bool ok;
};

struct State {
  PyObject *frameworks = nullptr;  // module tile._frameworks
  PyObject *numpy_type = nullptr;  // numpy.ndarray, or nullptr
  std::unordered_map<PyTypeObject *, TypeStrategy> types;
  std::unordered_map<PyObject *, DescrInfo> descrs;
  PyObject *str_dlpack = nullptr;
  PyObject *kw_max_version = nullptr;       // ("max_version",)
  PyObject *kw_stream_max_version = nullptr; // ("stream", "max_version")
  PyObject *kw_stream = nullptr;            // ("stream",)
  PyObject *version_1_0 = nullptr;          // (1, 0)
  PyObject *str_dtype = nullptr;
  PyObject *torch_stream_fn = nullptr;      // torch._C._cuda_getCurrentRawStream
                                            // (resolved on first use)
  PyTypeObject *last_type = nullptr;        // one-entry cache of `types`
  const TypeStrategy *last_strategy = nullptr;
  PyObject *tile_error = nullptr;
  PyObject *argument_error = nullptr;
  bool numpy_via_dlpack = false;
  bool no_exchange = false;                 // TILE_PY_NO_DLPACK_EXCHANGE=1
};
State S;

[[noreturn]] void raisePending() { throw nb::python_error(); }

// Raises TileError (ArgumentError for INVALID_ARGUMENT) with .status set.
[[noreturn]] void raiseStatus(tile_status st, const std::string &msg) {
  PyObject *type =
      st == TILE_STATUS_INVALID_ARGUMENT ? S.argument_error : S.tile_error;
  nb::object exc = nb::steal(PyObject_CallOneArg(
      type, nb::str(msg.c_str(), msg.size()).ptr()));
  if (!exc.is_valid())
    raisePending();
  nb::setattr(exc, "status", nb::str(tile_status_name(st)));
  PyErr_SetObject(type, exc.ptr());
  raisePending();
}

// A DLPack exchange API function failed: its Python error, else ours.
[[noreturn]] void raiseProducerError(PyObject *obj, const char *fn) {
  if (PyErr_Occurred())
    raisePending();
  PyErr_Format(PyExc_RuntimeError,
               "tile: the DLPack exchange API's %s failed%s%s", fn,
               obj ? " for an object of type " : "",
               obj ? Py_TYPE(obj)->tp_name : "");
  raisePending();
}

[[noreturn]] void raiseArg(const std::string &msg) {
  raiseStatus(TILE_STATUS_INVALID_ARGUMENT, msg);
}

// tile._frameworks is imported on first use, not while this module
// initializes: it reads this module's tables (DTYPES).
nb::object frameworksAttr(const char *name) {
  if (!S.frameworks &&
      !(S.frameworks = PyImport_ImportModule("tile._frameworks")))
    raisePending();
  return nb::steal(PyObject_GetAttrString(S.frameworks, name));
}

// The type's DLPack exchange table, or nullptr (no attribute, an unknown
// major version, or no dltensor_from_py_object_no_sync).
const DLPackExchangeAPIV1 *exchangeApi(PyTypeObject *tp) {
  for (const char *attr :
       {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"}) {
    PyObject *o = PyObject_GetAttrString(reinterpret_cast<PyObject *>(tp), attr);
    if (!o) {
      PyErr_Clear();
      continue;
    }
    void *p = nullptr;
    if (PyCapsule_IsValid(o, "dlpack_exchange_api"))
      p = PyCapsule_GetPointer(o, "dlpack_exchange_api");
    else if (PyLong_Check(o))
      p = PyLong_AsVoidPtr(o);
    Py_DECREF(o);
    PyErr_Clear();
    auto *api = static_cast<const DLPackExchangeAPIV1 *>(p);
    // Walk to a 1.x table (prev_api chains older versions).
    const DLPackExchangeAPIHeaderV1 *h = api ? &api->header : nullptr;
    while (h && h->version.major > 1)
      h = h->prev_api;
    api = reinterpret_cast<const DLPackExchangeAPIV1 *>(h);
    if (api && api->header.version.major == 1 &&
        api->header.version.minor >= 2 && api->dltensor_from_py_object_no_sync)
      return api;
  }
  return nullptr;
}

const TypeStrategy &strategyFor(PyObject *obj) {
  PyTypeObject *tp = Py_TYPE(obj);
  if (tp == S.last_type)
    return *S.last_strategy;
  auto it = S.types.find(tp);
  if (it != S.types.end()) {
    S.last_type = tp;
    S.last_strategy = &it->second; // node-based map: stable address
    return it->second;
  }
  // Once per type: ask tile._frameworks.
  nb::object probe = frameworksAttr("probe");
  nb::object r = probe(nb::handle(obj));
  TypeStrategy s;
  std::string conv = nb::cast<std::string>(r["conv"]);
  if (conv == "numpy")
    s.conv = S.numpy_via_dlpack ? Conv::DLPack : Conv::Numpy;
  else if (conv == "dlpack")
    s.conv = Conv::DLPack;
  else if (conv == "export")
    s.conv = Conv::Export;
  else if (conv == "int")
    s.conv = Conv::Int;
  else if (conv == "float")
    s.conv = Conv::Float;
  else
    throw nb::type_error(("tile: cannot pass an object of type '" +
                          std::string(tp->tp_name) +
                          "' to a kernel (expected a tensor with __dlpack__, "
                          "an int, a float or None)")
                             .c_str());
  s.versioned = nb::cast<bool>(r["versioned"]);
  s.is_torch = nb::cast<bool>(r["is_torch"]);
  nb::object alloc = r["alloc"], finish = r["finish"], exp = r["export"];
  s.exportFn = exp.is_none() ? nullptr : exp.release().ptr();
  if (s.conv == Conv::Export && !s.exportFn)
    s.conv = Conv::DLPack;
  if ((s.conv == Conv::DLPack || s.conv == Conv::Export) && !S.no_exchange &&
      nb::cast<bool>(r["exchange"])) {
    s.xapi = exchangeApi(tp);
    if (s.xapi)
      s.conv = Conv::Exchange;
  }
  s.alloc = alloc.is_none() ? nullptr : alloc.release().ptr();
  s.finish = finish.is_none() ? nullptr : finish.release().ptr();
  Py_INCREF(reinterpret_cast<PyObject *>(tp)); // keep the key alive
  return S.types.emplace(tp, s).first->second;
}

} // namespace
// jit_dispatch.h: the table the launch reads obj's type through, or nullptr
// (also for a type that is no tensor: the guard then reads its attributes).
const DLPackExchangeAPIV1 *tile::python::exchangeApiFor(PyObject *obj) try {
  const TypeStrategy &s = strategyFor(obj);
  return s.conv == Conv::Exchange ? s.xapi : nullptr;
} catch (...) {
  PyErr_Clear();
  return nullptr;
}
namespace {

const DescrInfo &descrInfo(PyObject *descr) {
  auto it = S.descrs.find(descr);
  if (it != S.descrs.end())
    return it->second;
  nb::object r = frameworksAttr("numpy_dlpack_dtype")(nb::handle(descr));
  DescrInfo d{};
  if (!r.is_none()) {
    d.dtype.code = nb::cast<uint8_t>(r[0]);
    d.dtype.bits = nb::cast<uint8_t>(r[1]);
    d.dtype.lanes = 1;
    d.itemsize = nb::cast<int>(r[2]);
    d.ok = true;
  }
  Py_INCREF(descr);
  return S.descrs.emplace(descr, d).first->second;
}

// ---- DLPack capsules ------------------------------------------------------

// Calls obj.__dlpack__(...) per the strategy; returns a new reference.
PyObject *callDlpack(PyObject *obj, const TypeStrategy &s, PyObject *stream) {
  PyObject *argv[3] = {obj, nullptr, nullptr};
  if (stream) {
    if (s.versioned) {
      argv[1] = stream;
      argv[2] = S.version_1_0;
      return PyObject_VectorcallMethod(
          S.str_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
          S.kw_stream_max_version);
    }
    argv[1] = stream;
    return PyObject_VectorcallMethod(S.str_dlpack, argv,
                                     1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                     S.kw_stream);
  }
  if (s.versioned) {
    argv[1] = S.version_1_0;
    return PyObject_VectorcallMethod(S.str_dlpack, argv,
                                     1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                     S.kw_max_version);
  }
  return PyObject_VectorcallMethod(S.str_dlpack, argv,
                                   1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
}

// The DLTensor inside a capsule (borrowed: valid while the capsule lives).
DLTensor *capsuleTensor(PyObject *cap, bool *readOnly) {
  *readOnly = false;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto *m = static_cast<DLManagedTensorV1 *>(
        PyCapsule_GetPointer(cap, "dltensor_versioned"));
    if (m->version.major != 1)
      throw nb::value_error("tile: unsupported DLPack major version");
    *readOnly = (m->flags & kDLFlagReadOnly) != 0;
    return &m->dl_tensor;
  }
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto *m =
        static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap, "dltensor"));
    return &m->dl_tensor;
  }
  throw nb::type_error("tile: __dlpack__ did not return a DLPack capsule "
                       "(or it was already consumed)");
}

// ---- per-launch context ---------------------------------------------------

struct Allocated {
  DLManagedTensor *mt;
  PyObject *obj; // new reference
};

struct LaunchCtx {
  const TypeStrategy *framework = nullptr; // of the first tensor argument
  std::vector<Allocated> allocated;
  PyObject *errType = nullptr, *errValue = nullptr, *errTb = nullptr;
};
thread_local LaunchCtx *tlsCtx = nullptr;

// A DLManagedTensor that owns a reference to a Python object (the array or
// a DLPack capsule whose own deleter frees the producer's tensor).
struct OwnedTensor {
  DLManagedTensor mt;
  PyObject *owner;
  int64_t shapeCopy[16];
};

void ownedDeleter(DLManagedTensor *mt) {
  auto *o = reinterpret_cast<OwnedTensor *>(mt);
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF(o->owner);
  PyGILState_Release(g);
  delete o;
}

const char *dtypeName(DLDataType t) {
  const char *name = tile_dtype_name(t);
  return name ? name : "unknown";
}

// Fills `out` from a numpy array (fast path). `strides` receives element
// strides when the array is not C-contiguous. Returns false with a message.
bool numpyTensor(PyObject *obj, DLTensor *out, int64_t *strides,
                 std::string *err) {
  auto *a = reinterpret_cast<NumpyArrayFields *>(obj);
  const DescrInfo &d = descrInfo(a->descr);
  if (!d.ok) {
    nb::str r = nb::str(nb::handle(a->descr));
    *err = std::string("numpy dtype ") + r.c_str() +
           " has no DLPack equivalent";
    return false;
  }
  out->data = a->data;
  out->device = {kDLCPU, 0};
  out->ndim = a->nd;
  out->dtype = d.dtype;
  static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "64-bit only");
  out->shape = reinterpret_cast<int64_t *>(a->dimensions);
  out->byte_offset = 0;
  if ((a->flags & kNpyCContiguous) || a->nd == 0) {
    out->strides = nullptr;
  } else {
    for (int i = 0; i < a->nd; ++i) {
      Py_ssize_t s = a->strides[i];
      if (s % d.itemsize != 0) {
        *err = "stride of dim " + std::to_string(i) + " (" +
               std::to_string(s) +
               " bytes) is not a multiple of the element size";
        return false;
      }
      strides[i] = s / d.itemsize;
    }
    out->strides = strides;
  }
  return true;
}

DLManagedTensor *allocCallback(void *, DLDevice device, DLDataType dtype,
                               int32_t ndim, const int64_t *shape, void *) {
  LaunchCtx *ctx = tlsCtx;
  if (!ctx || !ctx->framework || !ctx->framework->alloc || ndim > 16)
    return nullptr;
  PyGILState_STATE g = PyGILState_Ensure();
  DLManagedTensor *result = nullptr;
  PyObject *shapeTuple = PyTuple_New(ndim);
  for (int i = 0; i < ndim; ++i)
    PyTuple_SET_ITEM(shapeTuple, i, PyLong_FromLongLong(shape[i]));
  PyObject *argv[4] = {shapeTuple, PyUnicode_FromString(dtypeName(dtype)),
                       PyLong_FromLong(device.device_type),
                       PyLong_FromLong(device.device_id)};
  PyObject *obj = PyObject_Vectorcall(ctx->framework->alloc, argv, 4, nullptr);
  for (PyObject *a : argv)
    Py_DECREF(a);
  if (obj) {
    auto *o = new OwnedTensor{};
    o->mt.deleter = ownedDeleter;
    o->mt.manager_ctx = nullptr;
    bool ok = false;
    try {
      const TypeStrategy &s = strategyFor(obj);
      if (s.conv == Conv::Numpy) {
        std::string err;
        int64_t dummy[16];
        ok = numpyTensor(obj, &o->mt.dl_tensor, dummy, &err) &&
             o->mt.dl_tensor.strides == nullptr;
        if (ok) {
          Py_INCREF(obj);
          o->owner = obj;
        } else {
          PyErr_SetString(PyExc_RuntimeError,
                          ("tile: the numpy allocator returned an unusable "
                           "array: " + err).c_str());
        }
      } else if (s.conv == Conv::DLPack || s.conv == Conv::Export ||
                 s.conv == Conv::Exchange) {
        // Owning: a capsule (the exchange API's DLTensor is borrowed).
        PyObject *cap = s.exportFn ? PyObject_CallOneArg(s.exportFn, obj)
                                   : callDlpack(obj, s, nullptr);
        if (cap) {
          bool ro;
          o->mt.dl_tensor = *capsuleTensor(cap, &ro);
          o->owner = cap; // its destructor frees the producer's tensor
          ok = true;
          // Row-major up to dims of extent 0/1 (whose strides are free):
          // hand the runtime strides = NULL (its allocator validation wants
          // exact strides even there, e.g. numpy's for zero-size arrays).
          DLTensor &t = o->mt.dl_tensor;
          if (t.strides) {
            bool contiguous = true;
            int64_t expect = 1;
            for (int d = t.ndim - 1; d >= 0; --d) {
              if (t.shape[d] > 1 && t.strides[d] != expect)
                contiguous = false;
              expect *= t.shape[d];
            }
            if (contiguous)
              t.strides = nullptr;
          }
        }
      } else {
        PyErr_SetString(PyExc_TypeError,
                        "tile: the output allocator returned a non-tensor");
      }
    } catch (nb::python_error &e) {
      e.restore();
    } catch (std::exception &e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    if (ok) {
      result = &o->mt;
      ctx->allocated.push_back({result, obj});
    } else {
      Py_XDECREF(o->owner);
      delete o;
      Py_DECREF(obj);
    }
  }
  if (!result && PyErr_Occurred() && !ctx->errType)
    PyErr_Fetch(&ctx->errType, &ctx->errValue, &ctx->errTb);
  PyErr_Clear();
  PyGILState_Release(g);
  return result;
}

// ---- the kernel handle ----------------------------------------------------

struct ParamDesc {
  std::string name;
  bool tensor;
  bool written; // metadata "access": the kernel may write it
};

class KernelHandle {
public:
  /// `inspect`: open without loading device code (tile_kernel_inspect_*):
  /// every bundle opens on any machine; calling it raises.
  KernelHandle(nb::bytes data, const std::string &backend, bool inspect) {
    tile_status st =
        inspect ? tile_kernel_inspect_memory(data.c_str(), data.size(), &k_)
                : tile_kernel_load_memory(data.c_str(), data.size(),
                                          backend.c_str(), &k_);
    if (st != TILE_STATUS_OK)
      raiseStatus(st, tile_last_error());
    inspectOnly_ = inspect;
    init();
  }
  ~KernelHandle() { tile_kernel_release(k_); }
  KernelHandle(const KernelHandle &) = delete;
  KernelHandle &operator=(const KernelHandle &) = delete;

  std::string name() const { return tile_kernel_name(k_); }
  std::string targetKind() const { return tile_kernel_target_kind(k_); }
  std::string targetChip() const { return tile_kernel_target_chip(k_); }
  std::string backend() const { return tile_kernel_backend(k_); }
  std::string metadata() const { return tile_kernel_metadata(k_); }
  bool inspectOnly() const { return inspectOnly_; }
  std::string describe() const {
    std::string text(tile_kernel_describe(k_, nullptr, 0), '\0');
    tile_kernel_describe(k_, text.data(), text.size() + 1);
    return text;
  }
  std::vector<int> outIdx() const {
    return std::vector<int>(outIdx_.begin(), outIdx_.end());
  }

  // The parsed view of the metadata (kernel_info.h).
  nb::list params() const { return tile_py::params(k_); }
  nb::list symbols() const { return tile_py::symbols(k_); }
  nb::dict launchInfo() const { return tile_py::launchInfo(k_); }
  /// The launch grid for symbol values (symbols order) and per-parameter
  /// integer scalar values: the runtime's own evaluation, for launchers
  /// outside it (metal-torch).
  nb::tuple grid(const std::vector<int64_t> &syms,
                 const std::vector<int64_t> &scalars) const {
    int64_t g[3];
    tile_status st = tile_kernel_grid(k_, syms.data(), int32_t(syms.size()),
                                      scalars.data(), int32_t(scalars.size()),
                                      g);
    if (st != TILE_STATUS_OK)
      raiseStatus(st, tile_last_error());
    return nb::make_tuple(g[0], g[1], g[2]);
  }
  nb::list variants() const { return tile_py::variants(k_); }

  nb::list sections() const { return tile_py::sections(k_); }
  nb::object section(const std::string &name) const {
    return tile_py::section(k_, name.c_str());
  }

  nb::object call(PyObject *args, nb::handle stream);

private:
  void init() {
    nparams_ = tile_kernel_num_params(k_);
    int32_t nout = tile_kernel_num_outputs(k_);
    for (int32_t j = 0; j < nout; ++j)
      outIdx_.push_back(tile_kernel_output_param(k_, j));
    for (int32_t i = 0; i < nparams_; ++i) {
      tile_param_info p;
      tile_kernel_param(k_, i, &p);
      params_.push_back(
          {p.name, p.kind == TILE_PARAM_TENSOR,
           (tile_kernel_param_access(k_, i, nullptr) & TILE_ACCESS_WRITE) !=
               0});
      if (!p.in_out_idx)
        inputParams_.push_back(i);
    }
    std::string kind = tile_kernel_target_kind(k_);
    gpu_ = kind == "cuda" || kind == "hip";
    tile_allocator a{this, allocCallback};
    tile_set_allocator(k_, &a);
  }

  tile_kernel_t k_ = nullptr;
  int32_t nparams_ = 0;
  std::vector<int32_t> outIdx_;
  std::vector<int32_t> inputParams_; // params not in out_idx
  std::vector<ParamDesc> params_;
  bool gpu_ = false;
  bool inspectOnly_ = false;
};

struct CallScratch {
  static constexpr int kInline = 16;
  tile_arg argsInline[kInline];
  DLTensor tensorsInline[kInline];
  PyObject *capsInline[kInline];
  int64_t stridesInline[kInline * 8];
  std::vector<tile_arg> argsHeap;
  std::vector<DLTensor> tensorsHeap;
  std::vector<PyObject *> capsHeap;
  std::vector<int64_t> stridesHeap;
  tile_arg *args;
  DLTensor *tensors;
  PyObject **caps;
  int64_t *strides;
  int ncaps = 0;
  explicit CallScratch(size_t n) {
    if (n <= kInline) {
      args = argsInline;
      tensors = tensorsInline;
      caps = capsInline;
      strides = stridesInline;
    } else {
      argsHeap.resize(n);
      tensorsHeap.resize(n);
      capsHeap.resize(n);
      stridesHeap.resize(n * 8);
      args = argsHeap.data();
      tensors = tensorsHeap.data();
      caps = capsHeap.data();
      strides = stridesHeap.data();
    }
  }
  ~CallScratch() {
    for (int i = 0; i < ncaps; ++i)
      Py_DECREF(caps[i]);
  }
};

int64_t streamValue(nb::handle stream) {
  PyObject *s = stream.ptr();
  if (PyLong_Check(s))
    return PyLong_AsLongLong(s);
  for (const char *attr : {"cuda_stream", "ptr", "handle"}) {
    if (PyObject_HasAttrString(s, attr)) {
      nb::object v = nb::steal(PyObject_GetAttrString(s, attr));
      if (PyLong_Check(v.ptr()))
        return PyLong_AsLongLong(v.ptr());
    }
  }
  throw nb::type_error("tile: stream must be an int (a CUstream) or an "
                       "object with .cuda_stream / .ptr");
}

// torch's current CUDA stream of a device: torch._C._cuda_getCurrentRawStream
// (a C function, as Triton uses), looked up once.
void *torchCurrentStream(int deviceId) {
  if (!S.torch_stream_fn) {
    S.torch_stream_fn = frameworksAttr("torch_stream_getter")().release().ptr();
  }
  PyObject *idx = PyLong_FromLong(deviceId);
  PyObject *sv = PyObject_CallOneArg(S.torch_stream_fn, idx);
  Py_DECREF(idx);
  if (!sv)
    raisePending();
  void *p = PyLong_AsVoidPtr(sv);
  Py_DECREF(sv);
  if (!p && PyErr_Occurred())
    raisePending();
  return p;
}

nb::object KernelHandle::call(PyObject *argsTuple, nb::handle stream) {
  if (inspectOnly_) // the runtime's refusal, before touching any argument
    raiseStatus(tile_kernel_launch(k_, nullptr, 0, nullptr, nullptr),
                tile_last_error());
  const size_t n = size_t(PyTuple_GET_SIZE(argsTuple));
  const bool full = n == size_t(nparams_);
  const bool compact = !full && n == inputParams_.size();
  if (!full && !compact) {
    std::string msg = "kernel '" + name() + "' takes " +
                      std::to_string(nparams_) + " arguments";
    if (!outIdx_.empty())
      msg += " (or " + std::to_string(inputParams_.size()) +
             " without its out_idx outputs)";
    msg += ", got " + std::to_string(n);
    raiseArg(msg);
  }
  CallScratch sc(n);
  LaunchCtx ctx;
  const GuardReads *guarded = takeGuardReads(); // jit_dispatch.h: until
                                                // Python code runs here
  bool haveStream = !stream.is_none();
  int64_t streamInt = 0;
  if (haveStream && gpu_)
    streamInt = streamValue(stream);
  nb::object streamObj; // passed to __dlpack__(stream=) when explicit

  int64_t *stridesNext = sc.strides;
  int tensorDeviceType = 0, tensorDeviceId = 0;
  PyObject *const *items = &PyTuple_GET_ITEM(argsTuple, 0);
  for (size_t i = 0; i < n; ++i) {
    PyObject *a = items[i];
    tile_arg &t = sc.args[i];
    t.reserved = 0;
    int32_t param = full ? int32_t(i) : inputParams_[i];
    if (a == Py_None) {
      t.kind = TILE_ARG_NONE;
      t.v.i = 0;
      continue;
    }
    if (PyLong_Check(a) && !params_[param].tensor) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
      if (overflow)
        raiseArg("argument '" + params_[param].name + "' (#" +
                 std::to_string(param) + "): integer out of int64 range");
      t.kind = TILE_ARG_INT;
      t.v.i = v;
      continue;
    }
    if (PyFloat_CheckExact(a)) { // subclasses: Conv::Float below
      t.kind = TILE_ARG_FLOAT;
      t.v.f = PyFloat_AS_DOUBLE(a);
      continue;
    }
    if (PyLong_Check(a)) { // an int for a tensor param: let the runtime say so
      int overflow = 0;
      t.kind = TILE_ARG_INT;
      t.v.i = PyLong_AsLongLongAndOverflow(a, &overflow);
      continue;
    }
    // Immutable buffers are no tensors, but say why they cannot be written.
    if (params_[param].written &&
        (PyBytes_Check(a) ||
         (PyMemoryView_Check(a) && PyMemoryView_GET_BUFFER(a)->readonly)))
      raiseArg("argument '" + params_[param].name + "' (#" +
               std::to_string(param) + "): the kernel writes it, but a '" +
               Py_TYPE(a)->tp_name + "' object is read-only");
    const TypeStrategy &s = strategyFor(a);
    DLTensor *dl = &sc.tensors[i];
    bool readOnly = false;
    if (s.conv != Conv::Numpy && s.conv != Conv::Exchange)
      guarded = nullptr; // __index__, __float__, __dlpack__ run Python
    switch (s.conv) {
    case Conv::Int: {
      nb::object v = nb::steal(PyNumber_Index(a));
      if (!v.is_valid())
        raisePending();
      t.kind = TILE_ARG_INT;
      t.v.i = PyLong_AsLongLong(v.ptr());
      if (t.v.i == -1 && PyErr_Occurred())
        raisePending();
      continue;
    }
    case Conv::Float: {
      double f = PyFloat_AsDouble(a);
      if (f == -1.0 && PyErr_Occurred())
        raisePending();
      t.kind = TILE_ARG_FLOAT;
      t.v.f = f;
      continue;
    }
    case Conv::Numpy: {
      std::string err;
      if (reinterpret_cast<NumpyArrayFields *>(a)->nd > 8 ||
          !numpyTensor(a, dl, stridesNext, &err))
        raiseArg("argument '" + params_[param].name + "' (#" +
                 std::to_string(param) + "): " +
                 (err.empty() ? "rank above 8" : err));
      if (dl->strides)
        stridesNext += dl->ndim;
      readOnly = !(reinterpret_cast<NumpyArrayFields *>(a)->flags &
                   kNpyWriteable);
      break;
    }
    case Conv::Exchange:
      if (!haveStream || !gpu_) {
        // No capsule, no Python call: the producer fills our DLTensor
        // (borrowed: valid while the argument tuple holds the object),
        // unless the guard that called us just did.
        if (const DLTensor *g = guarded ? guarded->find(a) : nullptr)
          *dl = *g;
        else if (s.xapi->dltensor_from_py_object_no_sync(a, dl) != 0)
          raiseProducerError(a, "dltensor_from_py_object_no_sync");
        break;
      }
      [[fallthrough]]; // explicit stream: __dlpack__(stream=) handshake
    case Conv::Export:
    case Conv::DLPack: {
      PyObject *streamArg = nullptr;
      if (haveStream && gpu_) {
        if (!streamObj.is_valid())
          streamObj = nb::int_(streamInt);
        streamArg = streamObj.ptr();
      }
      // The exporter skips __dlpack__'s stream handshake: only when the
      // launch runs on the producer's current stream (no explicit stream).
      PyObject *cap = s.exportFn && !streamArg
                          ? PyObject_CallOneArg(s.exportFn, a)
                          : callDlpack(a, s, streamArg);
      if (!cap)
        raisePending();
      sc.caps[sc.ncaps++] = cap;
      *dl = *capsuleTensor(cap, &readOnly);
      break;
    }
    }
    // Read-only memory (a numpy array over bytes, np.memmap(mode="r"), a
    // DLPack tensor flagged read-only) for a param the kernel writes: the
    // kernel would write it anyway, or fault on a read-only mapping.
    if (readOnly && params_[param].written)
      raiseArg("argument '" + params_[param].name + "' (#" +
               std::to_string(param) + "): the kernel writes it, but the "
               "array is read-only");
    if (!ctx.framework) {
      ctx.framework = &s;
      tensorDeviceType = dl->device.device_type;
      tensorDeviceId = dl->device.device_id;
    }
    t.kind = TILE_ARG_TENSOR;
    t.v.tensor = dl;
  }

  void *streamPtr = nullptr;
  if (gpu_) {
    if (haveStream) {
      streamPtr = reinterpret_cast<void *>(streamInt);
    } else if (ctx.framework && tensorDeviceType != kDLCPU &&
               ctx.framework->xapi &&
               ctx.framework->xapi->current_work_stream) {
      // The producer's current stream, from C (torch: getCurrentCUDAStream).
      if (ctx.framework->xapi->current_work_stream(
              tensorDeviceType, tensorDeviceId, &streamPtr) != 0)
        raiseProducerError(nullptr, "current_work_stream");
    } else if (ctx.framework && ctx.framework->is_torch &&
               tensorDeviceType != kDLCPU) {
      streamPtr = torchCurrentStream(tensorDeviceId);
    }
  }

  DLManagedTensor *outTensors[16];
  std::vector<DLManagedTensor *> outHeap;
  tile_outputs outs{outTensors, 16, 0};
  if (outIdx_.size() > 16) {
    outHeap.resize(outIdx_.size());
    outs.tensors = outHeap.data();
    outs.capacity = int32_t(outHeap.size());
  }

  tile_status st;
  {
    LaunchCtx *prev = tlsCtx;
    tlsCtx = &ctx;
    if (gpu_) {
      // Asynchronous: keep the GIL (cheaper than dropping it per launch).
      st = tile_kernel_launch(k_, sc.args, int32_t(n), streamPtr,
                              outIdx_.empty() ? nullptr : &outs);
    } else {
      // CPU kernels run to completion here: let other Python threads run.
      nb::gil_scoped_release nogil;
      st = tile_kernel_launch(k_, sc.args, int32_t(n), streamPtr,
                              outIdx_.empty() ? nullptr : &outs);
    }
    tlsCtx = prev;
  }
  if (st != TILE_STATUS_OK) {
    // The runtime freed whatever it had allocated (through our deleters).
    for (Allocated &al : ctx.allocated)
      Py_DECREF(al.obj);
    if (ctx.errType) {
      PyErr_Restore(ctx.errType, ctx.errValue, ctx.errTb);
      raisePending();
    }
    raiseStatus(st, tile_last_error());
  }
  if (ctx.errType) { // an allocator error that did not fail the launch
    Py_XDECREF(ctx.errType);
    Py_XDECREF(ctx.errValue);
    Py_XDECREF(ctx.errTb);
  }
  if (outIdx_.empty())
    return nb::none();

  // Results for out_idx, in order: the allocated object or the caller's.
  size_t nout = outIdx_.size();
  nb::object result;
  PyObject *tuple = nout > 1 ? PyTuple_New(Py_ssize_t(nout)) : nullptr;
  for (size_t j = 0; j < nout; ++j) {
    PyObject *obj = nullptr;
    DLManagedTensor *mt = outs.tensors[j];
    if (mt) {
      for (Allocated &al : ctx.allocated)
        if (al.mt == mt) {
          obj = al.obj; // steal
          al.obj = nullptr;
        }
      mt->deleter(mt);
      if (obj && ctx.framework && ctx.framework->finish) {
        PyObject *f = PyObject_CallOneArg(ctx.framework->finish, obj);
        Py_DECREF(obj);
        obj = f;
      }
    } else if (full) {
      obj = items[outIdx_[j]];
      Py_INCREF(obj);
    }
    if (!obj) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "tile: lost an output tensor");
      Py_XDECREF(tuple);
      for (Allocated &al : ctx.allocated)
        Py_XDECREF(al.obj);
      for (size_t r = j + 1; r < nout; ++r)
        if (outs.tensors[r])
          outs.tensors[r]->deleter(outs.tensors[r]);
      raisePending();
    }
    if (!tuple)
      return nb::steal(obj);
    PyTuple_SET_ITEM(tuple, Py_ssize_t(j), obj);
  }
  for (Allocated &al : ctx.allocated)
    Py_XDECREF(al.obj);
  return nb::steal(tuple);
}

// tp_call of KernelHandle (and of Python subclasses, which inherit it): no
// method lookup, no argument parsing beyond the one keyword `stream`.
PyObject *kernelTpCall(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *stream = Py_None;
  if (kwargs && PyDict_GET_SIZE(kwargs) > 0) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      if (PyUnicode_Check(key) &&
          PyUnicode_CompareWithASCIIString(key, "stream") == 0) {
        stream = value;
      } else {
        PyErr_Format(PyExc_TypeError,
                     "kernel call got an unexpected keyword argument '%S' "
                     "(only stream= is accepted)",
                     key);
        return nullptr;
      }
    }
  }
  // Only KernelHandle and its subclasses have this slot: no type check.
  if (!nb::inst_ready(nb::handle(self))) {
    PyErr_SetString(PyExc_TypeError, "kernel call on an uninitialized handle");
    return nullptr;
  }
  KernelHandle *k = nb::inst_ptr<KernelHandle>(nb::handle(self));
  try {
    return k->call(args, nb::handle(stream)).release().ptr();
  } catch (nb::python_error &e) {
    e.restore();
  } catch (nb::builtin_exception &e) {
    PyObject *type = PyExc_RuntimeError;
    switch (e.type()) {
    case nb::exception_type::type_error:
      type = PyExc_TypeError;
      break;
    case nb::exception_type::value_error:
      type = PyExc_ValueError;
      break;
    default:
      break;
    }
    PyErr_SetString(type, e.what());
  } catch (std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyType_Slot kernelSlots[] = {
    {Py_tp_call, reinterpret_cast<void *>(kernelTpCall)}, {0, nullptr}};

} // namespace

NB_MODULE(_runtime, m) {
  nb::set_leak_warnings(false); // kernels live in tile's module-level cache
  m.doc() = "tile kernel runtime (C API binding; see docs/python.md)";
  S.str_dlpack = PyUnicode_InternFromString("__dlpack__");
  S.str_dtype = PyUnicode_InternFromString("dtype");
  S.kw_max_version = Py_BuildValue("(s)", "max_version");
  S.kw_stream_max_version = Py_BuildValue("(ss)", "stream", "max_version");
  S.kw_stream = Py_BuildValue("(s)", "stream");
  S.version_1_0 = Py_BuildValue("(ii)", 1, 0);
  const char *env = std::getenv("TILE_PY_NUMPY_DLPACK");
  S.numpy_via_dlpack = env && *env && std::strcmp(env, "0") != 0;
  env = std::getenv("TILE_PY_NO_DLPACK_EXCHANGE");
  S.no_exchange = env && *env && std::strcmp(env, "0") != 0;

  S.tile_error = PyErr_NewExceptionWithDoc(
      "tile.TileError", "A runtime failure; .status names the tile_status.",
      PyExc_RuntimeError, nullptr);
  PyObject *bases = PyTuple_Pack(2, S.tile_error, PyExc_ValueError);
  S.argument_error = PyErr_NewExceptionWithDoc(
      "tile.ArgumentError",
      "Bad launch arguments or API misuse (status INVALID_ARGUMENT).", bases,
      nullptr);
  Py_DECREF(bases);
  m.attr("TileError") = nb::handle(S.tile_error);
  m.attr("ArgumentError") = nb::handle(S.argument_error);
  m.attr("version") = tile_runtime_version();
  m.attr("ABI_VERSION") = TILE_ABI_VERSION;
  tile_py::registerAbiVocabulary(m); // DTYPES, TARGETS, BACKENDS (kernel_info.cpp)
  m.attr("NUMPY_VIA_DLPACK") = S.numpy_via_dlpack;
  m.attr("DLPACK_EXCHANGE") = !S.no_exchange;
  // How objects of type(obj) are passed ("numpy", "exchange", "export",
  // "dlpack", "int", "float"): for tests and benchmarks.
  m.def("conversion", [](nb::handle obj) -> const char * {
    static const char *names[] = {"numpy",    "dlpack", "export",
                                  "exchange", "int",    "float"}; // Conv
    return names[int(strategyFor(obj.ptr()).conv)];
  });

  registerJitDispatch(m); // @tile.jit's last-call guard (jit_dispatch.cpp)

  nb::class_<KernelHandle>(m, "KernelHandle", nb::type_slots(kernelSlots))
      .def(nb::init<nb::bytes, const std::string &, bool>(),
           nb::arg("bundle"), nb::arg("backend") = "auto",
           nb::arg("inspect") = false,
           "Loads a bundle (bytes); backend: auto, ffi, native, ...; with "
           "inspect=True opens it without loading device code (any target, "
           "any machine; calling it raises)")
      .def_prop_ro("inspect_only",
                   [](const KernelHandle &k) { return k.inspectOnly(); })
      .def("describe", &KernelHandle::describe,
           "The kernel as text (tilec --info / tile-run --info).")
      .def_prop_ro("name", &KernelHandle::name)
      .def_prop_ro("target_kind", &KernelHandle::targetKind)
      .def_prop_ro("target_chip", &KernelHandle::targetChip)
      .def_prop_ro("backend", &KernelHandle::backend)
      .def_prop_ro("metadata", &KernelHandle::metadata)
      .def_prop_ro("out_idx", &KernelHandle::outIdx)
      .def_prop_ro("params", &KernelHandle::params)
      .def_prop_ro("symbols", &KernelHandle::symbols)
      .def_prop_ro("launch_info", &KernelHandle::launchInfo)
      .def("launch_grid", &KernelHandle::grid, nb::arg("symbols"),
           nb::arg("scalars"),
           "The grid (x, y, z) for the symbols' values (in `symbols` "
           "order) and one integer per parameter (the integer scalars' "
           "values; others ignored).")
      .def_prop_ro("variants", &KernelHandle::variants)
      .def_prop_ro("sections", &KernelHandle::sections)
      .def("section", &KernelHandle::section, nb::arg("name"),
           "The bytes of a bundle section, or None.");
}
