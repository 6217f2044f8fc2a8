//===- Device.cpp - The device layers of this build -----------------------===//
#include "Device.h"

namespace tile::rt {
namespace {

/// One entry per target with a device layer in this runtime (its folder),
/// and per backend that loads its code differently (TILE_BACKEND_AUTO: any
/// other backend). The first matching row wins.
struct Layer {
  TargetKind target;
  tile_backend backend;
  tile_status (*load)(const KernelPlan &, const bundle::Reader &,
                      std::unique_ptr<DeviceModule> &);
};
constexpr Layer kLayers[] = {
    {TargetKind::Cpu, TILE_BACKEND_AUTO, loadCpuModule},
    {TargetKind::Cuda, TILE_BACKEND_NVRTC, loadNvrtcModule},
    {TargetKind::Cuda, TILE_BACKEND_AUTO, loadCudaModule},
    {TargetKind::Hip, TILE_BACKEND_AUTO, loadHipModule},
};

} // namespace

tile_status loadDeviceModule(const KernelPlan &plan,
                             const bundle::Reader &bundle,
                             tile_backend backend,
                             std::unique_ptr<DeviceModule> &out) {
  for (const Layer &l : kLayers)
    if (l.target == plan.target &&
        (l.backend == TILE_BACKEND_AUTO || l.backend == backend))
      return l.load(plan, bundle, out);
  // Metal kernels run through the Python package's metal-torch backend
  // (Load.cpp says so before getting here); a GPU target without a layer
  // gets a clear message instead of an obscure failure.
  return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
              "kernel '" + plan.name + "' targets '" + plan.targetKindName +
                  "', but this runtime build has no " + plan.targetKindName +
                  " device layer yet");
}

} // namespace tile::rt
