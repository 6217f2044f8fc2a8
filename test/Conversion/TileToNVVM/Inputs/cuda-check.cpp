// Manual GPU check (not run by lit; needs a GPU): loads the examples' CUDA
// bundles with the driver API, launches them with the kernel ABI of
// docs/bundle.md and compares with a host reference.
//   clang++ -O2 -std=c++17 -I/usr/local/cuda/include cuda-check.cpp -L/usr/local/cuda/lib64/stubs -lcuda -o check
//   for e in elementwise_add reduce_rows softmax gemm; do for c in sm_80 sm_90a; do
//     tilec examples/$e.mlir --target=cuda --chip=$c -o bundles/$e.$c.tileb; done; done
//   ./check bundles sm_90a cubin; ./check bundles sm_80 ptx
// Loads tile bundles' cubin (or PTX) with the driver API, launches them with
// the documented CUDA kernel ABI and compares with a host reference.
#include <cuda.h>
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
typedef _Float16 half;
static std::map<std::string, std::string> readBundle(const char *path) {
  std::ifstream f(path, std::ios::binary); std::string d((std::istreambuf_iterator<char>(f)), {});
  std::map<std::string, std::string> s; uint32_t n; memcpy(&n, d.data() + 12, 4);
  for (uint32_t i = 0; i < n; ++i) { const char *e = d.data() + 24 + 48 * i; uint64_t off, size;
    memcpy(&off, e + 24, 8); memcpy(&size, e + 32, 8); s[std::string(e, strnlen(e, 24))] = d.substr(off, size); }
  return s;
}
struct Desc { void *alloc, *aligned; int64_t offset; int64_t sizes[2]; int64_t strides[2]; int rank; };
static Desc mk(CUdeviceptr p, std::vector<int64_t> shape) { Desc d{}; d.alloc = d.aligned = (void *)p; d.rank = shape.size();
  int64_t st = 1; for (int i = d.rank - 1; i >= 0; --i) { d.sizes[i] = shape[i]; d.strides[i] = st; st *= shape[i]; } return d; }
static void pushParams(std::vector<void *> &ps, Desc &d) { ps.push_back(&d.alloc); ps.push_back(&d.aligned); ps.push_back(&d.offset);
  for (int i = 0; i < d.rank; ++i) ps.push_back(&d.sizes[i]); for (int i = 0; i < d.rank; ++i) ps.push_back(&d.strides[i]); }
static int sharedBytes(const std::string &md) { auto p = md.find("\"shared_bytes\""); return atoi(md.c_str() + md.find(':', p) + 1); }
static CUfunction load(const char *bundle, const char *name, bool ptx, int &smem) {
  auto s = readBundle(bundle); smem = sharedBytes(s["metadata"]); CUmodule m;
  std::string img = ptx ? s["ptx"] + std::string(1, '\0') : s["cubin"];
  CK(cuModuleLoadData(&m, img.data())); CUfunction f; CK(cuModuleGetFunction(&f, m, name));
  CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)); return f;
}
template <class T> static CUdeviceptr up(const std::vector<T> &v) { CUdeviceptr p; CK(cuMemAlloc(&p, v.size() * sizeof(T) + 16)); CK(cuMemcpyHtoD(p, v.data(), v.size() * sizeof(T))); return p; }
template <class T> static std::vector<T> down(CUdeviceptr p, size_t n) { std::vector<T> v(n); CK(cuMemcpyDtoH(v.data(), p, n * sizeof(T))); return v; }
static int fails = 0;
static void report(const char *what, double maxErr, double tol) { bool ok = maxErr <= tol; if (!ok) ++fails; printf("%-40s max err %.3g  %s\n", what, maxErr, ok ? "OK" : "FAIL"); }
static void launch(CUfunction f, unsigned gx, unsigned gy, int smem, std::vector<void *> &ps) {
  if (gx == 0 || gy == 0) return; CK(cuLaunchKernel(f, gx, gy, 1, 128, 1, 1, smem, 0, ps.data(), nullptr)); CK(cuCtxSynchronize()); }
int main(int argc, char **argv) {
  const char *dir = argv[1]; const char *arch = argv[2]; bool ptx = argc > 3 && !strcmp(argv[3], "ptx");
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuCtxCreate(&ctx, nullptr, 0, dev));
  std::mt19937 rng(1); std::uniform_real_distribution<float> U(-1, 1); char path[512], tag[128]; int smem;
  snprintf(path, sizeof path, "%s/elementwise_add.%s.tileb", dir, arch);
  CUfunction f = load(path, "elementwise_add_kernel", ptx, smem);
  for (int64_t N : {0L, 1L, 1000003L, 4096L}) {
    std::vector<float> a(N), b(N), c(N, 7); for (auto &x : a) x = U(rng); for (auto &x : b) x = U(rng);
    CUdeviceptr da = up(a), db = up(b), dc = up(c); Desc A = mk(da, {N}), B = mk(db, {N}), C = mk(dc, {N});
    std::vector<void *> ps; pushParams(ps, A); pushParams(ps, B); pushParams(ps, C);
    launch(f, (N + 1023) / 1024, 1, smem, ps); auto r = down<float>(dc, N); double e = 0;
    for (int64_t i = 0; i < N; ++i) e = std::max(e, (double)std::fabs(r[i] - (a[i] + b[i])));
    snprintf(tag, sizeof tag, "elementwise_add N=%ld", N); report(tag, e, 0);
  }
  snprintf(path, sizeof path, "%s/reduce_rows.%s.tileb", dir, arch); f = load(path, "reduce_rows_kernel", ptx, smem);
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{{1000, 1000}, {64, 128}, {7, 0}, {130, 3}}) {
    std::vector<float> x(M * N), y(M, 5); for (auto &v : x) v = U(rng);
    CUdeviceptr dx = up(x), dy = up(y); Desc X = mk(dx, {M, N}), Y = mk(dy, {M});
    std::vector<void *> ps; pushParams(ps, X); pushParams(ps, Y); launch(f, (M + 63) / 64, 1, smem, ps);
    auto r = down<float>(dy, M); double e = 0;
    for (int64_t i = 0; i < M; ++i) { double s = 0; for (int64_t j = 0; j < N; ++j) s += x[i * N + j]; e = std::max(e, std::fabs(r[i] - s)); }
    snprintf(tag, sizeof tag, "reduce_rows M=%ld N=%ld", M, N); report(tag, e, 1e-3);
  }
  snprintf(path, sizeof path, "%s/softmax.%s.tileb", dir, arch); f = load(path, "softmax_kernel", ptx, smem);
  for (int64_t M : {1001L, 8L, 3L}) {
    int64_t N = 1024; std::vector<float> x(M * N), y(M * N, 9); for (auto &v : x) v = 4 * U(rng);
    CUdeviceptr dx = up(x), dy = up(y); Desc X = mk(dx, {M, N}), Y = mk(dy, {M, N});
    std::vector<void *> ps; pushParams(ps, X); pushParams(ps, Y); launch(f, (M + 7) / 8, 1, smem, ps);
    auto r = down<float>(dy, M * N); double e = 0;
    for (int64_t i = 0; i < M; ++i) { double mx = -1e30, s = 0; for (int j = 0; j < N; ++j) mx = std::max(mx, (double)x[i * N + j]);
      for (int j = 0; j < N; ++j) s += std::exp(x[i * N + j] - mx); for (int j = 0; j < N; ++j) e = std::max(e, std::fabs(r[i * N + j] - std::exp(x[i * N + j] - mx) / s)); }
    snprintf(tag, sizeof tag, "softmax M=%ld", M); report(tag, e, 1e-5);
  }
  snprintf(path, sizeof path, "%s/gemm.%s.tileb", dir, arch); f = load(path, "gemm_kernel", ptx, smem);
  for (auto [M, N, K] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{256, 256, 256}, {300, 260, 200}, {129, 77, 203}, {1, 1, 1}, {512, 384, 1000}}) {
    std::vector<half> a(M * K), b(K * N), c(M * N, (half)3); for (auto &v : a) v = (half)U(rng); for (auto &v : b) v = (half)U(rng);
    CUdeviceptr da = up(a), db = up(b), dc = up(c); Desc A = mk(da, {M, K}), B = mk(db, {K, N}), C = mk(dc, {M, N});
    std::vector<void *> ps; pushParams(ps, A); pushParams(ps, B); pushParams(ps, C); launch(f, (N + 127) / 128, (M + 127) / 128, smem, ps);
    auto r = down<half>(dc, M * N); double e = 0;
    for (int64_t i = 0; i < M; ++i) for (int64_t j = 0; j < N; ++j) { double s = 0; for (int64_t k = 0; k < K; ++k) s += (double)a[i * K + k] * (double)b[k * N + j];
      e = std::max(e, std::fabs((double)r[i * N + j] - s) / (1 + std::fabs(s))); }
    snprintf(tag, sizeof tag, "gemm M=%ld N=%ld K=%ld", M, N, K); report(tag, e, 5e-3);
  }
  printf("%s %s: %d failures\n", arch, ptx ? "ptx" : "cubin", fails); return fails != 0;
}
