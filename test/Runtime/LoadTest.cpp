//===- LoadTest.cpp - Loading, info queries, backend selection ------------===//
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace tiletest;

namespace {

struct LoadResult {
  tile_status status;
  std::string message;
};

LoadResult tryLoad(const std::string &bundle, const char *backend = "auto") {
  tile_kernel_t k = nullptr;
  tile_status st =
      tile_kernel_load_memory(bundle.data(), bundle.size(), backend, &k);
  LoadResult r{st, st == TILE_STATUS_OK ? "" : tile_last_error()};
  if (st != TILE_STATUS_OK)
    EXPECT_EQ(k, nullptr);
  tile_kernel_release(k);
  return r;
}

} // namespace

TEST(Load, FromFileAndMemory) {
  std::string bundle = addBundle();
  char path[] = "/tmp/tile-load-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, bundle.data(), bundle.size()), ssize_t(bundle.size()));
  close(fd);
  tile_kernel_t k = nullptr;
  ASSERT_EQ(tile_kernel_load_file(path, "auto", &k), TILE_STATUS_OK)
      << tile_last_error();
  EXPECT_STREQ(tile_kernel_name(k), "add");
  tile_kernel_release(k);
  unlink(path);

  EXPECT_EQ(tile_kernel_load_file("/nonexistent/x.tileb", "auto", &k),
            TILE_STATUS_BUNDLE_ERROR);
  EXPECT_STREQ(tile_last_error(), "cannot open bundle '/nonexistent/x.tileb': "
                                  "No such file or directory");
  EXPECT_EQ(k, nullptr);

  // Memory loads copy: the caller's buffer can go away.
  std::string copy = bundle;
  KernelGuard m(load(copy));
  copy.assign(copy.size(), '\0');
  EXPECT_STREQ(tile_kernel_name(m), "add");
}

TEST(Load, InfoQueries) {
  KernelGuard k(load(addBundle()));
  ASSERT_TRUE(k.k);
  EXPECT_STREQ(tile_kernel_target_kind(k), "cpu");
  EXPECT_STREQ(tile_kernel_target_chip(k), "x86-64");
  EXPECT_STREQ(tile_kernel_backend(k), "native");
  EXPECT_EQ(tile_kernel_num_params(k), 3);
  EXPECT_EQ(tile_kernel_num_outputs(k), 1);
  EXPECT_EQ(tile_kernel_output_param(k, 0), 2);
  EXPECT_EQ(tile_kernel_output_param(k, 1), -1);
  tile_param_info p;
  ASSERT_EQ(tile_kernel_param(k, 2, &p), TILE_STATUS_OK);
  EXPECT_STREQ(p.name, "C");
  EXPECT_EQ(p.kind, TILE_PARAM_TENSOR);
  EXPECT_EQ(p.is_output, 1);
  EXPECT_EQ(p.in_out_idx, 1);
  EXPECT_STREQ(p.dtype, "float32");
  EXPECT_EQ(p.dl_dtype.code, kDLFloat);
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.shape[0], -1);
  EXPECT_STREQ(p.dims[0], "N");
  EXPECT_EQ(tile_kernel_param(k, 3, &p), TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(),
               "parameter index 3 is out of range (kernel 'add' has 3)");

  json meta = json::parse(tile_kernel_metadata(k));
  EXPECT_EQ(meta["name"], "add");

  // The rest of the parsed view: access, symbols, launch geometry.
  int32_t inplace = -1;
  EXPECT_EQ(tile_kernel_param_access(k, 0, &inplace), TILE_ACCESS_READ);
  EXPECT_EQ(inplace, 0);
  EXPECT_EQ(tile_kernel_param_access(k, 2, nullptr), TILE_ACCESS_WRITE);
  EXPECT_EQ(tile_kernel_param_access(k, 3, &inplace), -1);
  EXPECT_EQ(tile_kernel_num_symbols(k), 1);
  EXPECT_STREQ(tile_kernel_symbol(k, 0), "N");
  EXPECT_EQ(tile_kernel_symbol(k, 1), nullptr);
  tile_launch_info li;
  ASSERT_EQ(tile_kernel_launch_info(k, &li), TILE_STATUS_OK);
  EXPECT_STREQ(li.grid[0], "ceildivu(\"N\", 64)");
  EXPECT_STREQ(li.grid[1], "1");
  EXPECT_EQ(li.block[0], 1);
  EXPECT_EQ(li.shared_bytes, 0);
  EXPECT_STREQ(li.compiler, "tile-test");
  EXPECT_EQ(tile_kernel_num_variants(k), 0);
  tile_variant_info vi;
  EXPECT_EQ(tile_kernel_variant(k, 0, &vi), TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(),
               "variant index 0 is out of range (kernel 'add' has 0)");

  ASSERT_EQ(tile_kernel_num_sections(k), 3);
  EXPECT_STREQ(tile_kernel_section_name(k, 2), "mlir");
  EXPECT_EQ(tile_kernel_section_name(k, 3), nullptr);
  const void *data;
  size_t size;
  ASSERT_EQ(tile_kernel_section(k, "mlir", &data, &size), TILE_STATUS_OK);
  EXPECT_EQ(std::string(static_cast<const char *>(data), size),
            "func.func @add() { return }");
  EXPECT_EQ(tile_kernel_section(k, "llvm", &data, &size),
            TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(tile_last_error(), "kernel 'add' has no section 'llvm'");

  KernelGuard a(load(axpyBundle()));
  ASSERT_EQ(tile_kernel_param(a, 0, &p), TILE_STATUS_OK);
  EXPECT_EQ(p.kind, TILE_PARAM_SCALAR);
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.shape, nullptr);
  ASSERT_EQ(tile_kernel_param(a, 1, &p), TILE_STATUS_OK);
  EXPECT_EQ(p.shape[1], 4);
  EXPECT_EQ(tile_kernel_param_access(a, 0, nullptr), TILE_ACCESS_READ);
  EXPECT_EQ(tile_kernel_param_access(a, 2, nullptr), TILE_ACCESS_READWRITE);
  ASSERT_EQ(tile_kernel_launch_info(a, &li), TILE_STATUS_OK);
  EXPECT_STREQ(li.grid[0], "ceildivs(\"N\", scalar(3))");

  // A bundle without "access" (an older compiler): every tensor may be
  // written.
  json old = addMeta();
  for (json &param : old["params"])
    param.erase("access");
  KernelGuard o(load(makeBundle(old, TILE_TEST_ADD_SO)));
  EXPECT_EQ(tile_kernel_param_access(o, 0, nullptr), TILE_ACCESS_READWRITE);
}

TEST(Load, BackendSelection) {
  KernelGuard autoAdd(load(addBundle(), "auto"));
  EXPECT_STREQ(tile_kernel_backend(autoAdd), "native");
  KernelGuard nullName(load(addBundle(), nullptr));
  EXPECT_STREQ(tile_kernel_backend(nullName), "native");
  KernelGuard ffi(load(addBundle(), "ffi"));
  EXPECT_STREQ(tile_kernel_backend(ffi), "ffi");
  // No native entry: auto falls back to ffi, explicit native is an error.
  KernelGuard autoAxpy(load(axpyBundle(), "auto"));
  EXPECT_STREQ(tile_kernel_backend(autoAxpy), "ffi");
  LoadResult r = tryLoad(axpyBundle(), "native");
  EXPECT_EQ(r.status, TILE_STATUS_BACKEND_UNAVAILABLE);
  EXPECT_EQ(r.message, "kernel 'axpy' has no native wrapper (metadata "
                       "entry.native is missing); use backend 'ffi' or 'auto'");
  // Native entry named but not defined: auto falls back, native fails.
  json meta = addMeta();
  meta["entry"]["native"] = "missing__tile_native";
  std::string b = makeBundle(meta, TILE_TEST_ADD_SO);
  KernelGuard fallback(load(b, "auto"));
  EXPECT_STREQ(tile_kernel_backend(fallback), "ffi");
  r = tryLoad(b, "native");
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message,
            "the host code does not define the native wrapper 'missing__tile_native'");
}

TEST(Load, BackendNames) {
  LoadResult r = tryLoad(addBundle(), "cuda");
  EXPECT_EQ(r.status, TILE_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "unknown backend 'cuda' (expected one of: auto, ffi, "
                       "native, nvrtc, metal-torch)");
  r = tryLoad(addBundle(), "metal-torch");
  EXPECT_EQ(r.status, TILE_STATUS_BACKEND_UNAVAILABLE);
  EXPECT_EQ(r.message, "backend 'metal-torch' is not available for target "
                       "'cpu' (available: auto, ffi, native)");
  r = tryLoad(addBundle(), "nvrtc");
  EXPECT_EQ(r.status, TILE_STATUS_BACKEND_UNAVAILABLE);
}

TEST(Load, OtherTargets) {
  json meta = addMeta();
  meta["target"]["kind"] = "cuda";
  meta["target"]["chip"] = "sm_90";
  // The CUDA device layer checks the bundle before it needs a driver
  // (CudaTest.cpp covers the rest).
  LoadResult r = tryLoad(makeBundle(meta, TILE_TEST_ADD_SO));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle for target 'cuda' has neither a 'cubin' nor a "
                       "'ptx' section");
  r = tryLoad(makeBundle(meta, TILE_TEST_ADD_SO), "nvrtc");
  EXPECT_EQ(r.status, TILE_STATUS_BACKEND_UNAVAILABLE);
  EXPECT_EQ(r.message, "kernel 'add': backend 'nvrtc' needs the bundle's "
                       "'cuda' section (CUDA C++), which this bundle does not "
                       "have: compile it with `tilec --target=cuda` and "
                       "backend nvrtc (the default: all backends)");
  meta["target"]["kind"] = "metal";
  r = tryLoad(makeBundle(meta, TILE_TEST_ADD_SO), "ffi");
  EXPECT_EQ(r.message, "backend 'ffi' is not available for target 'metal' "
                       "(available: auto, metal-torch)");
  meta["target"]["kind"] = "tpu";
  r = tryLoad(makeBundle(meta, TILE_TEST_ADD_SO));
  EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
  EXPECT_EQ(r.message, "bundle metadata: target.kind 'tpu' is unknown (cpu, "
                       "cuda, hip, metal)");
}

// Container and metadata failures, each with its status and message.
TEST(Load, BadBundles) {
  std::string good = addBundle();
  struct Case {
    const char *what;
    std::string bundle;
    std::string message; // exact, or prefix when ending in '*'
  };
  std::string so = readFile(TILE_TEST_ADD_SO);
  std::string corrupt = good;
  {
    tile::bundle::Reader r;
    std::string e;
    ASSERT_TRUE(tile::bundle::read(good.data(), good.size(), r, e));
    corrupt[r.find("host.so")->data - reinterpret_cast<const uint8_t *>(good.data()) + 100] ^= 0x55;
  }
  std::string badMagic = good;
  badMagic[3] = 'X';
  std::string badVersion = good;
  badVersion[8] = 2;
  auto withMeta = [&](const std::string &meta) {
    return tile::bundle::write({{"metadata", meta}, {"host.so", so}});
  };
  auto without = [&](const char *field) {
    json m = addMeta();
    m.erase(field);
    return withMeta(m.dump());
  };
  json badParam = addMeta();
  badParam["params"][1]["dtype"] = "float7";
  json badDim = addMeta();
  badDim["params"][1]["dims"][0] = "Q";
  json badGrid = addMeta();
  badGrid["grid"][0] = {{"op", "pow"}, {"args", {{{"const", 1}}, {{"const", 2}}}}};
  json badOut = addMeta();
  badOut["out_idx"] = {5};
  json noBlocks = addMeta();
  noBlocks["entry"].erase("blocks");
  json unnamedDynamic = addMeta();
  unnamedDynamic["params"][0]["dims"][0] = "";
  json wrongBlocks = addMeta();
  wrongBlocks["entry"]["blocks"] = "nope__tile_blocks";
  json badAccess = addMeta();
  badAccess["params"][2]["access"] = "append";
  json readInplace = addMeta();
  readInplace["params"][0]["inplace"] = true;
  json badVariant = addMeta();
  badVariant["variants"] = {{{"kind", "sm90_tma_wgmma"}, {"chip", "sm_90a"}}};
  std::vector<Case> cases = {
      {"truncated file", good.substr(0, good.size() / 2),
       "truncated bundle: header declares*"},
      {"tiny file", good.substr(0, 5), "truncated bundle (5 bytes, the header "
                                       "alone is 24)"},
      {"bad magic", badMagic, "not a tile bundle (bad magic)"},
      {"bad version", badVersion,
       "unsupported bundle format version 2 (this runtime reads version 1)"},
      {"corrupt section", corrupt,
       "section 'host.so' is corrupt (checksum mismatch)"},
      {"missing metadata", tile::bundle::write({{"host.so", so}}),
       "bundle has no 'metadata' section"},
      {"missing host.so", tile::bundle::write({{"metadata", addMeta().dump()}}),
       "bundle for target 'cpu' has no 'host.so' section"},
      {"garbage host.so",
       tile::bundle::write({{"metadata", addMeta().dump()}, {"host.so", "junk"}}),
       "section 'host.so' is not an ELF file (4 bytes)"},
      {"bad JSON", withMeta("{\"format\": "), "bundle metadata is not valid JSON"},
      {"JSON not an object", withMeta("[1, 2]"),
       "bundle metadata must be a JSON object"},
      {"missing params", without("params"), "bundle metadata: params is missing"},
      {"missing grid", without("grid"), "bundle metadata: grid is missing"},
      {"missing entry", without("entry"), "bundle metadata: entry is missing"},
      {"unknown dtype", withMeta(badParam.dump()),
       "bundle metadata: params[1].dtype has unknown dtype 'float7'"},
      {"unknown symbol", withMeta(badDim.dump()),
       "bundle metadata: params[1].dims[0] names symbol 'Q', which is not "
       "listed in 'symbols'"},
      {"unknown grid op", withMeta(badGrid.dump()),
       "bundle metadata: grid[0].op is unknown ('pow')"},
      {"bad out_idx", withMeta(badOut.dump()),
       "bundle metadata: out_idx[0] (5) must be the index of a tensor param"},
      {"no block entry", withMeta(noBlocks.dump()),
       "bundle metadata: entry.blocks is missing"},
      {"unnamed dynamic dim", withMeta(unnamedDynamic.dump()),
       "bundle metadata: params[0].dims[0] is empty, but only static dims may "
       "be unnamed"},
      {"bad access", withMeta(badAccess.dump()),
       "bundle metadata: params[2].access must be \"read\", \"write\" or "
       "\"readwrite\""},
      {"inplace read-only param", withMeta(readInplace.dump()),
       "bundle metadata: params[0].inplace is set, but \"access\" says the "
       "kernel never writes the param"},
      {"malformed variant", withMeta(badVariant.dump()),
       "bundle metadata: variants[0].kernel is missing"},
      {"undefined block fn", withMeta(wrongBlocks.dump()),
       "host.so does not define the block function 'nope__tile_blocks'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    LoadResult r = tryLoad(c.bundle);
    EXPECT_EQ(r.status, TILE_STATUS_BUNDLE_ERROR);
    if (!c.message.empty() && c.message.back() == '*')
      EXPECT_EQ(r.message.rfind(c.message.substr(0, c.message.size() - 1), 0),
                0u)
          << r.message;
    else
      EXPECT_EQ(r.message, c.message);
  }
}

TEST(Load, ManyKernelsLoadIndependently) {
  // Each load dlopen()s its own copy; the same and different kernels
  // loaded together must not alias (memfd names are reused numbers).
  std::vector<tile_kernel_t> ks;
  for (int i = 0; i < 10; ++i)
    ks.push_back(load(i % 2 ? addBundle() : mmBundle()));
  for (int i = 0; i < 10; ++i)
    EXPECT_STREQ(tile_kernel_name(ks[i]), i % 2 ? "add" : "mm");
  for (auto k : ks)
    tile_kernel_release(k);
  tile_kernel_release(nullptr);
}

TEST(Load, ResidentLibrariesDoNotAlias) {
  // A host.so that stays resident after dlclose (-z nodelete) keeps its
  // "/proc/self/fd/N" name in glibc's list; a later kernel whose memfd got
  // the same N must not be handed that library.
  std::string resident = makeBundle(addMeta(), TILE_TEST_ADD_NODELETE_SO);
  for (int i = 0; i < 4; ++i) {
    tile_kernel_release(load(resident));
    KernelGuard m(load(mmBundle()));
    ASSERT_TRUE(m.k);
    EXPECT_STREQ(tile_kernel_name(m), "mm");
    HostTensor a({2, 3}, 1.0f), b({3, 2}, 2.0f);
    DLManagedTensor *out[1] = {nullptr};
    tile_outputs outs{out, 1, 0};
    tile_arg args[2] = {tile_arg_tensor(a.dl()), tile_arg_tensor(b.dl())};
    ASSERT_EQ(tile_kernel_launch(m, args, 2, nullptr, &outs), TILE_STATUS_OK)
        << tile_last_error();
    EXPECT_EQ(static_cast<float *>(out[0]->dl_tensor.data)[3], 6.0f);
    out[0]->deleter(out[0]);
  }
}
