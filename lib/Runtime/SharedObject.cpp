//===- SharedObject.cpp - Loading a shared object from memory -------------===//
#include "SharedObject.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace tile::rt::host {
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

} // namespace tile::rt::host
