//===- Common.cpp - Runtime-internal helpers ------------------------------===//
#include "Common.h"

#include <cstdio>

namespace tile::rt {
namespace {
thread_local std::string tlsLastError;
} // namespace

tile_status fail(tile_status status, std::string message) {
  tlsLastError = std::move(message);
  return status;
}

const char *lastError() { return tlsLastError.c_str(); }

bool parseDType(std::string_view name, DLDataType &out) {
  return tile_dtype_from_name(std::string(name).c_str(), &out);
}

std::string dtypeName(DLDataType t) {
  if (const char *name = tile_dtype_name(t))
    return name;
  if (t.lanes != 1)
    if (const char *name = tile_dtype_name(DLDataType{t.code, t.bits, 1}))
      return std::string(name) + "x" + str(t.lanes);
  return "dtype(code=" + str(t.code) + ", bits=" + str(t.bits) +
         ", lanes=" + str(t.lanes) + ")";
}

DLDataType unpackDType(int64_t packed) {
  DLDataType t;
  t.code = static_cast<uint8_t>((packed >> 16) & 0xFF);
  t.bits = static_cast<uint8_t>((packed >> 8) & 0xFF);
  t.lanes = static_cast<uint16_t>(packed & 0xFF);
  return t;
}

std::string deviceTypeName(int64_t type) {
  switch (type) {
  case 1: return "cpu";
  case 2: return "cuda";
  case 3: return "cuda_host";
  case 4: return "opencl";
  case 7: return "vulkan";
  case 8: return "metal";
  case 9: return "vpi";
  case 10: return "rocm";
  case 11: return "rocm_host";
  case 12: return "ext_dev";
  case 13: return "cuda_managed";
  case 14: return "oneapi";
  case 15: return "webgpu";
  case 16: return "hexagon";
  default: return "device type " + str(type);
  }
}

std::string str(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  return buf;
}

} // namespace tile::rt
