//===- Json.h - the JSON the runtime reads ----------------------*- C++ -*-===//
//
// nlohmann::json, parsed strictly and within bounds for input that may be
// hostile (safetensors headers): nesting is capped, a key repeated in an
// object is refused (JSON leaves its meaning open), and no exception
// escapes: a malformed document is an error message with its byte offset.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_JSON_H
#define TANDEM_RUNTIME_LIB_JSON_H

#include <nlohmann/json.hpp>

#include <string>

namespace tandem::rt::json {

/// Objects keep their keys sorted (std::map): an object of n keys builds in
/// O(n log n), where nlohmann::ordered_json's would take O(n^2).
using Value = nlohmann::json;

/// Parses `text` into `value`; on failure returns false with `error`.
bool parse(const std::string &text, Value &value, std::string &error);

} // namespace tandem::rt::json

#endif // TANDEM_RUNTIME_LIB_JSON_H
