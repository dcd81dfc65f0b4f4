//===- Npy.cpp - NumPy .npy files -----------------------------------------===//

#include "tandem/runtime/Npy.h"

#include "FileBytes.h"

#include <cctype>
#include <cstdio>
#include <cstring>

using namespace tandem::rt;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// NumPy refuses headers above this size unless told otherwise; so do we.
constexpr size_t kMaxHeaderSize = 1 << 20;

struct Descr {
  const char *text;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", DType::F32}, {"<f2", DType::F16},
                             {"<i8", DType::I64}, {"<i4", DType::I32},
                             {"|b1", DType::Bool}};

/// `text` with bytes that are not printable ASCII written as \xNN, for a
/// message.
std::string printable(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
    out += escaped;
  }
  return out;
}

const char *descrOf(DType dtype) {
  for (const Descr &descr : kDescrs)
    if (descr.dtype == dtype)
      return descr.text;
  return nullptr;
}

/// A cursor over the header's Python dict literal.
class HeaderReader {
public:
  explicit HeaderReader(const std::string &text) : text(text) {}

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  bool readString(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool readWord(std::string &out) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos])))
      ++pos;
    out = text.substr(start, pos - start);
    return !out.empty();
  }
  bool readInteger(int64_t &out) {
    skipSpace();
    size_t start = pos;
    out = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (out > (INT64_MAX - 9) / 10)
        return false;
      out = out * 10 + (text[pos++] - '0');
    }
    // NumPy writes Python ints, which may carry an L suffix in old files.
    if (pos < text.size() && text[pos] == 'L')
      ++pos;
    return pos > start;
  }

private:
  const std::string &text;
  size_t pos = 0;
};

bool parseHeader(const std::string &header, NpyArray &array,
                 std::string &error) {
  HeaderReader reader(header);
  if (!reader.consume('{')) {
    error = "the header is not a Python dict";
    return false;
  }
  bool sawDescr = false, sawOrder = false, sawShape = false;
  while (!reader.consume('}')) {
    std::string key;
    if (!reader.readString(key) || !reader.consume(':')) {
      error = "the header dict is malformed";
      return false;
    }
    if (key == "descr") {
      std::string descr;
      if (!reader.readString(descr)) {
        error = "'descr' is not a string";
        return false;
      }
      // '=' is native order; this runtime runs on little-endian hosts only.
      if (!descr.empty() && descr[0] == '=')
        descr[0] = '<';
      bool known = false;
      for (const Descr &candidate : kDescrs)
        if (descr == candidate.text) {
          array.dtype = candidate.dtype;
          known = true;
        }
      if (!known) {
        descr = printable(descr);
        if (!descr.empty() && descr[0] == '>')
          error = "big-endian arrays are not supported (descr '" + descr +
                  "'): save it little-endian";
        else
          error = "unsupported dtype '" + descr +
                  "': expected float32 (<f4), float16 (<f2), int64 (<i8), "
                  "int32 (<i4) or bool (|b1)";
        return false;
      }
      sawDescr = true;
    } else if (key == "fortran_order") {
      std::string word;
      if (!reader.readWord(word) || (word != "False" && word != "True")) {
        error = "'fortran_order' is not True or False";
        return false;
      }
      if (word == "True") {
        error = "Fortran-order arrays are not supported: save it in C order "
                "(numpy.ascontiguousarray)";
        return false;
      }
      sawOrder = true;
    } else if (key == "shape") {
      if (!reader.consume('(')) {
        error = "'shape' is not a tuple";
        return false;
      }
      array.shape.clear();
      bool comma = false;
      while (!reader.consume(')')) {
        int64_t dim;
        if (!reader.readInteger(dim)) {
          error = "'shape' holds something other than non-negative integers";
          return false;
        }
        array.shape.push_back(dim);
        comma = reader.consume(',');
        if (!comma && !reader.peek(')')) {
          error = "'shape' is malformed";
          return false;
        }
      }
      // (4) is the integer 4 in Python; a one-element tuple is (4,).
      if (array.shape.size() == 1 && !comma) {
        error = "'shape' (" + std::to_string(array.shape[0]) +
                ") is not a tuple: one dimension is written (" +
                std::to_string(array.shape[0]) + ",)";
        return false;
      }
      sawShape = true;
    } else {
      error = "unexpected key '" + key + "' in the header";
      return false;
    }
    if (!reader.consume(',') && !reader.peek('}')) {
      error = "the header dict is malformed";
      return false;
    }
  }
  if (!sawDescr || !sawOrder || !sawShape) {
    error = "the header lacks 'descr', 'fortran_order' or 'shape'";
    return false;
  }
  return true;
}

} // namespace

bool tandem::rt::parseNpy(const uint8_t *bytes, size_t size, NpyArray &array,
                          std::string &error) {
  if (size < kMagicSize || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    error = "not a NumPy .npy file (no \\x93NUMPY magic)";
    return false;
  }
  if (size < kMagicSize + 2) {
    error = "the file is cut short inside its preamble";
    return false;
  }
  uint8_t major = bytes[6];
  size_t headerLength, offset;
  if (major == 1) {
    if (size < 10) {
      error = "the file is cut short inside its preamble";
      return false;
    }
    headerLength = bytes[8] | (size_t(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      error = "the file is cut short inside its preamble";
      return false;
    }
    headerLength = bytes[8] | (size_t(bytes[9]) << 8) |
                   (size_t(bytes[10]) << 16) | (size_t(bytes[11]) << 24);
    offset = 12;
  } else {
    error = "unsupported .npy version " + std::to_string(major) + "." +
            std::to_string(bytes[7]);
    return false;
  }
  if (headerLength > kMaxHeaderSize) {
    error = "the header claims " + std::to_string(headerLength) +
            " bytes, more than the 1 MiB allowed";
    return false;
  }
  if (size - offset < headerLength) {
    error = "the file is cut short inside its header";
    return false;
  }
  std::string header(reinterpret_cast<const char *>(bytes + offset),
                     headerLength);
  if (!parseHeader(header, array, error))
    return false;
  size_t item = dtypeSize(array.dtype);
  std::optional<uint64_t> count = elementCount(array.shape, UINT64_MAX / item);
  if (!count) {
    error = "the shape " + formatShape(array.shape) + " is too large";
    return false;
  }
  uint64_t dataBytes = *count * item;
  size_t dataStart = offset + headerLength;
  if (size - dataStart < dataBytes) {
    error = "the data is cut short: " + formatShape(array.shape) + " " +
            dtypeName(array.dtype) + " needs " + std::to_string(dataBytes) +
            " bytes, the file has " + std::to_string(size - dataStart);
    return false;
  }
  if (size - dataStart > dataBytes) {
    error = "the file has " + std::to_string(size - dataStart - dataBytes) +
            " bytes after the data of " + formatShape(array.shape);
    return false;
  }
  array.data.assign(bytes + dataStart, bytes + dataStart + dataBytes);
  // A bool is any nonzero byte (NumPy's view of a uint8 array); the kernels
  // compare bools as bytes, so they are made 0 or 1 here.
  if (array.dtype == DType::Bool)
    for (uint8_t &b : array.data)
      b = b != 0;
  return true;
}

bool tandem::rt::readNpy(const std::string &path, NpyArray &array,
                         std::string &error) {
  std::vector<uint8_t> bytes;
  if (!readFileBytes(path, bytes, error))
    return false;
  if (!parseNpy(bytes.data(), bytes.size(), array, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

std::vector<uint8_t> tandem::rt::encodeNpy(DType dtype,
                                           const std::vector<int64_t> &shape,
                                           const void *data) {
  std::string header = std::string("{'descr': '") + descrOf(dtype) +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : shape)
    header += std::to_string(dim) + (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1)
    header.resize(header.size() - 2);
  header += "), }";
  // Pad with spaces and a newline so the data starts 64-byte aligned.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(1);
  bytes.push_back(0);
  bytes.push_back(header.size() & 0xff);
  bytes.push_back((header.size() >> 8) & 0xff);
  bytes.insert(bytes.end(), header.begin(), header.end());
  uint64_t dataBytes = elementCount(shape).value_or(0) * dtypeSize(dtype);
  const uint8_t *begin = static_cast<const uint8_t *>(data);
  bytes.insert(bytes.end(), begin, begin + dataBytes);
  return bytes;
}

bool tandem::rt::writeNpy(const std::string &path, DType dtype,
                          const std::vector<int64_t> &shape, const void *data,
                          std::string &error) {
  if (!descrOf(dtype)) {
    error = std::string("cannot write ") + dtypeName(dtype) +
            " to .npy: NumPy has no such dtype";
    return false;
  }
  return writeFileBytes(path, encodeNpy(dtype, shape, data), error);
}
