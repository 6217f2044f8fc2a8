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

#include <stdint.h>
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

/* Status codes: returned by the C API and by `NAME__tile_native`. */
typedef enum tile_status {
  TILE_STATUS_OK = 0,
  TILE_STATUS_INVALID_ARGUMENT = 1,    /* bad launch arguments / API misuse */
  TILE_STATUS_BUNDLE_ERROR = 2,        /* unreadable or inconsistent bundle */
  TILE_STATUS_BACKEND_UNAVAILABLE = 3, /* backend/target not supported here */
  TILE_STATUS_NO_DEVICE = 4,           /* driver or device missing */
  TILE_STATUS_LAUNCH_FAILED = 5,       /* the kernel could not be run */
  TILE_STATUS_OUT_OF_MEMORY = 6,       /* an allocation failed */
  TILE_STATUS_INTERNAL = 7             /* a bug in the runtime */
} tile_status;

/* Argument-check failure codes (docs/bundle.md, "Argument checks"). */
enum {
  TILE_CHECK_OK = 0,
  TILE_CHECK_NULL_TENSOR = 1,
  TILE_CHECK_DEVICE_TYPE = 2,
  TILE_CHECK_DEVICE_ID = 3,
  TILE_CHECK_DTYPE = 4,
  TILE_CHECK_RANK = 5,
  TILE_CHECK_STATIC_DIM = 6,
  TILE_CHECK_SYMBOL = 7,
  TILE_CHECK_STRIDE = 8,
  TILE_CHECK_NULL_DATA = 9,
  TILE_CHECK_ALIGNMENT = 10,
  TILE_CHECK_NEGATIVE_DIM = 11,
  /* An omitted output's dim uses a symbol no argument bound
   * (param = output, dim = its dim, expected = actual = 0). */
  TILE_CHECK_UNBOUND_SYMBOL = 12,
  /* Reported by the runtime's grid runner, never by a wrapper: gx*gy*gz
   * overflows int64 (param = -1, dim = grid axis, actual = its extent). */
  TILE_CHECK_GRID_TOO_LARGE = 13
};

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
