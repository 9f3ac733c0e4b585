//===- ParserTest.cpp - grammar, AST shape, printing and recovery ---------===//
//
// Every production, operator precedence and associativity, the `as`
// binding, locations, canonical printing (a fixed point of parsing), nesting
// limits, and error recovery that reports every error of a file once.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"

#include <gtest/gtest.h>

using namespace txc;
using namespace txc::ast;
using txc::test::Parsed;
using txc::test::parseToSexpr;
using txc::test::sampleSpec;

namespace {

template <typename T> const T &as(const Decl &d) {
  return static_cast<const T &>(d);
}
template <typename T> const T &as(const Stmt &s) {
  return static_cast<const T &>(s);
}
template <typename T> const T &as(const Expr &e) {
  return static_cast<const T &>(e);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

struct PrecedenceCase {
  const char *text;
  const char *tree;
};

class PrecedenceTest : public ::testing::TestWithParam<PrecedenceCase> {};

TEST_P(PrecedenceTest, Shape) {
  std::string errors;
  EXPECT_EQ(parseToSexpr(GetParam().text, &errors), GetParam().tree) << errors;
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(
    ParserTest, PrecedenceTest,
    ::testing::Values(
        PrecedenceCase{"a + b * c", "(+ a (* b c))"},
        PrecedenceCase{"a * b + c", "(+ (* a b) c)"},
        PrecedenceCase{"a - b - c", "(- (- a b) c)"},
        PrecedenceCase{"a / b / c", "(/ (/ a b) c)"},
        PrecedenceCase{"a // b % c * d", "(* (% (// a b) c) d)"},
        PrecedenceCase{"2 ** 3 ** 2", "(** 2 (** 3 2))"},
        PrecedenceCase{"-x ** 2", "(- (** x 2))"},
        PrecedenceCase{"2 ** -x", "(** 2 (- x))"},
        PrecedenceCase{"2 ** -x ** 2", "(** 2 (- (** x 2)))"},
        PrecedenceCase{"(-x) ** 2", "(** (- x) 2)"},
        PrecedenceCase{"a * -b", "(* a (- b))"},
        PrecedenceCase{"- -x", "(- (- x))"}, PrecedenceCase{"--x", "(- (- x))"},
        PrecedenceCase{"!a & b", "(& (! a) b)"},
        PrecedenceCase{"!(a & b)", "(! (& a b))"},
        PrecedenceCase{"a | b & c", "(| a (& b c))"},
        PrecedenceCase{"a & b | c", "(| (& a b) c)"},
        PrecedenceCase{"a < b & c >= d | e", "(| (& (< a b) (>= c d)) e)"},
        PrecedenceCase{"a == b + 1", "(== a (+ b 1))"},
        PrecedenceCase{"a + 1 != b * 2", "(!= (+ a 1) (* b 2))"},
        PrecedenceCase{"(a + b) * c", "(* (+ a b) c)"},
        PrecedenceCase{"((a))", "a"},
        PrecedenceCase{"f(x) as name * 2", "(* (call f x as name) 2)"},
        PrecedenceCase{"2 * f(x) as name", "(* 2 (call f x as name))"},
        PrecedenceCase{"-f(x) as s", "(- (call f x as s))"},
        PrecedenceCase{"f(x) as s ** 2", "(** (call f x as s) 2)"},
        PrecedenceCase{"f(g(x) as a, y) as b.c[i + 1].d",
                       "(call f (call g x as a) y as b.c[(+ i 1)].d)"},
        PrecedenceCase{"linear(x, 512, bias = false)",
                       "(call linear x 512 bias=false)"},
        PrecedenceCase{"f()", "(call f)"},
        PrecedenceCase{"x / sqrt(d / h)", "(/ x (call sqrt (/ d h)))"},
        PrecedenceCase{"masked_fill(s, !m, -1e9)",
                       "(call masked_fill s (! m) (- 1e9))"},
        PrecedenceCase{"true | false", "(| true false)"},
        PrecedenceCase{"a\n+\nb", "(+ a b)"},
        // Subscripts bind tighter than every operator and chain.
        PrecedenceCase{"x[:, 0, :]", "(index x : 0 :)"},
        PrecedenceCase{"x[a:b:2]", "(index x a:b:2)"},
        PrecedenceCase{"x[..., :d / 2]", "(index x ... :(/ d 2))"},
        PrecedenceCase{"x[1:]", "(index x 1:)"},
        PrecedenceCase{"x[::-1]", "(index x ::(- 1))"},
        PrecedenceCase{"-x[0] ** 2", "(- (** (index x 0) 2))"},
        PrecedenceCase{"x[0][:, 1]", "(index (index x 0) : 1)"},
        PrecedenceCase{"wpe[arange(T)]", "(index wpe (call arange T))"},
        PrecedenceCase{"f(x)[-1]", "(index (call f x) (- 1))"},
        PrecedenceCase{"(f(x) as s)[0]", "(index (call f x as s) 0)"},
        PrecedenceCase{"x[ids[0]]", "(index x (index ids 0))"}));

TEST(ParserTest, Locations) {
  Parsed p("def f(x) {\n  y = a + g(x, k = 2) as s[i]\n  return -y\n}");
  ASSERT_EQ(p.errors(), 0u) << p.report();
  const auto &def = as<DefDecl>(*p.module->decls[0]);
  EXPECT_EQ(def.getLoc().line, 1u);
  const auto &assign = as<AssignStmt>(*def.body[0]);
  EXPECT_EQ(assign.getLoc().col, 3u);
  const auto &add = as<BinaryExpr>(*assign.value);
  EXPECT_EQ(add.getLoc().col, 9u); // the operator
  const auto &call = as<CallExpr>(*add.rhs);
  EXPECT_EQ(call.getLoc().col, 11u); // the callee
  EXPECT_EQ(call.args[1].loc.col, 16u);
  EXPECT_EQ(call.args[1].keyword, "k");
  EXPECT_EQ(call.scope[0].loc.col, 26u);
  EXPECT_EQ(call.scope[0].index->getLoc().col, 28u);
  const auto &ret = as<ReturnStmt>(*def.body[1]);
  EXPECT_EQ(ret.value->getLoc().line, 3u);
  EXPECT_EQ(ret.value->getLoc().col, 10u);
}

TEST(ParserTest, NumbersAndBools) {
  Parsed p("config a = 3, b = 0.5, c = 1e-9, d = true, e = false");
  ASSERT_EQ(p.errors(), 0u) << p.report();
  const auto &config = as<ConfigDecl>(*p.module->decls[0]);
  const auto &a = as<NumberExpr>(*config.items[0].value);
  EXPECT_TRUE(a.isInteger);
  EXPECT_EQ(a.value, 3);
  const auto &b = as<NumberExpr>(*config.items[1].value);
  EXPECT_FALSE(b.isInteger);
  EXPECT_EQ(b.value, 0.5);
  EXPECT_EQ(as<NumberExpr>(*config.items[2].value).value, 1e-9);
  EXPECT_TRUE(as<BoolExpr>(*config.items[3].value).value);
  EXPECT_FALSE(as<BoolExpr>(*config.items[4].value).value);
}

// ast::forEachName: every name an expression reads, in source order, and
// not a call's callee (the -D notes and the def parameter check use it).
TEST(ParserTest, ForEachNameVisitsTheNamesAnExpressionReads) {
  SourceFile file("e.tx", "-f(a, k = b * c)[d:e, g] + h");
  DiagnosticEngine diags(file);
  ast::ExprPtr e = parseExpression(file, diags);
  ASSERT_TRUE(e);
  std::string names;
  ast::forEachName(*e, [&](const ast::NameExpr &name) { names += name.name; });
  EXPECT_EQ(names, "abcdegh");
}

//===----------------------------------------------------------------------===//
// Declarations and statements
//===----------------------------------------------------------------------===//

TEST(ParserTest, SampleSpecStructure) {
  Parsed p(sampleSpec());
  ASSERT_EQ(p.errors(), 0u) << p.report();
  const auto &decls = p.module->decls;
  ASSERT_EQ(decls.size(), 11u);
  EXPECT_EQ(as<ModelDecl>(*decls[0]).name, "transformer");
  EXPECT_EQ(as<ConfigDecl>(*decls[1]).items.size(), 5u);
  EXPECT_EQ(as<ConfigDecl>(*decls[3]).items[1].name, "d_k");
  const auto &dims = as<DimDecl>(*decls[4]);
  ASSERT_EQ(dims.items.size(), 3u);
  EXPECT_EQ(dims.items[1].name, "S");
  EXPECT_EQ(as<NameExpr>(*dims.items[1].bound).name, "max_len");

  const auto &attention = as<DefDecl>(*decls[5]);
  EXPECT_EQ(attention.name, "attention");
  ASSERT_EQ(attention.params.size(), 3u);
  EXPECT_EQ(attention.params[0].type->dtype, "f32");
  EXPECT_FALSE(attention.params[0].type->dtypeWritten);
  EXPECT_EQ(attention.params[0].type->dims.size(), 3u);
  EXPECT_EQ(attention.params[2].type->dtype, "bool");
  EXPECT_TRUE(attention.params[2].type->dtypeWritten);
  EXPECT_EQ(attention.body.size(), 6u);
  EXPECT_EQ(attention.body.back()->getKind(), Stmt::Kind::Return);

  const auto &ffn = as<DefDecl>(*decls[6]);
  EXPECT_FALSE(ffn.params[0].type.has_value());

  const auto &train = as<EntryDecl>(*decls[9]);
  EXPECT_EQ(train.name, "train");
  EXPECT_EQ(train.params[0].type->dtype, "i32");
  ASSERT_EQ(train.results.size(), 1u);
  EXPECT_EQ(train.results[0].name, "loss");
  const auto &loop = as<ForStmt>(*train.body[2]);
  EXPECT_EQ(loop.var, "i");
  EXPECT_EQ(as<NumberExpr>(*loop.lo).value, 0);
  EXPECT_EQ(as<NameExpr>(*loop.hi).name, "layers");
  ASSERT_EQ(loop.body.size(), 1u);
  const auto &layer = as<CallExpr>(*as<AssignStmt>(*loop.body[0]).value);
  ASSERT_EQ(layer.scope.size(), 2u);
  EXPECT_EQ(layer.scope[0].name, "encoder");
  EXPECT_EQ(layer.scope[1].name, "layers");
  EXPECT_EQ(as<NameExpr>(*layer.scope[1].index).name, "i");

  const auto &optimizer = as<OptimizerDecl>(*decls[10]);
  EXPECT_EQ(optimizer.name, "adam");
  ASSERT_EQ(optimizer.args.size(), 4u);
  EXPECT_EQ(optimizer.args[0].keyword, "lr");
  EXPECT_EQ(as<CallExpr>(*optimizer.args[0].value).args[1].keyword, "warmup");
}

TEST(ParserTest, EveryDeclarationForm) {
  Parsed p(R"(model m
config a = 1
dim B <= 4
def nothing() { return 0 }
def typed(x: f32[B], y: i32[B, 2 * a], z: bool[1]) { return x }
entry noresults(x) { y = x }
entry many(x) -> a, b { a = x
  b = x }
optimizer sgd(0.1, momentum = 0.9)
optimizer_free = 3
)");
  // The last line is a statement at the top level: exactly one error.
  EXPECT_EQ(p.errors(), 1u) << p.report();
  const auto &decls = p.module->decls;
  ASSERT_EQ(decls.size(), 8u);
  EXPECT_TRUE(as<DefDecl>(*decls[3]).params.empty());
  EXPECT_EQ(as<DefDecl>(*decls[4]).params[1].type->dims.size(), 2u);
  EXPECT_TRUE(as<EntryDecl>(*decls[5]).results.empty());
  EXPECT_EQ(as<EntryDecl>(*decls[6]).results.size(), 2u);
  const auto &sgd = as<OptimizerDecl>(*decls[7]);
  EXPECT_EQ(sgd.args[0].keyword, "");
  EXPECT_EQ(sgd.args[1].keyword, "momentum");
}

TEST(ParserTest, NestedForLoops) {
  Parsed p("def f(x) {\n for i in 0..2 { for j in i..2 * i + 1 { x = x } }\n"
           " return x }");
  ASSERT_EQ(p.errors(), 0u) << p.report();
  const auto &outer = as<ForStmt>(*as<DefDecl>(*p.module->decls[0]).body[0]);
  const auto &inner = as<ForStmt>(*outer.body[0]);
  EXPECT_EQ(inner.var, "j");
  EXPECT_EQ(test::sexpr(inner.hi.get()), "(+ (* 2 i) 1)");
}

TEST(ParserTest, FreeFormLayout) {
  Parsed oneLine("model m config a = 1, b = 2 dim B <= a def f(x) { y = x "
                 "return y } entry e(x) -> y { y = f(x) }");
  EXPECT_EQ(oneLine.errors(), 0u) << oneLine.report();
  Parsed spread("def\nf\n(\nx\n)\n{\nreturn\nx\n}\n");
  EXPECT_EQ(spread.errors(), 0u) << spread.report();
  EXPECT_EQ(print(*oneLine.module), R"(model m
config a = 1, b = 2
dim B <= a

def f(x) {
  y = x
  return y
}

entry e(x) -> y {
  y = f(x)
}
)");
}

// A ',' before the closing bracket of a call, a parameter list, a shape or
// a subscript is allowed, as in Python: black-formatted multi-line calls end
// in one. The printed form drops it.
TEST(ParserTest, TrailingCommaBeforeAClosingBracket) {
  Parsed p("def f(x: [B, S,], y,) {\n"
           "  z = linear(\n    x,\n    4,\n    bias = false,\n  )\n"
           "  return z[0, :,] + y\n}\n");
  ASSERT_EQ(p.errors(), 0u) << p.report();
  EXPECT_EQ(print(*p.module), R"(def f(x: [B, S], y) {
  z = linear(x, 4, bias = false)
  return z[0, :] + y
}
)");
  // Only after an item: an empty list with a ',' is still an error.
  EXPECT_EQ(Parsed("def f(,) { return 1 }\n").errors(), 1u);
  EXPECT_EQ(Parsed("def f(x) { return g(,) }\n").errors(), 1u);
  EXPECT_EQ(Parsed("def f(x) { return x[,] }\n").errors(), 1u);
  EXPECT_EQ(Parsed("def f(x: [,]) { return x }\n").errors(), 1u);
  EXPECT_EQ(Parsed("def f(x) { return g(x,,) }\n").errors(), 1u);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

TEST(ParserTest, CanonicalPrint) {
  Parsed p("model m\nconfig  eps=1E-9 ,lr=2.5E+3, x = 1.0, n = (2+3)*4\n"
           "def f(x:[B,S], m:bool[B]) {\n"
           "  y = (-x)**2 + -x**2 - (a - b) - (c + d)\n"
           "  z = f(g(x) as s, k=1) as a.b[i+1] * 2\n"
           "  w = (a < b) == (c < d)\n"
           "  for i in 0..(n+1) {\n  return (a|b)&!c\n  }\n}\n"
           "optimizer adam(lr=noam(512,warmup=4000))\n");
  ASSERT_EQ(p.errors(), 0u) << p.report();
  EXPECT_EQ(print(*p.module), R"(model m
config eps = 1e-9, lr = 2500.0, x = 1.0, n = (2 + 3) * 4

def f(x: [B, S], m: bool[B]) {
  y = (-x) ** 2 + -x ** 2 - (a - b) - (c + d)
  z = f(g(x) as s, k = 1) as a.b[i + 1] * 2
  w = (a < b) == (c < d)
  for i in 0..n + 1 {
    return (a | b) & !c
  }
}

optimizer adam(lr = noam(512, warmup = 4000))
)");
}

TEST(ParserTest, KindAndRoles) {
  Parsed p("model m\nkind   language_model\n"
           "entry logits(ids:i32[B,T]@tokens, x) -> y { y = x }\n"
           "config kind = 1\n");
  ASSERT_EQ(p.errors(), 0u) << p.report();
  const auto *kind = static_cast<const KindDecl *>(p.module->decls[1].get());
  ASSERT_EQ(kind->getKind(), Decl::Kind::ModelKind);
  EXPECT_EQ(kind->name, "language_model");
  EXPECT_EQ(kind->nameLoc.col, 8u);
  const auto *entry = static_cast<const EntryDecl *>(p.module->decls[2].get());
  ASSERT_EQ(entry->getKind(), Decl::Kind::Entry);
  EXPECT_EQ(entry->params[0].role, "tokens");
  EXPECT_EQ(entry->params[0].roleLoc.col, 26u);
  EXPECT_EQ(entry->params[1].role, "");
  // `kind` stays a name everywhere else.
  EXPECT_EQ(print(*p.module), R"(model m
kind language_model

entry logits(ids: i32[B, T] @tokens, x) -> y {
  y = x
}

config kind = 1
)");
  Parsed twice("kind seq2seq\nkind classifier\n");
  ASSERT_EQ(twice.errors(), 1u) << twice.report();
  EXPECT_EQ(twice.diags->getDiagnostics()[0].message,
            "duplicate 'kind' declaration");
  Parsed noName("entry e(x: [B] @) -> y { y = x }\n");
  EXPECT_EQ(noName.errors(), 1u) << noName.report();
}

TEST(ParserTest, PrintIsAFixedPointOfParsing) {
  Parsed first(sampleSpec());
  ASSERT_EQ(first.errors(), 0u) << first.report();
  std::string printed = print(*first.module);
  Parsed second(printed);
  ASSERT_EQ(second.errors(), 0u) << second.report();
  EXPECT_EQ(print(*second.module), printed);
}

TEST(ParserTest, PrintedExpressionsKeepTheirShape) {
  const char *exprs[] = {
      "a - (b - c)",     "a / (b * c)",       "(a ** b) ** c", "a ** b ** c",
      "-(a + b)",        "!(a == b)",         "(a == b) == c", "a == (b == c)",
      "(f(x) as s) * 2", "-(2 ** 2)",         "(-2) ** 2",     "a | b | c",
      "a | (b | c)",     "(a & b) | (c & d)", "2 ** (-x)",     "x ** (y * 2)",
      "x[:, 0, ::2]",    "(f(x) as s)[..., :4]", "(a + b)[0]", "x[0][1:]",
      "(-x)[0]",         "x[a:b:c, ...]"};
  for (const char *text : exprs) {
    SCOPED_TRACE(text);
    SourceFile file("e.tx", text);
    DiagnosticEngine diags(file);
    ExprPtr e = parseExpression(file, diags);
    ASSERT_TRUE(e);
    std::string printed = print(*e);
    SourceFile again("e.tx", printed);
    ExprPtr reparsed = parseExpression(again, diags);
    ASSERT_TRUE(reparsed) << printed;
    EXPECT_EQ(test::sexpr(reparsed.get()), test::sexpr(e.get())) << printed;
  }
}

TEST(ParserTest, FormatNumber) {
  EXPECT_EQ(formatNumber(512, true), "512");
  EXPECT_EQ(formatNumber(0.1, false), "0.1");
  EXPECT_EQ(formatNumber(2, false), "2.0");
  EXPECT_EQ(formatNumber(1e-9, false), "1e-9");
  EXPECT_EQ(formatNumber(1e20, false), "1e20");
  EXPECT_EQ(formatNumber(0.98, false), "0.98");
  EXPECT_EQ(formatNumber(1.0 / 3, false), "0.3333333333333333");
  EXPECT_EQ(formatNumber(123456789.0, false), "123456789.0");
  EXPECT_EQ(formatNumber(2500, false), "2500.0");
  EXPECT_EQ(formatNumber(10000, false), "10000.0");
  EXPECT_EQ(formatNumber(1e5, false), "1e5");
  EXPECT_EQ(formatNumber(-1e9, false), "-1e9");
  EXPECT_EQ(formatNumber(1.5e6, false), "1.5e6");
  EXPECT_EQ(formatNumber(0.001, false), "0.001");
  EXPECT_EQ(formatNumber(1e-4, false), "0.0001");
  EXPECT_EQ(formatNumber(1e-5, false), "1e-5");
  EXPECT_EQ(formatNumber(2.5e20, false), "2.5e20");
  EXPECT_EQ(formatNumber(1e16, false), "1e16");
  EXPECT_EQ(formatNumber(-0.5, false), "-0.5");
  EXPECT_EQ(formatNumber(5e-324, false), "5e-324");
  EXPECT_EQ(formatNumber(1.7976931348623157e308, false),
            "1.7976931348623157e308");
  EXPECT_EQ(spelling(BinaryOp::FloorDiv), std::string("//"));
  EXPECT_EQ(spelling(BinaryOp::Ge), std::string(">="));
}

//===----------------------------------------------------------------------===//
// Errors and recovery
//===----------------------------------------------------------------------===//

TEST(ParserTest, RecoveryReportsEveryErrorOnce) {
  Parsed p(R"(model m
config a = 1, b = , c = 3
dim B <= 4
def f(x: [B) {
  y = linear(x, 4
  z = y +
  w = z * 2
  return w w
}
def g(x) {
  return x )
}
entry e(x) -> r { r = g(x) }
)");
  std::vector<std::pair<uint32_t, std::string>> expected = {
      {2, "expected an expression, found ','"},
      {4, "expected ']' to close the shape opened at 4:10"},
      {5, "expected ')' to close call to 'linear' opened at 5:13"},
      {6, "expected an expression after '+'"},
      {8, "unexpected identifier 'w' after the end of the statement"},
      {11, "unexpected ')' after the end of the statement"},
  };
  const std::vector<Diagnostic> &diags = p.diags->getDiagnostics();
  ASSERT_EQ(diags.size(), expected.size()) << p.report();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(diags[i].loc.line, expected[i].first) << p.report();
    EXPECT_EQ(diags[i].message, expected[i].second);
  }
  // What did parse is kept: the entry after the broken defs is there.
  ASSERT_FALSE(p.module->decls.empty());
  EXPECT_EQ(p.module->decls.back()->getKind(), Decl::Kind::Entry);
}

TEST(ParserTest, MissingBraceIsOneError) {
  Parsed noOpen("def f(x)\n  y = x\n  return y\n}\ndef g(x) { return x }");
  EXPECT_EQ(noOpen.errors(), 1u) << noOpen.report();
  EXPECT_EQ(noOpen.diags->getDiagnostics()[0].message,
            "expected '{' to begin the body of 'f'");
  ASSERT_EQ(noOpen.module->decls.size(), 2u);
  EXPECT_EQ(as<DefDecl>(*noOpen.module->decls[0]).body.size(), 2u);

  Parsed noClose("def f(x) {\n  return x\ndef g(x) { return x }");
  ASSERT_EQ(noClose.errors(), 1u) << noClose.report();
  const Diagnostic &d = noClose.diags->getDiagnostics()[0];
  EXPECT_EQ(d.message, "expected '}' to close the body of 'f' opened at 1:10");
  EXPECT_EQ(d.loc.line, 2u);
  EXPECT_EQ(d.loc.col, 11u); // just past `x`
  EXPECT_EQ(noClose.module->decls.size(), 2u);
}

TEST(ParserTest, BrokenHeaderStillChecksTheBody) {
  Parsed p("def f(x y) {\n  a = (1\n}\nfor\n");
  ASSERT_EQ(p.errors(), 3u) << p.report();
  EXPECT_EQ(p.diags->getDiagnostics()[0].message,
            "expected ',' between parameters");
  EXPECT_EQ(p.diags->getDiagnostics()[1].message,
            "expected ')' to close '(' opened at 2:7");
  EXPECT_EQ(p.diags->getDiagnostics()[2].message,
            "statements must be inside the body of a 'def' or an 'entry'");
}

TEST(ParserTest, KeywordArgumentsAcrossLinesAreNotStatements) {
  // The error inside the call must not make `bias = false` look like the
  // next statement.
  Parsed p("def f(x) {\n  y = linear(x 4,\n    bias = false)\n  return y\n}");
  ASSERT_EQ(p.errors(), 1u) << p.report();
  EXPECT_EQ(p.diags->getDiagnostics()[0].message,
            "expected ',' between the arguments of call to 'linear'");
}

TEST(ParserTest, BrokenForHeaderKeepsBodyBraces) {
  Parsed p("def f(x) {\n  for i in 0 layers {\n    x = x +\n  }\n  return x\n}"
           "\ndef g() { return 1 }");
  ASSERT_EQ(p.errors(), 2u) << p.report();
  EXPECT_EQ(p.diags->getDiagnostics()[0].message,
            "expected '..' between the bounds of the loop over 'i'");
  EXPECT_EQ(p.diags->getDiagnostics()[1].message,
            "expected an expression, found '}'");
  ASSERT_EQ(p.module->decls.size(), 2u);
  EXPECT_EQ(as<DefDecl>(*p.module->decls[0]).body.size(), 1u); // the return
}

TEST(ParserTest, StrayCharactersDoNotCascade) {
  Parsed p("def f(x) {\n  y = x $ 2\n  z = ?\n  return z\n}\n");
  ASSERT_EQ(p.errors(), 2u) << p.report();
  EXPECT_EQ(p.diags->getDiagnostics()[0].message, "unexpected character '$'");
  EXPECT_EQ(p.diags->getDiagnostics()[1].message, "unexpected character '?'");
}

TEST(ParserTest, DuplicatesAreReportedWithNotes) {
  Parsed p("model a\nmodel b\ndef f(x, x) { return x }\ndef f(y) { return y }"
           "\nentry e(x) -> r, r { r = x }\n"
           "optimizer adam(lr = 1, lr = 2)\noptimizer sgd(lr = 1)\n");
  std::vector<std::string> messages;
  for (const Diagnostic &d : p.diags->getDiagnostics())
    messages.push_back((d.severity == Severity::Note ? "note: " : "") +
                       d.message);
  std::vector<std::string> expected = {
      "duplicate 'model' declaration",
      "note: the model is first declared here",
      "duplicate parameter 'x' in 'f'",
      "note: 'x' is first declared here",
      "redefinition of 'f'",
      "note: 'f' is first defined here",
      "duplicate result 'r' in entry 'e'",
      "note: 'r' is first listed here",
      "argument 'lr' is given twice",
      "note: 'lr' is first given here",
      "duplicate 'optimizer' declaration",
      "note: the optimizer is first declared here"};
  EXPECT_EQ(messages, expected);
}

TEST(ParserTest, NestingIsCapped) {
  std::string ok = std::string(200, '(') + "x" + std::string(200, ')');
  std::string errors;
  EXPECT_EQ(parseToSexpr(ok, &errors), "x");
  std::string deep = std::string(300, '(') + "x" + std::string(300, ')');
  EXPECT_EQ(parseToSexpr(deep, &errors), "");
  EXPECT_NE(errors.find("expression is nested too deeply"), std::string::npos);
  // Only one error, however deep.
  EXPECT_EQ(errors.find("error:"), errors.rfind("error:"));

  std::string huge(100000, '(');
  EXPECT_EQ(parseToSexpr(huge, &errors), "");
  EXPECT_EQ(errors.find("error:"), errors.rfind("error:"));
  EXPECT_EQ(parseToSexpr(std::string(100000, '-') + "x", &errors), "");
  EXPECT_EQ(parseToSexpr(std::string(100000, '!') + "x", &errors), "");

  // A long flat chain needs no recursion to parse, but its tree would be
  // too deep to walk: capped as well.
  std::string chain = "1";
  for (int i = 0; i < 20000; ++i)
    chain += " + 1";
  EXPECT_EQ(parseToSexpr(chain, &errors), "");
  // Said as what it is, with a way out (it read "nested too deeply").
  EXPECT_NE(errors.find("this chain of operators is too long"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("accumulate in a 'for' loop"), std::string::npos);
  EXPECT_EQ(errors.find("error:"), errors.rfind("error:"));
  // A deep parenthesized operand of a short chain is still nesting.
  std::string rightDeep = "1";
  for (int i = 0; i < 250; ++i)
    rightDeep = "1 + (" + rightDeep + ")";
  EXPECT_EQ(parseToSexpr("(" + rightDeep + ") + 1 + 1 + 1 + 1 + 1 + 1 + 1",
                         &errors),
            "");
  EXPECT_NE(errors.find("nested too deeply"), std::string::npos) << errors;
  std::string powers = "2";
  for (int i = 0; i < 20000; ++i)
    powers += " ** 2";
  EXPECT_EQ(parseToSexpr(powers, &errors), "");

  std::string loops = "def f(x) {";
  for (int i = 0; i < 1000; ++i)
    loops += " for i in 0..1 {";
  loops += std::string(1000, '}') + " return x }";
  Parsed p(loops);
  EXPECT_GE(p.errors(), 1u);
  EXPECT_NE(p.report().find("'for' loops are nested too deeply"),
            std::string::npos);

  // 256 loops (the limit) around an expression parse; 257 are one error,
  // about the loops. Loops and expressions shared one depth: 256 loops gave
  // "expression is nested too deeply", twice.
  auto nested = [](int depth) {
    std::string text = "def f(x) {";
    for (int i = 0; i < depth; ++i)
      text += " for i in 0..1 {";
    text += " x = x + (1 + (2 * 3))";
    return text + std::string(size_t(depth), '}') + " return x }";
  };
  Parsed limit(nested(256));
  EXPECT_EQ(limit.errors(), 0u) << limit.report();
  Parsed past(nested(257));
  EXPECT_EQ(past.errors(), 1u) << past.report();
  EXPECT_NE(past.report().find("'for' loops are nested too deeply"),
            std::string::npos);
}

TEST(ParserTest, TupleAssignment) {
  Parsed p("entry e(x: [2, 8]) -> z {\n  a, b = chunk(x, 2)\n  z = a\n}\n");
  ASSERT_EQ(p.errors(), 0u) << p.report();
  const auto &entry = as<EntryDecl>(*p.module->decls[0]);
  const auto &assign = as<AssignStmt>(*entry.body[0]);
  ASSERT_EQ(assign.targets.size(), 2u);
  EXPECT_EQ(assign.targets[0].name, "a");
  EXPECT_EQ(assign.targets[1].name, "b");
  EXPECT_EQ(assign.targets[1].loc.col, 6u);
  EXPECT_EQ(test::sexpr(assign.value.get()), "(call chunk x 2)");
  EXPECT_EQ(as<AssignStmt>(*entry.body[1]).targets.size(), 1u);
}

TEST(ParserTest, SubscriptErrors) {
  struct Case {
    const char *text, *error;
  } cases[] = {
      {"x[]", "expected an index in '[...]'"},
      {"x[, 1]", "expected an index before ','"},
      {"x[0, , 1]", "expected an index before ','"},
      {"x[0 1]", "expected ',' between indices"},
      {"x[0", "expected ']' to close the subscript opened at"},
      {"x[..., 0, ...]", "a subscript has at most one '...'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    std::string errors;
    parseToSexpr(c.text, &errors);
    EXPECT_NE(errors.find(c.error), std::string::npos) << errors;
  }
  Parsed p("entry e(x: [2, 8]) -> z {\n  z = linear(x, 8) as p[0]\n}\n");
  EXPECT_EQ(p.errors(), 0u) << p.report(); // `as p[0]` is a scope index
  Parsed q("entry e(x: [2, 8]) -> z {\n  z = (linear(x, 8) as p)[0]\n}\n");
  EXPECT_EQ(q.errors(), 0u) << q.report();
}

TEST(ParserTest, ParseExpressionRejectsTrailingTokens) {
  std::string errors;
  EXPECT_EQ(parseToSexpr("1 2", &errors), "");
  EXPECT_NE(errors.find("unexpected number '2' after the expression"),
            std::string::npos);
  EXPECT_EQ(parseToSexpr("", &errors), "");
  EXPECT_NE(errors.find("expected an expression, found end of file"),
            std::string::npos);
  EXPECT_EQ(parseToSexpr("1e", &errors), ""); // a lexical error fails it too
}

} // namespace
