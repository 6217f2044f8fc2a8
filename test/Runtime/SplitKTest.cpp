//===- SplitKTest.cpp - split-K variants: choice, plan, workspace ---------===//
//
// The runtime side of the sm_90a split-K and narrow variants
// (CudaVariants.h), without a GPU: the cost model (splitKSlices), the metadata's "split_k" (with its
// "slice_bytes") and "workspace_bytes", and launches against the mock
// driver (grid (tiles, S, 1), the workspace param: tiles x S x slice_bytes,
// zeroed, one per stream, reused, grown when a launch needs more, the least
// recently used one taken over after cuCtxSynchronize; TILE_SPLIT_K).
//
//===----------------------------------------------------------------------===//
#include "CudaMock.h"
#include "Cuda/CudaVariants.h"
#include "Metadata.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include <cstring>

namespace {

/// The add fixture with a split-K variant: K = A's dim 0 (N) in units of
/// 16, at most 66 tiles (ceil(N / 64) blocks), 1000 workspace bytes per
/// tile and slice after 16384 bytes of arrival counters.
json splitKMeta() {
  json m = cudaAddMeta();
  auto tma = [](int param) {
    return json{{"param", param}, {"dtype", "float32"}, {"rank", 1},
                {"box", {32}}};
  };
  m["variants"] = {{{"kind", "sm90_tma_wgmma"},
                    {"chip", "sm_90a"},
                    {"kernel", "add_kernel_sm90_sk"},
                    {"block", {384, 1, 1}},
                    {"shared_bytes", 100000},
                    {"max_tiles", 66},
                    {"schedule", "splitk"},
                    {"workspace_bytes", 16384},
                    {"split_k",
                     {{"k_param", 0},
                      {"k_dim", 0},
                      {"block_k", 16},
                      {"slice_bytes", 1000}}},
                    {"tma", {tma(0), tma(1)}}}};
  return m;
}

struct EnvGuard {
  explicit EnvGuard(const char *value) {
    if (value)
      ::setenv("TILE_SPLIT_K", value, 1);
    else
      ::unsetenv("TILE_SPLIT_K");
  }
  ~EnvGuard() { ::unsetenv("TILE_SPLIT_K"); }
};

} // namespace

TEST(SplitK, CostModel) {
  using cuda::splitKSlices;
  // The model: min over S of ceil(kTiles / S) + 12 ceil(log2 S), below
  // kTiles, with tiles * S <= SMs.
  // 4 tiles of 128x128, K = 65536 (1024 K tiles), 132 SMs: 33 slices fit,
  // 32 cost 32 + 60 (5 levels), 33 cost 32 + 72 (6 levels).
  EXPECT_EQ(splitKSlices(4, 65536, 64, 132, 66, nullptr, 4096), 32);
  // 16 tiles, K = 16384 (256 K tiles): 8 slices (32 + 36).
  EXPECT_EQ(splitKSlices(16, 16384, 64, 132, 66, nullptr, 4096), 8);
  // 1000^3 with 128x256 tiles: 32 tiles, 16 K tiles: 2 slices cost 8 +
  // 12, not below 16 (measured slower than 1 slice): not used.
  EXPECT_EQ(splitKSlices(32, 1000, 64, 132, 66, nullptr, 4096), 0);
  // Skinny (M = 1 or 16, N = K = 4096 with 128x128 tiles): 32 tiles, 64 K
  // tiles: 4 slices (16 + 24 against 2 slices' 32 + 12).
  EXPECT_EQ(splitKSlices(32, 4096, 64, 132, 66, "", 4096), 4);
  // 16 tiles: 4 slices (16 + 24) before 8 (8 + 36).
  EXPECT_EQ(splitKSlices(16, 4096, 64, 132, 66, "", 4096), 4);
  // The break-even: 2 slices need 26 K tiles (13 + 12 < 26); 333x777x1111
  // (21 tiles, 18 K tiles, measured 26% slower split) stays unsplit.
  EXPECT_EQ(splitKSlices(4, 25 * 64, 64, 132, 66, "auto", 4096), 0);
  EXPECT_EQ(splitKSlices(4, 26 * 64, 64, 132, 66, nullptr, 4096), 2);
  EXPECT_EQ(splitKSlices(21, 1111, 64, 132, 66, nullptr, 4096), 0);
  EXPECT_EQ(splitKSlices(4, 1984, 64, 132, 66, "auto", 4096), 2);
  // 64 tiles, K = 32768: 2 slices (one wave), 256 + 12.
  EXPECT_EQ(splitKSlices(64, 32768, 64, 132, 66, nullptr, 4096), 2);
  // Grids of more than half the SMs: 1 slice per tile fits: not used.
  EXPECT_EQ(splitKSlices(67, 1 << 20, 64, 132, 200, nullptr, 4096), 0);
  EXPECT_EQ(splitKSlices(66, 1 << 20, 64, 132, 200, nullptr, 4096), 2);
  // Beyond the variant's max_tiles, whatever is asked.
  EXPECT_EQ(splitKSlices(67, 1 << 20, 64, 132, 66, nullptr, 4096), 0);
  EXPECT_EQ(splitKSlices(67, 1 << 20, 64, 132, 66, "8", 4096), 0);
  // Unknown SM count, empty K, nonsense tiles.
  EXPECT_EQ(splitKSlices(4, 65536, 64, 0, 66, nullptr, 4096), 0);
  EXPECT_EQ(splitKSlices(4, 0, 64, 132, 66, nullptr, 4096), 0);
  EXPECT_EQ(splitKSlices(0, 65536, 64, 132, 66, nullptr, 4096), 0);
  // TILE_SPLIT_K: N slices (capped at the K tiles and 65535), or off; more
  // CTAs than SMs are fine (no slice ever waits for another).
  EXPECT_EQ(splitKSlices(64, 65536, 64, 132, 66, "3", 4096), 3);
  EXPECT_EQ(splitKSlices(4, 100, 64, 132, 66, "8", 4096), 2);
  EXPECT_EQ(splitKSlices(1, int64_t(1) << 40, 1, 132, 66, "1000000", 1 << 20),
            65535);
  // The workspace's arrival counters bound tiles x S: 4096 counters, 64
  // tiles -> at most 64 slices; fewer than 2 per tile -> none; no counters
  // (workspace_bytes 0, e.g. an older bundle) -> never split-K.
  EXPECT_EQ(splitKSlices(64, int64_t(1) << 20, 64, 132, 66, "100", 4096), 64);
  EXPECT_EQ(splitKSlices(1, int64_t(1) << 40, 1, 132, 66, "1000000", 4096),
            4096);
  EXPECT_EQ(splitKSlices(16, 65536, 64, 132, 66, nullptr, 16), 0);
  EXPECT_EQ(splitKSlices(16, 65536, 64, 132, 66, nullptr, 32), 2);
  EXPECT_EQ(splitKSlices(4, 65536, 64, 132, 66, nullptr, 0), 0);
  EXPECT_EQ(splitKSlices(4, 65536, 64, 132, 66, "8", 0), 0);
  for (const char *off : {"0", "1", "off", "-3", "2x"})
    EXPECT_EQ(splitKSlices(4, 65536, 64, 132, 66, off, 4096), 0) << off;
}

TEST(SplitK, Metadata) {
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(splitKMeta().dump(), plan, error)) << error;
  ASSERT_EQ(plan.variants.size(), 1u);
  EXPECT_EQ(plan.variants[0].kParam, 0);
  EXPECT_EQ(plan.variants[0].kDim, 0);
  EXPECT_EQ(plan.variants[0].blockK, 16);
  EXPECT_EQ(plan.variants[0].sliceBytes, 1000);
  EXPECT_EQ(plan.variants[0].workspaceBytes, 16384);
  std::vector<cuda::VariantSpec> vs;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  EXPECT_EQ(vs[0].kParam, 0);
  EXPECT_EQ(vs[0].blockK, 16);
  EXPECT_EQ(vs[0].sliceBytes, 1000u);
  EXPECT_TRUE(vs[0].takesWorkspace());

  struct Bad {
    const char *key;
    json value;
    const char *message;
  } bad[] = {
      {"split_k", 3, "variants[0].split_k must be an object"},
      {"split_k", {{"k_param", 0}, {"k_dim", 0}, {"slice_bytes", 4}},
       "variants[0].split_k.block_k is missing"},
      {"split_k", {{"k_param", 0}, {"k_dim", 0}, {"block_k", 64}},
       "variants[0].split_k.slice_bytes is missing"},
      {"split_k",
       {{"k_param", 5}, {"k_dim", 0}, {"block_k", 64}, {"slice_bytes", 4}},
       "variants[0].split_k.k_param (5) must be the index of a tensor param"},
      {"split_k",
       {{"k_param", 0}, {"k_dim", 1}, {"block_k", 64}, {"slice_bytes", 4}},
       "variants[0].split_k.k_dim (1) must be a dim of param 0"},
      {"split_k",
       {{"k_param", 0}, {"k_dim", 0}, {"block_k", 0}, {"slice_bytes", 4}},
       "variants[0].split_k.block_k must be an integer in [1, 2^20]"},
      {"split_k",
       {{"k_param", 0}, {"k_dim", 0}, {"block_k", 64}, {"slice_bytes", 0}},
       "variants[0].split_k.slice_bytes must be an integer in [1, 2^30]"},
      {"workspace_bytes", -1,
       "variants[0].workspace_bytes must be an integer in [0, 2^40]"},
      {"max_tiles", nullptr, "variants[0].split_k needs max_tiles"},
  };
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.message);
    json m = splitKMeta();
    if (b.value.is_null())
      m["variants"][0].erase(b.key);
    else
      m["variants"][0][b.key] = b.value;
    KernelPlan p;
    EXPECT_FALSE(parseMetadata(m.dump(), p, error));
    EXPECT_NE(error.find(b.message), std::string::npos) << error;
  }
}

TEST(SplitKMock, LaunchGridAndWorkspace) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  EnvGuard env(nullptr);
  KernelGuard k(load(cudaBundle(splitKMeta()), "ffi"));
  ASSERT_TRUE(k.k);
  // N = 1000: 16 tiles, K = 1000 = 63 K tiles of 16, at most 8 slices: 4
  // (16 + 2 levels of 12 = 40; 8 slices cost 8 + 36).
  const int64_t n = 1000;
  DevTensor a({n}, 1.0f), b({n}, 2.0f), c({n});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  void *s1 = reinterpret_cast<void *>(0x71);
  ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90_sk");
  EXPECT_EQ(mock->grid[0], 16u);
  EXPECT_EQ(mock->grid[1], 4u);
  EXPECT_EQ(mock->grid[2], 1u);
  EXPECT_EQ(mock->block[0], 384u);
  EXPECT_EQ(c[999], 3.0f);
  // The workspace: the last param, 16 tiles x 4 slices x 1000 zeroed
  // bytes, allocated once (the first launch also loaded the module and the
  // map cache).
  ASSERT_EQ(mock->nparams, 18);
  const int64_t ws1 = mock->params[17];
  ASSERT_NE(ws1, 0);
  std::vector<char> zero(64000, 0);
  EXPECT_EQ(
      std::memcmp(reinterpret_cast<const void *>(ws1), zero.data(), 64000), 0);
  const int allocs = mock->allocs;
  ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(mock->params[17], ws1);
  EXPECT_EQ(mock->allocs, allocs);
  // Another stream: its own workspace. Up to 4 streams, then the least
  // recently used one is taken over after a context synchronize.
  int64_t seen[5] = {ws1};
  for (int i = 1; i < 4; ++i) {
    void *si = reinterpret_cast<void *>(0x71 + i);
    ASSERT_EQ(tile_kernel_launch(k, args, 3, si, nullptr), TILE_STATUS_OK);
    seen[i] = mock->params[17];
    for (int j = 0; j < i; ++j)
      EXPECT_NE(seen[i], seen[j]);
  }
  EXPECT_EQ(mock->allocs, allocs + 3);
  const int syncs = mock->ctx_syncs;
  ASSERT_EQ(tile_kernel_launch(k, args, 3, reinterpret_cast<void *>(0x90),
                               nullptr),
            TILE_STATUS_OK);
  EXPECT_EQ(mock->params[17], ws1); // s1 was the least recently used
  EXPECT_EQ(mock->allocs, allocs + 3);
  EXPECT_GT(mock->ctx_syncs, syncs);
  // TILE_SPLIT_K: forced slices (fewer: a workspace taken over as it is;
  // more: grown
  // to 16 x 8 x 1000 bytes after a context synchronize, zeroed), or off
  // (then entry.kernel: no other variant here).
  {
    EnvGuard forced("3");
    const int allocs3 = mock->allocs;
    ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90_sk");
    EXPECT_EQ(mock->grid[1], 3u);
    EXPECT_EQ(mock->allocs, allocs3);
  }
  {
    EnvGuard forced("8");
    const int allocs8 = mock->allocs, frees8 = mock->frees,
              syncs8 = mock->ctx_syncs;
    ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK);
    EXPECT_EQ(mock->grid[1], 8u);
    EXPECT_EQ(mock->allocs, allocs8 + 1);
    EXPECT_EQ(mock->frees, frees8 + 1);
    EXPECT_GT(mock->ctx_syncs, syncs8);
    std::vector<char> zero8(128000, 0);
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void *>(mock->params[17]),
                          zero8.data(), 128000),
              0);
    // Back to 4 slices: the grown workspace is kept.
    const int64_t grown = mock->params[17];
    EnvGuard autoS(nullptr);
    ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK);
    EXPECT_EQ(mock->grid[1], 4u);
    EXPECT_EQ(mock->params[17], grown);
    EXPECT_EQ(mock->allocs, allocs8 + 1);
  }
  {
    EnvGuard off("off");
    ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel");
    EXPECT_EQ(mock->grid[1], 1u);
  }
  // A stream capturing a graph: no workspace variant (a graph would keep
  // the stream's workspace, and capture allows no allocation); nothing
  // allocated or synchronized for it.
  {
    const int allocsC = mock->allocs, syncsC = mock->ctx_syncs;
    mock->capturing = 1;
    ASSERT_EQ(tile_kernel_launch(k, args, 3, reinterpret_cast<void *>(0x99),
                                 nullptr),
              TILE_STATUS_OK);
    mock->capturing = 0;
    EXPECT_STREQ(mock->last_function, "add_kernel");
    EXPECT_EQ(mock->allocs, allocsC);
    EXPECT_EQ(mock->ctx_syncs, syncsC);
    EXPECT_EQ(c[999], 3.0f);
  }
  // More tiles than max_tiles: not split-K.
  DevTensor a2({64 * 67}, 1.0f), b2({64 * 67}, 2.0f), c2({64 * 67});
  tile_arg big[3] = {tile_arg_tensor(a2.dl()), tile_arg_tensor(b2.dl()),
                     tile_arg_tensor(c2.dl())};
  ASSERT_EQ(tile_kernel_launch(k, big, 3, s1, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "add_kernel");
  EXPECT_EQ(c2[64 * 67 - 1], 3.0f);
  // Too little K for 2 slices of 4 K tiles: 2 tiles, K = 100 (7 K tiles).
  DevTensor a3({100}, 1.0f), b3({100}, 2.0f), c3({100});
  tile_arg small[3] = {tile_arg_tensor(a3.dl()), tile_arg_tensor(b3.dl()),
                       tile_arg_tensor(c3.dl())};
  ASSERT_EQ(tile_kernel_launch(k, small, 3, s1, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "add_kernel");
  // The workspaces are freed with the kernel.
  const int frees = mock->frees;
  tile_kernel_release(k.k);
  k.k = nullptr;
  EXPECT_GE(mock->frees, frees + 4);
  EXPECT_EQ(mock->pushes, mock->pops);
}

//===----------------------------------------------------------------------===//
// The narrow variant ("max_rows" + "split_k"): its cost model, metadata and
// launches.
//===----------------------------------------------------------------------===//

namespace {

/// splitKMeta's variant as a narrow one: launched only when A's and C's
/// dim 0 (N) is at most 1000, no max_tiles (named *_sk_nr: the mock driver
/// passes a workspace to kernels whose name has "_sk").
json narrowMeta() {
  json m = splitKMeta();
  json &v = m["variants"][0];
  v.erase("max_tiles");
  v["kernel"] = "add_kernel_sm90_sk_nr";
  v["schedule"] = "narrow";
  v["max_rows"] = {{"rows", 1000}, {"params", {0, 2}}};
  return m;
}

} // namespace

TEST(Narrow, CostModel) {
  using cuda::narrowSlices;
  // The model: min over S of ceil(kTiles / S) + 12 ceil(log2 S) with tiles
  // * S <= SMs, S = 1 included (H200 figures in docs/performance.md).
  // M = 1, N = K = 4096, 128-column tiles: 32 tiles, 64 K tiles: 4 slices
  // (16 + 24 against 2 slices' 32 + 12).
  EXPECT_EQ(narrowSlices(32, 4096, 64, 132, nullptr, 4096), 4);
  // N = 1024, K = 8192: 8 tiles, 128 K tiles: 8 slices (16 + 36).
  EXPECT_EQ(narrowSlices(8, 8192, 64, 132, nullptr, 4096), 8);
  // 112 tiles (N = 14336): one per SM already: 1 slice.
  EXPECT_EQ(narrowSlices(112, 4096, 64, 132, nullptr, 4096), 1);
  EXPECT_EQ(narrowSlices(256, 4096, 64, 132, "auto", 4096), 1);
  // Short K: 9 K tiles, 2 slices cost 5 + 12: 1 slice.
  EXPECT_EQ(narrowSlices(33, 520, 64, 132, "", 4096), 1);
  // Unknown SM count, empty K: 1 slice (still this variant).
  EXPECT_EQ(narrowSlices(4, 65536, 64, 0, nullptr, 4096), 1);
  EXPECT_EQ(narrowSlices(4, 0, 64, 132, nullptr, 4096), 1);
  // More tiles than counters, nonsense: not this variant.
  EXPECT_EQ(narrowSlices(4097, 4096, 64, 132, nullptr, 4096), 0);
  EXPECT_EQ(narrowSlices(0, 4096, 64, 132, nullptr, 4096), 0);
  EXPECT_EQ(narrowSlices(4, 4096, 64, 132, nullptr, 0), 0);
  // TILE_SPLIT_K: N slices (capped at the K tiles, 65535 and the
  // counters), "off" and the like: one slice.
  EXPECT_EQ(narrowSlices(32, 4096, 64, 132, "3", 4096), 3);
  EXPECT_EQ(narrowSlices(32, 4096, 64, 132, "1000", 4096), 64);
  EXPECT_EQ(narrowSlices(64, 1 << 30, 64, 132, "1000", 4096), 64);
  for (const char *off : {"0", "1", "off", "-3", "2x"})
    EXPECT_EQ(narrowSlices(32, 4096, 64, 132, off, 4096), 1) << off;
}

TEST(Narrow, Metadata) {
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(narrowMeta().dump(), plan, error)) << error;
  ASSERT_EQ(plan.variants.size(), 1u);
  EXPECT_EQ(plan.variants[0].maxRows, 1000);
  EXPECT_EQ(plan.variants[0].rowParams, (std::vector<int32_t>{0, 2}));
  std::vector<cuda::VariantSpec> vs;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  EXPECT_EQ(vs[0].maxRows, 1000);
  EXPECT_EQ(vs[0].rowParams, (std::vector<int32_t>{0, 2}));

  struct Bad {
    json value;
    const char *message;
  } bad[] = {
      {3, "variants[0].max_rows must be an object"},
      {{{"params", {0}}}, "variants[0].max_rows.rows is missing"},
      {{{"rows", 0}, {"params", {0}}},
       "variants[0].max_rows.rows must be an integer in [1, 2^30]"},
      {{{"rows", 16}}, "variants[0].max_rows.params is missing"},
      {{{"rows", 16}, {"params", json::array()}},
       "variants[0].max_rows.params must list at least one tensor param"},
      {{{"rows", 16}, {"params", {7}}},
       "variants[0].max_rows.params must be indices of tensor params"},
      {{{"rows", 16}, {"params", {"A"}}},
       "variants[0].max_rows.params must be indices of tensor params"},
      // Without max_rows, split_k needs max_tiles again.
      {nullptr, "variants[0].split_k needs max_tiles or max_rows"},
  };
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.message);
    json m = narrowMeta();
    if (b.value.is_null())
      m["variants"][0].erase("max_rows");
    else
      m["variants"][0]["max_rows"] = b.value;
    KernelPlan p;
    EXPECT_FALSE(parseMetadata(m.dump(), p, error));
    EXPECT_NE(error.find(b.message), std::string::npos) << error;
  }
}

// What the choice reads, through the C API: max_rows, split-K, workspace.
TEST(NarrowMock, RulesThroughTheCApi) {
  USE_MOCK(mock);
  KernelGuard k(load(cudaBundle(narrowMeta()), "ffi"));
  ASSERT_TRUE(k.k);
  tile_variant_rules r;
  r.struct_size = sizeof(r);
  ASSERT_EQ(tile_kernel_variant_rules(k, 0, &r), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(r.struct_size, sizeof(r));
  EXPECT_EQ(r.max_rows, 1000);
  ASSERT_EQ(r.num_row_params, 2);
  EXPECT_EQ(r.row_params[0], 0);
  EXPECT_EQ(r.row_params[1], 2);
  EXPECT_EQ(r.split_k_param, 0);
  EXPECT_EQ(r.split_k_dim, 0);
  EXPECT_EQ(r.split_k_block, 16);
  EXPECT_EQ(r.slice_bytes, 1000);
  EXPECT_EQ(r.workspace_bytes, 16384);
  EXPECT_EQ(r.coarsen[0], 1);
  EXPECT_EQ(r.split, 1);
  EXPECT_STREQ(r.pack_kernel, "");
  // A caller built against a header whose struct ended before max_rows
  // gets the fields up to there; the rest of its memory is untouched.
  tile_variant_rules old;
  std::memset(&old, 0x5a, sizeof(old));
  old.struct_size = offsetof(tile_variant_rules, max_rows);
  ASSERT_EQ(tile_kernel_variant_rules(k, 0, &old), TILE_STATUS_OK);
  EXPECT_EQ(old.struct_size, offsetof(tile_variant_rules, max_rows));
  EXPECT_EQ(old.split, 1);
  EXPECT_EQ(old.max_rows, int64_t(0x5a5a5a5a5a5a5a5a));
  old.struct_size = 0;
  EXPECT_EQ(tile_kernel_variant_rules(k, 0, &old),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(),
               "rules->struct_size is 0: set it to sizeof(tile_variant_rules)");
  EXPECT_EQ(tile_kernel_variant_rules(k, 1, &r), TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(tile_kernel_variant_rules(k, 0, nullptr),
            TILE_STATUS_INVALID_ARGUMENT);
}

TEST(NarrowMock, RowsAndSlices) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  ::unsetenv("TILE_GEMM_TILE");
  EnvGuard env("3");
  KernelGuard k(load(cudaBundle(narrowMeta()), "ffi"));
  ASSERT_TRUE(k.k);
  // N = 1000 rows: the narrow kernel, grid (16 tiles, 3 slices).
  const int64_t n = 1000;
  DevTensor a({n}, 1.0f), b({n}, 2.0f), c({n});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  void *s1 = reinterpret_cast<void *>(0x71);
  ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90_sk_nr");
  EXPECT_EQ(mock->grid[0], 16u);
  EXPECT_EQ(mock->grid[1], 3u);
  EXPECT_EQ(c[999], 3.0f);
  {
    // One slice: grid (16, 1, 1), still the narrow kernel.
    EnvGuard off("off");
    ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90_sk_nr");
    EXPECT_EQ(mock->grid[1], 1u);
  }
  {
    // TILE_GEMM_TILE=user or large: the program's tile shape.
    for (const char *shape : {"user", "large"}) {
      ::setenv("TILE_GEMM_TILE", shape, 1);
      ASSERT_EQ(tile_kernel_launch(k, args, 3, s1, nullptr), TILE_STATUS_OK);
      EXPECT_STREQ(mock->last_function, "add_kernel") << shape;
    }
    ::unsetenv("TILE_GEMM_TILE");
  }
  // 1001 rows: more than max_rows, so entry.kernel.
  DevTensor a2({1001}, 1.0f), b2({1001}, 2.0f), c2({1001});
  tile_arg wide[3] = {tile_arg_tensor(a2.dl()), tile_arg_tensor(b2.dl()),
                      tile_arg_tensor(c2.dl())};
  ASSERT_EQ(tile_kernel_launch(k, wide, 3, s1, nullptr), TILE_STATUS_OK);
  EXPECT_STREQ(mock->last_function, "add_kernel");
  EXPECT_EQ(c2[1000], 3.0f);
}
