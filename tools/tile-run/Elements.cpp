//===- Elements.cpp - Element conversions for tile-run --------------------===//
#include "Elements.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tilerun {

uint32_t encodeMinifloat(double v, int ebits, int mbits, bool ieee) {
  const uint32_t sign = std::signbit(v) ? 1u << (ebits + mbits) : 0;
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t expMax = (1u << ebits) - 1;
  const uint32_t nanBits = ieee ? (expMax << mbits) | (1u << (mbits - 1))
                                : (expMax << mbits) | ((1u << mbits) - 1);
  if (std::isnan(v))
    return sign | nanBits;
  double a = std::fabs(v);
  // Largest finite: ieee formats reserve the top exponent; "fn" formats only
  // reserve the all-ones mantissa of the top exponent.
  const int maxExp = ieee ? int(expMax) - 1 - bias : int(expMax) - bias;
  const double maxMant = ieee ? 2.0 - std::ldexp(1.0, -mbits)
                              : 2.0 - std::ldexp(1.0, 1 - mbits);
  const double maxFinite = std::ldexp(maxMant, maxExp);
  auto overflow = [&] {
    return ieee ? sign | (expMax << mbits)            // inf
                : sign | (nanBits - 1);               // saturate to max
  };
  if (std::isinf(a))
    return ieee ? sign | (expMax << mbits) : sign | nanBits;
  const int minExp = 1 - bias;
  int e;
  std::frexp(a, &e);
  e -= 1; // a = m * 2^e with m in [1, 2)
  if (a == 0.0)
    return sign;
  if (e < minExp) {
    // Subnormal: integer multiple of 2^(minExp - mbits). Rounding may carry
    // into the smallest normal, which the bit pattern handles naturally.
    double q = std::nearbyint(std::ldexp(a, mbits - minExp));
    return sign | uint32_t(q);
  }
  double q = std::nearbyint(std::ldexp(a, mbits - e)); // in [2^m, 2^(m+1)]
  if (q >= std::ldexp(1.0, mbits + 1)) {
    q /= 2;
    ++e;
  }
  if (e > maxExp || std::ldexp(q, e - mbits) > maxFinite)
    return overflow();
  return sign | (uint32_t(e + bias) << mbits) |
         (uint32_t(q) - (1u << mbits));
}

double decodeMinifloat(uint32_t bits, int ebits, int mbits, bool ieee) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t expMax = (1u << ebits) - 1;
  const bool neg = (bits >> (ebits + mbits)) & 1;
  const uint32_t exp = (bits >> mbits) & expMax;
  const uint32_t mant = bits & ((1u << mbits) - 1);
  double r;
  if (ieee && exp == expMax)
    r = mant ? std::numeric_limits<double>::quiet_NaN()
             : std::numeric_limits<double>::infinity();
  else if (!ieee && exp == expMax && mant == (1u << mbits) - 1)
    r = std::numeric_limits<double>::quiet_NaN();
  else if (exp == 0)
    r = std::ldexp(double(mant), 1 - bias - mbits);
  else
    r = std::ldexp(1.0 + std::ldexp(double(mant), -mbits), int(exp) - bias);
  return neg ? -r : r;
}

bool isFloatType(DLDataType t) {
  return t.code == kDLFloat || t.code == kDLBfloat ||
         t.code == TILE_DL_FLOAT8_E4M3FN || t.code == TILE_DL_FLOAT8_E5M2;
}

namespace {
template <typename T> T get(const void *base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char *>(base) + i * int64_t(sizeof(T)),
              sizeof(T));
  return v;
}
template <typename T> void put(void *base, int64_t i, T v) {
  std::memcpy(static_cast<char *>(base) + i * int64_t(sizeof(T)), &v,
              sizeof(T));
}
template <typename T> T clampTo(double v) {
  if (std::isnan(v))
    return T(0);
  double lo = double(std::numeric_limits<T>::lowest());
  double hi = double(std::numeric_limits<T>::max());
  if (v <= lo)
    return std::numeric_limits<T>::lowest();
  if (v >= hi)
    return std::numeric_limits<T>::max();
  return T(std::llround(v));
}
uint16_t bf16FromDouble(double v) {
  float f = float(v);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f))
    return uint16_t((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1); // round to nearest even
  return uint16_t(u >> 16);
}
double bf16ToDouble(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
} // namespace

double loadElement(DLDataType t, const void *base, int64_t i) {
  switch (t.code) {
  case kDLFloat:
    if (t.bits == 16)
      return decodeMinifloat(get<uint16_t>(base, i), 5, 10, true);
    if (t.bits == 32)
      return get<float>(base, i);
    return get<double>(base, i);
  case kDLBfloat:
    return bf16ToDouble(get<uint16_t>(base, i));
  case TILE_DL_FLOAT8_E4M3FN:
    return decodeMinifloat(get<uint8_t>(base, i), 4, 3, false);
  case TILE_DL_FLOAT8_E5M2:
    return decodeMinifloat(get<uint8_t>(base, i), 5, 2, true);
  case TILE_DL_BOOL:
    return get<uint8_t>(base, i) != 0;
  case kDLInt:
    switch (t.bits) {
    case 8: return get<int8_t>(base, i);
    case 16: return get<int16_t>(base, i);
    case 32: return get<int32_t>(base, i);
    default: return double(get<int64_t>(base, i));
    }
  default: // kDLUInt
    switch (t.bits) {
    case 8: return get<uint8_t>(base, i);
    case 16: return get<uint16_t>(base, i);
    case 32: return get<uint32_t>(base, i);
    default: return double(get<uint64_t>(base, i));
    }
  }
}

void storeElement(DLDataType t, void *base, int64_t i, double v) {
  switch (t.code) {
  case kDLFloat:
    if (t.bits == 16)
      return put<uint16_t>(base, i, uint16_t(encodeMinifloat(v, 5, 10, true)));
    if (t.bits == 32)
      return put<float>(base, i, float(v));
    return put<double>(base, i, v);
  case kDLBfloat:
    return put<uint16_t>(base, i, bf16FromDouble(v));
  case TILE_DL_FLOAT8_E4M3FN:
    return put<uint8_t>(base, i, uint8_t(encodeMinifloat(v, 4, 3, false)));
  case TILE_DL_FLOAT8_E5M2:
    return put<uint8_t>(base, i, uint8_t(encodeMinifloat(v, 5, 2, true)));
  case TILE_DL_BOOL:
    return put<uint8_t>(base, i, v != 0.0);
  case kDLInt:
    switch (t.bits) {
    case 8: return put(base, i, clampTo<int8_t>(v));
    case 16: return put(base, i, clampTo<int16_t>(v));
    case 32: return put(base, i, clampTo<int32_t>(v));
    default: return put(base, i, clampTo<int64_t>(v));
    }
  default:
    switch (t.bits) {
    case 8: return put(base, i, clampTo<uint8_t>(v));
    case 16: return put(base, i, clampTo<uint16_t>(v));
    case 32: return put(base, i, clampTo<uint32_t>(v));
    default: return put(base, i, clampTo<uint64_t>(v));
    }
  }
}

} // namespace tilerun
