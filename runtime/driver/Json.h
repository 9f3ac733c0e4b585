//===- Json.h - a small JSON value, parser and writer -----------*- C++ -*-===//
//
// RFC 8259 JSON: objects (key order kept, duplicate keys rejected), arrays,
// strings with every escape (\uXXXX with surrogate pairs, written as UTF-8),
// numbers, true/false/null. Used for the model metadata txc embeds, the
// safetensors header and the tokenizer's vocabulary files. Parse errors
// throw JsonError with the 1-based line and column. Nesting deeper than
// kMaxJsonDepth is an error, so hostile input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_JSON_H
#define TXRT_DRIVER_JSON_H

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace txrt::driver {

constexpr int kMaxJsonDepth = 256;

/// A parse error; what() is "line L, column C: message".
class JsonError : public std::runtime_error {
public:
  JsonError(const std::string &message, size_t offset, int line, int column);
  size_t offset() const { return offset_; }
  int line() const { return line_; }
  int column() const { return column_; }

private:
  size_t offset_;
  int line_, column_;
};

class JsonValue;
using JsonArray = std::vector<JsonValue>;
using JsonObject = std::vector<std::pair<std::string, JsonValue>>;

/// One JSON value. Numbers keep their double value and, when they were
/// written as an integer that fits int64, the exact integer.
class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  JsonValue() = default; // null
  JsonValue(std::nullptr_t) {}
  JsonValue(bool value) : kind_(Kind::Bool), bool_(value) {}
  JsonValue(int value) : JsonValue(int64_t(value)) {}
  JsonValue(int64_t value);
  JsonValue(double value);
  JsonValue(const char *value) : JsonValue(std::string(value)) {}
  JsonValue(std::string value);
  JsonValue(JsonArray value);
  JsonValue(JsonObject value);

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isNumber() const { return kind_ == Kind::Number; }
  /// A number written without fraction or exponent that fits int64.
  bool isInteger() const { return kind_ == Kind::Number && isInteger_; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }

  /// Accessors; calling one for the wrong kind throws std::logic_error.
  bool asBool() const;
  double asNumber() const;
  int64_t asInteger() const;
  const std::string &asString() const;
  const JsonArray &asArray() const;
  const JsonObject &asObject() const;

  /// The member `key` of an object, or nullptr (also for non-objects).
  const JsonValue *find(std::string_view key) const;

  /// "null", "boolean", "number", "string", "array", "object".
  static const char *kindName(Kind kind);

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  bool isInteger_ = false;
  int64_t integer_ = 0;
  double number_ = 0;
  // Shared so copies are cheap; values are immutable once built.
  std::shared_ptr<const std::string> string_;
  std::shared_ptr<const JsonArray> array_;
  std::shared_ptr<const JsonObject> object_;
};

/// Parses one JSON document (surrounding whitespace allowed).
JsonValue parseJson(std::string_view text);

/// Compact JSON text (no spaces); doubles in shortest round-trip form,
/// non-finite doubles as null.
std::string toJson(const JsonValue &value);

/// `text` as a quoted JSON string literal.
std::string quoteJson(std::string_view text);

} // namespace txrt::driver

#endif // TXRT_DRIVER_JSON_H
