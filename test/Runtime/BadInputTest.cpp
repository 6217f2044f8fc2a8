//===- BadInputTest.cpp - Rejected launches: status, message, no launch ---===//
//
// Every bad input runs through both backends: the ffi backend's metadata
// interpreter and the fixture's hand-written native wrapper must report the
// same status and the same text, and neither may run a single block.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>

using namespace tiletest;

namespace {

/// mm inputs (A[M,K], B[K,N], C[M,N]) that a case then breaks.
struct MmArgs {
  HostTensor a{{8, 33}}, b{{33, 4}}, c{{8, 4}};
  int64_t strides[2] = {0, 0};
  std::vector<tile_arg> args() {
    return {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
            tile_arg_tensor(c.dl())};
  }
};

struct BadCase {
  const char *what;
  std::function<std::vector<tile_arg>(MmArgs &)> make;
  tile_status status;
  std::string message;
};

struct Outcome {
  tile_status status;
  std::string message;
};

Outcome launchMm(tile_kernel_t k, const BadCase &c) {
  MmArgs m;
  std::vector<tile_arg> args = c.make(m);
  DLManagedTensor *out[1] = {nullptr};
  tile_outputs outs{out, 1, 0};
  tile_status st = tile_kernel_launch(k, args.data(), int32_t(args.size()),
                                      nullptr, &outs);
  EXPECT_EQ(out[0], nullptr) << "no output may escape a failed launch";
  EXPECT_EQ(outs.count, 0);
  return {st, st == TILE_STATUS_OK ? "" : tile_last_error()};
}

std::vector<BadCase> mmCases() {
  using V = std::vector<tile_arg>;
  return {
      {"null tensor",
       [](MmArgs &m) { V v = m.args(); v[0] = tile_arg_tensor(nullptr); return v; },
       TILE_STATUS_INVALID_ARGUMENT, "argument 'A' (#0): tensor is NULL"},
      {"wrong device type",
       [](MmArgs &m) { m.a.t.device.device_type = kDLCUDA; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'A' (#0): expected a cpu tensor, got a cuda tensor"},
      {"device id mismatch",
       [](MmArgs &m) { m.b.t.device.device_id = 1; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'B' (#1): is on device 1, but the first tensor argument is "
       "on device 0"},
      {"wrong dtype",
       [](MmArgs &m) { m.a.t.dtype = {kDLFloat, 16, 1}; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'A' (#0): expected dtype float32, got float16"},
      {"exotic dtype",
       [](MmArgs &m) { m.c.t.dtype = {kDLComplex, 64, 1}; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'C' (#2): expected dtype float32, got dtype(code=5, "
       "bits=64, lanes=1)"},
      {"wrong rank",
       [](MmArgs &m) {
         static int64_t shape3[3] = {8, 33, 1};
         m.a.t.ndim = 3;
         m.a.t.shape = shape3;
         return m.args();
       },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'A' (#0): expected rank 2, got 3"},
      {"negative dim",
       [](MmArgs &m) { m.b.shape[1] = -4; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT, "argument 'B' (#1): dim 1 is negative (-4)"},
      {"symbol mismatch",
       [](MmArgs &m) { m.b.shape[0] = 17; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'B' (#1): dim 0 is 17 but symbol 'K' was bound to 33 by an "
       "earlier argument"},
      {"output symbol mismatch",
       [](MmArgs &m) { m.c.shape[1] = 5; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'C' (#2): dim 1 is 5 but symbol 'N' was bound to 4 by an "
       "earlier argument"},
      {"non-contiguous",
       [](MmArgs &m) {
         m.strides[0] = 5, m.strides[1] = 1;
         m.c.t.strides = m.strides;
         return m.args();
       },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'C' (#2): not contiguous: stride of dim 0 is 5, expected 4"},
      {"transposed",
       [](MmArgs &m) {
         m.strides[0] = 1, m.strides[1] = 8;
         m.c.t.strides = m.strides;
         return m.args();
       },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'C' (#2): not contiguous: stride of dim 1 is 8, expected 1"},
      {"symbol checked before a later negative dim",
       [](MmArgs &m) { m.b.shape[0] = 17, m.b.shape[1] = -4; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'B' (#1): dim 0 is 17 but symbol 'K' was bound to 33 by an "
       "earlier argument"},
      {"null data",
       [](MmArgs &m) { m.b.t.data = nullptr; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT, "argument 'B' (#1): data pointer is NULL"},
      {"misaligned",
       [](MmArgs &m) { m.a.t.byte_offset = 2; return m.args(); },
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'A' (#0): data is not aligned to 4 bytes (address mod 4 = 2)"},
  };
}

class BadInput : public ::testing::TestWithParam<size_t> {};

TEST(BadInput, SameMessageOnBothBackendsAndNoLaunch) {
  KernelGuard ffi(load(mmBundle(), "ffi"));
  KernelGuard native(load(mmBundle(), "native"));
  ASSERT_STREQ(tile_kernel_backend(native), "native");
  for (const BadCase &c : mmCases()) {
    SCOPED_TRACE(c.what);
    int64_t before = blocksRun();
    Outcome f = launchMm(ffi, c);
    Outcome n = launchMm(native, c);
    EXPECT_EQ(f.status, c.status);
    EXPECT_EQ(f.message, c.message);
    EXPECT_EQ(n.status, c.status);
    EXPECT_EQ(n.message, f.message);
    EXPECT_EQ(blocksRun(), before) << "a rejected launch ran blocks";
  }
}

TEST(BadInput, AcceptableEdgeCases) {
  // Size-1 dims may have any stride; explicit canonical strides are fine.
  for (const char *backend : {"ffi", "native"}) {
    KernelGuard k(load(mmBundle(), backend));
    MmArgs m;
    int64_t cStrides[2] = {4, 1};
    m.c.t.strides = cStrides;
    HostTensor a1({1, 33});
    int64_t aStrides[2] = {12345, 1};
    a1.t.strides = aStrides;
    HostTensor c1({1, 4});
    std::vector<tile_arg> args = {tile_arg_tensor(a1.dl()),
                                  tile_arg_tensor(m.b.dl()),
                                  tile_arg_tensor(c1.dl())};
    EXPECT_EQ(tile_kernel_launch(k, args.data(), 3, nullptr, nullptr),
              TILE_STATUS_OK)
        << backend << ": " << tile_last_error();
  }
}

// Problems found before either backend runs (shared code, same text).
TEST(BadInput, ArgumentBinding) {
  KernelGuard axpy(load(axpyBundle()));
  HostTensor x({8, 4}), y({8, 4});
  auto launch = [&](std::vector<tile_arg> args) {
    int64_t before = blocksRun();
    tile_status st = tile_kernel_launch(axpy, args.data(),
                                        int32_t(args.size()), nullptr, nullptr);
    EXPECT_EQ(blocksRun(), before);
    return Outcome{st, st ? tile_last_error() : ""};
  };
  tile_arg X = tile_arg_tensor(x.dl()), Y = tile_arg_tensor(y.dl());
  struct {
    std::vector<tile_arg> args;
    tile_status status;
    const char *message;
  } cases[] = {
      {{X, Y}, TILE_STATUS_INVALID_ARGUMENT,
       "kernel 'axpy' takes 5 arguments, got 2"},
      {{X, X, Y, tile_arg_int(1), tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'alpha' (#0): expected a float32 scalar, got a tensor"},
      {{tile_arg_none(), X, Y, tile_arg_int(1), tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'alpha' (#0): expected a float32 scalar, got nothing "
       "(TILE_ARG_NONE)"},
      {{tile_arg_float(1), X, Y, tile_arg_float(2.5), tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'rows' (#3): expected an integer (int32), got a float"},
      {{tile_arg_float(1), X, Y, tile_arg_int(int64_t(1) << 31),
        tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'rows' (#3): 2147483648 is out of range for int32"},
      {{tile_arg_int(16777217), X, Y, tile_arg_int(1), tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'alpha' (#0): integer 16777217 is not exactly representable "
       "as float32"},
      {{tile_arg_float(1e39), X, Y, tile_arg_int(1), tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'alpha' (#0): value is out of range for float32"},
      {{tile_arg_float(1), tile_arg_int(3), Y, tile_arg_int(1),
        tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'X' (#1): expected a tensor, got an int"},
      {{tile_arg_float(1), X, tile_arg_none(), tile_arg_int(1),
        tile_arg_int(0)},
       TILE_STATUS_INVALID_ARGUMENT,
       "argument 'Y' (#2): omitted, but only the outputs listed in out_idx "
       "may be omitted"},
      // A zero divisor or a negative extent makes the grid empty: success,
      // nothing runs (the generated wrappers' semantics).
      {{tile_arg_float(1), X, Y, tile_arg_int(0), tile_arg_int(0)},
       TILE_STATUS_OK, ""},
      {{tile_arg_float(1), X, Y, tile_arg_int(-2), tile_arg_int(0)},
       TILE_STATUS_OK, ""},
  };
  for (auto &c : cases) {
    SCOPED_TRACE(c.message);
    Outcome o = launch(c.args);
    EXPECT_EQ(o.status, c.status);
    EXPECT_EQ(o.message, c.message);
  }
  // Static dim: X is [N, 4].
  HostTensor x5({8, 5});
  Outcome o = launch({tile_arg_float(1), tile_arg_tensor(x5.dl()), Y,
                      tile_arg_int(1), tile_arg_int(0)});
  EXPECT_EQ(o.message, "argument 'X' (#1): dim 1 is 5 but must be 4");
  EXPECT_EQ(tile_kernel_launch(axpy, nullptr, 5, nullptr, nullptr),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(), "args is NULL");
  EXPECT_EQ(tile_kernel_launch(nullptr, nullptr, 0, nullptr, nullptr),
            TILE_STATUS_INVALID_ARGUMENT);
}

TEST(BadInput, OmittedOutputsNeedRoom) {
  for (const char *backend : {"ffi", "native"}) {
    KernelGuard k(load(addBundle(), backend));
    HostTensor a({4}), b({4});
    tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
    EXPECT_EQ(tile_kernel_launch(k, args, 2, nullptr, nullptr),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(tile_last_error(), "kernel 'add': outputs were omitted, so "
                                    "'outs' must have room for 1 tensors");
    EXPECT_EQ(tile_kernel_launch(k, args, 1, nullptr, nullptr),
              TILE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(tile_last_error(), "kernel 'add' takes 3 arguments (or 2 "
                                    "with all outputs omitted), got 1");
  }
}

TEST(BadInput, UnboundOutputSymbol) {
  // C's dim is named P, which only C itself binds: omitting C cannot work.
  json meta = addMeta();
  meta["symbols"] = {"N", "P"};
  meta["params"][2]["dims"] = {"P"};
  KernelGuard k(load(makeBundle(meta, TILE_TEST_ADD_SO), "ffi"));
  HostTensor a({4}), b({4});
  tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
  DLManagedTensor *out[1] = {nullptr};
  tile_outputs outs{out, 1, 0};
  EXPECT_EQ(tile_kernel_launch(k, args, 2, nullptr, &outs),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(),
               "argument 'C' (#2): cannot allocate the omitted output: dim 0 "
               "uses symbol 'P', which no argument binds");
  // Passing C works (it binds P).
  HostTensor c({4});
  tile_arg full[3] = {args[0], args[1], tile_arg_tensor(c.dl())};
  EXPECT_EQ(tile_kernel_launch(k, full, 3, nullptr, nullptr), TILE_STATUS_OK)
      << tile_last_error();
}

// ---- Bundles whose metadata disagrees with their code ----------------------
//
// CRCs valid, metadata self-consistent, but not the metadata the code was
// compiled for: refused at load (docs/bundle.md, "Trust model"), before any
// of the code is mapped, instead of a heap overflow or a jump into the wrong
// function at launch.

struct LoadOutcome {
  tile_status status;
  std::string message;
};

LoadOutcome tryLoad(const std::string &bundle, const char *backend = "auto") {
  tile_kernel_t k = nullptr;
  tile_status st =
      tile_kernel_load_memory(bundle.data(), bundle.size(), backend, &k);
  tile_kernel_release(k);
  return {st, st == TILE_STATUS_OK ? "" : tile_last_error()};
}

/// The add kernel's hashed host code (hash of addMeta()) with `edit`
/// applied to the metadata afterwards: what a hand edit of a bundle gives.
std::string editedAfterCompile(const std::function<void(json &)> &edit) {
  json meta = addMeta();
  std::string so =
      withMetadataHash(readFile(TILE_TEST_ADD_HASHED_SO), meta.dump());
  edit(meta);
  return tile::bundle::write({{"metadata", meta.dump()}, {"host.so", so}});
}

const char *const kMismatch = "bundle metadata does not match its code: "
                              "host.so of kernel 'add' was compiled from "
                              "metadata with hash ";

TEST(BadBundle, HashedCodeWithItsMetadataRuns) {
  for (const char *backend : {"ffi", "native"}) {
    KernelGuard k(load(editedAfterCompile([](json &) {}), backend));
    ASSERT_TRUE(k.k);
    HostTensor a({100}, 1.0f), b({100}, 2.0f), c({100});
    tile_arg args[3] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl()),
                        tile_arg_tensor(c.dl())};
    ASSERT_EQ(tile_kernel_launch(k, args, 3, nullptr, nullptr), TILE_STATUS_OK)
        << tile_last_error();
    EXPECT_EQ(c[99], 3.0f);
  }
}

TEST(BadBundle, EditedMetadataIsRefused) {
  struct Edit {
    const char *what;
    std::function<void(json &)> edit;
  } edits[] = {
      // Outputs would be allocated at 1 byte per element; the code writes 4.
      {"output dtype f32 -> int8",
       [](json &m) { m["params"][2]["dtype"] = "int8"; }},
      {"input dtype", [](json &m) { m["params"][0]["dtype"] = "float64"; }},
      {"static shape", [](json &m) {
         m["params"][2]["shape"] = {4};
         m["params"][2]["dims"] = {""};
       }},
      {"grid", [](json &m) { m["grid"][0] = {{"const", 1000}}; }},
      {"out_idx", [](json &m) { m["out_idx"] = json::array(); }},
      {"formatting only", [](json &m) { m["compiler"] = "tile-test "; }},
  };
  for (const Edit &e : edits) {
    SCOPED_TRACE(e.what);
    for (const char *backend : {"ffi", "native"}) {
      LoadOutcome r = tryLoad(editedAfterCompile(e.edit), backend);
      EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
      EXPECT_EQ(r.message.rfind(kMismatch, 0), 0u) << r.message;
    }
  }
}

TEST(BadBundle, HashOfAnotherKernel) {
  LoadOutcome r = tryLoad(editedAfterCompile([](json &m) {
    m["name"] = "add2";
    m["entry"] = {{"blocks", "add__tile_blocks"},
                  {"native", "add__tile_native"}};
  }));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle metadata does not match its code: host.so "
                       "carries the metadata hash of kernel 'add', but the "
                       "metadata names kernel 'add2'");
}

TEST(BadBundle, EntrySymbolOfAnotherRole) {
  // Calling the native wrapper as the block function (or the reverse) would
  // jump into code with another signature: refused by name, hash or not.
  json blocksIsNative = addMeta(), nativeIsBlocks = addMeta(),
       blocksIsHash = addMeta(), blocksIsData = addMeta();
  blocksIsNative["entry"]["blocks"] = "add__tile_native";
  nativeIsBlocks["entry"]["native"] = "add__tile_blocks";
  blocksIsHash["entry"]["blocks"] = "add__tile_metadata_hash";
  blocksIsData["entry"]["blocks"] = "add_table__tile_blocks";
  struct Case {
    json meta;
    const char *so;
    std::string message;
  } cases[] = {
      {blocksIsNative, TILE_TEST_ADD_SO,
       "bundle metadata: entry.blocks 'add__tile_native' must name a "
       "'__tile_blocks' symbol, but it has the native wrapper's "
       "(entry.native) name"},
      {nativeIsBlocks, TILE_TEST_ADD_SO,
       "bundle metadata: entry.native 'add__tile_blocks' must name a "
       "'__tile_native' symbol, but it has the block function's "
       "(entry.blocks) name"},
      {blocksIsHash, TILE_TEST_ADD_HASHED_SO,
       "bundle metadata: entry.blocks 'add__tile_metadata_hash' must name a "
       "'__tile_blocks' symbol, but it has the metadata hash's name"},
      // The right suffix on a data object: the ELF symbol says it is no code.
      {blocksIsData, TILE_TEST_ADD_HASHED_SO,
       "host.so: entry.blocks 'add_table__tile_blocks' is not an exported "
       "function"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.meta["entry"].dump());
    for (const char *backend : {"ffi", "native"}) {
      LoadOutcome r = tryLoad(makeBundle(c.meta, c.so), backend);
      EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
      EXPECT_EQ(r.message, c.message);
    }
  }
}

TEST(BadBundle, TruncatedHostSoIsRefusedBeforeDlopen) {
  // dlopen() of a truncated library maps pages past the end of the file
  // (SIGBUS) or follows tables past it (SIGSEGV). Every prefix is refused.
  const std::string meta = addMeta().dump();
  const std::string so = readFile(TILE_TEST_ADD_SO);
  ASSERT_GT(so.size(), 1000u);
  for (size_t cut = 0; cut < so.size(); cut += 1 + cut / 16) {
    LoadOutcome r = tryLoad(
        tile::bundle::write({{"metadata", meta}, {"host.so", so.substr(0, cut)}}));
    ASSERT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR) << "cut at " << cut;
    EXPECT_EQ(r.message.rfind("section 'host.so' ", 0), 0u) << r.message;
  }
  // Header fields pointing past the end of an otherwise complete file.
  std::string phdr = so, shdr = so;
  phdr[32 + 5] = char(0x7F); // e_phoff far past the end
  shdr[40 + 5] = char(0x7F); // e_shoff far past the end
  for (const std::string &bad : {phdr, shdr}) {
    LoadOutcome r =
        tryLoad(tile::bundle::write({{"metadata", meta}, {"host.so", bad}}));
    EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
    EXPECT_NE(r.message.find("header table"), std::string::npos) << r.message;
  }
}

} // namespace
