//===- Json.h - strict JSON over nlohmann-json ------------------*- C++ -*-===//
//
// The driver's JSON (the model metadata txc embeds, safetensors headers,
// tokenizer files) is nlohmann::ordered_json (object key order kept). This
// header adds what the driver needs on top of nlohmann's RFC 8259 parser,
// which already validates UTF-8, pairs \u surrogates and refuses comments,
// trailing commas and leading zeros:
//
//  - duplicate object keys are an error (nlohmann keeps one silently);
//  - nesting deeper than kMaxJsonDepth is an error;
//  - a number beyond double's range is an error;
//  - jsonInteger() gives exact 64-bit integers and refuses 1.0 or 1e3.
//
// nlohmann's exceptions stop here: parse failures throw JsonError with the
// 1-based line and column, writing invalid UTF-8 throws JsonError too.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_JSON_H
#define TXRT_DRIVER_JSON_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace txrt::driver {

using Json = nlohmann::ordered_json;

constexpr int kMaxJsonDepth = 256;

/// A parse or write error; what() is "line L, column C: message" for parse
/// errors.
class JsonError : public std::runtime_error {
public:
  JsonError(const std::string &message, int line, int column);
  int line() const { return line_; }
  int column() const { return column_; }

private:
  int line_, column_;
};

/// Parses one JSON document (surrounding whitespace allowed) strictly: see
/// the file comment. Throws JsonError.
Json parseJson(std::string_view text);

/// Appends `key: value` to `object` (null: made an object) without looking
/// for `key`, which the caller knows is new: ordered_json's operator[]
/// searches every key, so an object of n keys built with it took n² time
/// (a 30000-word tokenizer's save took 14 s).
void appendMember(Json &object, std::string key, Json value);

/// Parses a txc file of `format` ("txc-labels") and `version` into `root`;
/// returns why it is not one ("'format' is not \"txc-labels\"", a JSON
/// syntax error), or "" when it is.
std::string parseFormattedJson(std::string_view text, std::string_view format,
                               int64_t version, Json &root);

/// The member `key` of an object, or nullptr (also for non-objects).
const Json *jsonMember(const Json &object, std::string_view key);

/// The exact value of a JSON integer that fits int64 (written without
/// fraction or exponent), else nullopt.
std::optional<int64_t> jsonInteger(const Json &value);

/// The string of a JSON string value (precondition: value.is_string()).
inline const std::string &jsonString(const Json &value) {
  return value.get_ref<const std::string &>();
}

/// Compact JSON text (no spaces); doubles in shortest round-trip form,
/// non-finite doubles as null. Invalid UTF-8 in a string throws JsonError,
/// or is written as U+FFFD when `replaceInvalidUtf8`.
std::string toJson(const Json &value, bool replaceInvalidUtf8 = false);

} // namespace txrt::driver

#endif // TXRT_DRIVER_JSON_H
