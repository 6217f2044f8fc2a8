//===- kernel_info.h - tile._runtime: the kernel's parsed view ---*- C++ -*-===//
//
// What the runtime parsed from a bundle's metadata (tile_runtime.h info
// queries), as Python objects: the package never parses the metadata JSON
// itself.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_PYTHON_KERNEL_INFO_H
#define TILE_PYTHON_KERNEL_INFO_H

#include <nanobind/nanobind.h>

#include "tile/Runtime/tile_runtime.h"

namespace tile_py {

/// The name of a tile_access value ("read", "write", "readwrite").
const char *accessName(int32_t access);

/// [{name, kind, dtype, is_output, in_out_idx, access, inplace, written,
///   shape, dims}] (shape/dims for tensors; None for a dynamic dim).
nanobind::list params(tile_kernel_t k);

/// [symbol, ...]
nanobind::list symbols(tile_kernel_t k);

/// {"grid": (x, y, z) expression strings, "block": (x, y, z),
///  "shared_bytes": n, "compiler": str, "target_features": str}
nanobind::dict launchInfo(tile_kernel_t k);

/// [{kind, chip, kernel, block, shared_bytes, grid, max_tiles, schedule,
///   tma: [{param, dtype, box, element_strides, interleave, swizzle,
///          l2_promotion, oob_fill}]}]
nanobind::list variants(tile_kernel_t k);

/// The ABI vocabulary as module attributes, from its one home:
/// DTYPES {name: (DLPack code, bits, lanes)} (tile_abi.h), TARGETS (kinds)
/// and BACKENDS {name: {"targets", "compiled", "implemented"}}
/// (tile_targets.h), in table order.
void registerAbiVocabulary(nanobind::module_ &m);

/// The bundle's section names, and a section's bytes (None if absent).
nanobind::list sections(tile_kernel_t k);
nanobind::object section(tile_kernel_t k, const char *name);

} // namespace tile_py

#endif // TILE_PYTHON_KERNEL_INFO_H
