//===- CpuDevice.cpp - CPU device layer: host.so + thread pool ------------===//
#include "CpuDevice.h"
#include "SharedObject.h"
#include "ThreadPool.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

namespace tile::rt {
namespace cpu {
namespace {
// One block: [DLManagedTensor | shape | pad to 64 | data]. A single
// allocation keeps allocation cheap and the deleter trivial.
void freeHostTensor(DLManagedTensor *self) { std::free(self); }
} // namespace

DLManagedTensor *allocateHost(DLDataType dtype, int32_t ndim,
                              const int64_t *shape) {
  constexpr size_t kAlign = 64;
  int64_t elems = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    // Refuse sizes whose byte count could overflow (elements are <= 8
    // bytes for every metadata dtype, lanes aside).
    if (shape[d] < 0 || (shape[d] > 0 && elems > (INT64_MAX >> 12) / shape[d]))
      return nullptr;
    elems *= shape[d];
  }
  size_t header = sizeof(DLManagedTensor) + sizeof(int64_t) * size_t(ndim);
  header = (header + kAlign - 1) / kAlign * kAlign;
  size_t bytes = size_t(elems) * size_t(elementBytes(dtype));
  void *mem = nullptr;
  if (::posix_memalign(&mem, kAlign, header + (bytes ? bytes : 1)) != 0)
    return nullptr;
  auto *mt = static_cast<DLManagedTensor *>(mem);
  auto *dims = reinterpret_cast<int64_t *>(mt + 1);
  std::memcpy(dims, shape, sizeof(int64_t) * size_t(ndim));
  DLTensor &t = mt->dl_tensor;
  t.data = static_cast<char *>(mem) + header;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = dims;
  t.strides = nullptr;
  t.byte_offset = 0;
  mt->manager_ctx = nullptr;
  mt->deleter = freeHostTensor;
  return mt;
}

} // namespace cpu

namespace {

class CpuModule final : public DeviceModule {
public:
  CpuModule(void *handle, int fd, tile_blocks_fn blocks)
      : handle_(handle), fd_(fd), blocks_(blocks),
        pool_(ThreadPool::global()) {}
  ~CpuModule() override {
    ::dlclose(handle_);
    if (fd_ >= 0 && !host::stillLoaded(fd_))
      ::close(fd_);
    // Otherwise the library stayed resident (DF_1_NODELETE: linked with
    // -z nodelete, or pinned by TLS destructors) and glibc still knows it as
    // "/proc/self/fd/N". The fd is kept open for good so that no later
    // kernel's memfd can get number N and be aliased to this library.
  }

  void *hostSymbol(const char *name) const override {
    return ::dlsym(handle_, name);
  }

  tile_status run(void **args, int64_t gx, int64_t gy, int64_t gz, void *,
                  int32_t) const override {
    pool_.run(blocks_, args, gx, gy, gz);
    return TILE_STATUS_OK;
  }

  DLManagedTensor *allocate(DLDataType dtype, int32_t ndim,
                            const int64_t *shape, void *,
                            int32_t) const override {
    return cpu::allocateHost(dtype, ndim, shape);
  }

private:
  void *handle_;
  int fd_;
  tile_blocks_fn blocks_;
  ThreadPool &pool_;
};

} // namespace

tile_status loadCpuModule(const KernelPlan &plan, const bundle::Reader &bundle,
                          std::unique_ptr<DeviceModule> &out) {
  const bundle::SectionView *so = bundle.find("host.so");
  if (!so)
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle for target 'cpu' has no 'host.so' section");
  std::string error;
  int fd = -1;
  void *handle = host::loadSharedObject(so->bytes(), fd, error);
  if (!handle)
    return fail(TILE_STATUS_BUNDLE_ERROR, error);
  auto blocks = reinterpret_cast<tile_blocks_fn>(
      ::dlsym(handle, plan.entryBlocks.c_str()));
  if (!blocks) {
    ::dlclose(handle);
    if (fd >= 0)
      ::close(fd);
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "host.so does not define the block function '" +
                    plan.entryBlocks + "'");
  }
  out = std::make_unique<CpuModule>(handle, fd, blocks);
  return TILE_STATUS_OK;
}

} // namespace tile::rt
