//===- ConstEval.cpp - compile-time evaluation of spec expressions --------===//
//
// A tree-walking evaluator with Python's arithmetic rules, checked: integer
// overflow, division by zero, domain errors and non-finite results are
// reported instead of computed. `evaluateConfig` runs it over the `config`
// and `dim` declarations, applying `-D` overrides in place.
//
//===----------------------------------------------------------------------===//

#include "txc/Frontend/ConstEval.h"
#include "txc/Frontend/Parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace txc {

using namespace ast;

//===----------------------------------------------------------------------===//
// ConstValue
//===----------------------------------------------------------------------===//

ConstValue ConstValue::ofInt(int64_t value) {
  ConstValue v;
  v.kind = Kind::Int;
  v.i = value;
  return v;
}

ConstValue ConstValue::ofFloat(double value) {
  ConstValue v;
  v.kind = Kind::Float;
  v.f = value;
  return v;
}

ConstValue ConstValue::ofBool(bool value) {
  ConstValue v;
  v.kind = Kind::Bool;
  v.b = value;
  return v;
}

double ConstValue::asDouble() const {
  switch (kind) {
  case Kind::Int:
    return static_cast<double>(i);
  case Kind::Float:
    return f;
  case Kind::Bool:
    return b ? 1.0 : 0.0;
  }
  return 0;
}

bool ConstValue::isNumber() const { return kind != Kind::Bool; }

std::string ConstValue::str() const {
  switch (kind) {
  case Kind::Int:
    return std::to_string(i);
  case Kind::Float:
    return formatNumber(f, /*isInteger=*/false);
  case Kind::Bool:
    return b ? "true" : "false";
  }
  return "";
}

bool ConstValue::operator==(const ConstValue &other) const {
  if (kind != other.kind)
    return false;
  switch (kind) {
  case Kind::Int:
    return i == other.i;
  case Kind::Float:
    return f == other.f;
  case Kind::Bool:
    return b == other.b;
  }
  return false;
}

const std::vector<std::string> &constBuiltinNames() {
  static const std::vector<std::string> names = {
      "sqrt", "exp", "log", "min", "max", "abs", "int", "float", "pow",
      "cos", "sin"};
  return names;
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

namespace {

const char *kindName(ConstValue::Kind kind) {
  switch (kind) {
  case ConstValue::Kind::Int:
    return "int";
  case ConstValue::Kind::Float:
    return "float";
  case ConstValue::Kind::Bool:
    return "bool";
  }
  return "value";
}

/// How a name resolves: to a value, to nothing, or to an item whose own
/// evaluation failed (already reported, so silently).
enum class Resolution { Found, Unknown, Poisoned };

struct Resolver {
  std::function<Resolution(const std::string &, ConstValue &)> resolve;
  /// The hint for an unknown name.
  std::function<std::string(const std::string &)> hintFor;
  /// Calls of functions that are not builtins (may be empty).
  CallHook call;
};

using Result = std::optional<ConstValue>;

class Evaluator {
public:
  Evaluator(const Resolver &resolver, DiagnosticEngine &diags)
      : resolver(resolver), diags(diags) {}

  Result eval(const Expr &e);

private:
  Result evalNumber(const NumberExpr &e);
  Result evalName(const NameExpr &e);
  Result evalUnary(const UnaryExpr &e);
  Result evalBinary(const BinaryExpr &e);
  Result evalCall(const CallExpr &e);
  Result arithmetic(BinaryOp op, SourceLoc loc, const ConstValue &a,
                    const ConstValue &b);
  Result power(SourceLoc loc, const ConstValue &base,
               const ConstValue &exponent, const std::string &what);
  Result compare(BinaryOp op, SourceLoc loc, const ConstValue &a,
                 const ConstValue &b);

  /// Checks that `v` (the value of `e`) is a number.
  bool expectNumber(const ConstValue &v, const Expr &e,
                    const std::string &where);
  /// A float result, or an error when it is not finite.
  Result finite(double value, SourceLoc loc, const std::string &what);
  Result fail(SourceLoc loc, const std::string &message,
              const std::string &hint = "") {
    diags.error(loc, message, hint);
    return std::nullopt;
  }

  const Resolver &resolver;
  DiagnosticEngine &diags;
};

Result Evaluator::eval(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::Number:
    return evalNumber(static_cast<const NumberExpr &>(e));
  case Expr::Kind::Bool:
    return ConstValue::ofBool(static_cast<const BoolExpr &>(e).value);
  case Expr::Kind::Name:
    return evalName(static_cast<const NameExpr &>(e));
  case Expr::Kind::Unary:
    return evalUnary(static_cast<const UnaryExpr &>(e));
  case Expr::Kind::Binary:
    return evalBinary(static_cast<const BinaryExpr &>(e));
  case Expr::Kind::Call:
    return evalCall(static_cast<const CallExpr &>(e));
  case Expr::Kind::Subscript:
    return fail(e.getLoc(), "a constant expression cannot be subscripted",
                "subscripts index tensors in a def or entry body");
  }
  return std::nullopt;
}

Result Evaluator::evalNumber(const NumberExpr &e) {
  if (!e.isInteger)
    return finite(e.value, e.getLoc(), "literal");
  // 2^63 is the first double past the int64 range.
  if (!(std::fabs(e.value) < 9223372036854775808.0) ||
      e.value != std::trunc(e.value))
    return fail(e.getLoc(), "integer literal out of range");
  return ConstValue::ofInt(static_cast<int64_t>(e.value));
}

Result Evaluator::evalName(const NameExpr &e) {
  ConstValue value;
  switch (resolver.resolve(e.name, value)) {
  case Resolution::Found:
    return value;
  case Resolution::Poisoned:
    return std::nullopt;
  case Resolution::Unknown:
    break;
  }
  std::string hint = diags.isFull() ? std::string() : resolver.hintFor(e.name);
  // A name the hint knows (a dim, a tensor) is not unknown: it has no
  // compile-time value.
  const std::string known = "'" + e.name + "' is a ";
  if (hint.compare(0, known.size(), known) == 0)
    return fail(e.getLoc(), "'" + e.name + "' has no compile-time value",
                hint);
  if (e.name == "inf" || e.name == "nan")
    hint = "there is no '" + e.name +
           "' name: write a number (a mask's "
           "fill is a large negative one, masked_fill(s, !mask, -1e9))";
  return fail(e.getLoc(), "unknown name '" + e.name + "'", hint);
}

bool Evaluator::expectNumber(const ConstValue &v, const Expr &e,
                             const std::string &where) {
  if (v.isNumber())
    return true;
  diags.error(e.getLoc(), "cannot use a bool as a number in " + where);
  return false;
}

Result Evaluator::finite(double value, SourceLoc loc, const std::string &what) {
  if (!std::isfinite(value))
    return fail(loc, "float overflow in " + what);
  return ConstValue::ofFloat(value);
}

Result Evaluator::evalUnary(const UnaryExpr &e) {
  if (!e.operand)
    return std::nullopt;
  Result operand = eval(*e.operand);
  if (!operand)
    return std::nullopt;
  if (e.op == UnaryOp::Not) {
    if (operand->kind != ConstValue::Kind::Bool)
      return fail(e.operand->getLoc(),
                  std::string("operand of '!' must be a bool, got ") +
                      kindName(operand->kind));
    return ConstValue::ofBool(!operand->b);
  }
  if (!expectNumber(*operand, *e.operand, "unary '-'"))
    return std::nullopt;
  if (operand->kind == ConstValue::Kind::Float)
    return ConstValue::ofFloat(-operand->f);
  if (operand->i == std::numeric_limits<int64_t>::min())
    return fail(e.getLoc(), "integer overflow in unary '-'");
  return ConstValue::ofInt(-operand->i);
}

Result Evaluator::evalBinary(const BinaryExpr &e) {
  if (!e.lhs || !e.rhs)
    return std::nullopt;
  Result lhs = eval(*e.lhs);
  Result rhs = eval(*e.rhs);
  if (!lhs || !rhs)
    return std::nullopt;
  std::string where = std::string("'") + spelling(e.op) + "'";
  switch (e.op) {
  case BinaryOp::And:
  case BinaryOp::Or: {
    for (const auto &[value, operand] :
         {std::pair{*lhs, e.lhs.get()}, std::pair{*rhs, e.rhs.get()}}) {
      if (value.kind != ConstValue::Kind::Bool)
        return fail(operand->getLoc(), "operands of " + where +
                                           " must be bools, got " +
                                           kindName(value.kind));
    }
    return ConstValue::ofBool(e.op == BinaryOp::And ? lhs->b && rhs->b
                                                    : lhs->b || rhs->b);
  }
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return compare(e.op, e.getLoc(), *lhs, *rhs);
  default:
    if (!expectNumber(*lhs, *e.lhs, where) ||
        !expectNumber(*rhs, *e.rhs, where))
      return std::nullopt;
    return arithmetic(e.op, e.getLoc(), *lhs, *rhs);
  }
}

Result Evaluator::compare(BinaryOp op, SourceLoc loc, const ConstValue &a,
                          const ConstValue &b) {
  bool aBool = a.kind == ConstValue::Kind::Bool;
  bool bBool = b.kind == ConstValue::Kind::Bool;
  if (aBool || bBool) {
    if (aBool != bBool)
      return fail(loc, "cannot compare a bool with a number");
    if (op != BinaryOp::Eq && op != BinaryOp::Ne)
      return fail(loc, std::string("'") + spelling(op) +
                           "' needs numbers, got bools");
    return ConstValue::ofBool((a.b == b.b) == (op == BinaryOp::Eq));
  }
  int order; // -1, 0, 1
  if (a.kind == ConstValue::Kind::Int && b.kind == ConstValue::Kind::Int) {
    order = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  } else {
    // By value, as Python compares an int with a float: 2 ** 53 + 1 is
    // more than float(2 ** 53 + 1), which a double of the int would make
    // equal (x86's long double holds every int64 and double exactly).
    auto exact = [](const ConstValue &v) {
      return v.kind == ConstValue::Kind::Int
                 ? static_cast<long double>(v.i)
                 : static_cast<long double>(v.asDouble());
    };
    long double x = exact(a), y = exact(b);
    if (std::isnan(x) || std::isnan(y)) // unordered: only != holds
      return ConstValue::ofBool(op == BinaryOp::Ne);
    order = x < y ? -1 : x > y ? 1 : 0;
  }
  switch (op) {
  case BinaryOp::Eq:
    return ConstValue::ofBool(order == 0);
  case BinaryOp::Ne:
    return ConstValue::ofBool(order != 0);
  case BinaryOp::Lt:
    return ConstValue::ofBool(order < 0);
  case BinaryOp::Le:
    return ConstValue::ofBool(order <= 0);
  case BinaryOp::Gt:
    return ConstValue::ofBool(order > 0);
  default:
    return ConstValue::ofBool(order >= 0);
  }
}

Result Evaluator::arithmetic(BinaryOp op, SourceLoc loc, const ConstValue &a,
                             const ConstValue &b) {
  std::string where = std::string("'") + spelling(op) + "'";
  if (op == BinaryOp::Pow)
    return power(loc, a, b, where);
  bool divides =
      op == BinaryOp::Div || op == BinaryOp::FloorDiv || op == BinaryOp::Mod;
  if (divides && b.asDouble() == 0)
    return fail(loc, "division by zero");

  if (a.kind == ConstValue::Kind::Int && b.kind == ConstValue::Kind::Int &&
      op != BinaryOp::Div) {
    int64_t x = a.i, y = b.i, r = 0;
    bool overflow = false;
    switch (op) {
    case BinaryOp::Add:
      overflow = __builtin_add_overflow(x, y, &r);
      break;
    case BinaryOp::Sub:
      overflow = __builtin_sub_overflow(x, y, &r);
      break;
    case BinaryOp::Mul:
      overflow = __builtin_mul_overflow(x, y, &r);
      break;
    case BinaryOp::FloorDiv:
      if (x == std::numeric_limits<int64_t>::min() && y == -1) {
        overflow = true;
        break;
      }
      r = x / y;
      if (x % y != 0 && ((x < 0) != (y < 0)))
        --r;
      break;
    case BinaryOp::Mod:
      if (y == -1)
        break; // r = 0; also avoids INT64_MIN % -1
      r = x % y;
      if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
      break;
    default:
      break;
    }
    if (overflow)
      return fail(loc, "integer overflow in " + where);
    return ConstValue::ofInt(r);
  }

  double x = a.asDouble(), y = b.asDouble(), r = 0;
  switch (op) {
  case BinaryOp::Add:
    r = x + y;
    break;
  case BinaryOp::Sub:
    r = x - y;
    break;
  case BinaryOp::Mul:
    r = x * y;
    break;
  case BinaryOp::Div:
    r = x / y;
    break;
  case BinaryOp::FloorDiv:
    r = std::floor(x / y);
    break;
  case BinaryOp::Mod:
    r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0)))
      r += y;
    else if (r == 0)
      r = std::copysign(0.0, y); // Python: -0.0 % 5 is 0.0, 0.0 % -5 is -0.0
    break;
  default:
    break;
  }
  return finite(r, loc, where);
}

Result Evaluator::power(SourceLoc loc, const ConstValue &base,
                        const ConstValue &exponent, const std::string &what) {
  double x = base.asDouble(), y = exponent.asDouble();
  if (x == 0 && y < 0)
    return fail(loc, "zero cannot be raised to a negative power");
  if (base.kind == ConstValue::Kind::Int &&
      exponent.kind == ConstValue::Kind::Int && exponent.i >= 0) {
    int64_t result = 1, factor = base.i;
    uint64_t n = static_cast<uint64_t>(exponent.i);
    bool overflow = false;
    while (n && !overflow) {
      if (n & 1)
        overflow = __builtin_mul_overflow(result, factor, &result);
      n >>= 1;
      if (n && !overflow)
        overflow = __builtin_mul_overflow(factor, factor, &factor);
    }
    if (overflow)
      return fail(loc, "integer overflow in " + what);
    return ConstValue::ofInt(result);
  }
  if (x < 0 && y != std::trunc(y))
    return fail(loc, "a negative number cannot be raised to a fractional "
                     "power");
  return finite(std::pow(x, y), loc, what);
}

Result Evaluator::evalCall(const CallExpr &e) {
  const std::vector<std::string> &builtins = constBuiltinNames();
  const std::string &name = e.callee;
  std::optional<ConstValue> called;
  if (resolver.call && resolver.call(e, called))
    return called;
  if (std::find(builtins.begin(), builtins.end(), name) == builtins.end()) {
    std::string match = closestMatch(name, builtins);
    // A schedule is the optimizer's lr itself, not a number to compute with.
    if (name == "noam")
      return fail(e.getLoc(),
                  "'noam' is a learning-rate schedule, not a function of "
                  "constant expressions",
                  "give it as the lr itself, scaled by its own argument: "
                  "`lr = noam(d_model, warmup = 4000, factor = 2.0)`");
    return fail(e.getLoc(),
                "unknown function '" + name + "' in a constant expression",
                match.empty() ? "constant expressions may call sqrt, exp, "
                                "log, cos, sin, min, max, abs, int, float "
                                "and pow"
                              : "did you mean '" + match + "'?");
  }
  bool variadic = name == "min" || name == "max";
  size_t arity = name == "pow" ? 2 : 1;
  size_t count = e.args.size();
  if (variadic ? count < 2 : count != arity) {
    std::string expected =
        variadic
            ? "at least 2 arguments"
            : std::to_string(arity) + (arity == 1 ? " argument" : " arguments");
    return fail(e.getLoc(), "'" + name + "' takes " + expected + ", got " +
                                std::to_string(count));
  }
  for (const Arg &arg : e.args)
    if (!arg.keyword.empty())
      return fail(arg.loc, "'" + name + "' takes no keyword arguments");
  if (!e.scope.empty())
    return fail(e.scope.front().loc,
                "'as' has no meaning in a constant expression");

  std::vector<ConstValue> args;
  for (size_t k = 0; k < count; ++k) {
    if (!e.args[k].value)
      return std::nullopt;
    Result value = eval(*e.args[k].value);
    if (!value)
      return std::nullopt;
    if (!expectNumber(*value, *e.args[k].value,
                      "argument " + std::to_string(k + 1) + " of '" + name +
                          "'"))
      return std::nullopt;
    args.push_back(*value);
  }

  SourceLoc loc = e.getLoc();
  const ConstValue &x = args[0];
  std::string what = "'" + name + "'";
  if (name == "sqrt") {
    if (x.asDouble() < 0)
      return fail(loc, "sqrt of a negative number (" + x.str() + ")");
    return ConstValue::ofFloat(std::sqrt(x.asDouble()));
  }
  if (name == "exp")
    return finite(std::exp(x.asDouble()), loc, what);
  if (name == "cos")
    return finite(std::cos(x.asDouble()), loc, what);
  if (name == "sin")
    return finite(std::sin(x.asDouble()), loc, what);
  if (name == "log") {
    if (x.asDouble() <= 0)
      return fail(loc, "log of a non-positive number (" + x.str() + ")");
    return ConstValue::ofFloat(std::log(x.asDouble()));
  }
  if (variadic) {
    // Like Python: the first of equal candidates wins, and keeps its type.
    auto lessThan = [](const ConstValue &a, const ConstValue &b) {
      if (a.kind == ConstValue::Kind::Int && b.kind == ConstValue::Kind::Int)
        return a.i < b.i;
      return a.asDouble() < b.asDouble();
    };
    ConstValue best = x;
    for (size_t k = 1; k < args.size(); ++k)
      if (name == "min" ? lessThan(args[k], best) : lessThan(best, args[k]))
        best = args[k];
    return best;
  }
  if (name == "abs") {
    if (x.kind == ConstValue::Kind::Float)
      return ConstValue::ofFloat(std::fabs(x.f));
    if (x.i == std::numeric_limits<int64_t>::min())
      return fail(loc, "integer overflow in 'abs'");
    return ConstValue::ofInt(x.i < 0 ? -x.i : x.i);
  }
  if (name == "int") {
    if (x.kind == ConstValue::Kind::Int)
      return x;
    // [-2^63, 2^63): -2^63 itself is an int64.
    double t = std::trunc(x.f);
    if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0))
      return fail(loc, "integer overflow in 'int'");
    return ConstValue::ofInt(static_cast<int64_t>(t));
  }
  if (name == "float")
    return ConstValue::ofFloat(x.asDouble());
  return power(loc, x, args[1], what); // pow
}

//===----------------------------------------------------------------------===//
// evaluateConfig
//===----------------------------------------------------------------------===//

bool isIdentifier(const std::string &s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::string trim(const std::string &s) {
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos)
    return "";
  size_t end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

/// One `-D name=value` flag.
struct Override {
  std::string flag; // "-D name=value", for messages
  std::string name;
  std::unique_ptr<SourceFile> file; // the value's text
  ExprPtr value;
  bool used = false;
};

/// Re-reports what `from` collected (from index `first` on) as flag errors.
void forward(const DiagnosticEngine &from, size_t first,
             const std::string &flag, DiagnosticEngine &to) {
  const std::vector<Diagnostic> &list = from.getDiagnostics();
  for (size_t k = first; k < list.size(); ++k) {
    const Diagnostic &d = list[k];
    std::string message = flag + ": " + d.message;
    switch (d.severity) {
    case Severity::Error:
      to.error({0, 0}, message, d.hint);
      break;
    case Severity::Warning:
      to.warning({0, 0}, message, d.hint);
      break;
    case Severity::Note:
      to.note({0, 0}, message);
      break;
    }
  }
}

/// Parses the flags; the last flag for a name wins.
std::map<std::string, Override>
parseOverrides(const std::vector<std::string> &flags, DiagnosticEngine &diags) {
  std::map<std::string, Override> overrides;
  for (const std::string &raw : flags) {
    std::string body = trim(raw);
    if (body.compare(0, 2, "-D") == 0)
      body = trim(body.substr(2));
    std::string flag = "-D " + body;
    size_t eq = body.find('=');
    if (eq == std::string::npos) {
      diags.error({0, 0}, flag + ": expected 'name=value'",
                  "e.g. '-D d_model=128'");
      continue;
    }
    Override o;
    o.flag = flag;
    o.name = trim(body.substr(0, eq));
    std::string valueText = trim(body.substr(eq + 1));
    if (!isIdentifier(o.name)) {
      diags.error({0, 0}, flag + ": '" + o.name + "' is not a config name",
                  "e.g. '-D d_model=128'");
      continue;
    }
    if (valueText.empty()) {
      diags.error({0, 0}, flag + ": missing value after '='",
                  "e.g. '-D " + o.name + "=128'");
      continue;
    }
    o.file = std::make_unique<SourceFile>("<" + flag + ">", valueText);
    DiagnosticEngine local(*o.file);
    o.value = parseExpression(*o.file, local);
    forward(local, 0, flag, diags);
    if (!o.value)
      continue;
    auto it = overrides.find(o.name);
    if (it != overrides.end()) {
      diags.warning({0, 0}, flag + " replaces the earlier " + it->second.flag);
      it->second = std::move(o);
    } else {
      overrides.emplace(o.name, std::move(o));
    }
  }
  return overrides;
}

} // namespace

std::optional<ConstValue>
evaluateConst(const Expr &e, const NameLookup &lookup,
              const std::vector<std::string> &candidates,
              DiagnosticEngine &diags) {
  return evaluateConst(
      e, lookup, [&candidates] { return candidates; }, diags);
}

std::optional<ConstValue>
evaluateConst(const Expr &e, const NameLookup &lookup,
              const CandidateList &candidates, DiagnosticEngine &diags) {
  return evaluateConstWithHint(
      e, lookup,
      [&candidates](const std::string &name) {
        std::string match = closestMatch(
            name, candidates ? candidates() : std::vector<std::string>());
        return match.empty() ? std::string() : "did you mean '" + match + "'?";
      },
      diags);
}

std::optional<ConstValue> evaluateConstWithHint(const Expr &e,
                                                const NameLookup &lookup,
                                                const UnknownNameHint &hintFor,
                                                DiagnosticEngine &diags,
                                                const CallHook &call) {
  Resolver resolver;
  resolver.call = call;
  resolver.resolve = [&](const std::string &name, ConstValue &value) {
    std::optional<ConstValue> found = lookup ? lookup(name) : std::nullopt;
    if (!found)
      return Resolution::Unknown;
    value = *found;
    return Resolution::Found;
  };
  resolver.hintFor = [&](const std::string &name) {
    return hintFor ? hintFor(name) : std::string();
  };
  return Evaluator(resolver, diags).eval(e);
}

std::optional<ConstValue> ConfigEnv::lookup(const std::string &name) const {
  auto it = configIndex.find(name);
  if (it == configIndex.end())
    return std::nullopt;
  return config[it->second].second;
}

void ConfigEnv::add(const std::string &name, const ConstValue &value) {
  configIndex.emplace(name, config.size());
  config.emplace_back(name, value);
}

const ConfigEnv::Dim *ConfigEnv::findDim(const std::string &name) const {
  for (const Dim &dim : dims)
    if (dim.name == name)
      return &dim;
  return nullptr;
}

std::vector<std::string> ConfigEnv::configNames() const {
  std::vector<std::string> names;
  for (const auto &item : config)
    names.push_back(item.first);
  return names;
}

ConfigEnv evaluateConfig(const Module &m,
                         const std::vector<std::string> &overrideFlags,
                         DiagnosticEngine &diags) {
  ConfigEnv env;
  std::map<std::string, Override> overrides =
      parseOverrides(overrideFlags, diags);
  const unsigned errorsBefore = diags.getNumErrors();

  // Every config and dim name of the file, for hints about names used before
  // their declaration.
  std::map<std::string, SourceLoc> allConfigs, allDims;
  for (const DeclPtr &decl : m.decls) {
    if (!decl)
      continue;
    if (decl->getKind() == Decl::Kind::Config)
      for (const ConfigItem &item :
           static_cast<const ConfigDecl &>(*decl).items)
        allConfigs.emplace(item.name, item.loc);
    if (decl->getKind() == Decl::Kind::Dim)
      for (const DimItem &item : static_cast<const DimDecl &>(*decl).items)
        allDims.emplace(item.name, item.loc);
  }

  std::map<std::string, SourceLoc> configLocs, dimLocs;
  std::set<std::string> poisoned; // items whose evaluation failed
  Resolver resolver;
  resolver.resolve = [&](const std::string &name, ConstValue &value) {
    if (std::optional<ConstValue> found = env.lookup(name)) {
      value = *found;
      return Resolution::Found;
    }
    return poisoned.count(name) ? Resolution::Poisoned : Resolution::Unknown;
  };
  resolver.hintFor = [&](const std::string &name) -> std::string {
    if (dimLocs.count(name) || allDims.count(name))
      return "'" + name +
             "' is a dim: its size is known only at run time, "
             "so it has no value here";
    auto later = allConfigs.find(name);
    if (later != allConfigs.end() && !configLocs.count(name))
      return "'" + name + "' is defined later, at " +
             std::to_string(later->second.line) + ":" +
             std::to_string(later->second.col) +
             "; a config value can use only the values defined before it";
    std::string match = closestMatch(name, env.configNames());
    return match.empty() ? std::string() : "did you mean '" + match + "'?";
  };
  // A def computes in an entry's body; config values are numbers of the
  // whole spec, known before any body is generated.
  std::set<std::string> defNames;
  for (const DeclPtr &decl : m.decls)
    if (decl && decl->getKind() == Decl::Kind::Def)
      defNames.insert(static_cast<const DefDecl &>(*decl).name);
  DiagnosticEngine *reporting = &diags; // a -D value's own while it is read
  resolver.call = [&](const CallExpr &call, std::optional<ConstValue> &value) {
    if (!defNames.count(call.callee))
      return false;
    value.reset();
    reporting->error(call.getLoc(),
                     "'" + call.callee +
                         "' is a def, which a config value or a dim's bound "
                         "cannot call",
                     "compute the number in the entry or def that uses it "
                     "(`n = " +
                         call.callee +
                         "(...)`, or the call itself "
                         "in a loop's bounds or a slice)");
    return true;
  };
  Evaluator evaluator(resolver, diags);

  // The -D flags a config item's value was computed from, through the
  // items it reads (`d_k = d_model // heads`).
  auto flagsRead = [&](const Expr *value) {
    std::vector<std::string> found;
    auto add = [&](const std::string &flag) {
      if (std::find(found.begin(), found.end(), flag) == found.end())
        found.push_back(flag);
    };
    if (value)
      forEachName(*value, [&](const NameExpr &name) {
        if (auto flag = env.flags.find(name.name); flag != env.flags.end())
          add(flag->second);
        if (auto derived = env.derivedFlags.find(name.name);
            derived != env.derivedFlags.end())
          for (const std::string &flag : derived->second)
            add(flag);
      });
    return found;
  };

  auto evaluateItem = [&](const std::string &name,
                          const Expr *value) -> std::optional<ConstValue> {
    auto it = overrides.find(name);
    if (it == overrides.end())
      return value ? evaluator.eval(*value) : std::nullopt;
    Override &o = it->second;
    o.used = true;
    env.flags[name] = o.flag;
    DiagnosticEngine local(*o.file);
    Evaluator overrideEvaluator(resolver, local);
    reporting = &local;
    std::optional<ConstValue> result = overrideEvaluator.eval(*o.value);
    reporting = &diags;
    forward(local, 0, o.flag, diags);
    return result;
  };

  for (const DeclPtr &decl : m.decls) {
    if (!decl)
      continue;
    switch (decl->getKind()) {
    case Decl::Kind::ModelKind:
      break;
    case Decl::Kind::Model:
      if (env.modelName.empty())
        env.modelName = static_cast<const ModelDecl &>(*decl).name;
      break;
    case Decl::Kind::Config:
      for (const ConfigItem &item :
           static_cast<const ConfigDecl &>(*decl).items) {
        if (auto first = configLocs.find(item.name);
            first != configLocs.end()) {
          diags.error(item.loc,
                      "config value '" + item.name + "' is defined twice");
          diags.note(first->second,
                     "'" + item.name + "' is first defined here");
          continue;
        }
        if (auto dim = dimLocs.find(item.name); dim != dimLocs.end()) {
          diags.error(item.loc,
                      "'" + item.name + "' is already declared as a dim");
          diags.note(dim->second,
                     "the dim '" + item.name + "' is declared here");
          poisoned.insert(item.name);
          continue;
        }
        configLocs.emplace(item.name, item.loc);
        if (!overrides.count(item.name))
          if (std::vector<std::string> read = flagsRead(item.value.get());
              !read.empty())
            env.derivedFlags[item.name] = std::move(read);
        if (std::optional<ConstValue> value =
                evaluateItem(item.name, item.value.get())) {
          env.add(item.name, *value);
          if (item.value && item.value->getKind() == Expr::Kind::Name &&
              !overrides.count(item.name))
            if (const auto &name = static_cast<const NameExpr &>(*item.value);
                env.lookup(name.name))
              env.aliases[item.name] = name.name;
        } else {
          poisoned.insert(item.name);
        }
      }
      break;
    case Decl::Kind::Dim:
      for (const DimItem &item : static_cast<const DimDecl &>(*decl).items) {
        if (auto first = dimLocs.find(item.name); first != dimLocs.end()) {
          diags.error(item.loc, "dim '" + item.name + "' is declared twice");
          diags.note(first->second,
                     "'" + item.name + "' is first declared here");
          continue;
        }
        if (auto config = configLocs.find(item.name);
            config != configLocs.end()) {
          diags.error(item.loc, "'" + item.name +
                                    "' is already declared as a config value");
          diags.note(config->second,
                     "the config value '" + item.name + "' is declared here");
          continue;
        }
        dimLocs.emplace(item.name, item.loc);
        if (!item.bound)
          continue;
        std::optional<ConstValue> bound = evaluator.eval(*item.bound);
        if (!bound)
          continue;
        double value = bound->asDouble();
        bool positiveInteger = bound->kind == ConstValue::Kind::Int
                                   ? bound->i > 0
                                   : bound->kind == ConstValue::Kind::Float &&
                                         value >= 1 && std::isfinite(value) &&
                                         value == std::trunc(value);
        if (!positiveInteger) {
          diags.error(item.bound->getLoc(),
                      "the bound of dim '" + item.name +
                          "' must be a positive integer, got " + bound->str());
          continue;
        }
        if (value > static_cast<double>(kMaxDimBound) ||
            (bound->kind == ConstValue::Kind::Int && bound->i > kMaxDimBound)) {
          diags.error(item.bound->getLoc(),
                      "the bound of dim '" + item.name + "' is " +
                          bound->str() + ", over the limit of " +
                          std::to_string(kMaxDimBound) + " (2^31 - 1)",
                      "the bound sizes every buffer the dim appears in");
          continue;
        }
        std::string configKey;
        if (item.bound->getKind() == Expr::Kind::Name) {
          const auto &name = static_cast<const NameExpr &>(*item.bound);
          if (env.lookup(name.name))
            configKey = name.name;
        }
        env.dims.push_back({item.name,
                            bound->kind == ConstValue::Kind::Int
                                ? bound->i
                                : static_cast<int64_t>(value),
                            item.loc, std::move(configKey)});
      }
      break;
    default:
      break;
    }
  }

  // An error in a correct spec whose value came from the command line
  // named only the spec's line (`dim B <= n` with -D n=0): say which
  // values the flags set.
  if (diags.getNumErrors() > errorsBefore) {
    std::string flags;
    for (const auto &[name, o] : overrides)
      if (o.used)
        flags += (flags.empty() ? "" : ", ") + o.flag;
    if (!flags.empty())
      diags.note({0, 0}, "these values come from the command line: " + flags);
  }
  for (const auto &[name, o] : overrides) {
    if (o.used)
      continue;
    std::string hint;
    if (dimLocs.count(name)) {
      hint = "'" + name +
             "' is a dim; override the config value its bound "
             "uses instead";
    } else {
      std::string match = closestMatch(name, env.configNames());
      if (match.empty()) {
        std::vector<std::string> names;
        for (const auto &entry : configLocs)
          names.push_back(entry.first);
        match = closestMatch(name, names);
      }
      if (!match.empty())
        hint = "did you mean '" + match + "'?";
    }
    diags.error({0, 0}, o.flag + ": no config value named '" + name + "'",
                hint);
  }
  return env;
}

} // namespace txc
