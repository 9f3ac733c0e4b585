//===- ConstEvalTest.cpp - compile-time evaluation and config -------------===//
//
// Python-like arithmetic (values and kinds), every evaluation error at the
// sub-expression that caused it, and evaluateConfig: order, dims, `-D`
// overrides, duplicate and clashing names, and no cascades.
//
//===----------------------------------------------------------------------===//

#include "txc/Frontend/ConstEval.h"
#include "FrontendTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

using namespace txc;
using test::Parsed;

namespace {

using Kind = ConstValue::Kind;

const std::map<std::string, ConstValue> &environment() {
  static const std::map<std::string, ConstValue> env = {
      {"d_model", ConstValue::ofInt(512)},
      {"heads", ConstValue::ofInt(8)},
      {"dropout", ConstValue::ofFloat(0.1)},
      {"train", ConstValue::ofBool(true)}};
  return env;
}

/// Evaluates `text` against `environment()`.
struct Evaluated {
  explicit Evaluated(const std::string &text)
      : file("c.tx", text), diags(file) {
    ast::ExprPtr e = parseExpression(file, diags);
    if (!e)
      return;
    std::vector<std::string> candidates;
    for (const auto &entry : environment())
      candidates.push_back(entry.first);
    value = evaluateConst(
        *e,
        [](const std::string &name) -> std::optional<ConstValue> {
          auto it = environment().find(name);
          if (it == environment().end())
            return std::nullopt;
          return it->second;
        },
        candidates, diags);
  }
  SourceFile file;
  DiagnosticEngine diags;
  std::optional<ConstValue> value;
};

struct ValueCase {
  const char *text;
  ConstValue expected;
};

class ConstValueTest : public ::testing::TestWithParam<ValueCase> {};

TEST_P(ConstValueTest, Evaluates) {
  Evaluated e(GetParam().text);
  ASSERT_TRUE(e.value) << GetParam().text;
  EXPECT_EQ(e.diags.getNumErrors(), 0u);
  EXPECT_EQ(e.value->str(), GetParam().expected.str());
  EXPECT_EQ(*e.value, GetParam().expected);
}

ConstValue I(int64_t v) { return ConstValue::ofInt(v); }
ConstValue F(double v) { return ConstValue::ofFloat(v); }
ConstValue B(bool v) { return ConstValue::ofBool(v); }

INSTANTIATE_TEST_SUITE_P(
    ConstEvalTest, ConstValueTest,
    ::testing::Values(
        ValueCase{"1 + 2", I(3)}, ValueCase{"2 * 3 - 10", I(-4)},
        ValueCase{"7 / 2", F(3.5)}, ValueCase{"6 / 3", F(2.0)},
        ValueCase{"7 // 2", I(3)}, ValueCase{"-7 // 2", I(-4)},
        ValueCase{"7 // -2", I(-4)}, ValueCase{"7.5 // 2", F(3.0)},
        ValueCase{"7 % 3", I(1)}, ValueCase{"-7 % 3", I(2)},
        ValueCase{"7 % -3", I(-2)}, ValueCase{"7.5 % 2", F(1.5)},
        ValueCase{"-7.5 % 2", F(0.5)}, ValueCase{"-0.0 % 5", F(0.0)},
        ValueCase{"-10.0 % 5", F(0.0)}, ValueCase{"0.0 % -5", F(-0.0)},
        ValueCase{"2 ** 10", I(1024)}, ValueCase{"2 ** -1", F(0.5)},
        ValueCase{"2.0 ** 3", F(8.0)}, ValueCase{"-2 ** 2", I(-4)},
        ValueCase{"(-2) ** 3", I(-8)}, ValueCase{"4 ** 0.5", F(2.0)},
        ValueCase{"2 ** 3 ** 2", I(512)}, ValueCase{"1 + 0.5", F(1.5)},
        ValueCase{"-(3)", I(-3)}, ValueCase{"-2.5", F(-2.5)},
        ValueCase{"1 < 2", B(true)}, ValueCase{"1 == 1.0", B(true)},
        ValueCase{"2 >= 3", B(false)}, ValueCase{"2 != 3", B(true)},
        ValueCase{"2 <= 2", B(true)}, ValueCase{"3 > 2.5", B(true)},
        ValueCase{"true == false", B(false)},
        ValueCase{"true != false", B(true)},
        ValueCase{"true & !false", B(true)},
        ValueCase{"false | false", B(false)},
        ValueCase{"1 < 2 & 3 < 4 | false", B(true)},
        ValueCase{"sqrt(16)", F(4.0)}, ValueCase{"exp(0)", F(1.0)},
        ValueCase{"log(1)", F(0.0)}, ValueCase{"min(3, 1, 2)", I(1)},
        ValueCase{"max(1, 2.5)", F(2.5)}, ValueCase{"min(2, 2.0)", I(2)},
        ValueCase{"max(2.0, 2)", F(2.0)}, ValueCase{"abs(-3)", I(3)},
        ValueCase{"abs(-2.5)", F(2.5)}, ValueCase{"int(2.9)", I(2)},
        ValueCase{"int(-2.9)", I(-2)}, ValueCase{"int(7)", I(7)},
        // -2^63 is an int64 (it was "integer overflow in 'int'").
        ValueCase{"int(-9.2233720368547758e18)",
                  I(std::numeric_limits<int64_t>::min())},
        ValueCase{"float(3)", F(3.0)}, ValueCase{"pow(2, 3)", I(8)},
        ValueCase{"pow(4, 0.5)", F(2.0)}, ValueCase{"d_model / heads", F(64.0)},
        ValueCase{"d_model // heads", I(64)},
        ValueCase{"1 / sqrt(d_model // heads)", F(0.125)},
        ValueCase{"dropout * 2", F(0.2)}, ValueCase{"!train", B(false)},
        ValueCase{"-(2 ** 62) * 2", I(INT64_MIN)},
        ValueCase{"2 ** 62 - 1 + 2 ** 62", I(INT64_MAX)}));

struct ErrorCase {
  const char *text;
  const char *message;
  uint32_t col;
  const char *hint = "";
};

class ConstErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConstErrorTest, ReportsOneErrorAtTheCulprit) {
  const ErrorCase &c = GetParam();
  Evaluated e(c.text);
  EXPECT_FALSE(e.value);
  ASSERT_EQ(e.diags.getNumErrors(), 1u) << c.text;
  const Diagnostic &d = e.diags.getDiagnostics()[0];
  EXPECT_EQ(d.message, c.message);
  EXPECT_EQ(d.loc.line, 1u);
  EXPECT_EQ(d.loc.col, c.col);
  if (*c.hint) {
    EXPECT_EQ(d.hint, c.hint);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ConstEvalTest, ConstErrorTest,
    ::testing::Values(
        ErrorCase{"1 / 0", "division by zero", 3},
        ErrorCase{"1 // 0", "division by zero", 3},
        ErrorCase{"1 % 0", "division by zero", 3},
        ErrorCase{"1.0 / 0.0", "division by zero", 5},
        ErrorCase{"1 + (2 / 0)", "division by zero", 8},
        ErrorCase{"sqrt(-1)", "sqrt of a negative number (-1)", 1},
        ErrorCase{"log(0)", "log of a non-positive number (0)", 1},
        ErrorCase{"log(-0.5)", "log of a non-positive number (-0.5)", 1},
        ErrorCase{"2 ** 63", "integer overflow in '**'", 3},
        ErrorCase{"2 ** 62 * 4", "integer overflow in '*'", 9},
        ErrorCase{"2 ** 62 + 2 ** 62", "integer overflow in '+'", 9},
        ErrorCase{"-(2 ** 62) * 2 - 1", "integer overflow in '-'", 16},
        ErrorCase{"-(-(2 ** 62) * 2)", "integer overflow in unary '-'", 1},
        ErrorCase{"(-(2 ** 62) * 2) // -1", "integer overflow in '//'", 18},
        ErrorCase{"abs(-(2 ** 62) * 2)", "integer overflow in 'abs'", 1},
        ErrorCase{"int(1e300)", "integer overflow in 'int'", 1},
        ErrorCase{"int(9.2233720368547758e18)", "integer overflow in 'int'", 1},
        ErrorCase{"exp(1000)", "float overflow in 'exp'", 1},
        ErrorCase{"1e308 * 10", "float overflow in '*'", 7},
        ErrorCase{"0 ** -1", "zero cannot be raised to a negative power", 3},
        ErrorCase{"(-8) ** (1 / 3)",
                  "a negative number cannot be raised to a fractional power",
                  6},
        ErrorCase{"sqrt(1, 2)", "'sqrt' takes 1 argument, got 2", 1},
        ErrorCase{"pow(1)", "'pow' takes 2 arguments, got 1", 1},
        ErrorCase{"min(1)", "'min' takes at least 2 arguments, got 1", 1},
        ErrorCase{"sqr(4)", "unknown function 'sqr' in a constant expression",
                  1, "did you mean 'sqrt'?"},
        ErrorCase{"linear(x, 4)",
                  "unknown function 'linear' in a constant expression", 1,
                  "constant expressions may call sqrt, exp, log, cos, sin, "
                  "min, max, abs, int, float and pow"},
        ErrorCase{"sqrt(x = 4)", "'sqrt' takes no keyword arguments", 6},
        ErrorCase{"abs(1) as s", "'as' has no meaning in a constant expression",
                  11},
        ErrorCase{"true + 1", "cannot use a bool as a number in '+'", 1},
        ErrorCase{"1 * train", "cannot use a bool as a number in '*'", 5},
        ErrorCase{"-true", "cannot use a bool as a number in unary '-'", 2},
        ErrorCase{"sqrt(true)",
                  "cannot use a bool as a number in argument 1 of 'sqrt'", 6},
        ErrorCase{"!1", "operand of '!' must be a bool, got int", 2},
        ErrorCase{"1 & true", "operands of '&' must be bools, got int", 1},
        ErrorCase{"true | 2.0", "operands of '|' must be bools, got float", 8},
        ErrorCase{"true < false", "'<' needs numbers, got bools", 6},
        ErrorCase{"true == 1", "cannot compare a bool with a number", 6},
        ErrorCase{"d_modl * 2", "unknown name 'd_modl'", 1,
                  "did you mean 'd_model'?"}));

TEST(ConstEvalTest, EveryFailingOperandIsReported) {
  Evaluated e("nope + 1 / 0");
  EXPECT_FALSE(e.value);
  EXPECT_EQ(e.diags.getNumErrors(), 2u);
}

TEST(ConstEvalTest, ConstValueApi) {
  EXPECT_EQ(I(512).str(), "512");
  EXPECT_EQ(F(0.1).str(), "0.1");
  EXPECT_EQ(F(2).str(), "2.0");
  EXPECT_EQ(F(1e-9).str(), "1e-9");
  EXPECT_EQ(B(true).str(), "true");
  EXPECT_EQ(I(3).asDouble(), 3.0);
  EXPECT_EQ(B(true).asDouble(), 1.0);
  EXPECT_TRUE(I(1).isNumber());
  EXPECT_TRUE(F(1).isNumber());
  EXPECT_FALSE(B(true).isNumber());
  EXPECT_NE(I(1), F(1));
  EXPECT_EQ(F(0.5), F(0.5));
}

//===----------------------------------------------------------------------===//
// evaluateConfig
//===----------------------------------------------------------------------===//

struct Config {
  explicit Config(const std::string &text,
                  const std::vector<std::string> &overrides = {})
      : parsed(text) {
    EXPECT_EQ(parsed.errors(), 0u) << parsed.report();
    env = evaluateConfig(*parsed.module, overrides, *parsed.diags);
  }
  ConstValue get(const std::string &name) const {
    std::optional<ConstValue> v = env.lookup(name);
    EXPECT_TRUE(v) << name;
    return v ? *v : ConstValue::ofBool(false);
  }
  std::vector<std::string> messages() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : parsed.diags->getDiagnostics())
      out.push_back(d.message);
    return out;
  }
  Parsed parsed;
  ConfigEnv env;
};

TEST(ConstEvalTest, SampleConfig) {
  Config c(test::sampleSpec());
  EXPECT_EQ(c.parsed.errors(), 0u) << c.parsed.report();
  EXPECT_EQ(c.env.modelName, "transformer");
  std::vector<std::string> names = c.env.configNames();
  std::vector<std::string> expected = {
      "d_model", "heads",           "layers",    "d_ff",
      "dropout", "src_vocab",       "tgt_vocab", "max_len",
      "pad",     "label_smoothing", "d_k"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(c.get("d_k"), I(64));
  EXPECT_EQ(c.get("dropout"), F(0.1));
  ASSERT_EQ(c.env.dims.size(), 3u);
  EXPECT_EQ(c.env.dims[0].name, "B");
  EXPECT_EQ(c.env.dims[0].bound, 64);
  EXPECT_EQ(c.env.dims[1].bound, 256);
  EXPECT_EQ(c.env.dims[1].loc.line, 6u);
  ASSERT_NE(c.env.findDim("T"), nullptr);
  EXPECT_EQ(c.env.findDim("T")->bound, 256);
  EXPECT_EQ(c.env.findDim("d_model"), nullptr);
  EXPECT_FALSE(c.env.lookup("B")); // dims are not constants
}

TEST(ConstEvalTest, OverridesApplyBeforeLaterItems) {
  const char *spec = "config d_model = 512, heads = 8, dropout = 0.1\n"
                     "config d_k = d_model / heads\ndim S <= d_model\n";
  Config plain(spec, {"-D d_model=128"});
  EXPECT_EQ(plain.parsed.errors(), 0u) << plain.parsed.report();
  EXPECT_EQ(plain.get("d_model"), I(128));
  EXPECT_EQ(plain.get("d_k"), F(16.0));
  EXPECT_EQ(plain.env.dims[0].bound, 128);

  Config expression(spec, {"d_model=2*64", "-D dropout=0.0"});
  EXPECT_EQ(expression.parsed.errors(), 0u) << expression.parsed.report();
  EXPECT_EQ(expression.get("d_model"), I(128));
  EXPECT_EQ(expression.get("dropout"), F(0.0));

  Config usesEarlier(spec, {"-D  heads = d_model // 64 "});
  EXPECT_EQ(usesEarlier.parsed.errors(), 0u) << usesEarlier.parsed.report();
  EXPECT_EQ(usesEarlier.get("heads"), I(8));
  EXPECT_EQ(usesEarlier.get("d_k"), F(64.0));
}

TEST(ConstEvalTest, LastOverrideWins) {
  Config c("config a = 1", {"-D a=2", "-D a=3"});
  EXPECT_EQ(c.parsed.errors(), 0u);
  EXPECT_EQ(c.get("a"), I(3));
  ASSERT_EQ(c.parsed.diags->getDiagnostics().size(), 1u);
  EXPECT_EQ(c.parsed.diags->getDiagnostics()[0].severity, Severity::Warning);
  EXPECT_EQ(c.messages()[0], "-D a=3 replaces the earlier -D a=2");
}

struct OverrideErrorCase {
  const char *flag;
  const char *message;
  const char *hint;
};

class OverrideErrorTest : public ::testing::TestWithParam<OverrideErrorCase> {};

TEST_P(OverrideErrorTest, ReportedAtLineZeroNamingTheFlag) {
  Config c("config d_model = 512, heads = 8\ndim B <= 4", {GetParam().flag});
  ASSERT_EQ(c.parsed.errors(), 1u) << c.parsed.report();
  const Diagnostic &d = c.parsed.diags->getDiagnostics()[0];
  EXPECT_EQ(d.loc.line, 0u);
  EXPECT_EQ(d.loc.col, 0u);
  EXPECT_EQ(d.message, GetParam().message);
  EXPECT_EQ(d.hint, GetParam().hint);
  // The other values are still there.
  EXPECT_EQ(c.get("heads"), I(8));
}

INSTANTIATE_TEST_SUITE_P(
    ConstEvalTest, OverrideErrorTest,
    ::testing::Values(
        OverrideErrorCase{"-D d_modle=128",
                          "-D d_modle=128: no config value named 'd_modle'",
                          "did you mean 'd_model'?"},
        OverrideErrorCase{"-D B=3", "-D B=3: no config value named 'B'",
                          "'B' is a dim; override the config value its bound "
                          "uses instead"},
        OverrideErrorCase{"-D foo", "-D foo: expected 'name=value'",
                          "e.g. '-D d_model=128'"},
        OverrideErrorCase{"-D d_model=abc",
                          "-D d_model=abc: unknown name 'abc'", ""},
        OverrideErrorCase{"-D d_model=", "-D d_model=: missing value after '='",
                          "e.g. '-D d_model=128'"},
        OverrideErrorCase{"-D 3x=1", "-D 3x=1: '3x' is not a config name",
                          "e.g. '-D d_model=128'"},
        OverrideErrorCase{"-D d_model=1 +",
                          "-D d_model=1 +: expected an expression, found end "
                          "of file",
                          ""},
        OverrideErrorCase{"-D d_model=1/0", "-D d_model=1/0: division by zero",
                          ""},
        OverrideErrorCase{"-D d_model=$",
                          "-D d_model=$: unexpected character "
                          "'$'",
                          ""}));

TEST(ConstEvalTest, OverrideErrorFormat) {
  Config c("config d_model = 512", {"-D d_modle=128"});
  EXPECT_EQ(c.parsed.report(),
            "error: -D d_modle=128: no config value named 'd_modle'\n"
            "hint: did you mean 'd_model'?\n");
}

TEST(ConstEvalTest, DuplicateConfigNames) {
  Config c("config a = 1\nconfig b = a, a = 2\n");
  const auto &diags = c.parsed.diags->getDiagnostics();
  ASSERT_EQ(diags.size(), 2u) << c.parsed.report();
  EXPECT_EQ(diags[0].message, "config value 'a' is defined twice");
  EXPECT_EQ(diags[0].loc.line, 2u);
  EXPECT_EQ(diags[0].loc.col, 15u);
  EXPECT_EQ(diags[1].severity, Severity::Note);
  EXPECT_EQ(diags[1].message, "'a' is first defined here");
  EXPECT_EQ(diags[1].loc.line, 1u);
  EXPECT_EQ(c.get("a"), I(1));
}

TEST(ConstEvalTest, ConfigAndDimNamesClash) {
  Config dimFirst("dim B <= 4\nconfig B = 2\nconfig c = B + 1\n");
  EXPECT_EQ(dimFirst.messages(),
            (std::vector<std::string>{"'B' is already declared as a dim",
                                      "the dim 'B' is declared here"}));
  Config configFirst("config B = 2\ndim B <= 4\n");
  EXPECT_EQ(
      configFirst.messages(),
      (std::vector<std::string>{"'B' is already declared as a config value",
                                "the config value 'B' is declared here"}));
  Config dupDim("dim B <= 4, B <= 8\n");
  EXPECT_EQ(dupDim.messages(),
            (std::vector<std::string>{"dim 'B' is declared twice",
                                      "'B' is first declared here"}));
}

TEST(ConstEvalTest, DimBounds) {
  Config c("config n = 16\ndim A <= 64.0, B <= 0, C <= 2.5, D <= n > 2, "
           "E <= -n, F <= n * 2");
  EXPECT_EQ(c.messages(),
            (std::vector<std::string>{
                "the bound of dim 'B' must be a positive integer, got 0",
                "the bound of dim 'C' must be a positive integer, got 2.5",
                "the bound of dim 'D' must be a positive integer, got true",
                "the bound of dim 'E' must be a positive integer, got -16"}));
  ASSERT_EQ(c.env.dims.size(), 2u);
  EXPECT_EQ(c.env.dims[0].name, "A");
  EXPECT_EQ(c.env.dims[0].bound, 64);
  EXPECT_EQ(c.env.dims[1].bound, 32);
}

TEST(ConstEvalTest, DimBoundsStopAtTheDimensionLimit) {
  // The largest bound is 2^31 - 1 (kMaxDimBound); 2^62 used to pass and
  // wrap every buffer size computed from it.
  // (An integral float of 2^63 or more, 1e30, said "must be a positive
  // integer".)
  Config c("dim A <= 2 ** 31 - 1, B <= 2 ** 31, C <= 2 ** 62, D <= 1e18, "
           "E <= 1e30");
  EXPECT_EQ(c.messages(),
            (std::vector<std::string>{
                "the bound of dim 'B' is 2147483648, over the limit of "
                "2147483647 (2^31 - 1)",
                "the bound of dim 'C' is 4611686018427387904, over the limit "
                "of 2147483647 (2^31 - 1)",
                "the bound of dim 'D' is 1e18, over the limit of 2147483647 "
                "(2^31 - 1)",
                "the bound of dim 'E' is 1e30, over the limit of 2147483647 "
                "(2^31 - 1)"}));
  ASSERT_EQ(c.env.dims.size(), 1u);
  EXPECT_EQ(c.env.dims[0].bound, kMaxDimBound);
}

TEST(ConstEvalTest, HintsForNamesThatAreNotConstantsYet) {
  Config later("config a = b * 2, b = 1");
  ASSERT_EQ(later.parsed.errors(), 1u);
  EXPECT_EQ(later.parsed.diags->getDiagnostics()[0].hint,
            "'b' is defined later, at 1:19; a config value can use only the "
            "values defined before it");
  Config dim("dim B <= 4\nconfig a = B");
  ASSERT_EQ(dim.parsed.errors(), 1u);
  EXPECT_EQ(dim.parsed.diags->getDiagnostics()[0].hint,
            "'B' is a dim: its size is known only at run time, so it has no "
            "value here");
}

TEST(ConstEvalTest, FailedItemsDoNotCascade) {
  Config c("config a = 1 / 0, b = a * 2, c = b + 1\ndim B <= c\n");
  EXPECT_EQ(c.parsed.errors(), 1u) << c.parsed.report();
  EXPECT_FALSE(c.env.lookup("b"));
  EXPECT_TRUE(c.env.dims.empty());
}

} // namespace
