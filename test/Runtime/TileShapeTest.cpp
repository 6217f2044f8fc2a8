//===- TileShapeTest.cpp - coarsened (wide-tile) variants -----------------===//
//
// The runtime side of variants whose tiles cover several launch blocks
// ("coarsen", docs/bundle.md; the sm_90a wide-tile GEMM), without a GPU:
// the tile-shape cost model (useCoarseTiles), the metadata's "coarsen",
// and launches against the mock driver (132 SMs): the variant's own tile
// count and grid, the order against split-K, TILE_GEMM_TILE. (The mock
// computes the add over gx * 64 elements only, so the results of the
// smaller persistent grids are not checked here: test/E2E does on a GPU.)
//
//===----------------------------------------------------------------------===//
#include "CudaMock.h"
#include "Cuda/CudaVariants.h"
#include "Metadata.h"

#include <gtest/gtest.h>

namespace {

json variant(const char *kernel) {
  auto tma = [](int param) {
    return json{{"param", param}, {"dtype", "float32"}, {"rank", 1},
                {"box", {32}}};
  };
  return {{"kind", "sm90_tma_wgmma"},   {"chip", "sm_90a"},
          {"kernel", kernel},           {"block", {384, 1, 1}},
          {"shared_bytes", 100000},     {"grid", "sms"},
          {"tma", {tma(0), tma(1)}}};
}

/// A variant whose tiles cover `cx` blocks along x ("coarsen"), with
/// "coarse_speedup" `speedup` and, when `split` > 1, "split".
json coarseVariant(const char *kernel, int cx, int speedup, int split = 1) {
  json v = variant(kernel);
  v["coarsen"] = {cx, 1, 1};
  v["coarse_speedup"] = speedup;
  if (split > 1)
    v["split"] = split;
  return v;
}

/// The add fixture (ceil(N / 64) blocks along x) with a split-K variant
/// (at most 66 tiles, K = N in units of 16), a wide one (two blocks per
/// tile along x) and a persistent one, in the compiler's order.
json wideMeta() {
  json m = cudaAddMeta();
  json sk = variant("add_kernel_sm90_sk");
  sk.erase("grid");
  sk["max_tiles"] = 66;
  sk["workspace_bytes"] = 16384; // the arrival counters
  sk["split_k"] = {{"k_param", 0},
                   {"k_dim", 0},
                   {"block_k", 16},
                   {"slice_bytes", 4096}};
  json wide = variant("add_kernel_sm90_wide");
  wide["coarsen"] = {2, 1, 1};
  m["variants"] = {sk, wide, variant("add_kernel_sm90")};
  return m;
}

/// One launch of the add kernel `k` over `n` elements (the mock records
/// the variant and grid).
void launchAdd(tile_kernel_t k, int64_t n) {
  DevTensor a({n}, 1.0f), b({n}, 2.0f), c({n});
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(c.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
}

/// Launches the add kernel `k` over `blocks` blocks and checks that the
/// mock ran `kernel` on `grid` CTAs.
void expectRun(MockState *mock, tile_kernel_t k, int64_t blocks,
               const char *kernel, unsigned grid) {
  launchAdd(k, 64 * blocks);
  EXPECT_STREQ(mock->last_function, kernel) << blocks;
  EXPECT_EQ(mock->grid[0], grid) << blocks;
}

struct EnvGuard {
  explicit EnvGuard(const char *value) {
    if (value)
      ::setenv("TILE_GEMM_TILE", value, 1);
    else
      ::unsetenv("TILE_GEMM_TILE");
  }
  ~EnvGuard() { ::unsetenv("TILE_GEMM_TILE"); }
};

} // namespace

TEST(TileShape, CostModel) {
  using cuda::useCoarseTiles;
  // 128x128 -> 128x256 on 132 SMs: 4096^3 (1024 tiles, 512 wide) and
  // 2048^3 (256, 128): wide; 100 tiles (one wave either way): not.
  EXPECT_TRUE(useCoarseTiles(1024, 512, 2, 132, nullptr));
  EXPECT_TRUE(useCoarseTiles(256, 128, 2, 132, ""));
  EXPECT_TRUE(useCoarseTiles(133, 67, 2, 132, "auto"));
  EXPECT_FALSE(useCoarseTiles(132, 66, 2, 132, nullptr));
  EXPECT_FALSE(useCoarseTiles(100, 50, 2, 132, nullptr));
  // 300 tiles: 3 per SM against 2 wide ones (4 blocks' work): not.
  EXPECT_FALSE(useCoarseTiles(300, 150, 2, 132, nullptr));
  // An odd grid: 17 x 9 blocks = 153 tiles, 9 x 9 = 81 wide.
  EXPECT_TRUE(useCoarseTiles(153, 81, 2, 132, nullptr));
  // Unknown SM count, nonsense.
  EXPECT_FALSE(useCoarseTiles(1024, 512, 2, 0, nullptr));
  EXPECT_FALSE(useCoarseTiles(0, 0, 2, 132, nullptr));
  // TILE_GEMM_TILE: "user" never, "large" always, anything else the model.
  EXPECT_FALSE(useCoarseTiles(1024, 512, 2, 132, "user"));
  EXPECT_TRUE(useCoarseTiles(4, 2, 2, 132, "large"));
  EXPECT_TRUE(useCoarseTiles(1024, 512, 2, 132, "bogus"));
  EXPECT_EQ(cuda::tileShapeOverride("user"), cuda::TileShape::User);
  EXPECT_EQ(cuda::tileShapeOverride(nullptr), cuda::TileShape::Auto);
  const int64_t c[3] = {2, 1, 1};
  EXPECT_EQ(cuda::coarseTiles(c, 17, 9, 1), 81);
}

TEST(TileShape, CostModelSpeedup) {
  using cuda::useCoarseTiles;
  // 64x64 -> 128x256 (8 blocks per tile, coarse_speedup 271): 4096^2 =
  // 4096 blocks, 512 coarse tiles: 8 * 4 = 32 block-times per SM against
  // 2.71 * 32 = 87: coarse.
  EXPECT_TRUE(useCoarseTiles(4096, 512, 8, 132, nullptr, 271));
  // 1000^2 = 256 blocks, 32 coarse tiles: one tile of 8 blocks per SM
  // (800) against 2 launch tiles at 2.71 (542): not.
  EXPECT_FALSE(useCoarseTiles(256, 32, 8, 132, nullptr, 271));
  // 594 blocks, 81 coarse tiles (1100 x 2104 in 64x64 blocks): 800 <= 1355.
  EXPECT_TRUE(useCoarseTiles(594, 81, 8, 132, nullptr, 271));
  // The default is the 128x128 -> 128x256 estimate (125).
  EXPECT_EQ(useCoarseTiles(300, 150, 2, 132, nullptr),
            useCoarseTiles(300, 150, 2, 132, nullptr, 125));
  EXPECT_TRUE(useCoarseTiles(300, 150, 2, 132, nullptr, 160));
  // The overrides win over any estimate.
  EXPECT_FALSE(useCoarseTiles(4096, 512, 8, 132, "user", 271));
  EXPECT_TRUE(useCoarseTiles(4, 1, 8, 132, "large", 271));
}

TEST(TileShape, CostModelRivals) {
  using cuda::CoarseChoice;
  using cuda::coarseFaster;
  // 64x64 blocks at 1000^3 (16 x 16): 128x256 tiles (32 of 8 blocks,
  // 271) against 128x128 ones (64 of 4 blocks, 217): one wave each, 8 /
  // 2.71 = 2.95 against 4 / 2.17 = 1.84 launch-block times: 128x128.
  const CoarseChoice wide{32, 8, 271}, mid{64, 4, 217};
  EXPECT_TRUE(coarseFaster(mid, wide, 132));
  EXPECT_FALSE(coarseFaster(wide, mid, 132));
  // 4096^3 (64 x 64 blocks): 512 against 1024 tiles, 4 and 8 waves: 11.8
  // against 14.7: 128x256.
  EXPECT_TRUE(coarseFaster({512, 8, 271}, {1024, 4, 217}, 132));
  EXPECT_FALSE(coarseFaster({1024, 4, 217}, {512, 8, 271}, 132));
  // Equal estimates: neither is faster (the first in metadata order runs).
  EXPECT_FALSE(coarseFaster({10, 2, 200}, {10, 4, 400}, 132));
  EXPECT_FALSE(coarseFaster({10, 4, 400}, {10, 2, 200}, 132));
  // Split variants of a 256x128 launch tile at 1000^3 (4 x 8 blocks):
  // 128x256 CTA tiles (coarsen 2, split 2: one block each, 125) against
  // 128x128 ones (coarsen 1, split 2: half a block, 100): one wave each,
  // 1 / 1.25 against 0.5 / 1: 128x128. At 4096^3 (16 x 32 blocks): 512
  // against 1024 CTA tiles, 4 and 8 waves: 3.2 against 4: 128x256.
  const CoarseChoice split256{32, 2, 125, 2}, split128{64, 1, 100, 2};
  EXPECT_TRUE(coarseFaster(split128, split256, 132));
  EXPECT_FALSE(coarseFaster(split256, split128, 132));
  EXPECT_TRUE(coarseFaster({512, 2, 125, 2}, {1024, 1, 100, 2}, 132));
  EXPECT_FALSE(coarseFaster({1024, 1, 100, 2}, {512, 2, 125, 2}, 132));
  // Unknown SM count, nonsense.
  EXPECT_FALSE(coarseFaster(mid, wide, 0));
  EXPECT_FALSE(coarseFaster({0, 4, 217}, wide, 132));
}

TEST(TileShape, Metadata) {
  KernelPlan plan;
  std::string error;
  ASSERT_TRUE(parseMetadata(wideMeta().dump(), plan, error)) << error;
  ASSERT_EQ(plan.variants.size(), 3u);
  EXPECT_EQ(plan.variants[1].coarsen[0], 2);
  EXPECT_EQ(plan.variants[1].coarsen[1], 1);
  EXPECT_EQ(plan.variants[2].coarsen[0], 1); // absent: one block per tile
  EXPECT_EQ(plan.variants[1].coarseSpeedup, 0); // absent
  std::vector<cuda::VariantSpec> vs;
  ASSERT_TRUE(cuda::makeVariantSpecs(plan, vs, error)) << error;
  EXPECT_TRUE(vs[1].coarsened());
  EXPECT_FALSE(vs[2].coarsened());
  EXPECT_EQ(vs[1].coarseSpeedupPct, cuda::kDefaultCoarseSpeedupPct);
  EXPECT_FALSE(vs[1].splitTiles());
  {
    json m = wideMeta();
    m["variants"][1]["split"] = 2;
    KernelPlan p;
    ASSERT_TRUE(parseMetadata(m.dump(), p, error)) << error;
    EXPECT_EQ(p.variants[1].split, 2);
    ASSERT_TRUE(cuda::makeVariantSpecs(p, vs, error)) << error;
    EXPECT_TRUE(vs[1].splitTiles());
    EXPECT_EQ(vs[1].variantTiles(5, 3, 1), 2 * 3 * 3);
  }
  {
    json m = wideMeta();
    m["variants"][1]["coarse_speedup"] = 316;
    KernelPlan p;
    ASSERT_TRUE(parseMetadata(m.dump(), p, error)) << error;
    EXPECT_EQ(p.variants[1].coarseSpeedup, 316);
    ASSERT_TRUE(cuda::makeVariantSpecs(p, vs, error)) << error;
    EXPECT_EQ(vs[1].coarseSpeedupPct, 316);
  }
  // Malformed fields: `key` of variant `index` set to `value`.
  struct Bad {
    const char *key;
    int index;
    json value;
    const char *message;
  } bad[] = {
      {"coarse_speedup", 1, 99,
       "variants[1].coarse_speedup must be an integer in [100, 10000]"},
      {"coarse_speedup", 1, 10001,
       "variants[1].coarse_speedup must be an integer in [100, 10000]"},
      {"coarse_speedup", 1, "316",
       "variants[1].coarse_speedup must be an integer in [100, 10000]"},
      {"coarse_speedup", 1, 1.5,
       "variants[1].coarse_speedup must be an integer in [100, 10000]"},
      {"coarse_speedup", 2, 316, "variants[2].coarse_speedup needs coarsen"},
      {"coarsen", 1, 2,
       "variants[1].coarsen must be three integers in [1, 65535]"},
      {"coarsen", 1, {2, 1},
       "variants[1].coarsen must be three integers in [1, 65535]"},
      {"coarsen", 1, {0, 1, 1},
       "variants[1].coarsen must be three integers in [1, 65535]"},
      {"coarsen", 1, {2, 1, 70000},
       "variants[1].coarsen must be three integers in [1, 65535]"},
      {"coarsen", 1, {2, "1", 1},
       "variants[1].coarsen must be three integers in [1, 65535]"},
      {"coarsen", 0, {2, 1, 1},
       "variants[0].coarsen cannot be combined with split_k"},
      {"split", 1, 1, "variants[1].split must be an integer in [2, 64]"},
      {"split", 1, 65, "variants[1].split must be an integer in [2, 64]"},
      {"split", 1, "2", "variants[1].split must be an integer in [2, 64]"},
      {"split", 2, 2,
       "variants[2].split needs coarsen and \"grid\": \"sms\""},
      {"split", 0, 2,
       "variants[0].split needs coarsen and \"grid\": \"sms\""},
  };
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.message);
    json m = wideMeta();
    m["variants"][b.index][b.key] = b.value;
    KernelPlan p;
    EXPECT_FALSE(parseMetadata(m.dump(), p, error));
    EXPECT_NE(error.find(b.message), std::string::npos) << error;
  }
}

TEST(TileShapeMock, ChoiceAndGrid) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  ::unsetenv("TILE_SPLIT_K");
  EnvGuard env(nullptr);
  KernelGuard k(load(cudaBundle(wideMeta()), "ffi"));
  ASSERT_TRUE(k.k);
  auto launch = [&](int64_t n) { launchAdd(k.k, n); };
  // 201 blocks (2 per SM): 101 wide tiles (one per SM), one CTA each.
  launch(64 * 201);
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90_wide");
  EXPECT_EQ(mock->grid[0], 101u);
  EXPECT_EQ(mock->grid[1], 1u);
  // 2000 blocks: 1000 wide tiles, one CTA per SM.
  launch(64 * 2000);
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90_wide");
  EXPECT_EQ(mock->grid[0], 132u);
  // 100 blocks: one wave of launch tiles, not split-K (> 66): persistent.
  launch(64 * 100);
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
  EXPECT_EQ(mock->grid[0], 100u);
  // 16 blocks with K = 1000: split-K (3 slices) comes first.
  launch(1000);
  EXPECT_STREQ(mock->last_function, "add_kernel_sm90_sk");
  {
    // "large": the wide variant wherever it runs, before split-K; 16
    // blocks -> 8 wide tiles.
    EnvGuard large("large");
    launch(1000);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90_wide");
    EXPECT_EQ(mock->grid[0], 8u);
    launch(64 * 100 + 1); // 101 blocks: 51 wide tiles
    EXPECT_EQ(mock->grid[0], 51u);
  }
  {
    EnvGuard user("user");
    launch(64 * 2000);
    EXPECT_STREQ(mock->last_function, "add_kernel_sm90");
    EXPECT_EQ(mock->grid[0], 132u);
  }
  EXPECT_EQ(mock->pushes, mock->pops);
}

// Two coarse variants (as a 64x64 launch tile gets: 128x256 tiles of 8
// blocks, 128x128 tiles of 4): the one of least estimated time runs.
TEST(TileShapeMock, FastestCoarseVariant) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  ::unsetenv("TILE_SPLIT_K");
  EnvGuard env(nullptr);
  json m = cudaAddMeta();
  m["variants"] = {coarseVariant("add_kernel_sm90_wide", 8, 271),
                  coarseVariant("add_kernel_sm90_wide128", 4, 217),
                  variant("add_kernel_sm90")};
  KernelGuard k(load(cudaBundle(m), "ffi"));
  ASSERT_TRUE(k.k);
  // 256 blocks (1000^3 in 64x64 blocks): 64 tiles of 4 blocks.
  expectRun(mock, k.k, 256, "add_kernel_sm90_wide128", 64);
  // 4096 blocks: 512 tiles of 8, one CTA per SM.
  expectRun(mock, k.k, 4096, "add_kernel_sm90_wide", 132);
  // 100 blocks: one wave of launch tiles.
  expectRun(mock, k.k, 100, "add_kernel_sm90", 100);
  {
    // "large": the first coarse variant wherever it runs.
    EnvGuard large("large");
    expectRun(mock, k.k, 256, "add_kernel_sm90_wide", 32);
  }
  EXPECT_EQ(mock->pushes, mock->pops);
}

// Split variants (as a 256x128 launch tile gets: 128x256 CTA tiles of the
// parts of two blocks, 128x128 ones of one part): one of them runs every
// launch, the one of least estimated time, over its own CTA tiles.
TEST(TileShapeMock, SplitVariants) {
  USE_MOCK(mock);
  ::unsetenv("TILE_DISABLE_VARIANTS");
  ::unsetenv("TILE_SPLIT_K");
  EnvGuard env(nullptr);
  json m = cudaAddMeta();
  m["variants"] = {coarseVariant("add_kernel_sm90_split", 2, 125, 2),
                  coarseVariant("add_kernel_sm90_split128", 1, 100, 2)};
  KernelGuard k(load(cudaBundle(m), "ffi"));
  ASSERT_TRUE(k.k);
  // 32 blocks: 64 CTA tiles of 128x128 (one wave) beat 32 of 128x256.
  expectRun(mock, k.k, 32, "add_kernel_sm90_split128", 64);
  // 512 blocks: 512 tiles of 128x256, one CTA per SM.
  expectRun(mock, k.k, 512, "add_kernel_sm90_split", 132);
  // 3 blocks: 4 against 6 CTA tiles, one wave: 128x128.
  expectRun(mock, k.k, 3, "add_kernel_sm90_split128", 6);
  for (const char *shape : {"user", "large"}) {
    // The first split variant for every launch.
    EnvGuard forced(shape);
    expectRun(mock, k.k, 32, "add_kernel_sm90_split", 32);
  }
  EXPECT_EQ(mock->pushes, mock->pops);
}

// The choice's inputs through the C API: coarsen, coarse_speedup, split.
TEST(TileShapeMock, RulesThroughTheCApi) {
  USE_MOCK(mock);
  json m = cudaAddMeta();
  m["variants"] = {coarseVariant("add_kernel_sm90_split", 2, 125, 2),
                  variant("add_kernel_sm90")};
  KernelGuard k(load(cudaBundle(m), "ffi"));
  ASSERT_TRUE(k.k);
  tile_variant_rules r;
  r.struct_size = sizeof(r);
  ASSERT_EQ(tile_kernel_variant_rules(k, 0, &r), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(r.coarsen[0], 2);
  EXPECT_EQ(r.coarsen[1], 1);
  EXPECT_EQ(r.coarsen[2], 1);
  EXPECT_EQ(r.coarse_speedup, 125);
  EXPECT_EQ(r.split, 2);
  EXPECT_EQ(r.max_rows, 0);
  EXPECT_EQ(r.num_row_params, 0);
  EXPECT_EQ(r.split_k_param, -1);
  ASSERT_EQ(tile_kernel_variant_rules(k, 1, &r), TILE_STATUS_OK);
  EXPECT_EQ(r.coarsen[0], 1);
  EXPECT_EQ(r.coarse_speedup, 0);
  EXPECT_EQ(r.split, 1);
}
