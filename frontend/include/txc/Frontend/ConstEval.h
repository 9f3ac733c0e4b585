//===- ConstEval.h - compile-time evaluation of expressions -----*- C++ -*-===//
//
// Config values, dim bounds, `for` bounds and scalar arguments are evaluated
// when the spec is compiled. The rules follow Python: int + int is an int,
// `/` is true division (always a float), `//` floors, `%` takes the sign of
// the divisor, `**` of ints is an int (a float for a negative exponent);
// comparisons give bools, `&` `|` `!` take bools. Every failure (division by
// zero, integer overflow, a bool used as a number, ...) is an error at the
// sub-expression that caused it; evaluation never crashes.
//
// Builtin functions: sqrt, exp, log, min, max, abs, int (truncates), float,
// pow.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_CONSTEVAL_H
#define TXC_FRONTEND_CONSTEVAL_H

#include "txc/Frontend/AST.h"
#include "txc/Frontend/Diagnostics.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace txc {

/// A compile-time value: an int, a float or a bool.
struct ConstValue {
  enum class Kind { Int, Float, Bool };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  bool b = false;

  static ConstValue ofInt(int64_t value);
  static ConstValue ofFloat(double value);
  static ConstValue ofBool(bool value);

  /// The value of an Int or a Float as a double (a Bool gives 0 or 1).
  double asDouble() const;
  /// True for Int and Float.
  bool isNumber() const;
  /// As a spec literal would write it: `512`, `0.1`, `2.0`, `1e-9`, `true`.
  std::string str() const;
  /// Same kind and same value.
  bool operator==(const ConstValue &other) const;
  bool operator!=(const ConstValue &other) const { return !(*this == other); }
};

using NameLookup =
    std::function<std::optional<ConstValue>(const std::string &)>;

/// Evaluates `e`; on failure reports an error at the offending sub-expression
/// and returns nullopt. Names resolve through `lookup`; when lookup returns
/// nullopt, reports "unknown name 'x'" with a closestMatch hint from
/// `candidates`.
std::optional<ConstValue>
evaluateConst(const ast::Expr &e, const NameLookup &lookup,
              const std::vector<std::string> &candidates,
              DiagnosticEngine &diags);

/// The names to suggest for an unknown name, computed only when one is
/// unknown (collecting them may cost more than the evaluation).
using CandidateList = std::function<std::vector<std::string>()>;

/// evaluateConst with the hint candidates computed on demand.
std::optional<ConstValue>
evaluateConst(const ast::Expr &e, const NameLookup &lookup,
              const CandidateList &candidates, DiagnosticEngine &diags);

/// The hint for an unknown name ("" for none).
using UnknownNameHint = std::function<std::string(const std::string &)>;

/// A call of a function the evaluator does not know (a `def`): returns
/// false to leave it to the evaluator ("unknown function"), else true with
/// `value` set, or nullopt after reporting why it has no value.
using CallHook = std::function<bool(const ast::CallExpr &,
                                    std::optional<ConstValue> &value)>;

/// evaluateConst with the hint for an unknown name written by the caller
/// (MLIRGen explains that a dim has no compile-time value), and calls of
/// `def`s evaluated by `call` (MLIRGen inlines them).
std::optional<ConstValue> evaluateConstWithHint(const ast::Expr &e,
                                                const NameLookup &lookup,
                                                const UnknownNameHint &hintFor,
                                                DiagnosticEngine &diags,
                                                const CallHook &call = nullptr);

/// The builtin functions a constant expression may call.
const std::vector<std::string> &constBuiltinNames();

/// The largest bound a dim may have: 2^31 - 1, the dimension limit of
/// mlir::tx::kMaxDimSize (TxShape.h; this layer does not depend on MLIR).
constexpr int64_t kMaxDimBound = (int64_t(1) << 31) - 1;

/// The model name, config values and dims of a spec.
struct ConfigEnv {
  std::string modelName;
  std::vector<std::pair<std::string, ConstValue>> config; // in order
  struct Dim {
    std::string name;
    int64_t bound;
    SourceLoc loc;
    /// The config item the bound names (`dim T <= max_len`: "max_len"),
    /// which `-D max_len=N` raises; empty for any other bound (`B <= 8`,
    /// `S <= 2 * max_len`).
    std::string configKey;
  };
  std::vector<Dim> dims;
  /// Config items whose value is another config item's, by name (`config
  /// B = batch`: "B" -> "batch"), where no `-D` set them: a size one of them
  /// gives an entry input is the other's too.
  std::map<std::string, std::string> aliases;
  /// Index of each name in `config` (lookups stay O(log n) in long specs).
  std::map<std::string, size_t> configIndex;
  /// The config items a `-D` flag set, with the flag ("-D pad=16"), for
  /// errors about their values at the spec's line.
  std::map<std::string, std::string> flags;
  /// Config items a `-D` flag did not set but whose value was computed from
  /// one (`config d_k = d_model // heads` under `-D heads=3`), with those
  /// flags ("-D heads=3"), for the same errors.
  std::map<std::string, std::vector<std::string>> derivedFlags;

  /// The value of config item `name`; dims are not constants (nullopt).
  std::optional<ConstValue> lookup(const std::string &name) const;
  /// Appends config item `name` (names are unique).
  void add(const std::string &name, const ConstValue &value);
  /// The dim called `name`, or null.
  const Dim *findDim(const std::string &name) const;
  /// Config names in order (candidates for closestMatch).
  std::vector<std::string> configNames() const;
};

/// Evaluates every `model`, `config` and `dim` declaration in order.
///
/// `overrides` are the `-D name=value` flags of the command line, with or
/// without the leading "-D" ("d_model=128" and "-D d_model=128" both work).
/// Each value is parsed as a spec expression (`-D d_model=2*64`) that may use
/// the config values defined before the item it replaces, and it replaces
/// that item before later items are evaluated (so `config d_k = d_model /
/// heads` sees an overridden d_model); when a name is given twice the last
/// flag wins (with a warning). Problems with a flag are errors at line 0
/// whose message starts with the flag: "-D d_modle=128: no config value named
/// 'd_modle'" (hint: the closest config name).
///
/// Config names must be unique and may not also name a dim. Dim bounds must
/// evaluate to positive integers (a float with an integral value is
/// accepted) of at most kMaxDimBound. Items that fail to evaluate are left
/// out of the result; later uses of them report nothing more.
ConfigEnv evaluateConfig(const ast::Module &m,
                         const std::vector<std::string> &overrides,
                         DiagnosticEngine &diags);

} // namespace txc

#endif // TXC_FRONTEND_CONSTEVAL_H
