// memref.h - MLIR memrefs in tile's generated MSL.
//
// As include/tile/device/cuda/memref.cuh, with the address space in the
// element type: memref<device float, 2> (kernel parameters),
// memref<threadgroup f16, 2> (views of the threadgroup memory),
// memref<thread float, 1> (per-thread arrays); MSL has no generic pointer.
// Indices are 64-bit, as the LLVM path's.
#pragma once

namespace tile {

/// The value type of an address-space-qualified element type.
template <typename T> struct value_of { typedef T type; };
#if defined(__METAL_VERSION__)
template <typename T> struct value_of<device T> { typedef T type; };
template <typename T> struct value_of<threadgroup T> { typedef T type; };
template <typename T> struct value_of<thread T> { typedef T type; };
#endif

template <typename T, int R> struct memref {
  T *data;
  int64_t offset;
  int64_t sizes[R > 0 ? R : 1];
  int64_t strides[R > 0 ? R : 1];
};

/// From the kernel ABI's fields (the allocated pointer is not used).
template <int R, typename T, typename... I>
TILE_DEVICE memref<T, R> make_memref(T *allocated, T *aligned, int64_t offset,
                                     I... sizesAndStrides) {
  static_assert(sizeof...(I) == 2 * R, "sizes and strides");
  const int64_t f[] = {0, int64_t(sizesAndStrides)...};
  memref<T, R> m;
  m.data = aligned;
  m.offset = offset;
  for (int k = 0; k < R; ++k) {
    m.sizes[k] = f[1 + k];
    m.strides[k] = f[1 + R + k];
  }
  return m;
}

/// A contiguous row-major memref of the given sizes at `data`.
template <int R, typename T, typename... I>
TILE_DEVICE memref<T, R> contiguous(T *data, I... sizes) {
  static_assert(sizeof...(I) == R, "one size per dimension");
  const int64_t s[] = {0, int64_t(sizes)...};
  memref<T, R> m;
  m.data = data;
  m.offset = 0;
  int64_t stride = 1;
  for (int k = R - 1; k >= 0; --k) {
    m.sizes[k] = s[1 + k];
    m.strides[k] = stride;
    stride *= s[1 + k];
  }
  return m;
}

/// memref.view: `sizes` elements of T (threadgroup) at byte `shift` of the
/// threadgroup memory.
template <typename T, int R, typename... I>
TILE_DEVICE memref<T, R> view(thread const memref<threadgroup int8_t, 1> &bytes,
                              int64_t shift, I... sizes) {
  return contiguous<R>(
      reinterpret_cast<T *>(bytes.data + bytes.offset + shift), sizes...);
}

/// memref.reinterpret_cast of `base` (offset, then R sizes, R strides).
template <int R, typename T, int S, typename... I>
TILE_DEVICE memref<T, R> reinterpret(thread const memref<T, S> &base,
                                     int64_t offset, I... sizesAndStrides) {
  return make_memref<R>(base.data, base.data, offset, sizesAndStrides...);
}

/// The rank-0 base buffer of memref.extract_strided_metadata.
template <typename T, int R>
TILE_DEVICE memref<T, 0> base(thread const memref<T, R> &m) {
  memref<T, 0> b;
  b.data = m.data;
  b.offset = 0;
  return b;
}

template <typename T, int R>
TILE_DEVICE size_t dim(thread const memref<T, R> &m, size_t k) {
  return size_t(m.sizes[k]);
}
template <typename T, int R>
TILE_DEVICE size_t stride(thread const memref<T, R> &m, size_t k) {
  return size_t(m.strides[k]);
}
template <typename T, int R>
TILE_DEVICE size_t offset(thread const memref<T, R> &m) {
  return size_t(m.offset);
}
/// memref.extract_aligned_pointer_as_index (alignment checks only).
template <typename T, int R>
TILE_DEVICE size_t aligned_address(thread const memref<T, R> &m) {
  return size_t((ulong)(m.data));
}

template <typename T, int R, typename... I>
TILE_DEVICE T *element(thread const memref<T, R> &m, I... indices) {
  static_assert(sizeof...(I) == R, "one index per dimension");
  const int64_t idx[] = {0, int64_t(indices)...};
  int64_t at = m.offset;
  for (int k = 0; k < R; ++k)
    at += idx[1 + k] * m.strides[k];
  return m.data + at;
}

template <typename T, int R, typename... I>
TILE_DEVICE typename value_of<T>::type load(thread const memref<T, R> &m,
                                            I... indices) {
  return *element(m, indices...);
}
template <typename T, int R, typename V, typename... I>
TILE_DEVICE void store(thread const memref<T, R> &m, V value, I... indices) {
  *element(m, indices...) = typename value_of<T>::type(value);
}
/// vector.load / vector.store of N consecutive elements, one at a time
/// (the kernel's vector types are plain structs in MSL).
template <int N, typename T, int R, typename... I>
TILE_DEVICE vec<typename value_of<T>::type, N>
load_vec(thread const memref<T, R> &m, I... indices) {
  vec<typename value_of<T>::type, N> out;
  T *p = element(m, indices...);
  for (int i = 0; i < N; ++i)
    out.v[i] = p[i];
  return out;
}
template <typename T, int R, typename E, int N, typename... I>
TILE_DEVICE void store_vec(thread const memref<T, R> &m,
                           thread const vec<E, N> &v, I... indices) {
  T *p = element(m, indices...);
  for (int i = 0; i < N; ++i)
    p[i] = v.v[i];
}

} // namespace tile
