//===- LaunchTest.cpp - Launch correctness, outputs, allocators, threads --===//
#include "TestUtil.h"
#include "tile/Runtime/Runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

using namespace tiletest;

class LaunchBoth : public ::testing::TestWithParam<const char *> {};
INSTANTIATE_TEST_SUITE_P(Backends, LaunchBoth,
                         ::testing::Values("ffi", "native"));

TEST_P(LaunchBoth, AddProvidedOutput) {
  KernelGuard k(load(addBundle(), GetParam()));
  ASSERT_STREQ(tile_kernel_backend(k), GetParam());
  for (int64_t n : {0, 1, 63, 64, 65, 1000, 100003}) {
    HostTensor a({n}), b({n}), c({n}, -1.0f);
    for (int64_t i = 0; i < n; ++i)
      a[i] = float(i), b[i] = 0.5f * float(i);
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(c.dl())};
    int64_t before = blocksRun();
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
        << tile_last_error();
    EXPECT_EQ(blocksRun() - before, (n + 63) / 64);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(c[i], 1.5f * float(i)) << "n=" << n << " i=" << i;
  }
}

TEST_P(LaunchBoth, AddOmittedOutput) {
  KernelGuard k(load(addBundle(), GetParam()));
  HostTensor a({100}, 1.0f), b({100}, 2.0f);
  DLManagedTensor *out[1] = {nullptr};
  tile_outputs outs{out, 1, -1};
  // Short form: only the inputs.
  tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs), TILE_STATUS_OK)
      << tile_last_error();
  ASSERT_EQ(outs.count, 1);
  ASSERT_NE(out[0], nullptr);
  const DLTensor &c = out[0]->dl_tensor;
  EXPECT_EQ(c.ndim, 1);
  EXPECT_EQ(c.shape[0], 100);
  EXPECT_EQ(c.device.device_type, kDLCPU);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data) % 64, 0u);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(static_cast<float *>(c.data)[i], 3.0f);
  out[0]->deleter(out[0]);

  // Full form with TILE_ARG_NONE, and with a NULL tensor.
  for (tile_arg omitted : {tile_arg_none(), tile_arg_tensor(nullptr)}) {
    tile_arg full[3] = {args[0], args[1], omitted};
    out[0] = nullptr;
    ASSERT_EQ(tile_kernel_launch(k, full, 3, nullptr, &outs), TILE_STATUS_OK)
        << tile_last_error();
    ASSERT_NE(out[0], nullptr);
    EXPECT_EQ(static_cast<float *>(out[0]->dl_tensor.data)[99], 3.0f);
    out[0]->deleter(out[0]);
  }

  // Provided output: outs reports it as not allocated.
  HostTensor c2({100});
  tile_arg full[3] = {args[0], args[1], tile_arg_tensor(c2.dl())};
  out[0] = reinterpret_cast<DLManagedTensor *>(1);
  ASSERT_EQ(tile_kernel_launch(k, full, 3, nullptr, &outs), TILE_STATUS_OK);
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(c2[5], 3.0f);
}

TEST_P(LaunchBoth, MatMul) {
  KernelGuard k(load(mmBundle(), GetParam()));
  const int64_t M = 37, K = 19, N = 50;
  HostTensor a({M, K}), b({K, N});
  for (int64_t i = 0; i < M * K; ++i)
    a[i] = float(i % 7) - 3.0f;
  for (int64_t i = 0; i < K * N; ++i)
    b[i] = float(i % 5) * 0.25f;
  DLManagedTensor *out[1] = {nullptr};
  tile_outputs outs{out, 1, 0};
  tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
  int64_t before = blocksRun();
  ASSERT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(blocksRun() - before, 4 * 3); // ceil(50/16) x ceil(37/16)
  const float *c = static_cast<const float *>(out[0]->dl_tensor.data);
  EXPECT_EQ(out[0]->dl_tensor.shape[0], M);
  EXPECT_EQ(out[0]->dl_tensor.shape[1], N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float ref = 0;
      for (int64_t kk = 0; kk < K; ++kk)
        ref += a[i * K + kk] * b[kk * N + j];
      ASSERT_FLOAT_EQ(c[i * N + j], ref);
    }
  out[0]->deleter(out[0]);
}

TEST_P(LaunchBoth, ConcurrentLaunchesFromEightThreads) {
  KernelGuard k(load(addBundle(), GetParam()));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 200; ++iter) {
        int64_t n = 1 + (t * 997 + iter * 131) % 5000;
        HostTensor a({n}), b({n});
        for (int64_t i = 0; i < n; ++i)
          a[i] = float(t), b[i] = float(iter);
        DLManagedTensor *out[1] = {nullptr};
        tile_outputs outs{out, 1, 0};
        tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
        if (tile_kernel_launch(k, args, 2, nullptr, &outs) != TILE_STATUS_OK) {
          ++failures;
          continue;
        }
        const float *c = static_cast<const float *>(out[0]->dl_tensor.data);
        for (int64_t i = 0; i < n; ++i)
          if (c[i] != float(t + iter)) {
            ++failures;
            break;
          }
        out[0]->deleter(out[0]);
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

namespace {

struct CountingAllocator {
  std::atomic<int> allocs{0};
  std::atomic<int> frees{0};
  bool returnNull = false;
  bool wrongShape = false;
  tile_allocator raw{this, &CountingAllocator::alloc};

  struct Block {
    DLManagedTensor mt;
    int64_t shape[8];
    CountingAllocator *owner;
  };
  static DLManagedTensor *alloc(void *ctx, DLDevice device, DLDataType dtype,
                                int32_t ndim, const int64_t *shape, void *) {
    auto *self = static_cast<CountingAllocator *>(ctx);
    if (self->returnNull)
      return nullptr;
    self->allocs++;
    auto *b = new Block{};
    b->owner = self;
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; ++d)
      n *= (b->shape[d] = shape[d] + (self->wrongShape ? 1 : 0));
    b->mt.dl_tensor = {std::calloc(size_t(n ? n : 1), dtype.bits / 8),
                       device, ndim, dtype, b->shape, nullptr, 0};
    b->mt.manager_ctx = b;
    b->mt.deleter = [](DLManagedTensor *self) {
      auto *blk = static_cast<Block *>(self->manager_ctx);
      blk->owner->frees++;
      std::free(self->dl_tensor.data);
      delete blk;
    };
    return &b->mt;
  }
};

} // namespace

TEST_P(LaunchBoth, CustomAllocators) {
  KernelGuard k(load(addBundle(), GetParam()));
  HostTensor a({10}, 1.0f), b({10}, 2.0f);
  tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
  DLManagedTensor *out[1] = {nullptr};
  tile_outputs outs{out, 1, 0};

  CountingAllocator global, local;
  tile_set_default_allocator(&global.raw);
  ASSERT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs), TILE_STATUS_OK);
  EXPECT_EQ(global.allocs.load(), 1);
  EXPECT_EQ(static_cast<float *>(out[0]->dl_tensor.data)[9], 3.0f);
  out[0]->deleter(out[0]);
  EXPECT_EQ(global.frees.load(), 1);

  // A per-kernel allocator wins over the global one.
  ASSERT_EQ(tile_set_allocator(k, &local.raw), TILE_STATUS_OK);
  ASSERT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs), TILE_STATUS_OK);
  EXPECT_EQ(local.allocs.load(), 1);
  EXPECT_EQ(global.allocs.load(), 1);
  out[0]->deleter(out[0]);

  // Failures: NULL -> OUT_OF_MEMORY; a wrong tensor is rejected and freed.
  int64_t before = blocksRun();
  local.returnNull = true;
  EXPECT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs),
            TILE_STATUS_OUT_OF_MEMORY);
  EXPECT_STREQ(tile_last_error(),
               "cannot allocate output 'C' (#2) with shape [10]");
  EXPECT_EQ(outs.count, 0);
  local.returnNull = false;
  local.wrongShape = true;
  EXPECT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(), "the allocator returned shape [11] instead "
                                  "of [10] for output 'C' (#2)");
  EXPECT_EQ(local.allocs.load(), local.frees.load());
  EXPECT_EQ(blocksRun(), before);

  ASSERT_EQ(tile_set_allocator(k, nullptr), TILE_STATUS_OK);
  tile_set_default_allocator(nullptr);
  ASSERT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs), TILE_STATUS_OK);
  EXPECT_EQ(global.allocs.load(), 1); // built-in allocator again
  out[0]->deleter(out[0]);
}

TEST_P(LaunchBoth, WrittenParamsMayNotOverlap) {
  const int64_t n = 100;
  auto message = [] { return std::string(tile_last_error()); };
  // C = A + B with C written: C aliasing A (or B) is refused on both
  // backends before anything runs; the inputs may alias each other.
  {
    KernelGuard k(load(addBundle(), GetParam()));
    HostTensor a({n}, 1.0f), b({n}, 2.0f), big({2 * n}, 1.0f);
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(a.dl())};
    int64_t before = blocksRun();
    EXPECT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(message(), "kernel 'add': argument 'C' (#2), which the kernel "
                         "writes, overlaps argument 'A' (#0): pass distinct "
                         "memory (the kernel does not declare 'C' "
                         "tile.inplace)");
    EXPECT_EQ(blocksRun(), before);
    EXPECT_EQ(a[0], 1.0f);
    // A partial overlap: C is the second half of a buffer whose first half
    // (shifted by one element) is B.
    DLTensor shifted = *big.dl(), tail = *big.dl();
    int64_t nshape = n;
    shifted.shape = &nshape;
    tail.shape = &nshape;
    shifted.byte_offset = 4 * (n - 1);
    tail.byte_offset = 0;
    tile_arg partial[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(&shifted),
                           tile_arg_tensor(&tail)};
    EXPECT_EQ(tile_kernel_launch(k, partial, 3, nullptr, nullptr),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(message(), "kernel 'add': argument 'C' (#2), which the kernel "
                         "writes, overlaps argument 'B' (#1): pass distinct "
                         "memory (a partial overlap is never allowed)");
    // Read-only params may share memory; empty tensors overlap nothing.
    HostTensor c({n});
    tile_arg same[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(a.dl()),
                        tile_arg_tensor(c.dl())};
    ASSERT_EQ(tile_kernel_launch(k, same, 3, nullptr, nullptr),
              TILE_STATUS_OK)
        << message();
    EXPECT_EQ(c[7], 2.0f);
    // An empty launch runs nothing, so it is never refused (the native
    // wrapper does not even call back for it).
    HostTensor e({0});
    tile_arg empty[3] = {tile_arg_tensor(e.dl()), tile_arg_tensor(e.dl()),
                         tile_arg_tensor(e.dl())};
    EXPECT_EQ(tile_kernel_launch(k, empty, 3, nullptr, nullptr),
              TILE_STATUS_OK)
        << message();
  }
  // With C declared inplace, C may be exactly A (elementwise A += B), but
  // still not a part of it.
  json meta = addMeta();
  meta["params"][2]["inplace"] = true;
  KernelGuard k(load(makeBundle(meta, TILE_TEST_ADD_SO), GetParam()));
  HostTensor a({n}, 1.0f), b({n}, 2.0f);
  tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                      tile_arg_tensor(a.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
      << message();
  EXPECT_EQ(a[0], 3.0f);
  EXPECT_EQ(a[n - 1], 3.0f);
  DLTensor head = *a.dl();
  int64_t half = n / 2;
  head.shape = &half;
  HostTensor b2({half}, 2.0f), a2({half});
  tile_arg sub2[3] = {tile_arg_tensor(a2.dl()), tile_arg_tensor(b2.dl()),
                      tile_arg_tensor(&head)};
  ASSERT_EQ(tile_kernel_launch(k, sub2, 3, nullptr, nullptr), TILE_STATUS_OK)
      << message();
  tile_arg overlapA[3] = {tile_arg_tensor(&head), tile_arg_tensor(b2.dl()),
                          tile_arg_tensor(&head)};
  ASSERT_EQ(tile_kernel_launch(k, overlapA, 3, nullptr, nullptr),
            TILE_STATUS_OK)
      << message();
  DLTensor head1 = head;
  head1.byte_offset = 4;
  tile_arg shifted[3] = {tile_arg_tensor(&head), tile_arg_tensor(b2.dl()),
                         tile_arg_tensor(&head1)};
  EXPECT_EQ(tile_kernel_launch(k, shifted, 3, nullptr, nullptr),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(message(), "kernel 'add': argument 'C' (#2), which the kernel "
                       "writes, overlaps argument 'A' (#0): pass distinct "
                       "memory (a partial overlap is never allowed)");
}

TEST(Launch, ScalarsStaticDimsAndInPlaceOutput) {
  KernelGuard k(load(axpyBundle()));
  ASSERT_STREQ(tile_kernel_backend(k), "ffi");
  const int64_t n = 45;
  HostTensor x({n, 4}), y({n, 4}, 1.0f);
  for (int64_t i = 0; i < n * 4; ++i)
    x[i] = float(i);
  // alpha given as an int (exactly representable: accepted), rows 4.
  tile_arg args[5] = {tile_arg_int(2), tile_arg_tensor(x.dl()),
                      tile_arg_tensor(y.dl()), tile_arg_int(4),
                      tile_arg_int(10)};
  int64_t before = blocksRun();
  ASSERT_EQ(tile_kernel_launch(k, args, 5, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(blocksRun() - before, 12); // ceil(45 / 4)
  for (int64_t i = 0; i < n * 4; ++i)
    ASSERT_EQ(y[i], 1.0f + 2.0f * float(i) + 10.0f);
  args[0] = tile_arg_float(-0.5);
  ASSERT_EQ(tile_kernel_launch(k, args, 5, nullptr, nullptr), TILE_STATUS_OK);
  EXPECT_EQ(y[4], 1.0f + 8.0f + 10.0f - 2.0f + 10.0f);
}

TEST(Launch, EmptyGridIsANoOp) {
  KernelGuard k(load(axpyBundle()));
  HostTensor x({0, 4}), y({0, 4});
  tile_arg args[5] = {tile_arg_float(1), tile_arg_tensor(x.dl()),
                      tile_arg_tensor(y.dl()), tile_arg_int(4),
                      tile_arg_int(0)};
  int64_t before = blocksRun();
  EXPECT_EQ(tile_kernel_launch(k, args, 5, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(blocksRun(), before);
}

TEST(Launch, CppWrapper) {
  std::string b = addBundle();
  tile::Kernel k = tile::Kernel::fromMemory(b.data(), b.size());
  EXPECT_EQ(k.name(), "add");
  EXPECT_EQ(k.backend(), "native");
  EXPECT_EQ(k.outIdx(), std::vector<int>{2});
  tile::ParamInfo p = k.param(1);
  EXPECT_EQ(p.name, "B");
  EXPECT_EQ(p.dims, std::vector<std::string>{"N"});
  EXPECT_EQ(p.access, TILE_ACCESS_READ);
  EXPECT_EQ(k.param(2).access, TILE_ACCESS_WRITE);
  EXPECT_FALSE(k.param(2).inplace);
  EXPECT_EQ(k.section("mlir"), "func.func @add() { return }");
  HostTensor a({8}, 1.0f), bb({8}, 2.0f);
  std::vector<tile::Tensor> outs = k.launch({a.dl(), bb.dl()});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(static_cast<float *>(outs[0]->dl_tensor.data)[7], 3.0f);
  try {
    k.launch({a.dl(), 3});
    FAIL() << "expected tile::Error";
  } catch (const tile::Error &e) {
    EXPECT_EQ(e.status(), TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "argument 'B' (#1): expected a tensor, got an int");
  }
  EXPECT_THROW(tile::Kernel::load("/nonexistent"), tile::Error);
  tile::Kernel moved = std::move(k);
  EXPECT_FALSE(k);
  EXPECT_TRUE(moved);
}

TEST(Launch, UnnamedStaticDims) {
  // The compiler names static dims "" when the source gives no name.
  json meta = axpyMeta();
  meta["symbols"] = {"N"};
  meta["params"][1]["dims"] = {"N", ""};
  meta["params"][2]["dims"] = {"N", ""};
  KernelGuard k(load(makeBundle(meta, TILE_TEST_AXPY_SO)));
  HostTensor x({3, 4}, 1.0f), y({3, 4}), bad({3, 5});
  tile_arg args[5] = {tile_arg_float(2), tile_arg_tensor(x.dl()),
                      tile_arg_tensor(y.dl()), tile_arg_int(1),
                      tile_arg_int(0)};
  ASSERT_EQ(tile_kernel_launch(k, args, 5, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_EQ(y[11], 2.0f);
  args[2] = tile_arg_tensor(bad.dl());
  EXPECT_EQ(tile_kernel_launch(k, args, 5, nullptr, nullptr),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(), "argument 'Y' (#2): dim 1 is 5 but must be 4");
  tile_param_info p;
  ASSERT_EQ(tile_kernel_param(k, 1, &p), TILE_STATUS_OK);
  EXPECT_STREQ(p.dims[1], "");
}
