//===- jit_dispatch.h - tile._runtime.JitDispatch: @tile.jit's fast path --===//
//
// The last-call guard of @tile.jit and @tile.autotune (docs/python.md,
// "Dispatch"): a base class whose tp_call checks, in C++, that the
// arguments specialize like the last call's (same argument count, dtypes,
// shapes, devices, key scalars) and then calls the last kernel directly;
// anything else goes to the Python dispatch, which finds (or compiles, or
// tunes) the kernel and re-arms the guard. Tensors are read the way the
// launch reads them (numpy's array struct, the DLPack C exchange API), so
// for numpy arrays and torch tensors a hit runs no Python code and creates
// no object before the kernel's own call.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_PYTHON_JIT_DISPATCH_H
#define TILE_PYTHON_JIT_DISPATCH_H

#include <dlpack/dlpack.h>
#include <nanobind/nanobind.h>

namespace tile::python {
struct DLPackExchangeAPIV1;

void registerJitDispatch(nanobind::module_ &m);

// Defined in runtime_ext.cpp: the DLPack exchange table through which the
// launch converts objects of obj's type (torch >= 2.10 tensors), or nullptr
// (no table, turned off by TILE_PY_NO_DLPACK_EXCHANGE, or not a tensor
// type). Never raises.
const DLPackExchangeAPIV1 *exchangeApiFor(PyObject *obj);

// The DLTensors a guard hit read through the exchange API, handed to the
// launch it makes so that the producer is not asked twice. The guard sets
// them right before calling the kernel (no Python code runs in between) and
// clears them after; KernelHandle::call takes them once, at its start (a
// nested call finds them taken), and reads them only for arguments it
// converts before any Python code of its own can run (a __dlpack__,
// __index__ or __float__ of an earlier argument).
struct GuardReads {
  static constexpr int kMax = 16;
  int n = 0;
  bool taken = false;
  PyObject *obj[kMax];
  DLTensor dl[kMax];

  const DLTensor *find(PyObject *o) const {
    for (int i = 0; i < n; ++i)
      if (obj[i] == o)
        return &dl[i];
    return nullptr;
  }
};
GuardReads *takeGuardReads(); // nullptr: none, or already taken
} // namespace tile::python

#endif
