//===- BundleTest.cpp - Bundle container reader/writer --------------------===//
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using tile::bundle::Reader;
using tile::bundle::Section;

namespace {

std::string sample() {
  return tile::bundle::write({{"metadata", "{}"},
                              {"host.so", std::string(1000, 'x')},
                              {"empty", ""},
                              {"mlir", "module {}"}});
}

std::string readError(const std::string &b) {
  Reader r;
  std::string error;
  EXPECT_FALSE(tile::bundle::read(b.data(), b.size(), r, error));
  EXPECT_TRUE(r.sections.empty());
  return error;
}

void putU32(std::string &s, size_t at, uint32_t v) {
  std::memcpy(&s[at], &v, 4); // tests run on little-endian hosts
}
void putU64(std::string &s, size_t at, uint64_t v) { std::memcpy(&s[at], &v, 8); }

// Recomputes the header CRC after editing the table, so the edit reaches
// the check it targets instead of the header checksum.
void resealHeader(std::string &b) {
  uint32_t n;
  std::memcpy(&n, &b[12], 4);
  size_t end = 24 + 48 * size_t(n);
  putU32(b, end, tile::bundle::crc32(b.data(), end));
}

} // namespace

TEST(Bundle, Crc32MatchesZlib) {
  EXPECT_EQ(tile::bundle::crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(tile::bundle::crc32("", 0), 0u);
  // Incremental use gives the same result.
  uint32_t c = tile::bundle::crc32("1234", 4);
  EXPECT_EQ(tile::bundle::crc32("56789", 5, c), 0xCBF43926u);
}

TEST(Bundle, RoundTrip) {
  std::string b = sample();
  Reader r;
  std::string error;
  ASSERT_TRUE(tile::bundle::read(b.data(), b.size(), r, error)) << error;
  ASSERT_EQ(r.sections.size(), 4u);
  EXPECT_EQ(r.sections[0].name, "metadata");
  EXPECT_EQ(r.find("host.so")->bytes(), std::string(1000, 'x'));
  EXPECT_EQ(r.find("empty")->size, 0u);
  EXPECT_EQ(r.find("mlir")->bytes(), "module {}");
  EXPECT_EQ(r.find("nope"), nullptr);
  for (const auto &s : r.sections)
    EXPECT_EQ((s.data - reinterpret_cast<const uint8_t *>(b.data())) % 16, 0);
  EXPECT_EQ(std::memcmp(b.data(), "TILEBNDL", 8), 0);
}

TEST(Bundle, EmptyBundleIsValid) {
  std::string b = tile::bundle::write({});
  Reader r;
  std::string error;
  EXPECT_TRUE(tile::bundle::read(b.data(), b.size(), r, error)) << error;
  EXPECT_TRUE(r.sections.empty());
}

TEST(Bundle, WriterRejectsBadInput) {
  std::string out, error;
  EXPECT_FALSE(tile::bundle::write({{"", "x"}}, out, error));
  EXPECT_FALSE(
      tile::bundle::write({{"a-very-long-section-name-x", "x"}}, out, error));
  EXPECT_FALSE(tile::bundle::write({{"a", "x"}, {"a", "y"}}, out, error));
  EXPECT_EQ(error, "duplicate section 'a'");
  std::vector<Section> many(65);
  for (size_t i = 0; i < many.size(); ++i)
    many[i].name = "s" + std::to_string(i);
  EXPECT_FALSE(tile::bundle::write(many, out, error));
  EXPECT_THROW(tile::bundle::write({{"has space", ""}}), std::invalid_argument);
}

TEST(Bundle, Truncated) {
  std::string b = sample();
  EXPECT_EQ(readError(b.substr(0, 10)),
            "truncated bundle (10 bytes, the header alone is 24)");
  std::string cut = b.substr(0, b.size() - 1);
  EXPECT_EQ(readError(cut), "truncated bundle: header declares " +
                                std::to_string(b.size()) +
                                " bytes but the data has " +
                                std::to_string(cut.size()));
  EXPECT_EQ(readError(b + "pad").rfind("padded bundle", 0), 0u);
}

TEST(Bundle, BadMagicAndVersion) {
  std::string b = sample();
  b[0] = 'X';
  EXPECT_EQ(readError(b), "not a tile bundle (bad magic)");
  b = sample();
  putU32(b, 8, 7);
  EXPECT_EQ(readError(b),
            "unsupported bundle format version 7 (this runtime reads version 1)");
}

TEST(Bundle, HeaderChecksum) {
  std::string b = sample();
  b[24] ^= 0x20; // first section name
  EXPECT_EQ(readError(b), "bundle header is corrupt (checksum mismatch)");
}

TEST(Bundle, PayloadChecksum) {
  std::string b = sample();
  Reader r;
  std::string error;
  ASSERT_TRUE(tile::bundle::read(b.data(), b.size(), r, error));
  size_t off = r.find("host.so")->data - reinterpret_cast<const uint8_t *>(b.data());
  b[off + 500] ^= 1;
  EXPECT_EQ(readError(b), "section 'host.so' is corrupt (checksum mismatch)");
}

TEST(Bundle, SectionOutsideFileAndOverlap) {
  std::string b = sample();
  // Entry 1 (host.so): offset at byte 24+48+24, size at +32.
  putU64(b, 24 + 48 + 32, 1u << 20);
  resealHeader(b);
  EXPECT_EQ(readError(b), "section 'host.so' lies outside the bundle");

  b = sample();
  uint64_t metaOff;
  std::memcpy(&metaOff, &b[24 + 24], 8);
  putU64(b, 24 + 48 + 24, metaOff); // host.so starts where metadata does
  resealHeader(b);
  EXPECT_NE(readError(b).find("overlaps"), std::string::npos);

  b = sample();
  putU64(b, 24 + 48 + 24, metaOff + 1);
  resealHeader(b);
  EXPECT_EQ(readError(b), "section 'host.so' is not 16-byte aligned");
}
