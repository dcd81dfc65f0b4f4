//===- Json.cpp - the JSON the runtime reads ------------------------------===//
//
// nlohmann's SAX parser feeding a document builder of our own rather than
// its DOM parser, for three things the DOM parser does not do: refuse
// nesting deeper than kMaxDepth as soon as it starts (so hostile input
// cannot make a document deep enough to exhaust the stack of anything that
// recurses over it later), refuse a repeated key (the DOM parser lets the
// last one win silently), and report a syntax error through the SAX
// interface instead of throwing.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <vector>

using namespace tandem::rt;
using json::Value;

namespace {

/// The deepest a value may lie: inside 64 arrays or objects.
constexpr size_t kMaxDepth = 64;

class DocumentBuilder : public nlohmann::json_sax<Value> {
public:
  DocumentBuilder(Value &root, std::string &error) : root(root), error(error) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool value) override { return add(value); }
  bool number_integer(number_integer_t value) override { return add(value); }
  bool number_unsigned(number_unsigned_t value) override { return add(value); }
  bool number_float(number_float_t value, const string_t &) override {
    return add(value);
  }
  bool string(string_t &value) override { return add(std::move(value)); }
  bool binary(binary_t &) override { // only binary formats have these
    error = "binary value in JSON";
    return false;
  }

  bool start_object(std::size_t) override { return open(Value::object()); }
  bool start_array(std::size_t) override { return open(Value::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t &name) override {
    if (containers.back()->contains(name)) {
      error = "key '" + name + "' appears twice in an object";
      return false;
    }
    pendingKey = std::move(name);
    return true;
  }

  bool parse_error(std::size_t position, const std::string &lastRead,
                   const nlohmann::detail::exception &e) override {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 6: syntax error while parsing value - invalid literal; last
    // read: 'tru}'; expected ...". Kept: what follows the first ": ",
    // without the text last read (a hostile file's string can be megabytes
    // long), and the offending byte's offset.
    std::string what = e.what();
    size_t colon = what.find(": ");
    std::string message =
        colon == std::string::npos ? what : what.substr(colon + 2);
    std::string echo = "; last read: '" + lastRead + "'";
    if (size_t at = message.find(echo); at != std::string::npos)
      message.erase(at, echo.size());
    // `position` counts the bytes read, the offending one included.
    error = message + " at byte " + std::to_string(position ? position - 1 : 0);
    return false;
  }

private:
  /// Puts `value` where the document is: the root, the next element of the
  /// innermost open array, or the member of the innermost open object under
  /// the pending key. Returns where it went, or null if it lies too deep.
  Value *place(Value value) {
    if (containers.size() > kMaxDepth) {
      error = "JSON nested too deeply (more than " + std::to_string(kMaxDepth) +
              " levels)";
      return nullptr;
    }
    if (containers.empty()) {
      root = std::move(value);
      return &root;
    }
    Value &parent = *containers.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    return &(parent[pendingKey] = std::move(value));
  }

  bool add(Value value) { return place(std::move(value)) != nullptr; }

  bool open(Value container) {
    Value *placed = place(std::move(container));
    if (!placed)
      return false;
    // Stays valid while open: only the innermost container grows, and
    // objects are node-based maps.
    containers.push_back(placed);
    return true;
  }

  bool close() {
    containers.pop_back();
    return true;
  }

  Value &root;
  std::string &error;
  std::vector<Value *> containers; // the open arrays and objects
  std::string pendingKey;
};

} // namespace

bool json::parse(const std::string &text, Value &value, std::string &error) {
  // nlohmann skips a byte order mark, which JSON text does not have (RFC
  // 8259, 8.1); the runtime never accepted one.
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    error = "a byte order mark before the JSON at byte 0";
    return false;
  }
  value = Value();
  error.clear();
  DocumentBuilder builder(value, error);
  if (Value::sax_parse(text, &builder))
    return true;
  if (error.empty())
    error = "malformed JSON";
  return false;
}
