//===- jit_dispatch.cpp - tile._runtime.JitDispatch: @tile.jit's fast path ===//
//
// See jit_dispatch.h. A guard is (argument position, kind, dim):
//   DTYPE  the argument's dtype
//   DIM    its extent in dimension dim (T.const dims)
//   SHAPE  its shape (autotune key tensors)
//   VALUE  the argument itself, compared by value (autotune key scalars)
//   DEVICE its type and device (target="auto")
// A tensor argument is read once per call, by the first of these that
// applies (the launch reads it the same way):
//   numpy.ndarray  the array struct: descr (by identity), dims; the device
//                  is the host (the type alone)
//   a type with the DLPack C exchange API (torch >= 2.10): one
//                  dltensor_from_py_object_no_sync into a stack DLTensor;
//                  dtype, dims and device compared as DLPack values (no
//                  .dtype / .shape / .device objects are created)
//   anything else  its .dtype (by identity: dtype objects of numpy, torch,
//                  cupy are shared per dtype; a new object that is equal
//                  only costs one trip through the Python dispatch),
//                  .shape / .device (by value)
// The guard compares only what was read the same way at the last call; a
// value that cannot be read (no such attribute, the producer failed) fails
// the guard: the Python dispatch then decides, with its error messages.
//
//===----------------------------------------------------------------------===//
#include "jit_dispatch.h"
#include "foreign_abi.h"

#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace tile::python {
namespace {

enum Kind : int { DTYPE = 0, DIM = 1, SHAPE = 2, VALUE = 3, DEVICE = 4 };

struct Guard {
  Py_ssize_t pos;
  int kind;
  Py_ssize_t dim;
};

PyObject *strDtype, *strShape, *strDevice, *strStream;
PyTypeObject *numpyArrayType; // numpy.ndarray once seen (never unloaded)
PyTypeObject *lastOtherType;  // the last type found not to be it (owned: its
                              // address cannot be reused while cached)

// Exactly numpy.ndarray: its dtype, shape and device are read from the
// array struct (foreign_abi.h), as the launch path does: no attribute
// lookup, no shape tuple. The name is compared once per type (a process
// that passes only torch tensors never sees numpy.ndarray).
[[gnu::noinline]] bool isNumpyArrayType(PyTypeObject *t) {
  if (!numpyArrayType && std::strcmp(t->tp_name, "numpy.ndarray") == 0) {
    numpyArrayType = t;
    return true;
  }
  PyTypeObject *old = lastOtherType; // not Py_XSETREF: from Python 3.12
                                     // its target must be a PyObject *
  Py_INCREF(t);
  lastOtherType = t;
  Py_XDECREF(reinterpret_cast<PyObject *>(old));
  return false;
}

inline NumpyArrayFields *asNumpy(PyObject *obj) {
  PyTypeObject *t = Py_TYPE(obj);
  return t == numpyArrayType ||
                 (t != lastOtherType && isNumpyArrayType(t))
             ? reinterpret_cast<NumpyArrayFields *>(obj)
             : nullptr;
}

// How a tensor argument was read (file comment).
enum class Via : uint8_t { Attr, Numpy, Exchange };

// One argument as its guards read it this call (read once, shared by the
// guards of that position).
struct ArgView {
  PyObject *arg = nullptr;
  Via via = Via::Attr;
  int ndim = 0;
  const int64_t *dims64 = nullptr;      // Via::Exchange
  const Py_ssize_t *dimsNp = nullptr;   // Via::Numpy
  PyObject *descr = nullptr;            // Via::Numpy (borrowed)
  DLTensor dl;                          // Via::Exchange (borrowed arrays)

  int64_t dim(int i) const { return dims64 ? dims64[i] : dimsNp[i]; }
};

// False when the argument cannot be read (the producer failed).
[[gnu::always_inline]] inline bool viewOf(PyObject *arg, ArgView &v) {
  v.arg = arg;
  if (NumpyArrayFields *a = asNumpy(arg)) {
    v.via = Via::Numpy;
    v.ndim = a->nd;
    v.dimsNp = a->dimensions;
    v.dims64 = nullptr;
    v.descr = a->descr;
    return true;
  }
  if (const DLPackExchangeAPIV1 *x = exchangeApiFor(arg)) {
    if (x->dltensor_from_py_object_no_sync(arg, &v.dl) != 0) {
      PyErr_Clear(); // the launch would fail: let the Python dispatch say so
      return false;
    }
    v.via = Via::Exchange;
    v.ndim = v.dl.ndim;
    v.dims64 = v.dl.shape;
    return true;
  }
  v.via = Via::Attr;
  return true;
}

GuardReads guardReads; // with the GIL held, as all of this file

// What a guard saw at the last call.
struct Seen {
  Via via = Via::Attr;
  PyObject *obj = nullptr;      // Attr / VALUE: the value; Numpy DTYPE: the
                                // descr (owned)
  PyTypeObject *type = nullptr; // DEVICE: the argument's type (borrowed: only
                                // compared, never dereferenced)
  DLDataType dtype{};           // Exchange DTYPE
  DLDevice device{};            // Exchange DEVICE
  std::vector<int64_t> dims;    // DIM: one extent; SHAPE: all (Numpy/Exchange)
};

// The value an Attr guard compares (a new reference), or nullptr with no
// Python error set when it cannot be read.
PyObject *readAttr(PyObject *arg, const Guard &g) {
  PyObject *v = nullptr;
  switch (g.kind) {
  case DTYPE:
    v = PyObject_GetAttr(arg, strDtype);
    break;
  case DIM: {
    PyObject *shape = PyObject_GetAttr(arg, strShape);
    if (shape) {
      v = PySequence_GetItem(shape, g.dim);
      Py_DECREF(shape);
    }
    break;
  }
  case SHAPE:
    v = PyObject_GetAttr(arg, strShape);
    break;
  case DEVICE: // the type is compared apart (Seen::type)
    v = PyObject_GetAttr(arg, strDevice);
    break;
  default:
    break;
  }
  if (!v)
    PyErr_Clear();
  return v;
}

bool sameDtype(const DLDataType &a, const DLDataType &b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// Records what guard g sees of the viewed argument; false when it cannot be
// read.
bool see(const ArgView &v, const Guard &g, Seen &out) {
  out.via = v.via;
  out.type = Py_TYPE(v.arg);
  switch (v.via) {
  case Via::Numpy:
  case Via::Exchange:
    switch (g.kind) {
    case DTYPE:
      if (v.via == Via::Numpy) {
        out.obj = v.descr;
        Py_INCREF(out.obj);
      } else {
        out.dtype = v.dl.dtype;
      }
      return true;
    case DIM:
      if (g.dim >= v.ndim)
        return false;
      out.dims.assign(1, v.dim(int(g.dim)));
      return true;
    case SHAPE:
      out.dims.resize(size_t(v.ndim));
      for (int i = 0; i < v.ndim; ++i)
        out.dims[size_t(i)] = v.dim(i);
      return true;
    case DEVICE: // numpy arrays live on the host: the type says it all
      if (v.via == Via::Exchange)
        out.device = v.dl.device;
      return true;
    }
    return false;
  case Via::Attr:
    out.obj = readAttr(v.arg, g);
    return out.obj != nullptr;
  }
  return false;
}

bool same(const ArgView &v, const Guard &g, const Seen &last) {
  if (v.via != last.via || (g.kind == DEVICE && Py_TYPE(v.arg) != last.type))
    return false;
  if (v.via != Via::Attr) {
    switch (g.kind) {
    case DTYPE:
      return v.via == Via::Numpy ? v.descr == last.obj
                                 : sameDtype(v.dl.dtype, last.dtype);
    case DIM:
      return g.dim < v.ndim && v.dim(int(g.dim)) == last.dims[0];
    case SHAPE:
      if (size_t(v.ndim) != last.dims.size())
        return false;
      for (int i = 0; i < v.ndim; ++i)
        if (v.dim(i) != last.dims[size_t(i)])
          return false;
      return true;
    case DEVICE:
      return v.via == Via::Numpy ||
             (v.dl.device.device_type == last.device.device_type &&
              v.dl.device.device_id == last.device.device_id);
    }
    return false;
  }
  PyObject *now = readAttr(v.arg, g);
  if (!now)
    return false;
  bool eq = now == last.obj;
  if (!eq && g.kind != DTYPE) { // dtypes: identity only (file comment)
    int r = PyObject_RichCompareBool(now, last.obj, Py_EQ);
    if (r < 0)
      PyErr_Clear();
    eq = r == 1;
  }
  Py_DECREF(now);
  return eq;
}

// VALUE guards: the argument itself, by value.
bool sameValue(PyObject *arg, const Seen &last) {
  if (arg == last.obj)
    return true;
  int r = PyObject_RichCompareBool(arg, last.obj, Py_EQ);
  if (r < 0)
    PyErr_Clear();
  return r == 1;
}

struct JitDispatch {
  nb::object fallback;           // fallback(self, *args, **kwargs)
  std::vector<Guard> guards[2];  // [0]: every argument, [1]: without outputs
  Py_ssize_t arity[2] = {-1, -1};
  int lastSlot = -1;
  std::vector<Seen> last;
  PyObject *lastKernel = nullptr; // owned

  JitDispatch(nb::object fb,
              std::vector<std::tuple<Py_ssize_t, int, Py_ssize_t>> full,
              std::vector<std::tuple<Py_ssize_t, int, Py_ssize_t>> inputs,
              Py_ssize_t nFull, Py_ssize_t nIn)
      : fallback(std::move(fb)) {
    for (int s = 0; s < 2; ++s)
      for (auto &[pos, kind, dim] : s == 0 ? full : inputs) {
        if (kind < DTYPE || kind > DEVICE || pos < 0 || dim < 0 ||
            pos >= (s == 0 ? nFull : nIn))
          throw nb::value_error("JitDispatch: bad guard");
        guards[s].push_back({pos, kind, dim});
      }
    // The guards of one argument next to each other: it is read once.
    for (auto &gs : guards)
      std::sort(gs.begin(), gs.end(), [](const Guard &a, const Guard &b) {
        return std::tie(a.pos, a.kind, a.dim) < std::tie(b.pos, b.kind, b.dim);
      });
    arity[0] = nFull;
    arity[1] = nIn;
  }
  ~JitDispatch() { disarm(); }

  void disarm() {
    for (Seen &s : last)
      Py_XDECREF(s.obj);
    last.clear();
    Py_CLEAR(lastKernel);
    lastSlot = -1;
  }

  // After the Python dispatch launched `kernel` for `args`: the next call
  // whose guards see the same goes straight to it.
  void arm(nb::tuple args, nb::handle kernel) {
    disarm();
    Py_ssize_t n = Py_ssize_t(args.size());
    int slot = n == arity[0] ? 0 : n == arity[1] ? 1 : -1;
    if (slot < 0)
      return;
    std::vector<Seen> seen(guards[slot].size());
    ArgView v;
    Py_ssize_t viewed = -1;
    bool ok = true;
    for (size_t i = 0; ok && i < seen.size(); ++i) {
      const Guard &g = guards[slot][i];
      PyObject *arg = PyTuple_GET_ITEM(args.ptr(), g.pos);
      if (g.kind == VALUE) {
        seen[i].obj = arg;
        Py_INCREF(arg);
        continue;
      }
      if (g.pos != viewed) {
        ok = viewOf(arg, v);
        viewed = g.pos;
      }
      ok = ok && see(v, g, seen[i]);
    }
    if (!ok) { // not guardable: stay disarmed
      for (Seen &s : seen)
        Py_XDECREF(s.obj);
      return;
    }
    last = std::move(seen);
    lastKernel = kernel.inc_ref().ptr();
    lastSlot = slot;
  }

  // True when every guard sees what it saw at the last call; the exchange
  // reads it made are left in `reads` (for the launch).
  bool matches(PyObject *args, GuardReads &reads) const {
    if (!lastKernel || PyTuple_GET_SIZE(args) != arity[lastSlot])
      return false;
    const std::vector<Guard> &gs = guards[lastSlot];
    ArgView v;
    Py_ssize_t viewed = -1;
    for (size_t i = 0; i < gs.size(); ++i) {
      const Guard &g = gs[i];
      PyObject *arg = PyTuple_GET_ITEM(args, g.pos);
      if (g.kind == VALUE) {
        if (!sameValue(arg, last[i]))
          return false;
        continue;
      }
      if (g.pos != viewed) {
        if (!viewOf(arg, v))
          return false;
        viewed = g.pos;
        if (v.via == Via::Exchange && reads.n < GuardReads::kMax) {
          reads.obj[reads.n] = arg;
          reads.dl[reads.n++] = v.dl;
        }
      }
      if (!same(v, g, last[i]))
        return false;
    }
    return true;
  }
};

// Only stream= may pass the fast path (the kernel takes it).
bool onlyStream(PyObject *kwargs) {
  if (!kwargs || PyDict_GET_SIZE(kwargs) == 0)
    return true;
  return PyDict_GET_SIZE(kwargs) == 1 &&
         PyDict_GetItemWithError(kwargs, strStream) != nullptr;
}

PyObject *dispatchTpCall(PyObject *self, PyObject *args, PyObject *kwargs) {
  if (!nb::inst_ready(nb::handle(self))) {
    PyErr_SetString(PyExc_TypeError, "JitDispatch: not initialized");
    return nullptr;
  }
  JitDispatch *d = nb::inst_ptr<JitDispatch>(nb::handle(self));
  GuardReads &reads = guardReads;
  reads.n = 0;
  if (onlyStream(kwargs) && d->matches(args, reads)) {
    // The kernel may re-enter Python (allocators): keep it alive.
    PyObject *kernel = d->lastKernel;
    Py_INCREF(kernel);
    PyObject *kw = kwargs && PyDict_GET_SIZE(kwargs) ? kwargs : nullptr;
    // A tile.Kernel's slot directly (KernelHandle's tp_call: it takes the
    // args tuple as it is); PyObject_Call would only add its checks.
    ternaryfunc call = Py_TYPE(kernel)->tp_call;
    reads.taken = false;
    PyObject *r = call ? call(kernel, args, kw) : PyObject_Call(kernel, args, kw);
    reads.n = 0;
    Py_DECREF(kernel);
    return r;
  }
  reads.n = 0;
  if (PyErr_Occurred())
    return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject *full = PyTuple_New(n + 1);
  if (!full)
    return nullptr;
  Py_INCREF(self);
  PyTuple_SET_ITEM(full, 0, self);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *a = PyTuple_GET_ITEM(args, i);
    Py_INCREF(a);
    PyTuple_SET_ITEM(full, i + 1, a);
  }
  PyObject *r = PyObject_Call(d->fallback.ptr(), full, kwargs);
  Py_DECREF(full);
  return r;
}

} // namespace

GuardReads *takeGuardReads() {
  if (guardReads.taken || guardReads.n == 0)
    return nullptr;
  guardReads.taken = true;
  return &guardReads;
}

namespace {

PyType_Slot dispatchSlots[] = {
    {Py_tp_call, reinterpret_cast<void *>(dispatchTpCall)}, {0, nullptr}};

} // namespace

void registerJitDispatch(nb::module_ &m) {
  strDtype = PyUnicode_InternFromString("dtype");
  strShape = PyUnicode_InternFromString("shape");
  strDevice = PyUnicode_InternFromString("device");
  strStream = PyUnicode_InternFromString("stream");
  nb::class_<JitDispatch>(m, "JitDispatch", nb::type_slots(dispatchSlots))
      .def(nb::init<nb::object,
                    std::vector<std::tuple<Py_ssize_t, int, Py_ssize_t>>,
                    std::vector<std::tuple<Py_ssize_t, int, Py_ssize_t>>,
                    Py_ssize_t, Py_ssize_t>(),
           nb::arg("fallback"), nb::arg("guards_full"),
           nb::arg("guards_inputs"), nb::arg("n_full"), nb::arg("n_inputs"),
           "fallback(self, *args, **kwargs) runs when the guards fail; "
           "guards: (position, kind, dim), kinds DTYPE=0, DIM=1, SHAPE=2, "
           "VALUE=3, DEVICE=4")
      .def("_arm", &JitDispatch::arm, nb::arg("args"), nb::arg("kernel"),
           "The next call whose guards read what args read calls kernel.")
      .def("_disarm", &JitDispatch::disarm)
      .def_prop_ro("_armed", [](const JitDispatch &d) {
        return d.lastKernel != nullptr;
      });
}

} // namespace tile::python
