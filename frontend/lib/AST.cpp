//===- AST.cpp - printing the txc spec-language AST -----------------------===//
//
// The canonical printer: one declaration per line (defs and entries set off
// by blank lines), two-space indentation, spaces around binary operators and
// only the parentheses precedence needs. Printing is a fixed point of
// parsing: parse(print(m)) prints as print(m).
//
//===----------------------------------------------------------------------===//

#include "txc/Frontend/AST.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace txc {
namespace ast {

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::FloorDiv:
    return "//";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Pow:
    return "**";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::And:
    return "&";
  case BinaryOp::Or:
    return "|";
  }
  return "?";
}

std::string formatNumber(double value, bool isInteger) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char buf[64];
  if (isInteger && value == std::floor(value) && std::fabs(value) < 1e18) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
    return buf;
  }
  // The fewest significant digits that read back as the same double.
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*e", digits - 1, value);
    double back = 0;
    std::from_chars(buf, buf + std::char_traits<char>::length(buf), back);
    if (back == value)
      break;
  }
  std::snprintf(buf, sizeof(buf), "%.*e", digits - 1, value);
  std::string text = buf;
  size_t e = text.find('e');
  int exponent = std::atoi(text.c_str() + e + 1);
  // Positional for 1e-4 <= |value| < 1e16 unless that takes more than four
  // trailing zeros (`2500.0`, `0.001`), else scientific with a tidy exponent
  // (`1e9`, `1e-9`, `2.5e20`).
  int trailingZeros = exponent - (digits - 1);
  if (exponent >= -4 && exponent < 16 && trailingZeros <= 4) {
    std::snprintf(buf, sizeof(buf), "%.*f", std::max(0, digits - 1 - exponent),
                  value);
    text = buf;
    if (text.find('.') == std::string::npos)
      text += ".0";
    return text;
  }
  return text.substr(0, e) + "e" + std::to_string(exponent);
}

namespace {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Binding strength, loosest first; matches the parser.
enum Precedence {
  Or = 1,
  And,
  Compare,
  Additive,
  Multiplicative,
  Prefix,
  Power,
  Atom
};

Precedence precedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return Or;
  case BinaryOp::And:
    return And;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return Compare;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return Additive;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod:
    return Multiplicative;
  case BinaryOp::Pow:
    return Power;
  }
  return Atom;
}

Precedence precedence(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::Binary:
    return precedence(static_cast<const BinaryExpr &>(e).op);
  case Expr::Kind::Unary:
    return Prefix;
  case Expr::Kind::Number:
    // A negative literal (only built by hand, never parsed) prints with '-'.
    return std::signbit(static_cast<const NumberExpr &>(e).value) ? Prefix
                                                                  : Atom;
  default:
    return Atom;
  }
}

void printExpr(const Expr *e, std::string &out);

void printOperand(const Expr *e, bool parens, std::string &out) {
  if (parens)
    out += '(';
  printExpr(e, out);
  if (parens)
    out += ')';
}

void printArgs(const std::vector<Arg> &args, std::string &out) {
  out += '(';
  for (size_t i = 0; i < args.size(); ++i) {
    if (i)
      out += ", ";
    if (!args[i].keyword.empty())
      out += args[i].keyword + " = ";
    printExpr(args[i].value.get(), out);
  }
  out += ')';
}

void printExpr(const Expr *e, std::string &out) {
  if (!e) {
    out += "<null>";
    return;
  }
  switch (e->getKind()) {
  case Expr::Kind::Number: {
    const auto &number = static_cast<const NumberExpr &>(*e);
    out += formatNumber(number.value, number.isInteger);
    return;
  }
  case Expr::Kind::Bool:
    out += static_cast<const BoolExpr &>(*e).value ? "true" : "false";
    return;
  case Expr::Kind::Name:
    out += static_cast<const NameExpr &>(*e).name;
    return;
  case Expr::Kind::Unary: {
    const auto &unary = static_cast<const UnaryExpr &>(*e);
    out += unary.op == UnaryOp::Neg ? '-' : '!';
    bool parens = unary.operand && precedence(*unary.operand) < Prefix;
    printOperand(unary.operand.get(), parens, out);
    return;
  }
  case Expr::Kind::Binary: {
    const auto &binary = static_cast<const BinaryExpr &>(*e);
    Precedence p = precedence(binary.op);
    Precedence lhs = binary.lhs ? precedence(*binary.lhs) : Atom;
    Precedence rhs = binary.rhs ? precedence(*binary.rhs) : Atom;
    bool lhsParens, rhsParens;
    if (p == Power) { // right-associative; its left operand is a postfix
      lhsParens = lhs <= Power;
      rhsParens = rhs < Prefix;
    } else if (p == Compare) { // non-associative
      lhsParens = lhs <= Compare;
      rhsParens = rhs <= Compare;
    } else { // left-associative
      lhsParens = lhs < p;
      rhsParens = rhs <= p;
    }
    printOperand(binary.lhs.get(), lhsParens, out);
    out += ' ';
    out += spelling(binary.op);
    out += ' ';
    printOperand(binary.rhs.get(), rhsParens, out);
    return;
  }
  case Expr::Kind::Call: {
    const auto &call = static_cast<const CallExpr &>(*e);
    out += call.callee;
    printArgs(call.args, out);
    for (size_t i = 0; i < call.scope.size(); ++i) {
      out += i ? "." : " as ";
      out += call.scope[i].name;
      if (call.scope[i].index) {
        out += '[';
        printExpr(call.scope[i].index.get(), out);
        out += ']';
      }
    }
    return;
  }
  case Expr::Kind::Subscript: {
    const auto &subscript = static_cast<const SubscriptExpr &>(*e);
    const Expr *base = subscript.base.get();
    // `(f(x) as s)[0]`: without parentheses the `[` would index the scope.
    bool scoped = base && base->getKind() == Expr::Kind::Call &&
                  !static_cast<const CallExpr &>(*base).scope.empty();
    printOperand(base, scoped || (base && precedence(*base) < Atom), out);
    out += '[';
    for (size_t i = 0; i < subscript.indices.size(); ++i) {
      const Index &index = subscript.indices[i];
      if (i)
        out += ", ";
      switch (index.kind) {
      case Index::Kind::Ellipsis:
        out += "...";
        break;
      case Index::Kind::Single:
        printExpr(index.value.get(), out);
        break;
      case Index::Kind::Slice:
        if (index.start)
          printExpr(index.start.get(), out);
        out += ':';
        if (index.stop)
          printExpr(index.stop.get(), out);
        if (index.step) {
          out += ':';
          printExpr(index.step.get(), out);
        }
        break;
      }
    }
    out += ']';
    return;
  }
  }
}

//===----------------------------------------------------------------------===//
// Statements and declarations
//===----------------------------------------------------------------------===//

void printType(const TypeExpr &type, std::string &out) {
  if (type.dtypeWritten || type.dtype != "f32")
    out += type.dtype;
  out += '[';
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i)
      out += ", ";
    printExpr(type.dims[i].get(), out);
  }
  out += ']';
}

void printParams(const std::vector<Param> &params, std::string &out) {
  out += '(';
  for (size_t i = 0; i < params.size(); ++i) {
    if (i)
      out += ", ";
    out += params[i].name;
    if (params[i].type) {
      out += ": ";
      printType(*params[i].type, out);
    }
    if (!params[i].role.empty())
      out += " @" + params[i].role;
  }
  out += ')';
}

void printBlock(const Block &block, unsigned indent, std::string &out);

void printStmt(const Stmt &stmt, unsigned indent, std::string &out) {
  out.append(indent * 2, ' ');
  switch (stmt.getKind()) {
  case Stmt::Kind::Assign: {
    const auto &assign = static_cast<const AssignStmt &>(stmt);
    for (size_t i = 0; i < assign.targets.size(); ++i)
      out += (i ? ", " : "") + assign.targets[i].name;
    out += " = ";
    printExpr(assign.value.get(), out);
    out += '\n';
    return;
  }
  case Stmt::Kind::Return: {
    const auto &ret = static_cast<const ReturnStmt &>(stmt);
    out += "return ";
    printExpr(ret.value.get(), out);
    for (const ExprPtr &value : ret.rest) {
      out += ", ";
      printExpr(value.get(), out);
    }
    out += '\n';
    return;
  }
  case Stmt::Kind::For: {
    const auto &loop = static_cast<const ForStmt &>(stmt);
    out += "for " + loop.var + " in ";
    printExpr(loop.lo.get(), out);
    out += "..";
    printExpr(loop.hi.get(), out);
    printBlock(loop.body, indent, out);
    return;
  }
  }
}

/// ` {\n ... }\n`, with the body one level deeper than `indent`.
void printBlock(const Block &block, unsigned indent, std::string &out) {
  out += " {\n";
  for (const StmtPtr &stmt : block)
    if (stmt)
      printStmt(*stmt, indent + 1, out);
  out.append(indent * 2, ' ');
  out += "}\n";
}

void printDecl(const Decl &decl, std::string &out) {
  switch (decl.getKind()) {
  case Decl::Kind::Model:
    out += "model " + static_cast<const ModelDecl &>(decl).name + "\n";
    return;
  case Decl::Kind::ModelKind:
    out += "kind " + static_cast<const KindDecl &>(decl).name + "\n";
    return;
  case Decl::Kind::Config: {
    const auto &config = static_cast<const ConfigDecl &>(decl);
    out += "config ";
    for (size_t i = 0; i < config.items.size(); ++i) {
      out += (i ? ", " : "") + config.items[i].name + " = ";
      printExpr(config.items[i].value.get(), out);
    }
    out += '\n';
    return;
  }
  case Decl::Kind::Dim: {
    const auto &dims = static_cast<const DimDecl &>(decl);
    out += "dim ";
    for (size_t i = 0; i < dims.items.size(); ++i) {
      out += (i ? ", " : "") + dims.items[i].name + " <= ";
      printExpr(dims.items[i].bound.get(), out);
    }
    out += '\n';
    return;
  }
  case Decl::Kind::Def: {
    const auto &def = static_cast<const DefDecl &>(decl);
    out += "def " + def.name;
    printParams(def.params, out);
    printBlock(def.body, 0, out);
    return;
  }
  case Decl::Kind::Entry: {
    const auto &entry = static_cast<const EntryDecl &>(decl);
    out += "entry " + entry.name;
    printParams(entry.params, out);
    for (size_t i = 0; i < entry.results.size(); ++i)
      out += (i ? ", " : " -> ") + entry.results[i].name;
    printBlock(entry.body, 0, out);
    return;
  }
  case Decl::Kind::Optimizer: {
    const auto &optimizer = static_cast<const OptimizerDecl &>(decl);
    out += "optimizer " + optimizer.name;
    printArgs(optimizer.args, out);
    out += '\n';
    return;
  }
  }
}

bool hasBody(const Decl &decl) {
  return decl.getKind() == Decl::Kind::Def ||
         decl.getKind() == Decl::Kind::Entry;
}

} // namespace

std::string print(const Expr &expr) {
  std::string out;
  printExpr(&expr, out);
  return out;
}

std::string print(const Module &module) {
  std::string out;
  const Decl *previous = nullptr;
  for (const DeclPtr &decl : module.decls) {
    if (!decl)
      continue;
    if (previous && (hasBody(*previous) || hasBody(*decl)))
      out += '\n';
    printDecl(*decl, out);
    previous = decl.get();
  }
  return out;
}

void forEachName(const Expr &expr,
                 const std::function<void(const NameExpr &)> &visit) {
  switch (expr.getKind()) {
  case Expr::Kind::Name:
    visit(static_cast<const NameExpr &>(expr));
    return;
  case Expr::Kind::Unary:
    forEachName(*static_cast<const UnaryExpr &>(expr).operand, visit);
    return;
  case Expr::Kind::Binary: {
    const auto &binary = static_cast<const BinaryExpr &>(expr);
    forEachName(*binary.lhs, visit);
    forEachName(*binary.rhs, visit);
    return;
  }
  case Expr::Kind::Call:
    for (const Arg &arg : static_cast<const CallExpr &>(expr).args)
      forEachName(*arg.value, visit);
    return;
  case Expr::Kind::Subscript: {
    const auto &subscript = static_cast<const SubscriptExpr &>(expr);
    forEachName(*subscript.base, visit);
    for (const Index &index : subscript.indices)
      for (const ExprPtr *part :
           {&index.value, &index.start, &index.stop, &index.step})
        if (*part)
          forEachName(**part, visit);
    return;
  }
  case Expr::Kind::Number:
  case Expr::Kind::Bool:
    return;
  }
}

std::string torchEquivalent(const std::string &name) {
  static const std::pair<const char *, const char *> kNames[] = {
      {"T", "transpose(x, -2, -1)"},
      {"mT", "transpose(x, -2, -1)"},
      {"transpose", "transpose(x, d0, d1), which swaps two axes"},
      {"unsqueeze", "x[:, None] (a subscript with None adds an axis), or "
                    "reshape(x, d0, d1, ...)"},
      {"squeeze", "reshape(x, d0, d1, ...) without the axis of size 1"},
      {"view", "reshape(x, d0, d1, ...)"},
      {"reshape", "reshape(x, d0, d1, ...)"},
      {"permute", "transpose(x, d0, d1), which swaps two axes"},
      {"cat", "concat(a, b, axis = ...)"},
      {"masked_fill", "masked_fill(x, mask, value)"},
      {"masked_fill_", "masked_fill(x, mask, value)"},
      {"softmax", "softmax(x, axis = ...)"},
      {"sum", "reduce_sum(x, axis = ...)"},
      {"mean", "reduce_mean(x, axis = ...)"},
      {"amax", "reduce_max(x, axis = ...)"},
      {"max", "reduce_max(x, axis = ...) (max(a, b) is elementwise)"},
      {"min", "reduce_min(x, axis = ...) (min(a, b) is elementwise)"},
      {"matmul", "matmul(a, b)"},
      {"triu", "causal_mask(ids) for a causal (no-peek) mask, or a "
               "comparison of arange(T)[:, None] and arange(T)[None, :]"},
      {"tril", "causal_mask(ids) for a causal (no-peek) mask, or a "
               "comparison of arange(T)[:, None] and arange(T)[None, :]"},
      {"sqrt", "sqrt(x)"},
      {"exp", "exp(x)"},
      {"log", "log(x)"},
      {"tanh", "tanh(x)"},
      {"argmax", "argmax(x, axis = -1)"},
      {"argmin", "argmax(-x, axis = -1)"},
      {"topk", "argmax(x, axis = -1) for the largest, then argmax of "
               "masked_fill(x, float(ids[..., None] == arange(n)) > 0.0, "
               "-1e9) for the next; the mask x == reduce_max(x, axis = -1, "
               "keepdim = true) selects every largest"},
      {"one_hot", "float(ids[..., None] == arange(n))"},
      {"gather", "x[ids] or index_select(x, axis, ids) for whole rows; along "
                 "the last axis, reduce_sum(x * float(ids[..., None] == "
                 "arange(n)), axis = -1)"},
      {"glu", "a, b = split(x, n, n, axis = -1) and a * sigmoid(b) (SwiGLU: "
              "silu(a) * b)"},
      {"sign", "where(x > 0.0, 1.0, where(x < 0.0, -1.0, 0.0))"},
      {"detach", "stop_gradient(x)"},
      {"contiguous", "nothing: tensors here have no memory layout"},
      {"float", "float(x) for ids or a mask (an f32 tensor needs "
                "nothing: tensors are f32 unless declared otherwise)"},
  };
  for (const auto &[torch, ours] : kNames)
    if (name == torch)
      return ours;
  return "";
}

} // namespace ast
} // namespace txc
