//===- ToolTest.cpp - tile-run end to end, .npy and element conversions ---===//
#include "Elements.h"
#include "Npy.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

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
