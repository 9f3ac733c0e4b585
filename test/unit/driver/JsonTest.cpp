//===- JsonTest.cpp - the driver's JSON parser and writer -----------------===//
#include "Json.h"
#include "TestUtil.h"

#include <cmath>

using namespace txrt::driver;

namespace {

TEST(JsonTest, ParsesEveryKindOfValue) {
  JsonValue value = parseJson(R"( {"a": [1, -2.5, 3e2, true, false, null],
                                   "b": {"c": "text"}, "d": 0} )");
  ASSERT_TRUE(value.isObject());
  const JsonArray &a = value.find("a")->asArray();
  ASSERT_EQ(a.size(), 6u);
  EXPECT_TRUE(a[0].isInteger());
  EXPECT_EQ(a[0].asInteger(), 1);
  EXPECT_FALSE(a[1].isInteger());
  EXPECT_DOUBLE_EQ(a[1].asNumber(), -2.5);
  EXPECT_FALSE(a[2].isInteger());
  EXPECT_DOUBLE_EQ(a[2].asNumber(), 300.0);
  EXPECT_TRUE(a[3].asBool());
  EXPECT_FALSE(a[4].asBool());
  EXPECT_TRUE(a[5].isNull());
  EXPECT_EQ(value.find("b")->find("c")->asString(), "text");
  EXPECT_EQ(value.find("d")->asInteger(), 0);
  EXPECT_EQ(value.find("missing"), nullptr);
}

TEST(JsonTest, KeepsObjectKeyOrder) {
  JsonValue value = parseJson(R"({"z": 1, "a": 2, "m": 3})");
  const JsonObject &object = value.asObject();
  ASSERT_EQ(object.size(), 3u);
  EXPECT_EQ(object[0].first, "z");
  EXPECT_EQ(object[1].first, "a");
  EXPECT_EQ(object[2].first, "m");
}

TEST(JsonTest, DecodesEscapes) {
  JsonValue value = parseJson(
      R"("q\" b\\ s\/ \b\f\n\r\t \u0041 \u00e9 \u20ac \ud83d\ude00")");
  EXPECT_EQ(value.asString(), "q\" b\\ s/ \b\f\n\r\t A \xC3\xA9 \xE2\x82\xAC "
                              "\xF0\x9F\x98\x80");
}

TEST(JsonTest, LargeIntegersStayExact) {
  JsonValue value = parseJson("[9007199254740993, -9223372036854775808, "
                              "18446744073709551616]");
  EXPECT_EQ(value.asArray()[0].asInteger(), 9007199254740993LL);
  EXPECT_EQ(value.asArray()[1].asInteger(), INT64_MIN);
  EXPECT_FALSE(value.asArray()[2].isInteger()); // beyond int64: a double
  EXPECT_DOUBLE_EQ(value.asArray()[2].asNumber(), 18446744073709551616.0);
}

TEST(JsonTest, ReportsErrorsWithLineAndColumn) {
  struct Case {
    const char *text;
    const char *fragment;
  };
  const Case cases[] = {
      {"", "expected a JSON value but the text ended"},
      {"{\"a\": 1,}", "expected a string key"},
      {"[1, 2", "expected ',' or ']'"},
      {"{\"a\" 1}", "expected ':'"},
      {"\"abc", "unterminated string"},
      {"\"a\\qb\"", "invalid escape '\\q'"},
      {"\"\\u12G4\"", "invalid hex digit"},
      {"\"\\ud800\"", "unpaired high surrogate"},
      {"\"\\udc00\"", "unpaired low surrogate"},
      {"01", "leading zeros"},
      {"1.", "expected a digit after '.'"},
      {"1e", "expected a digit in the exponent"},
      {"-", "expected a digit"},
      {"tru", "invalid literal"},
      {"1e999", "number out of range"},
      {"{\"a\": 1, \"a\": 2}", "duplicate key \"a\""},
      {"[1] x", "unexpected text after the JSON value"},
      {"\"a\nb\"", "control character in string"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THROW_MESSAGE(parseJson(c.text), JsonError, c.fragment);
  }
  try {
    parseJson("{\n  \"a\": [1,\n   x]}");
    FAIL();
  } catch (const JsonError &error) {
    EXPECT_EQ(error.line(), 3);
    EXPECT_EQ(error.column(), 4);
    EXPECT_NE(std::string(error.what()).find("line 3, column 4"),
              std::string::npos);
  }
}

TEST(JsonTest, RejectsNestingBeyondTheLimit) {
  std::string deep(kMaxJsonDepth + 10, '[');
  deep += std::string(kMaxJsonDepth + 10, ']');
  EXPECT_THROW_MESSAGE(parseJson(deep), JsonError, "nesting deeper than");
  std::string ok(50, '[');
  ok += std::string(50, ']');
  EXPECT_NO_THROW(parseJson(ok));
}

TEST(JsonTest, WriterRoundTrips) {
  JsonObject object;
  object.emplace_back("name", "a \"quoted\"\n\x01 text");
  object.emplace_back("int", int64_t(-42));
  object.emplace_back("real", 0.1);
  object.emplace_back("list", JsonArray{JsonValue(true), JsonValue(nullptr),
                                        JsonValue(1.5e300)});
  std::string text = toJson(JsonValue(object));
  EXPECT_EQ(text, "{\"name\":\"a \\\"quoted\\\"\\n\\u0001 text\",\"int\":-42,"
                  "\"real\":0.1,\"list\":[true,null,1.5e+300]}");
  JsonValue back = parseJson(text);
  EXPECT_EQ(back.find("name")->asString(), "a \"quoted\"\n\x01 text");
  EXPECT_EQ(back.find("int")->asInteger(), -42);
  EXPECT_EQ(back.find("real")->asNumber(), 0.1);
  EXPECT_EQ(toJson(back), text);
  EXPECT_EQ(toJson(JsonValue(std::nan(""))), "null");
}

TEST(JsonTest, WrongKindAccessThrows) {
  JsonValue value = parseJson("\"text\"");
  EXPECT_THROW(value.asNumber(), std::logic_error);
  EXPECT_THROW(value.asArray(), std::logic_error);
  EXPECT_THROW(parseJson("1.5").asInteger(), std::logic_error);
}

} // namespace
