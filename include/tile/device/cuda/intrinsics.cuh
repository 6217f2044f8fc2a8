// intrinsics.cuh - the per-thread building blocks of tile's generated CUDA
// C++: indices, barriers, warp shuffles, atomics, cp.async, ldmatrix,
// mma.sync (inline PTX, the instructions the LLVM path selects) and the
// arith/math operations C++ has no operator for. The names are the CUDA
// entries of the EmitC lowering's intrinsic table (GPUToEmitC); another
// source target (HIP, MSL) implements the same names in its own library.
#pragma once

namespace tile {

// ---- indices and barriers ---------------------------------------------------
// `Bound`: the kernel's known block size in that dimension (the value is
// below it; block_dim is at most it), so the compiler can fold index
// arithmetic with it as LLVM does from the NVVM intrinsics' ranges.
template <unsigned Bound = 1024> TILE_DEVICE size_t bounded(unsigned v) {
  if (v >= Bound)
    __builtin_unreachable();
  return v;
}
template <unsigned Bound = 1024> TILE_DEVICE size_t thread_id_x() { return bounded<Bound>(threadIdx.x); }
template <unsigned Bound = 1024> TILE_DEVICE size_t thread_id_y() { return bounded<Bound>(threadIdx.y); }
template <unsigned Bound = 64> TILE_DEVICE size_t thread_id_z() { return bounded<Bound>(threadIdx.z); }
TILE_DEVICE size_t block_id_x() { return blockIdx.x; }
TILE_DEVICE size_t block_id_y() { return blockIdx.y; }
TILE_DEVICE size_t block_id_z() { return blockIdx.z; }
template <unsigned Bound = 1024> TILE_DEVICE size_t block_dim_x() { return bounded<Bound + 1>(blockDim.x); }
template <unsigned Bound = 1024> TILE_DEVICE size_t block_dim_y() { return bounded<Bound + 1>(blockDim.y); }
template <unsigned Bound = 64> TILE_DEVICE size_t block_dim_z() { return bounded<Bound + 1>(blockDim.z); }
TILE_DEVICE size_t grid_dim_x() { return gridDim.x; }
TILE_DEVICE size_t grid_dim_y() { return gridDim.y; }
TILE_DEVICE size_t grid_dim_z() { return gridDim.z; }
TILE_DEVICE void barrier() { __syncthreads(); }

/// gpu.dynamic_shared_memory: the block's dynamic shared memory, 128-byte
/// aligned (convert-tile-to-nvgpu places every buffer at a multiple of 128).
TILE_DEVICE memref<int8_t, 1> dynamic_shared_memory() {
  extern __shared__ __align__(128) int8_t tile_dynamic_shared[];
  return contiguous<1>(tile_dynamic_shared, int64_t(1) << 30);
}

// ---- warp shuffles ----------------------------------------------------------
template <typename T> TILE_DEVICE T shuffle_xor(T v, int32_t mask, int32_t width) {
  return __shfl_xor_sync(0xffffffffu, v, mask, width);
}
template <typename T> TILE_DEVICE T shuffle_down(T v, int32_t delta, int32_t width) {
  return __shfl_down_sync(0xffffffffu, v, delta, width);
}
template <typename T> TILE_DEVICE T shuffle_up(T v, int32_t delta, int32_t width) {
  return __shfl_up_sync(0xffffffffu, v, delta, width);
}
template <typename T> TILE_DEVICE T shuffle_idx(T v, int32_t lane, int32_t width) {
  return __shfl_sync(0xffffffffu, v, lane, width);
}

// ---- arith / math without a C++ operator ------------------------------------
// maximumf / minimumf propagate NaN and order -0 < +0 (PTX max.NaN).
TILE_DEVICE float maximumf(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
TILE_DEVICE float minimumf(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
TILE_DEVICE double maximumf(double a, double b) {
  return (a != a || b != b) ? a + b : (a == b ? (__double_as_longlong(a) < 0 ? b : a) : (a > b ? a : b));
}
TILE_DEVICE double minimumf(double a, double b) {
  return (a != a || b != b) ? a + b : (a == b ? (__double_as_longlong(a) < 0 ? a : b) : (a < b ? a : b));
}
TILE_DEVICE half maximumf(half a, half b) { return half(maximumf(float(a), float(b))); }
TILE_DEVICE half minimumf(half a, half b) { return half(minimumf(float(a), float(b))); }
TILE_DEVICE bfloat16 maximumf(bfloat16 a, bfloat16 b) { return bfloat16(maximumf(float(a), float(b))); }
TILE_DEVICE bfloat16 minimumf(bfloat16 a, bfloat16 b) { return bfloat16(minimumf(float(a), float(b))); }
TILE_DEVICE float maxnumf(float a, float b) { return fmaxf(a, b); }
TILE_DEVICE float minnumf(float a, float b) { return fminf(a, b); }
TILE_DEVICE double maxnumf(double a, double b) { return fmax(a, b); }
TILE_DEVICE double minnumf(double a, double b) { return fmin(a, b); }
TILE_DEVICE float remf(float a, float b) { return fmodf(a, b); }
TILE_DEVICE double remf(double a, double b) { return fmod(a, b); }

template <typename T> struct unsigned_of { typedef T type; };
template <> struct unsigned_of<int8_t> { typedef uint8_t type; };
template <> struct unsigned_of<int16_t> { typedef uint16_t type; };
template <> struct unsigned_of<int32_t> { typedef uint32_t type; };
template <> struct unsigned_of<int64_t> { typedef uint64_t type; };
template <> struct unsigned_of<ptrdiff_t> { typedef size_t type; };
template <typename T> struct signed_of { typedef T type; };
template <> struct signed_of<uint8_t> { typedef int8_t type; };
template <> struct signed_of<uint16_t> { typedef int16_t type; };
template <> struct signed_of<uint32_t> { typedef int32_t type; };
template <> struct signed_of<uint64_t> { typedef int64_t type; };
template <> struct signed_of<size_t> { typedef ptrdiff_t type; };

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
// Integer absolute value, wrapping at the minimum like math.absi, as
// abs.s32 / abs.s64: written as max(x, 0 - x), ptxas 13.0 (sm_90) folds it
// with a following max into a three-input max without the negation.
template <typename T> TILE_DEVICE T absi(T x) {
  if (sizeof(T) == 8) {
    long long v = (long long)x, r;
    asm("abs.s64 %0, %1;" : "=l"(r) : "l"(v));
    return T(r);
  }
  int v = (int)x, r;
  asm("abs.s32 %0, %1;" : "=r"(r) : "r"(v));
  return T(r);
}
// Bitwise ops on index values (size_t); ArithToEmitC takes the integers.
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

// math: the libdevice functions the LLVM path calls (expf is __nv_expf).
TILE_DEVICE float exp(float x) { return expf(x); }
TILE_DEVICE double exp(double x) { return ::exp(x); }
TILE_DEVICE float exp2(float x) { return exp2f(x); }
TILE_DEVICE float log(float x) { return logf(x); }
TILE_DEVICE double log(double x) { return ::log(x); }
TILE_DEVICE float log2(float x) { return log2f(x); }
TILE_DEVICE float sqrt(float x) { return sqrtf(x); }
TILE_DEVICE double sqrt(double x) { return ::sqrt(x); }
TILE_DEVICE float rsqrt(float x) { return rsqrtf(x); }
TILE_DEVICE double rsqrt(double x) { return ::rsqrt(x); }
TILE_DEVICE float absf(float x) { return fabsf(x); }
TILE_DEVICE double absf(double x) { return fabs(x); }
TILE_DEVICE float tanh(float x) { return tanhf(x); }
TILE_DEVICE double tanh(double x) { return ::tanh(x); }
TILE_DEVICE float sin(float x) { return sinf(x); }
TILE_DEVICE float cos(float x) { return cosf(x); }
TILE_DEVICE float erf(float x) { return erff(x); }
TILE_DEVICE float floor(float x) { return floorf(x); }
TILE_DEVICE float ceil(float x) { return ceilf(x); }
TILE_DEVICE float powf(float x, float y) { return ::powf(x, y); }
TILE_DEVICE float fma(float a, float b, float c) { return fmaf(a, b, c); }
TILE_DEVICE float log10(float x) { return log10f(x); }
TILE_DEVICE double log10(double x) { return ::log10(x); }
TILE_DEVICE float log1p(float x) { return log1pf(x); }
TILE_DEVICE double log1p(double x) { return ::log1p(x); }
TILE_DEVICE float tan(float x) { return tanf(x); }
TILE_DEVICE double tan(double x) { return ::tan(x); }
TILE_DEVICE float trunc(float x) { return truncf(x); }
TILE_DEVICE double trunc(double x) { return ::trunc(x); }
/// math.roundeven: halves to even (rint in the default rounding mode).
TILE_DEVICE float roundeven(float x) { return rintf(x); }
TILE_DEVICE double roundeven(double x) { return ::rint(x); }
TILE_DEVICE double fma(double a, double b, double c) { return ::fma(a, b, c); }
template <typename T> TILE_DEVICE T exp(T x) { return T(exp(float(x))); }
template <typename T> TILE_DEVICE T log(T x) { return T(log(float(x))); }
template <typename T> TILE_DEVICE T sqrt(T x) { return T(sqrt(float(x))); }
template <typename T> TILE_DEVICE T rsqrt(T x) { return T(rsqrt(float(x))); }
template <typename T> TILE_DEVICE T absf(T x) { return T(absf(float(x))); }
template <typename T> TILE_DEVICE T tanh(T x) { return T(tanh(float(x))); }

/// Conversions to and from the 16-bit float types (arith.extf/truncf/
/// sitofp/fptosi... where C++'s cast has no meaning for them).
template <typename To, typename From> TILE_DEVICE To convert(From v) {
  return To(v);
}
template <> TILE_DEVICE half convert<half, bfloat16>(bfloat16 v) { return half(float(v)); }
template <> TILE_DEVICE bfloat16 convert<bfloat16, half>(half v) { return bfloat16(float(v)); }

// ---- atomics (memref.atomic_rmw; the old value) -------------------------------
template <typename T, int R, typename... I>
TILE_DEVICE T atomic_addf(const memref<T, R> &m, T v, I... i) {
  return atomicAdd(element(m, i...), v);
}
template <typename T, int R, typename... I>
TILE_DEVICE T atomic_addi(const memref<T, R> &m, T v, I... i) {
  return atomicAdd(element(m, i...), v);
}
template <typename T, int R, typename... I>
TILE_DEVICE T atomic_maxs(const memref<T, R> &m, T v, I... i) {
  return atomicMax(element(m, i...), v);
}
template <typename T, int R, typename... I>
TILE_DEVICE T atomic_mins(const memref<T, R> &m, T v, I... i) {
  return atomicMin(element(m, i...), v);
}
/// Float max/min through compare-and-swap on the bits.
template <bool Max, int R, typename... I>
TILE_DEVICE float atomic_float_extreme(const memref<float, R> &m, float v, I... i) {
  unsigned *p = reinterpret_cast<unsigned *>(element(m, i...));
  unsigned old = *p, assumed;
  do {
    assumed = old;
    float cur = __uint_as_float(assumed);
    float next = Max ? maximumf(cur, v) : minimumf(cur, v);
    if (__float_as_uint(next) == assumed)
      break;
    old = atomicCAS(p, assumed, __float_as_uint(next));
  } while (old != assumed);
  return __uint_as_float(old);
}
template <int R, typename... I>
TILE_DEVICE float atomic_maximumf(const memref<float, R> &m, float v, I... i) {
  return atomic_float_extreme<true>(m, v, i...);
}
template <int R, typename... I>
TILE_DEVICE float atomic_minimumf(const memref<float, R> &m, float v, I... i) {
  return atomic_float_extreme<false>(m, v, i...);
}

// ---- cp.async (sm_80) ---------------------------------------------------------
TILE_DEVICE uint32_t shared_address(const void *p) {
  return uint32_t(__cvta_generic_to_shared(p));
}
/// nvgpu.device_async_copy of `Bytes` bytes, of which `srcBytes` are read
/// (the rest zero-filled); .cg (L2 only) for bypassL1.
template <int Bytes, bool BypassL1>
TILE_DEVICE int32_t cp_async(void *dst, const void *src, int32_t srcBytes) {
  if (BypassL1)
    asm volatile("cp.async.cg.shared.global [%0], [%1], %2, %3;\n" ::"r"(
                     shared_address(dst)),
                 "l"(src), "n"(Bytes), "r"(srcBytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(
                     shared_address(dst)),
                 "l"(src), "n"(Bytes), "r"(srcBytes)
                 : "memory");
  return 0;
}
TILE_DEVICE int32_t cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  return 0;
}
template <int N> TILE_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- ldmatrix / mma.sync (sm_80) ------------------------------------------------
/// nvgpu.ldmatrix: Tiles 8x8 b16 matrices, 2 halves per register.
template <int Tiles, bool Trans, typename T>
TILE_DEVICE vec<T, 2 * Tiles> ldmatrix(const T *p) {
  vec<T, 2 * Tiles> out;
  uint32_t *r = reinterpret_cast<uint32_t *>(&out);
  uint32_t a = shared_address(p);
  if (Tiles == 4 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  if (Tiles == 4 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  if (Tiles == 2 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a));
  if (Tiles == 2 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a));
  if (Tiles == 1 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                 : "=r"(r[0]) : "r"(a));
  if (Tiles == 1 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
                 : "=r"(r[0]) : "r"(a));
  return out;
}

/// nvgpu.mma.sync m16n8k16, f16 x f16 + f32 (row.col).
TILE_DEVICE vec<float, 4> mma_sync_m16n8k16(const vec<half, 8> &a,
                                            const vec<half, 4> &b,
                                            const vec<float, 4> &c) {
  const uint32_t *A = reinterpret_cast<const uint32_t *>(&a);
  const uint32_t *B = reinterpret_cast<const uint32_t *>(&b);
  vec<float, 4> d;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]),
                 "r"(B[1]), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]),
                 "f"(c.v[3]));
  return d;
}
/// nvgpu.mma.sync m16n8k16, f16 x f16 + f16 (row.col).
TILE_DEVICE vec<half, 4> mma_sync_m16n8k16(const vec<half, 8> &a,
                                           const vec<half, 4> &b,
                                           const vec<half, 4> &c) {
  const uint32_t *A = reinterpret_cast<const uint32_t *>(&a);
  const uint32_t *B = reinterpret_cast<const uint32_t *>(&b);
  const uint32_t *C = reinterpret_cast<const uint32_t *>(&c);
  vec<half, 4> d;
  uint32_t *D = reinterpret_cast<uint32_t *>(&d);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
               "{%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(D[0]), "=r"(D[1])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]),
                 "r"(B[1]), "r"(C[0]), "r"(C[1]));
  return d;
}
/// nvvm.mma.sync m16n8k16 bf16 x bf16 + f32 (operands as b32 registers).
TILE_DEVICE vec<float, 4>
mma_sync_m16n8k16_bf16(int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                       int32_t b0, int32_t b1, float c0, float c1, float c2,
                       float c3) {
  vec<float, 4> d;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1),
                 "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  return d;
}
/// nvvm.mma.sync m16n8k8 tf32 x tf32 + f32 (f32 bits as b32 registers).
TILE_DEVICE vec<float, 4>
mma_sync_m16n8k8_tf32(int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                      int32_t b0, int32_t b1, float c0, float c1, float c2,
                      float c3) {
  vec<float, 4> d;
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1),
                 "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  return d;
}

} // namespace tile
