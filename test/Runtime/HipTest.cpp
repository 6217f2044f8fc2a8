//===- HipTest.cpp - The HIP device layer, without a GPU ------------------===//
//
// Three groups, none needing a GPU:
//   HipNoRuntime  a host without libamdhip64.so gets NO_DEVICE with a clear
//                 message (TILE_HIP_PATH points at a missing file);
//   HipPlan       HIP metadata / bundle checks (before any runtime load);
//   HipMock       the whole launch path (runtime load, lazy hsaco load per
//                 device, grid/block/LDS/kernelParams, stream, allocation
//                 and deleter, errors mapped to statuses, both backends,
//                 the metadata hash, the device memory API) against a fake
//                 libamdhip64 (fixtures/mock_hip.c).
// The runtime is a process-wide singleton kept once loaded: under ctest
// every test runs in its own process; run directly, a test whose runtime
// state was taken by an earlier one skips itself.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "Hip/HipDriver.h"
#include "Metadata.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>

using namespace tiletest;
using namespace tile::rt;

namespace {

struct MockState {
  int allocs, frees, loads, unloads, launches, set_device, current;
  unsigned grid[3], block[3], shared;
  void *stream;
  int nparams;
  int64_t params[64];
  int fail_launch;
  char last_function[64];
  int has_hash;
  uint64_t hash;
  int events, records;
};

json hipAddMeta(const char *chip = "gfx942") {
  json m = addMeta();
  m["target"] = {{"kind", "hip"}, {"chip", chip}, {"features", ""}};
  m["block"] = {256, 1, 1};
  m["shared_bytes"] = 32768;
  m["entry"] = {{"blocks", "add__tile_blocks"},
                {"native", "add__tile_native"},
                {"kernel", "add_kernel"}};
  return m;
}

std::string fakeHsaco() { return std::string("\x7f" "ELF fake hsaco add_kernel"); }

std::string hipBundle(const json &meta, bool hsaco = true, bool native = true) {
  std::vector<tile::bundle::Section> s = {{"metadata", meta.dump()}};
  if (hsaco)
    s.push_back({"hsaco", fakeHsaco()});
  if (native)
    s.push_back({"native.so", readFile(TILE_TEST_ADD_HIP_SO)});
  return tile::bundle::write(s);
}

struct LoadResult {
  tile_status status;
  std::string message;
  tile_kernel_t kernel = nullptr;
};

LoadResult tryLoad(const std::string &b, const char *backend = "auto") {
  LoadResult r;
  r.status = tile_kernel_load_memory(b.data(), b.size(), backend, &r.kernel);
  if (r.status != TILE_STATUS_OK)
    r.message = tile_last_error();
  return r;
}

/// Points the runtime at the mock; nullptr (test skipped by the caller) if
/// another HIP runtime was loaded earlier in this process.
MockState *useMock() {
  ::setenv("TILE_HIP_PATH", TILE_TEST_MOCK_HIP_SO, 1);
  hip::Driver *d = nullptr;
  if (hip::load(d) != TILE_STATUS_OK)
    return nullptr;
  void *h = ::dlopen(TILE_TEST_MOCK_HIP_SO, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return nullptr;
  auto state =
      reinterpret_cast<MockState *(*)()>(::dlsym(h, "mock_hip_state"));
  ::dlclose(h);
  return state ? state() : nullptr;
}

#define USE_MOCK(var)                                                          \
  MockState *var = useMock();                                                  \
  if (!var)                                                                    \
    GTEST_SKIP() << "another HIP runtime is loaded in this process";

/// A float32 "device" tensor of the mock (its device memory is host memory).
struct DevTensor : HostTensor {
  explicit DevTensor(std::vector<int64_t> shape, float fill = 0.0f,
                     int device = 0)
      : HostTensor(std::move(shape), fill) {
    t.device = {kDLROCM, device};
  }
};

} // namespace

// ---- no runtime -------------------------------------------------------------

TEST(HipNoRuntime, LoadSaysNoRuntime) {
  if (hip::loadedDriver())
    GTEST_SKIP() << "a HIP runtime is already loaded in this process";
  ::setenv("TILE_HIP_PATH", "/nonexistent/libamdhip64.so", 1);
  for (const char *backend : {"auto", "ffi", "native"}) {
    LoadResult r = tryLoad(hipBundle(hipAddMeta()), backend);
    EXPECT_EQ(r.status, TILE_STATUS_NO_DEVICE) << backend;
    EXPECT_EQ(r.message.rfind("no HIP runtime (/nonexistent/libamdhip64.so: ",
                              0),
              0u)
        << r.message;
    EXPECT_NE(r.message.find("install ROCm's libamdhip64 or set "
                             "TILE_HIP_PATH"),
              std::string::npos)
        << r.message;
  }
  // A failed load is not cached: the next attempt tries again.
  EXPECT_EQ(hip::loadedDriver(), nullptr);
  ::unsetenv("TILE_HIP_PATH");
}

TEST(HipNoRuntime, InitFailureIsNoDevice) {
  if (hip::loadedDriver())
    GTEST_SKIP() << "a HIP runtime is already loaded in this process";
  ::setenv("TILE_HIP_PATH", TILE_TEST_MOCK_HIP_SO, 1);
  ::setenv("MOCK_HIP_INIT_FAIL", "1", 1);
  LoadResult r = tryLoad(hipBundle(hipAddMeta()), "ffi");
  EXPECT_EQ(r.status, TILE_STATUS_NO_DEVICE);
  EXPECT_EQ(r.message, "hipInit failed: hipErrorNoDevice (no ROCm-capable "
                       "device is detected)");
  ::unsetenv("MOCK_HIP_INIT_FAIL");
  ::unsetenv("TILE_HIP_PATH");
}

// ---- metadata and bundle checks ---------------------------------------------

TEST(HipPlan, Metadata) {
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(hipAddMeta().dump(), plan, error)) << error;
  EXPECT_EQ(plan.target, TargetKind::Hip);
  EXPECT_EQ(plan.deviceType, kDLROCM);
  EXPECT_EQ(plan.targetChip, "gfx942");
  EXPECT_EQ(plan.entryKernel, "add_kernel");
  EXPECT_EQ(plan.block[0], 256);
  EXPECT_EQ(plan.sharedBytes, 32768);
  EXPECT_TRUE(hip::isAmdgpuChip("gfx942"));
  EXPECT_TRUE(hip::isAmdgpuChip("gfx90a"));
  EXPECT_FALSE(hip::isAmdgpuChip("sm_90a"));
  EXPECT_FALSE(hip::isAmdgpuChip("gfx"));
}

// Bundle problems are found before the runtime is needed.
TEST(HipPlan, BadBundles) {
  LoadResult r = tryLoad(hipBundle(hipAddMeta(), false));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle for target 'hip' has no 'hsaco' section");
  r = tryLoad(hipBundle(hipAddMeta("sm_90a")));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle metadata: target.chip 'sm_90a' is not an "
                       "AMDGPU arch (expected e.g. gfx942, gfx90a)");
  json m = hipAddMeta();
  m["entry"].erase("kernel");
  r = tryLoad(hipBundle(m));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message,
            "bundle metadata: entry.kernel is required for target 'hip'");
  m = hipAddMeta();
  m["block"] = {2048, 1, 1};
  r = tryLoad(hipBundle(m));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  r = tryLoad(hipBundle(hipAddMeta()), "nvrtc");
  EXPECT_EQ(r.message, "backend 'nvrtc' is not available for target 'hip' "
                       "(available: auto, ffi, native)");
}

// ---- the launch path against the mock runtime -------------------------------

TEST(HipMock, BothBackendsComputeAndAllocate) {
  USE_MOCK(mock);
  for (const char *backend : {"ffi", "native"}) {
    SCOPED_TRACE(backend);
    KernelGuard k(load(hipBundle(hipAddMeta()), backend));
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
    void *stream = reinterpret_cast<void *>(0x5678);
    ASSERT_EQ(tile_kernel_launch(k, args, 2, stream, &outs), TILE_STATUS_OK)
        << tile_last_error();
    ASSERT_TRUE(out[0]);
    EXPECT_EQ(mock->allocs, allocs + 1);
    const DLTensor &c = out[0]->dl_tensor;
    EXPECT_EQ(c.device.device_type, kDLROCM);
    EXPECT_EQ(c.device.device_id, 0);
    EXPECT_EQ(c.shape[0], n);
    const float *cv = static_cast<const float *>(c.data);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(cv[i], 1.5f * float(i)) << i;
    // Grid, block, LDS bytes and stream as the metadata says.
    EXPECT_EQ(mock->grid[0], 16u);
    EXPECT_EQ(mock->grid[1], 1u);
    EXPECT_EQ(mock->grid[2], 1u);
    EXPECT_EQ(mock->block[0], 256u);
    EXPECT_EQ(mock->block[1], 1u);
    EXPECT_EQ(mock->shared, 32768u);
    EXPECT_EQ(mock->stream, stream);
    EXPECT_STREQ(mock->last_function, "add_kernel");
    // kernelParams: {allocated, aligned, offset, size, stride} x 3.
    EXPECT_EQ(mock->params[0], int64_t(reinterpret_cast<intptr_t>(a.t.data)));
    EXPECT_EQ(mock->params[1], int64_t(reinterpret_cast<intptr_t>(a.t.data)));
    EXPECT_EQ(mock->params[2], 0);
    EXPECT_EQ(mock->params[3], n);
    EXPECT_EQ(mock->params[4], 1);
    EXPECT_EQ(mock->params[6], int64_t(reinterpret_cast<intptr_t>(b.t.data)));
    EXPECT_EQ(mock->params[11], int64_t(reinterpret_cast<intptr_t>(c.data)));
    out[0]->deleter(out[0]);
    EXPECT_EQ(mock->frees, frees + 1);
  }
}

TEST(HipMock, ModuleLoadedOncePerDevice) {
  USE_MOCK(mock);
  const int loads = mock->loads, unloads = mock->unloads;
  {
    KernelGuard k(load(hipBundle(hipAddMeta()), "ffi"));
    ASSERT_TRUE(k.k);
    EXPECT_EQ(mock->loads, loads); // lazily, at the first launch
    DevTensor a({100}, 1.0f), b({100}, 2.0f), c({100});
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(c.dl())};
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 50; ++i)
          if (tile_kernel_launch(k, args, 3, nullptr, nullptr) !=
              TILE_STATUS_OK)
            ++failures;
      });
    for (auto &t : threads)
      t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(mock->loads, loads + 1);
    EXPECT_EQ(c[99], 3.0f);
  }
  EXPECT_EQ(mock->unloads, unloads + 1); // released with the kernel
}

TEST(HipMock, LaunchErrorsAndArgumentChecks) {
  USE_MOCK(mock);
  for (const char *backend : {"ffi", "native"}) {
    SCOPED_TRACE(backend);
    KernelGuard k(load(hipBundle(hipAddMeta()), backend));
    DevTensor a({10}, 1.0f), b({10}, 2.0f);
    DLManagedTensor *out[1] = {nullptr};
    tile_outputs outs{out, 1, 0};
    tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
    int frees = mock->frees;
    mock->fail_launch = 700;
    EXPECT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs),
              TILE_STATUS_LAUNCH_FAILED);
    EXPECT_STREQ(tile_last_error(),
                 "kernel 'add': hipModuleLaunchKernel failed: "
                 "hipErrorIllegalAddress (an illegal memory access was "
                 "encountered) (grid [1, 1, 1], block [256, 1, 1], 32768 "
                 "bytes of LDS)");
    EXPECT_EQ(out[0], nullptr);
    EXPECT_EQ(mock->frees, frees + 1); // the allocated output was freed

    // Same argument-check messages as on the other targets.
    HostTensor cpu({10});
    tile_arg bad[2] = {tile_arg_tensor(cpu.dl()), tile_arg_tensor(b.dl())};
    EXPECT_EQ(tile_kernel_launch(k, bad, 2, nullptr, &outs),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(tile_last_error(),
                 "argument 'A' (#0): expected a rocm tensor, got a cpu tensor");
    DevTensor other({10}, 0.0f, 1);
    tile_arg mixed[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(other.dl())};
    EXPECT_EQ(tile_kernel_launch(k, mixed, 2, nullptr, &outs),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(tile_last_error(),
                 "argument 'B' (#1): is on device 1, but the first tensor "
                 "argument is on device 0");
    // A device the runtime does not have.
    DevTensor a3({10}, 0.0f, 3), b3({10}, 0.0f, 3), c3({10}, 0.0f, 3);
    tile_arg far[3] = {tile_arg_tensor(a3.dl()), tile_arg_tensor(b3.dl()),
                       tile_arg_tensor(c3.dl())};
    EXPECT_EQ(tile_kernel_launch(k, far, 3, nullptr, nullptr),
              TILE_STATUS_LAUNCH_FAILED);
    EXPECT_STREQ(tile_last_error(), "kernel 'add': HIP device 3 does not "
                                    "exist (the runtime sees 1)");
  }
}

TEST(HipMock, OutIdxWritesTheGivenOutput) {
  USE_MOCK(mock);
  KernelGuard k(load(hipBundle(hipAddMeta()), "ffi"));
  DevTensor a({130}, 1.0f), b({130}, 4.0f), c({130}, -1.0f);
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(mock->grid[0], 3u); // ceil(130 / 64)
  EXPECT_EQ(c[0], 5.0f);
  EXPECT_EQ(c[129], 5.0f);
}

TEST(HipMock, WrongChipAndMissingKernel) {
  USE_MOCK(mock);
  DevTensor a({10}, 1.0f), b({10}, 2.0f), c({10});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  ::setenv("MOCK_HIP_NO_BINARY", "1", 1);
  {
    KernelGuard k(load(hipBundle(hipAddMeta("gfx90a")), "ffi"));
    EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_LAUNCH_FAILED);
    EXPECT_STREQ(tile_last_error(),
                 "kernel 'add': cannot load its gfx90a hsaco on HIP device 0: "
                 "hipErrorNoBinaryForGpu (no kernel image is available for "
                 "execution on the device) (the device is not a gfx90a: "
                 "recompile with tilec --target=hip --chip=<the device's gfx "
                 "arch>)");
  }
  ::unsetenv("MOCK_HIP_NO_BINARY");
  json m = hipAddMeta();
  m["entry"]["kernel"] = "missing_kernel";
  KernelGuard k(load(hipBundle(m), "ffi"));
  EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
            TILE_STATUS_BUNDLE_ERROR);
  EXPECT_STREQ(tile_last_error(),
               "kernel 'add': the hsaco has no kernel 'missing_kernel' "
               "(hipErrorNotFound)");
}

TEST(HipMock, LdsLimit) {
  USE_MOCK(mock);
  json m = hipAddMeta();
  m["shared_bytes"] = 65536;
  DevTensor a({10}, 1.0f), b({10}, 2.0f), c({10});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  {
    KernelGuard k(load(hipBundle(m), "ffi"));
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK)
        << tile_last_error();
    EXPECT_EQ(mock->shared, 65536u);
  }
  m["shared_bytes"] = 65537;
  KernelGuard k(load(hipBundle(m), "ffi"));
  EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
            TILE_STATUS_LAUNCH_FAILED);
  EXPECT_STREQ(tile_last_error(), "kernel 'add' needs 65537 bytes of LDS, but "
                                  "HIP device 0 allows 65536 per block");
}

TEST(HipMock, MetadataHashChecked) {
  USE_MOCK(mock);
  json m = hipAddMeta();
  std::string b = hipBundle(m);
  DevTensor a({10}, 1.0f), bt({10}, 2.0f), c({10});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(bt.dl()),
                      tile_arg_tensor(c.dl())};
  mock->has_hash = 1;
  mock->hash = tile::bundle::metadataHash(m.dump());
  {
    KernelGuard k(load(b, "ffi"));
    EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK)
        << tile_last_error();
  }
  mock->hash ^= 1;
  {
    KernelGuard k(load(b, "ffi"));
    EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_BUNDLE_ERROR);
    EXPECT_NE(std::string(tile_last_error())
                  .find("bundle metadata does not match its code: the hsaco "
                        "of kernel 'add'"),
              std::string::npos)
        << tile_last_error();
  }
  mock->has_hash = 0;
}

TEST(HipMock, DeviceMemoryAndTimers) {
  USE_MOCK(mock);
  DLDevice dev = {kDLROCM, 0};
  void *p = nullptr;
  int allocs = mock->allocs;
  ASSERT_EQ(tile_device_alloc(dev, 64, &p), TILE_STATUS_OK);
  EXPECT_EQ(mock->allocs, allocs + 1);
  float host[16], back[16];
  for (int i = 0; i < 16; ++i)
    host[i] = float(i);
  ASSERT_EQ(tile_device_copy_to_device(dev, p, host, sizeof host),
            TILE_STATUS_OK);
  ASSERT_EQ(tile_device_copy_to_host(dev, back, p, sizeof back),
            TILE_STATUS_OK);
  EXPECT_EQ(std::memcmp(host, back, sizeof host), 0);
  EXPECT_EQ(tile_device_free(dev, p), TILE_STATUS_OK);
  tile_timer_t timer = nullptr;
  ASSERT_EQ(tile_timer_create(dev, &timer), TILE_STATUS_OK);
  double us = 0;
  ASSERT_EQ(tile_timer_start(timer, nullptr), TILE_STATUS_OK);
  ASSERT_EQ(tile_timer_stop(timer, nullptr, &us), TILE_STATUS_OK);
  EXPECT_DOUBLE_EQ(us, double(0.002f) * 1000.0);
  tile_timer_release(timer);
  DLDevice far = {kDLROCM, 5};
  EXPECT_EQ(tile_device_alloc(far, 64, &p), TILE_STATUS_NO_DEVICE);
  EXPECT_STREQ(tile_last_error(),
               "HIP device 5 does not exist (the runtime sees 1)");
}

TEST(HipMock, ToolRunsAndComparesBackends) {
  std::string dir = ::testing::TempDir() + "/tile-hip-mock-tool";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::string path = dir + "/add.tileb";
  {
    std::string b = hipBundle(hipAddMeta());
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
  std::string cmd = "TILE_HIP_PATH=" + std::string(TILE_TEST_MOCK_HIP_SO) +
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
  EXPECT_NE(out.find("add [ffi, hip:0]: 3 runs"), std::string::npos) << out;
  EXPECT_NE(out.find("(HIP events)"), std::string::npos) << out;
  EXPECT_NE(out.find("add [native, hip:0]: 3 runs"), std::string::npos)
      << out;
  EXPECT_NE(out.find("backends agree"), std::string::npos) << out;
  std::system(("rm -rf " + dir).c_str());
}

TEST(HipNoRuntime, ToolSaysNoRuntime) {
  std::string dir = ::testing::TempDir() + "/tile-hip-noruntime";
  std::system(("mkdir -p " + dir).c_str());
  std::string path = dir + "/add.tileb";
  {
    std::string b = hipBundle(hipAddMeta());
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
  std::string cmd = "TILE_HIP_PATH=/nonexistent/libamdhip64.so " +
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
  EXPECT_NE(out.find("NO_DEVICE: no HIP runtime (/nonexistent/libamdhip64.so"),
            std::string::npos)
      << out;
  // --info opens the bundle without the runtime.
  cmd = "TILE_HIP_PATH=/nonexistent/libamdhip64.so " +
        std::string(TILE_TEST_TILE_RUN) + " " + path + " --info 2>&1";
  p = ::popen(cmd.c_str(), "r");
  ASSERT_TRUE(p);
  out.clear();
  while (size_t n = std::fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  EXPECT_EQ(WEXITSTATUS(::pclose(p)), 0) << out;
  EXPECT_NE(out.find("hip (gfx942)"), std::string::npos) << out;
}

// The real HIP runtime, when this machine has one (Debian's libamdhip64 on
// the build host): without an AMD GPU it must be a clean NO_DEVICE.
TEST(HipRealRuntime, NoGpuIsNoDevice) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  // ROCm's runtime is not ours to leak-check (the asan stage).
  GTEST_SKIP() << "not under AddressSanitizer";
#endif
#endif
  if (hip::loadedDriver())
    GTEST_SKIP() << "a HIP runtime is already loaded in this process";
  void *h = ::dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    GTEST_SKIP() << "no libamdhip64.so on this machine";
  ::dlclose(h);
  ::unsetenv("TILE_HIP_PATH");
  hip::Driver *d = nullptr;
  tile_status st = hip::load(d);
  if (st == TILE_STATUS_OK)
    GTEST_SKIP() << "this machine has an AMD GPU (" << d->deviceCount
                 << " devices)";
  EXPECT_EQ(st, TILE_STATUS_NO_DEVICE);
  std::string message = tile_last_error();
  EXPECT_TRUE(message.rfind("hipInit failed: ", 0) == 0 ||
              message == "the HIP runtime sees no device" ||
              message.rfind("hipGetDeviceCount failed: ", 0) == 0)
      << message;
  LoadResult r = tryLoad(hipBundle(hipAddMeta()), "ffi");
  EXPECT_EQ(r.status, TILE_STATUS_NO_DEVICE) << r.message;
}
