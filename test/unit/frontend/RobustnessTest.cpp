//===- RobustnessTest.cpp - no crash, no hang, errors where text is bad ---===//
//
// Fuzz-ish: every prefix of the sample spec, thousands of random byte
// mutations of it and random token soups (all with fixed seeds). For each
// input the frontend must terminate without crashing, put every diagnostic
// inside the file, report errors whenever an independent check says the
// text is invalid (unbalanced brackets, a stray byte, a dangling operator),
// and, when it reports none, print a module that parses back to itself.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"
#include "txc/Frontend/ConstEval.h"
#include "txc/Frontend/Lexer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>

using namespace txc;

namespace {

/// Brackets match, ignoring comments (the language has no strings).
bool bracketsBalanced(const std::string &text) {
  std::string stack;
  bool comment = false;
  for (char c : text) {
    if (comment) {
      comment = c != '\n';
      continue;
    }
    switch (c) {
    case '#':
      comment = true;
      break;
    case '(':
      stack += ')';
      break;
    case '[':
      stack += ']';
      break;
    case '{':
      stack += '}';
      break;
    case ')':
    case ']':
    case '}':
      if (stack.empty() || stack.back() != c)
        return false;
      stack.pop_back();
      break;
    default:
      break;
    }
  }
  return stack.empty();
}

/// A byte outside comments that no token can contain.
bool hasStrayByte(const std::string &text) {
  static const std::string allowed = "()[]{},:.=-+*/%<>!&|#_ \t\r\n\f\v";
  bool comment = false;
  for (char c : text) {
    if (comment) {
      comment = c != '\n';
      continue;
    }
    if (c == '#') {
      comment = true;
      continue;
    }
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9');
    if (!alnum && allowed.find(c) == std::string::npos)
      return true;
  }
  return false;
}

/// The text ends with a token after which something must follow.
bool endsDangling(const std::string &text) {
  SourceFile file("d.tx", text);
  DiagnosticEngine diags(file);
  std::vector<Token> tokens = tokenize(file, diags);
  if (tokens.size() < 2)
    return false;
  const Token &last = tokens[tokens.size() - 2];
  switch (last.kind) {
  case TokenKind::Identifier:
  case TokenKind::Number:
  case TokenKind::RParen:
  case TokenKind::RBracket:
  case TokenKind::RBrace:
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    return false;
  default:
    return true;
  }
}

struct Stats {
  unsigned inputs = 0, clean = 0;
};

void checkOne(const std::string &text, Stats &stats) {
  ++stats.inputs;
  test::Parsed p(text);
  // Every diagnostic points into the file and formats.
  size_t lines = 1 + std::count(text.begin(), text.end(), '\n');
  for (const Diagnostic &d : p.diags->getDiagnostics()) {
    EXPECT_GE(d.loc.line, 1u) << text;
    EXPECT_LE(d.loc.line, lines) << text;
    EXPECT_GE(d.loc.col, 1u) << text;
    EXPECT_LE(d.loc.col, p.file->getLine(d.loc.line).size() + 1) << text;
    EXPECT_FALSE(d.message.empty());
    EXPECT_FALSE(p.diags->format(d).empty());
  }
  if (!bracketsBalanced(text) || hasStrayByte(text) || endsDangling(text)) {
    EXPECT_TRUE(p.diags->hasErrors()) << "accepted invalid text:\n" << text;
  }
  // Evaluating a partial module must be safe too.
  evaluateConfig(*p.module, {}, *p.diags);
  if (p.errors() != 0)
    return;
  ++stats.clean;
  std::string printed = ast::print(*p.module);
  test::Parsed again(printed);
  EXPECT_EQ(again.errors(), 0u) << again.report() << "\nprinted from:\n"
                                << text;
  EXPECT_EQ(ast::print(*again.module), printed);
}

TEST(RobustnessTest, EveryPrefixOfTheSample) {
  std::string spec = test::sampleSpec();
  Stats stats;
  for (size_t n = 0; n <= spec.size(); ++n)
    checkOne(spec.substr(0, n), stats);
  // Prefixes that end between declarations are valid specs.
  EXPECT_GT(stats.clean, 10u);
  EXPECT_LT(stats.clean, stats.inputs / 2);
}

TEST(RobustnessTest, RandomByteMutations) {
  const std::string spec = test::sampleSpec();
  const std::string interesting = "()[]{},:.=-+*/%<>!&|#_ \n\t0123456789eE.xa";
  std::mt19937 rng(20240611);
  auto pick = [&](size_t n) {
    return static_cast<size_t>(
        std::uniform_int_distribution<size_t>(0, n ? n - 1 : 0)(rng));
  };
  auto randomByte = [&]() -> char {
    if (pick(3) == 0)
      return static_cast<char>(pick(256));
    return interesting[pick(interesting.size())];
  };
  Stats stats;
  for (int round = 0; round < 4000; ++round) {
    std::string text = spec;
    int mutations = 1 + static_cast<int>(pick(4));
    for (int m = 0; m < mutations && !text.empty(); ++m) {
      size_t at = pick(text.size());
      switch (pick(6)) {
      case 0:
        text[at] = randomByte();
        break;
      case 1:
        text.erase(at, 1);
        break;
      case 2:
        text.insert(at, 1, randomByte());
        break;
      case 3:
        text.erase(at, 1 + pick(20));
        break;
      case 4: { // (separate statements: argument order is unspecified)
        size_t from = pick(text.size());
        size_t length = 1 + pick(30);
        text.insert(at, text.substr(from, length));
        break;
      }
      default: {
        size_t other = pick(text.size());
        std::swap(text[at], text[other]);
        break;
      }
      }
    }
    checkOne(text, stats);
  }
  EXPECT_EQ(stats.inputs, 4000u);
  // Both outcomes are exercised: most mutations break the spec, some (in a
  // comment, a name, a number) leave it valid.
  EXPECT_GT(stats.clean, 100u);
  EXPECT_LT(stats.clean, 3000u);
  std::printf("mutations: %u inputs, %u parsed cleanly\n", stats.inputs,
              stats.clean);
}

TEST(RobustnessTest, RandomTokenSoup) {
  const char *pieces[] = {
      "model",   "config", "dim",  "def",  "entry", "optimizer", "for",
      "in",      "return", "as",   "true", "false", "x",         "f",
      "d_model", "i32",    "bool", "0",    "1.5",   "1e-9",      "(",
      ")",       "[",      "]",    "{",    "}",     ",",         ":",
      ".",       "..",     "=",    "->",   "+",     "-",         "*",
      "/",       "//",     "%",    "**",   "==",    "!=",        "<",
      "<=",      ">",      ">=",   "&",    "|",     "!",         "\n",
      "#c\n",    "$"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> piece(0, std::size(pieces) - 1);
  std::uniform_int_distribution<int> length(1, 60);
  Stats stats;
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    for (int i = length(rng); i > 0; --i)
      text += std::string(pieces[piece(rng)]) + " ";
    checkOne(text, stats);
  }
  EXPECT_EQ(stats.inputs, 3000u);
}

TEST(RobustnessTest, PathologicalInputs) {
  Stats stats;
  checkOne(std::string(200000, '('), stats);
  checkOne(std::string(200000, '{'), stats);
  checkOne(std::string(200000, '}'), stats);
  checkOne("def f(x) {" + std::string(100000, '-') + "}", stats);
  checkOne("config a = " + std::string(50000, '!') + "true", stats);
  checkOne(std::string(10000, '$'), stats);
  checkOne(std::string(5000, '\0'), stats);
  std::string manyErrors;
  for (int i = 0; i < 2000; ++i)
    manyErrors += "def f(x { y = (1 }\n";
  checkOne(manyErrors, stats);
  std::string manyDecls;
  for (int i = 0; i < 5000; ++i)
    manyDecls +=
        "config c" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  checkOne(manyDecls, stats);
  EXPECT_EQ(stats.clean, 1u);
}

TEST(RobustnessTest, LongListsParseInLinearTime) {
  // Duplicate parameters, results and keyword arguments used to be found by
  // comparing each with all before it: 200000 of them took minutes. The
  // bound leaves a wide margin for a loaded machine; linear, this takes
  // well under a second.
  const int n = 200000;
  std::string params, results, args;
  for (int i = 0; i < n; ++i) {
    std::string name = "p" + std::to_string(i);
    params += (i ? ", " : "") + name;
    results += (i ? ", " : "") + name;
    args += (i ? ", " : "") + name + " = 1";
  }
  std::string text = "def f(" + params + ", p7) { return p0 }\n" +
                     "entry e(" + params + ") -> " + results +
                     " { x = f(" + args + ", p9 = 2) }\n";
  auto start = std::chrono::steady_clock::now();
  test::Parsed p(text);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  EXPECT_LT(seconds, 20.0);
  ASSERT_EQ(p.errors(), 2u) << p.report().substr(0, 2000);
  EXPECT_EQ(p.diags->getDiagnostics()[0].message,
            "duplicate parameter 'p7' in 'f'");
  EXPECT_EQ(p.diags->getDiagnostics()[2].message,
            "argument 'p9' is given twice");
}

} // namespace
