//===- HipDevice.cpp - HIP device layer: hsaco, hipModuleLaunchKernel ----===//
//
// An AMD kernel's DeviceModule. At load time it checks the bundle (hsaco
// section, chip, block, LDS), precomputes the kernelParams plan (the same
// flattening as CUDA's: the gpu.func of convert-gpu-to-rocdl takes the
// memref descriptors expanded, docs/bundle.md) and loads the HIP runtime
// (dlopen + hipInit, no link-time dependency). The hipModule_t is loaded
// lazily, once per device, on the first launch on that device; launches
// run on the caller's stream and never allocate.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaDevice.h"
#include "CodeCheck.h"
#include "Common.h"
#include "HipDriver.h"
#include "SharedObject.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <unistd.h>

namespace tile::rt {
namespace {

using namespace hip;
using cuda::ParamRef;

/// Host block [DLManagedTensor | shape] for a device allocation.
void freeHipTensor(DLManagedTensor *self) {
  if (self->dl_tensor.data)
    if (Driver *d = loadedDriver())
      if (d->use(self->dl_tensor.device.device_id))
        d->api.hipFree(self->dl_tensor.data);
  std::free(self);
}

struct Loaded {
  hipModule_t module = nullptr;
  hipFunction_t fn = nullptr;
};

class HipModule final : public DeviceModule {
public:
  HipModule(const KernelPlan &plan, Driver *drv, std::string_view hsaco,
            std::string_view nativeSo, std::vector<ParamRef> params)
      : drv_(drv), metadataHash_(bundle::metadataHash(plan.metadataText)),
        name_(plan.name), chip_(plan.targetChip), entry_(plan.entryKernel),
        hsaco_(hsaco), nativeSo_(nativeSo), params_(std::move(params)),
        slots_(new std::atomic<Loaded *>[size_t(drv->deviceCount)]) {
    for (int d = 0; d < drv->deviceCount; ++d)
      slots_[size_t(d)].store(nullptr, std::memory_order_relaxed);
    for (int d = 0; d < 3; ++d)
      block_[d] = unsigned(plan.block[d]);
    shared_ = unsigned(plan.sharedBytes);
  }

  ~HipModule() override {
    for (int d = 0; d < drv_->deviceCount; ++d)
      if (Loaded *l = slots_[size_t(d)].load(std::memory_order_acquire)) {
        if (drv_->use(d))
          drv_->api.hipModuleUnload(l->module);
        delete l;
      }
    if (nativeHandle_) {
      ::dlclose(nativeHandle_);
      if (nativeFd_ >= 0 && !host::stillLoaded(nativeFd_))
        ::close(nativeFd_);
    }
  }

  void *hostSymbol(const char *name) const override {
    // native.so is only needed by the native backend: load it on demand.
    std::call_once(nativeOnce_, [&] {
      if (nativeSo_.empty())
        return;
      std::string error;
      nativeHandle_ = host::loadSharedObject(nativeSo_, nativeFd_, error);
    });
    if (!nativeHandle_)
      return nullptr;
    return ::dlsym(nativeHandle_, name);
  }

  tile_status run(void **args, int64_t gx, int64_t gy, int64_t gz,
                  void *stream, int32_t device) const override {
    tile_status loadStatus = TILE_STATUS_OK;
    const Loaded *l = slot(device, loadStatus);
    if (!l)
      return loadStatus; // slot() has fail()ed with it
    if (gx > 0x7fffffff || gy > 0xffff || gz > 0xffff)
      return fail(TILE_STATUS_LAUNCH_FAILED,
                  "kernel '" + name_ + "': grid [" + str(gx) + ", " + str(gy) +
                      ", " + str(gz) + "] exceeds the HIP limits [2^31-1, "
                      "65535, 65535]");
    void *kp[cuda::kMaxKernelParams];
    cuda::flattenParams(params_.data(), params_.size(), args, kp);
    if (!drv_->use(device))
      return TILE_STATUS_LAUNCH_FAILED;
    hipError_t r = drv_->api.hipModuleLaunchKernel(
        l->fn, unsigned(gx), unsigned(gy), unsigned(gz), block_[0], block_[1],
        block_[2], shared_, static_cast<hipStream_t>(stream), kp, nullptr);
    if (r != kSuccess)
      return fail(TILE_STATUS_LAUNCH_FAILED,
                  "kernel '" + name_ + "': hipModuleLaunchKernel failed: " +
                      errorText(r) + " (grid [" + str(gx) + ", " + str(gy) +
                      ", " + str(gz) + "], block [" + str(block_[0]) + ", " +
                      str(block_[1]) + ", " + str(block_[2]) + "], " +
                      str(shared_) + " bytes of LDS)");
    return TILE_STATUS_OK;
  }

  DLManagedTensor *allocate(DLDataType dtype, int32_t ndim,
                            const int64_t *shape, void *,
                            int32_t device) const override {
    // Plain hipMalloc/hipFree (hipFree synchronizes): safe from any deleter.
    if (!drv_->use(device))
      return nullptr;
    int64_t elems = 1;
    for (int32_t d = 0; d < ndim; ++d) {
      if (shape[d] < 0 ||
          (shape[d] > 0 && elems > (INT64_MAX >> 12) / shape[d]))
        return nullptr;
      elems *= shape[d];
    }
    size_t bytes = size_t(elems) * size_t(elementBytes(dtype));
    auto *mt = static_cast<DLManagedTensor *>(std::malloc(
        sizeof(DLManagedTensor) + sizeof(int64_t) * size_t(ndim)));
    if (!mt)
      return nullptr;
    auto *dims = reinterpret_cast<int64_t *>(mt + 1);
    std::memcpy(dims, shape, sizeof(int64_t) * size_t(ndim));
    void *p = nullptr;
    if (bytes > 0 && drv_->api.hipMalloc(&p, bytes) != kSuccess) {
      std::free(mt);
      return nullptr;
    }
    DLTensor &t = mt->dl_tensor;
    t.data = p;
    t.device.device_type = kDLROCM;
    t.device.device_id = device;
    t.ndim = ndim;
    t.dtype = dtype;
    t.shape = dims;
    t.strides = nullptr;
    t.byte_offset = 0;
    mt->manager_ctx = nullptr;
    mt->deleter = freeHipTensor;
    return mt;
  }

private:
  /// The module for `device`, loaded on first use; nullptr with `st` the
  /// status fail()ed with.
  const Loaded *slot(int32_t device, tile_status &st) const {
    if (device < 0 || device >= drv_->deviceCount) {
      st = fail(TILE_STATUS_LAUNCH_FAILED,
           "kernel '" + name_ + "': HIP device " + str(device) +
               " does not exist (the runtime sees " + str(drv_->deviceCount) +
               ")");
      return nullptr;
    }
    if (Loaded *l = slots_[size_t(device)].load(std::memory_order_acquire))
      return l;
    std::lock_guard<std::mutex> lock(mu_);
    if (Loaded *l = slots_[size_t(device)].load(std::memory_order_acquire))
      return l;
    auto l = std::make_unique<Loaded>();
    if ((st = loadOn(device, *l)) != TILE_STATUS_OK)
      return nullptr;
    slots_[size_t(device)].store(l.get(), std::memory_order_release);
    return l.release();
  }

  /// Loads the hsaco on `device`: OK, or the status fail()ed with.
  tile_status loadOn(int32_t device, Loaded &l) const {
    const Api &a = drv_->api;
    if (!drv_->use(device))
      return TILE_STATUS_LAUNCH_FAILED;
    const std::string where = "HIP device " + str(device);
    hipError_t r = a.hipModuleLoadData(&l.module, hsaco_.data());
    if (r != kSuccess) {
      return fail(TILE_STATUS_LAUNCH_FAILED,
           "kernel '" + name_ + "': cannot load its " + chip_ + " hsaco on " +
               where + ": " + errorText(r) +
               (r == kErrorNoBinaryForGpu || r == kErrorInvalidImage
                    ? " (the device is not a " + chip_ +
                          ": recompile with tilec --target=hip "
                          "--chip=<the device's gfx arch>)"
                    : std::string()));
    }
    if (!checkHash(l.module)) {
      a.hipModuleUnload(l.module);
      return TILE_STATUS_BUNDLE_ERROR;
    }
    r = a.hipModuleGetFunction(&l.fn, l.module, entry_.c_str());
    if (r != kSuccess) {
      a.hipModuleUnload(l.module);
      return fail(TILE_STATUS_BUNDLE_ERROR,
                  "kernel '" + name_ + "': the hsaco has no kernel '" +
                      entry_ + "' (" + errorText(r) + ")");
    }
    int limit = drv_->maxSharedPerBlock(device);
    if (shared_ > 0 && limit > 0 && shared_ > unsigned(limit)) {
      a.hipModuleUnload(l.module);
      return fail(TILE_STATUS_LAUNCH_FAILED,
                  "kernel '" + name_ + "' needs " + str(shared_) +
                      " bytes of LDS, but " + where + " allows " +
                      str(limit) + " per block");
    }
    if (const char *v = std::getenv("TILE_HIP_VERBOSE"); v && *v)
      std::fprintf(stderr, "tile: kernel '%s' (%s) loaded on %s from hsaco\n",
                   name_.c_str(), chip_.c_str(), where.c_str());
    return TILE_STATUS_OK;
  }

  /// The hsaco's metadata hash, when it has one, must be this
  /// (docs/bundle.md, "Trust model"); false after fail().
  bool checkHash(hipModule_t module) const {
    std::string symbol = name_ + bundle::kMetadataHashSuffix;
    hipDeviceptr_t p = nullptr;
    size_t bytes = 0;
    if (drv_->api.hipModuleGetGlobal(&p, &bytes, module, symbol.c_str()) !=
        kSuccess)
      return true; // code without a hash: nothing to compare
    uint64_t h = 0;
    if (bytes != sizeof h ||
        drv_->api.hipMemcpy(&h, p, sizeof h, kMemcpyDeviceToHost) !=
            kSuccess ||
        h != metadataHash_) {
      fail(TILE_STATUS_BUNDLE_ERROR,
           hashMismatch(name_, metadataHash_, "the hsaco", h));
      return false;
    }
    return true;
  }

  Driver *drv_;
  uint64_t metadataHash_;
  std::string name_, chip_, entry_;
  std::string_view hsaco_, nativeSo_;
  std::vector<ParamRef> params_;
  unsigned block_[3] = {1, 1, 1};
  unsigned shared_ = 0;
  std::unique_ptr<std::atomic<Loaded *>[]> slots_;
  mutable std::mutex mu_;
  mutable std::once_flag nativeOnce_;
  mutable void *nativeHandle_ = nullptr;
  mutable int nativeFd_ = -1;
};

std::string_view bytesOf(const bundle::SectionView *s) {
  return s ? s->bytes() : std::string_view();
}

} // namespace

tile_status loadHipModule(const KernelPlan &plan, const bundle::Reader &bundle,
                          std::unique_ptr<DeviceModule> &out) {
  // Bundle checks first: they need no GPU.
  std::string_view hsaco = bytesOf(bundle.find("hsaco"));
  if (hsaco.empty())
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle for target 'hip' has no 'hsaco' section");
  if (plan.entryKernel.empty())
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle metadata: entry.kernel is required for target 'hip'");
  if (!isAmdgpuChip(plan.targetChip))
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle metadata: target.chip '" + plan.targetChip +
                    "' is not an AMDGPU arch (expected e.g. gfx942, gfx90a)");
  int64_t threads = plan.block[0] * plan.block[1] * plan.block[2];
  if (plan.block[0] < 1 || plan.block[1] < 1 || plan.block[2] < 1 ||
      threads > 1024 || plan.sharedBytes < 0 ||
      plan.sharedBytes > (int64_t(1) << 30))
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle metadata: block [" + str(plan.block[0]) + ", " +
                    str(plan.block[1]) + ", " + str(plan.block[2]) +
                    "] / shared_bytes " + str(plan.sharedBytes) +
                    " cannot be launched on HIP (at most 1024 threads)");
  std::vector<ParamRef> params;
  std::string error;
  if (tile_status st = cuda::buildParamPlan(plan, params, error))
    return fail(st, error);
  Driver *drv = nullptr;
  if (tile_status st = load(drv))
    return st;
  out = std::make_unique<HipModule>(plan, drv, hsaco,
                                    bytesOf(bundle.find("native.so")),
                                    std::move(params));
  return TILE_STATUS_OK;
}

} // namespace tile::rt
