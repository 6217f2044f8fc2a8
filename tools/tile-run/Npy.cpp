//===- Npy.cpp - Minimal .npy reader/writer for tile-run ------------------===//
#include "Npy.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tilerun {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "tile-run reads and writes .npy data in host byte order");

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

/// The header dict, parsed strictly: exactly the keys numpy writes, each
/// once, with the value types numpy writes. Python literal syntax, but only
/// the subset a .npy header uses (quoted strings without escapes, True /
/// False, a tuple of non-negative decimal integers).
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  bool parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape,
             std::string &error) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    if (!eat('{'))
      return fail(error, "the header is not a dict");
    for (;;) {
      skipSpace();
      if (eat('}'))
        break;
      std::string key;
      if (!quoted(key))
        return fail(error, "expected a quoted key in the header dict");
      skipSpace();
      if (!eat(':'))
        return fail(error, "expected ':' after '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (haveDescr)
          return fail(error, "'descr' appears twice");
        haveDescr = true;
        if (!quoted(descr))
          return fail(error, "'descr' must be a type string such as '<f4' "
                             "(structured dtypes are not supported)");
      } else if (key == "fortran_order") {
        if (haveFortran)
          return fail(error, "'fortran_order' appears twice");
        haveFortran = true;
        if (word("True"))
          fortran = true;
        else if (word("False"))
          fortran = false;
        else
          return fail(error, "'fortran_order' must be True or False");
      } else if (key == "shape") {
        if (haveShape)
          return fail(error, "'shape' appears twice");
        haveShape = true;
        if (!tuple(shape, error))
          return false;
      } else {
        return fail(error, "unexpected key '" + key + "' in the header");
      }
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat('}'))
        break;
      return fail(error, "expected ',' or '}' in the header dict");
    }
    skipSpace();
    if (p_ != s_.size())
      return fail(error, "unexpected text after the header dict");
    if (!haveDescr || !haveFortran || !haveShape)
      return fail(error, std::string("the header has no '") +
                             (!haveDescr     ? "descr"
                              : !haveFortran ? "fortran_order"
                                             : "shape") +
                             "' key");
    return true;
  }

private:
  static bool fail(std::string &error, const std::string &what) {
    error = "malformed header: " + what;
    return false;
  }
  void skipSpace() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' ||
                              s_[p_] == '\n' || s_[p_] == '\r'))
      ++p_;
  }
  bool eat(char c) {
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (s_.substr(p_, w.size()) != w)
      return false;
    size_t end = p_ + w.size();
    if (end < s_.size() && (std::isalnum(uint8_t(s_[end])) || s_[end] == '_'))
      return false;
    p_ = end;
    return true;
  }
  bool quoted(std::string &out) {
    if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"'))
      return false;
    char q = s_[p_];
    size_t end = s_.find(q, p_ + 1);
    if (end == std::string_view::npos)
      return false;
    out.assign(s_.substr(p_ + 1, end - p_ - 1));
    for (char c : out)
      if (c == '\\' || uint8_t(c) < 0x20 || uint8_t(c) > 0x7E)
        return false; // escapes and non-ASCII never occur in valid keys
    p_ = end + 1;
    return true;
  }
  /// `(` [int (`,` int)* [`,`]] `)`, where a one-element tuple needs the
  /// comma (`(5)` is the integer 5 in Python, which numpy rejects too).
  bool tuple(std::vector<int64_t> &shape, std::string &error) {
    if (!eat('('))
      return fail(error, "'shape' must be a tuple of integers");
    shape.clear();
    bool comma = false;
    for (;;) {
      skipSpace();
      if (eat(')'))
        break;
      if (!shape.empty() && !comma)
        return fail(error, "expected ',' between the 'shape' entries");
      int64_t v;
      if (!integer(v, error))
        return false;
      if (shape.size() == kNpyMaxRank)
        return fail(error, "'shape' has more than " +
                               std::to_string(kNpyMaxRank) + " entries");
      shape.push_back(v);
      skipSpace();
      comma = eat(',');
    }
    if (shape.size() == 1 && !comma)
      return fail(error, "'shape' must be a tuple: write (N,) for one dim");
    return true;
  }
  bool integer(int64_t &v, std::string &error) {
    size_t start = p_;
    uint64_t acc = 0;
    while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') {
      acc = acc * 10 + uint64_t(s_[p_] - '0');
      if (acc > uint64_t(INT64_MAX))
        return fail(error, "a 'shape' entry is too large");
      ++p_;
    }
    if (p_ == start || (p_ < s_.size() && (std::isalnum(uint8_t(s_[p_])) ||
                                           s_[p_] == '.' || s_[p_] == '_'))) {
      // Python 2 wrote long integers as `3L`.
      if (p_ > start && p_ < s_.size() && s_[p_] == 'L' &&
          (p_ + 1 == s_.size() || !std::isalnum(uint8_t(s_[p_ + 1])))) {
        ++p_;
      } else {
        size_t end = s_.find_first_of(",)", start);
        return fail(error, "'shape' entries must be non-negative integers, "
                           "got '" +
                               std::string(s_.substr(start, end - start)) +
                               "'");
      }
    }
    v = int64_t(acc);
    return true;
  }

  std::string_view s_;
  size_t p_ = 0;
};

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// `descr` -> dtype. Accepts numpy's spellings of the little-endian /
/// byte-order-free types: '<f4', '=f4', '|u1', '<u1', 'b1', ...
bool parseDescr(std::string descr, DLDataType &dtype, std::string &error) {
  std::string original = descr;
  if (descr.empty() || std::string_view("=<|>").find(descr[0]) ==
                           std::string_view::npos)
    descr.insert(0, "="); // no byte order given: native
  if (descr.size() == 3 && descr[2] == '1' &&
      (descr[0] == '<' || descr[0] == '=' || descr[0] == '>'))
    descr[0] = '|'; // one-byte types have no byte order
  if (descr[0] == '=')
    descr[0] = '<'; // native order on this (little-endian) host
  for (const Descr &d : kDescrs)
    if (descr == d.text) {
      dtype = {d.code, d.bits, 1};
      return true;
    }
  error = "unsupported dtype '" + original + "'";
  if (descr[0] == '>')
    error += " (big-endian data)";
  else
    error += " (bool, int8-64, uint8-64 and float16/32/64 are supported)";
  return false;
}

/// Copies Fortran-order elements into C order.
std::string fortranToC(std::string_view data, const std::vector<int64_t> &shape,
                       size_t elemBytes, size_t elems) {
  const size_t rank = shape.size();
  std::vector<size_t> fstride(rank), idx(rank, 0);
  size_t s = 1;
  for (size_t d = 0; d < rank; ++d) {
    fstride[d] = s;
    s *= size_t(shape[d]);
  }
  std::string out(data.size(), '\0');
  size_t src = 0; // element offset in Fortran order of idx
  for (size_t i = 0; i < elems; ++i) {
    std::memcpy(&out[i * elemBytes], data.data() + src * elemBytes, elemBytes);
    // Next C-order index: the last dim moves fastest.
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < size_t(shape[d])) {
        src += fstride[d];
        break;
      }
      src -= fstride[d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
  return out;
}

} // namespace

bool parseNpy(std::string_view bytes, NpyArray &out, std::string &error) {
  out = NpyArray();
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
    error = "not a .npy file";
    return false;
  }
  const unsigned major = uint8_t(bytes[6]), minor = uint8_t(bytes[7]);
  size_t hlen = 0, start;
  if (major == 1 && minor == 0) {
    hlen = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    start = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (bytes.size() < 12) {
      error = "truncated header";
      return false;
    }
    for (int i = 3; i >= 0; --i)
      hlen = (hlen << 8) | uint8_t(bytes[8 + i]);
    start = 12;
  } else {
    error = "unsupported .npy version " + std::to_string(major) + "." +
            std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)";
    return false;
  }
  if (hlen > bytes.size() - start) {
    error = "truncated header (it declares " + std::to_string(hlen) +
            " bytes, the file has " + std::to_string(bytes.size() - start) +
            " after the preamble)";
    return false;
  }
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  if (!HeaderParser(bytes.substr(start, hlen)).parse(descr, fortran, shape,
                                                      error) ||
      !parseDescr(descr, out.dtype, error))
    return false;
  const size_t elemBytes = out.dtype.bits / 8;
  size_t elems = 1, need = 0;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(elems, size_t(d), &elems)) {
      error = "shape " + shapeString(shape) + " has too many elements";
      return false;
    }
  const size_t have = bytes.size() - start - hlen;
  if (__builtin_mul_overflow(elems, elemBytes, &need) || need != have) {
    error = "shape " + shapeString(shape) + " of '" + descr + "' needs " +
            (need || elems == 0 ? std::to_string(need) + " bytes"
                                : std::string("more bytes than exist")) +
            " of data, the file has " + std::to_string(have) +
            (need > have ? " (truncated data)" : " (trailing bytes)");
    return false;
  }
  out.shape = std::move(shape);
  std::string_view data = bytes.substr(start + hlen);
  if (fortran && out.shape.size() > 1)
    out.data = fortranToC(data, out.shape, elemBytes, elems);
  else
    out.data.assign(data);
  return true;
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return false;
  }
  if (!parseNpy(ss.str(), out, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
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
