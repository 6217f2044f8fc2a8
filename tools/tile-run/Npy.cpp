//===- Npy.cpp - Minimal .npy reader/writer for tile-run ------------------===//
#include "Npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tilerun {
namespace {

struct Descr {
  const char *text;
  uint8_t code, bits;
};
constexpr Descr kDescrs[] = {
    {"|b1", TILE_DL_BOOL, 8}, {"|i1", kDLInt, 8},    {"<i2", kDLInt, 16},
    {"<i4", kDLInt, 32},      {"<i8", kDLInt, 64},   {"|u1", kDLUInt, 8},
    {"<u2", kDLUInt, 16},     {"<u4", kDLUInt, 32},  {"<u8", kDLUInt, 64},
    {"<f2", kDLFloat, 16},    {"<f4", kDLFloat, 32}, {"<f8", kDLFloat, 64},
};

/// The value text after `'key':` in the header dict.
bool dictValue(const std::string &header, const char *key, std::string &out) {
  std::string k = std::string("'") + key + "'";
  size_t p = header.find(k);
  if (p == std::string::npos)
    return false;
  p = header.find(':', p + k.size());
  if (p == std::string::npos)
    return false;
  ++p;
  while (p < header.size() && header[p] == ' ')
    ++p;
  size_t end;
  if (header[p] == '\'') {
    end = header.find('\'', p + 1);
    if (end == std::string::npos)
      return false;
    out = header.substr(p + 1, end - p - 1);
  } else if (header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos)
      return false;
    out = header.substr(p + 1, end - p - 1);
  } else {
    end = header.find_first_of(",}", p);
    out = header.substr(p, end - p);
  }
  return true;
}

} // namespace

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    error = "'" + path + "' is not a .npy file";
    return false;
  }
  const unsigned major = uint8_t(bytes[6]);
  size_t hlen, start;
  if (major == 1) {
    hlen = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    start = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    hlen = 0;
    for (int i = 3; i >= 0; --i)
      hlen = (hlen << 8) | uint8_t(bytes[8 + i]);
    start = 12;
  } else {
    error = "'" + path + "': unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (bytes.size() < start + hlen) {
    error = "'" + path + "': truncated header";
    return false;
  }
  std::string header = bytes.substr(start, hlen), descr, fortran, shape;
  if (!dictValue(header, "descr", descr) ||
      !dictValue(header, "fortran_order", fortran) ||
      !dictValue(header, "shape", shape)) {
    error = "'" + path + "': malformed header";
    return false;
  }
  if (fortran.find("True") != std::string::npos) {
    error = "'" + path + "': Fortran-order arrays are not supported";
    return false;
  }
  if (descr == "<b1" || descr == "b1")
    descr = "|b1";
  if (descr == "<i1" || descr == "<u1")
    descr[0] = '|';
  bool found = false;
  for (const Descr &d : kDescrs)
    if (descr == d.text) {
      out.dtype = {d.code, d.bits, 1};
      found = true;
    }
  if (!found) {
    error = "'" + path + "': unsupported dtype '" + descr + "'";
    return false;
  }
  out.shape.clear();
  int64_t elems = 1;
  std::stringstream dims(shape);
  std::string item;
  while (std::getline(dims, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos)
      continue;
    out.shape.push_back(std::stoll(item));
    elems *= out.shape.back();
  }
  size_t need = size_t(elems) * (out.dtype.bits / 8);
  if (bytes.size() - start - hlen < need) {
    error = "'" + path + "': truncated data";
    return false;
  }
  out.data = bytes.substr(start + hlen, need);
  return true;
}

bool writeNpy(const std::string &path, const NpyArray &a, std::string &error) {
  const char *descr = nullptr;
  for (const Descr &d : kDescrs)
    if (a.dtype.code == d.code && a.dtype.bits == d.bits)
      descr = d.text;
  if (!descr) {
    error = "no .npy dtype for this tensor type";
    return false;
  }
  std::string shape;
  for (int64_t d : a.shape)
    shape += std::to_string(d) + ", ";
  if (a.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (a.shape.size() == 1)
    shape.resize(shape.size() - 1); // "(5,)"
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + shape +
                       "), }";
  // Version 1.0: magic(6) + version(2) + len(2) + header, padded with
  // spaces to a multiple of 64 and ended by '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) {
    error = "cannot write '" + path + "'";
    return false;
  }
  char pre[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0,
                  char(header.size() & 0xFF), char(header.size() >> 8)};
  f.write(pre, 10);
  f.write(header.data(), std::streamsize(header.size()));
  f.write(a.data.data(), std::streamsize(a.data.size()));
  if (!f) {
    error = "error writing '" + path + "'";
    return false;
  }
  return true;
}

} // namespace tilerun
