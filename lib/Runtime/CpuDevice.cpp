//===- CpuDevice.cpp - CPU device layer: host.so + thread pool ------------===//
#include "Device.h"
#include "ThreadPool.h"

#include <cerrno>
#include <cstdint>
#include <vector>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tile::rt {
namespace cpu {
namespace {

bool writeAll(int fd, std::string_view bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    left -= size_t(n);
  }
  return true;
}

int memfdCreate(const char *name) {
#ifdef SYS_memfd_create
  // Through syscall(): glibc only has the wrapper since 2.27.
  return static_cast<int>(::syscall(SYS_memfd_create, name, 1u /*CLOEXEC*/));
#else
  (void)name;
  errno = ENOSYS;
  return -1;
#endif
}

} // namespace

bool stillLoaded(int fd) {
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void *h = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!h)
    return false;
  ::dlclose(h);
  return true;
}

void *loadSharedObject(std::string_view bytes, int &fdOut, std::string &error) {
  fdOut = -1;
  std::string firstError;
  int fd = memfdCreate("tile-host.so");
  if (fd >= 0 && stillLoaded(fd)) {
    // Someone else left a resident library under this fd's name (see
    // ~CpuModule); dlopen would hand us that one. Use a unique file instead.
    ::close(fd);
    fd = -1;
    firstError = "fd name already taken by a resident library";
  }
  if (fd >= 0) {
    if (writeAll(fd, bytes)) {
      std::string path = "/proc/self/fd/" + std::to_string(fd);
      if (void *h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        // Keep the fd open while the library is loaded: glibc matches
        // dlopen() names textually, and a reused fd number would otherwise
        // make the next kernel's "/proc/self/fd/N" resolve to this one.
        fdOut = fd;
        return h;
      }
      const char *e = ::dlerror();
      firstError = e ? e : "dlopen failed";
    } else {
      firstError = std::string("writing memfd: ") + std::strerror(errno);
    }
    ::close(fd);
  }
  // Fallback (no memfd, or /proc not mounted): a private temporary file,
  // unlinked as soon as it is mapped.
  const char *dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") +
                     "/tile-host-XXXXXX.so";
  std::vector<char> path(tmpl.begin(), tmpl.end());
  path.push_back('\0');
  fd = ::mkstemps(path.data(), 3);
  if (fd < 0) {
    error = "cannot load host.so: " +
            (firstError.empty() ? std::string("memfd_create failed")
                                : firstError) +
            "; temporary file: " + std::strerror(errno);
    return nullptr;
  }
  void *h = nullptr;
  if (writeAll(fd, bytes)) {
    h = ::dlopen(path.data(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = ::dlerror();
      error = std::string("cannot load host.so: ") + (e ? e : "dlopen failed");
    }
  } else {
    error = std::string("cannot load host.so: writing ") + path.data() +
            ": " + std::strerror(errno);
  }
  ::unlink(path.data());
  ::close(fd);
  return h;
}

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
    if (fd_ >= 0 && !cpu::stillLoaded(fd_))
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

tile_status loadCpu(const KernelPlan &plan, const bundle::Reader &bundle,
                    std::unique_ptr<DeviceModule> &out) {
  const bundle::SectionView *so = bundle.find("host.so");
  if (!so)
    return fail(TILE_STATUS_BUNDLE_ERROR,
                "bundle for target 'cpu' has no 'host.so' section");
  std::string error;
  int fd = -1;
  void *handle = cpu::loadSharedObject(so->bytes(), fd, error);
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

} // namespace

tile_status loadDeviceModule(const KernelPlan &plan,
                             const bundle::Reader &bundle,
                             std::unique_ptr<DeviceModule> &out) {
  switch (plan.target) {
  case TargetKind::Cpu:
    return loadCpu(plan, bundle, out);
  case TargetKind::Cuda:
    return loadCudaModule(plan, bundle, out);
  case TargetKind::Hip:
    // Seam for the GPU device layer (driver API via dlopen, no link-time
    // dependency). Until it exists, say so instead of failing obscurely.
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "kernel '" + plan.name + "' targets '" + plan.targetKindName +
                    "', but this runtime build has no " +
                    plan.targetKindName + " device layer yet");
  case TargetKind::Metal:
    break;
  }
  return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
              "target '" + plan.targetKindName +
                  "' has no device layer in the C runtime");
}

} // namespace tile::rt
