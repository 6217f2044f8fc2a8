//===- CudaTest.cpp - The CUDA device layer, without a GPU ----------------===//
//
// Three groups, none needing a GPU:
//   CudaNoDriver  a host without libcuda.so.1 gets NO_DEVICE with a clear
//                 message (TILE_CUDA_DRIVER points at a missing file);
//   CudaPlan      CUDA metadata / bundle checks and the kernelParams plan;
//   CudaMock      the whole launch path (driver load, primary context,
//                 cubin vs PTX, dynamic shared memory, kernelParams,
//                 allocation and deleter, launch errors, both backends,
//                 tile-run, the sm_90a TMA variants and their tensor-map
//                 cache) against a fake driver (fixtures/mock_cuda.c).
// The driver is a process-wide singleton kept once loaded: under ctest
// every test runs in its own process; run directly, a test whose driver
// state was taken by an earlier one skips itself.
//
//===----------------------------------------------------------------------===//
#include "CudaMock.h"
#include "Cuda/CudaDevice.h"
#include "Cuda/CudaDriver.h"
#include "Cuda/CudaTensorMap.h"
#include "Cuda/CudaVariants.h"
#include "Device.h"
#include "Metadata.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>

using namespace tiletest;
using namespace tile::rt;

// ---- no driver --------------------------------------------------------------

TEST(CudaNoDriver, LoadSaysNoDriver) {
  // Only in a shared process (see USE_MOCK): ctest runs this test alone.
  if (cuda::loadedDriver())
    GTEST_SKIP() << "a CUDA driver is already loaded in this process";
  ::setenv("TILE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  LoadResult r = tryLoad(cudaBundle(cudaAddMeta()), "ffi");
  EXPECT_EQ(r.status, TILE_STATUS_NO_DEVICE);
  EXPECT_EQ(r.message.rfind("no CUDA driver (/nonexistent/libcuda.so.1 not "
                            "found",
                            0),
            0u)
      << r.message;
  r = tryLoad(cudaBundle(cudaAddMeta()), "native");
  EXPECT_EQ(r.status, TILE_STATUS_NO_DEVICE);
  // A failed load is not cached: the next attempt tries again.
  EXPECT_EQ(cuda::loadedDriver(), nullptr);
  ::unsetenv("TILE_CUDA_DRIVER");
}

TEST(CudaNoDriver, ToolSaysNoDriver) {
  std::string dir = ::testing::TempDir() + "/tile-cuda-nodriver";
  std::system(("mkdir -p " + dir).c_str());
  std::string path = dir + "/add.tileb";
  {
    std::string b = cudaBundle(cudaAddMeta());
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
  std::string cmd = "TILE_CUDA_DRIVER=/nonexistent/libcuda.so.1 " +
                    std::string(TILE_TEST_TILE_RUN) + " " + path +
                    " --dims N=10 2>&1";
  FILE *p = ::popen(cmd.c_str(), "r");
  ASSERT_TRUE(p);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  int status = ::pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_NE(out.find("NO_DEVICE: no CUDA driver (/nonexistent/libcuda.so.1 "
                     "not found"),
            std::string::npos)
      << out;
}

// ---- metadata, bundle checks, kernelParams plan ----------------------------

TEST(CudaPlan, Metadata) {
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(cudaAddMeta().dump(), plan, error)) << error;
  EXPECT_EQ(plan.target, TargetKind::Cuda);
  EXPECT_EQ(plan.deviceType, kDLCUDA);
  EXPECT_EQ(plan.targetChip, "sm_90a");
  EXPECT_EQ(plan.entryKernel, "add_kernel");
  EXPECT_EQ(plan.block[0], 128);
  EXPECT_EQ(plan.sharedBytes, 16384);
}

TEST(CudaPlan, Chips) {
  int cc;
  bool a;
  EXPECT_TRUE(cuda::parseChip("sm_90a", cc, a));
  EXPECT_EQ(cc, 90);
  EXPECT_TRUE(a);
  EXPECT_TRUE(cuda::parseChip("sm_80", cc, a));
  EXPECT_EQ(cc, 80);
  EXPECT_FALSE(a);
  EXPECT_TRUE(cuda::parseChip("sm_100", cc, a));
  EXPECT_EQ(cc, 100);
  EXPECT_FALSE(cuda::parseChip("compute_90", cc, a));
  EXPECT_FALSE(cuda::parseChip("sm_", cc, a));
  EXPECT_FALSE(cuda::parseChip("sm_90ab", cc, a));
  EXPECT_TRUE(cuda::cubinRunsOn("sm_90a", 90));
  EXPECT_FALSE(cuda::cubinRunsOn("sm_90a", 100)); // arch-specific: exact
  EXPECT_TRUE(cuda::cubinRunsOn("sm_80", 86));    // same major, older minor
  EXPECT_FALSE(cuda::cubinRunsOn("sm_86", 80));
  EXPECT_FALSE(cuda::cubinRunsOn("sm_80", 90));   // other major: PTX
  EXPECT_FALSE(cuda::cubinRunsOn("sm_90", 0));
}

TEST(CudaPlan, KernelParamsFlattening) {
  // alpha (f32), X [M, K], n (i32), Y [N]: 1 + (3 + 4) + 1 + (3 + 2) = 14.
  json m = cudaAddMeta();
  m["params"] = {
      {{"name", "alpha"}, {"kind", "scalar"}, {"dtype", "float32"}},
      {{"name", "X"}, {"kind", "tensor"}, {"dtype", "float16"}, {"rank", 2},
       {"shape", {-1, -1}}, {"dims", {"M", "K"}}, {"output", false}},
      {{"name", "n"}, {"kind", "scalar"}, {"dtype", "int32"}},
      {{"name", "Y"}, {"kind", "tensor"}, {"dtype", "float32"}, {"rank", 1},
       {"shape", {-1}}, {"dims", {"N"}}, {"output", true}}};
  m["out_idx"] = {3};
  m["symbols"] = {"M", "K", "N"};
  m["grid"] = {{{"sym", "M"}}, {{"const", 1}}, {{"const", 1}}};
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(m.dump(), plan, error)) << error;
  std::vector<cuda::ParamRef> refs;
  ASSERT_EQ(cuda::buildParamPlan(plan, refs, error), TILE_STATUS_OK);
  ASSERT_EQ(refs.size(), 14u);

  float alpha = 0.5f;
  int32_t n = 7;
  int64_t x[7] = {0x1000, 0x1000, 0, 3, 4, 4, 1};
  int64_t y[5] = {0x2000, 0x2000, 0, 9, 1};
  void *args[4] = {&alpha, x, &n, y};
  void *kp[14];
  cuda::flattenParams(refs.data(), refs.size(), args, kp);
  EXPECT_EQ(kp[0], &alpha);
  for (int w = 0; w < 7; ++w)
    EXPECT_EQ(kp[1 + w], &x[w]) << w;
  EXPECT_EQ(kp[8], &n);
  for (int w = 0; w < 5; ++w)
    EXPECT_EQ(kp[9 + w], &y[w]) << w;
}

TEST(CudaPlan, TooManyKernelParams) {
  json m = cudaAddMeta();
  json params = json::array();
  // 60 rank-8 tensors: 60 * (3 + 16) = 1140 kernel parameters.
  for (int i = 0; i < 60; ++i)
    params.push_back({{"name", "t" + std::to_string(i)},
                      {"kind", "tensor"},
                      {"dtype", "float32"},
                      {"rank", 8},
                      {"shape", std::vector<int64_t>(8, 2)},
                      {"dims", std::vector<std::string>(8, "")},
                      {"output", false}});
  m["params"] = params;
  m["out_idx"] = json::array();
  m["symbols"] = json::array();
  m["grid"] = {{{"const", 1}}, {{"const", 1}}, {{"const", 1}}};
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(m.dump(), plan, error)) << error;
  std::vector<cuda::ParamRef> refs;
  EXPECT_EQ(cuda::buildParamPlan(plan, refs, error), TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(error, "kernel 'add' has 1140 CUDA kernel parameters (at most "
                   "1024 are supported)");
}

// Bundle problems are found before the driver is needed.
TEST(CudaPlan, BadBundles) {
  LoadResult r = tryLoad(cudaBundle(cudaAddMeta(), false, false));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle for target 'cuda' has neither a 'cubin' nor a "
                       "'ptx' section");
  r = tryLoad(cudaBundle(cudaAddMeta("gfx90a")));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle metadata: target.chip 'gfx90a' is not a CUDA "
                       "arch (expected e.g. sm_80, sm_90a)");
  json m = cudaAddMeta();
  m["entry"].erase("kernel");
  r = tryLoad(cudaBundle(m));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  m = cudaAddMeta();
  m["block"] = {2048, 1, 1};
  r = tryLoad(cudaBundle(m));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  r = tryLoad(cudaBundle(cudaAddMeta()), "metal-torch");
  EXPECT_EQ(r.message, "backend 'metal-torch' is not available for target "
                       "'cuda' (available: auto, ffi, native, nvrtc)");
}

// ---- the launch path against the mock driver --------------------------------

TEST(CudaMock, BothBackendsComputeAndAllocate) {
  USE_MOCK(mock);
  for (const char *backend : {"ffi", "native"}) {
    SCOPED_TRACE(backend);
    KernelGuard k(load(cudaBundle(cudaAddMeta()), backend));
    ASSERT_TRUE(k.k);
    EXPECT_STREQ(tile_kernel_backend(k), backend);
    const int64_t n = 1000;
    DevTensor a({n}), b({n});
    for (int64_t i = 0; i < n; ++i)
      a[size_t(i)] = float(i), b[size_t(i)] = 0.5f * float(i);
    int allocs = mock->allocs, frees = mock->frees;
    DLManagedTensor *out[1] = {nullptr};
    tile_outputs outs{out, 1, 0};
    tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
    void *stream = reinterpret_cast<void *>(0x1234);
    ASSERT_EQ(tile_kernel_launch(k, args, 2, stream, &outs), TILE_STATUS_OK)
        << tile_last_error();
    ASSERT_TRUE(out[0]);
    EXPECT_EQ(mock->allocs, allocs + 1);
    const DLTensor &c = out[0]->dl_tensor;
    EXPECT_EQ(c.device.device_type, kDLCUDA);
    EXPECT_EQ(c.device.device_id, 0);
    EXPECT_EQ(c.shape[0], n);
    const float *cv = static_cast<const float *>(c.data);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(cv[i], 1.5f * float(i)) << i;
    // Grid, block, shared memory and stream as documented.
    EXPECT_EQ(mock->grid[0], 16u);
    EXPECT_EQ(mock->grid[1], 1u);
    EXPECT_EQ(mock->block[0], 128u);
    EXPECT_EQ(mock->shared, 16384u);
    EXPECT_EQ(mock->stream, stream);
    EXPECT_STREQ(mock->last_function, "add_kernel");
    // kernelParams: {allocated, aligned, offset, size, stride} x 3.
    EXPECT_EQ(mock->params[0], int64_t(reinterpret_cast<intptr_t>(a.t.data)));
    EXPECT_EQ(mock->params[1], int64_t(reinterpret_cast<intptr_t>(a.t.data)));
    EXPECT_EQ(mock->params[2], 0);
    EXPECT_EQ(mock->params[3], n);
    EXPECT_EQ(mock->params[4], 1);
    EXPECT_EQ(mock->params[11], int64_t(reinterpret_cast<intptr_t>(c.data)));
    out[0]->deleter(out[0]);
    EXPECT_EQ(mock->frees, frees + 1);
    EXPECT_EQ(mock->pushes, mock->pops);
  }
}

TEST(CudaMock, ModuleLoadedOncePerDevice) {
  USE_MOCK(mock);
  const int cubins = mock->cubin_loads, ptxs = mock->ptx_loads;
  KernelGuard k(load(cudaBundle(cudaAddMeta()), "ffi"));
  ASSERT_TRUE(k.k);
  EXPECT_EQ(mock->cubin_loads + mock->ptx_loads, cubins + ptxs); // lazily
  DevTensor a({100}, 1.0f), b({100}, 2.0f), c({100});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (tile_kernel_launch(k, args, 3, nullptr, nullptr) != TILE_STATUS_OK)
          ++failures;
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mock->cubin_loads, cubins + 1);
  EXPECT_EQ(mock->ptx_loads, ptxs);
  EXPECT_EQ(c[99], 3.0f);
}

TEST(CudaMock, PtxWhenTheCubinDoesNotFit) {
  USE_MOCK(mock);
  const int cubins = mock->cubin_loads, ptxs = mock->ptx_loads,
            unloads = mock->unloads;
  DevTensor a({10}, 1.0f), b({10}, 2.0f), c({10});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  // An sm_80 cubin on the (mock) sm_90 device: JIT the PTX.
  {
    KernelGuard k(load(cudaBundle(cudaAddMeta("sm_80")), "ffi"));
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK);
    EXPECT_EQ(mock->ptx_loads, ptxs + 1);
    EXPECT_EQ(mock->cubin_loads, cubins);
  }
  EXPECT_EQ(mock->unloads, unloads + 1); // released with the kernel
  // The driver refuses the cubin: fall back to the PTX.
  ::setenv("MOCK_CUDA_NO_BINARY", "1", 1);
  {
    KernelGuard k(load(cudaBundle(cudaAddMeta()), "ffi"));
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK);
    EXPECT_EQ(mock->ptx_loads, ptxs + 2);
  }
  ::unsetenv("MOCK_CUDA_NO_BINARY");
  // No PTX and no usable cubin: a clear error at launch.
  {
    KernelGuard k(load(cudaBundle(cudaAddMeta("sm_80"), true, false), "ffi"));
    EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_LAUNCH_FAILED);
    EXPECT_STREQ(tile_last_error(),
                 "kernel 'add' was compiled for sm_80, which does not run on "
                 "CUDA device 0 (sm_90), and the bundle has no 'ptx' section "
                 "to JIT-compile");
  }
}

TEST(CudaMock, LargeSharedMemory) {
  USE_MOCK(mock);
  json m = cudaAddMeta();
  m["shared_bytes"] = 200000;
  KernelGuard k(load(cudaBundle(m), "ffi"));
  DevTensor a({10}, 1.0f), b({10}, 2.0f), c({10});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(mock->func_shared_attr, 200000);
  EXPECT_EQ(mock->shared, 200000u);
  m["shared_bytes"] = 300000; // above the device's opt-in limit
  KernelGuard k2(load(cudaBundle(m), "ffi"));
  EXPECT_EQ(tile_kernel_launch(k2, args, 3, nullptr, nullptr),
            TILE_STATUS_LAUNCH_FAILED);
  EXPECT_STREQ(tile_last_error(),
               "kernel 'add' needs 300000 bytes of shared memory, but CUDA "
               "device 0 (sm_90) allows 232448 per block");
}

TEST(CudaMock, LaunchErrors) {
  USE_MOCK(mock);
  for (const char *backend : {"ffi", "native"}) {
    SCOPED_TRACE(backend);
    KernelGuard k(load(cudaBundle(cudaAddMeta()), backend));
    DevTensor a({10}, 1.0f), b({10}, 2.0f);
    DLManagedTensor *out[1] = {nullptr};
    tile_outputs outs{out, 1, 0};
    tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
    int frees = mock->frees;
    mock->fail_launch = 700;
    EXPECT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs),
              TILE_STATUS_LAUNCH_FAILED);
    EXPECT_STREQ(tile_last_error(),
                 "kernel 'add': cuLaunchKernel failed: "
                 "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
                 "encountered) (grid [1, 1, 1], block [128, 1, 1], 16384 "
                 "bytes of dynamic shared memory)");
    EXPECT_EQ(out[0], nullptr);
    EXPECT_EQ(mock->frees, frees + 1); // the allocated output was freed

    // Same argument-check messages as on CPU.
    HostTensor cpu({10});
    tile_arg bad[2] = {tile_arg_tensor(cpu.dl()), tile_arg_tensor(b.dl())};
    EXPECT_EQ(tile_kernel_launch(k, bad, 2, nullptr, &outs),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(tile_last_error(),
                 "argument 'A' (#0): expected a cuda tensor, got a cpu tensor");
    DevTensor other({10}, 0.0f, 1);
    tile_arg mixed[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(other.dl())};
    EXPECT_EQ(tile_kernel_launch(k, mixed, 2, nullptr, &outs),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(tile_last_error(),
                 "argument 'B' (#1): is on device 1, but the first tensor "
                 "argument is on device 0");
    // A device the driver does not have.
    DevTensor a3({10}, 0.0f, 3), b3({10}, 0.0f, 3), c3({10}, 0.0f, 3);
    tile_arg far[3] = {tile_arg_tensor(a3.dl()), tile_arg_tensor(b3.dl()),
                       tile_arg_tensor(c3.dl())};
    EXPECT_EQ(tile_kernel_launch(k, far, 3, nullptr, nullptr),
              TILE_STATUS_LAUNCH_FAILED);
    EXPECT_STREQ(tile_last_error(), "kernel 'add': CUDA device 3 does not "
                                    "exist (the driver sees 1)");
  }
}

TEST(CudaMock, ToolRunsAndComparesBackends) {
  std::string dir = ::testing::TempDir() + "/tile-cuda-mock-tool";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::string path = dir + "/add.tileb";
  {
    std::string b = cudaBundle(cudaAddMeta());
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
  std::string cmd = "TILE_CUDA_DRIVER=" + std::string(TILE_TEST_MOCK_CUDA_SO) +
                    " " + TILE_TEST_TILE_RUN + " " + path +
                    " --dims N=300 -n 3 --compare-backends ffi,native "
                    "--save-outputs " + dir + "/out 2>&1";
  FILE *p = ::popen(cmd.c_str(), "r");
  ASSERT_TRUE(p);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  int status = ::pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("add [ffi, cuda:0]: 3 runs"), std::string::npos) << out;
  EXPECT_NE(out.find("add [native, cuda:0]: 3 runs"), std::string::npos)
      << out;
  EXPECT_NE(out.find("backends agree"), std::string::npos) << out;
  EXPECT_NE(out.find("C.npy [300]"), std::string::npos) << out;
  std::system(("rm -rf " + dir).c_str());
}

// ---- sm_90a kernel variants (CudaVariants.h)
// ---------------------------------

namespace {

json tmaEntry(int param, const char *dtype, std::vector<int> box) {
  json e = {{"param", param},         {"dtype", dtype},
            {"rank", box.size()},     {"box", box},
            {"interleave", "none"},   {"swizzle", "128B"},
            {"l2_promotion", "256B"}, {"oob_fill", "zero"}};
  std::vector<int> ones(box.size(), 1);
  e["element_strides"] = ones;
  return e;
}

/// The add fixture with an "sm90_tma_wgmma" variant: maps of A and B.
json cudaAddVariantMeta(const char *chip = "sm_90a") {
  json m = cudaAddMeta(chip);
  m["variants"] = {
      {{"kind", "sm90_tma_wgmma"},
       {"chip", "sm_90a"},
       {"kernel", "add_kernel_sm90"},
       {"block", {384, 1, 1}},
       {"shared_bytes", 200000},
       {"tma", {tmaEntry(0, "float32", {32}), tmaEntry(1, "float32", {32})}}}};
  return m;
}

/// A 2-D float32 "mm" kernel (ffi only, the mock computes nothing) with a
/// variant mapping A (M x K) and B (K x N).
json cudaMmVariantMeta() {
  json m = mmMeta();
  m["target"] = {{"kind", "cuda"}, {"chip", "sm_90a"}, {"features", "+ptx80"}};
  m["block"] = {128, 1, 1};
  m["shared_bytes"] = 0;
  m["entry"] = {{"blocks", "mm__tile_blocks"}, {"kernel", "mm_kernel"}};
  m["variants"] = {
      {{"kind", "sm90_tma_wgmma"},
       {"chip", "sm_90a"},
       {"kernel", "mm_kernel_sm90"},
       {"block", {384, 1, 1}},
       {"shared_bytes", 1024},
       {"tma",
        {tmaEntry(0, "float32", {32, 16}), tmaEntry(1, "float32", {32, 16})}}}};
  return m;
}

/// The 128-byte map at device (= host, in the mock) address `p`.
const uint64_t *mapAt(int64_t p) {
  return reinterpret_cast<const uint64_t *>(static_cast<intptr_t>(p));
}

} // namespace

TEST(CudaVariants, ParseAndCheck) {
  KernelPlan plan;
  std::string error;
  json m = cudaAddVariantMeta();
  // The variants are parsed once, with the rest of the metadata.
  auto parse = [&](const json &meta) {
    return parseMetadata(meta.dump(), plan, error);
  };
  ASSERT_TRUE(parse(m)) << error;
  ASSERT_EQ(plan.variants.size(), 1u);
  EXPECT_EQ(plan.variants[0].tma[1].swizzle, "128B");
  std::vector<cuda::VariantSpec> vs;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].kernel, "add_kernel_sm90");
  EXPECT_EQ(vs[0].block[0], 384u);
  EXPECT_EQ(vs[0].sharedBytes, 200000u);
  ASSERT_EQ(vs[0].tma.size(), 2u);
  EXPECT_EQ(vs[0].tma[1].param, 1);
  EXPECT_EQ(vs[0].tma[1].dataType, cuda::kTensorMapFloat32);
  EXPECT_EQ(vs[0].tma[1].box[0], 32u);
  EXPECT_EQ(vs[0].tma[1].swizzle, cuda::kSwizzle128B);
  EXPECT_FALSE(vs[0].tma[1].optional);
  // "optional": a boolean.
  m["variants"][0]["tma"][1]["optional"] = true;
  ASSERT_TRUE(parse(m)) << error;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  EXPECT_TRUE(vs[0].tma[1].optional);
  m["variants"][0]["tma"][1]["optional"] = "yes";
  EXPECT_FALSE(parse(m));
  EXPECT_NE(error.find("variants[0].tma[1].optional must be a boolean"),
            std::string::npos)
      << error;
  m = cudaAddVariantMeta();
  // Unknown kinds are dropped; a malformed known one is a bundle error.
  m["variants"][0]["kind"] = "future_kind";
  m["variants"][0]["block"] = "anything";
  ASSERT_TRUE(parse(m)) << error;
  EXPECT_TRUE(plan.variants.empty());
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error));
  EXPECT_TRUE(vs.empty());
  m = cudaAddVariantMeta();
  m["variants"][0]["tma"][1]["dtype"] = "float16";
  EXPECT_FALSE(parse(m));
  EXPECT_EQ(error, "bundle metadata: variants[0].tma[1].dtype 'float16' is "
                   "not a tensor map type of the param's dtype 'float32'");
  // A dtype of the right size that has no tensor map type, and an enum name
  // the driver does not know, are found when the CUDA layer maps them.
  m = cudaAddVariantMeta();
  m["variants"][0]["tma"][1]["swizzle"] = "96B";
  ASSERT_TRUE(parse(m)) << error;
  EXPECT_FALSE(cuda::makeVariantSpecs(plan, vs, error));
  EXPECT_EQ(error, "bundle metadata: variants[0].tma[1].swizzle is not a "
                   "known value");
  m = cudaAddVariantMeta();
  m["variants"][0]["tma"][0]["box"] = {300};
  EXPECT_FALSE(parse(m));
  EXPECT_EQ(error, "bundle metadata: variants[0].tma[0].box must be rank "
                   "integers in 1..256");
  m = cudaAddVariantMeta();
  m["variants"][0]["tma"][0]["param"] = 7;
  EXPECT_FALSE(parse(m));
  EXPECT_EQ(error, "bundle metadata: variants[0].tma[0].param (7) must be "
                   "the index of a tensor param");
  // "grid": "launch" (default) or "sms" (persistent); anything else is an
  // error.
  m = cudaAddVariantMeta();
  m["variants"][0]["grid"] = "sms";
  ASSERT_TRUE(parse(m)) << error;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_TRUE(vs[0].gridSms);
  m["variants"][0]["grid"] = "launch";
  ASSERT_TRUE(parse(m)) << error;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  EXPECT_FALSE(vs[0].gridSms);
  m["variants"][0]["grid"] = 3;
  EXPECT_FALSE(parse(m));
  EXPECT_EQ(error,
            "bundle metadata: variants[0].grid must be \"launch\" or \"sms\"");
  // "max_tiles": a positive integer (absent: 0 = any launch); fields this
  // runtime does not know are ignored.
  m = cudaAddVariantMeta();
  m["variants"][0]["max_tiles"] = 528;
  m["variants"][0]["future_field"] = {1, 2};
  ASSERT_TRUE(parse(m)) << error;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].maxTiles, 528);
  for (json bad : {json(0), json(-3), json("4"), json(1.5)}) {
    m["variants"][0]["max_tiles"] = bad;
    EXPECT_FALSE(parse(m));
    EXPECT_EQ(error,
              "bundle metadata: variants[0].max_tiles must be a positive "
              "integer");
  }
  // The per-tensor checks (generic kernel when they fail).
  cuda::TmaSpec t;
  t.dataType = cuda::kTensorMapFloat16;
  t.elementBytes = 2;
  t.rank = 2;
  t.box[0] = 64, t.box[1] = 128;
  alignas(16) static char buf[64];
  int64_t ok[2] = {100, 64}, oddPitch[2] = {100, 60}, zero[2] = {0, 64},
          huge[2] = {int64_t(1) << 31, 64};
  EXPECT_EQ(cuda::checkTensorMap(t, buf, ok), "");
  EXPECT_EQ(cuda::checkTensorMap(t, buf, oddPitch),
            "tensor pitch of dim 0 (120 bytes) is not a multiple of 16 bytes");
  EXPECT_EQ(cuda::checkTensorMap(t, buf, zero),
            "tensor dim 0 is 0 or too large for a tensor map");
  // Rows at 2^31 and beyond: out of reach of 32-bit signed coordinates.
  EXPECT_EQ(cuda::checkTensorMap(t, buf, huge),
            "tensor dim 0 is 0 or too large for a tensor map");
  EXPECT_EQ(cuda::checkTensorMap(t, buf + 8, ok),
            "tensor data is not 16-byte aligned");
}

TEST(CudaMock, VariantInfoThroughTheCApi) {
  USE_MOCK(mock);
  json m = cudaAddVariantMeta();
  m["variants"][0]["max_tiles"] = 64;
  m["variants"][0]["grid"] = "sms";
  m["variants"][0]["schedule"] = "pingpong";
  m["variants"].push_back({{"kind", "future_kind"}});
  KernelGuard k(load(cudaBundle(m), "ffi"));
  ASSERT_TRUE(k.k);
  ASSERT_EQ(tile_kernel_num_variants(k), 1); // the unknown kind is dropped
  tile_variant_info v;
  ASSERT_EQ(tile_kernel_variant(k, 0, &v), TILE_STATUS_OK);
  EXPECT_STREQ(v.kind, "sm90_tma_wgmma");
  EXPECT_STREQ(v.chip, "sm_90a");
  EXPECT_STREQ(v.kernel, "add_kernel_sm90");
  EXPECT_EQ(v.block[0], 384);
  EXPECT_EQ(v.shared_bytes, 200000);
  EXPECT_STREQ(v.grid, "sms");
  EXPECT_EQ(v.max_tiles, 64);
  EXPECT_STREQ(v.schedule, "pingpong");
  ASSERT_EQ(v.num_tma, 2);
  EXPECT_EQ(v.tma[1].param, 1);
  EXPECT_EQ(v.tma[1].rank, 1);
  EXPECT_STREQ(v.tma[1].dtype, "float32");
  EXPECT_EQ(v.tma[1].box[0], 32);
  EXPECT_EQ(v.tma[1].element_strides[0], 1);
  EXPECT_STREQ(v.tma[1].swizzle, "128B");
  EXPECT_STREQ(v.tma[1].l2_promotion, "256B");
  EXPECT_STREQ(v.tma[1].interleave, "none");
  EXPECT_STREQ(v.tma[1].oob_fill, "zero");
  EXPECT_EQ(tile_kernel_variant(k, 1, &v), TILE_STATUS_INVALID_ARGUMENT);
}

TEST(CudaMock, VariantOnSm90CubinBothBackends) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  for (const char *backend : {"ffi", "native"}) {
    SCOPED_TRACE(backend);
    KernelGuard k(load(cudaBundle(cudaAddVariantMeta()), backend));
    ASSERT_TRUE(k.k);
    const int64_t n = 1000;
    DevTensor a({n}), b({n}), c({n});
    for (int64_t i = 0; i < n; ++i)
      a[size_t(i)] = float(i), b[size_t(i)] = 2.0f;
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(c.dl())};
    const int encodes = mock->encodes, copies = mock->htod_async,
              allocs = mock->allocs;
    void *stream = reinterpret_cast<void *>(0x77);
    ASSERT_EQ(tile_kernel_launch(k, args, 3, stream, nullptr), TILE_STATUS_OK)
        << tile_last_error();
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
    EXPECT_EQ(mock->block[0], 384u);
    EXPECT_EQ(mock->shared, 200000u);
    EXPECT_EQ(mock->func_shared_attr, 200000);
    EXPECT_EQ(mock->stream, stream);
    EXPECT_EQ(c[999], 1001.0f);
    EXPECT_EQ(mock->encodes, encodes + 2);
    EXPECT_EQ(mock->htod_async, copies + 2);
    EXPECT_EQ(mock->allocs, allocs + 1); // the map cache, once
    EXPECT_EQ(mock->enc_type, cuda::kTensorMapFloat32);
    EXPECT_EQ(mock->enc_rank, 1);
    EXPECT_EQ(mock->enc_dims[0], uint64_t(n));
    EXPECT_EQ(mock->enc_box[0], 32u);
    EXPECT_EQ(mock->enc_swizzle, cuda::kSwizzle128B);
    EXPECT_EQ(mock->enc_l2, cuda::kL2Promotion256B);
    EXPECT_EQ(mock->enc_oob, cuda::kOobFillZero);
    // Two trailing params: device pointers to A's and B's maps, 64-aligned.
    ASSERT_EQ(mock->nparams, 17);
    EXPECT_EQ(mock->params[15] % 64, 0);
    EXPECT_EQ(mapAt(mock->params[15])[0],
              uint64_t(reinterpret_cast<uintptr_t>(a.t.data)));
    EXPECT_EQ(mapAt(mock->params[15])[1], uint64_t(n));
    EXPECT_EQ(mapAt(mock->params[16])[0],
              uint64_t(reinterpret_cast<uintptr_t>(b.t.data)));
    // Same tensors again, from several threads: no encode, no copy.
    const int64_t mapA = mock->params[15];
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 25; ++i)
          if (tile_kernel_launch(k, args, 3, stream, nullptr) != TILE_STATUS_OK)
            ++failures;
      });
    for (auto &t : threads)
      t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(mock->encodes, encodes + 2);
    EXPECT_EQ(mock->htod_async, copies + 2);
    EXPECT_EQ(mock->params[15], mapA);
    // A new B: one encode (A's map is reused).
    DevTensor b2({n}, 5.0f);
    args[1] = tile_arg_tensor(b2.dl());
    ASSERT_EQ(tile_kernel_launch(k, args, 3, stream, nullptr), TILE_STATUS_OK);
    EXPECT_EQ(mock->encodes, encodes + 3);
    EXPECT_EQ(mock->params[15], mapA);
    EXPECT_EQ(c[10], 15.0f);
    // Not 16-byte aligned data (A from element 1): the generic kernel.
    DevTensor big({n + 1}, 1.0f);
    big.t.shape[0] = n;
    big.t.byte_offset = 4;
    args[0] = tile_arg_tensor(big.dl());
    ASSERT_EQ(tile_kernel_launch(k, args, 3, stream, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel");
    EXPECT_EQ(mock->block[0], 128u);
    EXPECT_EQ(mock->shared, 16384u);
    EXPECT_EQ(c[10], 6.0f);
  }
  EXPECT_EQ(mock->pushes, mock->pops);
}

TEST(CudaMock, PersistentVariantGrid) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  unsigned launchGrid[3];
  for (const char *grid : {"launch", "sms"}) {
    SCOPED_TRACE(grid);
    json m = cudaAddVariantMeta();
    m["variants"][0]["grid"] = grid;
    KernelGuard k(load(cudaBundle(m), "ffi"));
    ASSERT_TRUE(k.k);
    for (int64_t n : {int64_t(1000), int64_t(1) << 20}) {
      DevTensor a({n}, 1.0f), b({n}, 2.0f), c({n});
      tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                          tile_arg_tensor(c.dl())};
      ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
                TILE_STATUS_OK)
          << tile_last_error();
      EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
      if (std::string(grid) == "launch") {
        if (n == 1000)
          std::copy(mock->grid, mock->grid + 3, launchGrid);
        continue;
      }
      // One CTA per SM (the mock has 132), at most one per tile, along x.
      if (n == 1000)
        EXPECT_EQ(mock->grid[0],
                  std::min(132u, launchGrid[0] * launchGrid[1] * launchGrid[2]));
      else
        EXPECT_EQ(mock->grid[0], 132u);
      EXPECT_EQ(mock->grid[1], 1u);
      EXPECT_EQ(mock->grid[2], 1u);
    }
  }
}

/// Two variants: a small-grid one (also mapping C, "max_tiles") and a
/// persistent one.
TEST(CudaMock, VariantSelectionByTileCount) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  json m = cudaAddVariantMeta();
  json small = m["variants"][0];
  small["kernel"] = "add_kernel_sm90_t";
  small["grid"] = "sms";
  small["max_tiles"] = 100;
  small["tma"].push_back(tmaEntry(2, "float32", {32}));
  m["variants"][0]["grid"] = "sms";
  m["variants"] = {small, m["variants"][0]};
  KernelGuard k(load(cudaBundle(m), "ffi"));
  ASSERT_TRUE(k.k);
  const int allocs = mock->allocs;
  // 64 elements per tile: 16, 16384, 100 and 101 tiles.
  for (int64_t n : {int64_t(1000), int64_t(1) << 20, int64_t(6400),
                    int64_t(6401)}) {
    SCOPED_TRACE(n);
    DevTensor a({n}, 1.0f), b({n}, 2.0f), c({n});
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(c.dl())};
    const int encodes = mock->encodes;
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK)
        << tile_last_error();
    if (n == 1000 || n == 6400) { // <= 100 tiles: small-grid, 3 maps
      EXPECT_STREQ(mock->last_function, "add_kernel_sm90_t");
      EXPECT_EQ(mock->encodes, encodes + 3);
      EXPECT_EQ(mock->grid[0], unsigned(n + 63) / 64);
    } else { // more tiles: the next variant, its own cache (2 maps)
      EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
      EXPECT_EQ(mock->encodes, encodes + 2);
      EXPECT_EQ(mock->grid[0], std::min<unsigned>(132u, unsigned(n + 63) / 64));
    }
    EXPECT_EQ(c[0], 3.0f);
  }
  // One map cache per variant (allocated when the module is loaded, at
  // the first launch).
  EXPECT_EQ(mock->allocs - allocs, 2);
  // The small-grid variant's map of C fails (not 16-byte aligned): the
  // next variant (which does not map C) runs the launch.
  const int64_t n = 1000;
  DevTensor a({n}, 1.0f), b({n}, 4.0f), big({n + 1});
  big.t.shape[0] = n;
  big.t.byte_offset = 4;
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(big.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
  // And A misaligned too: neither variant, the generic kernel.
  DevTensor bigA({n + 1}, 1.0f);
  bigA.t.shape[0] = n;
  bigA.t.byte_offset = 4;
  args[0] = tile_arg_tensor(bigA.dl());
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "add_kernel");
  k.k = (tile_kernel_release(k.k), nullptr);
}

/// An optional map (the TMA-store epilogue's C): a launch whose tensor no
/// map describes runs the same variant with a null map pointer, instead of
/// falling through to the next variant.
TEST(CudaMock, VariantOptionalTensorMap) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  json m = cudaAddVariantMeta();
  json c = tmaEntry(2, "float32", {32});
  c["optional"] = true;
  m["variants"][0]["tma"].push_back(c);
  m["variants"][0]["kernel"] = "add_kernel_sm90_cmap";
  KernelGuard k(load(cudaBundle(m), "ffi"));
  ASSERT_TRUE(k.k);
  tile_variant_info v;
  ASSERT_EQ(tile_kernel_variant(k, 0, &v), TILE_STATUS_OK);
  ASSERT_EQ(v.num_tma, 3);
  const int64_t n = 1000;
  DevTensor a({n}, 1.0f), b({n}, 2.0f), cAligned({n}), big({n + 1});
  big.t.shape[0] = n;
  big.t.byte_offset = 4; // not 16-byte aligned: no map of C
  for (bool aligned : {true, false}) {
    SCOPED_TRACE(aligned);
    DevTensor &out = aligned ? cAligned : big;
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(out.dl())};
    const int encodes = mock->encodes;
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK)
        << tile_last_error();
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90_cmap");
    ASSERT_EQ(mock->nparams, 18);
    EXPECT_NE(mock->params[15], 0);
    EXPECT_NE(mock->params[16], 0);
    if (aligned) {
      EXPECT_EQ(mock->encodes, encodes + 3);
      ASSERT_NE(mock->params[17], 0);
      EXPECT_EQ(mapAt(mock->params[17])[0],
                uint64_t(reinterpret_cast<uintptr_t>(out.t.data)));
    } else {
      EXPECT_EQ(mock->encodes, encodes); // A's and B's maps are cached
      EXPECT_EQ(mock->params[17], 0);
    }
    EXPECT_EQ(out[999], 3.0f);
  }
  // A required map that fails still sends the launch on (generic kernel).
  DevTensor bigA({n + 1}, 1.0f);
  bigA.t.shape[0] = n;
  bigA.t.byte_offset = 4;
  tile_arg args[3] = {tile_arg_tensor(bigA.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(cAligned.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "add_kernel");
}

TEST(CudaMock, VariantCacheIsBounded) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  KernelGuard k(load(cudaBundle(cudaAddVariantMeta()), "ffi"));
  const int allocs = mock->allocs, frees = mock->frees, encodes = mock->encodes,
            syncs = mock->ctx_syncs;
  // 40 launches with fresh A and B: 80 maps through 64 cache slots.
  std::vector<std::unique_ptr<DevTensor>> keep;
  for (int i = 0; i < 40; ++i) {
    keep.push_back(
        std::make_unique<DevTensor>(std::vector<int64_t>{64}, float(i)));
    keep.push_back(std::make_unique<DevTensor>(std::vector<int64_t>{64}, 1.0f));
    DevTensor c({64});
    tile_arg args[3] = {tile_arg_tensor(keep[keep.size() - 2]->dl()),
                        tile_arg_tensor(keep.back()->dl()),
                        tile_arg_tensor(c.dl())};
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
    EXPECT_EQ(c[63], float(i) + 1.0f);
  }
  EXPECT_EQ(mock->encodes, encodes + 80);
  EXPECT_EQ(mock->allocs, allocs + 1);
  EXPECT_EQ(mock->ctx_syncs, syncs + 16); // each replacement waits first
  k.k = (tile_kernel_release(k.k), nullptr);
  EXPECT_EQ(mock->frees, frees + 1); // the cache is freed with the kernel
}

TEST(CudaMock, VariantNeedsCubinAndNoOptOut) {
  USE_MOCK(mock);
  DevTensor a({100}, 1.0f), b({100}, 2.0f), c({100});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  // The driver refuses the cubin: PTX JIT, generic kernel.
  ::setenv("MOCK_CUDA_NO_BINARY", "1", 1);
  {
    KernelGuard k(load(cudaBundle(cudaAddVariantMeta()), "ffi"));
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel");
  }
  ::unsetenv("MOCK_CUDA_NO_BINARY");
  // TILE_DISABLE_VARIANTS=1: generic kernel, nothing encoded.
  ::setenv("TILE_DISABLE_VARIANTS", "1", 1);
  for (const char *backend : {"ffi", "native"}) {
    const int encodes = mock->encodes;
    KernelGuard k(load(cudaBundle(cudaAddVariantMeta()), backend));
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel");
    EXPECT_EQ(mock->block[0], 128u);
    EXPECT_EQ(mock->encodes, encodes);
  }
  ::unsetenv("TILE_DISABLE_VARIANTS");
  {
    KernelGuard k(load(cudaBundle(cudaAddVariantMeta()), "ffi"));
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
    EXPECT_EQ(c[99], 3.0f);
  }
}

TEST(CudaMock, VariantNeedsAlignedPitch) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  KernelGuard k(
      load(cudaBundle(cudaMmVariantMeta(), true, true, false), "ffi"));
  ASSERT_TRUE(k.k);
  for (int64_t K : {8, 5}) {
    SCOPED_TRACE(K);
    DevTensor a({16, K}), b({K, 24}), c({16, 24});
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(c.dl())};
    const int encodes = mock->encodes;
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
        << tile_last_error();
    if (K == 8) { // pitches 32 and 96 bytes: both mapped
      EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
      EXPECT_EQ(mock->encodes, encodes + 2);
      EXPECT_EQ(mock->enc_rank, 2);
      EXPECT_EQ(mock->enc_dims[0], 24u); // B: innermost (N) first
      EXPECT_EQ(mock->enc_dims[1], uint64_t(K));
      EXPECT_EQ(mock->enc_strides[0], 96u);
      EXPECT_EQ(mock->enc_box[0], 32u);
      EXPECT_EQ(mock->enc_box[1], 16u);
    } else { // A's pitch is 20 bytes: generic kernel, nothing encoded
      EXPECT_STREQ(mock->last_function, "mm_kernel");
      EXPECT_EQ(mock->encodes, encodes);
      EXPECT_EQ(mock->block[0], 128u);
    }
  }
}

// Last in this file: run in a shared process it would make the (cached)
// mock device 8.6 for the tests after it; under ctest it runs alone.
TEST(CudaMock, VariantNotOnSm8x) {
  ::setenv("MOCK_CUDA_CC", "86", 1);
  USE_MOCK(mock);
  cuda::Driver *d = nullptr;
  ASSERT_EQ(cuda::load(d), TILE_STATUS_OK);
  const int cc = d->computeCapability(0); // the mock reads MOCK_CUDA_CC
  ::unsetenv("MOCK_CUDA_CC");
  if (cc != 86) // only in a shared process (see USE_MOCK)
    GTEST_SKIP() << "the mock device was set up earlier in this process";
  // An sm_80 bundle whose metadata (wrongly) lists the variant: the cubin
  // runs on 8.6, the variant does not.
  KernelGuard k(load(cudaBundle(cudaAddVariantMeta("sm_80")), "ffi"));
  DevTensor a({100}, 1.0f), b({100}, 2.0f), c({100});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  const int encodes = mock->encodes;
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "add_kernel");
  EXPECT_EQ(mock->encodes, encodes);
}

// ---- metadata vs code (docs/bundle.md, "Trust model") -------------------------

TEST(CudaMock, DeviceCodeMetadataHash) {
  USE_MOCK(mock);
  json meta = cudaAddMeta();
  DevTensor a({10}, 1.0f), b({10}, 2.0f), c({10});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  mock->has_hash = 1;
  mock->hash = tile::bundle::metadataHash(meta.dump());
  {
    KernelGuard k(load(cudaBundle(meta), "ffi"));
    EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
        << tile_last_error();
  }
  // Metadata edited after the compile: the module load is refused at the
  // first launch (LAUNCH_FAILED, as any failed module load), before
  // anything is launched.
  const int launches = mock->launches;
  meta["params"][2]["dtype"] = "int8";
  {
    KernelGuard k(load(cudaBundle(meta), "ffi"));
    DevTensor c8({10});
    c8.t.dtype = {kDLInt, 8, 1};
    args[2] = tile_arg_tensor(c8.dl());
    EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_LAUNCH_FAILED);
    EXPECT_EQ(std::string(tile_last_error())
                  .rfind("bundle metadata does not match its code: the cubin "
                         "of kernel 'add' was compiled from metadata with hash ",
                         0),
              0u)
        << tile_last_error();
  }
  EXPECT_EQ(mock->launches, launches);
  mock->has_hash = 0;
}

TEST(CudaPlan, EntryRolesAndTruncatedNativeSo) {
  // A variant kernel takes trailing tensor-map params: it must not double
  // as entry.kernel; and entry.kernel cannot be a host entry point.
  json m = cudaAddVariantMeta();
  m["variants"][0]["kernel"] = "add_kernel";
  LoadResult r = tryLoad(cudaBundle(m));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle metadata: variants[0].kernel 'add_kernel' is "
                       "also entry.kernel");
  m = cudaAddMeta();
  m["entry"]["kernel"] = "add__tile_native";
  r = tryLoad(cudaBundle(m));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle metadata: entry.kernel 'add__tile_native' has "
                       "the native wrapper's (entry.native) name, not a device "
                       "kernel's");
  // A truncated native.so is refused at load, before it could be dlopen()ed.
  std::string so = readFile(TILE_TEST_ADD_CUDA_SO);
  r = tryLoad(tile::bundle::write({{"metadata", cudaAddMeta().dump()},
                                   {"cubin", fakeCubin()},
                                   {"native.so", so.substr(0, so.size() / 2)}}));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message.rfind("section 'native.so' ", 0), 0u)
      << r.message;
}
