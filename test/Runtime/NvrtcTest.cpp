//===- NvrtcTest.cpp - The nvrtc backend, without a GPU or NVRTC ----------===//
//
// The nvrtc backend's layer (Cuda/Nvrtc.h) against a fake NVRTC
// (fixtures/mock_nvrtc.c) and the fake driver (fixtures/mock_cuda.c):
// the bundle's `cuda` section is compiled for the device's exact arch at
// the first launch, kept in memory and in the disk cache, launched through
// the same CUDA layer as ffi (grid, block, kernelParams); NVRTC's log is the
// error; a missing NVRTC is BACKEND_UNAVAILABLE naming where it looked.
// NVRTC and the driver are process-wide singletons: ctest runs each test in
// its own process; run together in one process (the test binary run
// directly), a test that needs another NVRTC than the one an earlier test
// loaded skips.
//
//===----------------------------------------------------------------------===//
#include "Cuda/Nvrtc.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <vector>

using namespace tiletest;

namespace {

/// The leading fields of mock_cuda.c's mock_state (same layout).
struct MockCudaPrefix {
  int allocs, frees, cubin_loads, ptx_loads, unloads, launches;
  int pushes, pops, retains;
  int func_shared_attr;
  unsigned grid[3], block[3], shared;
  void *stream;
  int nparams;
  int64_t params[64];
  int fail_launch;
  char last_function[64];
};

/// mock_nvrtc.c's mock_nvrtc_state.
struct MockNvrtc {
  int creates, compiles, destroys;
  char name[64];
  char arch[64];
  int noptions;
  size_t source_bytes;
};

template <typename T> T *mockState(const char *so, const char *fn) {
  void *h = ::dlopen(so, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return nullptr;
  auto get = reinterpret_cast<T *(*)()>(::dlsym(h, fn));
  ::dlclose(h);
  return get ? get() : nullptr;
}

/// Whether the shared object `so` is loaded in this process.
bool loaded(const char *so) {
  void *h = ::dlopen(so, RTLD_NOW | RTLD_NOLOAD);
  if (h)
    ::dlclose(h);
  return h != nullptr;
}
/// The runtime loads NVRTC once per process: the real one (the toolkit's
/// or the pip wheel's soname) or the mock.
bool realNvrtcLoaded() {
  return loaded("libnvrtc.so.13") || loaded("libnvrtc.so.12") ||
         loaded("libnvrtc.so");
}
bool mockNvrtcLoaded() { return loaded(TILE_TEST_MOCK_NVRTC_SO); }

json nvrtcMeta() {
  json m = addMeta();
  m["target"] = {{"kind", "cuda"}, {"chip", "sm_80"}, {"features", "+ptx80"}};
  m["block"] = {128, 1, 1};
  m["shared_bytes"] = 0;
  m["entry"] = {{"kernel", "add_kernel"}};
  return m;
}

std::string nvrtcBundle(const std::string &source) {
  return tile::bundle::write(
      {{"metadata", nvrtcMeta().dump()}, {"cuda", source}});
}

const char *kSource = "extern \"C\" __global__ void add_kernel() {}\n";

/// A fresh cache directory and the mocks in place.
struct NvrtcEnv {
  std::string cache;
  NvrtcEnv() {
    // A fresh directory per test, removed after it: a name from the pid
    // alone met a cache a finished run had left under a reused pid, whose
    // hit made the counted compile not happen.
    std::string pattern = ::testing::TempDir() + "/tile-nvrtc-cache-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    cache = ::mkdtemp(name.data()) ? name.data() : pattern;
    ::setenv("TILE_CACHE_DIR", cache.c_str(), 1);
    ::setenv("TILE_CUDA_DRIVER", TILE_TEST_MOCK_CUDA_SO, 1);
    ::setenv("TILE_NVRTC_PATH", TILE_TEST_MOCK_NVRTC_SO, 1);
  }
  ~NvrtcEnv() {
    std::error_code ignored;
    std::filesystem::remove_all(cache, ignored);
  }
};

tile_status launchAdd(tile_kernel_t k, int64_t n, float *out0) {
  HostTensor a({n}, 1.0f), b({n}, 2.0f), c({n});
  for (auto *t : {&a, &b, &c})
    t->t.device = {kDLCUDA, 0};
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  tile_status st = tile_kernel_launch(k, args, 3, nullptr, nullptr);
  *out0 = c[0];
  return st;
}

} // namespace

TEST(NvrtcMock, CompilesForTheDeviceArchAndLaunchesLikeFfi) {
  if (realNvrtcLoaded())
    GTEST_SKIP() << "the real NVRTC was loaded earlier in this process";
  if (mockNvrtcLoaded() || loaded(TILE_TEST_MOCK_CUDA_SO))
    GTEST_SKIP() << "the mock NVRTC or driver was used earlier in this "
                    "process (this test counts their calls)";
  NvrtcEnv env;
  ::setenv("MOCK_CUDA_CC", "86", 1);
  std::string bundle = nvrtcBundle(kSource);
  KernelGuard k(load(bundle, "nvrtc"));
  ASSERT_TRUE(k.k) << tile_last_error();
  EXPECT_STREQ(tile_kernel_backend(k), "nvrtc");
  auto *nv = mockState<MockNvrtc>(TILE_TEST_MOCK_NVRTC_SO,
                                  "mock_nvrtc_state_get");
  auto *cu = mockState<MockCudaPrefix>(TILE_TEST_MOCK_CUDA_SO,
                                       "mock_cuda_state");
  ASSERT_TRUE(nv && cu);
  EXPECT_EQ(nv->compiles, 0); // at the first launch, for its device
  float c0 = 0;
  ASSERT_EQ(launchAdd(k, 1000, &c0), TILE_STATUS_OK) << tile_last_error();
  EXPECT_EQ(c0, 3.0f); // the mock driver's add_kernel ran
  EXPECT_EQ(nv->compiles, 1);
  EXPECT_STREQ(nv->arch, "sm_86"); // the device's exact arch
  EXPECT_STREQ(nv->name, "add.cu");
  EXPECT_EQ(nv->source_bytes, std::strlen(kSource));
  EXPECT_EQ(cu->cubin_loads, 1);
  EXPECT_EQ(cu->ptx_loads, 0);
  EXPECT_STREQ(cu->last_function, "add_kernel");
  EXPECT_EQ(cu->grid[0], 16u); // the metadata's grid and block, as ffi
  EXPECT_EQ(cu->block[0], 128u);
  ASSERT_EQ(launchAdd(k, 10, &c0), TILE_STATUS_OK);
  EXPECT_EQ(nv->compiles, 1); // in memory

  // A second load of the same source finds the cubin on disk.
  KernelGuard k2(load(bundle, "nvrtc"));
  ASSERT_TRUE(k2.k) << tile_last_error();
  ASSERT_EQ(launchAdd(k2, 10, &c0), TILE_STATUS_OK) << tile_last_error();
  EXPECT_EQ(nv->compiles, 1);
  EXPECT_EQ(cu->cubin_loads, 2);
  struct stat st;
  EXPECT_EQ(::stat((env.cache + "/nvrtc").c_str(), &st), 0);

  // Another source is another cache entry.
  KernelGuard k3(load(nvrtcBundle(std::string(kSource) + "// v2\n"), "nvrtc"));
  ASSERT_EQ(launchAdd(k3, 10, &c0), TILE_STATUS_OK) << tile_last_error();
  EXPECT_EQ(nv->compiles, 2);
}

// The source's kernel may need more dynamic shared memory than the
// metadata's (an sm_90a cubin's) value: its constant says how much, and the
// nvrtc backend launches with that (opted in above 48 KiB).
TEST(NvrtcMock, SourceSharedBytesRaiseTheLaunchs) {
  if (realNvrtcLoaded())
    GTEST_SKIP() << "the real NVRTC was loaded earlier in this process";
  if (mockNvrtcLoaded() || loaded(TILE_TEST_MOCK_CUDA_SO))
    GTEST_SKIP() << "the mock NVRTC or driver was used earlier in this "
                    "process (this test reads their state)";
  NvrtcEnv env;
  ::setenv("MOCK_CUDA_NVRTC_SHARED", "69632", 1);
  KernelGuard k(load(nvrtcBundle(kSource), "nvrtc"));
  ASSERT_TRUE(k.k) << tile_last_error();
  auto *cu = mockState<MockCudaPrefix>(TILE_TEST_MOCK_CUDA_SO,
                                       "mock_cuda_state");
  ASSERT_TRUE(cu);
  float c0 = 0;
  tile_status st = launchAdd(k, 1000, &c0);
  ::unsetenv("MOCK_CUDA_NVRTC_SHARED");
  ASSERT_EQ(st, TILE_STATUS_OK) << tile_last_error();
  EXPECT_EQ(c0, 3.0f);
  EXPECT_EQ(cu->shared, 69632u);
  EXPECT_EQ(cu->func_shared_attr, 69632);
}

TEST(NvrtcMock, LogIsTheError) {
  if (realNvrtcLoaded())
    GTEST_SKIP() << "the real NVRTC was loaded earlier in this process";
  NvrtcEnv env;
  ::setenv("TILE_NVRTC_CACHE", "0", 1);
  KernelGuard k(load(nvrtcBundle("MOCK_NVRTC_ERROR\n"), "nvrtc"));
  ASSERT_TRUE(k.k) << tile_last_error();
  float c0;
  EXPECT_EQ(launchAdd(k, 10, &c0), TILE_STATUS_LAUNCH_FAILED);
  std::string message = tile_last_error();
  // For the mock device's arch: sm_90, unless an earlier test in this
  // process set up another.
  EXPECT_EQ(message.rfind("kernel 'add': NVRTC 13.0 failed to compile its "
                          "CUDA C++ for sm_",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find(" (NVRTC_ERROR_COMPILATION):\n"
                         "add.cu(3): error: identifier \"MOCK_NVRTC_ERROR\" "
                         "is undefined"),
            std::string::npos)
      << message;
}

TEST(NvrtcMissing, LoadSaysWhereItLooked) {
  if (realNvrtcLoaded() || mockNvrtcLoaded())
    GTEST_SKIP() << "an NVRTC was loaded earlier in this process";
  ::setenv("TILE_NVRTC_PATH", "/nonexistent/libnvrtc.so.13", 1);
  ::setenv("TILE_CUDA_DRIVER", TILE_TEST_MOCK_CUDA_SO, 1);
  tile_kernel_t k = nullptr;
  std::string bundle = nvrtcBundle(kSource);
  EXPECT_EQ(tile_kernel_load_memory(bundle.data(), bundle.size(), "nvrtc", &k),
            TILE_STATUS_BACKEND_UNAVAILABLE);
  std::string message = tile_last_error();
  EXPECT_EQ(message.rfind("backend 'nvrtc' needs NVRTC, which was not found "
                          "at $TILE_NVRTC_PATH; tried:\n  "
                          "/nonexistent/libnvrtc.so.13",
                          0),
            0u)
      << message;
  // ffi still runs the same bundle's compiled code... when it has one.
  EXPECT_EQ(tile_kernel_load_memory(bundle.data(), bundle.size(), "ffi", &k),
            TILE_STATUS_BUNDLE_ERROR);
}

TEST(NvrtcMissing, BackendListedForCuda) {
  tile_backend b;
  ASSERT_TRUE(tile_backend_parse("nvrtc", &b));
  EXPECT_TRUE(tile_backend_flags(b) & TILE_BACKEND_IMPLEMENTED);
  EXPECT_TRUE(tile_backend_runs(b, TILE_TARGET_CUDA));
  EXPECT_FALSE(tile_backend_runs(b, TILE_TARGET_CPU));
}

#ifdef TILE_TEST_COMPILED_ADD_CU
// The real NVRTC (when this host has one: the CUDA toolkit or the pip
// wheel) on the CUDA C++ tilec generated for examples/elementwise_add.mlir,
// through the runtime's own NVRTC layer: a cubin for sm_80 and sm_90 that
// defines the kernel and the metadata-hash constant with the value the
// source was generated with (what the runtime compares after loading it).
TEST(NvrtcReal, CompilesTheGeneratedSource) {
  ::unsetenv("TILE_NVRTC_PATH");
  const tile::rt::cuda::Nvrtc *nvrtc = nullptr;
  if (mockNvrtcLoaded())
    GTEST_SKIP() << "the mock NVRTC was loaded earlier in this process";
  if (tile::rt::cuda::loadNvrtc(nvrtc) != TILE_STATUS_OK)
    GTEST_SKIP() << "no NVRTC here: " << tile_last_error();
  std::string source = readFile(TILE_TEST_COMPILED_ADD_CU);
  ASSERT_NE(source.find("elementwise_add_kernel"), std::string::npos);
  // "... elementwise_add__tile_metadata_hash = 0x<16 hex digits>ull;"
  size_t at = source.find("__tile_metadata_hash = 0x");
  ASSERT_NE(at, std::string::npos);
  uint64_t hash = std::stoull(source.substr(at + 25, 16), nullptr, 16);
  std::string hashBytes(reinterpret_cast<const char *>(&hash), 8);
  for (int cc : {80, 90}) {
    SCOPED_TRACE(cc);
    std::string cubin;
    ASSERT_EQ(nvrtc->compile(source, "elementwise_add", cc, cubin),
              TILE_STATUS_OK)
        << tile_last_error();
    ASSERT_GT(cubin.size(), 4u);
    EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
    EXPECT_NE(cubin.find("elementwise_add_kernel"), std::string::npos);
    EXPECT_NE(cubin.find("elementwise_add__tile_metadata_hash"),
              std::string::npos);
    EXPECT_NE(cubin.find(hashBytes), std::string::npos);
  }
}
#endif
