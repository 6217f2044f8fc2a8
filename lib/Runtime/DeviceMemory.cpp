//===- DeviceMemory.cpp - tile_device_* / tile_timer_*: dispatch and CPU --===//
#include "DeviceMemory.h"
#include "Common.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

using namespace tile::rt;

struct tile_timer {
  std::unique_ptr<DeviceTimer> impl;
};

namespace {

class CpuTimer final : public DeviceTimer {
public:
  tile_status start(void *) override {
    t0 = std::chrono::steady_clock::now();
    return TILE_STATUS_OK;
  }
  tile_status stop(void *, double &us) override {
    us = std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - t0)
             .count();
    return TILE_STATUS_OK;
  }

private:
  std::chrono::steady_clock::time_point t0;
};

/// Host memory, 64-byte aligned like the CPU target's own allocations.
class CpuMemory final : public DeviceMemory {
public:
  tile_status alloc(int32_t, size_t bytes, void **ptr) override {
    *ptr = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + (bytes ? 0 : 64));
    if (!*ptr)
      return fail(TILE_STATUS_OUT_OF_MEMORY,
                  "cannot allocate " + str(int64_t(bytes)) + " bytes");
    return TILE_STATUS_OK;
  }
  tile_status free(int32_t, void *ptr) override {
    std::free(ptr);
    return TILE_STATUS_OK;
  }
  tile_status copy(int32_t, void *dst, const void *src, size_t bytes,
                   bool) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return TILE_STATUS_OK;
  }
  tile_status createTimer(int32_t, std::unique_ptr<DeviceTimer> &out) override {
    out = std::make_unique<CpuTimer>();
    return TILE_STATUS_OK;
  }
};

/// The implementation for a DLPack device type, or nullptr after fail().
DeviceMemory *memoryFor(DLDevice device) {
  static CpuMemory cpu;
  static const struct {
    int32_t type;
    DeviceMemory &(*get)();
  } kTable[] = {
      {kDLCPU, []() -> DeviceMemory & { return cpu; }},
      {kDLCUDA, cudaMemory},
      {kDLROCM, hipMemory},
  };
  for (const auto &e : kTable)
    if (e.type == device.device_type)
      return &e.get();
  fail(TILE_STATUS_INVALID_ARGUMENT,
       "no device memory support for " + deviceTypeName(device.device_type));
  return nullptr;
}

template <typename F> tile_status guarded(F &&f) {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    return fail(TILE_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (...) {
    return fail(TILE_STATUS_INTERNAL, "internal error");
  }
}

} // namespace

extern "C" {

tile_status tile_device_alloc(DLDevice device, size_t bytes, void **ptr) {
  if (!ptr)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "ptr is NULL");
  *ptr = nullptr;
  DeviceMemory *m = memoryFor(device);
  return m ? guarded([&] { return m->alloc(device.device_id, bytes, ptr); })
           : TILE_STATUS_INVALID_ARGUMENT;
}

tile_status tile_device_free(DLDevice device, void *ptr) {
  if (!ptr)
    return TILE_STATUS_OK;
  DeviceMemory *m = memoryFor(device);
  return m ? guarded([&] { return m->free(device.device_id, ptr); })
           : TILE_STATUS_INVALID_ARGUMENT;
}

tile_status tile_device_copy_to_device(DLDevice device, void *dst,
                                       const void *src, size_t bytes) {
  if (bytes && (!dst || !src))
    return fail(TILE_STATUS_INVALID_ARGUMENT, "copy source or target is NULL");
  DeviceMemory *m = memoryFor(device);
  return m ? guarded([&] {
    return m->copy(device.device_id, dst, src, bytes, /*toDevice=*/true);
  })
           : TILE_STATUS_INVALID_ARGUMENT;
}

tile_status tile_device_copy_to_host(DLDevice device, void *dst,
                                     const void *src, size_t bytes) {
  if (bytes && (!dst || !src))
    return fail(TILE_STATUS_INVALID_ARGUMENT, "copy source or target is NULL");
  DeviceMemory *m = memoryFor(device);
  return m ? guarded([&] {
    return m->copy(device.device_id, dst, src, bytes, /*toDevice=*/false);
  })
           : TILE_STATUS_INVALID_ARGUMENT;
}

tile_status tile_timer_create(DLDevice device, tile_timer_t *out) {
  if (!out)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "out is NULL");
  *out = nullptr;
  DeviceMemory *m = memoryFor(device);
  if (!m)
    return TILE_STATUS_INVALID_ARGUMENT;
  return guarded([&] {
    auto t = std::make_unique<tile_timer>();
    if (tile_status st = m->createTimer(device.device_id, t->impl))
      return st;
    *out = t.release();
    return TILE_STATUS_OK;
  });
}

tile_status tile_timer_start(tile_timer_t timer, void *stream) {
  if (!timer)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "timer is NULL");
  return guarded([&] { return timer->impl->start(stream); });
}

tile_status tile_timer_stop(tile_timer_t timer, void *stream,
                            double *microseconds) {
  if (!timer || !microseconds)
    return fail(TILE_STATUS_INVALID_ARGUMENT, "timer or result is NULL");
  return guarded([&] { return timer->impl->stop(stream, *microseconds); });
}

void tile_timer_release(tile_timer_t timer) { delete timer; }

} // extern "C"
