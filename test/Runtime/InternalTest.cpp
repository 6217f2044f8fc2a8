//===- InternalTest.cpp - White-box tests: grid expressions, thread pool --===//
#include "GridExpr.h"
#include "Cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

using namespace tile::rt;

namespace {

int64_t evalOp(GridOp op, int64_t a, int64_t b) {
  GridExpr e;
  e.push(GridOp::Const, a);
  e.push(GridOp::Const, b);
  e.push(op);
  EXPECT_TRUE(e.finalize());
  int64_t out = 0, sym = 0;
  EXPECT_TRUE(e.eval(nullptr, nullptr, out, sym));
  return out;
}

} // namespace

TEST(GridExpr, Ops) {
  EXPECT_EQ(evalOp(GridOp::Add, 5, 7), 12);
  EXPECT_EQ(evalOp(GridOp::Sub, 5, 7), -2);
  EXPECT_EQ(evalOp(GridOp::Mul, -3, 7), -21);
  EXPECT_EQ(evalOp(GridOp::DivS, -7, 2), -3);
  EXPECT_EQ(evalOp(GridOp::DivU, 7, 2), 3);
  EXPECT_EQ(evalOp(GridOp::CeilDivU, 1000, 64), 16);
  EXPECT_EQ(evalOp(GridOp::CeilDivU, 1024, 64), 16);
  EXPECT_EQ(evalOp(GridOp::CeilDivU, 0, 64), 0);
  EXPECT_EQ(evalOp(GridOp::CeilDivS, 7, 2), 4);
  EXPECT_EQ(evalOp(GridOp::CeilDivS, -7, 2), -3);
  EXPECT_EQ(evalOp(GridOp::CeilDivS, -7, -2), 4);
  EXPECT_EQ(evalOp(GridOp::RemS, -7, 3), -1);
  EXPECT_EQ(evalOp(GridOp::RemU, 7, 3), 1);
  EXPECT_EQ(evalOp(GridOp::MinS, -1, 3), -1);
  EXPECT_EQ(evalOp(GridOp::MinU, -1, 3), 3); // -1 is huge unsigned
  EXPECT_EQ(evalOp(GridOp::MaxU, -1, 3), -1);
  EXPECT_EQ(evalOp(GridOp::MaxS, -1, 3), 3);
  EXPECT_EQ(evalOp(GridOp::DivS, INT64_MIN, -1), INT64_MIN); // wraps
  // Division / remainder by zero give 0 (an empty grid), as in the wrappers.
  for (GridOp op : {GridOp::DivU, GridOp::DivS, GridOp::CeilDivU,
                    GridOp::CeilDivS, GridOp::RemU, GridOp::RemS})
    EXPECT_EQ(evalOp(op, 7, 0), 0);
}

TEST(GridExpr, SymbolsScalarsAndErrors) {
  GridExpr e; // (N + s3) ceildiv 4
  e.push(GridOp::Sym, 1);
  e.push(GridOp::Scalar, 3);
  e.push(GridOp::Add);
  e.push(GridOp::Const, 4);
  e.push(GridOp::CeilDivU);
  ASSERT_TRUE(e.finalize());
  int64_t syms[2] = {-1, 10}, scalars[4] = {0, 0, 0, 3}, out = 0, sym = 0;
  ASSERT_TRUE(e.eval(syms, scalars, out, sym));
  EXPECT_EQ(out, 4);

  GridExpr u;
  u.push(GridOp::Sym, 0);
  ASSERT_TRUE(u.finalize());
  EXPECT_FALSE(u.eval(syms, scalars, out, sym));
  EXPECT_EQ(sym, 0);

  GridExpr bad; // operator without operands
  bad.push(GridOp::Add);
  EXPECT_FALSE(bad.finalize());
}

namespace {
std::vector<std::atomic<int>> *gHits;
void countBlocks(void **, int64_t begin, int64_t end, int64_t, int64_t,
                 int64_t) {
  for (int64_t b = begin; b < end; ++b)
    (*gHits)[b].fetch_add(1);
}
} // namespace

TEST(ThreadPool, EveryBlockExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t total : {1, 2, 7, 64, 1000, 4099}) {
      std::vector<std::atomic<int>> hits(total);
      gHits = &hits;
      pool.run(countBlocks, nullptr, total, 1, 1);
      for (int64_t b = 0; b < total; ++b)
        ASSERT_EQ(hits[b].load(), 1) << threads << " threads, block " << b;
    }
  }
}

TEST(ThreadPool, ConcurrentCallers) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(8 * 500);
  gHits = &hits;
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t)
    callers.emplace_back([&] {
      for (int i = 0; i < 100; ++i)
        pool.run(countBlocks, nullptr, 8 * 500, 1, 1);
    });
  for (auto &c : callers)
    c.join();
  for (auto &h : hits)
    ASSERT_EQ(h.load(), 800);
}
