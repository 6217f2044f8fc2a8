//===- AbiTest.cpp - The ABI vocabulary: tables and struct layouts --------===//
//
// tile_abi.h and tile_targets.h are the one home of the statuses, check
// codes, dtypes, struct layouts, target kinds and backends. The compiler's
// native-wrapper generator reads the layouts with offsetof (and
// static_asserts the field widths it emits), the runtime and the Python
// package read the tables; these tests pin the tables' invariants and the
// layouts as C, C++ and docs/bundle.md see them.
//
//===----------------------------------------------------------------------===//
#include "AbiLayout.h"
#include "Common.h"

#include "tile/Runtime/tile_runtime.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>

using namespace tile::rt;

TEST(Abi, LayoutsMatchTheDocsInCAndCxx) {
  int i = 0;
#define TILE_X(s, f, off)                                                      \
  EXPECT_EQ(int64_t(offsetof(s, f)), off) << #s "." #f " (C++)";               \
  EXPECT_EQ(tile_test_c_offsets[i], off) << #s "." #f " (C)";                  \
  ++i;
  TILE_TEST_ABI_FIELDS(TILE_X)
#undef TILE_X
  i = 0;
#define TILE_X(s, size)                                                        \
  EXPECT_EQ(int64_t(sizeof(s)), size) << #s " (C++)";                          \
  EXPECT_EQ(tile_test_c_sizes[i], size) << #s " (C)";                          \
  ++i;
  TILE_TEST_ABI_SIZES(TILE_X)
#undef TILE_X
  EXPECT_EQ(TILE_MEMREF_WORDS(2) * 8, TILE_MEMREF_STRIDE_OFFSET(2, 2));
  EXPECT_EQ(TILE_MEMREF_SIZE_OFFSET(2, 1), 32);
  EXPECT_EQ(TILE_MEMREF_STRIDE_OFFSET(2, 0), 40);
}

TEST(Abi, DTypeTable) {
  std::set<std::string> names;
  std::set<int64_t> encodings;
  int row = 0;
#define TILE_X(id, name, code_, bits_, lanes_, ctype)                          \
  {                                                                            \
    SCOPED_TRACE(name);                                                        \
    EXPECT_EQ(row, TILE_DTYPE_##id);                                           \
    EXPECT_TRUE(names.insert(name).second) << "duplicate name";                \
    EXPECT_TRUE(                                                               \
        encodings.insert(TILE_PACK_DTYPE(code_, bits_, lanes_)).second)        \
        << "duplicate DLPack encoding";                                        \
    EXPECT_EQ(int64_t(sizeof(ctype)) * 8, int64_t(bits_) * (lanes_));          \
    EXPECT_EQ(tile_test_c_dtype_sizes[row], int64_t(sizeof(ctype)));           \
    DLDataType t{};                                                            \
    ASSERT_TRUE(tile_dtype_from_name(name, &t));                               \
    EXPECT_EQ(t.code, code_);                                                  \
    EXPECT_EQ(t.bits, bits_);                                                  \
    EXPECT_EQ(t.lanes, lanes_);                                                \
    EXPECT_STREQ(tile_dtype_name(t), name);                                    \
    DLDataType viaRuntime{};                                                   \
    EXPECT_TRUE(parseDType(name, viaRuntime));                                 \
    EXPECT_EQ(packDType(viaRuntime), packDType(t));                            \
    EXPECT_EQ(dtypeName(t), name);                                             \
    EXPECT_EQ(elementBytes(t), int64_t(sizeof(ctype)));                        \
    ++row;                                                                     \
  }
  TILE_DTYPES(TILE_X)
#undef TILE_X
  EXPECT_EQ(row, TILE_DTYPE_COUNT);

  DLDataType t{};
  EXPECT_FALSE(tile_dtype_from_name("float128", &t));
  EXPECT_FALSE(tile_dtype_from_name("", &t));
  EXPECT_EQ(tile_dtype_name(DLDataType{kDLFloat, 128, 1}), nullptr);
  EXPECT_EQ(tile_dtype_name(DLDataType{kDLFloat, 32, 4}), nullptr);
  EXPECT_EQ(dtypeName(DLDataType{kDLFloat, 32, 4}), "float32x4");
  EXPECT_EQ(dtypeName(DLDataType{5, 64, 1}), "dtype(code=5, bits=64, lanes=1)");
}

TEST(Abi, StatusAndCheckTables) {
  int next = 0;
#define TILE_X(id, value, meaning)                                             \
  EXPECT_EQ(value, next++) << "statuses are dense from 0";                     \
  EXPECT_STREQ(tile_status_name(TILE_STATUS_##id), #id);
  TILE_STATUSES(TILE_X)
#undef TILE_X
  EXPECT_STREQ(tile_status_name(static_cast<tile_status>(next)),
               "UNKNOWN_STATUS");
  next = 0;
#define TILE_X(id, value) EXPECT_EQ(value, next++) << #id;
  TILE_CHECKS(TILE_X)
#undef TILE_X
}

TEST(Abi, TargetAndBackendTables) {
  std::set<std::string> names;
  for (int i = 0; i < TILE_TARGET_COUNT; ++i) {
    auto t = static_cast<tile_target_kind>(i);
    const char *name = tile_target_name(t);
    ASSERT_NE(name, nullptr);
    EXPECT_TRUE(names.insert(name).second) << name;
    tile_target_kind parsed;
    ASSERT_TRUE(tile_target_parse(name, &parsed));
    EXPECT_EQ(parsed, t);
  }
  EXPECT_EQ(tile_target_name(TILE_TARGET_COUNT), nullptr);

  for (int i = 0; i < TILE_BACKEND_COUNT; ++i) {
    auto b = static_cast<tile_backend>(i);
    const char *name = tile_backend_name(b);
    ASSERT_NE(name, nullptr);
    SCOPED_TRACE(name);
    EXPECT_TRUE(names.insert(name).second) << "backend and target names differ";
    tile_backend parsed;
    ASSERT_TRUE(tile_backend_parse(name, &parsed));
    EXPECT_EQ(parsed, b);
    EXPECT_NE(tile_backend_targets(b), 0u) << "runs some target";
    EXPECT_EQ(tile_backend_targets(b) & ~TILE_TARGETS_ALL, 0u);
    if (tile_backend_flags(b) & TILE_BACKEND_COMPILED)
      EXPECT_TRUE(tile_backend_flags(b) & TILE_BACKEND_IMPLEMENTED);
  }
  EXPECT_EQ(tile_backend_targets(TILE_BACKEND_AUTO), TILE_TARGETS_ALL);
  // Every target has an explicit backend (what "auto" picks among).
  for (int t = 0; t < TILE_TARGET_COUNT; ++t) {
    int explicitBackends = 0;
    for (int b = TILE_BACKEND_AUTO + 1; b < TILE_BACKEND_COUNT; ++b)
      explicitBackends += tile_backend_runs(static_cast<tile_backend>(b),
                                            static_cast<tile_target_kind>(t));
    EXPECT_GT(explicitBackends, 0)
        << tile_target_name(static_cast<tile_target_kind>(t));
  }
  tile_backend b;
  tile_target_kind t;
  EXPECT_FALSE(tile_backend_parse("cuda", &b));
  EXPECT_FALSE(tile_backend_parse("", &b));
  EXPECT_FALSE(tile_target_parse("ffi", &t));
}
