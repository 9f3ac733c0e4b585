//===- AST.h - abstract syntax tree of the txc spec language -----*- C++ -*-===//
//
// The parser produces a `ast::Module`; MLIRGen walks it. Nodes carry the
// source location of their first token so every later error can point at it.
// Expressions, statements and declarations use LLVM-style RTTI (`kind` +
// `classof`) so callers write `llvm::dyn_cast<ast::CallExpr>(e)`.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_AST_H
#define TXC_FRONTEND_AST_H

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace txc {

/// A position in a spec file: 1-based line and column.
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
};

namespace ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Number, Bool, Name, Unary, Binary, Call, Subscript };
  Expr(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  SourceLoc getLoc() const { return loc; }

private:
  Kind kind;
  SourceLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

/// `3`, `0.1`, `1e-9`. `isInteger` is true when the literal has no '.' and no
/// exponent.
class NumberExpr : public Expr {
public:
  NumberExpr(SourceLoc loc, double value, bool isInteger)
      : Expr(Kind::Number, loc), value(value), isInteger(isInteger) {}
  double value;
  bool isInteger;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Number; }
};

/// `true`, `false`.
class BoolExpr : public Expr {
public:
  BoolExpr(SourceLoc loc, bool value) : Expr(Kind::Bool, loc), value(value) {}
  bool value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Bool; }
};

/// A reference to a config value, a dim, a parameter or a local variable.
class NameExpr : public Expr {
public:
  NameExpr(SourceLoc loc, std::string name)
      : Expr(Kind::Name, loc), name(std::move(name)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

enum class UnaryOp { Neg, Not };

/// `-x`, `!mask`.
class UnaryExpr : public Expr {
public:
  UnaryExpr(SourceLoc loc, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  UnaryOp op;
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

enum class BinaryOp {
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, // arithmetic
  Eq, Ne, Lt, Le, Gt, Ge,                 // comparisons
  And, Or                                 // `&`, `|` (element-wise on masks)
};

/// Spelling of a binary operator as written in a spec (`+`, `//`, `==`, ...).
const char *spelling(BinaryOp op);

/// `lhs op rhs`; `loc` is the operator's location.
class BinaryExpr : public Expr {
public:
  BinaryExpr(SourceLoc loc, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

/// One call argument: positional (`keyword` empty) or `keyword = value`.
struct Arg {
  SourceLoc loc;
  std::string keyword;
  ExprPtr value;
};

/// One component of an `as` scope path: `self_attn` or `layers[i]`.
struct ScopePart {
  SourceLoc loc;
  std::string name;
  ExprPtr index; // null unless written `name[expr]`
};

/// `callee(args) [as scope.path]`: a builtin or a `def`.
class CallExpr : public Expr {
public:
  CallExpr(SourceLoc loc, std::string callee)
      : Expr(Kind::Call, loc), callee(std::move(callee)) {}
  std::string callee;
  std::vector<Arg> args;
  std::vector<ScopePart> scope; // empty when there is no `as`
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

/// One entry of a subscript: an index (`0`, `-1`, `i`, `ids`), a slice
/// (`1:5:2`, `:T`, `d // 2:`, `:`, each bound optional) or `...`.
struct Index {
  enum class Kind { Single, Slice, Ellipsis };
  SourceLoc loc;
  Kind kind = Kind::Single;
  ExprPtr value;             // Single
  ExprPtr start, stop, step; // Slice: null where not written
};

/// `base[index, ...]` (PyTorch indexing). `loc` is the `[`.
class SubscriptExpr : public Expr {
public:
  SubscriptExpr(SourceLoc loc, ExprPtr base)
      : Expr(Kind::Subscript, loc), base(std::move(base)) {}
  ExprPtr base;
  std::vector<Index> indices;
  static bool classof(const Expr *e) {
    return e->getKind() == Kind::Subscript;
  }
};

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// `[B, S, d_model]`, `i32[B, S]`, `bool[B, 1, Tq, Tk]`. `dtype` is "f32"
/// when none is written.
struct TypeExpr {
  SourceLoc loc;
  std::string dtype = "f32";
  bool dtypeWritten = false;
  std::vector<ExprPtr> dims;
};

/// A parameter of a `def` or an `entry`; the type is optional for `def`.
/// Entry parameters may carry a role after the type (`ids: i32[B, T]
/// @tokens`): what the input means to the executable's driver.
struct Param {
  SourceLoc loc;
  std::string name;
  std::optional<TypeExpr> type;
  std::string role; ///< "" when none is written
  SourceLoc roleLoc;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Assign, Return, For };
  Stmt(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  SourceLoc getLoc() const { return loc; }

private:
  Kind kind;
  SourceLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

/// One name on the left of an assignment.
struct AssignTarget {
  SourceLoc loc;
  std::string name;
};

/// `name = value`, or `a, b, ... = value` for a value that is several
/// tensors (`chunk`, `split`).
class AssignStmt : public Stmt {
public:
  AssignStmt(SourceLoc loc, std::vector<AssignTarget> targets, ExprPtr value)
      : Stmt(Kind::Assign, loc), targets(std::move(targets)),
        value(std::move(value)) {}
  std::vector<AssignTarget> targets; // at least one
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

/// `return value` or, in a def, `return value, rest...` (several tensors,
/// bound by `a, b = f(x)`).
class ReturnStmt : public Stmt {
public:
  ReturnStmt(SourceLoc loc, ExprPtr value, std::vector<ExprPtr> rest = {})
      : Stmt(Kind::Return, loc), value(std::move(value)),
        rest(std::move(rest)) {}
  ExprPtr value;
  std::vector<ExprPtr> rest; // the values after the first
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }
};

/// `for var in lo..hi { body }`: the body is repeated for var = lo .. hi-1.
class ForStmt : public Stmt {
public:
  ForStmt(SourceLoc loc, std::string var, ExprPtr lo, ExprPtr hi)
      : Stmt(Kind::For, loc), var(std::move(var)), lo(std::move(lo)),
        hi(std::move(hi)) {}
  std::string var;
  SourceLoc varLoc; // where the loop variable is written
  ExprPtr lo, hi;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::For; }
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

class Decl {
public:
  enum class Kind { Model, ModelKind, Config, Dim, Def, Entry, Optimizer };
  Decl(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Decl() = default;
  Kind getKind() const { return kind; }
  SourceLoc getLoc() const { return loc; }

private:
  Kind kind;
  SourceLoc loc;
};
using DeclPtr = std::unique_ptr<Decl>;

/// `model name`.
class ModelDecl : public Decl {
public:
  ModelDecl(SourceLoc loc, std::string name)
      : Decl(Kind::Model, loc), name(std::move(name)) {}
  std::string name;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Model; }
};

/// `kind language_model`: what kind of model the spec is (checked against
/// the known kinds by checkModelRoles, not by the parser).
class KindDecl : public Decl {
public:
  KindDecl(SourceLoc loc, std::string name, SourceLoc nameLoc)
      : Decl(Kind::ModelKind, loc), name(std::move(name)), nameLoc(nameLoc) {}
  std::string name;
  SourceLoc nameLoc;
  static bool classof(const Decl *d) { return d->getKind() == Kind::ModelKind; }
};

/// `config a = 1, b = a * 2`.
struct ConfigItem {
  SourceLoc loc;
  std::string name;
  ExprPtr value;
};
class ConfigDecl : public Decl {
public:
  explicit ConfigDecl(SourceLoc loc) : Decl(Kind::Config, loc) {}
  std::vector<ConfigItem> items;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Config; }
};

/// `dim B <= 64, S <= max_len`.
struct DimItem {
  SourceLoc loc;
  std::string name;
  ExprPtr bound;
};
class DimDecl : public Decl {
public:
  explicit DimDecl(SourceLoc loc) : Decl(Kind::Dim, loc) {}
  std::vector<DimItem> items;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Dim; }
};

/// `def name(params) { body }`.
class DefDecl : public Decl {
public:
  DefDecl(SourceLoc loc, std::string name)
      : Decl(Kind::Def, loc), name(std::move(name)) {}
  std::string name;
  std::vector<Param> params;
  Block body;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Def; }
};

/// `entry name(params) -> result, ... { body }`.
struct ResultName {
  SourceLoc loc;
  std::string name;
};
class EntryDecl : public Decl {
public:
  EntryDecl(SourceLoc loc, std::string name)
      : Decl(Kind::Entry, loc), name(std::move(name)) {}
  std::string name;
  std::vector<Param> params;
  std::vector<ResultName> results;
  Block body;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Entry; }
};

/// `optimizer adam(lr = noam(d_model, warmup = 4000), beta1 = 0.9, ...)`.
class OptimizerDecl : public Decl {
public:
  OptimizerDecl(SourceLoc loc, std::string name)
      : Decl(Kind::Optimizer, loc), name(std::move(name)) {}
  std::string name;
  std::vector<Arg> args;
  static bool classof(const Decl *d) {
    return d->getKind() == Kind::Optimizer;
  }
};

/// A whole spec file.
struct Module {
  std::vector<DeclPtr> decls;
};

/// Prints the AST back as canonical spec text (used by tests and
/// `txc --emit=ast`).
std::string print(const Module &module);

/// Prints one expression as canonical spec text, with only the parentheses
/// the precedence rules need (`(a + b) * c`, `-x ** 2`).
std::string print(const Expr &expr);

/// Calls `visit` on every name `expr` reads, in source order: its operands,
/// a call's arguments, a subscript's base and bounds (a call's callee and
/// `as` path are not names it reads).
void forEachName(const Expr &expr,
                 const std::function<void(const NameExpr &)> &visit);

/// The canonical spelling of a number literal: integers without a fraction
/// (`512`); floats in the shortest form that reads back to the same double
/// and still lexes as a float (`0.1`, `1e-9`, `2.0`).
std::string formatNumber(double value, bool isInteger);

/// What the language writes for PyTorch's function, method or attribute
/// `name` ("view" -> "reshape(x, d0, d1, ...)"), or "" when it has no
/// entry (hints of the parser and of unknown functions).
std::string torchEquivalent(const std::string &name);

} // namespace ast
} // namespace txc

#endif // TXC_FRONTEND_AST_H
