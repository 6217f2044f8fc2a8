//===- jit_dispatch.cpp - tile._runtime.JitDispatch: @tile.jit's fast path ===//
//
// See jit_dispatch.h. A guard is (argument position, kind, dim):
//   DTYPE  the argument's .dtype object, compared by identity (dtype objects
//          of numpy, torch, cupy are shared per dtype; a new object that is
//          equal only costs one trip through the Python dispatch)
//   DIM    .shape[dim], compared by value (T.const dims)
//   SHAPE  .shape, compared by value (autotune key tensors)
//   VALUE  the argument itself, compared by value (autotune key scalars)
//   DEVICE type(arg) and, unless it is numpy.ndarray (always the host),
//          its .device, compared by value (target="auto")
// numpy arrays are read from their struct (dtype, dims), as the launch path
// reads them.
// A value that cannot be read (no such attribute) fails the guard: the
// Python dispatch then decides, with its error messages.
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

// Exactly numpy.ndarray: its dtype, shape and device are read from the
// array struct (foreign_abi.h), as the launch path does: no attribute
// lookup, no shape tuple.
NumpyArrayFields *asNumpy(PyObject *obj) {
  PyTypeObject *t = Py_TYPE(obj);
  if (t != numpyArrayType) {
    if (numpyArrayType || std::strcmp(t->tp_name, "numpy.ndarray") != 0)
      return nullptr;
    numpyArrayType = t;
  }
  return reinterpret_cast<NumpyArrayFields *>(obj);
}

// What a guard saw at the last call: an object (compared by identity or
// value), or a numpy array's dims.
struct Seen {
  PyObject *obj = nullptr; // owned
  PyTypeObject *type = nullptr; // DEVICE: the argument's type (borrowed:
                                // only compared, never dereferenced)
  bool numpyDims = false;
  std::vector<Py_ssize_t> dims;
};

// The guarded value of one argument (a new reference), or nullptr with no
// Python error set when it cannot be read.
PyObject *readValue(PyObject *arg, const Guard &g) {
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
  case VALUE:
    Py_INCREF(arg);
    v = arg;
    break;
  case DEVICE: // the type is compared apart (Seen::type)
    v = PyObject_GetAttr(arg, strDevice);
    break;
  }
  if (!v)
    PyErr_Clear();
  return v;
}

// Reads what guard g sees of arg into `out`; false when it cannot be read.
bool see(PyObject *arg, const Guard &g, Seen &out) {
  if (NumpyArrayFields *a = asNumpy(arg)) {
    switch (g.kind) {
    case DTYPE:
      out.obj = a->descr;
      Py_INCREF(out.obj);
      return true;
    case DIM:
      if (g.dim >= a->nd)
        return false;
      out.numpyDims = true;
      out.dims.assign(1, a->dimensions[g.dim]);
      return true;
    case SHAPE:
      out.numpyDims = true;
      out.dims.assign(a->dimensions, a->dimensions + a->nd);
      return true;
    case DEVICE: // numpy arrays live on the host
      out.obj = reinterpret_cast<PyObject *>(Py_TYPE(arg));
      Py_INCREF(out.obj);
      return true;
    default:
      break;
    }
  }
  out.type = Py_TYPE(arg);
  out.obj = readValue(arg, g);
  return out.obj != nullptr;
}

bool sameAs(PyObject *arg, const Guard &g, const Seen &last) {
  if (NumpyArrayFields *a = asNumpy(arg)) {
    switch (g.kind) {
    case DTYPE:
      return a->descr == last.obj;
    case DIM:
      return last.numpyDims && g.dim < a->nd &&
             a->dimensions[g.dim] == last.dims[0];
    case SHAPE:
      return last.numpyDims && size_t(a->nd) == last.dims.size() &&
             std::equal(last.dims.begin(), last.dims.end(), a->dimensions);
    case DEVICE:
      return reinterpret_cast<PyObject *>(Py_TYPE(arg)) == last.obj;
    default:
      break;
    }
  }
  if (last.numpyDims || !last.obj ||
      (g.kind == DEVICE && Py_TYPE(arg) != last.type))
    return false;
  PyObject *now = readValue(arg, g);
  if (!now)
    return false;
  bool same = now == last.obj;
  if (!same && g.kind != DTYPE) { // dtypes: identity only (file comment)
    int eq = PyObject_RichCompareBool(now, last.obj, Py_EQ);
    if (eq < 0)
      PyErr_Clear();
    same = eq == 1;
  }
  Py_DECREF(now);
  return same;
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
    for (size_t i = 0; i < seen.size(); ++i) {
      const Guard &g = guards[slot][i];
      if (!see(args[size_t(g.pos)].ptr(), g, seen[i])) {
        for (Seen &s : seen) // not guardable: stay disarmed
          Py_XDECREF(s.obj);
        return;
      }
    }
    last = std::move(seen);
    lastKernel = kernel.inc_ref().ptr();
    lastSlot = slot;
  }

  bool matches(PyObject *args) const {
    if (!lastKernel || PyTuple_GET_SIZE(args) != arity[lastSlot])
      return false;
    const std::vector<Guard> &gs = guards[lastSlot];
    for (size_t i = 0; i < gs.size(); ++i)
      if (!sameAs(PyTuple_GET_ITEM(args, gs[i].pos), gs[i], last[i]))
        return false;
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
  if (onlyStream(kwargs) && d->matches(args)) {
    // The kernel may re-enter Python (allocators): keep it alive.
    PyObject *kernel = d->lastKernel;
    Py_INCREF(kernel);
    PyObject *r = PyObject_Call(kernel, args,
                                kwargs && PyDict_GET_SIZE(kwargs) ? kwargs
                                                                  : nullptr);
    Py_DECREF(kernel);
    return r;
  }
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
