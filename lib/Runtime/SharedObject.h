//===- SharedObject.h - Loading a shared object from memory ---------------===//
//
// The device layers' host code (the CPU target's host.so, a GPU target's
// native.so) arrives as bytes inside the bundle. loadSharedObject makes them
// dlopen()able without touching the file system where possible: a memfd
// opened as /proc/self/fd/<fd>, falling back to an unlinked mkstemp file.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_SHAREDOBJECT_H
#define TILE_LIB_RUNTIME_SHAREDOBJECT_H

#include <string>
#include <string_view>

namespace tile::rt::host {

/// dlopen()s the shared object in `bytes` (RTLD_NOW | RTLD_LOCAL). On
/// success returns the handle and the fd to close after dlclose (-1 if
/// none); on failure nullptr with `error` ("cannot load host.so: ...").
void *loadSharedObject(std::string_view bytes, int &fd, std::string &error);

/// True if a library dlopen()ed as "/proc/self/fd/<fd>" is still resident.
bool stillLoaded(int fd);

} // namespace tile::rt::host

#endif // TILE_LIB_RUNTIME_SHAREDOBJECT_H
