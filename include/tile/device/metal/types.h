// types.h - scalar and vector types of tile's generated Metal Shading
// Language (the metal target's `msl` section, docs/pipelines.md "Metal").
//
// Part of tile's MSL device library (include/tile/device/metal): the
// implementations, in MSL, of the calls the EmitC lowering emits (the same
// names as the CUDA library, include/tile/device/cuda). tilec prepends the
// three files' text (types, memref, intrinsics) to each generated source,
// so torch.mps.compile_shader needs no include path.
//
// MSL reserves `half` and `bfloat`, so the 16-bit float types are tile::f16
// (MSL's half) and tile::bf16 (bits in a ushort: MSL's bfloat needs Metal
// 3.1; the arithmetic goes through float as on the CUDA side). MSL has no
// double: f64 kernels are rejected by the metal target.
#pragma once

#include <metal_stdlib>
using namespace metal;

// MSL names its integer types int8_t ... uint64_t, size_t and ptrdiff_t
// itself (char, ..., ulong), as the generated code spells them.

#define TILE_DEVICE inline __attribute__((always_inline))
// The storage of the entry's threadgroup array (the one hook of the
// test-only CPU shim, test/Metal/shim, which runs a threadgroup's threads
// as CPU threads and makes it static).
#ifndef TILE_THREADGROUP_ARRAY
#define TILE_THREADGROUP_ARRAY threadgroup
#endif

namespace tile {

typedef half f16;

/// bfloat16 as its bits (round to nearest even from float).
struct bf16 {
  ushort bits;
  bf16() = default;
  TILE_DEVICE bf16(float f) {
    uint u = as_type<uint>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
      bits = ushort((u >> 16) | 0x40u); // quiet NaN
    else
      bits = ushort((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  TILE_DEVICE operator float() const { return as_type<float>(uint(bits) << 16); }
};

/// A fixed-size vector (MLIR vector<...xT>, flattened row-major).
template <typename T, int N> struct vec {
  T v[N];
};

template <typename To, typename From> TILE_DEVICE To bitcast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between sizes");
  thread From tmp = v;
  return *reinterpret_cast<thread To *>(&tmp);
}

template <typename T, typename... Ts>
TILE_DEVICE vec<T, 1 + sizeof...(Ts)> make_vec(T first, Ts... rest) {
  vec<T, 1 + sizeof...(Ts)> out = {{first, T(rest)...}};
  return out;
}

template <typename T, int N>
TILE_DEVICE T extract(thread const vec<T, N> &v, int i) {
  return v.v[i];
}

/// Row `row` (of `M` elements) of a flattened 2-D vector.
template <int M, typename T, int N>
TILE_DEVICE vec<T, M> extract_row(thread const vec<T, N> &v, int row) {
  vec<T, M> out;
  for (int i = 0; i < M; ++i)
    out.v[i] = v.v[row * M + i];
  return out;
}

/// vector.shuffle of the rows (of M elements) of a and b: Mask... index the
/// concatenation.
template <int M, int... Mask, typename T, int N>
TILE_DEVICE vec<T, M * sizeof...(Mask)> shuffle(thread const vec<T, N> &a,
                                                thread const vec<T, N> &b) {
  const int mask[] = {Mask...};
  vec<T, M * sizeof...(Mask)> out;
  for (int r = 0; r < int(sizeof...(Mask)); ++r)
    for (int i = 0; i < M; ++i)
      out.v[r * M + i] = mask[r] * M < N ? a.v[mask[r] * M + i]
                                         : b.v[mask[r] * M - N + i];
  return out;
}

/// A scalar parameter's int64 word of the Metal kernel ABI (integers
/// sign-extended, floats as their bits), converted to the body's type.
struct scalar_arg {
  int64_t bits;
  TILE_DEVICE explicit scalar_arg(int64_t b) : bits(b) {}
  template <typename T> TILE_DEVICE operator T() const { return T(bits); }
  TILE_DEVICE operator float() const { return as_type<float>(uint(bits)); }
  TILE_DEVICE operator f16() const { return as_type<f16>(ushort(bits)); }
  TILE_DEVICE operator bf16() const {
    bf16 b;
    b.bits = ushort(bits);
    return b;
  }
};

/// What the entry (`kernel void`) hands to the kernel body: MSL has no
/// global thread-position built-ins, so the body receives them, the
/// threadgroup memory and the lane index as one value.
struct thread_context {
  uint3 tid;  // thread_position_in_threadgroup
  uint3 bid;  // threadgroup_position_in_grid
  uint3 ntid; // threads_per_threadgroup
  uint3 nbid; // threadgroups_per_grid
  ushort lane; // thread_index_in_simdgroup
  threadgroup int8_t *smem;
};

} // namespace tile
