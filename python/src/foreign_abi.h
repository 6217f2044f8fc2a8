//===- foreign_abi.h - tensor ABIs tile._runtime reads directly -*- C++ -*-===//
//
// Layouts defined by other projects that the extension reads without their
// headers (the installed dlpack.h may be 0.6; numpy's headers are not a
// build dependency): DLPack 1.x versioned tensors, the DLPack C exchange
// API and numpy's array struct. Each mirrors the named upstream definition
// field for field; only runtime_ext.cpp includes this.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_PYTHON_SRC_FOREIGN_ABI_H
#define TILE_PYTHON_SRC_FOREIGN_ABI_H

#include <Python.h>
#include <dlpack/dlpack.h>

#include <cstdint>

namespace tile::python {

// ---- DLPack 1.x versioned tensors (the system header may be 0.6) ---------

struct DLPackVersionV1 {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorV1 {
  DLPackVersionV1 version;
  void *manager_ctx;
  void (*deleter)(DLManagedTensorV1 *self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLFlagReadOnly = 1ull << 0;

// ---- the DLPack C exchange API (dlpack.h 1.2+, DLPackExchangeAPI) --------
//
// A producer type publishes a static table of C functions: as
// type.__dlpack_c_exchange_api__, a PyCapsule named "dlpack_exchange_api"
// (DLPack 1.3; torch >= 2.10), or as type.__c_dlpack_exchange_api__, an int
// address (DLPack 1.2). Same struct in both.

struct DLPackExchangeAPIHeaderV1 {
  DLPackVersionV1 version;
  DLPackExchangeAPIHeaderV1 *prev_api;
};
struct DLPackExchangeAPIV1 {
  DLPackExchangeAPIHeaderV1 header;
  void *managed_tensor_allocator;
  int (*managed_tensor_from_py_object_no_sync)(void *py_object,
                                               DLManagedTensorV1 **out);
  void *managed_tensor_to_py_object_no_sync;
  // Fills a caller-owned DLTensor (non-owning: valid while the object lives
  // unchanged). May be NULL.
  int (*dltensor_from_py_object_no_sync)(void *py_object, DLTensor *out);
  // The producer's current stream of a device (torch.cuda.current_stream).
  int (*current_work_stream)(int device_type, int32_t device_id,
                             void **out_stream);
};

// ---- numpy's array struct (numpy/ndarraytypes.h, PyArrayObject_fields) ----

struct NumpyArrayFields {
  PyObject_HEAD
  char *data;
  int nd;
  Py_ssize_t *dimensions;
  Py_ssize_t *strides;
  PyObject *base;
  PyObject *descr;
  int flags;
};
constexpr int kNpyCContiguous = 0x0001;
constexpr int kNpyWriteable = 0x0400;

} // namespace tile::python

#endif // TILE_PYTHON_SRC_FOREIGN_ABI_H
