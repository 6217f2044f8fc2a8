//===- GraphCaptureTest.cpp - variants inside a CUDA graph capture --------===//
//
// A launch into a stream that is capturing a CUDA graph: the graph keeps
// the kernel's params, i.e. the device addresses of the variant's cached
// tensor maps, for every replay, and the capture allows no
// synchronization. So (CudaVariants.h, VariantLauncher::prepare) a variant
// runs inside a capture only on maps cached by an earlier launch, whose
// slots are then never replaced; a miss goes to the next variant (here
// entry.kernel) without copying or synchronizing anything. Against the
// mock driver, whose cuStreamIsCapturing reports `capturing`.
//
//===----------------------------------------------------------------------===//
#include "CudaMock.h"
#include "Cuda/CudaVariants.h"

#include <gtest/gtest.h>

#include <memory>

namespace {

json tmaEntry(int param) {
  return {{"param", param}, {"dtype", "float32"}, {"rank", 1},
          {"box", {32}}, {"element_strides", {1}}};
}

/// The add fixture with one TMA variant mapping A and B.
json captureMeta() {
  json m = cudaAddMeta();
  m["variants"] = {{{"kind", "sm90_tma_wgmma"},
                    {"chip", "sm_90a"},
                    {"kernel", "add_kernel_sm90"},
                    {"block", {384, 1, 1}},
                    {"shared_bytes", 1024},
                    {"tma", {tmaEntry(0), tmaEntry(1)}}}};
  return m;
}

const uint64_t *mapAt(int64_t p) {
  return reinterpret_cast<const uint64_t *>(static_cast<intptr_t>(p));
}

uint64_t address(const DevTensor &t) {
  return uint64_t(reinterpret_cast<uintptr_t>(t.t.data));
}

struct Capture {
  explicit Capture(MockState *m) : mock(m) { mock->capturing = 1; }
  ~Capture() { mock->capturing = 0; }
  MockState *mock;
};

} // namespace

TEST(GraphCaptureMock, OnlyCachedMapsAndTheyStay) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  KernelGuard k(load(cudaBundle(captureMeta()), "ffi"));
  ASSERT_TRUE(k.k);
  const int64_t n = 256;
  DevTensor a({n}, 1.0f), b({n}, 2.0f), c({n});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  void *stream = reinterpret_cast<void *>(0x55);
  // Captured first: no map cached, so entry.kernel, and nothing encoded,
  // copied or synchronized.
  {
    const int encodes = mock->encodes, copies = mock->htod_async,
              syncs = mock->ctx_syncs;
    Capture capture(mock);
    ASSERT_EQ(tile_kernel_launch(k, args, 3, stream, nullptr), TILE_STATUS_OK)
        << tile_last_error();
    EXPECT_STREQ(mock->last_function, "add_kernel");
    EXPECT_EQ(mock->encodes, encodes);
    EXPECT_EQ(mock->htod_async, copies);
    EXPECT_EQ(mock->ctx_syncs, syncs);
  }
  // The warm-up outside the capture caches A's and B's maps; captured
  // again, the variant runs on them.
  ASSERT_EQ(tile_kernel_launch(k, args, 3, stream, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
  int64_t mapA = 0, mapB = 0;
  {
    const int copies = mock->htod_async;
    Capture capture(mock);
    ASSERT_EQ(tile_kernel_launch(k, args, 3, stream, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
    EXPECT_EQ(mock->htod_async, copies);
    mapA = mock->params[15];
    mapB = mock->params[16];
  }
  // 100 launches with other tensors cycle the 64-slot cache: the captured
  // graph's two maps stay where its params point.
  std::vector<std::unique_ptr<DevTensor>> keep;
  for (int i = 0; i < 100; ++i) {
    keep.push_back(std::make_unique<DevTensor>(std::vector<int64_t>{n}, 3.0f));
    keep.push_back(std::make_unique<DevTensor>(std::vector<int64_t>{n}, 4.0f));
    DevTensor c2({n});
    tile_arg other[3] = {tile_arg_tensor(keep[keep.size() - 2]->dl()),
                         tile_arg_tensor(keep.back()->dl()),
                         tile_arg_tensor(c2.dl())};
    ASSERT_EQ(tile_kernel_launch(k, other, 3, stream, nullptr),
              TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
    EXPECT_NE(mock->params[15], mapA);
    EXPECT_NE(mock->params[16], mapB);
  }
  EXPECT_EQ(mapAt(mapA)[0], address(a));
  EXPECT_EQ(mapAt(mapB)[0], address(b));
  // The pinned maps still serve launches outside captures.
  ASSERT_EQ(tile_kernel_launch(k, args, 3, stream, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(mock->params[15], mapA);
  EXPECT_EQ(c[n - 1], 3.0f);
  EXPECT_EQ(mock->pushes, mock->pops);
}

TEST(GraphCaptureMock, PinnedSlotsAreBounded) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  KernelGuard k(load(cudaBundle(captureMeta()), "ffi"));
  ASSERT_TRUE(k.k);
  const int64_t n = 64;
  using cuda::VariantLauncher;
  const size_t pinnable =
      VariantLauncher::kCacheSlots - VariantLauncher::kUnpinnedSlots;
  // Each captured launch pins two slots (A and B, warmed up first); once
  // `pinnable` are pinned, captures go to entry.kernel and launches
  // outside captures still cycle through the other slots.
  std::vector<std::unique_ptr<DevTensor>> keep;
  for (size_t i = 0; i < pinnable / 2 + 2; ++i) {
    keep.push_back(std::make_unique<DevTensor>(std::vector<int64_t>{n}, 1.0f));
    keep.push_back(std::make_unique<DevTensor>(std::vector<int64_t>{n}, 2.0f));
    DevTensor c({n});
    tile_arg args[3] = {tile_arg_tensor(keep[keep.size() - 2]->dl()),
                        tile_arg_tensor(keep.back()->dl()),
                        tile_arg_tensor(c.dl())};
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK);
    Capture capture(mock);
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function,
                 i < pinnable / 2 ? "add_kernel_sm90" : "add_kernel")
        << i;
  }
  for (int i = 0; i < 40; ++i) {
    DevTensor a({n}, 5.0f), b({n}, 6.0f), c({n});
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(c.dl())};
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
    EXPECT_EQ(c[n - 1], 11.0f);
  }
}
