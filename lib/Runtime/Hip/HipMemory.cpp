//===- HipMemory.cpp - tile_device_* / tile_timer_* on HIP ----------------===//
//
// Through the runtime's HIP layer (HipDriver.h: dlopen'ed libamdhip64 or
// $TILE_HIP_PATH), on the device made current for each call.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "DeviceMemory.h"
#include "HipDriver.h"

namespace tile::rt {
namespace {

using namespace hip;

/// The runtime with `device` current, or NO_DEVICE.
tile_status use(int32_t device, Driver *&drv) {
  if (tile_status st = load(drv))
    return st;
  return drv->use(device) ? TILE_STATUS_OK : TILE_STATUS_NO_DEVICE;
}

tile_status check(hipError_t r, const char *what, tile_status status) {
  if (r == kSuccess)
    return TILE_STATUS_OK;
  return fail(status, std::string(what) + " failed: " + errorText(r));
}

class HipTimer final : public DeviceTimer {
public:
  HipTimer(Driver *drv, int32_t device) : drv(drv), device(device) {}
  ~HipTimer() override {
    if (!drv->use(device))
      return;
    if (begin)
      drv->api.hipEventDestroy(begin);
    if (end)
      drv->api.hipEventDestroy(end);
  }
  tile_status init() {
    if (tile_status st = check(drv->api.hipEventCreate(&begin),
                               "hipEventCreate", TILE_STATUS_INTERNAL))
      return st;
    return check(drv->api.hipEventCreate(&end), "hipEventCreate",
                 TILE_STATUS_INTERNAL);
  }
  tile_status start(void *stream) override {
    if (!drv->use(device))
      return TILE_STATUS_NO_DEVICE;
    return check(drv->api.hipEventRecord(begin,
                                         static_cast<hipStream_t>(stream)),
                 "hipEventRecord", TILE_STATUS_LAUNCH_FAILED);
  }
  tile_status stop(void *stream, double &us) override {
    if (!drv->use(device))
      return TILE_STATUS_NO_DEVICE;
    const Api &a = drv->api;
    if (tile_status st =
            check(a.hipEventRecord(end, static_cast<hipStream_t>(stream)),
                  "hipEventRecord", TILE_STATUS_LAUNCH_FAILED))
      return st;
    // Device-side faults of the timed work surface at this synchronization.
    if (tile_status st = check(a.hipEventSynchronize(end),
                               "the timed work on the device",
                               TILE_STATUS_LAUNCH_FAILED))
      return st;
    float ms = 0;
    if (tile_status st = check(a.hipEventElapsedTime(&ms, begin, end),
                               "hipEventElapsedTime", TILE_STATUS_INTERNAL))
      return st;
    us = double(ms) * 1000.0;
    return TILE_STATUS_OK;
  }

private:
  Driver *drv;
  int32_t device;
  hipEvent_t begin = nullptr, end = nullptr;
};

class HipMemory final : public DeviceMemory {
public:
  tile_status alloc(int32_t device, size_t bytes, void **ptr) override {
    Driver *drv;
    if (tile_status st = use(device, drv))
      return st;
    return check(drv->api.hipMalloc(ptr, bytes ? bytes : 1), "hipMalloc",
                 TILE_STATUS_OUT_OF_MEMORY);
  }
  tile_status free(int32_t device, void *ptr) override {
    Driver *drv;
    if (tile_status st = use(device, drv))
      return st;
    return check(drv->api.hipFree(ptr), "hipFree",
                 TILE_STATUS_INVALID_ARGUMENT);
  }
  tile_status copy(int32_t device, void *dst, const void *src, size_t bytes,
                   bool toDevice) override {
    if (!bytes)
      return TILE_STATUS_OK;
    Driver *drv;
    if (tile_status st = use(device, drv))
      return st;
    return check(drv->api.hipMemcpy(dst, src, bytes,
                                    toDevice ? kMemcpyHostToDevice
                                             : kMemcpyDeviceToHost),
                 toDevice ? "hipMemcpy (host to device)"
                          : "hipMemcpy (device to host)",
                 TILE_STATUS_INVALID_ARGUMENT);
  }
  tile_status createTimer(int32_t device,
                          std::unique_ptr<DeviceTimer> &out) override {
    Driver *drv;
    if (tile_status st = use(device, drv))
      return st;
    auto timer = std::make_unique<HipTimer>(drv, device);
    if (tile_status st = timer->init())
      return st;
    out = std::move(timer);
    return TILE_STATUS_OK;
  }
};

} // namespace

DeviceMemory &hipMemory() {
  static HipMemory memory;
  return memory;
}

} // namespace tile::rt
