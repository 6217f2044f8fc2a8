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

#include <nanobind/nanobind.h>

namespace tile::python {
struct DLPackExchangeAPIV1;

void registerJitDispatch(nanobind::module_ &m);

// Defined in runtime_ext.cpp: the DLPack exchange table through which the
// launch converts objects of obj's type (torch >= 2.10 tensors), or nullptr
// (no table, turned off by TILE_PY_NO_DLPACK_EXCHANGE, or not a tensor
// type). Never raises.
const DLPackExchangeAPIV1 *exchangeApiFor(PyObject *obj);
} // namespace tile::python

#endif
