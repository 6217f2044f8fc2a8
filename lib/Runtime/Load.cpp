//===- Load.cpp - Bundle loading and backend selection --------------------===//
#include "CodeCheck.h"
#include "Kernel.h"

#include "tile/Runtime/tile_targets.h"

#include <cstring>

namespace tile::rt {
namespace {

/// "auto, ffi, native, ...": the backends of TILE_BACKENDS that can run
/// `target`'s kernels, or all of them for TILE_TARGET_COUNT.
std::string backendList(tile_target_kind target) {
  std::string list;
  for (int i = 0; i < TILE_BACKEND_COUNT; ++i) {
    auto b = static_cast<tile_backend>(i);
    if (target != TILE_TARGET_COUNT && !tile_backend_runs(b, target))
      continue;
    list += (list.empty() ? "" : ", ") + std::string(tile_backend_name(b));
  }
  return list;
}

tile_status selectBackend(tile_kernel &k, tile_backend requested) {
  const KernelPlan &plan = k.plan;
  const char *requestedName = tile_backend_name(requested);
  auto target = static_cast<tile_target_kind>(plan.target);
  if (!tile_backend_runs(requested, target))
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                std::string("backend '") + requestedName +
                    "' is not available for target '" + plan.targetKindName +
                    "' (available: " + backendList(target) + ")");
  if (plan.target == TargetKind::Metal)
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "kernel '" + plan.name + "' targets 'metal': it runs through "
                "the 'metal-torch' backend of the Python package, not the C "
                "runtime");
  if (!(tile_backend_flags(requested) & TILE_BACKEND_IMPLEMENTED))
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                std::string("backend '") + requestedName +
                    "' is not implemented in this runtime build");

  if (tile_status st = loadDeviceModule(plan, k.bundle, requested, k.module))
    return st;
  if (requested == TILE_BACKEND_NVRTC) {
    // Launches as ffi does (metadata checks, out_idx, streams); only the
    // device code differs (Cuda/Nvrtc.h).
    k.backend = Backend::Nvrtc;
    return TILE_STATUS_OK;
  }

  // auto on CPU prefers native: the compiled wrapper checks arguments in
  // straight-line code specialized to this kernel, instead of interpreting
  // the metadata per call. GPU targets default to ffi: the per-call checks
  // are a few hundred nanoseconds next to a driver launch of several
  // microseconds, and ffi needs no host code per kernel (no native.so to
  // dlopen, nothing compiled for the host's ABI in the bundle).
  bool wantNative = requested == TILE_BACKEND_NATIVE ||
                    (requested == TILE_BACKEND_AUTO &&
                     plan.target == TargetKind::Cpu &&
                     !plan.entryNative.empty());
  if (!wantNative) {
    k.backend = Backend::Ffi;
    return TILE_STATUS_OK;
  }
  if (plan.entryNative.empty())
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "kernel '" + plan.name + "' has no native wrapper (metadata "
                "entry.native is missing); use backend 'ffi' or 'auto'");
  k.native = reinterpret_cast<tile_native_fn>(
      k.module->hostSymbol(plan.entryNative.c_str()));
  if (!k.native) {
    if (requested == TILE_BACKEND_AUTO) {
      k.backend = Backend::Ffi;
      return TILE_STATUS_OK;
    }
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "the host code does not define the native wrapper '" +
                    plan.entryNative + "'");
  }
  k.backend = Backend::Native;
  return TILE_STATUS_OK;
}

} // namespace

namespace {

/// The bundle and its metadata, checked and parsed; no device code.
tile_status openBundle(std::string bytes, std::unique_ptr<tile_kernel> &k) {
  k = std::make_unique<tile_kernel>();
  k->bytes = std::move(bytes);
  std::string error;
  if (!bundle::read(k->bytes.data(), k->bytes.size(), k->bundle, error))
    return fail(TILE_STATUS_BUNDLE_ERROR, error);
  const bundle::SectionView *meta = k->bundle.find("metadata");
  if (!meta)
    return fail(TILE_STATUS_BUNDLE_ERROR, "bundle has no 'metadata' section");
  if (!parseMetadata(meta->bytes(), k->plan, error))
    return fail(TILE_STATUS_BUNDLE_ERROR, error);
  return TILE_STATUS_OK;
}

} // namespace

tile_status loadKernel(std::string bytes, const char *backend,
                       tile_kernel_t *out) {
  if (!out)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "output handle pointer is NULL");
  *out = nullptr;
  tile_backend requested = TILE_BACKEND_AUTO;
  if (backend && *backend && !tile_backend_parse(backend, &requested))
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                std::string("unknown backend '") + backend +
                    "' (expected one of: " + backendList(TILE_TARGET_COUNT) +
                    ")");

  std::unique_ptr<tile_kernel> k;
  if (tile_status st = openBundle(std::move(bytes), k))
    return st;
  // Before any code is mapped: the code must match the metadata.
  if (tile_status st = checkBundleCode(k->plan, k->bundle))
    return st;
  if (tile_status st = selectBackend(*k, requested))
    return st;
  *out = k.release();
  return TILE_STATUS_OK;
}

tile_status inspectKernel(std::string bytes, tile_kernel_t *out) {
  if (!out)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "output handle pointer is NULL");
  *out = nullptr;
  std::unique_ptr<tile_kernel> k;
  if (tile_status st = openBundle(std::move(bytes), k))
    return st;
  k->backend = Backend::None;
  *out = k.release();
  return TILE_STATUS_OK;
}

} // namespace tile::rt
