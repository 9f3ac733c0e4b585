//===- Json.cpp - a small JSON parser and writer --------------------------===//
//
// A recursive-descent parser over a string_view with a depth limit, strict
// RFC 8259 grammar (no comments, no trailing commas, no leading zeros), and a
// compact writer. Numbers are converted with std::from_chars / to_chars, so
// neither depends on the C locale.
//
//===----------------------------------------------------------------------===//
#include "Json.h"

#include <charconv>
#include <cmath>
#include <unordered_set>

namespace txrt::driver {

JsonError::JsonError(const std::string &message, size_t offset, int line,
                     int column)
    : std::runtime_error("line " + std::to_string(line) + ", column " +
                         std::to_string(column) + ": " + message),
      offset_(offset), line_(line), column_(column) {}

//===----------------------------------------------------------------------===//
// JsonValue
//===----------------------------------------------------------------------===//

JsonValue::JsonValue(int64_t value)
    : kind_(Kind::Number), isInteger_(true), integer_(value),
      number_(double(value)) {}

JsonValue::JsonValue(double value) : kind_(Kind::Number), number_(value) {}

JsonValue::JsonValue(std::string value)
    : kind_(Kind::String),
      string_(std::make_shared<const std::string>(std::move(value))) {}

JsonValue::JsonValue(JsonArray value)
    : kind_(Kind::Array),
      array_(std::make_shared<const JsonArray>(std::move(value))) {}

JsonValue::JsonValue(JsonObject value)
    : kind_(Kind::Object),
      object_(std::make_shared<const JsonObject>(std::move(value))) {}

const char *JsonValue::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "?";
}

namespace {
[[noreturn]] void wrongKind(JsonValue::Kind want, JsonValue::Kind have) {
  throw std::logic_error(std::string("JSON value is a ") +
                         JsonValue::kindName(have) + ", not a " +
                         JsonValue::kindName(want));
}
} // namespace

bool JsonValue::asBool() const {
  if (kind_ != Kind::Bool)
    wrongKind(Kind::Bool, kind_);
  return bool_;
}

double JsonValue::asNumber() const {
  if (kind_ != Kind::Number)
    wrongKind(Kind::Number, kind_);
  return number_;
}

int64_t JsonValue::asInteger() const {
  if (!isInteger())
    throw std::logic_error("JSON value is not an integer");
  return integer_;
}

const std::string &JsonValue::asString() const {
  if (kind_ != Kind::String)
    wrongKind(Kind::String, kind_);
  return *string_;
}

const JsonArray &JsonValue::asArray() const {
  if (kind_ != Kind::Array)
    wrongKind(Kind::Array, kind_);
  return *array_;
}

const JsonObject &JsonValue::asObject() const {
  if (kind_ != Kind::Object)
    wrongKind(Kind::Object, kind_);
  return *object_;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const auto &member : *object_)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonValue parseDocument() {
    skipWhitespace();
    JsonValue value = parseValue(0);
    skipWhitespace();
    if (pos_ != text_.size())
      fail("unexpected text after the JSON value");
    return value;
  }

private:
  [[noreturn]] void fail(const std::string &message) const {
    failAt(pos_, message);
  }

  [[noreturn]] void failAt(size_t offset, const std::string &message) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw JsonError(message, offset, line, column);
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  void skipWhitespace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      ++pos_;
  }

  void expect(char c) {
    if (peek() != c || atEnd())
      fail(std::string("expected '") + c + "'" + describeHere());
    ++pos_;
  }

  std::string describeHere() const {
    if (atEnd())
      return " but the text ended";
    unsigned char c = static_cast<unsigned char>(peek());
    if (c >= 0x20 && c < 0x7f)
      return std::string(" but found '") + char(c) + "'";
    return " but found byte " + std::to_string(int(c));
  }

  JsonValue parseValue(int depth) {
    if (depth > kMaxJsonDepth)
      fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
    switch (peek()) {
    case '{':
      return parseObject(depth);
    case '[':
      return parseArray(depth);
    case '"':
      return JsonValue(parseString());
    case 't':
      parseKeyword("true");
      return JsonValue(true);
    case 'f':
      parseKeyword("false");
      return JsonValue(false);
    case 'n':
      parseKeyword("null");
      return JsonValue();
    default:
      if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
        return parseNumber();
      fail("expected a JSON value" + describeHere());
    }
  }

  void parseKeyword(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      fail("invalid literal (expected '" + std::string(word) + "')");
    pos_ += word.size();
  }

  JsonValue parseObject(int depth) {
    ++pos_; // '{'
    JsonObject members;
    std::unordered_set<std::string> seen;
    skipWhitespace();
    if (peek() == '}') {
      ++pos_;
      return JsonValue(std::move(members));
    }
    while (true) {
      skipWhitespace();
      size_t keyStart = pos_;
      if (peek() != '"')
        fail("expected a string key" + describeHere());
      std::string key = parseString();
      if (!seen.insert(key).second)
        failAt(keyStart, "duplicate key " + quoteJson(key));
      skipWhitespace();
      expect(':');
      skipWhitespace();
      JsonValue value = parseValue(depth + 1);
      members.emplace_back(std::move(key), std::move(value));
      skipWhitespace();
      if (peek() == ',' && !atEnd()) {
        ++pos_;
        continue;
      }
      if (peek() == '}' && !atEnd()) {
        ++pos_;
        return JsonValue(std::move(members));
      }
      fail("expected ',' or '}' in object" + describeHere());
    }
  }

  JsonValue parseArray(int depth) {
    ++pos_; // '['
    JsonArray elements;
    skipWhitespace();
    if (peek() == ']') {
      ++pos_;
      return JsonValue(std::move(elements));
    }
    while (true) {
      skipWhitespace();
      elements.push_back(parseValue(depth + 1));
      skipWhitespace();
      if (peek() == ',' && !atEnd()) {
        ++pos_;
        continue;
      }
      if (peek() == ']' && !atEnd()) {
        ++pos_;
        return JsonValue(std::move(elements));
      }
      fail("expected ',' or ']' in array" + describeHere());
    }
  }

  unsigned parseHex4() {
    if (pos_ + 4 > text_.size())
      fail("truncated \\u escape");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        value |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        value |= unsigned(c - 'A' + 10);
      else
        failAt(pos_ - 1, "invalid hex digit in \\u escape");
    }
    return value;
  }

  static void appendUtf8(std::string &out, unsigned codePoint) {
    if (codePoint < 0x80) {
      out += char(codePoint);
    } else if (codePoint < 0x800) {
      out += char(0xC0 | (codePoint >> 6));
      out += char(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
      out += char(0xE0 | (codePoint >> 12));
      out += char(0x80 | ((codePoint >> 6) & 0x3F));
      out += char(0x80 | (codePoint & 0x3F));
    } else {
      out += char(0xF0 | (codePoint >> 18));
      out += char(0x80 | ((codePoint >> 12) & 0x3F));
      out += char(0x80 | ((codePoint >> 6) & 0x3F));
      out += char(0x80 | (codePoint & 0x3F));
    }
  }

  unsigned parseEscapedCodePoint() {
    size_t start = pos_ - 2; // at the backslash
    unsigned unit = parseHex4();
    if (unit >= 0xDC00 && unit <= 0xDFFF)
      failAt(start, "unpaired low surrogate in \\u escape");
    if (unit < 0xD800 || unit > 0xDBFF)
      return unit;
    if (text_.substr(pos_, 2) != "\\u")
      failAt(start, "unpaired high surrogate in \\u escape");
    pos_ += 2;
    unsigned low = parseHex4();
    if (low < 0xDC00 || low > 0xDFFF)
      failAt(start, "invalid surrogate pair in \\u escape");
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string parseString() {
    size_t start = pos_;
    ++pos_; // '"'
    std::string out;
    while (true) {
      if (atEnd())
        failAt(start, "unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        failAt(pos_ - 1, "control character in string (escape it)");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (atEnd())
        failAt(start, "unterminated string");
      char escape = text_[pos_++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u':
        appendUtf8(out, parseEscapedCodePoint());
        break;
      default:
        failAt(pos_ - 2, std::string("invalid escape '\\") + escape + "'");
      }
    }
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  JsonValue parseNumber() {
    size_t start = pos_;
    if (peek() == '-')
      ++pos_;
    if (!isDigit(peek()) || atEnd())
      fail("expected a digit");
    if (peek() == '0') {
      ++pos_;
      if (isDigit(peek()) && !atEnd())
        failAt(start, "leading zeros are not allowed in numbers");
    } else {
      while (!atEnd() && isDigit(peek()))
        ++pos_;
    }
    bool integral = true;
    if (!atEnd() && peek() == '.') {
      integral = false;
      ++pos_;
      if (atEnd() || !isDigit(peek()))
        fail("expected a digit after '.'");
      while (!atEnd() && isDigit(peek()))
        ++pos_;
    }
    if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++pos_;
      if (!atEnd() && (peek() == '+' || peek() == '-'))
        ++pos_;
      if (atEnd() || !isDigit(peek()))
        fail("expected a digit in the exponent");
      while (!atEnd() && isDigit(peek()))
        ++pos_;
    }
    const char *first = text_.data() + start;
    const char *last = text_.data() + pos_;
    if (integral) {
      int64_t integer = 0;
      auto result = std::from_chars(first, last, integer);
      if (result.ec == std::errc() && result.ptr == last)
        return JsonValue(integer);
    }
    double number = 0;
    auto result = std::from_chars(first, last, number);
    if (result.ec == std::errc::result_out_of_range)
      failAt(start, "number out of range");
    if (result.ec != std::errc() || result.ptr != last)
      failAt(start, "invalid number");
    return JsonValue(number);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

} // namespace

JsonValue parseJson(std::string_view text) {
  return Parser(text).parseDocument();
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

std::string quoteJson(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (byte < 0x20) {
        out += "\\u00";
        out += kHex[byte >> 4];
        out += kHex[byte & 15];
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

namespace {
void writeJson(std::string &out, const JsonValue &value) {
  switch (value.kind()) {
  case JsonValue::Kind::Null:
    out += "null";
    return;
  case JsonValue::Kind::Bool:
    out += value.asBool() ? "true" : "false";
    return;
  case JsonValue::Kind::Number: {
    if (value.isInteger()) {
      out += std::to_string(value.asInteger());
      return;
    }
    double number = value.asNumber();
    if (!std::isfinite(number)) {
      out += "null";
      return;
    }
    char buffer[32];
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), number);
    out.append(buffer, result.ptr);
    return;
  }
  case JsonValue::Kind::String:
    out += quoteJson(value.asString());
    return;
  case JsonValue::Kind::Array: {
    out += '[';
    bool first = true;
    for (const JsonValue &element : value.asArray()) {
      if (!first)
        out += ',';
      first = false;
      writeJson(out, element);
    }
    out += ']';
    return;
  }
  case JsonValue::Kind::Object: {
    out += '{';
    bool first = true;
    for (const auto &[key, member] : value.asObject()) {
      if (!first)
        out += ',';
      first = false;
      out += quoteJson(key);
      out += ':';
      writeJson(out, member);
    }
    out += '}';
    return;
  }
  }
}
} // namespace

std::string toJson(const JsonValue &value) {
  std::string out;
  writeJson(out, value);
  return out;
}

} // namespace txrt::driver
