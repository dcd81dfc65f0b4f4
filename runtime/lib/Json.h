//===- Json.h - the little JSON the runtime reads ---------------*- C++ -*-===//
//
// A strict, bounded JSON reader for safetensors headers: objects, arrays,
// strings (with escapes), integers, and the literals; floats are read and
// kept as text. Nesting is capped so that hostile input cannot exhaust the
// stack.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_JSON_H
#define TANDEM_RUNTIME_LIB_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tandem::rt::json {

struct Value {
  enum Kind { Null, Bool, Integer, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  int64_t integer = 0;
  std::string text; // a string's value, or a non-integer number's spelling
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object; // in file order
};

/// Parses `text`; on failure returns false and sets `error` with the offset.
bool parse(const std::string &text, Value &value, std::string &error);

} // namespace tandem::rt::json

#endif // TANDEM_RUNTIME_LIB_JSON_H
