//===- Json.cpp - strict JSON over nlohmann-json --------------------------===//
//
// nlohmann's SAX parser with a builder that refuses duplicate keys and
// deep nesting; its exceptions become JsonError with a line and column
// computed from the byte offset nlohmann reports.
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

namespace {

/// Builds the document from nlohmann's SAX events, each object's members
/// appended in order: its DOM parser inserted each key with ordered_map's
/// operator[], which searches every key before it (a header of 80000
/// tensors took two minutes to parse, a 30000-word tokenizer seconds).
/// Refuses duplicate keys and nesting deeper than kMaxJsonDepth.
class StrictBuilder {
public:
  Json root;

  bool null() { return add(nullptr); }
  bool boolean(bool value) { return add(value); }
  bool number_integer(Json::number_integer_t value) { return add(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return add(value); }
  bool number_float(Json::number_float_t value, const std::string &) {
    return add(value);
  }
  bool string(std::string &value) { return add(std::move(value)); }
  bool binary(Json::binary_t &value) {
    return add(Json::binary(std::move(value)));
  }
  bool start_object(std::size_t) {
    open(add(Json::object()));
    keys_.emplace_back();
    return true;
  }
  bool key(std::string &key) {
    if (!keys_.back().insert(key).second)
      throw JsonError("duplicate key " + Json(key).dump(), 0, 0);
    key_ = std::move(key);
    return true;
  }
  bool end_object() {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    open(add(Json::array()));
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  [[noreturn]] bool parse_error(std::size_t, const std::string &,
                                const nlohmann::json::exception &error) {
    // Rethrown as the kind it is (the callers tell them apart).
    if (auto *parse = dynamic_cast<const Json::parse_error *>(&error))
      throw *parse;
    if (auto *range = dynamic_cast<const Json::out_of_range *>(&error))
      throw *range;
    throw JsonError(describe(error), 0, 0);
  }

private:
  /// Places `value` in the open container (or as the root); returns it.
  Json *add(Json value) {
    if (open_.empty()) {
      root = std::move(value);
      return &root;
    }
    Json &parent = *open_.back();
    if (parent.is_array()) {
      parent.get_ref<Json::array_t &>().push_back(std::move(value));
      return &parent.get_ref<Json::array_t &>().back();
    }
    auto &members = static_cast<Json::object_t::Container &>(
        parent.get_ref<Json::object_t &>());
    members.emplace_back(std::move(key_), std::move(value));
    return &members.back().second;
  }
  /// A container whose members follow (the last one of its parent: none
  /// is added to a parent while it is open, so the pointer stays good).
  void open(Json *container) {
    if (open_.size() >= size_t(kMaxJsonDepth))
      throw JsonError("nesting deeper than " + std::to_string(kMaxJsonDepth), 0,
                      0);
    open_.push_back(container);
  }

  std::vector<Json *> open_;
  std::vector<std::unordered_set<std::string>> keys_; ///< per open object
  std::string key_;
};

} // namespace

void appendMember(Json &object, std::string key, Json value) {
  if (object.is_null())
    object = Json::object();
  static_cast<Json::object_t::Container &>(object.get_ref<Json::object_t &>())
      .emplace_back(std::move(key), std::move(value));
}

Json parseJson(std::string_view text) {
  try {
    StrictBuilder builder;
    Json::sax_parse(text.begin(), text.end(), &builder);
    return std::move(builder.root);
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
