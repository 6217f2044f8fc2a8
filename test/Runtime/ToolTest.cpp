//===- ToolTest.cpp - tile-run end to end, .npy and element conversions ---===//
#include "Elements.h"
#include "Npy.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace tiletest;
using namespace tilerun;

TEST(Elements, MinifloatsRoundTripEveryEncoding) {
  struct Format {
    int e, m;
    bool ieee;
    uint32_t count;
  } formats[] = {{5, 10, true, 1u << 16}, {5, 2, true, 256}, {4, 3, false, 256}};
  for (const Format &f : formats)
    for (uint32_t bits = 0; bits < f.count; ++bits) {
      double v = decodeMinifloat(bits, f.e, f.m, f.ieee);
      if (std::isnan(v))
        continue;
      ASSERT_EQ(encodeMinifloat(v, f.e, f.m, f.ieee), bits)
          << "e" << f.e << "m" << f.m << " bits " << bits << " value " << v;
    }
  // Known values and rounding / saturation behavior.
  EXPECT_EQ(decodeMinifloat(0x3C00, 5, 10, true), 1.0);
  EXPECT_EQ(decodeMinifloat(0x7BFF, 5, 10, true), 65504.0);
  EXPECT_EQ(decodeMinifloat(0x7E, 4, 3, false), 448.0);
  EXPECT_EQ(decodeMinifloat(0x7B, 5, 2, true), 57344.0);
  EXPECT_EQ(encodeMinifloat(1e6, 4, 3, false), 0x7Eu); // saturates
  EXPECT_EQ(encodeMinifloat(1e6, 5, 10, true), 0x7C00u); // inf
  EXPECT_EQ(encodeMinifloat(1.0 + 1.0 / 2048, 5, 10, true), 0x3C00u); // tie->even
}

TEST(Elements, AllDTypes) {
  DLDataType types[] = {{kDLFloat, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 64, 1},
                        {kDLBfloat, 16, 1}, {kDLInt, 8, 1},   {kDLInt, 64, 1},
                        {kDLUInt, 16, 1},  {TILE_DL_BOOL, 8, 1},
                        {TILE_DL_FLOAT8_E4M3FN, 8, 1},
                        {TILE_DL_FLOAT8_E5M2, 8, 1}};
  for (DLDataType t : types) {
    unsigned char buf[16] = {};
    storeElement(t, buf, 1, 1.5);
    double expect = t.code == TILE_DL_BOOL ? 1.0
                    : (t.code == kDLInt || t.code == kDLUInt) ? 2.0
                                                               : 1.5;
    EXPECT_EQ(loadElement(t, buf, 1), expect) << int(t.code) << "/" << int(t.bits);
  }
  unsigned char b[2];
  storeElement({kDLInt, 8, 1}, b, 0, 1000);
  EXPECT_EQ(loadElement({kDLInt, 8, 1}, b, 0), 127); // clamps
}

TEST(Npy, RoundTrip) {
  char dir[] = "/tmp/tile-npy-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, {5}, {2, 3}, {2, 0, 4}}) {
    NpyArray a;
    a.dtype = {kDLInt, 16, 1};
    a.shape = shape;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    for (int64_t i = 0; i < n; ++i) {
      int16_t v = int16_t(i * 3 - 7);
      a.data.append(reinterpret_cast<char *>(&v), 2);
    }
    std::string path = std::string(dir) + "/a.npy", error;
    ASSERT_TRUE(writeNpy(path, a, error)) << error;
    NpyArray b;
    ASSERT_TRUE(readNpy(path, b, error)) << error;
    EXPECT_EQ(b.shape, shape);
    EXPECT_EQ(b.dtype.code, kDLInt);
    EXPECT_EQ(b.dtype.bits, 16);
    EXPECT_EQ(b.data, a.data);
    // The header is padded so the data starts 64-byte aligned.
    EXPECT_EQ((readFile(path).size() - a.data.size()) % 64, 0u);
    unlink(path.c_str());
  }
  NpyArray none;
  std::string error;
  EXPECT_FALSE(readNpy(std::string(dir) + "/missing.npy", none, error));
  rmdir(dir);
}

namespace {

/// A .npy file with header dict `dict` (padded as numpy pads it) and `data`.
std::string npyBytes(const std::string &dict, const std::string &data,
                     int major = 1) {
  std::string header = dict;
  size_t pre = major == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    out += char((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::string floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char *>(v.begin()),
                     v.size() * sizeof(float));
}

} // namespace

TEST(Npy, ReadsWhatNumpyWrites) {
  NpyArray a;
  std::string error;
  // Fortran order is transposed into C order: F data of [[1,2,3],[4,5,6]].
  ASSERT_TRUE(parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': True, "
                                "'shape': (2, 3), }",
                                floats({1, 4, 2, 5, 3, 6})),
                       a, error))
      << error;
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data, floats({1, 2, 3, 4, 5, 6}));
  // Version 2.0, '=' (native) byte order, double quotes, Python 2 longs.
  ASSERT_TRUE(parseNpy(npyBytes("{\"descr\": \"=f4\", \"fortran_order\": "
                                "False, \"shape\": (2L, 1L)}",
                                floats({1, 2}), 2),
                       a, error))
      << error;
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1}));
  ASSERT_TRUE(parseNpy(npyBytes("{'descr': 'b1', 'fortran_order': False, "
                                "'shape': (), }",
                                std::string(1, '\1')),
                       a, error))
      << error;
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.dtype.code, TILE_DL_BOOL);
}

TEST(Npy, RejectsMalformedFiles) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, ";
  const std::string four = floats({1, 2, 3, 4});
  struct Case {
    std::string bytes, message;
  } cases[] = {
      // Read as (1, 64) with the rest ignored before.
      {npyBytes(ok + "'shape': (1e3, 64), }", four),
       "malformed header: 'shape' entries must be non-negative integers, got "
       "'1e3'"},
      {npyBytes(ok + "'shape': (-4,), }", four),
       "malformed header: 'shape' entries must be non-negative integers, got "
       "'-4'"},
      {npyBytes(ok + "'shape': (4), }", four),
       "malformed header: 'shape' must be a tuple: write (N,) for one dim"},
      {npyBytes(ok + "'shape': (4,", four),
       "malformed header: 'shape' entries must be non-negative integers, got "
       "''"},
      {npyBytes(ok + "'shape': (99999999999999999999,), }", four),
       "malformed header: a 'shape' entry is too large"},
      {npyBytes(ok + "'shape': (4294967296, 4294967296, 4294967296), }", four),
       "shape (4294967296, 4294967296, 4294967296) has too many elements"},
      {npyBytes(ok + "'shape': (3,), }", four),
       "shape (3,) of '<f4' needs 12 bytes of data, the file has 16 "
       "(trailing bytes)"},
      {npyBytes(ok + "'shape': (5,), }", four),
       "shape (5,) of '<f4' needs 20 bytes of data, the file has 16 "
       "(truncated data)"},
      {npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",
                four),
       "unsupported dtype '>f4' (big-endian data)"},
      {npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
                four),
       "unsupported dtype '<c8' (bool, int8-64, uint8-64 and float16/32/64 "
       "are supported)"},
      {npyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, "
                "'shape': (4,), }",
                four),
       "malformed header: 'descr' must be a type string such as '<f4' "
       "(structured dtypes are not supported)"},
      {npyBytes(ok + "}", four), "malformed header: the header has no 'shape' key"},
      {npyBytes(ok + "'shape': (4,), 'shape': (4,), }", four),
       "malformed header: 'shape' appears twice"},
      {npyBytes(ok + "'shape': (4,), 'extra': 1, }", four),
       "malformed header: unexpected key 'extra' in the header"},
      {npyBytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (4,), }", four),
       "malformed header: 'fortran_order' must be True or False"},
      {npyBytes(ok + "'shape': (4,), } junk", four),
       "malformed header: unexpected text after the header dict"},
      {npyBytes(ok + "'shape': (4,), }", four).substr(0, 30),
       "truncated header (it declares 118 bytes, the file has 20 after the "
       "preamble)"},
      {std::string("\x93NUMPY\x04\x00", 8) + std::string(100, ' '),
       "unsupported .npy version 4.0 (1.0, 2.0 and 3.0 are supported)"},
      {"PK\x03\x04 an npz", "not a .npy file"},
  };
  for (const Case &c : cases) {
    NpyArray a;
    std::string error;
    EXPECT_FALSE(parseNpy(c.bytes, a, error)) << c.message;
    EXPECT_EQ(error, c.message);
  }
}

namespace {

struct ToolRun {
  int status;
  std::string output;
};

ToolRun runTool(const std::string &args) {
  std::string out = "/tmp/tile-run-test-" + std::to_string(getpid()) + ".txt";
  int rc = std::system((std::string(TILE_TEST_TILE_RUN) + " " + args + " >" +
                        out + " 2>&1")
                           .c_str());
  ToolRun r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, readFile(out)};
  unlink(out.c_str());
  return r;
}

} // namespace

TEST(TileRun, EndToEnd) {
  char dir[] = "/tmp/tile-run-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string d = dir;
  std::ofstream(d + "/mm.tileb", std::ios::binary) << mmBundle();
  std::ofstream(d + "/axpy.tileb", std::ios::binary) << axpyBundle();

  ToolRun info = runTool(d + "/mm.tileb --info");
  EXPECT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find("#1 B          tensor float32 [K, N]"),
            std::string::npos)
      << info.output;

  ToolRun cmp = runTool(d + "/mm.tileb --dims M=40,K=20,N=33 -n 3 --warmup 1 "
                        "--compare-backends ffi,native --save-outputs " + d +
                        "/out");
  EXPECT_EQ(cmp.status, 0) << cmp.output;
  EXPECT_NE(cmp.output.find("max abs diff ffi vs native = 0"),
            std::string::npos) << cmp.output;
  NpyArray c;
  std::string error;
  ASSERT_TRUE(readNpy(d + "/out/C.npy", c, error)) << error;
  EXPECT_EQ(c.shape, (std::vector<int64_t>{40, 33}));

  // Feed the saved output back as an input: A = C (40x33), B 33xN.
  ToolRun fed = runTool(d + "/mm.tileb --input A=" + d +
                        "/out/C.npy --dims N=7 -n 1 --warmup 0");
  EXPECT_EQ(fed.status, 0) << fed.output;
  EXPECT_NE(fed.output.find("C [40, 7]"), std::string::npos) << fed.output;

  ToolRun axpy = runTool(d + "/axpy.tileb --dims N=100 --scalar alpha=0.5,rows=8 -n 2");
  EXPECT_EQ(axpy.status, 0) << axpy.output;

  ToolRun missing = runTool(d + "/mm.tileb --dims M=3");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("pass --dims K=<size>"), std::string::npos)
      << missing.output;
  ToolRun badBackend = runTool(d + "/axpy.tileb --backend=native");
  EXPECT_EQ(badBackend.status, 2);
  EXPECT_NE(badBackend.output.find("BACKEND_UNAVAILABLE"), std::string::npos);
  std::system(("rm -rf " + d).c_str());
}

TEST(TileRun, BadInputsAreOneLineErrors) {
  char dir[] = "/tmp/tile-run-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string d = dir;
  std::ofstream(d + "/mm.tileb", std::ios::binary) << mmBundle();
  std::ofstream(d + "/bad.npy", std::ios::binary)
      << npyBytes("{'descr': '<f4', 'fortran_order': False, "
                  "'shape': (1e3, 64), }",
                  std::string(1000 * 64 * 4, '\0'));
  json huge = mmMeta(); // A is [2^32 - 1, 1024]: 16 TiB of float32
  huge["params"][0]["shape"] = {4294967295ll, 1024};
  std::ofstream(d + "/huge.tileb", std::ios::binary)
      << makeBundle(huge, TILE_TEST_MM_SO);
  struct Case {
    std::string args, message;
  } cases[] = {
      {"mm.tileb --input A=" + d + "/bad.npy",
       "'" + d + "/bad.npy': malformed header: 'shape' entries must be "
       "non-negative integers, got '1e3'"},
      {"mm.tileb --dims M=-1,K=2,N=3", "--dims M: '-1' is negative"},
      {"mm.tileb --dims M=9223372036854775807,K=2,N=3",
       "parameter 'A': shape [9223372036854775807, 2] is too large (its byte "
       "size overflows 64 bits)"},
      {"mm.tileb --dims M=99999999999999999999", "--dims M: "
       "'99999999999999999999' is out of range"},
      {"huge.tileb --dims K=1024,N=1", "parameter 'A': shape [4294967295, "
       "1024] needs 17592186040320 bytes per copy; tile-run keeps two copies "
       "and this machine has "},
  };
  for (const Case &c : cases) {
    ToolRun r = runTool(d + "/" + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("tile-run: " + c.message, 0), 0u)
        << c.args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1)
        << c.args << "\n" << r.output;
  }
#if defined(__has_feature)
#if !__has_feature(address_sanitizer)
  // A single 2^32 - 1 dim (16 GiB per copy): refused by the memory check,
  // or on a machine that big by the failing allocation under the ulimit.
  json big = mmMeta();
  big["params"][0]["shape"] = {4294967295ll, 1};
  std::ofstream(d + "/big.tileb", std::ios::binary)
      << makeBundle(big, TILE_TEST_MM_SO);
  std::string out = d + "/big.txt";
  int rc = std::system(("ulimit -v 4000000; " + std::string(TILE_TEST_TILE_RUN) +
                        " " + d + "/big.tileb --dims N=1 >" + out + " 2>&1")
                           .c_str());
  std::string text = readFile(out);
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << text;
  EXPECT_TRUE(
      text.rfind("tile-run: parameter 'A': shape [4294967295, 1] needs", 0) ==
          0 ||
      text.rfind("tile-run: out of memory", 0) == 0)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
#endif
#endif
  std::system(("rm -rf " + d).c_str());
}
