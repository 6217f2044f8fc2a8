// Manual GPU check of the sm_90a GEMM variant (not run by lit; needs an
// H100/H200, CUDA 12+, cuBLAS). Loads gemm bundles, encodes the variant's
// tensor maps with lib/Runtime/CudaTensorMap.cpp (cuTensorMapEncodeTiled),
// launches NAME_kernel_sm90 with the trailing tensor-map pointers
// (docs/bundle.md "Kernel variants"), checks against a host reference and
// the generic kernel, and times it against cuBLAS.
//   tilec examples/gemm.mlir --target=cuda --chip=sm_90a -o b/gemm.tileb
//   nvcc -O2 -std=c++17 -I lib/Runtime sm90-gemm-check.cpp \
//        lib/Runtime/CudaTensorMap.cpp -lcuda -lcublas -o check
//   ./check b/gemm.tileb f16 [perf [TILE_N]]   (TILE_N: the launch's N tile, 128)
#include "Cuda/CudaTensorMap.h"
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorString(r_, &s); printf("CUDA error %s at %s:%d\n", s, __FILE__, __LINE__); exit(1);} } while (0)
using namespace tile::rt::cuda;
static std::map<std::string, std::string> readBundle(const char *path) {
  std::ifstream f(path, std::ios::binary); std::string d((std::istreambuf_iterator<char>(f)), {});
  std::map<std::string, std::string> s; uint32_t n; memcpy(&n, d.data() + 12, 4);
  for (uint32_t i = 0; i < n; ++i) { const char *e = d.data() + 24 + 48 * i; uint64_t off, size;
    memcpy(&off, e + 24, 8); memcpy(&size, e + 32, 8); s[std::string(e, strnlen(e, 24))] = d.substr(off, size); }
  return s;
}
static long intAfter(const std::string &s, size_t from, const char *key) {
  size_t p = s.find(key, from); if (p == std::string::npos) { printf("no %s\n", key); exit(1); }
  return atol(s.c_str() + s.find(':', p) + 1);
}
struct Desc { void *alloc, *aligned; int64_t offset; int64_t sizes[2]; int64_t strides[2]; };
static Desc mk(CUdeviceptr p, int64_t r, int64_t c) { Desc d{}; d.alloc = d.aligned = (void *)p; d.sizes[0] = r; d.sizes[1] = c; d.strides[0] = c; d.strides[1] = 1; return d; }
static void push(std::vector<void *> &ps, Desc &d) { ps.push_back(&d.alloc); ps.push_back(&d.aligned); ps.push_back(&d.offset);
  ps.push_back(&d.sizes[0]); ps.push_back(&d.sizes[1]); ps.push_back(&d.strides[0]); ps.push_back(&d.strides[1]); }

static bool bf16 = false;
static int64_t tileN = 128;
static uint16_t toH(float x) { if (bf16) { __nv_bfloat16 h = __float2bfloat16(x); uint16_t u; memcpy(&u, &h, 2); return u; } __half h = __float2half(x); uint16_t u; memcpy(&u, &h, 2); return u; }
static float fromH(uint16_t u) { if (bf16) { __nv_bfloat16 h; memcpy(&h, &u, 2); return __bfloat162float(h); } __half h; memcpy(&h, &u, 2); return __half2float(h); }

struct Kern { CUfunction generic, sm90; int smemG, smemV; TmaSpec spec[2]; };
static Kern load(const char *bundle) {
  auto s = readBundle(bundle); const std::string &md = s["metadata"]; Kern k{};
  k.smemG = intAfter(md, 0, "\"shared_bytes\""); size_t v = md.find("\"variants\"");
  if (v == std::string::npos) { printf("bundle has no variants\n"); exit(1); }
  k.smemV = intAfter(md, v, "\"shared_bytes\"");
  size_t p = v;
  for (int i = 0; i < 2; ++i) {
    p = md.find("\"box\"", p); if (p == std::string::npos) { printf("no box\n"); exit(1); }
    p = md.find('[', p) + 1; TmaSpec &t = k.spec[i];
    t.box[0] = atoi(md.c_str() + p); t.box[1] = atoi(md.c_str() + md.find(',', p) + 1);
    t.rank = 2; t.dataType = tensorMapDataType(bf16 ? "bfloat16" : "float16", &t.elementBytes);
    t.swizzle = kSwizzle128B; t.l2Promotion = kL2Promotion256B; t.oobFill = kOobFillZero; t.param = i;
  }
  CUmodule m; CK(cuModuleLoadData(&m, s["cubin"].data()));
  CK(cuModuleGetFunction(&k.generic, m, "gemm_kernel")); CK(cuModuleGetFunction(&k.sm90, m, "gemm_kernel_sm90"));
  CK(cuFuncSetAttribute(k.generic, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.smemG));
  CK(cuFuncSetAttribute(k.sm90, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.smemV));
  printf("loaded %s: generic smem %d, sm90 smem %d, boxes [%u,%u] [%u,%u]\n", bundle, k.smemG, k.smemV,
         k.spec[0].box[0], k.spec[0].box[1], k.spec[1].box[0], k.spec[1].box[1]);
  return k;
}
static EncodeTiledFn encodeFn() {
  void *fn = nullptr; CUdriverProcAddressQueryResult q;
  CK(cuGetProcAddress("cuTensorMapEncodeTiled", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
  return (EncodeTiledFn)fn;
}
struct Run { Desc A, B, C; CUdeviceptr tmaA = 0, tmaB = 0; bool tma = false; std::vector<void *> ps; unsigned gx, gy; };
static Run prepare(Kern &k, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int64_t M, int64_t N, int64_t K, bool sm90) {
  Run r; r.A = mk(a, M, K); r.B = mk(b, K, N); r.C = mk(c, M, N); r.gx = (N + tileN - 1) / tileN; r.gy = (M + 127) / 128;
  if (sm90) {
    int64_t sa[2] = {M, K}, sb[2] = {K, N}; TensorMap ta, tb;
    std::string e1 = encodeTensorMap(encodeFn(), k.spec[0], (void *)a, sa, &ta);
    std::string e2 = encodeTensorMap(encodeFn(), k.spec[1], (void *)b, sb, &tb);
    if (e1.empty() && e2.empty()) {
      CK(cuMemAlloc(&r.tmaA, 128)); CK(cuMemAlloc(&r.tmaB, 128));
      CK(cuMemcpyHtoD(r.tmaA, &ta, 128)); CK(cuMemcpyHtoD(r.tmaB, &tb, 128)); r.tma = true;
    } else printf("  (no TMA: %s%s -> generic kernel)\n", e1.c_str(), e2.c_str());
  }
  push(r.ps, r.A); push(r.ps, r.B); push(r.ps, r.C);
  if (r.tma) { r.ps.push_back(&r.tmaA); r.ps.push_back(&r.tmaB); }
  return r;
}
static void launch(Kern &k, Run &r) {
  if (r.gx == 0 || r.gy == 0) return;
  if (r.tma) CK(cuLaunchKernel(k.sm90, r.gx, r.gy, 1, 384, 1, 1, k.smemV, 0, r.ps.data(), nullptr));
  else CK(cuLaunchKernel(k.generic, r.gx, r.gy, 1, 128, 1, 1, k.smemG, 0, r.ps.data(), nullptr));
}
static int fails = 0;
int main(int argc, char **argv) {
  bf16 = argc > 2 && !strcmp(argv[2], "bf16"); bool perf = argc > 3 && !strcmp(argv[3], "perf");
  if (argc > 4) tileN = atol(argv[4]);
  cudaSetDevice(0); cudaFree(0); CK(cuInit(0));
  Kern k = load(argv[1]); std::mt19937 rng(1); std::uniform_real_distribution<float> U(-1, 1);
  double tol = bf16 ? 1.6e-2 : 2e-3;
  struct Shape { int64_t M, N, K; } shapes[] = {{256, 256, 256}, {300, 264, 200}, {129, 72, 40}, {1, 8, 8}, {512, 384, 1000},
    {1000, 1000, 1000}, {128, 128, 64}, {200, 136, 8}, {300, 260, 200}, {2048, 2048, 2048}};
  for (auto [M, N, K] : shapes) {
    std::vector<uint16_t> a(M * K), b(K * N), c(M * N, toH(7.f)); std::vector<float> af(M * K), bfv(K * N);
    for (int64_t i = 0; i < M * K; ++i) { a[i] = toH(U(rng)); af[i] = fromH(a[i]); }
    for (int64_t i = 0; i < K * N; ++i) { b[i] = toH(U(rng)); bfv[i] = fromH(b[i]); }
    CUdeviceptr da, db, dc; CK(cuMemAlloc(&da, a.size() * 2 + 16)); CK(cuMemAlloc(&db, b.size() * 2 + 16)); CK(cuMemAlloc(&dc, c.size() * 2 + 16));
    CK(cuMemcpyHtoD(da, a.data(), a.size() * 2)); CK(cuMemcpyHtoD(db, b.data(), b.size() * 2)); CK(cuMemcpyHtoD(dc, c.data(), c.size() * 2));
    Run r = prepare(k, da, db, dc, M, N, K, true); launch(k, r); CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(c.data(), dc, c.size() * 2));
    double err = 0; int64_t step = (M * N > 1 << 20) ? 97 : 1;
    for (int64_t idx = 0; idx < M * N; idx += step) { int64_t i = idx / N, j = idx % N; double s = 0;
      for (int64_t kk = 0; kk < K; ++kk) s += (double)af[i * K + kk] * bfv[kk * N + j];
      err = std::max(err, std::fabs(fromH(c[idx]) - s) / (1 + std::fabs(s))); }
    bool ok = err <= tol; fails += !ok;
    printf("%s gemm M=%ld N=%ld K=%ld via %s: max rel err %.3g %s\n", bf16 ? "bf16" : "f16", M, N, K, r.tma ? "sm90" : "generic", err, ok ? "OK" : "FAIL");
    cuMemFree(da); cuMemFree(db); cuMemFree(dc); if (r.tma) { cuMemFree(r.tmaA); cuMemFree(r.tmaB); }
  }
  if (perf) {
    cublasHandle_t h; cublasCreate(&h);
    for (int64_t S : {4096L, 8192L}) {
      int64_t M = S, N = S, K = S; CUdeviceptr da, db, dc, dc2;
      CK(cuMemAlloc(&da, M * K * 2)); CK(cuMemAlloc(&db, K * N * 2)); CK(cuMemAlloc(&dc, M * N * 2)); CK(cuMemAlloc(&dc2, M * N * 2));
      std::vector<uint16_t> a(M * K), b(K * N); for (auto &x : a) x = toH(U(rng)); for (auto &x : b) x = toH(U(rng));
      CK(cuMemcpyHtoD(da, a.data(), a.size() * 2)); CK(cuMemcpyHtoD(db, b.data(), b.size() * 2));
      Run r = prepare(k, da, db, dc, M, N, K, true), g = prepare(k, da, db, dc2, M, N, K, false);
      cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1); float ms; double fl = 2.0 * M * N * K;
      auto timeIt = [&](auto fn, int it) { fn(); cudaDeviceSynchronize(); cudaEventRecord(e0); for (int i = 0; i < it; ++i) fn();
        cudaEventRecord(e1); cudaEventSynchronize(e1); cudaEventElapsedTime(&ms, e0, e1); return ms / it; };
      int it = S == 4096 ? 20 : 5;
      float tv = timeIt([&] { launch(k, r); }, it);
      float tg = S == 4096 ? timeIt([&] { launch(k, g); }, 3) : 0;
      float alpha = 1, beta = 0; cudaDataType dt = bf16 ? CUDA_R_16BF : CUDA_R_16F;
      cublasStatus_t cst = CUBLAS_STATUS_SUCCESS;
      float tc = timeIt([&] { cst = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, (void *)db, dt, N, (void *)da, dt, K, &beta, (void *)dc2, dt, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); }, it);
      CK(cuCtxSynchronize()); if (cst != CUBLAS_STATUS_SUCCESS) { printf("cuBLAS failed %d\n", (int)cst); fails++; }
      // sm90 vs cuBLAS on the whole matrix.
      std::vector<uint16_t> c1(M * N), c2(M * N); launch(k, r); CK(cuCtxSynchronize());
      CK(cuMemcpyDtoH(c1.data(), dc, M * N * 2)); CK(cuMemcpyDtoH(c2.data(), dc2, M * N * 2)); double err = 0;
      for (int64_t i = 0; i < M * N; ++i) err = std::max(err, (double)std::fabs(fromH(c1[i]) - fromH(c2[i])) / (1 + std::fabs(fromH(c2[i]))));
      bool ok = err <= 2 * tol; fails += !ok;
      printf("%ld^3 %s: sm90 %.3f ms (%.1f TFLOP/s)  generic %.3f ms (%.1f)  cuBLAS %.3f ms (%.1f)  ratio %.3f  vs cuBLAS max rel diff %.3g %s\n",
             S, bf16 ? "bf16" : "f16", tv, fl / tv / 1e9, tg, tg ? fl / tg / 1e9 : 0, tc, fl / tc / 1e9, tc / tv, err, ok ? "OK" : "FAIL");
      cuMemFree(da); cuMemFree(db); cuMemFree(dc); cuMemFree(dc2);
    }
  }
  printf("%s\n", fails ? "SOME FAILED" : "ALL OK"); return fails != 0;
}
