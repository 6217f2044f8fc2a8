//===- TestUtil.cpp - Shared helpers for the runtime tests ----------------===//
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace {
std::atomic<int64_t> gBlocks{0};
} // namespace

extern "C" __attribute__((visibility("default"))) void
tile_test_note_blocks(int64_t blocks) {
  gBlocks.fetch_add(blocks, std::memory_order_relaxed);
}

namespace tiletest {

int64_t blocksRun() { return gBlocks.load(); }

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

static json tensor(const char *name, std::vector<int64_t> shape,
                   std::vector<std::string> dims, bool output = false,
                   const char *access = nullptr) {
  return {{"name", name},
          {"kind", "tensor"},
          {"dtype", "float32"},
          {"rank", shape.size()},
          {"shape", shape},
          {"dims", dims},
          {"output", output},
          {"access", access ? access : output ? "write" : "read"}};
}

static json base(const char *name) {
  return {{"format", "tile-kernel"},
          {"version", 1},
          {"compiler", "tile-test"},
          {"name", name},
          {"target", {{"kind", "cpu"}, {"chip", "x86-64"}, {"features", ""}}},
          {"block", {1, 1, 1}},
          {"shared_bytes", 0}};
}

static json ceildiv(json a, int64_t b) {
  return {{"op", "ceildivu"}, {"args", {a, {{"const", b}}}}};
}

json addMeta() {
  json m = base("add");
  m["params"] = {tensor("A", {-1}, {"N"}), tensor("B", {-1}, {"N"}),
                 tensor("C", {-1}, {"N"}, true)};
  m["out_idx"] = {2};
  m["symbols"] = {"N"};
  m["grid"] = {ceildiv({{"sym", "N"}}, 64), {{"const", 1}}, {{"const", 1}}};
  m["entry"] = {{"blocks", "add__tile_blocks"},
                {"native", "add__tile_native"}};
  return m;
}

json mmMeta() {
  json m = base("mm");
  m["params"] = {tensor("A", {-1, -1}, {"M", "K"}),
                 tensor("B", {-1, -1}, {"K", "N"}),
                 tensor("C", {-1, -1}, {"M", "N"}, true)};
  m["out_idx"] = {2};
  m["symbols"] = {"M", "K", "N"};
  m["grid"] = {ceildiv({{"sym", "N"}}, 16), ceildiv({{"sym", "M"}}, 16),
               {{"const", 1}}};
  m["entry"] = {{"blocks", "mm__tile_blocks"}, {"native", "mm__tile_native"}};
  return m;
}

json axpyMeta() {
  json m = base("axpy");
  m["params"] = {
      {{"name", "alpha"}, {"kind", "scalar"}, {"dtype", "float32"}},
      tensor("X", {-1, 4}, {"N", "C"}),
      tensor("Y", {-1, 4}, {"N", "C"}, true, "readwrite"),
      {{"name", "rows"}, {"kind", "scalar"}, {"dtype", "int32"}},
      {{"name", "bias"}, {"kind", "scalar"}, {"dtype", "int64"}}};
  m["out_idx"] = json::array();
  m["symbols"] = {"N", "C"};
  m["grid"] = {{{"op", "ceildivs"}, {"args", {{{"sym", "N"}}, {{"scalar", 3}}}}},
               {{"const", 1}},
               {{"const", 1}}};
  m["entry"] = {{"blocks", "axpy__tile_blocks"}};
  return m;
}

std::string withMetadataHash(std::string so, const std::string &metadata) {
  const std::string placeholder = "TILEHASH";
  size_t at = so.find(placeholder);
  if (at == std::string::npos)
    return so;
  EXPECT_EQ(so.find(placeholder, at + 1), std::string::npos);
  uint64_t h = tile::bundle::metadataHash(metadata);
  std::memcpy(&so[at], &h, 8);
  return so;
}

std::string makeBundle(const json &meta, const std::string &soPath,
                       std::vector<tile::bundle::Section> extra) {
  std::string text = meta.dump();
  std::vector<tile::bundle::Section> sections = {
      {"metadata", text}, {"host.so", withMetadataHash(readFile(soPath), text)}};
  for (auto &s : extra)
    sections.push_back(std::move(s));
  return tile::bundle::write(sections);
}

std::string addBundle() {
  return makeBundle(addMeta(), TILE_TEST_ADD_SO,
                    {{"mlir", "func.func @add() { return }"}});
}
std::string mmBundle() { return makeBundle(mmMeta(), TILE_TEST_MM_SO); }
std::string axpyBundle() { return makeBundle(axpyMeta(), TILE_TEST_AXPY_SO); }

tile_kernel_t load(const std::string &bundle, const char *backend) {
  tile_kernel_t k = nullptr;
  tile_status st =
      tile_kernel_load_memory(bundle.data(), bundle.size(), backend, &k);
  if (st != TILE_STATUS_OK)
    ADD_FAILURE() << "load failed: " << tile_status_name(st) << ": "
                  << tile_last_error();
  return k;
}

HostTensor::HostTensor(std::vector<int64_t> s, float fill)
    : shape(std::move(s)) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= size_t(d);
  data.assign(n, fill);
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
}

} // namespace tiletest
