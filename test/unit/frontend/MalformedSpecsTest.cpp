//===- MalformedSpecsTest.cpp - one case per distinct diagnostic ----------===//
//
// A table of malformed specs, one per diagnostic the lexer, the parser and
// the config evaluator can emit. Each must produce exactly one error (no
// cascades) at the exact line:col, with the expected message. The config
// evaluator runs only when lexing and parsing succeeded, as in the driver.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"
#include "txc/Frontend/ConstEval.h"

#include <gtest/gtest.h>

#include <iterator>
#include <set>

using namespace txc;

namespace {

struct MalformedSpec {
  const char *name; // test name suffix
  std::string text;
  uint32_t line, col;
  const char *message;                     // a substring of the message
  const char *hint = nullptr;              // a substring of the hint
  std::vector<std::string> overrides = {}; // -D flags
};

void PrintTo(const MalformedSpec &spec, std::ostream *os) { *os << spec.name; }

class MalformedSpecs : public ::testing::TestWithParam<MalformedSpec> {};

TEST_P(MalformedSpecs, ExactlyOneErrorAtTheRightPlace) {
  const MalformedSpec &spec = GetParam();
  test::Parsed p(spec.text);
  if (!p.diags->hasErrors())
    evaluateConfig(*p.module, spec.overrides, *p.diags);
  ASSERT_EQ(p.errors(), 1u) << p.report();
  const Diagnostic *error = nullptr;
  for (const Diagnostic &d : p.diags->getDiagnostics())
    if (d.severity == Severity::Error)
      error = &d;
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->loc.line, spec.line) << p.report();
  EXPECT_EQ(error->loc.col, spec.col) << p.report();
  EXPECT_NE(error->message.find(spec.message), std::string::npos)
      << "message: " << error->message;
  if (spec.hint) {
    EXPECT_NE(error->hint.find(spec.hint), std::string::npos)
        << "hint: " << error->hint;
  }
  // Formatting never fails and always names the position.
  std::string text = p.diags->format(*error);
  EXPECT_NE(text.find("error: "), std::string::npos);
}

std::string deepParens(int depth) {
  return "config a = " + std::string(depth, '(') + "1" +
         std::string(depth, ')') + "\n";
}

const MalformedSpec kSpecs[] = {
    //===--- lexer
    //---------------------------------------------------------===//
    {"StrayCharacter", "model m\nconfig a = 1 $ 2\n", 2, 14,
     "unexpected character '$'"},
    {"NonAscii", "config a = \xC3\xA9\n", 1, 12,
     "unexpected character '\xC3\xA9' (U+00E9)", "only ASCII"},
    {"InvalidUtf8", "config a = \xFF\n", 1, 12, "invalid UTF-8 byte 0xFF"},
    {"ExponentWithoutDigits", "config a = 1e\n", 1, 12,
     "malformed number '1e': the exponent has no digits"},
    {"TwoDecimalPoints", "config a = 3.4.5\n", 1, 12,
     "a number has at most one decimal point"},
    {"TrailingDecimalPoint", "config a = 3.\n", 1, 12,
     "expected a digit after the decimal point", "write '3.0'"},
    {"LeadingDecimalPoint", "config a = .5\n", 1, 12,
     "expected a digit before the decimal point", "write '0.5'"},
    {"NumberRunsIntoLetter", "config a = 2.5x\n", 1, 12,
     "a number cannot run into a letter or '_'"},
    {"NameStartsWithDigit", "def f(x) {\n  y = g(x, 7bias = false)\n}\n", 2, 12,
     "invalid name '7bias': a name cannot start with a digit"},
    {"IntegerTooLarge", "config a = 99999999999999999999\n", 1, 12,
     "is too large"},
    {"FloatOutOfRange", "config a = 1e999\n", 1, 12, "is out of range"},
    {"StringLiteral", "config a = \"x\"\n", 1, 12,
     "string literals are not part of the spec language"},
    {"UnterminatedString", "config a = 'x\n", 1, 12,
     "unterminated string literal"},
    {"DoubledAmpersand", "config a = true && false\n", 1, 17,
     "'&&' is not an operator", "use '&'"},
    //===--- parser: declarations -----------------------------------------===//
    {"ModelWithoutName", "model\n", 1, 6,
     "expected a model name after 'model', found end of file"},
    {"ModelTwice", "model a\nmodel b\n", 2, 1, "duplicate 'model' declaration"},
    {"ConfigWithoutEquals", "config d_model 512\n", 1, 16,
     "expected '=' after config name 'd_model'"},
    {"ConfigTrailingComma", "config a = 1,\n", 1, 14,
     "expected a config name after ','"},
    {"ArgumentDoubleComma", "def f(x) {\n  y = linear(x,, 4)\n}\n", 2, 16,
     "expected an expression, found ','"},
    {"ConfigMissingComma", "config a = 1\n  b = 2\n", 1, 13,
     "expected ',' between config items"},
    {"ConfigJunkAfterValue", "config a = 1 2\n", 1, 14,
     "unexpected number '2' after config value 'a'", "missing an operator?"},
    {"DimWithEquals", "dim B = 64\n", 1, 7, "expected '<=' after dim name 'B'",
     "dim B <= 64"},
    {"DimMissingComma", "dim B <= 4 C <= 8\n", 1, 12,
     "expected ',' between dims"},
    {"DimJunkAfterBound", "dim B <= 4 )\n", 1, 12,
     "unexpected ')' after the bound of dim 'B'"},
    {"NotADeclaration", "confg a = 1\n", 1, 1,
     "expected a declaration (model, kind, config, dim, def, entry or "
     "optimizer), found identifier 'confg'",
     "did you mean 'config'?"},
    {"TopLevelStatement", "x = 1\n", 1, 1,
     "statements must be inside the body of a 'def' or an 'entry'"},
    {"StrayClosingBrace", "def f(x) { return x }\n}\n", 2, 1,
     "unexpected '}' outside of any block"},
    {"DefRedefined", "def f(x) { return x }\ndef f(y) { return y }\n", 2, 5,
     "redefinition of 'f'"},
    {"EntryRedefined", "entry e(x) { } entry e(y) { }\n", 1, 22,
     "redefinition of entry 'e'"},
    {"DuplicateParameter", "def f(x, x) { return x }\n", 1, 10,
     "duplicate parameter 'x' in 'f'"},
    {"KeywordAsName", "def f(as) { return 1 }\n", 1, 7,
     "'as' is a keyword and cannot be a parameter name"},
    {"UnknownElementType", "def f(x: f16[B]) { return x }\n", 1, 10,
     "unknown element type 'f16'; expected f32, i32 or bool"},
    {"EmptyShape", "def f(x: []) { return x }\n", 1, 10, "empty shape '[]'"},
    {"ElementTypeWithoutShape", "def f(x: i32) { return x }\n", 1, 13,
     "expected '[' after element type 'i32'"},
    {"TypeWithoutBrackets", "def f(x: B) { return x }\n", 1, 10,
     "expected a type after ':', found identifier 'B'"},
    {"UnclosedShape", "def f(x: [B, S) { return x }\n", 1, 15,
     "expected ']' to close the shape opened at 1:10"},
    {"ShapeMissingComma", "def f(x: [B S]) { return x }\n", 1, 13,
     "expected ',' between dimensions"},
    {"ParametersMissingComma", "def f(x y) { return x }\n", 1, 9,
     "expected ',' between parameters"},
    {"UnclosedParameters", "def f(x { return x }\n", 1, 9,
     "expected ')' to close the parameter list of 'f' opened at 1:6"},
    {"ParameterDefault", "def f(x = 1) { return x }\n", 1, 9,
     "parameters cannot have default values"},
    {"DefWithoutParameters", "def f { return 1 }\n", 1, 7,
     "expected '(' after the name of 'f'"},
    {"DefWithResults", "def f(x) -> y { return x }\n", 1, 10,
     "only an 'entry' lists results with '->'"},
    {"ArrowWithoutResults", "entry e(x) -> { }\n", 1, 15,
     "expected a result name after '->', found '{'"},
    {"DuplicateResult", "entry e(x) -> r, r { r = x }\n", 1, 18,
     "duplicate result 'r' in entry 'e'"},
    {"MissingOpenBrace", "def f(x)\n  return x\n}\n", 1, 9,
     "expected '{' to begin the body of 'f'"},
    {"MissingCloseBrace", "def f(x) {\n  return x\n", 2, 11,
     "expected '}' to close the body of 'f' opened at 1:10"},
    {"OptimizerWithoutParens", "optimizer adam lr = 1\n", 1, 16,
     "expected '(' after optimizer name 'adam'"},
    {"UnclosedOptimizer", "optimizer adam(lr = 1\n", 1, 22,
     "expected ')' to close optimizer 'adam' opened at 1:15"},
    {"OptimizerTwice", "optimizer a(lr = 1)\noptimizer b(lr = 2)\n", 2, 1,
     "duplicate 'optimizer' declaration"},
    //===--- parser: statements -------------------------------------------===//
    {"UnusedCall", "def f(x) {\n  linear(x, 4)\n}\n", 2, 3,
     "the result of the call to 'linear' is not used"},
    {"ComparisonAsAssignment", "def f(x) {\n  y == x\n}\n", 2, 5,
     "expected '=' to assign to 'y', found '=='"},
    {"NameWithoutAssignment", "def f(x) {\n  y + x\n}\n", 2, 5,
     "expected '=' after 'y'"},
    {"NotAStatement", "def f(x) {\n  3\n}\n", 2, 3,
     "expected a statement, found number '3'"},
    {"JunkAfterStatement", "def f(x) {\n  return x x\n}\n", 2, 12,
     "unexpected identifier 'x' after the end of the statement",
     "missing an operator?"},
    {"AssignToKeyword", "def f(x) {\n  as = 3\n}\n", 2, 3,
     "'as' is a keyword and cannot be assigned to"},
    {"ForWithoutVariable", "def f(x) {\n  for in 0..2 { }\n}\n", 2, 7,
     "expected a loop variable name after 'for'"},
    {"ForWithoutIn", "def f(x) {\n  for i 0..2 { }\n}\n", 2, 9,
     "expected 'in' after loop variable 'i'"},
    {"ForWithoutRange", "def f(x) {\n  for i in 0 2 { }\n}\n", 2, 14,
     "expected '..' between the bounds of the loop over 'i'"},
    //===--- parser: expressions ------------------------------------------===//
    {"UnclosedCall", "def f(x) {\n  y = linear(x, 4\n  return y\n}\n", 2, 18,
     "expected ')' to close call to 'linear' opened at 2:13"},
    {"ArgumentsMissingComma", "def f(x) {\n  y = linear(x 4)\n}\n", 2, 16,
     "expected ',' between the arguments of call to 'linear'"},
    {"PositionalAfterKeyword", "def f(x) {\n  y = linear(bias = false, x)\n}\n",
     2, 28, "positional argument after keyword argument 'bias'"},
    {"KeywordGivenTwice", "def f(x) {\n  y = g(k = 1, k = 2)\n}\n", 2, 16,
     "argument 'k' is given twice"},
    {"AsAfterName", "def f(x) {\n  y = x as s\n}\n", 2, 9,
     "'as' can only follow a call"},
    {"AsWithoutName", "def f(x) {\n  y = g(x) as\n}\n", 2, 14,
     "expected a scope name after 'as', found '}'"},
    {"ScopeTrailingDot", "def f(x) {\n  y = g(x) as a.\n}\n", 2, 17,
     "expected a scope name after '.'"},
    {"EmptyScopeIndex", "def f(x) {\n  y = g(x) as l[]\n}\n", 2, 17,
     "expected an index in 'l[...]'"},
    {"UnclosedScopeIndex", "def f(x) {\n  y = g(x) as l[i\n}\n", 2, 18,
     "expected ']' to close the index of 'l' opened at 2:16"},
    {"TwoScopes", "def f(x) {\n  y = g(x) as a as b\n}\n", 2, 17,
     "a call has only one 'as' scope"},
    {"UnclosedParen", "def f(x) {\n  y = (x + 1\n}\n", 2, 13,
     "expected ')' to close '(' opened at 2:7"},
    {"MissingOperand", "def f(x) {\n  y = x +\n}\n", 2, 10,
     "expected an expression, found '}'"},
    {"MissingValueBeforeNextStatement", "def f(x) {\n  y =\n  return x\n}\n", 2,
     6, "expected an expression, found keyword 'return'"},
    {"MissingValueBeforeAssignment", "def f(x) {\n  y =\n  z = x\n}\n", 2, 6,
     "expected an expression after '='"},
    {"KeywordInExpression", "def f(x) {\n  y = in + 1\n}\n", 2, 7,
     "expected an expression, found keyword 'in'"},
    {"ChainedComparison", "def f(x) {\n  y = a < b < c\n}\n", 2, 13,
     "comparisons cannot be chained"},
    {"TooDeep", deepParens(300), 1, 268, "expression is nested too deeply"},
    //===--- config evaluation --------------------------------------------===//
    {"DivisionByZero", "config a = 1 / 0\n", 1, 14, "division by zero"},
    {"UnknownName", "config d_model = 1, b = d_modl\n", 1, 25,
     "unknown name 'd_modl'", "did you mean 'd_model'?"},
    {"ConfigTwice", "config a = 1, a = 2\n", 1, 15,
     "config value 'a' is defined twice"},
    {"DimBoundNotPositive", "dim B <= 0\n", 1, 10,
     "the bound of dim 'B' must be a positive integer, got 0"},
    {"DimBoundOverTheLimit", "config batch = 2 ** 62\ndim B <= batch\n", 2, 10,
     "the bound of dim 'B' is 4611686018427387904, over the limit of "
     "2147483647 (2^31 - 1)"},
    {"DimBoundOverTheLimitByOverride",
     "config batch = 64\ndim B <= batch\n",
     2,
     10,
     "the bound of dim 'B' is 2147483648, over the limit",
     nullptr,
     {"-D batch=2**31"}},
    {"ConfigNamesADim", "dim B <= 4\nconfig B = 1\n", 2, 8,
     "'B' is already declared as a dim"},
    {"DimNamesAConfig", "config B = 1\ndim B <= 4\n", 2, 5,
     "'B' is already declared as a config value"},
    {"DimTwice", "dim B <= 4, B <= 5\n", 1, 13, "dim 'B' is declared twice"},
    {"SqrtOfNegative", "config a = sqrt(-1)\n", 1, 12,
     "sqrt of a negative number"},
    {"LogOfZero", "config a = log(0)\n", 1, 12, "log of a non-positive number"},
    {"IntegerOverflow", "config a = 2 ** 63\n", 1, 14,
     "integer overflow in '**'"},
    {"FloatOverflow", "config a = 3.0 ** 10000\n", 1, 16,
     "float overflow in '**'"},
    {"BoolAsNumber", "config a = true + 1\n", 1, 12,
     "cannot use a bool as a number in '+'"},
    {"NumberAsBoolNot", "config a = !1\n", 1, 13,
     "operand of '!' must be a bool, got int"},
    {"NumberAsBoolOr", "config a = 1 | true\n", 1, 12,
     "operands of '|' must be bools, got int"},
    {"OrderedBools", "config a = true < false\n", 1, 17,
     "'<' needs numbers, got bools"},
    {"BoolEqualsNumber", "config a = true == 1\n", 1, 17,
     "cannot compare a bool with a number"},
    {"UnknownFunction", "config a = sqr(4)\n", 1, 12,
     "unknown function 'sqr' in a constant expression", "did you mean 'sqrt'?"},
    // `2.0 * noam(...)` said only "unknown function 'noam'".
    {"ScheduleInConstant", "config a = 2.0 * noam(8, warmup = 10)\n", 1, 18,
     "'noam' is a learning-rate schedule, not a function of constant "
     "expressions",
     "give it as the lr itself, scaled by its own argument: `lr = "
     "noam(d_model, warmup = 4000, factor = 2.0)`"},
    {"WrongArgumentCount", "config a = min(1)\n", 1, 12,
     "'min' takes at least 2 arguments, got 1"},
    {"KeywordArgumentToBuiltin", "config a = sqrt(x = 1)\n", 1, 17,
     "'sqrt' takes no keyword arguments"},
    {"ScopeInConstant", "config a = abs(1) as s\n", 1, 22,
     "'as' has no meaning in a constant expression"},
    {"ZeroToNegativePower", "config a = 0 ** -1\n", 1, 14,
     "zero cannot be raised to a negative power"},
    {"NegativeToFractionalPower", "config a = (-8) ** 0.5\n", 1, 17,
     "a negative number cannot be raised to a fractional power"},
    {"OverrideUnknownName",
     "config d_model = 1\n",
     0,
     0,
     "-D d_modle=128: no config value named 'd_modle'",
     "did you mean 'd_model'?",
     {"-D d_modle=128"}},
    {"OverrideWithoutValue",
     "config a = 1\n",
     0,
     0,
     "-D a: expected 'name=value'",
     nullptr,
     {"-D a"}},
    {"OverrideEmptyValue",
     "config a = 1\n",
     0,
     0,
     "-D a=: missing value after '='",
     nullptr,
     {"-D a="}},
    {"OverrideBadName",
     "config a = 1\n",
     0,
     0,
     "-D 1a=2: '1a' is not a config name",
     nullptr,
     {"-D 1a=2"}},
    {"OverrideBadValue",
     "config a = 1\n",
     0,
     0,
     "-D a=abc: unknown name 'abc'",
     nullptr,
     {"-D a=abc"}},
    {"OverrideSyntaxError",
     "config a = 1\n",
     0,
     0,
     "-D a=(1: expected ')' to close '(' opened at 1:1",
     nullptr,
     {"-D a=(1"}},
};

INSTANTIATE_TEST_SUITE_P(Table, MalformedSpecs, ::testing::ValuesIn(kSpecs),
                         [](const ::testing::TestParamInfo<MalformedSpec> &i) {
                           return std::string(i.param.name);
                         });

TEST(MalformedSpecsTable, HasOneCasePerDiagnostic) {
  EXPECT_GE(std::size(kSpecs), 25u);
  // No two cases test the same message.
  std::set<std::string> messages;
  for (const MalformedSpec &spec : kSpecs)
    EXPECT_TRUE(messages.insert(spec.message).second) << spec.message;
}

} // namespace
