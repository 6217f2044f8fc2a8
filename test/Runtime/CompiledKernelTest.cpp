//===- CompiledKernelTest.cpp - the runtime on bundles tilec compiled -----===//
//
// The fixtures elsewhere are hand-written; here the bundle comes from tilec
// (examples/elementwise_add.mlir, compiled at build time), so the native
// backend runs the compiler-generated wrapper. Every bad input of the table
// must give the same status and message on both backends, and never launch:
// the output buffer keeps its poison.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace tiletest;

namespace {

std::string compiledBundle() { return readFile(TILE_TEST_COMPILED_ADD); }

constexpr float kPoison = -12345.0f;

struct Case {
  const char *name;
  // Edits the (valid) arguments A, B, C into a bad call.
  std::function<void(HostTensor &a, HostTensor &b, HostTensor &c,
                     std::vector<tile_arg> &args)>
      corrupt;
  const char *message; // substring expected in tile_last_error()
};

std::vector<Case> badInputs() {
  return {
      {"wrong dtype",
       [](HostTensor &a, HostTensor &, HostTensor &, std::vector<tile_arg> &) {
         a.t.dtype = {kDLFloat, 16, 1};
       },
       "argument 'A' (#0): expected dtype float32, got float16"},
      {"wrong rank",
       [](HostTensor &, HostTensor &b, HostTensor &, std::vector<tile_arg> &) {
         b.t.ndim = 2;
       },
       "argument 'B' (#1): expected rank 1, got 2"},
      {"symbol mismatch",
       [](HostTensor &, HostTensor &b, HostTensor &, std::vector<tile_arg> &) {
         b.shape[0] = 999;
       },
       "argument 'B' (#1)"},
      {"null tensor",
       [](HostTensor &, HostTensor &, HostTensor &, std::vector<tile_arg> &args) {
         args[1] = tile_arg_tensor(nullptr);
       },
       "argument 'B' (#1)"},
      {"null data",
       [](HostTensor &a, HostTensor &, HostTensor &, std::vector<tile_arg> &) {
         a.t.data = nullptr;
       },
       "argument 'A' (#0)"},
      {"wrong device",
       [](HostTensor &, HostTensor &, HostTensor &c, std::vector<tile_arg> &) {
         c.t.device = {kDLCUDA, 0};
       },
       "argument 'C' (#2)"},
      {"non-contiguous",
       [](HostTensor &a, HostTensor &, HostTensor &, std::vector<tile_arg> &) {
         a.strides = {2};
         a.t.strides = a.strides.data();
       },
       "argument 'A' (#0)"},
      {"misaligned",
       [](HostTensor &a, HostTensor &, HostTensor &, std::vector<tile_arg> &) {
         a.t.byte_offset = 2;
       },
       "argument 'A' (#0)"},
  };
}

class CompiledKernel : public ::testing::TestWithParam<const char *> {};

TEST_P(CompiledKernel, ComputesElementwiseAdd) {
  KernelGuard k(load(compiledBundle(), GetParam()));
  ASSERT_NE(k.k, nullptr);
  EXPECT_STREQ(tile_kernel_backend(k), GetParam());
  const int64_t n = 3000; // not a multiple of the 1024-element block
  HostTensor a({n}), b({n}), c({n}, kPoison);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = std::sin(float(i));
    b[i] = float(i % 7) - 3.0f;
  }
  std::vector<tile_arg> args = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                                tile_arg_tensor(c.dl())};
  ASSERT_EQ(tile_kernel_launch(k, args.data(), 3, nullptr, nullptr),
            TILE_STATUS_OK)
      << tile_last_error();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
}

TEST_P(CompiledKernel, AllocatesOmittedOutput) {
  KernelGuard k(load(compiledBundle(), GetParam()));
  const int64_t n = 17;
  HostTensor a({n}, 1.5f), b({n}, 2.0f);
  std::vector<tile_arg> args = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
  DLManagedTensor *out[1] = {nullptr};
  tile_outputs outs{out, 1, 0};
  ASSERT_EQ(tile_kernel_launch(k, args.data(), 2, nullptr, &outs),
            TILE_STATUS_OK)
      << tile_last_error();
  ASSERT_EQ(outs.count, 1);
  ASSERT_NE(out[0], nullptr);
  EXPECT_EQ(out[0]->dl_tensor.shape[0], n);
  auto *data = static_cast<float *>(out[0]->dl_tensor.data);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(data[i], 3.5f);
  out[0]->deleter(out[0]);
}

INSTANTIATE_TEST_SUITE_P(Backends, CompiledKernel,
                         ::testing::Values("ffi", "native"));

TEST(CompiledKernelBadInput, SameErrorOnBothBackendsAndNoLaunch) {
  KernelGuard ffi(load(compiledBundle(), "ffi"));
  KernelGuard native(load(compiledBundle(), "native"));
  for (const Case &bad : badInputs()) {
    std::string messages[2];
    tile_status statuses[2];
    tile_kernel_t kernels[2] = {ffi, native};
    for (int backend = 0; backend < 2; ++backend) {
      HostTensor a({64}, 1.0f), b({64}, 2.0f), c({64}, kPoison);
      std::vector<tile_arg> args = {tile_arg_tensor(a.dl()),
                                    tile_arg_tensor(b.dl()),
                                    tile_arg_tensor(c.dl())};
      bad.corrupt(a, b, c, args);
      statuses[backend] =
          tile_kernel_launch(kernels[backend], args.data(), 3, nullptr, nullptr);
      messages[backend] = tile_last_error();
      for (int64_t i = 0; i < 64; ++i)
        ASSERT_EQ(c[i], kPoison) << bad.name << ": the kernel ran";
    }
    EXPECT_EQ(statuses[0], TILE_STATUS_INVALID_ARGUMENT) << bad.name;
    EXPECT_EQ(statuses[0], statuses[1]) << bad.name;
    EXPECT_EQ(messages[0], messages[1]) << bad.name;
    EXPECT_NE(messages[0].find(bad.message), std::string::npos)
        << bad.name << ": " << messages[0];
  }
}

/// The compiled bundle with its metadata replaced by `edit(metadata)` (CRCs
/// recomputed: the bundle is well-formed, only its content disagrees).
std::string withEditedMetadata(const std::function<void(json &)> &edit) {
  std::string bytes = compiledBundle(), error;
  tile::bundle::Reader reader;
  EXPECT_TRUE(tile::bundle::read(bytes.data(), bytes.size(), reader, error))
      << error;
  std::vector<tile::bundle::Section> sections;
  for (const tile::bundle::SectionView &s : reader.sections) {
    std::string data(s.bytes());
    if (s.name == "metadata") {
      json meta = json::parse(data);
      edit(meta);
      data = meta.dump(1);
    }
    sections.push_back({std::string(s.name), std::move(data)});
  }
  return tile::bundle::write(sections);
}

TEST(CompiledKernelBadBundle, EditedOutputDtypeIsRefused) {
  // float32 -> int8 on C: the ffi backend would allocate C at 1 byte per
  // element and the kernel write 4 (a heap overflow). tilec baked the
  // metadata hash into host.so: the load is refused instead.
  std::string bundle = withEditedMetadata(
      [](json &m) { m["params"][2]["dtype"] = "int8"; });
  for (const char *backend : {"auto", "ffi", "native"}) {
    tile_kernel_t k = nullptr;
    EXPECT_EQ(tile_kernel_load_memory(bundle.data(), bundle.size(), backend, &k),
              TILE_STATUS_BUNDLE_ERROR);
    EXPECT_EQ(k, nullptr);
    EXPECT_EQ(std::string(tile_last_error())
                  .rfind("bundle metadata does not match its code: host.so of "
                         "kernel 'elementwise_add' was compiled from metadata "
                         "with hash ",
                         0),
              0u)
        << tile_last_error();
  }
}

TEST(CompiledKernelBadBundle, EntryOfAnotherRoleAndTruncatedCode) {
  std::string swapped = withEditedMetadata([](json &m) {
    m["entry"]["blocks"] = "elementwise_add__tile_native";
  });
  tile_kernel_t k = nullptr;
  EXPECT_EQ(tile_kernel_load_memory(swapped.data(), swapped.size(), "ffi", &k),
            TILE_STATUS_BUNDLE_ERROR);
  EXPECT_NE(std::string(tile_last_error()).find("must name a '__tile_blocks'"),
            std::string::npos)
      << tile_last_error();
  // host.so cut short: refused before dlopen (SIGBUS / SIGSEGV otherwise).
  std::string bytes = compiledBundle(), error;
  tile::bundle::Reader reader;
  ASSERT_TRUE(tile::bundle::read(bytes.data(), bytes.size(), reader, error));
  std::string meta(reader.find("metadata")->bytes()),
      so(reader.find("host.so")->bytes());
  for (size_t keep : {so.size() - 1, so.size() * 3 / 4, so.size() / 2, size_t(100)}) {
    std::string cut = tile::bundle::write(
        {{"metadata", meta}, {"host.so", so.substr(0, keep)}});
    EXPECT_EQ(tile_kernel_load_memory(cut.data(), cut.size(), "auto", &k),
              TILE_STATUS_BUNDLE_ERROR);
    EXPECT_EQ(std::string(tile_last_error()).rfind("section 'host.so' ", 0), 0u)
        << tile_last_error();
  }
}

} // namespace
