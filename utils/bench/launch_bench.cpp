//===- launch_bench.cpp - launch overhead of a no-op kernel ---------------===//
//
//   tile-bench-launch noop.tileb [-n N] [--backend=auto|ffi|native|all] [--json]
//
// Launches a no-op 4-tensor kernel (utils/bench/noop.mlir, compiled by
// utils/bench/launch.py or `tilec --target=cpu|cuda`) through the runtime's C
// API and reports the mean time per launch:
//   * CPU bundle: each backend (ffi, native) with host tensors;
//   * CUDA bundle: each backend with device tensors (launches enqueued on the
//     default stream, one synchronize at the end), plus raw cuLaunchKernel of
//     a hand-written PTX no-op with 4 pointer parameters for comparison.
// libcuda.so.1 is dlopen'ed: nothing CUDA is needed to build this.
//
//===----------------------------------------------------------------------===//

#include "tile/Runtime/tile_runtime.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double nowNs() {
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count());
}

struct Result {
  std::string what;
  double nsPerLaunch;
};

// ---- CUDA driver (dlopen) -------------------------------------------------

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUdeviceptr = unsigned long long;

struct Driver {
  void *lib = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule *, const void *) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;

  bool open() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return false;
#define TILE_SYM(name, ver)                                                    \
  *reinterpret_cast<void **>(&name) = dlsym(lib, ver);                         \
  if (!name)                                                                   \
    return false;
    TILE_SYM(cuInit, "cuInit")
    TILE_SYM(cuDeviceGet, "cuDeviceGet")
    TILE_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
    TILE_SYM(cuCtxSetCurrent, "cuCtxSetCurrent")
    TILE_SYM(cuMemAlloc, "cuMemAlloc_v2")
    TILE_SYM(cuMemFree, "cuMemFree_v2")
    TILE_SYM(cuModuleLoadData, "cuModuleLoadData")
    TILE_SYM(cuModuleGetFunction, "cuModuleGetFunction")
    TILE_SYM(cuLaunchKernel, "cuLaunchKernel")
    TILE_SYM(cuCtxSynchronize, "cuCtxSynchronize_v2")
#undef TILE_SYM
    return true;
  }
};

const char *kNoopPtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry noop4(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d)
{
  ret;
}
)";

bool rawCudaLaunch(Driver &d, long n, std::vector<Result> &results,
                   CUdeviceptr *bufs) {
  CUmodule mod;
  CUfunction fn;
  if (d.cuModuleLoadData(&mod, kNoopPtx) != 0 ||
      d.cuModuleGetFunction(&fn, mod, "noop4") != 0) {
    std::fprintf(stderr, "raw cuLaunchKernel: cannot load the PTX no-op\n");
    return false;
  }
  void *params[4] = {&bufs[0], &bufs[1], &bufs[2], &bufs[3]};
  for (int i = 0; i < 100; ++i)
    d.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
  d.cuCtxSynchronize();
  double t0 = nowNs();
  for (long i = 0; i < n; ++i)
    d.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
  d.cuCtxSynchronize();
  results.push_back({"raw cuLaunchKernel (PTX no-op, 4 pointers)",
                     (nowNs() - t0) / double(n)});
  return true;
}

// ---- tile runtime ---------------------------------------------------------

bool benchTile(const std::string &path, const std::string &backend, long n,
               std::vector<Result> &results, DLDevice device,
               CUdeviceptr *deviceBufs, Driver *driver) {
  tile_kernel_t k;
  if (tile_kernel_load_file(path.c_str(), backend.c_str(), &k) !=
      TILE_STATUS_OK) {
    std::fprintf(stderr, "%s: %s\n", backend.c_str(), tile_last_error());
    return false;
  }
  int32_t np = tile_kernel_num_params(k);
  std::vector<float> host(16 * 4, 1.0f);
  int64_t shape[1] = {16};
  std::vector<DLTensor> tensors(size_t(np > 0 ? np : 1));
  std::vector<tile_arg> args(size_t(np > 0 ? np : 1));
  for (int32_t i = 0; i < np; ++i) {
    tile_param_info info;
    tile_kernel_param(k, i, &info);
    DLTensor &t = tensors[size_t(i)];
    std::memset(&t, 0, sizeof t);
    t.data = device.device_type == kDLCPU
                 ? static_cast<void *>(host.data() + 16 * (i % 4))
                 : reinterpret_cast<void *>(deviceBufs[i % 4]);
    t.device = device;
    t.ndim = 1;
    t.dtype = info.dl_dtype;
    t.shape = shape;
    args[size_t(i)] = tile_arg_tensor(&t);
  }
  auto launch = [&] {
    return tile_kernel_launch(k, args.data(), np, nullptr, nullptr);
  };
  for (int i = 0; i < 1000; ++i)
    if (launch() != TILE_STATUS_OK) {
      std::fprintf(stderr, "%s: launch failed: %s\n", backend.c_str(),
                   tile_last_error());
      tile_kernel_release(k);
      return false;
    }
  if (driver)
    driver->cuCtxSynchronize();
  double t0 = nowNs();
  for (long i = 0; i < n; ++i)
    launch();
  if (driver)
    driver->cuCtxSynchronize();
  double t1 = nowNs();
  std::string what = std::string("tile C API, ") + tile_kernel_backend(k) +
                     " (" + tile_kernel_target_kind(k) + ")";
  if (device.device_type != kDLCPU)
    what += ", enqueue rate";
  results.push_back({what, (t1 - t0) / double(n)});
  tile_kernel_release(k);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string path, backend = "all";
  long n = 200000;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-n" && i + 1 < argc)
      n = std::atol(argv[++i]);
    else if (a.rfind("--backend=", 0) == 0)
      backend = a.substr(10);
    else if (a == "--json")
      json = true;
    else if (a == "-h" || a == "--help") {
      std::printf("usage: tile-bench-launch noop.tileb [-n N] "
                  "[--backend=auto|ffi|native|all] [--json]\n");
      return 0;
    } else
      path = a;
  }
  if (path.empty()) {
    std::fprintf(stderr, "tile-bench-launch: no bundle given (see --help)\n");
    return 2;
  }
  tile_kernel_t probe;
  if (tile_kernel_load_file(path.c_str(), "auto", &probe) != TILE_STATUS_OK) {
    std::fprintf(stderr, "tile-bench-launch: %s\n", tile_last_error());
    return 2;
  }
  std::string kind = tile_kernel_target_kind(probe);
  tile_kernel_release(probe);

  std::vector<Result> results;
  std::vector<std::string> backends =
      backend == "all" ? std::vector<std::string>{"ffi", "native"}
                       : std::vector<std::string>{backend};
  DLDevice device{kDLCPU, 0};
  CUdeviceptr bufs[4] = {0, 0, 0, 0};
  Driver d;
  if (kind == "cuda") {
    CUdevice dev;
    CUcontext ctx;
    if (!d.open() || d.cuInit(0) != 0 || d.cuDeviceGet(&dev, 0) != 0 ||
        d.cuDevicePrimaryCtxRetain(&ctx, dev) != 0 ||
        d.cuCtxSetCurrent(ctx) != 0) {
      std::fprintf(stderr, "tile-bench-launch: a cuda bundle needs a GPU\n");
      return 2;
    }
    for (CUdeviceptr &b : bufs)
      d.cuMemAlloc(&b, 16 * sizeof(float));
    device = {kDLCUDA, 0};
  }
  for (const std::string &b : backends)
    benchTile(path, b, n, results, device, bufs,
              kind == "cuda" ? &d : nullptr);
  if (kind == "cuda") {
    d.cuCtxSynchronize();
    rawCudaLaunch(d, n, results, bufs);
  }
  if (json) {
    std::printf("[");
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s{\"what\": \"%s\", \"us\": %.4f}", i ? ", " : "",
                  results[i].what.c_str(), results[i].nsPerLaunch / 1000.0);
    std::printf("]\n");
  } else {
    for (const Result &r : results)
      std::printf("%-50s %9.3f us/launch\n", r.what.c_str(),
                  r.nsPerLaunch / 1000.0);
  }
  return results.empty() ? 1 : 0;
}
