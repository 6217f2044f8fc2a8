//===- CudaDriver.cpp - dlopen("libcuda.so.1") and the primary contexts ---===//
#include "CudaDriver.h"
#include "Common.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace tile::rt::cuda {
namespace {

std::atomic<Driver *> gDriver{nullptr};
std::mutex gLoadMu;

const char *driverPath() {
  const char *p = std::getenv("TILE_CUDA_DRIVER");
  return p && *p ? p : "libcuda.so.1";
}

} // namespace

std::string errorText(CUresult r) {
  Driver *d = loadedDriver();
  const char *name = nullptr, *text = nullptr;
  if (d) {
    if (d->api.cuGetErrorName(r, &name) != kSuccess)
      name = nullptr;
    if (d->api.cuGetErrorString(r, &text) != kSuccess)
      text = nullptr;
  }
  std::string s = name ? name : "CUresult " + str(r);
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

Driver *loadedDriver() { return gDriver.load(std::memory_order_acquire); }

tile_status load(Driver *&out) {
  out = gDriver.load(std::memory_order_acquire);
  if (out)
    return TILE_STATUS_OK;
  std::lock_guard<std::mutex> lock(gLoadMu);
  out = gDriver.load(std::memory_order_acquire);
  if (out)
    return TILE_STATUS_OK;

  const char *path = driverPath();
  void *h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = ::dlerror();
    return fail(TILE_STATUS_NO_DEVICE,
                std::string("no CUDA driver (") + path + " not found" +
                    (e ? std::string(": ") + e : std::string()) + ")");
  }
  auto *d = new Driver();
  d->handle_ = h;
  Api &a = d->api;
  std::string missing;
  auto sym = [&](auto &fn, const char *name) {
    void *p = ::dlsym(h, name);
    if (!p && missing.empty())
      missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  // The versioned names are what cuda.h's macros map the plain ones to.
  sym(a.cuInit, "cuInit");
  sym(a.cuDriverGetVersion, "cuDriverGetVersion");
  sym(a.cuGetErrorName, "cuGetErrorName");
  sym(a.cuGetErrorString, "cuGetErrorString");
  sym(a.cuDeviceGetCount, "cuDeviceGetCount");
  sym(a.cuDeviceGet, "cuDeviceGet");
  sym(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  sym(a.cuDeviceGetName, "cuDeviceGetName");
  sym(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(a.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  sym(a.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  sym(a.cuCtxSetCurrent, "cuCtxSetCurrent");
  sym(a.cuCtxSynchronize, "cuCtxSynchronize");
  sym(a.cuModuleLoadData, "cuModuleLoadData");
  sym(a.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  sym(a.cuModuleUnload, "cuModuleUnload");
  sym(a.cuModuleGetFunction, "cuModuleGetFunction");
  sym(a.cuModuleGetGlobal, "cuModuleGetGlobal_v2");
  sym(a.cuFuncSetAttribute, "cuFuncSetAttribute");
  sym(a.cuLaunchKernel, "cuLaunchKernel");
  sym(a.cuMemAlloc, "cuMemAlloc_v2");
  sym(a.cuMemFree, "cuMemFree_v2");
  sym(a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  sym(a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  sym(a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  sym(a.cuMemsetD8, "cuMemsetD8_v2");
  sym(a.cuStreamSynchronize, "cuStreamSynchronize");
  sym(a.cuEventCreate, "cuEventCreate");
  sym(a.cuEventDestroy, "cuEventDestroy_v2");
  sym(a.cuEventRecord, "cuEventRecord");
  sym(a.cuEventSynchronize, "cuEventSynchronize");
  sym(a.cuEventElapsedTime, "cuEventElapsedTime");
  // Optional entry points: absent on older drivers, not an error.
  a.cuTensorMapEncodeTiled = ::dlsym(h, "cuTensorMapEncodeTiled");
  a.cuStreamIsCapturing = reinterpret_cast<decltype(a.cuStreamIsCapturing)>(
      ::dlsym(h, "cuStreamIsCapturing"));
  if (!missing.empty()) {
    ::dlclose(h);
    delete d;
    return fail(TILE_STATUS_NO_DEVICE,
                std::string("the CUDA driver ") + path +
                    " is too old or not a CUDA driver: it lacks " + missing);
  }
  // errorText() needs the driver published; do the checks on a local first.
  auto cudaFail = [&](const char *what, CUresult r) {
    const char *name = nullptr, *text = nullptr;
    a.cuGetErrorName(r, &name);
    a.cuGetErrorString(r, &text);
    std::string m = std::string(what) + " failed: " +
                    (name ? name : ("CUresult " + str(r)).c_str());
    if (text)
      m += std::string(" (") + text + ")";
    ::dlclose(h);
    delete d;
    return fail(TILE_STATUS_NO_DEVICE, m);
  };
  if (CUresult r = a.cuInit(0))
    return cudaFail("cuInit", r);
  if (CUresult r = a.cuDeviceGetCount(&d->deviceCount))
    return cudaFail("cuDeviceGetCount", r);
  if (d->deviceCount <= 0) {
    ::dlclose(h);
    delete d;
    return fail(TILE_STATUS_NO_DEVICE, "the CUDA driver sees no device");
  }
  a.cuDriverGetVersion(&d->driverVersion);
  d->devices_ = std::vector<Driver::Device>(size_t(d->deviceCount));
  gDriver.store(d, std::memory_order_release);
  out = d;
  return TILE_STATUS_OK;
}

CUcontext Driver::context(int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount) {
    fail(TILE_STATUS_NO_DEVICE, "CUDA device " + str(ordinal) +
                                    " does not exist (the driver sees " +
                                    str(deviceCount) + ")");
    return nullptr;
  }
  Device &dev = devices_[size_t(ordinal)];
  if (CUcontext c = dev.ctx.load(std::memory_order_acquire))
    return c;
  std::lock_guard<std::mutex> lock(mu_);
  if (CUcontext c = dev.ctx.load(std::memory_order_acquire))
    return c;
  CUdevice h;
  CUresult r = api.cuDeviceGet(&h, ordinal);
  CUcontext c = nullptr;
  if (r == kSuccess)
    r = api.cuDevicePrimaryCtxRetain(&c, h);
  if (r != kSuccess) {
    fail(TILE_STATUS_NO_DEVICE, "cannot use CUDA device " + str(ordinal) +
                                    ": " + errorText(r));
    return nullptr;
  }
  int major = 0, minor = 0, optin = 0;
  api.cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, h);
  api.cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, h);
  if (api.cuDeviceGetAttribute(&optin, kAttrMaxSharedPerBlockOptin, h))
    api.cuDeviceGetAttribute(&optin, kAttrMaxSharedPerBlock, h);
  int sms = 0;
  if (api.cuDeviceGetAttribute(&sms, kAttrMultiprocessorCount, h))
    sms = 0;
  dev.cc = major * 10 + minor;
  dev.smemOptin = optin;
  dev.sms = sms;
  dev.ctx.store(c, std::memory_order_release);
  return c;
}

int Driver::computeCapability(int ordinal) {
  if (!context(ordinal))
    return 0;
  return devices_[size_t(ordinal)].cc;
}

int Driver::maxSharedOptin(int ordinal) {
  if (!context(ordinal))
    return 0;
  return devices_[size_t(ordinal)].smemOptin;
}

int Driver::multiprocessorCount(int ordinal) {
  if (!context(ordinal))
    return 0;
  return devices_[size_t(ordinal)].sms;
}

bool parseChip(const std::string &chip, int &cc, bool &archSpecific) {
  if (chip.size() < 5 || chip.compare(0, 3, "sm_") != 0)
    return false;
  size_t i = 3;
  cc = 0;
  while (i < chip.size() && chip[i] >= '0' && chip[i] <= '9')
    cc = cc * 10 + (chip[i++] - '0');
  if (i == 3 || cc < 10)
    return false;
  archSpecific = false;
  if (i < chip.size()) {
    if ((chip[i] != 'a' && chip[i] != 'f') || i + 1 != chip.size())
      return false;
    archSpecific = true;
  }
  return true;
}

bool cubinRunsOn(const std::string &chip, int deviceCC) {
  int cc;
  bool specific;
  if (!parseChip(chip, cc, specific) || deviceCC <= 0)
    return false;
  if (specific)
    return cc == deviceCC;
  return cc / 10 == deviceCC / 10 && cc % 10 <= deviceCC % 10;
}

} // namespace tile::rt::cuda
