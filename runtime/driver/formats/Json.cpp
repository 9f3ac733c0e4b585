//===- Json.cpp - strict JSON over nlohmann-json --------------------------===//
//
// nlohmann's parser with a callback that refuses duplicate keys and deep
// nesting; its exceptions become JsonError with a line and column computed
// from the byte offset nlohmann reports.
//
//===----------------------------------------------------------------------===//
#include "formats/Json.h"

#include <unordered_set>
#include <vector>

namespace txrt::driver {

namespace {

std::string positionPrefix(int line, int column) {
  if (line <= 0)
    return "";
  return "line " + std::to_string(line) + ", column " + std::to_string(column) +
         ": ";
}

/// The text after nlohmann's "[json.exception.NAME.ID] " and, for parse
/// errors, after its own "parse error at line L, column C: ".
std::string describe(const nlohmann::json::exception &error) {
  std::string text = error.what();
  size_t bracket = text.find("] ");
  if (text.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
    text = text.substr(bracket + 2);
  if (text.rfind("parse error", 0) == 0) {
    size_t colon = text.find(": ");
    if (colon != std::string::npos)
      text = text.substr(colon + 2);
  }
  // nlohmann quotes what it last read, which may be the invalid UTF-8
  // itself: keep the message printable ASCII.
  for (char &c : text)
    if (static_cast<unsigned char>(c) >= 0x80)
      c = '?';
  return text;
}

} // namespace

JsonError::JsonError(const std::string &message, int line, int column)
    : std::runtime_error(positionPrefix(line, column) + message), line_(line),
      column_(column) {}

Json parseJson(std::string_view text) {
  // One set of keys per object being parsed.
  std::vector<std::unordered_set<std::string>> openObjects;
  auto strict = [&](int depth, Json::parse_event_t event, Json &parsed) {
    if (depth > kMaxJsonDepth)
      throw JsonError("nesting deeper than " + std::to_string(kMaxJsonDepth), 0,
                      0);
    switch (event) {
    case Json::parse_event_t::object_start:
      openObjects.emplace_back();
      break;
    case Json::parse_event_t::object_end:
      openObjects.pop_back();
      break;
    case Json::parse_event_t::key:
      if (!openObjects.back().insert(jsonString(parsed)).second)
        throw JsonError("duplicate key " + Json(jsonString(parsed)).dump(), 0,
                        0);
      break;
    default:
      break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), strict);
  } catch (const Json::parse_error &error) {
    // error.byte: 1-based index of the last character read.
    size_t offset = std::min(error.byte > 0 ? error.byte - 1 : 0, text.size());
    int line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i)
      if (text[i] == '\n') {
        ++line;
        lineStart = i + 1;
      }
    throw JsonError(describe(error), line, int(offset - lineStart) + 1);
  } catch (const Json::out_of_range &error) {
    // "number overflow parsing '1e999'"
    throw JsonError("number out of range (" + describe(error) + ")", 0, 0);
  } catch (const Json::exception &error) {
    throw JsonError(describe(error), 0, 0);
  }
}

std::string parseFormattedJson(std::string_view text, std::string_view format,
                               int64_t version, Json &root) {
  try {
    root = parseJson(text);
  } catch (const JsonError &error) {
    return error.what();
  }
  const Json *name = jsonMember(root, "format");
  if (!name || !name->is_string() || jsonString(*name) != format)
    return "'format' is not \"" + std::string(format) + "\"";
  const Json *number = jsonMember(root, "version");
  if (!number || jsonInteger(*number) != std::optional<int64_t>(version))
    return "'version' is not " + std::to_string(version);
  return "";
}

const Json *jsonMember(const Json &object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto found = object.find(std::string(key));
  return found == object.end() ? nullptr : &*found;
}

std::optional<int64_t> jsonInteger(const Json &value) {
  if (value.is_number_unsigned()) {
    uint64_t number = value.get<uint64_t>();
    if (number > uint64_t(INT64_MAX))
      return std::nullopt;
    return int64_t(number);
  }
  if (value.is_number_integer())
    return value.get<int64_t>();
  return std::nullopt;
}

std::string toJson(const Json &value, bool replaceInvalidUtf8) {
  try {
    return value.dump(-1, ' ', false,
                      replaceInvalidUtf8 ? Json::error_handler_t::replace
                                         : Json::error_handler_t::strict);
  } catch (const Json::exception &error) {
    // "invalid UTF-8 byte at index 0: 0xFF"
    throw JsonError("cannot write JSON: " + describe(error), 0, 0);
  }
}

} // namespace txrt::driver
