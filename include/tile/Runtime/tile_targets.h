/* tile_targets.h - the target kinds and execution backends, one table each.
 *
 * The one home of these names: the compiler (tilec --backend), the runtime
 * (metadata `target.kind`, the `backend` argument of tile_kernel_load_*) and
 * the Python package (tile._runtime.TARGETS / BACKENDS, which
 * tile.compile(execution_backend=...) checks against) all read them here.
 * Plain C with no includes beyond libc, so the compiler can use it without
 * the runtime and the runtime without LLVM.
 */
#ifndef TILE_RUNTIME_TILE_TARGETS_H
#define TILE_RUNTIME_TILE_TARGETS_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Target kinds (metadata `target.kind`, tilec --target):
 * X(ID, NAME, DLPACK_DEVICE_TYPE). The device-type column names DLPack
 * enumerators; a user of it includes dlpack.h (tile_abi.h does). */
#define TILE_TARGETS(X)                                                        \
  X(CPU, "cpu", kDLCPU)                                                        \
  X(CUDA, "cuda", kDLCUDA)                                                     \
  X(HIP, "hip", kDLROCM)                                                       \
  X(METAL, "metal", kDLMetal)

/* clang-format off */
typedef enum tile_target_kind {
#define TILE_X(id, name, device) TILE_TARGET_##id,
  TILE_TARGETS(TILE_X)
#undef TILE_X
  TILE_TARGET_COUNT
} tile_target_kind;
/* clang-format on */

#define TILE_TARGET_BIT(id) (1u << TILE_TARGET_##id)
#define TILE_TARGETS_ALL ((1u << TILE_TARGET_COUNT) - 1u)

/* Flags of an execution backend. */
enum {
  /* tilec generates code for it (tilec --backend: native's host wrapper,
   * nvrtc's CUDA C++ section); the others are chosen when a bundle is
   * loaded. */
  TILE_BACKEND_COMPILED = 1u << 0,
  /* This release implements it. A backend without the flag is a known name
   * that loading rejects as not implemented yet. */
  TILE_BACKEND_IMPLEMENTED = 1u << 1
};

/* Execution backends: X(ID, NAME, TARGETS, FLAGS). TARGETS is the mask of
 * target kinds whose kernels it can run; "auto" picks one per kernel
 * (docs/runtime.md, "Backends"). */
#define TILE_BACKENDS(X)                                                       \
  X(AUTO, "auto", TILE_TARGETS_ALL, TILE_BACKEND_IMPLEMENTED)                  \
  X(FFI, "ffi",                                                                \
    TILE_TARGET_BIT(CPU) | TILE_TARGET_BIT(CUDA) | TILE_TARGET_BIT(HIP),       \
    TILE_BACKEND_COMPILED | TILE_BACKEND_IMPLEMENTED)                          \
  X(NATIVE, "native",                                                          \
    TILE_TARGET_BIT(CPU) | TILE_TARGET_BIT(CUDA) | TILE_TARGET_BIT(HIP),       \
    TILE_BACKEND_COMPILED | TILE_BACKEND_IMPLEMENTED)                          \
  X(NVRTC, "nvrtc", TILE_TARGET_BIT(CUDA),                                     \
    TILE_BACKEND_COMPILED | TILE_BACKEND_IMPLEMENTED)                          \
  X(METAL_TORCH, "metal-torch", TILE_TARGET_BIT(METAL),                       \
    TILE_BACKEND_COMPILED | TILE_BACKEND_IMPLEMENTED)

/* clang-format off */
typedef enum tile_backend {
#define TILE_X(id, name, targets, flags) TILE_BACKEND_##id,
  TILE_BACKENDS(TILE_X)
#undef TILE_X
  TILE_BACKEND_COUNT
} tile_backend;
/* clang-format on */

static inline const char *tile_target_name(tile_target_kind target) {
#define TILE_X(id, name, device)                                               \
  if (target == TILE_TARGET_##id)                                              \
    return name;
  TILE_TARGETS(TILE_X)
#undef TILE_X
  return NULL;
}

/* 1 and *out = the target named `name`, or 0 when there is none. */
static inline int tile_target_parse(const char *name, tile_target_kind *out) {
#define TILE_X(id, name_, device)                                              \
  if (strcmp(name, name_) == 0) {                                              \
    *out = TILE_TARGET_##id;                                                   \
    return 1;                                                                  \
  }
  TILE_TARGETS(TILE_X)
#undef TILE_X
  return 0;
}

/* One row of TILE_BACKENDS; name NULL for a value outside the table. */
typedef struct tile_backend_info {
  const char *name;
  uint32_t targets; /* mask of TILE_TARGET_BIT: the targets it can run */
  uint32_t flags;   /* TILE_BACKEND_COMPILED | TILE_BACKEND_IMPLEMENTED */
} tile_backend_info;

static inline tile_backend_info tile_backend_get(tile_backend backend) {
  tile_backend_info info = {NULL, 0, 0};
#define TILE_X(id, name_, targets_, flags_)                                    \
  if (backend == TILE_BACKEND_##id) {                                          \
    info.name = name_;                                                         \
    info.targets = (targets_);                                                 \
    info.flags = (flags_);                                                     \
  }
  TILE_BACKENDS(TILE_X)
#undef TILE_X
  return info;
}

static inline const char *tile_backend_name(tile_backend backend) {
  return tile_backend_get(backend).name;
}
static inline uint32_t tile_backend_targets(tile_backend backend) {
  return tile_backend_get(backend).targets;
}
static inline uint32_t tile_backend_flags(tile_backend backend) {
  return tile_backend_get(backend).flags;
}

/* 1 and *out = the backend named `name`, or 0 when there is none. */
static inline int tile_backend_parse(const char *name, tile_backend *out) {
#define TILE_X(id, name_, targets, flags)                                      \
  if (strcmp(name, name_) == 0) {                                              \
    *out = TILE_BACKEND_##id;                                                  \
    return 1;                                                                  \
  }
  TILE_BACKENDS(TILE_X)
#undef TILE_X
  return 0;
}

/* Whether `backend` can run kernels of `target`. */
static inline int tile_backend_runs(tile_backend backend,
                                    tile_target_kind target) {
  return (tile_backend_targets(backend) >> target) & 1u;
}

#ifdef __cplusplus
}
#endif

#endif /* TILE_RUNTIME_TILE_TARGETS_H */
