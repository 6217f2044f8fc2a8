// intrinsics.h - the per-thread building blocks of tile's generated MSL:
// indices, barriers, SIMD-group shuffles, atomics, the sm_80 instruction
// set the shared lowering selects (cp.async, ldmatrix, mma.sync) expressed
// with Metal's SIMD-group functions and simdgroup_matrix, and the
// arith/math operations C++ has no operator for. The names are those of
// the CUDA library (include/tile/device/cuda/intrinsics.cuh); the calls
// that need the thread's position take the tile::thread_context last
// (tile-metal-thread-context adds it).
//
// A SIMD-group is 32 threads on every Apple GPU, like a warp: the lowering's
// lane arithmetic (lane = thread % 32) holds.
#pragma once

namespace tile {

// ---- indices and barriers ---------------------------------------------------
// `Bound`: the kernel's known threadgroup size in that dimension.
template <unsigned Bound = 1024>
TILE_DEVICE size_t thread_id_x(thread_context c) { return c.tid.x; }
template <unsigned Bound = 1024>
TILE_DEVICE size_t thread_id_y(thread_context c) { return c.tid.y; }
template <unsigned Bound = 64>
TILE_DEVICE size_t thread_id_z(thread_context c) { return c.tid.z; }
TILE_DEVICE size_t block_id_x(thread_context c) { return c.bid.x; }
TILE_DEVICE size_t block_id_y(thread_context c) { return c.bid.y; }
TILE_DEVICE size_t block_id_z(thread_context c) { return c.bid.z; }
template <unsigned Bound = 1024>
TILE_DEVICE size_t block_dim_x(thread_context c) { return c.ntid.x; }
template <unsigned Bound = 1024>
TILE_DEVICE size_t block_dim_y(thread_context c) { return c.ntid.y; }
template <unsigned Bound = 64>
TILE_DEVICE size_t block_dim_z(thread_context c) { return c.ntid.z; }
TILE_DEVICE size_t grid_dim_x(thread_context c) { return c.nbid.x; }
TILE_DEVICE size_t grid_dim_y(thread_context c) { return c.nbid.y; }
TILE_DEVICE size_t grid_dim_z(thread_context c) { return c.nbid.z; }
/// gpu.barrier (__syncthreads): threadgroup and device memory.
TILE_DEVICE void barrier() {
  threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
}

/// gpu.dynamic_shared_memory: the threadgroup memory the entry declares
/// (metadata shared_bytes, 16-byte aligned).
TILE_DEVICE memref<threadgroup int8_t, 1> dynamic_shared_memory(thread_context c) {
  return contiguous<1>(c.smem, int64_t(1) << 30);
}

// ---- SIMD-group shuffles (gpu.shuffle; width <= 32) -------------------------
// simd_shuffle takes 32-bit and smaller scalars; wider ones go as two
// halves, bf16 as its bits.
template <typename T> TILE_DEVICE T simd_read(T v, ushort lane) {
  return simd_shuffle(v, lane);
}
TILE_DEVICE bf16 simd_read(bf16 v, ushort lane) {
  bf16 r;
  r.bits = simd_shuffle(v.bits, lane);
  return r;
}
TILE_DEVICE ulong simd_read(ulong v, ushort lane) {
  uint lo = simd_shuffle(uint(v), lane), hi = simd_shuffle(uint(v >> 32), lane);
  return (ulong(hi) << 32) | lo;
}
TILE_DEVICE long simd_read(long v, ushort lane) {
  return long(simd_read(ulong(v), lane));
}
/// The reductions' butterflies: simd_shuffle_xor for the 32-bit and
/// smaller types it takes (mask < width <= 32 stays in the segment).
template <typename T>
TILE_DEVICE T shuffle_xor(T v, int32_t mask, int32_t width, thread_context c) {
  return simd_shuffle_xor(v, ushort(mask));
}
TILE_DEVICE bf16 shuffle_xor(bf16 v, int32_t mask, int32_t width,
                             thread_context c) {
  return simd_read(v, ushort(c.lane ^ mask));
}
TILE_DEVICE ulong shuffle_xor(ulong v, int32_t mask, int32_t width,
                              thread_context c) {
  return simd_read(v, ushort(c.lane ^ mask));
}
TILE_DEVICE long shuffle_xor(long v, int32_t mask, int32_t width,
                             thread_context c) {
  return simd_read(v, ushort(c.lane ^ mask));
}
template <typename T>
TILE_DEVICE T shuffle_down(T v, int32_t delta, int32_t width, thread_context c) {
  int32_t inSegment = int32_t(c.lane) % width;
  return simd_read(v, ushort(inSegment + delta < width ? c.lane + delta : c.lane));
}
template <typename T>
TILE_DEVICE T shuffle_up(T v, int32_t delta, int32_t width, thread_context c) {
  int32_t inSegment = int32_t(c.lane) % width;
  return simd_read(v, ushort(inSegment >= delta ? c.lane - delta : c.lane));
}
template <typename T>
TILE_DEVICE T shuffle_idx(T v, int32_t lane, int32_t width, thread_context c) {
  int32_t segment = int32_t(c.lane) / width * width;
  return simd_read(v, ushort(segment + lane % width));
}

// ---- arith / math without a C++ operator ------------------------------------
// maximumf / minimumf propagate NaN and order -0 < +0.
TILE_DEVICE float maximumf(float a, float b) {
  if (isnan(a) || isnan(b))
    return a + b;
  if (a == b)
    return as_type<int>(a) < 0 ? b : a;
  return a > b ? a : b;
}
TILE_DEVICE float minimumf(float a, float b) {
  if (isnan(a) || isnan(b))
    return a + b;
  if (a == b)
    return as_type<int>(a) < 0 ? a : b;
  return a < b ? a : b;
}
TILE_DEVICE f16 maximumf(f16 a, f16 b) { return f16(maximumf(float(a), float(b))); }
TILE_DEVICE f16 minimumf(f16 a, f16 b) { return f16(minimumf(float(a), float(b))); }
TILE_DEVICE bf16 maximumf(bf16 a, bf16 b) { return bf16(maximumf(float(a), float(b))); }
TILE_DEVICE bf16 minimumf(bf16 a, bf16 b) { return bf16(minimumf(float(a), float(b))); }
TILE_DEVICE float maxnumf(float a, float b) { return fmax(a, b); }
TILE_DEVICE float minnumf(float a, float b) { return fmin(a, b); }
TILE_DEVICE float remf(float a, float b) { return fmod(a, b); }

template <typename T> struct unsigned_of { typedef T type; };
template <> struct unsigned_of<int8_t> { typedef uint8_t type; };
template <> struct unsigned_of<int16_t> { typedef uint16_t type; };
template <> struct unsigned_of<int32_t> { typedef uint32_t type; };
template <> struct unsigned_of<int64_t> { typedef uint64_t type; };
template <typename T> struct signed_of { typedef T type; };
template <> struct signed_of<uint8_t> { typedef int8_t type; };
template <> struct signed_of<uint16_t> { typedef int16_t type; };
template <> struct signed_of<uint32_t> { typedef int32_t type; };
template <> struct signed_of<uint64_t> { typedef int64_t type; };

template <typename T> TILE_DEVICE T maxui(T a, T b) {
  typedef typename unsigned_of<T>::type U;
  return U(a) > U(b) ? a : b;
}
template <typename T> TILE_DEVICE T minui(T a, T b) {
  typedef typename unsigned_of<T>::type U;
  return U(a) < U(b) ? a : b;
}
template <typename T> TILE_DEVICE T maxsi(T a, T b) {
  typedef typename signed_of<T>::type S;
  return S(a) > S(b) ? a : b;
}
template <typename T> TILE_DEVICE T minsi(T a, T b) {
  typedef typename signed_of<T>::type S;
  return S(a) < S(b) ? a : b;
}
/// Integer absolute value, wrapping at the minimum like math.absi.
template <typename T> TILE_DEVICE T absi(T x) {
  typedef typename signed_of<T>::type S;
  typedef typename unsigned_of<T>::type U;
  return S(x) < 0 ? T(U(0) - U(x)) : x;
}
template <typename T> TILE_DEVICE T andi(T a, T b) { return a & b; }
template <typename T> TILE_DEVICE T ori(T a, T b) { return a | b; }
template <typename T> TILE_DEVICE T xori(T a, T b) { return a ^ b; }
template <typename T> TILE_DEVICE T divsi(T a, T b) {
  typedef typename signed_of<T>::type S;
  return T(S(a) / S(b));
}
template <typename T> TILE_DEVICE T remsi(T a, T b) {
  typedef typename signed_of<T>::type S;
  return T(S(a) % S(b));
}
template <typename T> TILE_DEVICE T divui(T a, T b) {
  typedef typename unsigned_of<T>::type U;
  return T(U(a) / U(b));
}
template <typename T> TILE_DEVICE T remui(T a, T b) {
  typedef typename unsigned_of<T>::type U;
  return T(U(a) % U(b));
}
template <typename T> TILE_DEVICE T ceildivui(T a, T b) {
  typedef typename unsigned_of<T>::type U;
  return U(a) == 0 ? T(0) : T((U(a) - 1) / U(b) + 1);
}
template <typename T> TILE_DEVICE T ceildivsi(T a, T b) {
  typedef typename signed_of<T>::type S;
  S q = S(a) / S(b), r = S(a) % S(b);
  return T(q + ((r != 0 && ((r < 0) == (S(b) < 0))) ? 1 : 0));
}
template <typename T> TILE_DEVICE T floordivsi(T a, T b) {
  typedef typename signed_of<T>::type S;
  S q = S(a) / S(b), r = S(a) % S(b);
  return T(q - ((r != 0 && ((r < 0) != (S(b) < 0))) ? 1 : 0));
}
template <typename T> TILE_DEVICE T shrsi(T a, T b) {
  typedef typename signed_of<T>::type S;
  return T(S(a) >> S(b));
}

// math: metal::precise (full precision, whatever the fast-math setting of
// the library's compile) where MSL has both variants; the exact ones plain.
TILE_DEVICE float exp(float x) { return precise::exp(x); }
TILE_DEVICE float exp2(float x) { return precise::exp2(x); }
TILE_DEVICE float log(float x) { return precise::log(x); }
TILE_DEVICE float log2(float x) { return precise::log2(x); }
TILE_DEVICE float sqrt(float x) { return precise::sqrt(x); }
TILE_DEVICE float rsqrt(float x) { return precise::rsqrt(x); }
TILE_DEVICE float absf(float x) { return metal::fabs(x); }
TILE_DEVICE float tanh(float x) { return precise::tanh(x); }
TILE_DEVICE float sin(float x) { return precise::sin(x); }
TILE_DEVICE float cos(float x) { return precise::cos(x); }
TILE_DEVICE float floor(float x) { return metal::floor(x); }
TILE_DEVICE float ceil(float x) { return metal::ceil(x); }
TILE_DEVICE float powf(float x, float y) { return precise::pow(x, y); }
TILE_DEVICE float fma(float a, float b, float c) { return metal::fma(a, b, c); }
TILE_DEVICE float log10(float x) { return precise::log10(x); }
/// MSL has no log1p: log(u) * x / (u - 1) with u = 1 + x corrects the
/// rounding of 1 + x (exact where u == 1: the result is x).
TILE_DEVICE float log1p(float x) {
  float u = 1.0f + x;
  return u == 1.0f ? x : precise::log(u) * (x / (u - 1.0f));
}
TILE_DEVICE float tan(float x) { return precise::tan(x); }
TILE_DEVICE float trunc(float x) { return metal::trunc(x); }
/// math.roundeven: halves to even.
TILE_DEVICE float roundeven(float x) { return metal::rint(x); }
/// MSL has no erf: Abramowitz & Stegun 7.1.26 on |x| is not accurate
/// enough (1.5e-7 absolute is, but only near 0), so erf(x) = 1 - erfc(x)
/// from the Numerical Recipes erfc Chebyshev fit (relative error < 1.2e-7).
TILE_DEVICE float erf(float x) {
  float z = metal::fabs(x);
  float t = 1.0f / (1.0f + 0.5f * z);
  float r = t * precise::exp(-z * z - 1.26551223f +
                    t * (1.00002368f + t * (0.37409196f + t * (0.09678418f +
                    t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f +
                    t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
  float e = 1.0f - r;
  return x >= 0.0f ? e : -e;
}
template <typename T> TILE_DEVICE T exp(T x) { return T(exp(float(x))); }
template <typename T> TILE_DEVICE T log(T x) { return T(log(float(x))); }
template <typename T> TILE_DEVICE T sqrt(T x) { return T(sqrt(float(x))); }
template <typename T> TILE_DEVICE T rsqrt(T x) { return T(rsqrt(float(x))); }
template <typename T> TILE_DEVICE T absf(T x) { return T(absf(float(x))); }
template <typename T> TILE_DEVICE T tanh(T x) { return T(tanh(float(x))); }

/// arith.extf/truncf/sitofp/fptosi/uitofp.
template <typename To, typename From> TILE_DEVICE To convert(From v) {
  return To(v);
}
template <> TILE_DEVICE f16 convert<f16, bf16>(bf16 v) { return f16(float(v)); }
template <> TILE_DEVICE bf16 convert<bf16, f16>(f16 v) { return bf16(float(v)); }
template <> TILE_DEVICE int32_t convert<int32_t, bf16>(bf16 v) { return int32_t(float(v)); }
template <> TILE_DEVICE bf16 convert<bf16, int32_t>(int32_t v) { return bf16(float(v)); }

// ---- atomics (memref.atomic_rmw; the old value) ------------------------------
// Metal 3: 32-bit int and float atomics on device and threadgroup memory
// (relaxed: memref.atomic_rmw orders nothing else, as atomicAdd).
#if defined(__METAL_VERSION__)
#define TILE_ATOMIC_SPACES(X) X(device) X(threadgroup)
#else // one flat memory (the test shim): one set
#define TILE_ATOMIC_SPACES(X) X(device)
#endif
#define TILE_ATOMIC_FETCH(space)                                               \
  template <int R, typename... I>                                              \
  TILE_DEVICE float atomic_addf(thread const memref<space float, R> &m,        \
                                float v, I... i) {                             \
    return atomic_fetch_add_explicit(                                          \
        reinterpret_cast<space atomic_float *>(element(m, i...)), v,           \
        memory_order_relaxed);                                                 \
  }                                                                            \
  template <int R, typename... I>                                              \
  TILE_DEVICE int32_t atomic_addi(thread const memref<space int32_t, R> &m,    \
                                  int32_t v, I... i) {                         \
    return atomic_fetch_add_explicit(                                          \
        reinterpret_cast<space atomic_int *>(element(m, i...)), v,             \
        memory_order_relaxed);                                                 \
  }                                                                            \
  template <int R, typename... I>                                              \
  TILE_DEVICE int32_t atomic_maxs(thread const memref<space int32_t, R> &m,    \
                                  int32_t v, I... i) {                         \
    return atomic_fetch_max_explicit(                                          \
        reinterpret_cast<space atomic_int *>(element(m, i...)), v,             \
        memory_order_relaxed);                                                 \
  }                                                                            \
  template <int R, typename... I>                                              \
  TILE_DEVICE int32_t atomic_mins(thread const memref<space int32_t, R> &m,    \
                                  int32_t v, I... i) {                         \
    return atomic_fetch_min_explicit(                                          \
        reinterpret_cast<space atomic_int *>(element(m, i...)), v,             \
        memory_order_relaxed);                                                 \
  }                                                                            \
  /* Float max/min: compare-and-swap on the bits. */                          \
  template <bool Max, int R, typename... I>                                    \
  TILE_DEVICE float atomic_float_extreme(                                      \
      thread const memref<space float, R> &m, float v, I... i) {               \
    space atomic_uint *p =                                                     \
        reinterpret_cast<space atomic_uint *>(element(m, i...));               \
    uint old = atomic_load_explicit(p, memory_order_relaxed);                  \
    while (true) {                                                             \
      float cur = as_type<float>(old);                                         \
      float next = Max ? maximumf(cur, v) : minimumf(cur, v);                  \
      if (as_type<uint>(next) == old ||                                        \
          atomic_compare_exchange_weak_explicit(p, &old, as_type<uint>(next),  \
                                                memory_order_relaxed,          \
                                                memory_order_relaxed))         \
        return cur;                                                            \
    }                                                                          \
  }                                                                            \
  template <int R, typename... I>                                              \
  TILE_DEVICE float atomic_maximumf(thread const memref<space float, R> &m,    \
                                    float v, I... i) {                         \
    return atomic_float_extreme<true>(m, v, i...);                             \
  }                                                                            \
  template <int R, typename... I>                                              \
  TILE_DEVICE float atomic_minimumf(thread const memref<space float, R> &m,    \
                                    float v, I... i) {                         \
    return atomic_float_extreme<false>(m, v, i...);                            \
  }
TILE_ATOMIC_SPACES(TILE_ATOMIC_FETCH)
#undef TILE_ATOMIC_FETCH
#undef TILE_ATOMIC_SPACES

// ---- cp.async: a plain copy ---------------------------------------------------
/// nvgpu.device_async_copy of `Bytes` bytes, of which `srcBytes` are read
/// (the rest zero-filled). Metal has no asynchronous global->threadgroup
/// copy for compute: the copy is done at once; commit and wait are empty
/// (the barrier the lowering places after the wait publishes the data).
template <int Bytes, bool BypassL1, typename T>
TILE_DEVICE int32_t cp_async(threadgroup T *dst, device T *src,
                             int32_t srcBytes) {
  const int n = Bytes / int(sizeof(T));
  const int valid = srcBytes / int(sizeof(T));
  for (int i = 0; i < n; ++i)
    dst[i] = i < valid ? src[i] : T(0.0f);
  return 0;
}
TILE_DEVICE int32_t cp_async_commit() { return 0; }
template <int N> TILE_DEVICE void cp_async_wait() {}

// ---- ldmatrix / mma.sync on SIMD-groups -----------------------------------------
// The lowering keeps gemm fragments in the registers of the sm_80 mma.sync
// layout ("pair" layout P of an 8x8 block: lane l holds row l/4, columns
// 2(l%4) and 2(l%4)+1). simdgroup_matrix<float, 8, 8> holds its 8x8 block
// in the layout S of thread_elements(): lane l holds row
// (l/16)*4 + (l/2)%4, columns ((l/8)%2)*4 + (l%2)*2 and the next one. The
// fragments move between the two with simd_shuffle (a permutation of the
// lanes) and the products run on simdgroup_multiply_accumulate, in float
// (exact for f16 and bf16 inputs; f32 inputs get full f32 products, more
// than tf32).

/// ldmatrix: Tiles 8x8 b16 matrices; the row addresses come from lanes
/// 8i..8i+7 (as offsets into the threadgroup memory).
template <int Tiles, bool Trans, typename T>
TILE_DEVICE vec<T, 2 * Tiles> ldmatrix(threadgroup T *p, thread_context c) {
  threadgroup T *base = reinterpret_cast<threadgroup T *>(c.smem);
  uint mine = uint(p - base);
  vec<T, 2 * Tiles> out;
  ushort l = c.lane;
  for (int i = 0; i < Tiles; ++i) {
    if (!Trans) {
      uint row = simd_shuffle(mine, ushort(8 * i + l / 4));
      out.v[2 * i] = base[row + 2 * (l % 4)];
      out.v[2 * i + 1] = base[row + 2 * (l % 4) + 1];
    } else {
      uint row0 = simd_shuffle(mine, ushort(8 * i + 2 * (l % 4)));
      uint row1 = simd_shuffle(mine, ushort(8 * i + 2 * (l % 4) + 1));
      out.v[2 * i] = base[row0 + l / 4];
      out.v[2 * i + 1] = base[row1 + l / 4];
    }
  }
  return out;
}

/// Row and first column of lane l's pair in layout S.
TILE_DEVICE ushort s_row(ushort l) { return (l / 16) * 4 + (l / 2) % 4; }
TILE_DEVICE ushort s_col(ushort l) { return ((l / 8) % 2) * 4 + (l % 2) * 2; }

/// Lane l's pair of layout S comes from this lane of layout P.
TILE_DEVICE ushort pairs_source(ushort l) {
  return ushort(4 * s_row(l) + s_col(l) / 2);
}
TILE_DEVICE simdgroup_float8x8 matrix_of(float x, float y) {
  simdgroup_float8x8 m;
  m.thread_elements()[0] = x;
  m.thread_elements()[1] = y;
  return m;
}
/// The matrix back to layout P (this lane's pair): the lane of layout S
/// holding row l/4, columns 2(l%4), 2(l%4)+1.
TILE_DEVICE ushort matrix_source(ushort l) {
  ushort r = l / 4, col = 2 * (l % 4);
  return ((r / 4) << 4) | ((col / 4) << 3) | ((r % 4) << 1) | ((col / 2) % 2);
}

/// D (16x8) = A (16x16) * B (16x8) + C from the pairs of the 8x8 blocks of
/// A (rows 0-7 / 8-15 by k 0-7: a01, a23; k 8-15: a45, a67), of B
/// transposed (k 0-7: b01, k 8-15: b23) and of C and D (rows 0-7 and
/// 8-15). The blocks of one operand share their source lanes, so they
/// move together: 6 shuffles per product.
TILE_DEVICE float4 mma_16x8x16(float4 a0123, float4 a4567, float4 b,
                               float4 c, ushort l) {
  ushort src = pairs_source(l);
  float4 a = simd_shuffle(a0123, src), ak = simd_shuffle(a4567, src);
  float4 cs = simd_shuffle(c, src);
  // B[r][col] = B^T[col][r]: lane 4 col + r/2 of layout P, element r % 2.
  ushort r = s_row(l), col = s_col(l);
  float4 bc0 = simd_shuffle(b, ushort(4 * col + r / 2));
  float4 bc1 = simd_shuffle(b, ushort(4 * (col + 1) + r / 2));
  bool odd = r % 2;
  simdgroup_float8x8 a00 = matrix_of(a.x, a.y), a10 = matrix_of(a.z, a.w);
  simdgroup_float8x8 a01 = matrix_of(ak.x, ak.y), a11 = matrix_of(ak.z, ak.w);
  simdgroup_float8x8 b0 = matrix_of(odd ? bc0.y : bc0.x, odd ? bc1.y : bc1.x);
  simdgroup_float8x8 b1 = matrix_of(odd ? bc0.w : bc0.z, odd ? bc1.w : bc1.z);
  simdgroup_float8x8 c0 = matrix_of(cs.x, cs.y), c1 = matrix_of(cs.z, cs.w);
  simdgroup_float8x8 t0, t1, d0, d1;
  simdgroup_multiply_accumulate(t0, a00, b0, c0);
  simdgroup_multiply_accumulate(d0, a01, b1, t0);
  simdgroup_multiply_accumulate(t1, a10, b0, c1);
  simdgroup_multiply_accumulate(d1, a11, b1, t1);
  float4 mine = float4(d0.thread_elements()[0], d0.thread_elements()[1],
                       d1.thread_elements()[0], d1.thread_elements()[1]);
  return simd_shuffle(mine, matrix_source(l));
}

/// nvgpu.mma.sync m16n8k16, f16 x f16 + f32 (row.col).
TILE_DEVICE vec<float, 4> mma_sync_m16n8k16(thread const vec<f16, 8> &a,
                                            thread const vec<f16, 4> &b,
                                            thread const vec<float, 4> &c,
                                            thread_context ctx) {
  float4 d = mma_16x8x16(
      float4(a.v[0], a.v[1], a.v[2], a.v[3]),
      float4(a.v[4], a.v[5], a.v[6], a.v[7]),
      float4(b.v[0], b.v[1], b.v[2], b.v[3]),
      float4(c.v[0], c.v[1], c.v[2], c.v[3]), ctx.lane);
  vec<float, 4> out = {{d.x, d.y, d.z, d.w}};
  return out;
}
/// nvgpu.mma.sync m16n8k16, f16 x f16 + f16 (row.col): float products, the
/// sum rounded to f16.
TILE_DEVICE vec<f16, 4> mma_sync_m16n8k16(thread const vec<f16, 8> &a,
                                          thread const vec<f16, 4> &b,
                                          thread const vec<f16, 4> &c,
                                          thread_context ctx) {
  vec<float, 4> cf = {{float(c.v[0]), float(c.v[1]), float(c.v[2]), float(c.v[3])}};
  vec<float, 4> d = mma_sync_m16n8k16(a, b, cf, ctx);
  vec<f16, 4> out = {{f16(d.v[0]), f16(d.v[1]), f16(d.v[2]), f16(d.v[3])}};
  return out;
}
/// Two bf16 in a b32 register (low half first) as floats.
TILE_DEVICE float2 bf16_pair(int32_t r) {
  uint u = as_type<uint>(r);
  return float2(as_type<float>(u << 16), as_type<float>(u & 0xffff0000u));
}
/// nvvm.mma.sync m16n8k16 bf16 x bf16 + f32 (operands as b32 registers).
TILE_DEVICE vec<float, 4>
mma_sync_m16n8k16_bf16(int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                       int32_t b0, int32_t b1, float c0, float c1, float c2,
                       float c3, thread_context ctx) {
  float4 d = mma_16x8x16(float4(bf16_pair(a0), bf16_pair(a1)),
                         float4(bf16_pair(a2), bf16_pair(a3)),
                         float4(bf16_pair(b0), bf16_pair(b1)),
                         float4(c0, c1, c2, c3), ctx.lane);
  vec<float, 4> out = {{d.x, d.y, d.z, d.w}};
  return out;
}
/// nvvm.mma.sync m16n8k8 tf32 (f32 bits in b32 registers). The tf32
/// fragments are not in pairs: lane l holds A (g, t), (g+8, t), (g, t+4),
/// (g+8, t+4) and B (k=t, n=g), (k=t+4, n=g), g = l/4, t = l%4.
TILE_DEVICE vec<float, 4>
mma_sync_m16n8k8_tf32(int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                      int32_t b0, int32_t b1, float c0, float c1, float c2,
                      float c3, thread_context ctx) {
  ushort l = ctx.lane, r = s_row(l), col = s_col(l);
  // A rows 0-7 (a0: k < 4, a2: k >= 4) and rows 8-15 (a1, a3).
  float2 top = float2(as_type<float>(a0), as_type<float>(a2));
  float2 bottom = float2(as_type<float>(a1), as_type<float>(a3));
  float2 t0 = simd_shuffle(top, ushort(4 * r + col % 4));
  float2 t1 = simd_shuffle(top, ushort(4 * r + (col + 1) % 4));
  float2 u0 = simd_shuffle(bottom, ushort(4 * r + col % 4));
  float2 u1 = simd_shuffle(bottom, ushort(4 * r + (col + 1) % 4));
  simdgroup_float8x8 at, ab, bm, cm0, cm1, d0, d1;
  at = matrix_of(col < 4 ? t0.x : t0.y, col < 4 ? t1.x : t1.y);
  ab = matrix_of(col < 4 ? u0.x : u0.y, col < 4 ? u1.x : u1.y);
  // B (k = r, n = col, col + 1): lane 4n + k%4, b0 for k < 4, b1 else.
  float2 bb = float2(as_type<float>(b0), as_type<float>(b1));
  float2 v0 = simd_shuffle(bb, ushort(4 * col + r % 4));
  float2 v1 = simd_shuffle(bb, ushort(4 * (col + 1) + r % 4));
  bm = matrix_of(r < 4 ? v0.x : v0.y, r < 4 ? v1.x : v1.y);
  float4 cs = simd_shuffle(float4(c0, c1, c2, c3), pairs_source(l));
  cm0 = matrix_of(cs.x, cs.y);
  cm1 = matrix_of(cs.z, cs.w);
  simdgroup_multiply_accumulate(d0, at, bm, cm0);
  simdgroup_multiply_accumulate(d1, ab, bm, cm1);
  float4 mine = float4(d0.thread_elements()[0], d0.thread_elements()[1],
                       d1.thread_elements()[0], d1.thread_elements()[1]);
  float4 D = simd_shuffle(mine, matrix_source(l));
  vec<float, 4> d = {{D.x, D.y, D.z, D.w}};
  return d;
}

} // namespace tile
