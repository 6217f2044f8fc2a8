//===- DeviceMemory.h - plain device buffers and timers -------------------===//
//
// Behind tile_device_* and tile_timer_* (tile_runtime.h): memory and timing
// for C programs without a framework (tile-run). One implementation per
// device type, found by DLPack device type in DeviceMemory.cpp's table; the
// CPU one is in DeviceMemory.cpp, the CUDA one (the driver layer of
// CudaDriver.h) in CudaMemory.cpp, the HIP one in Hip/HipMemory.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_DEVICEMEMORY_H
#define TILE_LIB_RUNTIME_DEVICEMEMORY_H

#include "tile/Runtime/tile_runtime.h"

#include <memory>

namespace tile::rt {

/// Measures device time between start and stop on a stream.
class DeviceTimer {
public:
  virtual ~DeviceTimer() = default;
  virtual tile_status start(void *stream) = 0;
  /// Waits for the stop mark; a failure of the timed work surfaces here.
  virtual tile_status stop(void *stream, double &microseconds) = 0;
};

/// Memory and timers of one device type. Every method fail()s with the
/// reason before returning a non-OK status.
class DeviceMemory {
public:
  virtual ~DeviceMemory() = default;
  virtual tile_status alloc(int32_t device, size_t bytes, void **ptr) = 0;
  virtual tile_status free(int32_t device, void *ptr) = 0;
  virtual tile_status copy(int32_t device, void *dst, const void *src,
                           size_t bytes, bool toDevice) = 0;
  virtual tile_status createTimer(int32_t device,
                                  std::unique_ptr<DeviceTimer> &out) = 0;
};

/// The CUDA implementation (CudaMemory.cpp).
DeviceMemory &cudaMemory();
/// The HIP implementation (Hip/HipMemory.cpp).
DeviceMemory &hipMemory();

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_DEVICEMEMORY_H
