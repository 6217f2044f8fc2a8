/* AbiLayout.h - the kernel ABI's struct layouts as docs/bundle.md documents
 * them (x86-64 and aarch64), for AbiTest.cpp: it checks that the C++ view
 * (which the native-wrapper generator uses through offsetof) and the C view
 * (AbiLayout.c: the fixtures and hand-written kernels are C) of tile_abi.h
 * both equal these numbers. */
#ifndef TILE_TEST_RUNTIME_ABILAYOUT_H
#define TILE_TEST_RUNTIME_ABILAYOUT_H

#include "tile/Runtime/tile_abi.h"

/* X(STRUCT, FIELD, OFFSET) */
#define TILE_TEST_ABI_FIELDS(X)                                                \
  X(DLDevice, device_type, 0)                                                  \
  X(DLDevice, device_id, 4)                                                    \
  X(DLDataType, code, 0)                                                       \
  X(DLDataType, bits, 1)                                                       \
  X(DLDataType, lanes, 2)                                                      \
  X(DLTensor, data, 0)                                                         \
  X(DLTensor, device, 8)                                                       \
  X(DLTensor, ndim, 16)                                                        \
  X(DLTensor, dtype, 20)                                                       \
  X(DLTensor, shape, 24)                                                       \
  X(DLTensor, strides, 32)                                                     \
  X(DLTensor, byte_offset, 40)                                                 \
  X(tile_check_error, code, 0)                                                 \
  X(tile_check_error, param, 4)                                                \
  X(tile_check_error, dim, 8)                                                  \
  X(tile_check_error, reserved, 12)                                            \
  X(tile_check_error, expected, 16)                                            \
  X(tile_check_error, actual, 24)                                              \
  X(tile_native_env, ctx, 0)                                                   \
  X(tile_native_env, alloc_output, 8)                                          \
  X(tile_native_env, run, 16)                                                  \
  X(tile_native_env, error, 24)                                                \
  X(tile_memref_head, allocated, 0)                                            \
  X(tile_memref_head, aligned, 8)                                              \
  X(tile_memref_head, offset, 16)

/* X(STRUCT, SIZE) */
#define TILE_TEST_ABI_SIZES(X)                                                 \
  X(DLDevice, 8)                                                               \
  X(DLDataType, 4)                                                             \
  X(DLTensor, 48)                                                              \
  X(tile_check_error, 32)                                                      \
  X(tile_native_env, 32)                                                       \
  X(tile_memref_head, 24)

#ifdef __cplusplus
extern "C" {
#endif
/* offsetof / sizeof of the entries above, in order, as C computes them. */
extern const int64_t tile_test_c_offsets[];
extern const int64_t tile_test_c_sizes[];
/* Each TILE_DTYPES row's sizeof(CTYPE) in C. */
extern const int64_t tile_test_c_dtype_sizes[];
#ifdef __cplusplus
}
#endif

#endif /* TILE_TEST_RUNTIME_ABILAYOUT_H */
