//===- RepackTest.cpp - odd-pitch operands repacked for TMA ---------------===//
//
// The runtime side of the variants' "pack" kernel (CudaRepack.h), without
// a GPU: the cost rule and TILE_REPACK, the metadata's "pack", and
// launches against the mock driver (an operand whose row pitch TMA cannot
// describe is copied into the per-stream workspace by the pack kernel on
// the launch's stream, the map describes the copy; aligned operands are
// not copied; the workspace grows and is reused; an allocation failure or
// a written operand falls back to the next kernel).
//
//===----------------------------------------------------------------------===//
#include "CudaMock.h"
#include "Cuda/CudaRepack.h"
#include "Cuda/CudaVariants.h"
#include "Metadata.h"

#include <gtest/gtest.h>

namespace {

json tmaEntry(int param, std::vector<int> box) {
  return {{"param", param},         {"dtype", "float32"},
          {"rank", box.size()},     {"box", box},
          {"element_strides", std::vector<int>(box.size(), 1)}};
}

/// The 2-D float32 "mm" kernel with one TMA variant mapping A (M x K) and
/// B (K x N), and the pack kernel for 4-byte elements.
json repackMeta() {
  json m = mmMeta();
  m["target"] = {{"kind", "cuda"}, {"chip", "sm_90a"}, {"features", "+ptx80"}};
  m["block"] = {128, 1, 1};
  m["shared_bytes"] = 0;
  m["entry"] = {{"blocks", "mm__tile_blocks"}, {"kernel", "mm_kernel"}};
  m["variants"] = {{{"kind", "sm90_tma_wgmma"},
                    {"chip", "sm_90a"},
                    {"kernel", "mm_kernel_sm90"},
                    {"block", {384, 1, 1}},
                    {"shared_bytes", 1024},
                    {"pack", {{"kernel", "mm_pack_b4"}, {"elem_bytes", 4}}},
                    {"tma", {tmaEntry(0, {32, 16}), tmaEntry(1, {32, 16})}}}};
  return m;
}

struct RepackEnv {
  explicit RepackEnv(const char *value) {
    ::unsetenv("TILE_DISABLE_VARIANTS");
    if (value)
      ::setenv("TILE_REPACK", value, 1);
    else
      ::unsetenv("TILE_REPACK");
  }
  ~RepackEnv() { ::unsetenv("TILE_REPACK"); }
};

struct Mm {
  DevTensor a, b, c;
  tile_arg args[3];
  Mm(int64_t m, int64_t k, int64_t n) : a({m, k}), b({k, n}), c({m, n}) {
    for (size_t i = 0; i < a.data.size(); ++i)
      a[i] = float(i);
    args[0] = tile_arg_tensor(a.dl());
    args[1] = tile_arg_tensor(b.dl());
    args[2] = tile_arg_tensor(c.dl());
  }
};

tile_kernel_t loadRepack(const json &m = repackMeta()) {
  return load(cudaBundle(m, true, true, false), "ffi");
}

} // namespace

TEST(Repack, CostRuleAndMode) {
  using namespace cuda;
  EXPECT_EQ(repackMode(nullptr), RepackMode::Auto);
  EXPECT_EQ(repackMode(""), RepackMode::Auto);
  EXPECT_EQ(repackMode("auto"), RepackMode::Auto);
  EXPECT_EQ(repackMode("0"), RepackMode::Off);
  EXPECT_EQ(repackMode("off"), RepackMode::Off);
  EXPECT_EQ(repackMode("1"), RepackMode::On);
  EXPECT_EQ(repackMode("on"), RepackMode::On);
  EXPECT_EQ(paddedRowElems(4095, 2), 4096);
  EXPECT_EQ(paddedRowElems(4096, 2), 4096);
  EXPECT_EQ(paddedRowElems(5, 4), 8);
  EXPECT_EQ(paddedRowElems(1, 1), 16);
  EXPECT_EQ(repackBytes(3, 8, 2), 256u);
  // f16 4097x4095x4100 (A: 4097 x 4100, rows of 8200 bytes; B: 4100 x
  // 4095): both repacked, 137 GFLOP for 67 MB.
  EXPECT_TRUE(repackPays(4097, 4095, 4100,
                         repackBytes(4097, 4104, 2) +
                             repackBytes(4100, 4096, 2)));
  // 1001x999x1003: both repacked, 2 GFLOP for 4 MB.
  EXPECT_TRUE(repackPays(1001, 999, 1003,
                         repackBytes(1001, 1008, 2) +
                             repackBytes(1003, 1000, 2)));
  // 127x131x137: 4.6 MFLOP but three k-steps and 74 KB to copy (the
  // latency regime); one k-step (k = 64) keeps the LDG kernel.
  EXPECT_TRUE(repackPays(127, 131, 137,
                         repackBytes(127, 144, 2) + repackBytes(137, 136, 2)));
  EXPECT_FALSE(repackPays(127, 131, 64, repackBytes(64, 136, 2)));
  // 200x300x1001: 1 MB to copy, 16 k-steps.
  EXPECT_TRUE(repackPays(200, 300, 1001,
                         repackBytes(200, 1008, 2) + repackBytes(1001, 304, 2)));
  // Small but over kRepackSmallBytes and below the throughput floor.
  EXPECT_FALSE(repackPays(16, 2000, 2001, repackBytes(2001, 2000, 2) * 2));
  // Skinny: M = 8, a huge odd B (K x N): too few FLOPs per copied byte.
  EXPECT_FALSE(repackPays(8, 8191, 8191, repackBytes(8191, 8192, 2)));
  EXPECT_FALSE(repackPays(0, 10, 10, 0));
}

TEST(Repack, Metadata) {
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(repackMeta().dump(), plan, error)) << error;
  ASSERT_EQ(plan.variants.size(), 1u);
  EXPECT_EQ(plan.variants[0].packKernel, "mm_pack_b4");
  EXPECT_EQ(plan.variants[0].packElemBytes, 4);
  EXPECT_EQ(plan.variants[0].packOperands, 1); // absent: one per launch
  {
    json two = repackMeta();
    two["variants"][0]["pack2"] = two["variants"][0]["pack"];
    two["variants"][0].erase("pack");
    KernelPlan p2;
    ASSERT_TRUE(parseMetadata(two.dump(), p2, error)) << error;
    EXPECT_EQ(p2.variants[0].packOperands, 2);
  }
  std::vector<cuda::VariantSpec> vs;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  EXPECT_EQ(vs[0].packKernel, "mm_pack_b4");
  EXPECT_EQ(vs[0].repackMask, 3u); // A and B: read-only, 4-byte elements
  // A variant that also maps the output C: C is never repacked.
  json m = repackMeta();
  m["variants"][0]["tma"].push_back(tmaEntry(2, {32, 16}));
  ASSERT_TRUE(parseMetadata(m.dump(), plan, error)) << error;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  EXPECT_EQ(vs[0].repackMask, 3u);

  struct Bad {
    json value;
    const char *message;
  } bad[] = {
      {"mm_pack_b4", "variants[0].pack must be an object"},
      {{{"elem_bytes", 4}}, "variants[0].pack.kernel is missing"},
      {{{"kernel", "mm_pack_b4"}}, "variants[0].pack.elem_bytes is missing"},
      {{{"kernel", "mm_pack_b4"}, {"elem_bytes", 3}},
       "variants[0].pack.elem_bytes must be 1, 2, 4 or 8"},
      {{{"kernel", ""}, {"elem_bytes", 4}},
       "variants[0].pack.kernel must name a kernel other than"},
      {{{"kernel", "mm_kernel"}, {"elem_bytes", 4}},
       "variants[0].pack.kernel must name a kernel other than"},
      {{{"kernel", "mm_kernel_sm90"}, {"elem_bytes", 4}},
       "variants[0].pack.kernel must name a kernel other than"},
  };
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.message);
    json mb = repackMeta();
    mb["variants"][0]["pack"] = b.value;
    KernelPlan p;
    EXPECT_FALSE(parseMetadata(mb.dump(), p, error));
    EXPECT_NE(error.find(b.message), std::string::npos) << error;
    // At load: a BUNDLE_ERROR.
    LoadResult r = tryLoad(cudaBundle(mb, true, true, false), "ffi");
    EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR) << r.message;
  }
  // "pack2" is checked as "pack" is, and the two do not go together.
  {
    json mb = repackMeta();
    mb["variants"][0]["pack2"] = {{"kernel", "mm_pack2_b4"}, {"elem_bytes", 3}};
    mb["variants"][0].erase("pack");
    KernelPlan p;
    EXPECT_FALSE(parseMetadata(mb.dump(), p, error));
    EXPECT_NE(error.find("variants[0].pack2.elem_bytes must be 1, 2, 4 or 8"),
              std::string::npos)
        << error;
    mb = repackMeta();
    mb["variants"][0]["pack2"] = {{"kernel", "mm_pack2_b4"}, {"elem_bytes", 4}};
    EXPECT_FALSE(parseMetadata(mb.dump(), p, error));
    EXPECT_NE(error.find("variants[0].pack2 cannot be combined with pack"),
              std::string::npos)
        << error;
  }
}

TEST(RepackMock, OddPitchIsRepacked) {
  USE_MOCK(mock);
  RepackEnv env("1");
  KernelGuard k(loadRepack());
  ASSERT_TRUE(k.k);
  // A: 16 x 5 float32, a 20-byte row pitch: repacked to 8-element rows.
  Mm mm(16, 5, 24);
  const int packs = mock->pack_launches;
  void *stream = reinterpret_cast<void *>(0x51);
  ASSERT_EQ(tile_kernel_launch(k, mm.args, 3, stream, nullptr),
            TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
  ASSERT_EQ(mock->pack_launches, packs + 1);
  EXPECT_EQ(mock->stream, stream); // the GEMM; the pack ran on it before
  const int64_t *p = mock->pack_params;
  EXPECT_EQ(p[0], int64_t(reinterpret_cast<intptr_t>(mm.a.t.data)));
  EXPECT_EQ(p[1] % 256, 0);
  EXPECT_EQ(p[2], 16);
  EXPECT_EQ(p[3], 5);
  EXPECT_EQ(p[4], 5);
  EXPECT_EQ(p[5], 8);
  // The last map encoded is B's (aligned); A's map describes the copy:
  // check it through the cache by launching with B odd as well.
  const float *copy = reinterpret_cast<const float *>(intptr_t(p[1]));
  EXPECT_EQ(copy[8 * 3 + 4], mm.a[3 * 5 + 4]);
  EXPECT_EQ(copy[8 * 3 + 5], 0.0f); // padding
  // B odd too (N = 7): both repacked, one workspace; the last encode is
  // B's copy: dims (7, 5), pitch 32 bytes, at the workspace.
  Mm odd(16, 5, 7);
  ASSERT_EQ(tile_kernel_launch(k, odd.args, 3, stream, nullptr),
            TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
  EXPECT_EQ(mock->pack_launches, packs + 3);
  EXPECT_EQ(mock->enc_dims[0], 7u);
  EXPECT_EQ(mock->enc_dims[1], 5u);
  EXPECT_EQ(mock->enc_strides[0], 32u);
  EXPECT_EQ(mock->enc_address, reinterpret_cast<void *>(intptr_t(p[1])));
  EXPECT_EQ(p[2], 5);
  EXPECT_EQ(p[3], 7);
}

TEST(RepackMock, TwoOperandsInOneLaunch) {
  // "pack2" (what tilec emits): A and B are copied by one launch of the
  // pack kernel, grid y = 2; a launch with only A odd has grid y = 1.
  USE_MOCK(mock);
  RepackEnv env("1");
  json m = repackMeta();
  m["variants"][0].erase("pack");
  m["variants"][0]["pack2"] = {{"kernel", "mm_pack2_b4"}, {"elem_bytes", 4}};
  KernelGuard k(loadRepack(m));
  ASSERT_TRUE(k.k);
  Mm odd(16, 5, 7);
  for (size_t i = 0; i < odd.b.data.size(); ++i)
    odd.b[i] = float(1000 + i);
  const int packs = mock->pack_launches, copies = mock->pack_copies;
  ASSERT_EQ(tile_kernel_launch(k, odd.args, 3, nullptr, nullptr),
            TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
  EXPECT_EQ(mock->pack_launches, packs + 1);
  EXPECT_EQ(mock->pack_copies, copies + 2);
  // The last copy is B's (5 x 7, rows padded to 8): the map describes it.
  const int64_t *p = mock->pack_params;
  EXPECT_EQ(p[0], int64_t(reinterpret_cast<intptr_t>(odd.b.t.data)));
  EXPECT_EQ(p[2], 5);
  EXPECT_EQ(p[3], 7);
  EXPECT_EQ(p[5], 8);
  const float *copy = reinterpret_cast<const float *>(intptr_t(p[1]));
  EXPECT_EQ(copy[8 * 4 + 6], odd.b[4 * 7 + 6]);
  EXPECT_EQ(copy[8 * 4 + 7], 0.0f); // padding
  EXPECT_EQ(mock->enc_address, reinterpret_cast<void *>(intptr_t(p[1])));
  // Only A odd: one launch, one copy.
  Mm oddA(16, 5, 24);
  ASSERT_EQ(tile_kernel_launch(k, oddA.args, 3, nullptr, nullptr),
            TILE_STATUS_OK);
  EXPECT_EQ(mock->pack_launches, packs + 2);
  EXPECT_EQ(mock->pack_copies, copies + 3);
}

TEST(RepackMock, AlignedIsNotRepacked) {
  USE_MOCK(mock);
  RepackEnv env("1");
  KernelGuard k(loadRepack());
  ASSERT_TRUE(k.k);
  Mm mm(16, 8, 24);
  const int packs = mock->pack_launches, allocs = mock->allocs;
  ASSERT_EQ(tile_kernel_launch(k, mm.args, 3, nullptr, nullptr),
            TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
  EXPECT_EQ(mock->pack_launches, packs);
  EXPECT_EQ(mock->enc_address, mm.b.t.data);
  EXPECT_EQ(mock->allocs, allocs + 1); // the map cache only
}

TEST(RepackMock, EnvOverrideAndCostRule) {
  USE_MOCK(mock);
  KernelGuard k(loadRepack());
  ASSERT_TRUE(k.k);
  Mm small(16, 5, 24);
  // 2048 x 1023 x 2048: 8.6 GFLOP for 8.4 MB: the rule repacks.
  Mm big(2048, 1023, 2048);
  struct Case {
    const char *env;
    Mm *mm;
    bool repacked;
  } cases[] = {{nullptr, &small, false}, {"auto", &small, false},
               {"1", &small, true},      {nullptr, &big, true},
               {"0", &big, false},       {"off", &big, false},
               {"on", &big, true}};
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.env ? c.env : "unset") + " " +
                 std::to_string(c.mm->a.shape[0]));
    RepackEnv env(c.env);
    const int packs = mock->pack_launches;
    ASSERT_EQ(tile_kernel_launch(k, c.mm->args, 3, nullptr, nullptr),
              TILE_STATUS_OK);
    EXPECT_EQ(mock->pack_launches, packs + (c.repacked ? 1 : 0));
    EXPECT_STREQ(mock->last_function,
                 c.repacked ? "mm_kernel_sm90" : "mm_kernel");
  }
}

TEST(RepackMock, WorkspaceGrowsPerStream) {
  USE_MOCK(mock);
  RepackEnv env("1");
  KernelGuard k(loadRepack());
  ASSERT_TRUE(k.k);
  Mm small(16, 5, 24), large(1024, 5, 24), mid(512, 5, 24);
  void *s1 = reinterpret_cast<void *>(0x61), *s2 = reinterpret_cast<void *>(0x62);
  ASSERT_EQ(tile_kernel_launch(k, small.args, 3, s1, nullptr), TILE_STATUS_OK);
  const int64_t ws1 = mock->pack_params[1];
  int allocs = mock->allocs;
  // Same size again: reused, nothing allocated.
  ASSERT_EQ(tile_kernel_launch(k, small.args, 3, s1, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(mock->pack_params[1], ws1);
  EXPECT_EQ(mock->allocs, allocs);
  // Larger: grown (old buffer freed after a context synchronize).
  const int syncs = mock->ctx_syncs, frees = mock->frees;
  ASSERT_EQ(tile_kernel_launch(k, large.args, 3, s1, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
  EXPECT_EQ(mock->allocs, allocs + 1);
  EXPECT_EQ(mock->frees, frees + 1);
  EXPECT_GT(mock->ctx_syncs, syncs);
  allocs = mock->allocs;
  // Smaller again: fits, no allocation.
  ASSERT_EQ(tile_kernel_launch(k, mid.args, 3, s1, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(mock->allocs, allocs);
  const int64_t wsLarge = mock->pack_params[1];
  // Another stream: its own workspace.
  ASSERT_EQ(tile_kernel_launch(k, small.args, 3, s2, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(mock->allocs, allocs + 1);
  EXPECT_NE(mock->pack_params[1], wsLarge);
  // Released with the kernel.
  const int before = mock->frees;
  tile_kernel_release(k.k);
  k.k = nullptr;
  EXPECT_GE(mock->frees, before + 3); // map cache + 2 workspaces
}

TEST(RepackMock, AllocationFailureFallsBack) {
  USE_MOCK(mock);
  RepackEnv env("1");
  KernelGuard k(loadRepack());
  ASSERT_TRUE(k.k);
  Mm mm(1024, 5, 24); // a 32 KiB copy
  // The map cache (8 KiB) is allocated at the first launch: let it.
  Mm aligned(16, 8, 24);
  ASSERT_EQ(tile_kernel_launch(k, aligned.args, 3, nullptr, nullptr),
            TILE_STATUS_OK);
  mock->fail_alloc_over = 16384;
  const int packs = mock->pack_launches;
  ASSERT_EQ(tile_kernel_launch(k, mm.args, 3, nullptr, nullptr),
            TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_STREQ(mock->last_function, "mm_kernel");
  EXPECT_EQ(mock->pack_launches, packs);
  mock->fail_alloc_over = 0;
  ASSERT_EQ(tile_kernel_launch(k, mm.args, 3, nullptr, nullptr),
            TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
  EXPECT_EQ(mock->pack_launches, packs + 1);
}

TEST(RepackMock, WrittenOperandOrNoPackKernelFallsBack) {
  USE_MOCK(mock);
  RepackEnv env("1");
  // The variant maps C too: N = 7 makes C's pitch 28 bytes; C is written,
  // never repacked: the entry kernel runs (nothing packed).
  json m = repackMeta();
  m["variants"][0]["tma"].push_back(tmaEntry(2, {32, 16}));
  {
    KernelGuard k(loadRepack(m));
    ASSERT_TRUE(k.k);
    Mm mm(16, 8, 7);
    const int packs = mock->pack_launches;
    ASSERT_EQ(tile_kernel_launch(k, mm.args, 3, nullptr, nullptr),
              TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "mm_kernel");
    EXPECT_EQ(mock->pack_launches, packs);
  }
  // A cubin without the pack kernel: aligned launches still use the
  // variant, odd ones the entry kernel.
  m = repackMeta();
  m["variants"][0]["pack"]["kernel"] = "missing_kernel";
  KernelGuard k(loadRepack(m));
  ASSERT_TRUE(k.k);
  Mm odd(16, 5, 24), aligned(16, 8, 24);
  ASSERT_EQ(tile_kernel_launch(k, odd.args, 3, nullptr, nullptr),
            TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "mm_kernel");
  ASSERT_EQ(tile_kernel_launch(k, aligned.args, 3, nullptr, nullptr),
            TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "mm_kernel_sm90");
}
