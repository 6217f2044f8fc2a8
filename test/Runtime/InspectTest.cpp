//===- InspectTest.cpp - inspect-only loading, describe, device memory ----===//
//
//   Inspect       tile_kernel_inspect_* opens any bundle without device code
//                 (a CUDA bundle with no driver), tile_kernel_describe, and
//                 the refusal to launch;
//   DeviceMemory  tile_device_* / tile_timer_* on the CPU and on the mock
//                 CUDA driver (fixtures/mock_cuda.c), and without a driver.
// The CUDA driver is a process-wide singleton: as in CudaTest.cpp, ctest
// runs each test in its own process; run directly, a test that needs a
// driver state another test changed skips itself.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaDriver.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

using namespace tiletest;

namespace {

/// The add kernel's metadata for CUDA, with fake device code: enough to
/// inspect, never launched.
std::string cudaAddBundle() {
  json m = addMeta();
  m["target"] = {{"kind", "cuda"}, {"chip", "sm_90a"}, {"features", "+ptx80"}};
  m["block"] = {128, 1, 1};
  m["shared_bytes"] = 16384;
  m["entry"] = {{"blocks", "add__tile_blocks"},
                {"native", "add__tile_native"},
                {"kernel", "add_kernel"}};
  return tile::bundle::write(
      {{"metadata", m.dump()},
       {"cubin", std::string("\x7f" "ELF fake cubin")},
       {"ptx", ".version 8.0\n.target sm_90a\n"}});
}

std::string describe(tile_kernel_t k) {
  std::string text(tile_kernel_describe(k, nullptr, 0), '\0');
  tile_kernel_describe(k, text.data(), text.size() + 1);
  return text;
}

/// The mock driver's counters (the head of its state struct).
struct MockCounters {
  int allocs, frees, cubin_loads, ptx_loads, unloads, launches;
  int pushes, pops, retains;
};

MockCounters *useMock() {
  ::setenv("TILE_CUDA_DRIVER", TILE_TEST_MOCK_CUDA_SO, 1);
  tile::rt::cuda::Driver *d = nullptr;
  if (tile::rt::cuda::load(d) != TILE_STATUS_OK)
    return nullptr;
  void *h = ::dlopen(TILE_TEST_MOCK_CUDA_SO, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return nullptr;
  auto state =
      reinterpret_cast<MockCounters *(*)()>(::dlsym(h, "mock_cuda_state"));
  ::dlclose(h);
  return state ? state() : nullptr;
}

} // namespace

TEST(Inspect, CpuBundleDescribesAndRefusesLaunch) {
  std::string b = addBundle();
  tile_kernel_t raw = nullptr;
  ASSERT_EQ(tile_kernel_inspect_memory(b.data(), b.size(), &raw),
            TILE_STATUS_OK)
      << tile_last_error();
  KernelGuard k(raw);
  EXPECT_STREQ(tile_kernel_name(k), "add");
  EXPECT_STREQ(tile_kernel_backend(k), "none");
  EXPECT_EQ(tile_kernel_num_params(k), 3);
  std::string text = describe(k);
  EXPECT_EQ(text.rfind("kernel   add\ntarget   cpu (x86-64)\nbackend  none\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("  #2 C          tensor float32 [N] output "
                      "(allocated when omitted)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sections\n  metadata   "), std::string::npos) << text;
  EXPECT_NE(text.find("  host.so    "), std::string::npos) << text;

  // snprintf-style: truncated, NUL-terminated, full length returned.
  char small[8];
  EXPECT_EQ(tile_kernel_describe(k, small, sizeof small), text.size());
  EXPECT_STREQ(small, "kernel ");
  EXPECT_EQ(tile_kernel_describe(nullptr, small, sizeof small), 0u);
  EXPECT_STREQ(small, "");

  HostTensor a({4}), c({4});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(a.dl()),
                      tile_arg_tensor(c.dl())};
  EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
            TILE_STATUS_BACKEND_UNAVAILABLE);
  EXPECT_STREQ(tile_last_error(),
               "kernel 'add' was opened for inspection only: no device code "
               "is loaded, so it cannot run (load it for its device to "
               "launch it)");
}

// The grid of a launch computed outside the runtime's launch (the Python
// package's metal-torch launcher): the plan's expressions, symbols in
// tile_kernel_symbol order, one integer per parameter.
TEST(Inspect, GridForLaunchersOutsideTheRuntime) {
  std::string b = axpyBundle();
  tile_kernel_t raw = nullptr;
  ASSERT_EQ(tile_kernel_inspect_memory(b.data(), b.size(), &raw),
            TILE_STATUS_OK)
      << tile_last_error();
  KernelGuard k(raw);
  int64_t grid[3] = {0, 0, 0};
  const int64_t syms[2] = {10, 4};             // N, C
  const int64_t scalars[5] = {0, 0, 0, 3, 0};  // rows = 3
  ASSERT_EQ(tile_kernel_grid(k, syms, 2, scalars, 5, grid), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(grid[0], 4); // ceildivs(10, 3)
  EXPECT_EQ(grid[1], 1);
  EXPECT_EQ(grid[2], 1);
  const int64_t unbound[2] = {-1, 4};
  EXPECT_EQ(tile_kernel_grid(k, unbound, 2, scalars, 5, grid),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(), "tile_kernel_grid: symbol 'N' has no value");
  EXPECT_EQ(tile_kernel_grid(k, syms, 1, scalars, 5, grid),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(), "tile_kernel_grid: expected 2 symbols and 5 "
                                  "scalars, got 1 and 5");
  EXPECT_EQ(tile_kernel_grid(nullptr, syms, 2, scalars, 5, grid),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_kernel_entry(k), "");
  EXPECT_EQ(tile_kernel_entry(nullptr), nullptr);
}

TEST(Inspect, CudaBundleWithoutDriver) {
  if (tile::rt::cuda::loadedDriver())
    GTEST_SKIP() << "a CUDA driver is already loaded in this process";
  ::setenv("TILE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  std::string b = cudaAddBundle();
  tile_kernel_t raw = nullptr;
  EXPECT_EQ(tile_kernel_load_memory(b.data(), b.size(), "auto", &raw),
            TILE_STATUS_NO_DEVICE);
  ASSERT_EQ(tile_kernel_inspect_memory(b.data(), b.size(), &raw),
            TILE_STATUS_OK)
      << tile_last_error();
  KernelGuard k(raw);
  EXPECT_STREQ(tile_kernel_target_kind(k), "cuda");
  std::string text = describe(k);
  EXPECT_NE(text.find("target   cuda (sm_90a, +ptx80)\nbackend  none\n"
                      "block    128 x 1 x 1 threads, 16384 bytes shared\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  ptx        "), std::string::npos) << text;
  EXPECT_NE(text.find(" bytes, text\n"), std::string::npos) << text;
  ::unsetenv("TILE_CUDA_DRIVER");
}

TEST(Inspect, BadInput) {
  tile_kernel_t k = reinterpret_cast<tile_kernel_t>(1);
  EXPECT_EQ(tile_kernel_inspect_memory("TILEBNDL", 8, &k),
            TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(tile_kernel_inspect_file("/nonexistent/x.tileb", &k),
            TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(tile_kernel_inspect_memory(nullptr, 0, nullptr),
            TILE_STATUS_INVALID_ARGUMENT);
}

TEST(DeviceMemory, Cpu) {
  DLDevice cpu{kDLCPU, 0};
  void *p = nullptr;
  ASSERT_EQ(tile_device_alloc(cpu, 100, &p), TILE_STATUS_OK);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::vector<char> in(100, 'x'), out(100, 0);
  EXPECT_EQ(tile_device_copy_to_device(cpu, p, in.data(), 100),
            TILE_STATUS_OK);
  EXPECT_EQ(tile_device_copy_to_host(cpu, out.data(), p, 100), TILE_STATUS_OK);
  EXPECT_EQ(in, out);
  tile_timer_t t = nullptr;
  ASSERT_EQ(tile_timer_create(cpu, &t), TILE_STATUS_OK);
  double us = -1;
  EXPECT_EQ(tile_timer_start(t, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(tile_timer_stop(t, nullptr, &us), TILE_STATUS_OK);
  EXPECT_GE(us, 0.0);
  tile_timer_release(t);
  EXPECT_EQ(tile_device_free(cpu, p), TILE_STATUS_OK);
  EXPECT_EQ(tile_device_free(cpu, nullptr), TILE_STATUS_OK);

  EXPECT_EQ(tile_device_alloc({kDLMetal, 0}, 4, &p),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  EXPECT_STREQ(tile_last_error(), "no device memory support for metal");
  EXPECT_EQ(tile_device_copy_to_host(cpu, nullptr, in.data(), 4),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(tile_timer_stop(nullptr, nullptr, &us),
            TILE_STATUS_INVALID_ARGUMENT);
}

TEST(DeviceMemory, CudaMock) {
  MockCounters *mock = useMock();
  if (!mock)
    GTEST_SKIP() << "another CUDA driver is loaded in this process";
  DLDevice gpu{kDLCUDA, 0};
  int allocs = mock->allocs, frees = mock->frees;
  void *p = nullptr;
  ASSERT_EQ(tile_device_alloc(gpu, 64, &p), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(mock->allocs, allocs + 1);
  std::vector<float> in(16, 2.5f), out(16, 0.0f);
  EXPECT_EQ(tile_device_copy_to_device(gpu, p, in.data(), 64),
            TILE_STATUS_OK);
  EXPECT_EQ(tile_device_copy_to_host(gpu, out.data(), p, 64), TILE_STATUS_OK);
  EXPECT_EQ(in, out);
  tile_timer_t t = nullptr;
  ASSERT_EQ(tile_timer_create(gpu, &t), TILE_STATUS_OK) << tile_last_error();
  double us = 0;
  EXPECT_EQ(tile_timer_start(t, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(tile_timer_stop(t, nullptr, &us), TILE_STATUS_OK);
  EXPECT_NEAR(us, 1.0, 1e-6); // the mock's events are 0.001 ms apart
  tile_timer_release(t);
  EXPECT_EQ(tile_device_free(gpu, p), TILE_STATUS_OK);
  EXPECT_EQ(mock->frees, frees + 1);
  EXPECT_EQ(mock->pushes, mock->pops); // every call restored the context
  EXPECT_EQ(tile_device_alloc({kDLCUDA, 7}, 64, &p), TILE_STATUS_NO_DEVICE);
}

TEST(DeviceMemory, CudaWithoutDriver) {
  if (tile::rt::cuda::loadedDriver())
    GTEST_SKIP() << "a CUDA driver is already loaded in this process";
  ::setenv("TILE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  void *p = nullptr;
  EXPECT_EQ(tile_device_alloc({kDLCUDA, 0}, 64, &p), TILE_STATUS_NO_DEVICE);
  EXPECT_EQ(std::string(tile_last_error())
                .rfind("no CUDA driver (/nonexistent/libcuda.so.1 not found",
                       0),
            0u)
      << tile_last_error();
  tile_timer_t t = nullptr;
  EXPECT_EQ(tile_timer_create({kDLCUDA, 0}, &t), TILE_STATUS_NO_DEVICE);
  EXPECT_EQ(t, nullptr);
  ::unsetenv("TILE_CUDA_DRIVER");
}
