//===- Bundle.cpp - Kernel bundle container: reader and writer ------------===//
#include "tile/Runtime/Bundle.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

namespace tile::bundle {
namespace {

// Byte-at-a-time table CRC: bundles are read once at load time, so the
// simple table is plenty fast and obviously correct.
std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

// The format is little-endian regardless of the host: (de)serialize bytewise.
void putU32(std::string &s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
void putU64(std::string &s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
uint32_t getU32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
uint64_t getU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

bool validName(std::string_view name) {
  if (name.empty() || name.size() >= kNameSize)
    return false;
  for (char c : name)
    if (c < 0x21 || c > 0x7E)
      return false;
  return true;
}

} // namespace

uint32_t crc32(const void *data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = makeCrcTable();
  const auto *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint64_t metadataHash(std::string_view metadata) {
  uint64_t h = 0xcbf29ce484222325ull; // FNV-1a 64 offset basis
  for (unsigned char c : metadata) {
    h ^= c;
    h *= 0x100000001b3ull; // FNV prime
  }
  return h;
}

bool write(const std::vector<Section> &sections, std::string &out,
           std::string &error) {
  if (sections.size() > kMaxSections) {
    error = "too many sections (" + std::to_string(sections.size()) +
            ", at most " + std::to_string(kMaxSections) + ")";
    return false;
  }
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!validName(sections[i].name)) {
      error = "invalid section name '" + sections[i].name +
              "' (1 to 23 printable ASCII characters, no spaces)";
      return false;
    }
    for (size_t j = 0; j < i; ++j)
      if (sections[j].name == sections[i].name) {
        error = "duplicate section '" + sections[i].name + "'";
        return false;
      }
  }
  const size_t n = sections.size();
  const size_t tableEnd = kHeaderSize + kEntrySize * n;
  size_t offset = alignUp(tableEnd + 4, kPayloadAlign);
  std::vector<size_t> offsets(n);
  for (size_t i = 0; i < n; ++i) {
    offsets[i] = offset;
    offset = alignUp(offset + sections[i].data.size(), kPayloadAlign);
  }
  // The last payload is not padded: the file ends right after it.
  size_t total = n ? offsets[n - 1] + sections[n - 1].data.size()
                   : tableEnd + 4;
  out.assign(total, '\0');
  std::memcpy(&out[0], kMagic, sizeof(kMagic));
  putU32(out, 8, kVersion);
  putU32(out, 12, static_cast<uint32_t>(n));
  putU64(out, 16, total);
  for (size_t i = 0; i < n; ++i) {
    size_t e = kHeaderSize + kEntrySize * i;
    const Section &s = sections[i];
    std::memcpy(&out[e], s.name.data(), s.name.size());
    putU64(out, e + 24, offsets[i]);
    putU64(out, e + 32, s.data.size());
    putU32(out, e + 40, crc32(s.data.data(), s.data.size()));
    putU32(out, e + 44, 0);
    if (!s.data.empty())
      std::memcpy(&out[offsets[i]], s.data.data(), s.data.size());
  }
  putU32(out, tableEnd, crc32(out.data(), tableEnd));
  return true;
}

std::string write(const std::vector<Section> &sections) {
  std::string out, error;
  if (!write(sections, out, error))
    throw std::invalid_argument("tile bundle: " + error);
  return out;
}

const SectionView *Reader::find(std::string_view name) const {
  for (const SectionView &s : sections)
    if (s.name == name)
      return &s;
  return nullptr;
}

namespace {
bool readImpl(const void *data, size_t size, Reader &out, std::string &error) {
  const auto *p = static_cast<const uint8_t *>(data);
  if (!p || size < kHeaderSize) {
    error = "truncated bundle (" + std::to_string(size) +
            " bytes, the header alone is " + std::to_string(kHeaderSize) + ")";
    return false;
  }
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    error = "not a tile bundle (bad magic)";
    return false;
  }
  uint32_t version = getU32(p + 8);
  if (version != kVersion) {
    error = "unsupported bundle format version " + std::to_string(version) +
            " (this runtime reads version " + std::to_string(kVersion) + ")";
    return false;
  }
  uint32_t n = getU32(p + 12);
  if (n > kMaxSections) {
    error = "bundle declares " + std::to_string(n) + " sections (at most " +
            std::to_string(kMaxSections) + ")";
    return false;
  }
  uint64_t declared = getU64(p + 16);
  if (declared != size) {
    error = std::string(declared > size ? "truncated" : "padded") +
            " bundle: header declares " + std::to_string(declared) +
            " bytes but the data has " + std::to_string(size);
    return false;
  }
  const size_t tableEnd = kHeaderSize + kEntrySize * size_t(n);
  if (size < tableEnd + 4) {
    error = "truncated bundle: the section table of " + std::to_string(n) +
            " entries does not fit in " + std::to_string(size) + " bytes";
    return false;
  }
  if (crc32(p, tableEnd) != getU32(p + tableEnd)) {
    error = "bundle header is corrupt (checksum mismatch)";
    return false;
  }

  struct Extent {
    uint64_t begin, end;
    uint32_t index;
  };
  std::vector<Extent> extents;
  extents.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t *e = p + kHeaderSize + kEntrySize * i;
    const char *rawName = reinterpret_cast<const char *>(e);
    size_t len = strnlen(rawName, kNameSize);
    std::string_view name(rawName, len);
    if (len == kNameSize || !validName(name)) {
      error = "section table entry " + std::to_string(i) +
              " has an invalid name";
      return false;
    }
    for (const SectionView &prev : out.sections)
      if (prev.name == name) {
        error = "duplicate section '" + std::string(name) + "'";
        return false;
      }
    uint64_t off = getU64(e + 24), len64 = getU64(e + 32);
    if (off < tableEnd + 4 || off > size || len64 > size - off) {
      error = "section '" + std::string(name) + "' lies outside the bundle";
      return false;
    }
    if (off % kPayloadAlign != 0) {
      error = "section '" + std::string(name) + "' is not " +
              std::to_string(kPayloadAlign) + "-byte aligned";
      return false;
    }
    out.sections.push_back({name, p + off, static_cast<size_t>(len64)});
    extents.push_back({off, off + len64, i});
  }
  std::sort(extents.begin(), extents.end(),
            [](const Extent &a, const Extent &b) { return a.begin < b.begin; });
  for (size_t i = 1; i < extents.size(); ++i)
    if (extents[i].begin < extents[i - 1].end) {
      error = "section '" + std::string(out.sections[extents[i].index].name) +
              "' overlaps section '" +
              std::string(out.sections[extents[i - 1].index].name) + "'";
      out.sections.clear();
      return false;
    }
  // Payload checksums last: the cheap structural checks above give the more
  // precise message when the table itself is wrong.
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t *e = p + kHeaderSize + kEntrySize * i;
    const SectionView &s = out.sections[i];
    if (crc32(s.data, s.size) != getU32(e + 40)) {
      error = "section '" + std::string(s.name) +
              "' is corrupt (checksum mismatch)";
      out.sections.clear();
      return false;
    }
  }
  return true;
}

} // namespace

bool read(const void *data, size_t size, Reader &out, std::string &error) {
  out.sections.clear();
  if (readImpl(data, size, out, error))
    return true;
  out.sections.clear();
  return false;
}

} // namespace tile::bundle
