//===- Json.cpp - the little JSON the runtime reads -----------------------===//

#include "Json.h"

#include <cctype>

using namespace tandem::rt;
using json::Value;

namespace {

constexpr int kMaxDepth = 64;

class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parseDocument(Value &value, std::string &error) {
    if (!parseValue(value, 0) || (skipSpace(), pos != text.size())) {
      if (message.empty())
        message = "unexpected text after the JSON value";
      error = message + " at byte " + std::to_string(pos);
      return false;
    }
    return true;
  }

private:
  bool fail(const char *what) {
    if (message.empty())
      message = what;
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool literal(const char *word) {
    size_t length = std::char_traits<char>::length(word);
    if (text.compare(pos, length, word) != 0)
      return fail("invalid literal");
    pos += length;
    return true;
  }

  bool parseValue(Value &value, int depth) {
    if (depth > kMaxDepth)
      return fail("JSON nested too deeply");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end of JSON");
    char c = text[pos];
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = Value::String;
      return parseString(value.text);
    }
    if (c == 't' || c == 'f') {
      value.kind = Value::Bool;
      value.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      value.kind = Value::Null;
      return literal("null");
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c)))
      return parseNumber(value);
    return fail("unexpected character");
  }

  bool parseNumber(Value &value) {
    size_t start = pos;
    bool negative = text[pos] == '-';
    if (negative)
      ++pos;
    if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos])))
      return fail("malformed number");
    bool overflow = false;
    uint64_t magnitude = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      uint64_t digit = text[pos++] - '0';
      if (magnitude > (uint64_t(INT64_MAX) - digit) / 10)
        overflow = true;
      else
        magnitude = magnitude * 10 + digit;
    }
    bool fraction = false;
    if (pos < text.size() && text[pos] == '.') {
      fraction = true;
      ++pos;
      if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos])))
        return fail("malformed number");
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      fraction = true;
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos])))
        return fail("malformed number");
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
    }
    if (fraction || overflow) {
      value.kind = Value::Number;
      value.text = text.substr(start, pos - start);
    } else {
      value.kind = Value::Integer;
      value.integer = negative ? -int64_t(magnitude) : int64_t(magnitude);
    }
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // the opening quote
    out.clear();
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        break;
      char escape = text[pos++];
      switch (escape) {
      case '"': case '\\': case '/':
        out += escape;
        break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (text.size() - pos < 4)
          return fail("truncated \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text[pos++];
          if (!std::isxdigit(static_cast<unsigned char>(h)))
            return fail("malformed \\u escape");
          code = code * 16 + (std::isdigit(static_cast<unsigned char>(h))
                                  ? h - '0'
                                  : (std::tolower(h) - 'a' + 10));
        }
        // Names are compared as bytes: encode the code unit as UTF-8.
        if (code < 0x80) {
          out += char(code);
        } else if (code < 0x800) {
          out += char(0xc0 | (code >> 6));
          out += char(0x80 | (code & 0x3f));
        } else {
          out += char(0xe0 | (code >> 12));
          out += char(0x80 | ((code >> 6) & 0x3f));
          out += char(0x80 | (code & 0x3f));
        }
        break;
      }
      default:
        return fail("invalid escape in a string");
      }
    }
    return fail("unterminated string");
  }

  bool parseArray(Value &value, int depth) {
    value.kind = Value::Array;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      value.array.emplace_back();
      if (!parseValue(value.array.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  bool parseObject(Value &value, int depth) {
    value.kind = Value::Object;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key in an object");
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':' after a key");
      ++pos;
      value.object.emplace_back(std::move(key), Value());
      if (!parseValue(value.object.back().second, depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  const std::string &text;
  size_t pos = 0;
  std::string message;
};

} // namespace

bool json::parse(const std::string &text, Value &value, std::string &error) {
  return Parser(text).parseDocument(value, error);
}
