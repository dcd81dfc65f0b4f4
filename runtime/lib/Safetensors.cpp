//===- Safetensors.cpp - the safetensors weights format -------------------===//

#include "tandem/runtime/Safetensors.h"

#include "FileBytes.h"
#include "Json.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tandem::rt;

namespace {

// The format's own limit on the header.
constexpr uint64_t kMaxHeaderSize = 100000000;

struct DTypeName {
  const char *name;
  DType dtype;
};
constexpr DTypeName kDTypes[] = {{"F32", DType::F32},   {"F16", DType::F16},
                                 {"BF16", DType::BF16}, {"I64", DType::I64},
                                 {"I32", DType::I32},   {"BOOL", DType::Bool}};

const char *nameOf(DType dtype) {
  for (const DTypeName &entry : kDTypes)
    if (entry.dtype == dtype)
      return entry.name;
  return "?";
}

/// A non-negative int64: the parser reads "0", "1", ... as unsigned and
/// "-0" as signed; a float ("1.0", "1e2") is none.
bool readCount(const json::Value &item, int64_t &value) {
  if (item.is_number_unsigned()) {
    if (item.get<uint64_t>() > uint64_t(INT64_MAX))
      return false;
    value = item.get<int64_t>();
    return true;
  }
  if (!item.is_number_integer())
    return false;
  value = item.get<int64_t>();
  return value >= 0;
}

/// The list of non-negative integers under `key` of `object`.
bool readIntegers(const json::Value &object, const char *key,
                  std::vector<int64_t> &out) {
  auto list = object.find(key);
  if (list == object.end() || !list->is_array())
    return false;
  out.clear();
  for (const json::Value &item : *list) {
    int64_t value;
    if (!readCount(item, value))
      return false;
    out.push_back(value);
  }
  return true;
}

} // namespace

SafetensorsFile::SafetensorsFile(SafetensorsFile &&other) noexcept {
  *this = std::move(other);
}

SafetensorsFile &SafetensorsFile::operator=(SafetensorsFile &&other) noexcept {
  if (this != &other) {
    unmap();
    entries = std::move(other.entries);
    meta = std::move(other.meta);
    mapping = other.mapping;
    mappingSize = other.mappingSize;
    other.mapping = nullptr;
    other.mappingSize = 0;
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() { unmap(); }

void SafetensorsFile::unmap() {
  if (mapping)
    munmap(mapping, mappingSize);
  mapping = nullptr;
  mappingSize = 0;
}

bool SafetensorsFile::open(const std::string &path, std::string &error) {
  unmap();
  int fd = openRegularFile(path, error);
  if (fd < 0)
    return false;
  struct stat info;
  if (fstat(fd, &info) != 0) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  size_t size = info.st_size;
  void *bytes = nullptr;
  if (size > 0) {
    bytes = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bytes == MAP_FAILED) {
      error = "cannot map '" + path + "': " + std::strerror(errno);
      ::close(fd);
      return false;
    }
  }
  ::close(fd);
  mapping = bytes;
  mappingSize = size;
  if (!parse(static_cast<const uint8_t *>(bytes), size, error)) {
    error = "'" + path + "': " + error;
    unmap();
    return false;
  }
  return true;
}

bool SafetensorsFile::parse(const uint8_t *bytes, size_t size,
                            std::string &error) {
  entries.clear();
  meta.clear();
  if (size < 8) {
    error = "not a safetensors file: " + std::to_string(size) +
            " bytes, fewer than the 8-byte header length";
    return false;
  }
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > kMaxHeaderSize || headerSize > size - 8) {
    error = "the header length " + std::to_string(headerSize) +
            " does not fit in the file of " + std::to_string(size) + " bytes";
    return false;
  }
  std::string header(reinterpret_cast<const char *>(bytes + 8), headerSize);
  json::Value root;
  std::string jsonError;
  if (!json::parse(header, root, jsonError)) {
    error = "the header is not valid JSON: " + jsonError;
    return false;
  }
  if (!root.is_object()) {
    error = "the header is not a JSON object";
    return false;
  }
  const uint8_t *data = bytes + 8 + headerSize;
  uint64_t dataSize = size - 8 - headerSize;
  // In name order (json::Value's objects are sorted maps); names are unique
  // (json::parse refuses a key repeated in an object).
  for (const auto &[name, value] :
       root.get_ref<const json::Value::object_t &>()) {
    if (name == "__metadata__") {
      if (!value.is_object()) {
        error = "'__metadata__' is not an object";
        return false;
      }
      for (const auto &[key, text] :
           value.get_ref<const json::Value::object_t &>()) {
        if (!text.is_string()) {
          error = "metadata '" + key + "' is not a string";
          return false;
        }
        meta[key] = text.get<std::string>();
      }
      continue;
    }
    std::string where = "tensor '" + name + "'";
    if (!value.is_object()) {
      error = where + " is not described by an object";
      return false;
    }
    auto dtypeValue = value.find("dtype");
    if (dtypeValue == value.end() || !dtypeValue->is_string()) {
      error = where + " has no 'dtype' string";
      return false;
    }
    const std::string &dtypeText = dtypeValue->get_ref<const std::string &>();
    SafetensorsEntry entry;
    bool known = false;
    for (const DTypeName &candidate : kDTypes)
      if (dtypeText == candidate.name) {
        entry.dtype = candidate.dtype;
        known = true;
      }
    if (!known) {
      error = where + " has dtype '" + dtypeText +
              "', which Tandem does not support (F32, F16, BF16, I64, I32, "
              "BOOL)";
      return false;
    }
    if (!readIntegers(value, "shape", entry.shape)) {
      error = where + " has no 'shape' list of non-negative integers";
      return false;
    }
    std::vector<int64_t> offsets;
    if (!readIntegers(value, "data_offsets", offsets) ||
        offsets.size() != 2 || offsets[0] > offsets[1]) {
      error = where + " has no 'data_offsets' [begin, end] with begin <= end";
      return false;
    }
    if (uint64_t(offsets[1]) > dataSize) {
      error = where + " ends at byte " + std::to_string(offsets[1]) +
              " of a data section of " + std::to_string(dataSize) +
              " bytes: the file is truncated or corrupt";
      return false;
    }
    size_t item = dtypeSize(entry.dtype);
    std::optional<uint64_t> count =
        elementCount(entry.shape, UINT64_MAX / item);
    uint64_t length = uint64_t(offsets[1] - offsets[0]);
    if (!count || *count * item != length) {
      error = where + " is " + formatShape(entry.shape) + " " +
              nameOf(entry.dtype) + " but its data_offsets span " +
              std::to_string(length) + " bytes";
      return false;
    }
    entry.data = data + offsets[0];
    entry.bytes = length;
    entries.emplace(name, std::move(entry));
  }
  // Two tensors sharing bytes would alias: writing one through a mapping or
  // a copy would change the other. The format forbids it.
  std::vector<std::pair<const SafetensorsEntry *, const std::string *>> spans;
  for (const auto &[name, entry] : entries)
    if (entry.bytes > 0)
      spans.push_back({&entry, &name});
  std::sort(spans.begin(), spans.end(), [](const auto &a, const auto &b) {
    return a.first->data < b.first->data;
  });
  for (size_t i = 1; i < spans.size(); ++i) {
    const SafetensorsEntry &before = *spans[i - 1].first;
    if (before.data + before.bytes > spans[i].first->data) {
      error = "tensors '" + *spans[i - 1].second + "' and '" +
              *spans[i].second + "' overlap in the data section";
      return false;
    }
  }
  return true;
}

const SafetensorsEntry *SafetensorsFile::find(const std::string &name) const {
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

std::vector<uint8_t>
tandem::rt::encodeSafetensors(const std::vector<SafetensorsInput> &tensors) {
  std::string header = "{";
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const SafetensorsInput &tensor : tensors) {
    uint64_t bytes =
        elementCount(tensor.shape).value_or(0) * dtypeSize(tensor.dtype);
    sizes.push_back(bytes);
    if (header.size() > 1)
      header += ",";
    header += "\"" + tensor.name + "\":{\"dtype\":\"" + nameOf(tensor.dtype) +
              "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(tensor.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  // The data starts 8-byte aligned, as the format recommends.
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> bytes;
  bytes.reserve(8 + header.size() + offset);
  for (int i = 0; i < 8; ++i)
    bytes.push_back((uint64_t(header.size()) >> (8 * i)) & 0xff);
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const uint8_t *data = static_cast<const uint8_t *>(tensors[i].data);
    bytes.insert(bytes.end(), data, data + sizes[i]);
  }
  return bytes;
}
