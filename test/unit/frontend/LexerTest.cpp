//===- LexerTest.cpp - tokens of the spec language ------------------------===//
//
// Every token kind, number forms, locations, comments, and the lexical
// errors (each reported once, at its exact line:col, lexing going on).
//
//===----------------------------------------------------------------------===//

#include "txc/Frontend/Lexer.h"

#include <gtest/gtest.h>

using namespace txc;

namespace {

struct Lexed {
  explicit Lexed(const std::string &text)
      : file("l.tx", text), diags(file), tokens(tokenize(file, diags)) {}
  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> out;
    for (const Token &t : tokens)
      out.push_back(t.kind);
    return out;
  }
  SourceFile file;
  DiagnosticEngine diags;
  std::vector<Token> tokens;
};

using K = TokenKind;

TEST(LexerTest, EveryPunctuationAndOperator) {
  Lexed l("( ) [ ] { } , : . .. = -> + - * / // % ** == != < <= > >= & | ! @");
  EXPECT_EQ(l.diags.getNumErrors(), 0u);
  std::vector<K> expected = {
      K::LParen,    K::RParen,     K::LBracket,  K::RBracket, K::LBrace,
      K::RBrace,    K::Comma,      K::Colon,     K::Dot,      K::DotDot,
      K::Equal,     K::Arrow,      K::Plus,      K::Minus,    K::Star,
      K::Slash,     K::SlashSlash, K::Percent,   K::StarStar, K::EqualEqual,
      K::BangEqual, K::Less,       K::LessEqual, K::Greater,  K::GreaterEqual,
      K::Amp,       K::Pipe,       K::Bang,      K::At,       K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  for (const Token &t : l.tokens) {
    if (!t.is(K::Eof)) {
      EXPECT_EQ(t.text, spelling(t.kind));
    }
  }
}

TEST(LexerTest, OperatorsWithoutSpaces) {
  Lexed l("a**-b//c<=d->e==f!=!g");
  std::vector<K> expected = {
      K::Identifier, K::StarStar,   K::Minus,      K::Identifier,
      K::SlashSlash, K::Identifier, K::LessEqual,  K::Identifier,
      K::Arrow,      K::Identifier, K::EqualEqual, K::Identifier,
      K::BangEqual,  K::Bang,       K::Identifier, K::Eof};
  EXPECT_EQ(l.kinds(), expected);
}

TEST(LexerTest, KeywordsAndIdentifiers) {
  Lexed l("model config dim def entry optimizer for in return as true false "
          "models _x f32 i32 bool inx x9");
  std::vector<K> expected = {
      K::KwModel,    K::KwConfig,    K::KwDim,      K::KwDef,
      K::KwEntry,    K::KwOptimizer, K::KwFor,      K::KwIn,
      K::KwReturn,   K::KwAs,        K::KwTrue,     K::KwFalse,
      K::Identifier, K::Identifier,  K::Identifier, K::Identifier,
      K::Identifier, K::Identifier,  K::Identifier, K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_TRUE(isKeyword(l.tokens[i].kind));
  for (size_t i = 0; i < 6; ++i)
    EXPECT_TRUE(isDeclKeyword(l.tokens[i].kind));
  EXPECT_FALSE(isDeclKeyword(K::KwFor));
}

TEST(LexerTest, Numbers) {
  Lexed l("3 0.1 1e-9 2.5E+3 007 1E5 0");
  ASSERT_EQ(l.diags.getNumErrors(), 0u);
  ASSERT_EQ(l.tokens.size(), 8u);
  struct Expect {
    double value;
    bool isInteger;
  } expected[] = {{3, true}, {0.1, false}, {1e-9, false}, {2500, false},
                  {7, true}, {1e5, false}, {0, true}};
  for (size_t i = 0; i < 7; ++i) {
    SCOPED_TRACE(l.tokens[i].text);
    EXPECT_EQ(l.tokens[i].kind, K::Number);
    EXPECT_EQ(l.tokens[i].number, expected[i].value);
    EXPECT_EQ(l.tokens[i].isInteger, expected[i].isInteger);
  }
}

TEST(LexerTest, RangeAfterIntegerIsOneToken) {
  Lexed l("0..layers 1..2 3.5..4");
  std::vector<K> expected = {K::Number, K::DotDot, K::Identifier, K::Number,
                             K::DotDot, K::Number, K::Number,     K::DotDot,
                             K::Number, K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.diags.getNumErrors(), 0u);
  EXPECT_EQ(l.tokens[0].text, "0");
  EXPECT_TRUE(l.tokens[0].isInteger);
  EXPECT_EQ(l.tokens[6].number, 3.5);
}

TEST(LexerTest, LocationsCommentsAndLineStarts) {
  Lexed l("model m # a comment ( [\n  config a = 1\r\n\n\tdim B <= 2 #end");
  ASSERT_EQ(l.diags.getNumErrors(), 0u);
  std::vector<K> expected = {K::KwModel,    K::Identifier, K::KwConfig,
                             K::Identifier, K::Equal,      K::Number,
                             K::KwDim,      K::Identifier, K::LessEqual,
                             K::Number,     K::Eof};
  ASSERT_EQ(l.kinds(), expected);
  auto at = [&](size_t i, uint32_t line, uint32_t col, bool startsLine) {
    SCOPED_TRACE(i);
    EXPECT_EQ(l.tokens[i].loc.line, line);
    EXPECT_EQ(l.tokens[i].loc.col, col);
    EXPECT_EQ(l.tokens[i].startsLine, startsLine);
  };
  at(0, 1, 1, true);
  at(1, 1, 7, false);
  at(2, 2, 3, true);
  at(5, 2, 14, false);
  at(6, 4, 2, true); // a tab is one column
  at(9, 4, 11, false);
  EXPECT_EQ(l.tokens[9].endLoc().col, 12u);
}

TEST(LexerTest, EmptyAndCommentOnlyFiles) {
  EXPECT_EQ(Lexed("").kinds(), std::vector<K>{K::Eof});
  EXPECT_EQ(Lexed("# only a comment").kinds(), std::vector<K>{K::Eof});
  EXPECT_EQ(Lexed("\n\n  \t\n").kinds(), std::vector<K>{K::Eof});
}

TEST(LexerTest, StrayCharacterIsReportedAndLexingGoesOn) {
  Lexed l("x = 3 $ 4\ny = ??? 5");
  ASSERT_EQ(l.diags.getNumErrors(), 2u);
  const Diagnostic &first = l.diags.getDiagnostics()[0];
  EXPECT_EQ(first.loc.line, 1u);
  EXPECT_EQ(first.loc.col, 7u);
  EXPECT_EQ(first.message, "unexpected character '$'");
  const Diagnostic &second = l.diags.getDiagnostics()[1];
  EXPECT_EQ(second.loc.line, 2u);
  EXPECT_EQ(second.loc.col, 5u);
  EXPECT_EQ(second.message, "unexpected character '?' (and 2 more after it)");
  std::vector<K> expected = {K::Identifier, K::Equal,      K::Number, K::Error,
                             K::Number,     K::Identifier, K::Equal,  K::Error,
                             K::Number,     K::Eof};
  EXPECT_EQ(l.kinds(), expected);
}

TEST(LexerTest, StrayCharacterHints) {
  Lexed l("x = 1;");
  ASSERT_EQ(l.diags.getNumErrors(), 1u);
  EXPECT_EQ(l.diags.getDiagnostics()[0].hint, "statements need no ';'");
  Lexed caret("x ^ 2");
  EXPECT_EQ(caret.diags.getDiagnostics()[0].hint, "write powers as 'x ** y'");
}

// The 0 a point without digits needs goes before any exponent: the hint
// said '1.0' of 1.e5 (a different number).
TEST(LexerTest, PointWithoutDigitsHintKeepsTheExponent) {
  for (auto [text, hint] :
       {std::pair{"x = 1.e5", "write '1.0e5'"},
        {"x = 2.E-3", "write '2.0E-3'"},
        {"x = 3.", "write '3.0'"},
        // An exponent without digits: not '1.0e', itself malformed.
        {"x = 1.e", "write e.g. '1.0e5'"}}) {
    Lexed l(text);
    ASSERT_GE(l.diags.getNumErrors(), 1u) << text;
    EXPECT_EQ(l.diags.getDiagnostics()[0].hint, hint) << text;
  }
}

TEST(LexerTest, NonAsciiAndControlCharacters) {
  Lexed l("x = \xC3\xA9 + \x01");
  ASSERT_EQ(l.diags.getNumErrors(), 2u);
  EXPECT_EQ(l.diags.getDiagnostics()[0].message,
            "unexpected character '\xC3\xA9' (U+00E9)");
  EXPECT_EQ(l.diags.getDiagnostics()[0].loc.col, 5u);
  EXPECT_EQ(l.diags.getDiagnostics()[1].message, "unexpected character 0x01");
  Lexed bad("\xFF");
  EXPECT_EQ(bad.diags.getDiagnostics()[0].message, "invalid UTF-8 byte 0xFF");
  Lexed nul(std::string("a\0b", 3));
  EXPECT_EQ(nul.diags.getNumErrors(), 1u);
  EXPECT_EQ(nul.kinds(),
            (std::vector<K>{K::Identifier, K::Error, K::Identifier, K::Eof}));
}

TEST(LexerTest, StringLiterals) {
  Lexed l("x = \"hello\" + 1\ny = 'oops");
  ASSERT_EQ(l.diags.getNumErrors(), 2u);
  EXPECT_EQ(l.diags.getDiagnostics()[0].message,
            "string literals are not part of the spec language");
  EXPECT_EQ(l.diags.getDiagnostics()[0].loc.col, 5u);
  EXPECT_EQ(l.diags.getDiagnostics()[1].message,
            "unterminated string literal; string literals are not part of "
            "the spec language");
  EXPECT_EQ(l.diags.getDiagnostics()[1].loc.line, 2u);
  EXPECT_EQ(l.tokens[2].kind, K::Error);
  EXPECT_EQ(l.tokens[2].text, "\"hello\"");
  EXPECT_EQ(l.tokens[3].kind, K::Plus);
}

TEST(LexerTest, DoubledLogicalOperators) {
  Lexed l("a && b || c");
  ASSERT_EQ(l.diags.getNumErrors(), 2u);
  EXPECT_EQ(l.diags.getDiagnostics()[0].message, "'&&' is not an operator");
  EXPECT_EQ(l.diags.getDiagnostics()[0].hint, "use '&' (element-wise and)");
  EXPECT_EQ(l.diags.getDiagnostics()[1].loc.col, 8u);
  std::vector<K> expected = {K::Identifier, K::Amp,        K::Identifier,
                             K::Pipe,       K::Identifier, K::Eof};
  EXPECT_EQ(l.kinds(), expected);
}

struct MalformedNumber {
  const char *text;
  const char *message;
  double value; // of the Number token the lexer still produces
};

class MalformedNumberTest : public ::testing::TestWithParam<MalformedNumber> {};

TEST_P(MalformedNumberTest, OneErrorAndANumberToken) {
  const MalformedNumber &c = GetParam();
  Lexed l(std::string("x = ") + c.text + " + y");
  ASSERT_EQ(l.diags.getNumErrors(), 1u) << c.text;
  EXPECT_EQ(l.diags.getDiagnostics()[0].message, c.message);
  EXPECT_EQ(l.diags.getDiagnostics()[0].loc.col, 5u);
  std::vector<K> expected = {K::Identifier, K::Equal,      K::Number,
                             K::Plus,       K::Identifier, K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.tokens[2].text, c.text);
  EXPECT_EQ(l.tokens[2].number, c.value);
}

INSTANTIATE_TEST_SUITE_P(
    LexerTest, MalformedNumberTest,
    ::testing::Values(
        MalformedNumber{"1e",
                        "malformed number '1e': the exponent has no "
                        "digits",
                        1},
        MalformedNumber{"2.5e+",
                        "malformed number '2.5e+': the exponent has "
                        "no digits",
                        2.5},
        MalformedNumber{"3.4.5",
                        "malformed number '3.4.5': a number has at "
                        "most one decimal point",
                        3.4},
        MalformedNumber{"3.",
                        "malformed number '3.': expected a digit after "
                        "the decimal point",
                        3},
        MalformedNumber{".5",
                        "malformed number '.5': expected a digit before "
                        "the decimal point",
                        0.5},
        MalformedNumber{"2.5x",
                        "malformed number '2.5x': a number cannot "
                        "run into a letter or '_'",
                        2.5},
        MalformedNumber{"1e5e3",
                        "malformed number '1e5e3': a number cannot "
                        "run into a letter or '_'",
                        1e5},
        MalformedNumber{"99999999999999999999",
                        "integer literal '99999999999999999999' is too large; "
                        "integers are exact only up to 2**53 = "
                        "9007199254740992",
                        0},
        MalformedNumber{"1e999", "float literal '1e999' is out of range", 0}));

TEST(LexerTest, DigitsRunningIntoANameLexAsAName) {
  Lexed l("f(x, 7bias = false) 2x 1ex 1e 1e+");
  std::vector<K> expected = {
      K::Identifier, K::LParen,  K::Identifier, K::Comma,      K::Identifier,
      K::Equal,      K::KwFalse, K::RParen,     K::Identifier, K::Identifier,
      K::Number,     K::Number,  K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  ASSERT_EQ(l.diags.getNumErrors(), 5u);
  EXPECT_EQ(l.diags.getDiagnostics()[0].message,
            "invalid name '7bias': a name cannot start with a digit");
  EXPECT_EQ(l.diags.getDiagnostics()[0].loc.col, 6u);
  EXPECT_TRUE(l.tokens[4].malformed);
  EXPECT_FALSE(l.tokens[2].malformed);
  EXPECT_EQ(l.tokens[9].text, "1ex");
  EXPECT_EQ(l.diags.getDiagnostics()[3].message,
            "malformed number '1e': the exponent has no digits");
}

TEST(LexerTest, LargestExactIntegerAndUnderflow) {
  Lexed l("9007199254740992 1e-999");
  EXPECT_EQ(l.diags.getNumErrors(), 0u);
  EXPECT_EQ(l.tokens[0].number, 9007199254740992.0);
  EXPECT_EQ(l.tokens[1].number, 0.0);
}

TEST(LexerTest, Describe) {
  Lexed l("x 3 in ( ");
  EXPECT_EQ(describe(l.tokens[0]), "identifier 'x'");
  EXPECT_EQ(describe(l.tokens[1]), "number '3'");
  EXPECT_EQ(describe(l.tokens[2]), "keyword 'in'");
  EXPECT_EQ(describe(l.tokens[3]), "'('");
  EXPECT_EQ(describe(l.tokens[4]), "end of file");
}

TEST(LexerTest, EofRepeats) {
  SourceFile file("l.tx", "x");
  DiagnosticEngine diags(file);
  Lexer lexer(file, diags);
  EXPECT_EQ(lexer.next().kind, K::Identifier);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(lexer.next().kind, K::Eof);
}

} // namespace
