/* tile_abi.h - the binary interface between compiled kernels and the runtime.
 *
 * This header is shared by three parties and is plain C on purpose:
 *   - the runtime (lib/Runtime), which calls into a kernel's host code;
 *   - the compiler, which generates `NAME__tile_blocks` / `NAME__tile_native`
 *     against these layouts (docs/bundle.md is the normative description);
 *   - hand-written kernels (the runtime's test fixtures).
 * Changing anything here is an ABI break: bump TILE_ABI_VERSION and the
 * bundle metadata version together.
 */
#ifndef TILE_RUNTIME_TILE_ABI_H
#define TILE_RUNTIME_TILE_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILE_ABI_VERSION 1

/* DLPack type codes newer than the DLPack 0.6 headers some distributions
 * ship (values from DLPack 1.x). Defined as macros with our own prefix so
 * they never clash with the enumerators of a newer dlpack.h. */
#define TILE_DL_BOOL 6
#define TILE_DL_FLOAT8_E4M3FN 10
#define TILE_DL_FLOAT8_E5M2 12

/* Status codes: returned by the C API and by `NAME__tile_native`.
 * X(ID, VALUE, MEANING); tile_status_name() returns "ID". */
#define TILE_STATUSES(X)                                                       \
  X(OK, 0, "success")                                                          \
  X(INVALID_ARGUMENT, 1, "bad launch arguments / API misuse")                  \
  X(BUNDLE_ERROR, 2, "unreadable or inconsistent bundle")                      \
  X(BACKEND_UNAVAILABLE, 3, "backend/target not supported here")               \
  X(NO_DEVICE, 4, "driver or device missing")                                  \
  X(LAUNCH_FAILED, 5, "the kernel could not be run")                           \
  X(OUT_OF_MEMORY, 6, "an allocation failed")                                  \
  X(INTERNAL, 7, "a bug in the runtime")

typedef enum tile_status {
#define TILE_X(id, value, meaning) TILE_STATUS_##id = value,
  TILE_STATUSES(TILE_X)
#undef TILE_X
} tile_status;

/* Argument-check failure codes (docs/bundle.md, "Argument checks"), in the
 * order the checks run. X(ID, VALUE). Notes on the last two:
 *   UNBOUND_SYMBOL: an omitted output's dim uses a symbol no argument bound
 *     (param = output, dim = its dim, expected = actual = 0).
 *   GRID_TOO_LARGE: reported by the runtime's grid runner, never by a
 *     wrapper: gx*gy*gz overflows int64 (param = -1, dim = grid axis,
 *     actual = its extent). */
#define TILE_CHECKS(X)                                                         \
  X(OK, 0)                                                                     \
  X(NULL_TENSOR, 1)                                                            \
  X(DEVICE_TYPE, 2)                                                            \
  X(DEVICE_ID, 3)                                                              \
  X(DTYPE, 4)                                                                  \
  X(RANK, 5)                                                                   \
  X(STATIC_DIM, 6)                                                             \
  X(SYMBOL, 7)                                                                 \
  X(STRIDE, 8)                                                                 \
  X(NULL_DATA, 9)                                                              \
  X(ALIGNMENT, 10)                                                             \
  X(NEGATIVE_DIM, 11)                                                          \
  X(UNBOUND_SYMBOL, 12)                                                        \
  X(GRID_TOO_LARGE, 13)

enum {
#define TILE_X(id, value) TILE_CHECK_##id = value,
  TILE_CHECKS(TILE_X)
#undef TILE_X
};

/* The dtype vocabulary of kernel metadata (docs/bundle.md) and its DLPack
 * encoding, one row per dtype: X(ID, NAME, DLPACK_CODE, BITS, LANES, CTYPE).
 *   NAME   the metadata name; also the dtype's name in numpy (ml_dtypes for
 *          bfloat16 and the float8 types) and in torch.
 *   CTYPE  the C type one element is stored as (16- and 8-bit floats as
 *          their raw bits).
 * The compiler (MLIR element type -> NAME), the runtime (metadata and
 * DLTensor checks), the native wrapper generator and the Python package
 * (tile._runtime.DTYPES) all read this table. */
#define TILE_DTYPES(X)                                                         \
  X(BOOL, "bool", TILE_DL_BOOL, 8, 1, uint8_t)                                 \
  X(INT8, "int8", kDLInt, 8, 1, int8_t)                                        \
  X(INT16, "int16", kDLInt, 16, 1, int16_t)                                    \
  X(INT32, "int32", kDLInt, 32, 1, int32_t)                                    \
  X(INT64, "int64", kDLInt, 64, 1, int64_t)                                    \
  X(UINT8, "uint8", kDLUInt, 8, 1, uint8_t)                                    \
  X(UINT16, "uint16", kDLUInt, 16, 1, uint16_t)                                \
  X(UINT32, "uint32", kDLUInt, 32, 1, uint32_t)                                \
  X(UINT64, "uint64", kDLUInt, 64, 1, uint64_t)                                \
  X(FLOAT16, "float16", kDLFloat, 16, 1, uint16_t)                             \
  X(BFLOAT16, "bfloat16", kDLBfloat, 16, 1, uint16_t)                          \
  X(FLOAT32, "float32", kDLFloat, 32, 1, float)                                \
  X(FLOAT64, "float64", kDLFloat, 64, 1, double)                               \
  X(FLOAT8_E4M3FN, "float8_e4m3fn", TILE_DL_FLOAT8_E4M3FN, 8, 1, uint8_t)      \
  X(FLOAT8_E5M2, "float8_e5m2", TILE_DL_FLOAT8_E5M2, 8, 1, uint8_t)

/* clang-format off */
typedef enum tile_dtype {
#define TILE_X(id, name, code, bits, lanes, ctype) TILE_DTYPE_##id,
  TILE_DTYPES(TILE_X)
#undef TILE_X
  TILE_DTYPE_COUNT
} tile_dtype;
/* clang-format on */

/* The DLPack type of a metadata dtype name; 0 (and *out untouched) when the
 * name is not in TILE_DTYPES. */
static inline int tile_dtype_from_name(const char *name, DLDataType *out) {
#define TILE_X(id, name_, code_, bits_, lanes_, ctype)                         \
  if (strcmp(name, name_) == 0) {                                              \
    out->code = (uint8_t)(code_);                                              \
    out->bits = (uint8_t)(bits_);                                              \
    out->lanes = (uint16_t)(lanes_);                                           \
    return 1;                                                                  \
  }
  TILE_DTYPES(TILE_X)
#undef TILE_X
  return 0;
}

/* The metadata name of a DLPack type, or NULL when TILE_DTYPES has none. */
static inline const char *tile_dtype_name(DLDataType type) {
#define TILE_X(id, name, code_, bits_, lanes_, ctype)                          \
  if (type.code == (code_) && type.bits == (bits_) && type.lanes == (lanes_))  \
    return name;
  TILE_DTYPES(TILE_X)
#undef TILE_X
  return NULL;
}

/* Packs a DLDataType the way TILE_CHECK_DTYPE reports it. */
#define TILE_PACK_DTYPE(code, bits, lanes)                                     \
  ((int64_t)(((uint32_t)(code) << 16) | ((uint32_t)(bits) << 8) |              \
             (uint32_t)(lanes)))

typedef struct tile_check_error {
  int32_t code;     /* TILE_CHECK_*, 0 = ok */
  int32_t param;    /* parameter index */
  int32_t dim;      /* dimension, or -1 */
  int32_t reserved; /* zero */
  int64_t expected; /* meaning depends on code */
  int64_t actual;
} tile_check_error;

/* CPU block function (host.so): runs linear blocks [begin, end) of a grid
 * gx*gy*gz; block b has bx = b % gx, by = (b / gx) % gy, bz = b / (gx*gy).
 * args[i] points to a tile_memref_N (tensor param) or to the scalar value
 * in its own C type (scalar param). */
typedef void (*tile_blocks_fn)(void **args, int64_t begin, int64_t end,
                               int64_t gx, int64_t gy, int64_t gz);

/* Layout of the memref descriptor args[i] points to for a tensor of rank R:
 *   { void *allocated; void *aligned; int64_t offset;
 *     int64_t sizes[R]; int64_t strides[R]; }
 * The runtime passes allocated = DLTensor.data, aligned = data + byte_offset,
 * offset = 0 and canonical row-major strides (in elements). */
#define TILE_MEMREF_WORDS(rank) (3 + 2 * (rank))

/* The fixed head of that descriptor; int64_t sizes[R] and strides[R] follow
 * it. The byte offsets of the tail: */
typedef struct tile_memref_head {
  void *allocated;
  void *aligned;
  int64_t offset;
} tile_memref_head;
#define TILE_MEMREF_SIZE_OFFSET(rank, d)                                       \
  ((int64_t)sizeof(tile_memref_head) + 8 * (int64_t)(d))
#define TILE_MEMREF_STRIDE_OFFSET(rank, d)                                     \
  ((int64_t)sizeof(tile_memref_head) + 8 * ((int64_t)(rank) + (int64_t)(d)))

typedef struct tile_native_env {
  void *ctx;
  /* Allocates omitted output `param` with `shape` (rank from the metadata).
   * Returns the DLTensor to use, or NULL on failure (the wrapper then returns
   * TILE_STATUS_OUT_OF_MEMORY; the runtime keeps the precise reason). */
  DLTensor *(*alloc_output)(void *ctx, int32_t param, const int64_t *shape);
  /* Runs the grid (CPU: the block function over the thread pool). Returns 0
   * or a tile_status, which the wrapper returns unchanged. */
  int32_t (*run)(void *ctx, void **args, int64_t gx, int64_t gy, int64_t gz);
  tile_check_error *error;
} tile_native_env;

/* NAME__tile_native: tensors[i] is tensor param i's DLTensor (NULL for an
 * omitted output and for scalar params); scalars[i] points to scalar param
 * i's value in its metadata type (NULL for tensor params). Returns 0 or a
 * tile_status; on a check failure fills *env->error and returns
 * TILE_STATUS_INVALID_ARGUMENT. */
typedef int32_t (*tile_native_fn)(DLTensor **tensors, void **scalars,
                                  tile_native_env *env);

#ifdef __cplusplus
}
#endif

#endif /* TILE_RUNTIME_TILE_ABI_H */
