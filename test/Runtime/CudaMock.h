//===- CudaMock.h - The CUDA tests' mock driver and bundles -----*- C++ -*-===//
//
// Shared by the CUDA device-layer tests (CudaTest.cpp, SplitKTest.cpp): the
// mock driver's state (fixtures/mock_cuda.c, same layout), the add fixture's
// CUDA metadata and bundle, and USE_MOCK. Test-only; each test file gets its
// own copy (anonymous namespace).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_TEST_RUNTIME_CUDAMOCK_H
#define TILE_TEST_RUNTIME_CUDAMOCK_H

#include "Cuda/CudaDriver.h"
#include "TestUtil.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace tiletest;
using namespace tile::rt;

struct MockState {
  int allocs, frees, cubin_loads, ptx_loads, unloads, launches;
  int pushes, pops, retains;
  int func_shared_attr;
  unsigned grid[3], block[3], shared;
  void *stream;
  int nparams;
  int64_t params[64];
  int fail_launch;
  char last_function[64];
  int encodes, htod_async, ctx_syncs;
  int enc_type, enc_rank, enc_swizzle, enc_l2, enc_oob, enc_interleave;
  uint64_t enc_dims[5], enc_strides[4];
  uint32_t enc_box[5];
  void *enc_address;
  int has_hash;
  uint64_t hash;
  int pack_launches;
  int64_t pack_params[6];
  uint64_t fail_alloc_over;
  int pack_copies;
  int capturing;
};

inline json cudaAddMeta(const char *chip = "sm_90a") {
  json m = addMeta();
  m["target"] = {{"kind", "cuda"}, {"chip", chip}, {"features", "+ptx80"}};
  m["block"] = {128, 1, 1};
  m["shared_bytes"] = 16384;
  m["entry"] = {{"blocks", "add__tile_blocks"},
                {"native", "add__tile_native"},
                {"kernel", "add_kernel"}};
  return m;
}

inline std::string fakeCubin() { return std::string("\x7f" "ELF fake cubin add_kernel"); }
inline std::string fakePtx() {
  return ".version 8.0\n.target sm_80\n.visible .entry add_kernel()\n{ ret; }\n";
}

inline std::string cudaBundle(const json &meta, bool cubin = true, bool ptx = true,
                       bool native = true) {
  std::vector<tile::bundle::Section> s = {{"metadata", meta.dump()}};
  if (cubin)
    s.push_back({"cubin", fakeCubin()});
  if (ptx)
    s.push_back({"ptx", fakePtx()});
  if (native)
    s.push_back({"native.so", readFile(TILE_TEST_ADD_CUDA_SO)});
  return tile::bundle::write(s);
}

struct LoadResult {
  tile_status status;
  std::string message;
  tile_kernel_t kernel = nullptr;
};

inline LoadResult tryLoad(const std::string &b, const char *backend = "auto") {
  LoadResult r;
  r.status = tile_kernel_load_memory(b.data(), b.size(), backend, &r.kernel);
  if (r.status != TILE_STATUS_OK)
    r.message = tile_last_error();
  return r;
}

/// Points the runtime at the mock driver; nullptr (test skipped by the
/// caller) if another driver was loaded earlier in this process.
inline MockState *useMock() {
  ::setenv("TILE_CUDA_DRIVER", TILE_TEST_MOCK_CUDA_SO, 1);
  cuda::Driver *d = nullptr;
  if (cuda::load(d) != TILE_STATUS_OK)
    return nullptr;
  void *h = ::dlopen(TILE_TEST_MOCK_CUDA_SO, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return nullptr;
  auto state = reinterpret_cast<MockState *(*)()>(
      ::dlsym(h, "mock_cuda_state"));
  ::dlclose(h);
  return state ? state() : nullptr;
}

// The CUDA driver is loaded once per process and cached. ctest runs every
// test in its own process (gtest_discover_tests), so there each test gets a
// fresh mock and never skips. Running the whole binary in one process (e.g.
// by hand, without a filter) can leave an earlier driver or device state in
// place; the tests that depend on a fresh one then skip with that reason
// instead of failing for a reason unrelated to what they check.
#define USE_MOCK(var)                                                          \
  MockState *var = useMock();                                                  \
  if (!var)                                                                    \
    GTEST_SKIP() << "another CUDA driver is loaded in this process";

/// A float32 "device" tensor of the mock (its device memory is host memory).
struct DevTensor : HostTensor {
  explicit DevTensor(std::vector<int64_t> shape, float fill = 0.0f,
                     int device = 0)
      : HostTensor(std::move(shape), fill) {
    t.device = {kDLCUDA, device};
  }
};

} // namespace

#endif // TILE_TEST_RUNTIME_CUDAMOCK_H
