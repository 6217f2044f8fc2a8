//===- Common.cpp - Runtime-internal helpers ------------------------------===//
#include "Common.h"

#include <cstdio>

namespace tile::rt {
namespace {
thread_local std::string tlsLastError;

struct DTypeEntry {
  const char *name;
  uint8_t code, bits;
};
// The metadata dtype vocabulary (docs/bundle.md) and its DLPack encoding.
constexpr DTypeEntry kDTypes[] = {
    {"bool", TILE_DL_BOOL, 8},
    {"int8", kDLInt, 8},
    {"int16", kDLInt, 16},
    {"int32", kDLInt, 32},
    {"int64", kDLInt, 64},
    {"uint8", kDLUInt, 8},
    {"uint16", kDLUInt, 16},
    {"uint32", kDLUInt, 32},
    {"uint64", kDLUInt, 64},
    {"float16", kDLFloat, 16},
    {"bfloat16", kDLBfloat, 16},
    {"float32", kDLFloat, 32},
    {"float64", kDLFloat, 64},
    {"float8_e4m3fn", TILE_DL_FLOAT8_E4M3FN, 8},
    {"float8_e5m2", TILE_DL_FLOAT8_E5M2, 8},
};
} // namespace

tile_status fail(tile_status status, std::string message) {
  tlsLastError = std::move(message);
  return status;
}

const char *lastError() { return tlsLastError.c_str(); }

bool parseDType(std::string_view name, DLDataType &out) {
  for (const DTypeEntry &e : kDTypes)
    if (name == e.name) {
      out.code = e.code;
      out.bits = e.bits;
      out.lanes = 1;
      return true;
    }
  return false;
}

std::string dtypeName(DLDataType t) {
  for (const DTypeEntry &e : kDTypes)
    if (t.code == e.code && t.bits == e.bits) {
      if (t.lanes == 1)
        return e.name;
      return std::string(e.name) + "x" + str(t.lanes);
    }
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
