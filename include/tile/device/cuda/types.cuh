// types.cuh - scalar and vector types of tile's generated CUDA C++.
//
// Part of tile's device header library (include/tile/device/cuda): the
// building blocks the EmitC-generated kernels of the `nvrtc` backend call
// (docs/pipelines.md, "CUDA C++ for NVRTC"). The library is self-contained
// (NVRTC compiles it with no include path: not even <stdint.h> or
// <cuda_fp16.h>) and tilec prepends it to the bundle's `cuda` section, in
// the order types, memref, intrinsics. Every function is
// __device__ __forceinline__, so the generated code compiles to the same
// instructions as the LLVM path's.
#pragma once

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;

// MLIR's C++ emitter prints non-finite float constants with the C macros.
#ifndef INFINITY
#define INFINITY (__int_as_float(0x7f800000))
#endif
#ifndef NAN
#define NAN (__int_as_float(0x7fffffff))
#endif

#define TILE_DEVICE __device__ __forceinline__

namespace tile {

template <typename To, typename From> TILE_DEVICE To bitcast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between sizes");
  union {
    From from;
    To to;
  } u;
  u.from = v;
  return u.to;
}

/// IEEE binary16, stored as its bits. Arithmetic goes through float: for
/// +, -, *, / the float result rounded to half is the correctly rounded half
/// result (24 >= 2 * 11 + 2 bits), as the PTX f16 instructions give.
struct half {
  uint16_t bits;
  half() = default;
  TILE_DEVICE half(float f) {
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  }
  TILE_DEVICE operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
  }
};

/// bfloat16, stored as its bits (round to nearest even from float).
struct bfloat16 {
  uint16_t bits;
  bfloat16() = default;
  TILE_DEVICE bfloat16(float f) {
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  }
  TILE_DEVICE operator float() const {
    return __uint_as_float(uint32_t(bits) << 16);
  }
};

/// A fixed-size vector (MLIR vector<...xT>, flattened row-major), aligned
/// to its size so that a vector store is one st.v instruction.
template <typename T, int N> struct alignas(sizeof(T) * N) vec {
  T v[N];
};

template <typename T, typename... Ts>
TILE_DEVICE vec<T, 1 + sizeof...(Ts)> make_vec(T first, Ts... rest) {
  return vec<T, 1 + sizeof...(Ts)>{{first, T(rest)...}};
}

template <typename T, int N> TILE_DEVICE T extract(const vec<T, N> &v, int i) {
  return v.v[i];
}

/// Row `row` (of `M` elements) of a flattened 2-D vector.
template <int M, typename T, int N>
TILE_DEVICE vec<T, M> extract_row(const vec<T, N> &v, int row) {
  vec<T, M> out;
#pragma unroll
  for (int i = 0; i < M; ++i)
    out.v[i] = v.v[row * M + i];
  return out;
}

/// vector.shuffle of the rows (of M elements) of a and b: Mask... index the
/// concatenation.
template <int M, int... Mask, typename T, int N>
TILE_DEVICE vec<T, M * sizeof...(Mask)> shuffle(const vec<T, N> &a,
                                                const vec<T, N> &b) {
  constexpr int mask[] = {Mask...};
  vec<T, M * sizeof...(Mask)> out;
#pragma unroll
  for (int r = 0; r < int(sizeof...(Mask)); ++r)
#pragma unroll
    for (int i = 0; i < M; ++i)
      out.v[r * M + i] = mask[r] * M < N ? a.v[mask[r] * M + i]
                                         : b.v[mask[r] * M - N + i];
  return out;
}

} // namespace tile
