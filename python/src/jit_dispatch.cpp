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
// A value that cannot be read (no such attribute) fails the guard: the
// Python dispatch then decides, with its error messages.
//
//===----------------------------------------------------------------------===//
#include "jit_dispatch.h"

#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

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

bool isNumpyArray(PyTypeObject *t) {
  return std::strcmp(t->tp_name, "numpy.ndarray") == 0;
}

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
  case DEVICE: {
    PyTypeObject *t = Py_TYPE(arg);
    if (isNumpyArray(t)) {
      Py_INCREF(t);
      v = reinterpret_cast<PyObject *>(t);
    } else {
      PyObject *dev = PyObject_GetAttr(arg, strDevice);
      if (dev) {
        v = PyTuple_Pack(2, reinterpret_cast<PyObject *>(t), dev);
        Py_DECREF(dev);
      }
    }
    break;
  }
  }
  if (!v)
    PyErr_Clear();
  return v;
}

bool sameValue(PyObject *now, PyObject *last, int kind) {
  if (now == last)
    return true;
  if (kind == DTYPE) // identity only (see the file comment)
    return false;
  int eq = PyObject_RichCompareBool(now, last, Py_EQ);
  if (eq < 0) {
    PyErr_Clear();
    return false;
  }
  return eq == 1;
}

struct JitDispatch {
  nb::object fallback;           // fallback(self, *args, **kwargs)
  std::vector<Guard> guards[2];  // [0]: every argument, [1]: without outputs
  Py_ssize_t arity[2] = {-1, -1};
  int lastSlot = -1;
  std::vector<PyObject *> lastValues; // owned
  PyObject *lastKernel = nullptr;     // owned

  JitDispatch(nb::object fb,
              std::vector<std::tuple<Py_ssize_t, int, Py_ssize_t>> full,
              std::vector<std::tuple<Py_ssize_t, int, Py_ssize_t>> inputs,
              Py_ssize_t nFull, Py_ssize_t nIn)
      : fallback(std::move(fb)) {
    for (int s = 0; s < 2; ++s)
      for (auto &[pos, kind, dim] : s == 0 ? full : inputs) {
        if (kind < DTYPE || kind > DEVICE || pos < 0 ||
            pos >= (s == 0 ? nFull : nIn))
          throw nb::value_error("JitDispatch: bad guard");
        guards[s].push_back({pos, kind, dim});
      }
    arity[0] = nFull;
    arity[1] = nIn;
  }
  ~JitDispatch() { disarm(); }

  void disarm() {
    for (PyObject *v : lastValues)
      Py_XDECREF(v);
    lastValues.clear();
    Py_CLEAR(lastKernel);
    lastSlot = -1;
  }

  // After the Python dispatch launched `kernel` for `args`: the next call
  // whose guards read the same values goes straight to it.
  void arm(nb::tuple args, nb::handle kernel) {
    disarm();
    Py_ssize_t n = Py_ssize_t(args.size());
    int slot = n == arity[0] ? 0 : n == arity[1] ? 1 : -1;
    if (slot < 0)
      return;
    std::vector<PyObject *> values;
    for (const Guard &g : guards[slot]) {
      PyObject *v = readValue(args[size_t(g.pos)].ptr(), g);
      if (!v) { // not guardable: stay disarmed
        for (PyObject *w : values)
          Py_DECREF(w);
        return;
      }
      values.push_back(v);
    }
    lastValues = std::move(values);
    lastKernel = kernel.inc_ref().ptr();
    lastSlot = slot;
  }

  bool matches(PyObject *args) const {
    if (!lastKernel || PyTuple_GET_SIZE(args) != arity[lastSlot])
      return false;
    const std::vector<Guard> &gs = guards[lastSlot];
    for (size_t i = 0; i < gs.size(); ++i) {
      PyObject *v = readValue(PyTuple_GET_ITEM(args, gs[i].pos), gs[i]);
      if (!v)
        return false;
      bool same = sameValue(v, lastValues[i], gs[i].kind);
      Py_DECREF(v);
      if (!same)
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
