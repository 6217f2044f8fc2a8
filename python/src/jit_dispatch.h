//===- jit_dispatch.h - tile._runtime.JitDispatch: @tile.jit's fast path --===//
//
// The last-call guard of @tile.jit and @tile.autotune (docs/python.md,
// "Dispatch"): a base class whose tp_call checks, in C++, that the
// arguments specialize like the last call's (same argument count, the same
// dtype objects, shapes, devices, key scalars) and then calls the last
// kernel directly; anything else goes to the Python dispatch, which finds
// (or compiles, or tunes) the kernel and re-arms the guard.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_PYTHON_JIT_DISPATCH_H
#define TILE_PYTHON_JIT_DISPATCH_H

#include <nanobind/nanobind.h>

namespace tile::python {
void registerJitDispatch(nanobind::module_ &m);
} // namespace tile::python

#endif
