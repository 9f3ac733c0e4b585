//===- JsonTest.cpp - strict JSON over nlohmann-json ----------------------===//
//
// What Json.h adds to nlohmann-json (duplicate keys, depth, number range,
// exact integers, errors with line and column) and what the driver relies
// on nlohmann for (UTF-8 validation, escapes, key order, the writer).
//
//===----------------------------------------------------------------------===//
#include "formats/Json.h"
#include "TestUtil.h"

#include <cmath>

using namespace txrt::driver;

namespace {

TEST(JsonTest, ParsesEveryKindOfValue) {
  Json value = parseJson(R"( {"a": [1, -2.5, 3e2, true, false, null],
                              "b": {"c": "text"}, "d": 0} )");
  ASSERT_TRUE(value.is_object());
  const Json &a = *jsonMember(value, "a");
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(jsonInteger(a[0]), 1);
  EXPECT_FALSE(jsonInteger(a[1]));
  EXPECT_DOUBLE_EQ(a[1].get<double>(), -2.5);
  EXPECT_FALSE(jsonInteger(a[2])); // 3e2 is not written as an integer
  EXPECT_DOUBLE_EQ(a[2].get<double>(), 300.0);
  EXPECT_TRUE(a[3].get<bool>());
  EXPECT_FALSE(a[4].get<bool>());
  EXPECT_TRUE(a[5].is_null());
  EXPECT_EQ(jsonString(*jsonMember(*jsonMember(value, "b"), "c")), "text");
  EXPECT_EQ(jsonInteger(*jsonMember(value, "d")), 0);
  EXPECT_EQ(jsonMember(value, "missing"), nullptr);
  EXPECT_EQ(jsonMember(a, "a"), nullptr); // not an object
}

TEST(JsonTest, KeepsObjectKeyOrder) {
  Json value = parseJson(R"({"z": 1, "a": 2, "m": 3})");
  std::vector<std::string> keys;
  for (const auto &[key, member] : value.items())
    keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"z", "a", "m"}));
}

TEST(JsonTest, DecodesEscapes) {
  Json value = parseJson(
      R"("q\" b\\ s\/ \b\f\n\r\t \u0041 \u00e9 \u20ac \ud83d\ude00")");
  EXPECT_EQ(jsonString(value), "q\" b\\ s/ \b\f\n\r\t A \xC3\xA9 \xE2\x82\xAC "
                               "\xF0\x9F\x98\x80");
}

TEST(JsonTest, LargeIntegersStayExact) {
  Json value = parseJson("[9007199254740993, -9223372036854775808, "
                         "9223372036854775808, 18446744073709551616, 1.0]");
  EXPECT_EQ(jsonInteger(value[0]), 9007199254740993LL);
  EXPECT_EQ(jsonInteger(value[1]), INT64_MIN);
  EXPECT_FALSE(jsonInteger(value[2])); // beyond int64
  EXPECT_FALSE(jsonInteger(value[3]));
  EXPECT_DOUBLE_EQ(value[3].get<double>(), 18446744073709551616.0);
  EXPECT_FALSE(jsonInteger(value[4]));
}

TEST(JsonTest, ReportsErrorsWithLineAndColumn) {
  struct Case {
    const char *text;
    const char *fragment;
  };
  const Case cases[] = {
      {"", "line 1, column 1: "},
      {"{\"a\": 1,}", "expected string literal"},
      {"[1, 2", "unexpected end of input"},
      {"{\"a\" 1}", "expected ':'"},
      {"\"abc", "missing closing quote"},
      {"\"a\\qb\"", "invalid string"},
      {"\"\\u12G4\"", "'\\u' must be followed by 4 hex digits"},
      {"\"\\ud800\"", "surrogate U+D800..U+DBFF must be followed"},
      {"\"\\udc00\"", "surrogate U+DC00..U+DFFF must follow"},
      {"01", "expected end of input"},
      {"1.", "invalid number"},
      {"1e", "invalid number"},
      {"-", "invalid number"},
      {"tru", "invalid literal"},
      {"1e999", "number out of range"},
      {"{\"a\": 1, \"a\": 2}", "duplicate key \"a\""},
      {"[{\"b\": {\"a\": 1, \"a\": 2}}]", "duplicate key \"a\""},
      {"[1] x", "expected end of input"},
      {"\"a\nb\"", "control character"},
      {"[1, /* comment */ 2]", "invalid literal"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THROW_MESSAGE(parseJson(c.text), JsonError, c.fragment);
  }
  // The same key in sibling objects is fine.
  EXPECT_NO_THROW(parseJson(R"({"x": {"a": 1}, "y": {"a": 2}})"));
  try {
    parseJson("{\n  \"a\": [1,\n   x]}");
    FAIL();
  } catch (const JsonError &error) {
    EXPECT_EQ(error.line(), 3);
    EXPECT_EQ(error.column(), 4);
    EXPECT_NE(std::string(error.what()).find("line 3, column 4"),
              std::string::npos)
        << error.what();
  }
}

TEST(JsonTest, RefusesInvalidUtf8) {
  const char *cases[] = {
      "\"\xff\"",             // never valid
      "\"\xc3\"",             // truncated sequence
      "\"\xc0\xaf\"",         // overlong '/'
      "\"\xed\xa0\x80\"",     // a surrogate in UTF-8
      "\"\xf4\x90\x80\x80\"", // above U+10FFFF
      "{\"\xe9t\xe9\": 1}",   // Latin-1 in a key
  };
  for (const char *text : cases) {
    SCOPED_TRACE(text);
    EXPECT_THROW_MESSAGE(parseJson(text), JsonError, "UTF-8");
  }
  EXPECT_EQ(jsonString(parseJson("\"t\xc3\xba\"")), "t\xc3\xba");
}

TEST(JsonTest, RejectsNestingBeyondTheLimit) {
  std::string deep(kMaxJsonDepth + 10, '[');
  deep += std::string(kMaxJsonDepth + 10, ']');
  EXPECT_THROW_MESSAGE(parseJson(deep), JsonError, "nesting deeper than");
  // Far deeper than any stack would allow a recursive parser.
  std::string hostile(1'000'000, '[');
  EXPECT_THROW_MESSAGE(parseJson(hostile), JsonError, "nesting deeper than");
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(parseJson(ok));
}

TEST(JsonTest, WriterRoundTrips) {
  Json object = Json::object();
  object["name"] = "a \"quoted\"\n\x01 text";
  object["int"] = -42;
  object["real"] = 0.1;
  object["list"] = Json::array({true, nullptr, 1.5e300});
  std::string text = toJson(object);
  EXPECT_EQ(text, "{\"name\":\"a \\\"quoted\\\"\\n\\u0001 text\",\"int\":-42,"
                  "\"real\":0.1,\"list\":[true,null,1.5e+300]}");
  Json back = parseJson(text);
  EXPECT_EQ(jsonString(back["name"]), "a \"quoted\"\n\x01 text");
  EXPECT_EQ(jsonInteger(back["int"]), -42);
  EXPECT_EQ(back["real"].get<double>(), 0.1);
  EXPECT_EQ(toJson(back), text);
  EXPECT_EQ(toJson(Json(std::nan(""))), "null");
}

TEST(JsonTest, WriterRefusesOrReplacesInvalidUtf8) {
  Json value = Json::array({"ok", "bad \xff"});
  EXPECT_THROW_MESSAGE(toJson(value), JsonError, "invalid UTF-8");
  EXPECT_EQ(toJson(value, /*replaceInvalidUtf8=*/true),
            "[\"ok\",\"bad \xef\xbf\xbd\"]");
}

} // namespace

// The parser appends each member (nlohmann's DOM parser searched every key
// before it: n² in the keys) and appendMember builds an object the same
// way: the order, nesting and duplicate checks are as before.
TEST(JsonTest, ObjectsOfManyKeysKeepTheirOrderAndRefuseDuplicates) {
  Json built = Json::object();
  for (int i = 0; i < 20000; ++i)
    appendMember(built, "k" + std::to_string(19999 - i),
                 i % 2 ? Json(i) : Json::object({{"n", i}}));
  const std::string text = toJson(built);
  Json parsed = parseJson(text);
  ASSERT_EQ(parsed.size(), 20000u);
  EXPECT_EQ(parsed.begin().key(), "k19999");
  EXPECT_EQ(jsonMember(parsed, "k0")->get<int>(), 19999);
  EXPECT_EQ(jsonMember(*jsonMember(parsed, "k19999"), "n")->get<int>(), 0);
  EXPECT_EQ(toJson(parsed), text);
  // A duplicate at the end, and one inside a nested object whose parent
  // has the same key.
  EXPECT_THROW(parseJson(text.substr(0, text.size() - 1) + ",\"k5\":1}"),
               JsonError);
  EXPECT_NO_THROW(parseJson(R"({"a":{"a":1},"b":[{"a":2},{"a":3}]})"));
  EXPECT_THROW(parseJson(R"({"a":{"b":1,"b":2}})"), JsonError);
  Json empty;
  appendMember(empty, "x", 1);
  EXPECT_EQ(toJson(empty), R"({"x":1})");
}
