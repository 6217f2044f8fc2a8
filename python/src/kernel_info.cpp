//===- kernel_info.cpp - tile._runtime: the kernel's parsed view ----------===//
#include "kernel_info.h"

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tile_py {
namespace {

nb::tuple int64Tuple(const int64_t *values, int32_t n) {
  nb::list l;
  for (int32_t i = 0; i < n; ++i)
    l.append(nb::int_(values[i]));
  return nb::tuple(l);
}

} // namespace

const char *accessName(int32_t access) {
  switch (access) {
  case TILE_ACCESS_READ: return "read";
  case TILE_ACCESS_WRITE: return "write";
  case TILE_ACCESS_READWRITE: return "readwrite";
  }
  return "unknown";
}

nb::list params(tile_kernel_t k) {
  nb::list out;
  for (int32_t i = 0, n = tile_kernel_num_params(k); i < n; ++i) {
    tile_param_info p;
    tile_kernel_param(k, i, &p);
    int32_t inplace = 0;
    int32_t access = tile_kernel_param_access(k, i, &inplace);
    nb::dict d;
    d["name"] = p.name;
    d["kind"] = p.kind == TILE_PARAM_TENSOR ? "tensor" : "scalar";
    d["dtype"] = p.dtype;
    d["is_output"] = bool(p.is_output);
    d["in_out_idx"] = bool(p.in_out_idx);
    if (p.kind == TILE_PARAM_TENSOR) {
      d["access"] = accessName(access);
      d["written"] = (access & TILE_ACCESS_WRITE) != 0;
      d["inplace"] = bool(inplace);
      nb::list shape, dims;
      for (int32_t r = 0; r < p.rank; ++r) {
        if (p.shape[r] < 0)
          shape.append(nb::none());
        else
          shape.append(nb::int_(p.shape[r]));
        dims.append(nb::str(p.dims[r]));
      }
      d["shape"] = nb::tuple(shape);
      d["dims"] = nb::tuple(dims);
    }
    out.append(d);
  }
  return out;
}

nb::list symbols(tile_kernel_t k) {
  nb::list out;
  for (int32_t i = 0, n = tile_kernel_num_symbols(k); i < n; ++i)
    out.append(nb::str(tile_kernel_symbol(k, i)));
  return out;
}

nb::dict launchInfo(tile_kernel_t k) {
  tile_launch_info li;
  tile_kernel_launch_info(k, &li);
  nb::dict d;
  d["grid"] = nb::make_tuple(li.grid[0], li.grid[1], li.grid[2]);
  d["block"] = int64Tuple(li.block, 3);
  d["shared_bytes"] = nb::int_(li.shared_bytes);
  d["compiler"] = li.compiler;
  d["target_features"] = li.target_features;
  d["entry"] = tile_kernel_entry(k);
  return d;
}

nb::list variants(tile_kernel_t k) {
  nb::list out;
  for (int32_t i = 0, n = tile_kernel_num_variants(k); i < n; ++i) {
    tile_variant_info v;
    tile_kernel_variant(k, i, &v);
    nb::list maps;
    for (int32_t j = 0; j < v.num_tma; ++j) {
      const tile_tma_info &t = v.tma[j];
      nb::dict m;
      m["param"] = t.param;
      m["dtype"] = t.dtype;
      m["box"] = int64Tuple(t.box, t.rank);
      m["element_strides"] = int64Tuple(t.element_strides, t.rank);
      m["interleave"] = t.interleave;
      m["swizzle"] = t.swizzle;
      m["l2_promotion"] = t.l2_promotion;
      m["oob_fill"] = t.oob_fill;
      maps.append(m);
    }
    nb::dict d;
    d["kind"] = v.kind;
    d["chip"] = v.chip;
    d["kernel"] = v.kernel;
    d["block"] = int64Tuple(v.block, 3);
    d["shared_bytes"] = nb::int_(v.shared_bytes);
    d["grid"] = v.grid;
    d["max_tiles"] = nb::int_(v.max_tiles);
    d["schedule"] = v.schedule;
    d["tma"] = maps;
    tile_variant_rules r{};
    r.struct_size = sizeof(r);
    if (tile_kernel_variant_rules(k, i, &r) == TILE_STATUS_OK) {
      d["coarsen"] = int64Tuple(r.coarsen, 3);
      d["coarse_speedup"] = nb::int_(r.coarse_speedup);
      d["split"] = nb::int_(r.split);
      d["max_rows"] = nb::int_(r.max_rows);
      nb::list rows;
      for (int32_t j = 0; j < r.num_row_params; ++j)
        rows.append(r.row_params[j]);
      d["row_params"] = rows;
      d["split_k"] =
          r.split_k_param < 0
              ? nb::object(nb::none())
              : nb::object(nb::make_tuple(r.split_k_param, r.split_k_dim,
                                          r.split_k_block));
      d["workspace_bytes"] = nb::int_(r.workspace_bytes);
      d["pack_kernel"] = r.pack_kernel;
    }
    out.append(d);
  }
  return out;
}

nb::list sections(tile_kernel_t k) {
  nb::list out;
  for (int32_t i = 0, n = tile_kernel_num_sections(k); i < n; ++i)
    out.append(nb::str(tile_kernel_section_name(k, i)));
  return out;
}

nb::object section(tile_kernel_t k, const char *name) {
  const void *data;
  size_t size;
  if (tile_kernel_section(k, name, &data, &size) != TILE_STATUS_OK)
    return nb::none();
  return nb::bytes(static_cast<const char *>(data), size);
}

void registerAbiVocabulary(nb::module_ &m) {
  nb::dict dtypes;
#define TILE_X(id, name, code, bits, lanes, ctype)                             \
  dtypes[name] = nb::make_tuple(int(code), bits, lanes);
  TILE_DTYPES(TILE_X)
#undef TILE_X
  m.attr("DTYPES") = dtypes;
  nb::list targets;
  for (int t = 0; t < TILE_TARGET_COUNT; ++t)
    targets.append(tile_target_name(static_cast<tile_target_kind>(t)));
  m.attr("TARGETS") = nb::tuple(targets);
  nb::dict backends;
  for (int i = 0; i < TILE_BACKEND_COUNT; ++i) {
    auto b = static_cast<tile_backend>(i);
    nb::list runs;
    for (int t = 0; t < TILE_TARGET_COUNT; ++t)
      if (tile_backend_runs(b, static_cast<tile_target_kind>(t)))
        runs.append(targets[t]);
    nb::dict info;
    info["targets"] = nb::tuple(runs);
    info["compiled"] = bool(tile_backend_flags(b) & TILE_BACKEND_COMPILED);
    info["implemented"] =
        bool(tile_backend_flags(b) & TILE_BACKEND_IMPLEMENTED);
    backends[tile_backend_name(b)] = info;
  }
  m.attr("BACKENDS") = backends;
}

} // namespace tile_py
