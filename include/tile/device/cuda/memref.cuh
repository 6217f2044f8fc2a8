// memref.cuh - MLIR memrefs in tile's generated CUDA C++.
//
// A memref is its strided descriptor without the allocated pointer:
// element (i0, ..., iR-1) lives at data[offset + sum(ik * strides[k])]. A
// kernel parameter arrives in the CUDA kernel ABI of docs/bundle.md
// (allocated, aligned, offset, sizes[R], strides[R]) and becomes one with
// make_memref; shared-memory views and per-thread arrays get theirs with
// view / local_memref. Indices are 64-bit, as the LLVM path's.
#pragma once

namespace tile {

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
#pragma unroll
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
#pragma unroll
  for (int k = R - 1; k >= 0; --k) {
    m.sizes[k] = s[1 + k];
    m.strides[k] = stride;
    stride *= s[1 + k];
  }
  return m;
}

/// memref.view: `sizes` elements of T at byte `shift` of a byte buffer.
template <typename T, int R, typename... I>
TILE_DEVICE memref<T, R> view(const memref<int8_t, 1> &bytes, int64_t shift,
                              I... sizes) {
  return contiguous<R>(
      reinterpret_cast<T *>(bytes.data + bytes.offset + shift), sizes...);
}

/// memref.reinterpret_cast of `base` (offset, then R sizes, R strides).
template <int R, typename T, int S, typename... I>
TILE_DEVICE memref<T, R> reinterpret(const memref<T, S> &base, int64_t offset,
                                     I... sizesAndStrides) {
  return make_memref<R>(base.data, base.data, offset, sizesAndStrides...);
}

/// The rank-0 base buffer of memref.extract_strided_metadata.
template <typename T, int R> TILE_DEVICE memref<T, 0> base(const memref<T, R> &m) {
  memref<T, 0> b;
  b.data = m.data;
  b.offset = 0;
  return b;
}

template <typename T, int R> TILE_DEVICE size_t dim(const memref<T, R> &m, size_t k) {
  return size_t(m.sizes[k]);
}
template <typename T, int R>
TILE_DEVICE size_t stride(const memref<T, R> &m, size_t k) {
  return size_t(m.strides[k]);
}
template <typename T, int R> TILE_DEVICE size_t offset(const memref<T, R> &m) {
  return size_t(m.offset);
}
/// memref.extract_aligned_pointer_as_index.
template <typename T, int R>
TILE_DEVICE size_t aligned_address(const memref<T, R> &m) {
  return size_t(reinterpret_cast<uint64_t>(m.data));
}

template <typename T, int R, typename... I>
TILE_DEVICE T *element(const memref<T, R> &m, I... indices) {
  static_assert(sizeof...(I) == R, "one index per dimension");
  const int64_t idx[] = {0, int64_t(indices)...};
  int64_t at = m.offset;
#pragma unroll
  for (int k = 0; k < R; ++k)
    at += idx[1 + k] * m.strides[k];
  return m.data + at;
}

template <typename T, int R, typename... I>
TILE_DEVICE T load(const memref<T, R> &m, I... indices) {
  return *element(m, indices...);
}
template <typename T, int R, typename V, typename... I>
TILE_DEVICE void store(const memref<T, R> &m, V value, I... indices) {
  *element(m, indices...) = T(value);
}
/// vector.load / vector.store of N consecutive elements (the lowering has
/// checked the alignment).
template <int N, typename T, int R, typename... I>
TILE_DEVICE vec<T, N> load_vec(const memref<T, R> &m, I... indices) {
  return *reinterpret_cast<const vec<T, N> *>(element(m, indices...));
}
template <typename T, int R, int N, typename... I>
TILE_DEVICE void store_vec(const memref<T, R> &m, const vec<T, N> &v,
                           I... indices) {
  *reinterpret_cast<vec<T, N> *>(element(m, indices...)) = v;
}

} // namespace tile
