//===- CpuDevice.h - CPU device layer internals, exposed for tests --------===//
#ifndef TILE_LIB_RUNTIME_CPUDEVICE_H
#define TILE_LIB_RUNTIME_CPUDEVICE_H

#include "Device.h"

namespace tile::rt::cpu {

/// Host allocation with a DLManagedTensor header, 64-byte aligned data.
DLManagedTensor *allocateHost(DLDataType dtype, int32_t ndim,
                              const int64_t *shape);

} // namespace tile::rt::cpu

#endif // TILE_LIB_RUNTIME_CPUDEVICE_H
