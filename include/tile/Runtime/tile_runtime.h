/* tile_runtime.h - C API of the tile kernel runtime.
 *
 * Loads a kernel bundle (docs/bundle.md), checks launch arguments against the
 * kernel's metadata and runs it. No LLVM/MLIR dependency. See docs/runtime.md.
 *
 * Error model: every function returning tile_status leaves, on failure, a
 * human-readable message in a thread-local buffer read by tile_last_error().
 * The message is only meaningful right after a failing call on the same
 * thread (success does not clear it, to keep the launch path cheap).
 *
 * Threading: a loaded kernel is immutable apart from its allocator slot; any
 * number of threads may launch the same handle concurrently.
 */
#ifndef TILE_RUNTIME_TILE_RUNTIME_H
#define TILE_RUNTIME_TILE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "tile/Runtime/tile_abi.h"
#include "tile/Runtime/tile_targets.h"

#if defined(_WIN32)
#define TILE_RT_API
#else
#define TILE_RT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tile_kernel *tile_kernel_t;

/* ---- errors and version ------------------------------------------------- */

/* The message of the last failed call on this thread ("" if none). */
TILE_RT_API const char *tile_last_error(void);
/* "OK", "INVALID_ARGUMENT", ... */
TILE_RT_API const char *tile_status_name(tile_status status);
/* Runtime version string, e.g. "0.1.0". */
TILE_RT_API const char *tile_runtime_version(void);

/* ---- loading ------------------------------------------------------------ */

/* backend: a name of TILE_BACKENDS (tile_targets.h): "auto" (or NULL),
 * "ffi", "native", "nvrtc", "metal-torch". Unknown names give
 * TILE_STATUS_INVALID_ARGUMENT; known names that the bundle's target cannot
 * use, or that this build does not implement, give
 * TILE_STATUS_BACKEND_UNAVAILABLE. */
TILE_RT_API tile_status tile_kernel_load_file(const char *path,
                                              const char *backend,
                                              tile_kernel_t *out);
/* The bytes are copied; the caller may free them after the call. */
TILE_RT_API tile_status tile_kernel_load_memory(const void *data, size_t size,
                                                const char *backend,
                                                tile_kernel_t *out);
/* Opens a bundle for inspection only: the bundle and its metadata are checked
 * and parsed exactly as by tile_kernel_load_*, but no device code is loaded,
 * so any bundle opens on any machine (a CUDA bundle without a CUDA driver).
 * Information, sections and tile_kernel_describe work; tile_kernel_backend
 * is "none" and tile_kernel_launch fails with
 * TILE_STATUS_BACKEND_UNAVAILABLE. Release with tile_kernel_release. */
TILE_RT_API tile_status tile_kernel_inspect_file(const char *path,
                                                 tile_kernel_t *out);
TILE_RT_API tile_status tile_kernel_inspect_memory(const void *data,
                                                   size_t size,
                                                   tile_kernel_t *out);
/* NULL is ignored. Must not race with launches of the same handle. */
TILE_RT_API void tile_kernel_release(tile_kernel_t kernel);

/* ---- information -------------------------------------------------------- */
/* Returned strings live as long as the kernel handle. */

TILE_RT_API const char *tile_kernel_name(tile_kernel_t kernel);
TILE_RT_API const char *tile_kernel_target_kind(tile_kernel_t kernel); /* "cpu" */
TILE_RT_API const char *tile_kernel_target_chip(tile_kernel_t kernel);
/* The backend actually in use: "ffi" or "native" (never "auto"). */
TILE_RT_API const char *tile_kernel_backend(tile_kernel_t kernel);
/* The metadata JSON text exactly as stored in the bundle (NUL-terminated). */
TILE_RT_API const char *tile_kernel_metadata(tile_kernel_t kernel);

TILE_RT_API int32_t tile_kernel_num_params(tile_kernel_t kernel);

typedef enum tile_param_kind {
  TILE_PARAM_TENSOR = 0,
  TILE_PARAM_SCALAR = 1
} tile_param_kind;

typedef struct tile_param_info {
  const char *name;
  int32_t kind;            /* tile_param_kind */
  int32_t is_output;       /* metadata "output" (tile.output) */
  int32_t in_out_idx;      /* listed in out_idx: may be omitted at launch */
  int32_t rank;            /* 0 for scalars */
  const char *dtype;       /* "float16", "int32", ... */
  DLDataType dl_dtype;     /* the DLPack type tensors must have */
  const int64_t *shape;    /* rank entries, -1 = dynamic (NULL if rank 0) */
  const char *const *dims; /* rank symbol names (NULL if rank 0) */
} tile_param_info;

TILE_RT_API tile_status tile_kernel_param(tile_kernel_t kernel, int32_t index,
                                          tile_param_info *info);

/* What a kernel does to a tensor parameter's memory (metadata "access",
 * computed by the compiler). A launch is refused when a written parameter's
 * memory overlaps another parameter's, unless the kernel declared the
 * written one inplace and both are exactly the same memory. */
typedef enum tile_access {
  TILE_ACCESS_READ = 1,
  TILE_ACCESS_WRITE = 2,
  TILE_ACCESS_READWRITE = 3
} tile_access;

/* The tile_access of parameter `index` (TILE_ACCESS_READ for scalars), or
 * -1 for a NULL kernel or a bad index. *inplace, when not NULL, receives 1
 * if the kernel allows the parameter to be the same memory as another
 * parameter (metadata "inplace"), else 0. */
TILE_RT_API int32_t tile_kernel_param_access(tile_kernel_t kernel,
                                             int32_t index, int32_t *inplace);

/* Symbols: the distinct dim names of the tensor parameters, in order. */
TILE_RT_API int32_t tile_kernel_num_symbols(tile_kernel_t kernel);
TILE_RT_API const char *tile_kernel_symbol(tile_kernel_t kernel,
                                           int32_t index);

/* The launch geometry from the metadata. */
typedef struct tile_launch_info {
  /* Grid extents x, y, z as expressions over the symbols and the integer
   * scalar parameters, in the compiler's syntax: `ceildivu("M", 128)`,
   * `scalar(3)` (the value of parameter 3), constants. */
  const char *grid[3];
  int64_t block[3];     /* threads per block */
  int64_t shared_bytes; /* dynamic shared memory of entry.kernel */
  const char *compiler; /* metadata "compiler" ("" if absent) */
  const char *target_features;
} tile_launch_info;

TILE_RT_API tile_status tile_kernel_launch_info(tile_kernel_t kernel,
                                                tile_launch_info *info);

/* The grid of a launch from the values of the symbols (tile_kernel_symbol
 * order; -1 = unbound) and of the parameters (one entry per parameter; the
 * integer scalars' values, the others ignored), as the runtime's own
 * launches compute it. For launchers outside the C runtime (the Python
 * package's metal-torch). TILE_STATUS_INVALID_ARGUMENT names an unbound
 * symbol or a count mismatch. */
TILE_RT_API tile_status tile_kernel_grid(tile_kernel_t kernel,
                                         const int64_t *symbols,
                                         int32_t nsymbols,
                                         const int64_t *scalars,
                                         int32_t nscalars, int64_t grid[3]);
/* The device entry point of the metadata (`entry.kernel`, "" if none): the
 * kernel function of the device code. */
TILE_RT_API const char *tile_kernel_entry(tile_kernel_t kernel);

/* Hardware-specific variants (docs/bundle.md, "Kernel variants") of the
 * kinds this runtime knows, in metadata order; whether one is used is
 * decided per device and launch. */
typedef struct tile_tma_info {
  int32_t param;                  /* the tensor parameter it maps */
  int32_t rank;
  const char *dtype;
  const int64_t *box;             /* rank entries, innermost first */
  const int64_t *element_strides; /* rank entries */
  const char *interleave;         /* "none", "16B", "32B" */
  const char *swizzle;            /* "none", "32B", "64B", "128B" */
  const char *l2_promotion;       /* "none", "64B", "128B", "256B" */
  const char *oob_fill;           /* "zero", "nan" */
} tile_tma_info;

typedef struct tile_variant_info {
  const char *kind;   /* "sm90_tma_wgmma" */
  const char *chip;   /* "sm_90a" */
  const char *kernel; /* its entry in the device code */
  int64_t block[3];
  int64_t shared_bytes;
  const char *grid;     /* "launch" or "sms" (persistent) */
  int64_t max_tiles;    /* used only for launches of at most this many
                           blocks; 0 = any */
  const char *schedule; /* informational, "" if none */
  int32_t num_tma;
  const tile_tma_info *tma;
} tile_variant_info;

TILE_RT_API int32_t tile_kernel_num_variants(tile_kernel_t kernel);
TILE_RT_API tile_status tile_kernel_variant(tile_kernel_t kernel,
                                            int32_t index,
                                            tile_variant_info *info);

/* The rules by which the runtime picks variant `index` per launch (docs/
 * bundle.md, "Kernel variants"; runtime.md, "Kernel variants"), beyond
 * tile_variant_info. Extensible: set `struct_size` to
 * sizeof(tile_variant_rules) before the call; the runtime writes only the
 * leading fields that fit in it (a caller built against an older header
 * gets the fields it knows) and sets `struct_size` to the bytes it wrote.
 * TILE_STATUS_INVALID_ARGUMENT for a NULL kernel or rules, an index out of
 * range, or a struct_size smaller than the struct_size field itself. */
typedef struct tile_variant_rules {
  size_t struct_size;
  int64_t coarsen[3];     /* launch blocks per variant tile along x, y, z;
                             1, 1, 1: the launch's own tiles */
  int64_t coarse_speedup; /* with coarsen: the compiler's estimate in percent
                             of how much faster a block runs in a coarse
                             tile; 0: the runtime's default */
  int64_t split;          /* CTA tiles per launch block (1: none) */
  int64_t max_rows;       /* used only for launches whose row params have at
                             most this many rows (dim 0); 0 = any */
  int32_t num_row_params;
  const int32_t *row_params;
  int32_t split_k_param;  /* split-K (K-slices chosen per launch): K is dim
                             split_k_dim of this tensor param; -1: none */
  int32_t split_k_dim;
  int64_t split_k_block;  /* K per K tile */
  int64_t workspace_bytes; /* fixed workspace (0: none) */
  int64_t slice_bytes;    /* split-K workspace per tile and slice */
  const char *pack_kernel; /* the repack kernel for operands TMA cannot
                              describe; "" if none */
} tile_variant_rules;

TILE_RT_API tile_status tile_kernel_variant_rules(tile_kernel_t kernel,
                                                  int32_t index,
                                                  tile_variant_rules *rules);

/* out_idx: the parameters the runtime allocates when they are omitted. */
TILE_RT_API int32_t tile_kernel_num_outputs(tile_kernel_t kernel);
TILE_RT_API int32_t tile_kernel_output_param(tile_kernel_t kernel,
                                             int32_t output);

/* Bundle sections ("mlir", "llvm", "host.so", ...). */
TILE_RT_API int32_t tile_kernel_num_sections(tile_kernel_t kernel);
TILE_RT_API const char *tile_kernel_section_name(tile_kernel_t kernel,
                                                 int32_t index);
/* TILE_STATUS_INVALID_ARGUMENT if there is no such section. The bytes live
 * as long as the kernel handle. */
TILE_RT_API tile_status tile_kernel_section(tile_kernel_t kernel,
                                            const char *name,
                                            const void **data, size_t *size);

/* The kernel as text, as `tilec --info` and `tile-run --info` print it:
 * name, target, backend, launch shape, parameters, sections (with sizes;
 * text sections are marked). snprintf-style: writes at most `capacity` bytes
 * including a NUL into `buffer` (NULL with capacity 0 to measure) and
 * returns the full length without the NUL. */
TILE_RT_API size_t tile_kernel_describe(tile_kernel_t kernel, char *buffer,
                                        size_t capacity);

/* ---- allocation --------------------------------------------------------- */

/* Allocates an output tensor: row-major contiguous, `ndim` dims `shape`,
 * `dtype`, on `device`. Returns NULL on failure. The runtime validates the
 * result (shape, dtype, device, contiguity, data) before using it; the
 * caller of tile_kernel_launch frees it through its deleter. */
typedef struct tile_allocator {
  void *ctx;
  DLManagedTensor *(*alloc)(void *ctx, DLDevice device, DLDataType dtype,
                            int32_t ndim, const int64_t *shape, void *stream);
} tile_allocator;

/* Per-kernel allocator (copied; NULL restores the global one). Safe to call
 * while other threads launch: each launch uses either the old or the new
 * allocator. */
TILE_RT_API tile_status tile_set_allocator(tile_kernel_t kernel,
                                           const tile_allocator *allocator);
/* Process-wide allocator used by kernels without their own (copied; NULL
 * restores the built-in one: 64-byte aligned host memory for CPU). */
TILE_RT_API void tile_set_default_allocator(const tile_allocator *allocator);

/* ---- launching ---------------------------------------------------------- */

typedef enum tile_arg_kind {
  TILE_ARG_NONE = 0,   /* omitted output (only for out_idx params) */
  TILE_ARG_TENSOR = 1, /* v.tensor */
  TILE_ARG_INT = 2,    /* v.i */
  TILE_ARG_FLOAT = 3   /* v.f */
} tile_arg_kind;

typedef struct tile_arg {
  int32_t kind; /* tile_arg_kind */
  int32_t reserved;
  union {
    DLTensor *tensor;
    int64_t i;
    double f;
  } v;
} tile_arg;

/* Where omitted outputs are returned: tensors[j] receives the output of
 * out_idx[j] (NULL if the caller passed that output itself). */
typedef struct tile_outputs {
  DLManagedTensor **tensors; /* caller-owned array of `capacity` entries */
  int32_t capacity;
  int32_t count; /* set by the launch: the number of out_idx entries */
} tile_outputs;

/* Runs the kernel. `args` holds either one entry per parameter, or one per
 * parameter not in out_idx (then every output is omitted). Omitted outputs
 * are allocated and returned in `outs` (required when any is omitted). The
 * call blocks until the kernel has finished on CPU; `stream` is the
 * CUDA/HIP stream for GPU targets (ignored on CPU). On failure nothing was
 * launched and no output is returned. */
TILE_RT_API tile_status tile_kernel_launch(tile_kernel_t kernel,
                                           const tile_arg *args, int32_t nargs,
                                           void *stream, tile_outputs *outs);

/* ---- device memory and timing (C programs without a framework) --------- */
/* Plain buffers and timers on `device` for programs that have no framework
 * to allocate and time with (tile-run, C clients): kDLCPU is host memory and
 * the steady clock; kDLCUDA goes through the runtime's CUDA driver layer
 * (libcuda loaded at run time) in the device's primary context, which each
 * call makes current for itself, and CUDA events. Other device types give
 * TILE_STATUS_INVALID_ARGUMENT; no driver gives TILE_STATUS_NO_DEVICE. */
TILE_RT_API tile_status tile_device_alloc(DLDevice device, size_t bytes,
                                          void **ptr);
/* NULL is ignored. */
TILE_RT_API tile_status tile_device_free(DLDevice device, void *ptr);
/* Blocking copies between host memory and `device`. */
TILE_RT_API tile_status tile_device_copy_to_device(DLDevice device, void *dst,
                                                   const void *src,
                                                   size_t bytes);
TILE_RT_API tile_status tile_device_copy_to_host(DLDevice device, void *dst,
                                                 const void *src,
                                                 size_t bytes);

typedef struct tile_timer *tile_timer_t;
TILE_RT_API tile_status tile_timer_create(DLDevice device, tile_timer_t *out);
/* Marks the start on `stream` (NULL: the default stream). */
TILE_RT_API tile_status tile_timer_start(tile_timer_t timer, void *stream);
/* Marks the end on `stream`, waits for it and returns the microseconds
 * between the marks on the device's clock. A failure of the timed work on
 * the device (a kernel fault) surfaces here: TILE_STATUS_LAUNCH_FAILED. */
TILE_RT_API tile_status tile_timer_stop(tile_timer_t timer, void *stream,
                                        double *microseconds);
/* NULL is ignored. */
TILE_RT_API void tile_timer_release(tile_timer_t timer);

/* Convenience constructors. */
static inline tile_arg tile_arg_tensor(DLTensor *t) {
  tile_arg a;
  a.kind = TILE_ARG_TENSOR;
  a.reserved = 0;
  a.v.tensor = t;
  return a;
}
static inline tile_arg tile_arg_int(int64_t i) {
  tile_arg a;
  a.kind = TILE_ARG_INT;
  a.reserved = 0;
  a.v.i = i;
  return a;
}
static inline tile_arg tile_arg_float(double f) {
  tile_arg a;
  a.kind = TILE_ARG_FLOAT;
  a.reserved = 0;
  a.v.f = f;
  return a;
}
static inline tile_arg tile_arg_none(void) {
  tile_arg a;
  a.kind = TILE_ARG_NONE;
  a.reserved = 0;
  a.v.i = 0;
  return a;
}

#ifdef __cplusplus
}
#endif

#endif /* TILE_RUNTIME_TILE_RUNTIME_H */
