//===- Load.cpp - Bundle loading and backend selection --------------------===//
#include "Kernel.h"

#include <cstring>

namespace tile::rt {
namespace {

enum class BackendName { Auto, Ffi, Native, Nvrtc, MetalTorch };

const char *const kAllBackends = "auto, ffi, native, nvrtc, metal-torch";

bool parseBackend(const char *name, BackendName &out) {
  static const struct {
    const char *name;
    BackendName value;
  } kNames[] = {{"auto", BackendName::Auto},
                {"ffi", BackendName::Ffi},
                {"native", BackendName::Native},
                {"nvrtc", BackendName::Nvrtc},
                {"metal-torch", BackendName::MetalTorch}};
  if (!name || !*name) {
    out = BackendName::Auto;
    return true;
  }
  for (const auto &e : kNames)
    if (std::strcmp(name, e.name) == 0) {
      out = e.value;
      return true;
    }
  return false;
}

/// The backends a target can use, as the message lists them.
const char *backendsFor(TargetKind t) {
  switch (t) {
  case TargetKind::Cpu: return "auto, ffi, native";
  case TargetKind::Cuda: return "auto, ffi, native, nvrtc";
  case TargetKind::Hip: return "auto, ffi, native";
  case TargetKind::Metal: return "auto, metal-torch";
  }
  return "auto";
}

bool allowed(TargetKind t, BackendName b) {
  switch (b) {
  case BackendName::Auto: return true;
  case BackendName::Ffi:
  case BackendName::Native: return t != TargetKind::Metal;
  case BackendName::Nvrtc: return t == TargetKind::Cuda;
  case BackendName::MetalTorch: return t == TargetKind::Metal;
  }
  return false;
}

tile_status selectBackend(tile_kernel &k, BackendName requested,
                          const char *requestedName) {
  const KernelPlan &plan = k.plan;
  if (!allowed(plan.target, requested))
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                std::string("backend '") + requestedName +
                    "' is not available for target '" + plan.targetKindName +
                    "' (available: " + backendsFor(plan.target) + ")");
  if (requested == BackendName::Nvrtc)
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "backend 'nvrtc' is not implemented in this runtime build");
  if (plan.target == TargetKind::Metal)
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "kernel '" + plan.name + "' targets 'metal': it runs through "
                "the 'metal-torch' backend of the Python package, not the C "
                "runtime");

  if (tile_status st = loadDeviceModule(plan, k.bundle, k.module))
    return st;

  // auto on CPU prefers native: the compiled wrapper checks arguments in
  // straight-line code specialized to this kernel, instead of interpreting
  // the metadata per call. GPU targets default to ffi: the per-call checks
  // are a few hundred nanoseconds next to a driver launch of several
  // microseconds, and ffi needs no host code per kernel (no native.so to
  // dlopen, nothing compiled for the host's ABI in the bundle).
  bool wantNative = requested == BackendName::Native ||
                    (requested == BackendName::Auto &&
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
    if (requested == BackendName::Auto) {
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
  BackendName requested;
  if (!parseBackend(backend, requested))
    return fail(TILE_STATUS_INVALID_ARGUMENT,
                std::string("unknown backend '") + backend +
                    "' (expected one of: " + kAllBackends + ")");

  std::unique_ptr<tile_kernel> k;
  if (tile_status st = openBundle(std::move(bytes), k))
    return st;
  if (tile_status st =
          selectBackend(*k, requested, backend && *backend ? backend : "auto"))
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
