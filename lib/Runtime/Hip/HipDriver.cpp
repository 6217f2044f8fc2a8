//===- HipDriver.cpp - dlopen("libamdhip64.so") ---------------------------===//
#include "HipDriver.h"
#include "Common.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>

namespace tile::rt::hip {
namespace {

std::atomic<Driver *> gDriver{nullptr};
std::mutex gLoadMu;

/// The candidates to dlopen, in order.
std::vector<std::string> runtimePaths() {
  const char *p = std::getenv("TILE_HIP_PATH");
  if (p && *p) {
    struct stat st;
    if (::stat(p, &st) == 0 && S_ISDIR(st.st_mode))
      return {std::string(p) + "/lib/libamdhip64.so"};
    return {p};
  }
  return {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
}

} // namespace

std::string errorText(hipError_t r) {
  Driver *d = loadedDriver();
  const char *name = d ? d->api.hipGetErrorName(r) : nullptr;
  const char *text = d ? d->api.hipGetErrorString(r) : nullptr;
  std::string s = name ? name : "hipError_t " + str(r);
  if (text && *text)
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

  std::vector<std::string> paths = runtimePaths();
  void *h = nullptr;
  std::string tried, path;
  for (const std::string &candidate : paths) {
    h = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      path = candidate;
      break;
    }
    const char *e = ::dlerror();
    tried += (tried.empty() ? "" : "; ") + candidate +
             (e ? std::string(": ") + e : std::string());
  }
  if (!h)
    return fail(TILE_STATUS_NO_DEVICE,
                "no HIP runtime (" + tried +
                    "); install ROCm's libamdhip64 or set TILE_HIP_PATH");
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
  sym(a.hipInit, "hipInit");
  sym(a.hipDriverGetVersion, "hipDriverGetVersion");
  sym(a.hipGetErrorName, "hipGetErrorName");
  sym(a.hipGetErrorString, "hipGetErrorString");
  sym(a.hipGetDeviceCount, "hipGetDeviceCount");
  sym(a.hipSetDevice, "hipSetDevice");
  sym(a.hipDeviceGetAttribute, "hipDeviceGetAttribute");
  sym(a.hipModuleLoadData, "hipModuleLoadData");
  sym(a.hipModuleUnload, "hipModuleUnload");
  sym(a.hipModuleGetFunction, "hipModuleGetFunction");
  sym(a.hipModuleGetGlobal, "hipModuleGetGlobal");
  sym(a.hipModuleLaunchKernel, "hipModuleLaunchKernel");
  sym(a.hipMalloc, "hipMalloc");
  sym(a.hipFree, "hipFree");
  sym(a.hipMemcpy, "hipMemcpy");
  sym(a.hipStreamSynchronize, "hipStreamSynchronize");
  sym(a.hipEventCreate, "hipEventCreate");
  sym(a.hipEventDestroy, "hipEventDestroy");
  sym(a.hipEventRecord, "hipEventRecord");
  sym(a.hipEventSynchronize, "hipEventSynchronize");
  sym(a.hipEventElapsedTime, "hipEventElapsedTime");
  if (!missing.empty()) {
    ::dlclose(h);
    delete d;
    return fail(TILE_STATUS_NO_DEVICE,
                "the HIP runtime " + path +
                    " is too old or not a HIP runtime: it lacks " + missing);
  }
  auto hipFail = [&](const char *what, hipError_t r) {
    const char *name = a.hipGetErrorName(r);
    const char *text = a.hipGetErrorString(r);
    std::string m = std::string(what) + " failed: " +
                    (name ? std::string(name) : "hipError_t " + str(r));
    if (text && *text)
      m += std::string(" (") + text + ")";
    ::dlclose(h);
    delete d;
    return fail(TILE_STATUS_NO_DEVICE, m);
  };
  if (hipError_t r = a.hipInit(0))
    return hipFail("hipInit", r);
  if (hipError_t r = a.hipGetDeviceCount(&d->deviceCount))
    return hipFail("hipGetDeviceCount", r);
  if (d->deviceCount <= 0) {
    ::dlclose(h);
    delete d;
    return fail(TILE_STATUS_NO_DEVICE, "the HIP runtime sees no device");
  }
  a.hipDriverGetVersion(&d->runtimeVersion);
  d->devices_ = std::vector<Driver::Device>(size_t(d->deviceCount));
  gDriver.store(d, std::memory_order_release);
  out = d;
  return TILE_STATUS_OK;
}

bool Driver::use(int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount) {
    fail(TILE_STATUS_NO_DEVICE, "HIP device " + str(ordinal) +
                                    " does not exist (the runtime sees " +
                                    str(deviceCount) + ")");
    return false;
  }
  if (hipError_t r = api.hipSetDevice(ordinal)) {
    fail(TILE_STATUS_NO_DEVICE,
         "cannot use HIP device " + str(ordinal) + ": " + errorText(r));
    return false;
  }
  Device &dev = devices_[size_t(ordinal)];
  if (dev.ready.load(std::memory_order_acquire))
    return true;
  std::lock_guard<std::mutex> lock(mu_);
  if (!dev.ready.load(std::memory_order_relaxed)) {
    if (api.hipDeviceGetAttribute(&dev.sharedPerBlock,
                                  kAttrMaxSharedMemoryPerBlock, ordinal))
      dev.sharedPerBlock = 0;
    if (api.hipDeviceGetAttribute(&dev.computeUnits, kAttrMultiprocessorCount,
                                  ordinal))
      dev.computeUnits = 0;
    if (api.hipDeviceGetAttribute(&dev.waveSize, kAttrWarpSize, ordinal))
      dev.waveSize = 0;
    dev.ready.store(true, std::memory_order_release);
  }
  return true;
}

int Driver::maxSharedPerBlock(int ordinal) {
  if (!use(ordinal))
    return 0;
  return devices_[size_t(ordinal)].sharedPerBlock;
}

bool isAmdgpuChip(const std::string &chip) {
  if (chip.size() < 6 || chip.compare(0, 3, "gfx") != 0)
    return false;
  for (size_t i = 3; i < chip.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(chip[i])))
      return false;
  return true;
}

} // namespace tile::rt::hip
