//===- CudaDevice.cpp - CUDA device layer: cubin / PTX, cuLaunchKernel ----===//
//
// A CUDA kernel's DeviceModule. At load time it checks the driver (dlopen +
// cuInit, no link-time dependency), the bundle's sections and precomputes
// the kernelParams plan (the CPU `args` array flattened per docs/bundle.md,
// "The CUDA kernel ABI"). The CUmodule is loaded lazily, once per device, on
// the first launch on that device: the cubin when it runs on the device's
// compute capability, else the PTX, JIT-compiled by the driver (also when
// the cubin load answers NO_BINARY_FOR_GPU). Launches run in the device's
// primary context on the caller's stream and never allocate.
//
//===----------------------------------------------------------------------===//
#include "CodeCheck.h"
#include "CudaDevice.h"
#include "CudaDriver.h"
#include "CudaVariants.h"
#include "Nvrtc.h"
#include "SharedObject.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <unistd.h>

namespace tile::rt {
namespace cuda {

tile_status buildParamPlan(const KernelPlan &plan, std::vector<ParamRef> &out,
                           std::string &error) {
  out.clear();
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamPlan &p = plan.params[i];
    if (!p.isTensor) {
      out.push_back({uint32_t(i), 0});
      continue;
    }
    // {allocated, aligned, offset, sizes[r], strides[r]}: 8 bytes each.
    for (int32_t w = 0; w < TILE_MEMREF_WORDS(p.rank); ++w)
      out.push_back({uint32_t(i), uint32_t(w * 8)});
  }
  if (out.size() > kMaxKernelParams) {
    error = "kernel '" + plan.name + "' has " + str(int64_t(out.size())) +
            " CUDA kernel parameters (at most " + str(kMaxKernelParams) +
            " are supported)";
    return TILE_STATUS_BUNDLE_ERROR;
  }
  return TILE_STATUS_OK;
}

} // namespace cuda

namespace {

using namespace cuda;

/// Host block [DLManagedTensor | shape] for a device allocation.
void freeCudaTensor(DLManagedTensor *self) {
  if (self->dl_tensor.data) {
    if (Driver *d = loadedDriver()) {
      CUcontext ctx = d->context(self->dl_tensor.device.device_id);
      ScopedContext scope(d->api, ctx);
      d->api.cuMemFree(
          reinterpret_cast<CUdeviceptr>(self->dl_tensor.data));
    }
  }
  std::free(self);
}

struct Loaded {
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  /// The usable sm_90a TMA kernels, in metadata order (may be empty).
  std::vector<std::unique_ptr<VariantLauncher>> variants;
};

/// The device code of a CudaModule: the cubin / PTX sections, or (backend
/// nvrtc) the `cuda` section compiled by NVRTC for each device's arch.
struct DeviceCode {
  std::string_view cubin, ptx, nativeSo;
  std::string_view cudaSource; ///< non-empty: backend nvrtc
  const Nvrtc *nvrtc = nullptr;
};

class CudaModule final : public DeviceModule {
public:
  CudaModule(const KernelPlan &plan, Driver *drv, const DeviceCode &code,
             std::vector<ParamRef> params, std::vector<VariantSpec> variants)
      : CudaModule(plan, drv, code.cubin, code.ptx, code.nativeSo,
                   std::move(params), std::move(variants)) {
    source_ = code.cudaSource;
    nvrtc_ = code.nvrtc;
  }
  CudaModule(const KernelPlan &plan, Driver *drv, std::string_view cubin,
             std::string_view ptx, std::string_view nativeSo,
             std::vector<ParamRef> params, std::vector<VariantSpec> variants)
      : drv_(drv), metadataHash_(bundle::metadataHash(plan.metadataText)),
        name_(plan.name), chip_(plan.targetChip),
        entry_(plan.entryKernel), cubin_(cubin), nativeSo_(nativeSo),
        params_(std::move(params)), variants_(std::move(variants)),
        slots_(new std::atomic<Loaded *>[size_t(drv->deviceCount)]) {
    if (!ptx.empty()) {
      ptx_.assign(ptx.data(), ptx.size());
      ptx_.push_back('\0'); // the driver reads PTX as a C string
    }
    for (int d = 0; d < drv->deviceCount; ++d)
      slots_[size_t(d)].store(nullptr, std::memory_order_relaxed);
    for (int d = 0; d < 3; ++d)
      block_[d] = unsigned(plan.block[d]);
    shared_ = unsigned(plan.sharedBytes);
  }

  ~CudaModule() override {
    for (int d = 0; d < drv_->deviceCount; ++d)
      if (Loaded *l = slots_[size_t(d)].load(std::memory_order_acquire)) {
        ScopedContext scope(drv_->api, l->ctx);
        drv_->api.cuModuleUnload(l->module);
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
      if (!nativeHandle_)
        nativeError_ = error;
    });
    if (!nativeHandle_)
      return nullptr;
    return ::dlsym(nativeHandle_, name);
  }

  tile_status run(void **args, int64_t gx, int64_t gy, int64_t gz,
                  void *stream, int32_t device) const override {
    const Loaded *l = slot(device);
    if (!l)
      return TILE_STATUS_LAUNCH_FAILED; // slot() has fail()ed: keep status
    if (gx > 0x7fffffff || gy > 65535 || gz > 65535)
      return fail(TILE_STATUS_LAUNCH_FAILED,
                  "kernel '" + name_ + "': grid [" + str(gx) + ", " + str(gy) +
                      ", " + str(gz) + "] exceeds the CUDA limits [2^31-1, "
                      "65535, 65535]");
    void *kp[kMaxKernelParams];
    flattenParams(params_.data(), params_.size(), args, kp);
    ScopedContext scope(drv_->api, l->ctx);
    if (!scope.ok())
      return fail(TILE_STATUS_LAUNCH_FAILED,
                  "kernel '" + name_ + "': cannot make the context of CUDA "
                  "device " + str(device) + " current");
    for (const auto &v : l->variants)
      if (v->accepts(gx, gy, gz))
        if (int64_t slices = v->slices(args, gx, gy, gz); slices > 0)
          if (tile_status st;
              runVariant(*v, args, kp, gx, gy, gz, slices, stream, st))
            return st;
    CUresult r = drv_->api.cuLaunchKernel(
        l->fn, unsigned(gx), unsigned(gy), unsigned(gz), block_[0], block_[1],
        block_[2], shared_, static_cast<CUstream>(stream), kp, nullptr);
    if (r != kSuccess)
      return fail(TILE_STATUS_LAUNCH_FAILED,
                  "kernel '" + name_ + "': cuLaunchKernel failed: " +
                      errorText(r) + " (grid [" + str(gx) + ", " + str(gy) +
                      ", " + str(gz) + "], block [" + str(block_[0]) + ", " +
                      str(block_[1]) + ", " + str(block_[2]) + "], " +
                      str(shared_.load()) + " bytes of dynamic shared memory)");
    return TILE_STATUS_OK;
  }

  DLManagedTensor *allocate(DLDataType dtype, int32_t ndim,
                            const int64_t *shape, void *,
                            int32_t device) const override {
    // Plain cuMemAlloc/cuMemFree: the deleter may run at any time, with no
    // stream at hand, and cuMemFree waits for the device, so it is always
    // safe. Stream-ordered allocation is a framework allocator's job
    // (tile_set_allocator, e.g. one returning torch.empty tensors).
    CUcontext ctx = drv_->context(device);
    if (!ctx)
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
    CUdeviceptr p = 0;
    if (bytes > 0) {
      ScopedContext scope(drv_->api, ctx);
      if (!scope.ok() || drv_->api.cuMemAlloc(&p, bytes) != kSuccess) {
        std::free(mt);
        return nullptr;
      }
    }
    DLTensor &t = mt->dl_tensor;
    t.data = reinterpret_cast<void *>(p);
    t.device.device_type = kDLCUDA;
    t.device.device_id = device;
    t.ndim = ndim;
    t.dtype = dtype;
    t.shape = dims;
    t.strides = nullptr;
    t.byte_offset = 0;
    mt->manager_ctx = nullptr;
    mt->deleter = freeCudaTensor;
    return mt;
  }

private:
  /// The module for `device`, loaded on first use.
  const Loaded *slot(int32_t device) const {
    if (device < 0 || device >= drv_->deviceCount) {
      fail(TILE_STATUS_LAUNCH_FAILED,
           "kernel '" + name_ + "': CUDA device " + str(device) +
               " does not exist (the driver sees " + str(drv_->deviceCount) +
               ")");
      return nullptr;
    }
    if (Loaded *l = slots_[size_t(device)].load(std::memory_order_acquire))
      return l;
    std::lock_guard<std::mutex> lock(mu_);
    if (Loaded *l = slots_[size_t(device)].load(std::memory_order_acquire))
      return l;
    auto l = std::make_unique<Loaded>();
    if (!loadOn(device, *l))
      return nullptr;
    slots_[size_t(device)].store(l.get(), std::memory_order_release);
    return l.release();
  }

  bool loadOn(int32_t device, Loaded &l) const {
    const Api &a = drv_->api;
    l.ctx = drv_->context(device);
    if (!l.ctx)
      return false;
    const int cc = drv_->computeCapability(device);
    const std::string where = "CUDA device " + str(device) + " (sm_" +
                              str(cc) + ")";
    ScopedContext scope(a, l.ctx);
    if (!scope.ok()) {
      fail(TILE_STATUS_LAUNCH_FAILED, "kernel '" + name_ + "': cannot make "
                                      "the context of " + where + " current");
      return false;
    }
    const char *how = nullptr;
    CUresult r = kErrorNoBinaryForGpu;
    if (nvrtc_) {
      // Backend nvrtc: the source compiled for this device's exact arch
      // (once per arch per module; on disk across processes, Nvrtc.h).
      bool cached = false;
      const std::string *cubin = nvrtcImage(cc, cached);
      if (!cubin)
        return false; // nvrtcImage has fail()ed with NVRTC's log
      how = cached ? "nvrtc (cached cubin)" : "nvrtc";
      r = a.cuModuleLoadData(&l.module, cubin->data());
      if (r != kSuccess) {
        fail(TILE_STATUS_LAUNCH_FAILED,
             "kernel '" + name_ + "': cannot load the cubin NVRTC compiled "
             "for " + where + ": " + errorText(r));
        return false;
      }
    } else if (!cubin_.empty() && cubinRunsOn(chip_, cc)) {
      r = a.cuModuleLoadData(&l.module, cubin_.data());
      how = "cubin";
      if (r != kSuccess && r != kErrorNoBinaryForGpu) {
        fail(TILE_STATUS_LAUNCH_FAILED,
             "kernel '" + name_ + "': cannot load the " + chip_ +
                 " cubin on " + where + ": " + errorText(r));
        return false;
      }
    }
    if (r != kSuccess) {
      if (ptx_.empty()) {
        fail(TILE_STATUS_LAUNCH_FAILED,
             "kernel '" + name_ + "' was compiled for " + chip_ +
                 ", which does not run on " + where +
                 ", and the bundle has no 'ptx' section to JIT-compile");
        return false;
      }
      char errLog[8192] = {0};
      int opts[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
      void *vals[] = {errLog, reinterpret_cast<void *>(sizeof(errLog) - 1)};
      r = a.cuModuleLoadDataEx(&l.module, ptx_.data(), 2, opts, vals);
      how = "ptx (JIT)";
      if (r != kSuccess) {
        fail(TILE_STATUS_LAUNCH_FAILED,
             "kernel '" + name_ + "': JIT-compiling its PTX for " + where +
                 " failed: " + errorText(r) +
                 (errLog[0] ? std::string(": ") + errLog : std::string()));
        return false;
      }
    }
    if (!checkHash(l.module, how)) {
      a.cuModuleUnload(l.module);
      return false;
    }
    if (nvrtc_)
      raiseSharedForSource(l.module);
    r = a.cuModuleGetFunction(&l.fn, l.module, entry_.c_str());
    if (r != kSuccess) {
      a.cuModuleUnload(l.module);
      fail(TILE_STATUS_BUNDLE_ERROR, "kernel '" + name_ + "': the " +
                                         std::string(how) + " has no kernel '" +
                                         entry_ + "' (" + errorText(r) + ")");
      return false;
    }
    // Always opt in to the kernel's dynamic shared memory (once per module
    // load): the default limit is 48 KiB *including* static shared memory,
    // and the NVPTX backend emits the dynamic-shared symbol as a 1-byte
    // static .shared variable, so exactly 48 KiB of dynamic memory already
    // needs the attribute.
    if (shared_ > 0) {
      int optin = drv_->maxSharedOptin(device);
      if (optin > 0 && shared_ > unsigned(optin)) {
        a.cuModuleUnload(l.module);
        fail(TILE_STATUS_LAUNCH_FAILED,
             "kernel '" + name_ + "' needs " + str(shared_.load()) +
                 " bytes of shared memory, but " + where + " allows " +
                 str(optin) + " per block");
        return false;
      }
      r = a.cuFuncSetAttribute(l.fn, kFuncAttrMaxDynamicSharedBytes,
                               int(shared_));
      if (r != kSuccess) {
        a.cuModuleUnload(l.module);
        fail(TILE_STATUS_LAUNCH_FAILED,
             "kernel '" + name_ + "': cannot raise the dynamic shared memory "
             "limit to " + str(shared_.load()) + " bytes: " + errorText(r));
        return false;
      }
    }
    if (const char *v = std::getenv("TILE_CUDA_VERBOSE"); v && *v)
      std::fprintf(stderr, "tile: kernel '%s' (%s) loaded on %s from %s\n",
                   name_.c_str(), chip_.c_str(), where.c_str(), how);
    attachVariant(l, device, cc, std::string(how) == "cubin");
    return true;
  }

  /// The NVRTC cubin for sm_<cc> (compiled or read from the disk cache on
  /// first use), or nullptr after fail(). Called under mu_.
  const std::string *nvrtcImage(int cc, bool &cached) const {
    auto it = nvrtcCubins_.find(cc);
    if (it != nvrtcCubins_.end()) {
      cached = true;
      return &it->second;
    }
    std::string cubin;
    if (nvrtcCubin(*nvrtc_, source_, name_, cc, cubin, cached))
      return nullptr;
    return &nvrtcCubins_.emplace(cc, std::move(cubin)).first->second;
  }

  // ---- kernel variants (CudaVariants.h) -----------------------------------

  /// Sets l.variants to the metadata's variants that can run here.
  void attachVariant(Loaded &l, int32_t device, int cc, bool fromCubin) const {
    std::string why;
    l.variants =
        VariantLauncher::createAll(drv_, variants_, params_.size(), l.module,
                                   l.ctx, device, cc, fromCubin, why);
    const char *v = std::getenv("TILE_CUDA_VERBOSE");
    if (!v || !*v || variants_.empty())
      return;
    for (const auto &vl : l.variants) {
      const int64_t *c = vl->spec().coarsen;
      std::string coarse =
          vl->spec().coarsened() || vl->spec().splitTiles()
              ? ", coarsen " + str(c[0]) + "x" + str(c[1]) + "x" + str(c[2])
              : "";
      if (vl->spec().splitTiles())
        coarse += ", split " + str(vl->spec().split);
      std::string rows = vl->spec().maxRows > 0
                             ? ", rows <= " + str(vl->spec().maxRows)
                             : "";
      std::fprintf(stderr,
                   "tile: kernel '%s': variant %s (%s, max_tiles %lld%s%s%s) "
                   "enabled\n",
                   name_.c_str(), vl->spec().kernel.c_str(),
                   vl->spec().kind.c_str(), (long long)vl->spec().maxTiles,
                   vl->spec().kParam >= 0 ? ", split-K" : "", coarse.c_str(),
                   rows.c_str());
    }
    if (l.variants.empty())
      std::fprintf(stderr, "tile: kernel '%s': variants not used: %s\n",
                   name_.c_str(), why.c_str());
  }

  /// Whether `stream` is (or may be) capturing a CUDA graph: an error
  /// counts as capturing (e.g. the legacy stream while another stream
  /// captures in global mode); false when the driver lacks the call.
  bool capturing(void *stream) const {
    if (!drv_->api.cuStreamIsCapturing)
      return false;
    int status = 0;
    return drv_->api.cuStreamIsCapturing(static_cast<CUstream>(stream),
                                         &status) != kSuccess ||
           status != 0;
  }

  /// Launches the variant when its tensor maps can be made for `args`:
  /// true with `st` set; false to try the next variant (then entry.kernel)
  /// instead. kp holds the
  /// flattened params; the map pointers are appended.
  bool runVariant(VariantLauncher &vl, void **args, void **kp, int64_t gx,
                  int64_t gy, int64_t gz, int64_t slices, void *stream,
                  tile_status &st) const {
    CUdeviceptr maps[8];
    std::string why;
    std::unique_lock<std::mutex> lock; // the map cache, until enqueued
    const VariantSpec &s = vl.spec();
    const bool capture = capturing(stream);
    if (s.takesWorkspace() && capture) {
      // A graph would keep this stream's workspace (its counters shared
      // with every replay, on any stream), and allocating one is not
      // allowed while capturing: the next variant (or entry.kernel).
      const char *v = std::getenv("TILE_CUDA_VERBOSE");
      if (v && *v)
        std::fprintf(stderr,
                     "tile: kernel '%s': not launching %s: the stream is "
                     "capturing a graph and the variant takes a per-stream "
                     "workspace\n",
                     name_.c_str(), s.kernel.c_str());
      return false;
    }
    if (!vl.prepare(args, static_cast<CUstream>(stream), capture, maps, why,
                    lock)) {
      const char *v = std::getenv("TILE_CUDA_VERBOSE");
      if (v && *v)
        std::fprintf(stderr,
                     "tile: kernel '%s': not launching %s: "
                     "%s\n",
                     name_.c_str(), vl.spec().kernel.c_str(), why.c_str());
      return false;
    }
    for (size_t i = 0; i < vl.numMaps(); ++i)
      kp[params_.size() + i] = &maps[i];
    CUdeviceptr workspace = 0;
    if (s.takesWorkspace()) {
      workspace = vl.workspace(static_cast<CUstream>(stream),
                               vl.workspaceBytes(gx * gy * gz, slices), why);
      if (!workspace) {
        const char *v = std::getenv("TILE_CUDA_VERBOSE");
        if (v && *v)
          std::fprintf(stderr, "tile: kernel '%s': not launching %s: %s\n",
                       name_.c_str(), s.kernel.c_str(), why.c_str());
        return false;
      }
      kp[params_.size() + vl.numMaps()] = &workspace;
    }
    unsigned grid[3];
    vl.grid(gx, gy, gz, grid, slices);
    if (s.kParam >= 0)
      if (const char *v = std::getenv("TILE_CUDA_VERBOSE"); v && *v)
        std::fprintf(stderr, "tile: kernel '%s': %s with %lld K-slices\n",
                     name_.c_str(), s.kernel.c_str(), (long long)slices);
    CUresult r = drv_->api.cuLaunchKernel(
        vl.function(), grid[0], grid[1], grid[2], s.block[0],
        s.block[1], s.block[2], s.sharedBytes, static_cast<CUstream>(stream),
        kp, nullptr);
    lock.unlock();
    st = TILE_STATUS_OK;
    if (r != kSuccess)
      st = fail(TILE_STATUS_LAUNCH_FAILED,
                "kernel '" + name_ + "': cuLaunchKernel of " + s.kernel +
                    " failed: " + errorText(r) + " (grid [" + str(grid[0]) +
                    ", " + str(grid[1]) + ", " + str(grid[2]) + "], block [" + str(s.block[0]) +
                    ", " + str(s.block[1]) + ", " + str(s.block[2]) + "], " +
                    str(s.sharedBytes) + " bytes of dynamic shared memory)");
    return true;
  }

  /// Backend nvrtc: the CUDA C++ (the sm_80 lowering) may need more dynamic
  /// shared memory than the metadata's shared_bytes (an sm_90a cubin's);
  /// its constant NAME + kNvrtcSharedBytesSuffix says how much (Bundle.h).
  /// The same source for every device, so the same value: kept for all
  /// launches. Called under mu_.
  void raiseSharedForSource(CUmodule module) const {
    std::string symbol = name_ + bundle::kNvrtcSharedBytesSuffix;
    CUdeviceptr p = 0;
    size_t bytes = 0;
    uint64_t need = 0;
    if (drv_->api.cuModuleGetGlobal(&p, &bytes, module, symbol.c_str()) !=
            kSuccess ||
        bytes != sizeof need ||
        drv_->api.cuMemcpyDtoH(&need, p, sizeof need) != kSuccess)
      return; // none: the metadata's value is the kernel's
    if (need > shared_ && need <= UINT32_MAX)
      shared_ = unsigned(need);
  }

  /// The device code's metadata hash, when it has one, must be this
  /// (docs/bundle.md, "Trust model"); false after fail().
  bool checkHash(CUmodule module, const char *how) const {
    std::string symbol = name_ + bundle::kMetadataHashSuffix;
    CUdeviceptr p = 0;
    size_t bytes = 0;
    if (drv_->api.cuModuleGetGlobal(&p, &bytes, module, symbol.c_str()) !=
        kSuccess)
      return true; // code without a hash: nothing to compare
    uint64_t h = 0;
    if (bytes != sizeof h ||
        drv_->api.cuMemcpyDtoH(&h, p, sizeof h) != kSuccess ||
        h != metadataHash_) {
      fail(TILE_STATUS_BUNDLE_ERROR,
           hashMismatch(name_, metadataHash_, std::string("the ") + how, h));
      return false;
    }
    return true;
  }

  Driver *drv_;
  uint64_t metadataHash_;
  std::string name_, chip_, entry_;
  std::string_view cubin_, nativeSo_;
  std::string ptx_;
  std::vector<ParamRef> params_;
  std::vector<VariantSpec> variants_;
  unsigned block_[3] = {1, 1, 1};
  /// Dynamic shared memory per launch: the metadata's, raised once by the
  /// nvrtc backend's first module load where its source needs more
  /// (raiseSharedForSource, the same value for every device; atomic since
  /// launches read it outside mu_).
  mutable std::atomic<unsigned> shared_{0};
  std::unique_ptr<std::atomic<Loaded *>[]> slots_;
  mutable std::mutex mu_;
  mutable std::once_flag nativeOnce_;
  mutable void *nativeHandle_ = nullptr;
  mutable int nativeFd_ = -1;
  mutable std::string nativeError_;
  std::string_view source_;
  const Nvrtc *nvrtc_ = nullptr;
  mutable std::map<int, std::string> nvrtcCubins_; ///< by compute capability
};

} // namespace

namespace {

/// The checks and the module both CUDA backends' code goes through.
tile_status loadWithCode(const KernelPlan &plan, DeviceCode code,
                         std::unique_ptr<DeviceModule> &out) {
  if (plan.entryKernel.empty())
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle metadata: entry.kernel is required for target 'cuda'");
  int cc;
  bool specific;
  if (!parseChip(plan.targetChip, cc, specific))
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle metadata: target.chip '" + plan.targetChip +
                    "' is not a CUDA arch (expected e.g. sm_80, sm_90a)");
  int64_t threads = plan.block[0] * plan.block[1] * plan.block[2];
  if (plan.block[0] < 1 || plan.block[1] < 1 || plan.block[2] < 1 ||
      threads > 1024 || plan.sharedBytes < 0 ||
      plan.sharedBytes > (int64_t(1) << 30))
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle metadata: block [" + str(plan.block[0]) + ", " +
                    str(plan.block[1]) + ", " + str(plan.block[2]) +
                    "] / shared_bytes " + str(plan.sharedBytes) +
                    " cannot be launched on CUDA (at most 1024 threads)");
  std::vector<ParamRef> params;
  std::string error;
  if (tile_status st = buildParamPlan(plan, params, error))
    return fail(st, error);
  std::vector<VariantSpec> variants;
  if (!makeVariantSpecs(plan, variants, error))
    return fail(TILE_STATUS_BUNDLE_ERROR, error);
  // A variant's kernel takes extra parameters (its tensor maps): launching
  // it as entry.kernel or as another variant would read past kernelParams.
  for (size_t i = 0; i < variants.size(); ++i)
    for (size_t j = 0; j <= i; ++j)
      if (variants[i].kernel == (j == i ? plan.entryKernel : variants[j].kernel))
        return fail(TILE_STATUS_BUNDLE_ERROR,
                    "bundle metadata: variants[" + str(int64_t(i)) +
                        "].kernel '" + variants[i].kernel + "' is also " +
                        (j == i ? std::string("entry.kernel")
                                : "variants[" + str(int64_t(j)) + "].kernel"));

  // The CUDA C++ has the generic kernel only (docs/pipelines.md, "CUDA C++
  // for NVRTC"): the sm_90a variants are the cubin's.
  if (code.nvrtc)
    variants.clear();

  Driver *drv = nullptr;
  if (tile_status st = load(drv))
    return st;
  out = std::make_unique<CudaModule>(plan, drv, code, std::move(params),
                                     std::move(variants));
  return TILE_STATUS_OK;
}

std::string_view bytesOf(const bundle::SectionView *s) {
  return s ? s->bytes() : std::string_view();
}

} // namespace

tile_status loadCudaModule(const KernelPlan &plan, const bundle::Reader &bundle,
                           std::unique_ptr<DeviceModule> &out) {
  // Bundle checks first: they need no GPU.
  DeviceCode code;
  code.cubin = bytesOf(bundle.find("cubin"));
  code.ptx = bytesOf(bundle.find("ptx"));
  code.nativeSo = bytesOf(bundle.find("native.so"));
  if (code.cubin.empty() && code.ptx.empty())
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle for target 'cuda' has neither a 'cubin' nor a 'ptx' "
                "section");
  return loadWithCode(plan, code, out);
}

tile_status loadNvrtcModule(const KernelPlan &plan,
                            const bundle::Reader &bundle,
                            std::unique_ptr<DeviceModule> &out) {
  DeviceCode code;
  code.cudaSource = bytesOf(bundle.find("cuda"));
  code.nativeSo = bytesOf(bundle.find("native.so"));
  if (code.cudaSource.empty())
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "kernel '" + plan.name + "': backend 'nvrtc' needs the "
                "bundle's 'cuda' section (CUDA C++), which this bundle does "
                "not have: compile it with `tilec --target=cuda` and backend "
                "nvrtc (the default: all backends)");
  if (tile_status st = loadNvrtc(code.nvrtc))
    return st;
  return loadWithCode(plan, code, out);
}

} // namespace tile::rt
