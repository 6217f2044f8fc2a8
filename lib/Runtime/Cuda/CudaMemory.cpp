//===- CudaMemory.cpp - tile_device_* / tile_timer_* on CUDA --------------===//
//
// Through the runtime's driver layer (CudaDriver.h: dlopen'ed libcuda or
// $TILE_CUDA_DRIVER), in the device's primary context, pushed for each call
// so the caller's thread needs no current context.
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"
#include "Common.h"
#include "DeviceMemory.h"

namespace tile::rt {
namespace {

using namespace cuda;

/// The driver and the primary context of `device`, or NO_DEVICE.
tile_status contextOf(int32_t device, Driver *&drv, CUcontext &ctx) {
  if (tile_status st = load(drv))
    return st;
  ctx = drv->context(device);
  return ctx ? TILE_STATUS_OK : TILE_STATUS_NO_DEVICE;
}

tile_status check(CUresult r, const char *what, tile_status status) {
  if (r == kSuccess)
    return TILE_STATUS_OK;
  return fail(status, std::string(what) + " failed: " + errorText(r));
}

class CudaTimer final : public DeviceTimer {
public:
  CudaTimer(Driver *drv, CUcontext ctx) : drv(drv), ctx(ctx) {}
  ~CudaTimer() override {
    ScopedContext scope(drv->api, ctx);
    if (begin)
      drv->api.cuEventDestroy(begin);
    if (end)
      drv->api.cuEventDestroy(end);
  }
  tile_status init() {
    ScopedContext scope(drv->api, ctx);
    if (tile_status st = check(drv->api.cuEventCreate(&begin, 0),
                               "cuEventCreate", TILE_STATUS_INTERNAL))
      return st;
    return check(drv->api.cuEventCreate(&end, 0), "cuEventCreate",
                 TILE_STATUS_INTERNAL);
  }
  tile_status start(void *stream) override {
    ScopedContext scope(drv->api, ctx);
    return check(drv->api.cuEventRecord(begin, static_cast<CUstream>(stream)),
                 "cuEventRecord", TILE_STATUS_LAUNCH_FAILED);
  }
  tile_status stop(void *stream, double &us) override {
    ScopedContext scope(drv->api, ctx);
    const Api &a = drv->api;
    if (tile_status st = check(a.cuEventRecord(end, static_cast<CUstream>(stream)),
                               "cuEventRecord", TILE_STATUS_LAUNCH_FAILED))
      return st;
    // Device-side faults of the timed work surface at this synchronization.
    if (tile_status st = check(a.cuEventSynchronize(end),
                               "the timed work on the device",
                               TILE_STATUS_LAUNCH_FAILED))
      return st;
    float ms = 0;
    if (tile_status st = check(a.cuEventElapsedTime(&ms, begin, end),
                               "cuEventElapsedTime", TILE_STATUS_INTERNAL))
      return st;
    us = double(ms) * 1000.0;
    return TILE_STATUS_OK;
  }

private:
  Driver *drv;
  CUcontext ctx;
  CUevent begin = nullptr, end = nullptr;
};

class CudaMemory final : public DeviceMemory {
public:
  tile_status alloc(int32_t device, size_t bytes, void **ptr) override {
    Driver *drv;
    CUcontext ctx;
    if (tile_status st = contextOf(device, drv, ctx))
      return st;
    ScopedContext scope(drv->api, ctx);
    CUdeviceptr p = 0;
    if (tile_status st = check(drv->api.cuMemAlloc(&p, bytes ? bytes : 1),
                               "cuMemAlloc", TILE_STATUS_OUT_OF_MEMORY))
      return st;
    *ptr = reinterpret_cast<void *>(p);
    return TILE_STATUS_OK;
  }
  tile_status free(int32_t device, void *ptr) override {
    Driver *drv;
    CUcontext ctx;
    if (tile_status st = contextOf(device, drv, ctx))
      return st;
    ScopedContext scope(drv->api, ctx);
    return check(drv->api.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)),
                 "cuMemFree", TILE_STATUS_INVALID_ARGUMENT);
  }
  tile_status copy(int32_t device, void *dst, const void *src, size_t bytes,
                   bool toDevice) override {
    if (!bytes)
      return TILE_STATUS_OK;
    Driver *drv;
    CUcontext ctx;
    if (tile_status st = contextOf(device, drv, ctx))
      return st;
    ScopedContext scope(drv->api, ctx);
    if (toDevice)
      return check(drv->api.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst),
                                         src, bytes),
                   "cuMemcpyHtoD", TILE_STATUS_INVALID_ARGUMENT);
    return check(drv->api.cuMemcpyDtoH(
                     dst, reinterpret_cast<CUdeviceptr>(src), bytes),
                 "cuMemcpyDtoH", TILE_STATUS_INVALID_ARGUMENT);
  }
  tile_status createTimer(int32_t device,
                          std::unique_ptr<DeviceTimer> &out) override {
    Driver *drv;
    CUcontext ctx;
    if (tile_status st = contextOf(device, drv, ctx))
      return st;
    auto timer = std::make_unique<CudaTimer>(drv, ctx);
    if (tile_status st = timer->init())
      return st;
    out = std::move(timer);
    return TILE_STATUS_OK;
  }
};

} // namespace

DeviceMemory &cudaMemory() {
  static CudaMemory memory;
  return memory;
}

} // namespace tile::rt
