//===- Api.cpp - The C API (tile_runtime.h) -------------------------------===//
//
// Thin: argument validation and exception containment around the internals.
// No C++ exception ever crosses this boundary.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

using namespace tile::rt;

namespace {

template <typename F> tile_status guarded(F &&f) {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    return fail(TILE_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return fail(TILE_STATUS_INTERNAL, std::string("internal error: ") +
                                          e.what());
  } catch (...) {
    return fail(TILE_STATUS_INTERNAL, "internal error");
  }
}

tile_status readFile(const char *path, std::string &out) {
  FILE *f = std::fopen(path, "rb");
  if (!f)
    return fail(TILE_STATUS_BUNDLE_ERROR, std::string("cannot open bundle '") +
                                              path + "': " +
                                              std::strerror(errno));
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    out.append(buf, n);
  bool err = std::ferror(f);
  std::fclose(f);
  if (err)
    return fail(TILE_STATUS_BUNDLE_ERROR,
                std::string("cannot read bundle '") + path + "'");
  return TILE_STATUS_OK;
}

const char *safe(const std::string &s) { return s.c_str(); }

} // namespace

extern "C" {

const char *tile_last_error(void) { return lastError(); }

const char *tile_status_name(tile_status status) {
  // C callers may pass any int: read it as one, never as the enum (a value
  // outside the enum's range is UB to load as tile_status in C++).
  int value;
  std::memcpy(&value, &status, sizeof value);
  switch (value) {
#define TILE_X(id, v, meaning)                                                 \
  case v:                                                                      \
    return #id;
    TILE_STATUSES(TILE_X)
#undef TILE_X
  }
  return "UNKNOWN_STATUS";
}

const char *tile_runtime_version(void) { return "0.1.0"; }

tile_status tile_kernel_load_file(const char *path, const char *backend,
                                  tile_kernel_t *out) {
  return guarded([&] {
    if (out)
      *out = nullptr;
    if (!path)
      return fail(TILE_STATUS_INVALID_ARGUMENT, "bundle path is NULL");
    std::string bytes;
    if (tile_status st = readFile(path, bytes))
      return st;
    return loadKernel(std::move(bytes), backend, out);
  });
}

tile_status tile_kernel_load_memory(const void *data, size_t size,
                                    const char *backend, tile_kernel_t *out) {
  return guarded([&] {
    if (out)
      *out = nullptr;
    if (!data && size)
      return fail(TILE_STATUS_INVALID_ARGUMENT, "bundle data is NULL");
    std::string bytes(static_cast<const char *>(data ? data : ""), size);
    return loadKernel(std::move(bytes), backend, out);
  });
}

tile_status tile_kernel_inspect_file(const char *path, tile_kernel_t *out) {
  return guarded([&] {
    if (out)
      *out = nullptr;
    if (!path)
      return fail(TILE_STATUS_INVALID_ARGUMENT, "bundle path is NULL");
    std::string bytes;
    if (tile_status st = readFile(path, bytes))
      return st;
    return inspectKernel(std::move(bytes), out);
  });
}

tile_status tile_kernel_inspect_memory(const void *data, size_t size,
                                       tile_kernel_t *out) {
  return guarded([&] {
    if (out)
      *out = nullptr;
    if (!data && size)
      return fail(TILE_STATUS_INVALID_ARGUMENT, "bundle data is NULL");
    std::string bytes(static_cast<const char *>(data ? data : ""), size);
    return inspectKernel(std::move(bytes), out);
  });
}

void tile_kernel_release(tile_kernel_t kernel) { delete kernel; }

const char *tile_kernel_name(tile_kernel_t k) {
  return k ? safe(k->plan.name) : "";
}
const char *tile_kernel_target_kind(tile_kernel_t k) {
  return k ? safe(k->plan.targetKindName) : "";
}
const char *tile_kernel_target_chip(tile_kernel_t k) {
  return k ? safe(k->plan.targetChip) : "";
}
const char *tile_kernel_backend(tile_kernel_t k) {
  if (!k)
    return "";
  switch (k->backend) {
  case Backend::Ffi: return "ffi";
  case Backend::Native: return "native";
  case Backend::Nvrtc: return "nvrtc";
  case Backend::None: return "none";
  }
  return "";
}
const char *tile_kernel_metadata(tile_kernel_t k) {
  return k ? safe(k->plan.metadataText) : "";
}

int32_t tile_kernel_num_params(tile_kernel_t k) {
  return k ? static_cast<int32_t>(k->plan.params.size()) : -1;
}

tile_status tile_kernel_param(tile_kernel_t k, int32_t index,
                              tile_param_info *info) {
  if (!k || !info)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "kernel or info is NULL");
  if (index < 0 || size_t(index) >= k->plan.params.size())
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                "parameter index " + str(index) + " is out of range (kernel '" +
                    k->plan.name + "' has " + str(k->plan.params.size()) +
                    ")");
  const ParamPlan &p = k->plan.params[index];
  info->name = p.name.c_str();
  info->kind = p.isTensor ? TILE_PARAM_TENSOR : TILE_PARAM_SCALAR;
  info->is_output = p.output;
  info->in_out_idx = p.outSlot >= 0;
  info->rank = p.rank;
  info->dtype = p.dtypeName.c_str();
  info->dl_dtype = p.dtype;
  info->shape = p.rank ? p.shape.data() : nullptr;
  info->dims = p.rank ? p.dimPtrs.data() : nullptr;
  return TILE_STATUS_OK;
}

int32_t tile_kernel_param_access(tile_kernel_t k, int32_t index,
                                 int32_t *inplace) {
  if (inplace)
    *inplace = 0;
  if (!k || index < 0 || size_t(index) >= k->plan.params.size())
    return -1;
  const ParamPlan &p = k->plan.params[size_t(index)];
  if (inplace)
    *inplace = p.inplace;
  return p.access;
}

int32_t tile_kernel_num_symbols(tile_kernel_t k) {
  return k ? static_cast<int32_t>(k->plan.symbols.size()) : -1;
}

const char *tile_kernel_symbol(tile_kernel_t k, int32_t index) {
  if (!k || index < 0 || size_t(index) >= k->plan.symbols.size())
    return nullptr;
  return k->plan.symbols[size_t(index)].c_str();
}

tile_status tile_kernel_launch_info(tile_kernel_t k, tile_launch_info *info) {
  if (!k || !info)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "kernel or info is NULL");
  const KernelPlan &plan = k->plan;
  for (int i = 0; i < 3; ++i) {
    info->grid[i] = plan.gridText[i].c_str();
    info->block[i] = plan.block[i];
  }
  info->shared_bytes = plan.sharedBytes;
  info->compiler = plan.compiler.c_str();
  info->target_features = plan.targetFeatures.c_str();
  return TILE_STATUS_OK;
}

tile_status tile_kernel_grid(tile_kernel_t k, const int64_t *symbols,
                             int32_t nsymbols, const int64_t *scalars,
                             int32_t nscalars, int64_t grid[3]) {
  if (!k || !grid || (nsymbols && !symbols) || (nscalars && !scalars))
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                "kernel, grid, symbols or scalars is NULL");
  const KernelPlan &plan = k->plan;
  if (size_t(nsymbols) != plan.symbols.size() ||
      nscalars != static_cast<int32_t>(plan.params.size()))
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                "tile_kernel_grid: expected " +
                    std::to_string(plan.symbols.size()) + " symbols and " +
                    std::to_string(plan.params.size()) + " scalars, got " +
                    std::to_string(nsymbols) + " and " +
                    std::to_string(nscalars));
  for (int i = 0; i < 3; ++i) {
    int64_t unbound = -1;
    if (!plan.grid[i].eval(symbols, scalars, grid[i], unbound))
      return fail(TILE_STATUS_INVALID_ARGUMENT,
                  "tile_kernel_grid: symbol '" +
                      plan.symbols[size_t(unbound)] + "' has no value");
  }
  return TILE_STATUS_OK;
}

const char *tile_kernel_entry(tile_kernel_t k) {
  return k ? k->plan.entryKernel.c_str() : nullptr;
}

int32_t tile_kernel_num_variants(tile_kernel_t k) {
  return k ? static_cast<int32_t>(k->plan.variants.size()) : -1;
}

/// Variant `index` of `k`, or null after setting the last error.
static const VariantPlan *variantAt(tile_kernel_t k, int32_t index) {
  if (index < 0 || size_t(index) >= k->plan.variants.size()) {
    fail(TILE_STATUS_INVALID_ARGUMENT,
         "variant index " + str(index) + " is out of range (kernel '" +
             k->plan.name + "' has " + str(k->plan.variants.size()) + ")");
    return nullptr;
  }
  return &k->plan.variants[size_t(index)];
}

tile_status tile_kernel_variant(tile_kernel_t k, int32_t index,
                                tile_variant_info *info) {
  if (!k || !info)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "kernel or info is NULL");
  const VariantPlan *vp = variantAt(k, index);
  if (!vp)
    return TILE_STATUS_INVALID_ARGUMENT;
  const VariantPlan &v = *vp;
  info->kind = v.kind.c_str();
  info->chip = v.chip.c_str();
  info->kernel = v.kernel.c_str();
  for (int i = 0; i < 3; ++i)
    info->block[i] = v.block[i];
  info->shared_bytes = v.sharedBytes;
  info->grid = v.gridSms ? "sms" : "launch";
  info->max_tiles = v.maxTiles;
  info->schedule = v.schedule.c_str();
  info->num_tma = static_cast<int32_t>(v.tmaInfo.size());
  info->tma = v.tmaInfo.data();
  return TILE_STATUS_OK;
}

tile_status tile_kernel_variant_rules(tile_kernel_t k, int32_t index,
                                      tile_variant_rules *rules) {
  if (!k || !rules)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "kernel or rules is NULL");
  if (rules->struct_size < sizeof(rules->struct_size))
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                "rules->struct_size is " + str(rules->struct_size) +
                    ": set it to sizeof(tile_variant_rules)");
  const VariantPlan *vp = variantAt(k, index);
  if (!vp)
    return TILE_STATUS_INVALID_ARGUMENT;
  const VariantPlan &v = *vp;
  tile_variant_rules all{};
  for (int i = 0; i < 3; ++i)
    all.coarsen[i] = v.coarsen[i];
  all.coarse_speedup = v.coarseSpeedup;
  all.split = v.split;
  all.max_rows = v.maxRows;
  all.num_row_params = static_cast<int32_t>(v.rowParams.size());
  all.row_params = v.rowParams.data();
  all.split_k_param = v.kParam;
  all.split_k_dim = v.kDim;
  all.split_k_block = v.blockK;
  all.workspace_bytes = v.workspaceBytes;
  all.slice_bytes = v.sliceBytes;
  all.pack_kernel = v.packKernel.c_str();
  // Fields the caller's (possibly older) struct has room for, in order.
  all.struct_size = std::min(rules->struct_size, sizeof(all));
  std::memcpy(rules, &all, all.struct_size);
  return TILE_STATUS_OK;
}

int32_t tile_kernel_num_outputs(tile_kernel_t k) {
  return k ? static_cast<int32_t>(k->plan.outIdx.size()) : -1;
}

int32_t tile_kernel_output_param(tile_kernel_t k, int32_t output) {
  if (!k || output < 0 || size_t(output) >= k->plan.outIdx.size())
    return -1;
  return k->plan.outIdx[output];
}

int32_t tile_kernel_num_sections(tile_kernel_t k) {
  return k ? static_cast<int32_t>(k->bundle.sections.size()) : -1;
}

const char *tile_kernel_section_name(tile_kernel_t k, int32_t index) {
  if (!k || index < 0 || size_t(index) >= k->bundle.sections.size())
    return nullptr;
  // Names are NUL-padded inside the owned bundle bytes, so the view's data
  // is already a C string.
  return k->bundle.sections[index].name.data();
}

tile_status tile_kernel_section(tile_kernel_t k, const char *name,
                                const void **data, size_t *size) {
  if (!k || !name || !data || !size)
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                "kernel, name, data and size must not be NULL");
  const tile::bundle::SectionView *s = k->bundle.find(name);
  if (!s)
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                "kernel '" + k->plan.name + "' has no section '" + name + "'");
  *data = s->data;
  *size = s->size;
  return TILE_STATUS_OK;
}

tile_status tile_set_allocator(tile_kernel_t k, const tile_allocator *a) {
  return guarded([&] {
    if (!k)
      return fail(TILE_STATUS_INVALID_ARGUMENT, "kernel is NULL");
    if (a && !a->alloc)
      return fail(TILE_STATUS_INVALID_ARGUMENT, "allocator has no alloc");
    const tile_allocator *installed = nullptr;
    if (a) {
      std::lock_guard<std::mutex> lock(k->allocatorsMu);
      k->allocators.push_back(std::make_unique<tile_allocator>(*a));
      installed = k->allocators.back().get();
    }
    k->allocator.store(installed, std::memory_order_release);
    return TILE_STATUS_OK;
  });
}

void tile_set_default_allocator(const tile_allocator *a) {
  // Every copy ever installed is kept (reachable, for leak checkers) and
  // never freed: a launch on another thread may still be using the previous
  // one, and there are only ever a handful.
  static std::mutex mu;
  static auto *installed = new std::vector<std::unique_ptr<tile_allocator>>();
  const tile_allocator *copy = nullptr;
  if (a && a->alloc) {
    try {
      std::lock_guard<std::mutex> lock(mu);
      installed->push_back(std::make_unique<tile_allocator>(*a));
      copy = installed->back().get();
    } catch (...) {
      return; // out of memory: keep the current allocator
    }
  }
  globalAllocator().store(copy, std::memory_order_release);
}

tile_status tile_kernel_launch(tile_kernel_t k, const tile_arg *args,
                               int32_t nargs, void *stream,
                               tile_outputs *outs) {
  if (!k)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "kernel is NULL");
  if (k->backend == Backend::None)
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "kernel '" + k->plan.name +
                    "' was opened for inspection only: no device code is "
                    "loaded, so it cannot run (load it for its device to "
                    "launch it)");
  return guarded([&] { return launchKernel(*k, args, nargs, stream, outs); });
}

} // extern "C"
