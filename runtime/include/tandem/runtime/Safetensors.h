//===- Safetensors.h - the safetensors weights format -----------*- C++ -*-===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON mapping each tensor name to {dtype, shape, data_offsets} (plus an
// optional "__metadata__" object of strings), then the data. The reader maps
// the file read-only and hands out pointers into the mapping; it checks
// everything it relies on: the header fits in the file, the JSON is well
// formed, dtypes are known, shapes are non-negative, each tensor's byte range
// is inside the data and exactly as long as its shape and dtype say, names
// are unique.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_SAFETENSORS_H
#define TANDEM_RUNTIME_SAFETENSORS_H

#include "tandem/runtime/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tandem::rt {

struct SafetensorsEntry {
  DType dtype;
  std::vector<int64_t> shape;
  /// Into the mapped (or parsed) file.
  const uint8_t *data = nullptr;
  size_t bytes = 0;
};

class SafetensorsFile {
public:
  SafetensorsFile() = default;
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;
  SafetensorsFile(SafetensorsFile &&other) noexcept;
  SafetensorsFile &operator=(SafetensorsFile &&other) noexcept;
  ~SafetensorsFile();

  /// Maps `path`; on failure returns false with `error` naming the file.
  bool open(const std::string &path, std::string &error);

  /// Parses bytes the caller keeps alive; `error` names no file.
  bool parse(const uint8_t *bytes, size_t size, std::string &error);

  /// The tensor called `name`, or null.
  const SafetensorsEntry *find(const std::string &name) const;

  const std::map<std::string, SafetensorsEntry> &tensors() const {
    return entries;
  }
  const std::map<std::string, std::string> &metadata() const { return meta; }
  /// The file's bytes as mapped (null, 0 when parsed from the caller's).
  const void *mappedBytes() const { return mapping; }
  size_t mappedSize() const { return mappingSize; }

private:
  void unmap();

  std::map<std::string, SafetensorsEntry> entries;
  std::map<std::string, std::string> meta;
  void *mapping = nullptr;
  size_t mappingSize = 0;
};

/// The bytes of a safetensors file holding `tensors` (in name order).
struct SafetensorsInput {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void *data;
};
std::vector<uint8_t>
encodeSafetensors(const std::vector<SafetensorsInput> &tensors);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_SAFETENSORS_H
