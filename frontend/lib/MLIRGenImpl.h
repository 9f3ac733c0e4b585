//===- MLIRGenImpl.h - state shared by MLIRGen and its builtins --*- C++ -*-===//
//
// Private to frontend/lib: the generator class (MLIRGen.cpp) and the table of
// builtin functions (Builtins.cpp) that it dispatches calls to.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_LIB_MLIRGENIMPL_H
#define TXC_FRONTEND_LIB_MLIRGENIMPL_H

#include "txc/Frontend/MLIRGen.h"

#include "tx/Dialect/TxDialect.h"
#include "tx/Dialect/TxShape.h"

#include "mlir/IR/Builders.h"

#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace txc::detail {

/// Constants for the builtin tables (Builtins.cpp, IndexBuiltins.cpp).
inline ConstValue I(int64_t v) { return ConstValue::ofInt(v); }
inline ConstValue F(double v) { return ConstValue::ofFloat(v); }
inline ConstValue B(bool v) { return ConstValue::ofBool(v); }

/// What an expression evaluates to: a tensor (an SSA value), a
/// compile-time constant, or several tensors (what `chunk` and `split`
/// give, for a tuple assignment `a, b = chunk(x, 2)`). None is set after an
/// error.
struct Val {
  mlir::Value tensor;
  std::optional<ConstValue> constant;
  std::vector<mlir::Value> tuple;

  static Val of(mlir::Value value) { return {value, std::nullopt, {}}; }
  static Val of(ConstValue value) { return {nullptr, value, {}}; }
  static Val ofTuple(std::vector<mlir::Value> values) {
    return {nullptr, std::nullopt, std::move(values)};
  }
  bool isTensor() const { return static_cast<bool>(tensor); }
  bool isConst() const { return constant.has_value(); }
  bool isTuple() const { return !tuple.empty(); }
  bool valid() const { return isTensor() || isConst() || isTuple(); }
};

/// One dimension's part of a subscript (or of `select` / `narrow`),
/// evaluated: the whole dimension, an integer that drops it, a slice, or an
/// i32 tensor of ids to gather.
struct DimIndex {
  enum class Kind { Whole, Integer, Slice, Tensor } kind = Kind::Whole;
  SourceLoc loc;
  std::string text;                         // as written, for messages
  int64_t integer = 0;                      // Integer
  std::optional<int64_t> start, stop, step; // Slice: nullopt when omitted
  std::optional<mlir::tx::Dim> stopDim;     // Slice: `:T`
  mlir::Value tensor;                       // Tensor
};

/// How a builtin's parameter is checked and converted. `Name` takes a bare
/// identifier from the builtin's own vocabulary (`init = normal`), not a
/// value; its text lands in BoundArgs::names. TensorOrNumber takes either (a
/// number becomes a 0-d constant where the builtin needs it).
enum class ArgKind { Tensor, Int, Number, Bool, Name, TensorOrNumber };

/// The element type a Tensor parameter requires (Any: the builtin checks it
/// itself, or takes every type, like `transpose`).
enum class ElemKind { Any, F32, I32, Bool };

struct ParamSpec {
  const char *name;
  ArgKind kind;
  std::optional<ConstValue> defaultValue; // required when nullopt
  ElemKind elem = ElemKind::Any;          // ArgKind::Tensor only
};

class MLIRGenImpl;

/// The arguments of a builtin call, bound to its parameters.
struct BoundArgs {
  std::vector<Val> values;       // one per ParamSpec
  std::vector<SourceLoc> locs;   // where each was written (call loc if not)
  std::vector<Val> rest;         // extra positional args, when variadic
  std::vector<SourceLoc> restLocs;
  std::vector<std::string> names; // ArgKind::Name arguments ("" if not given)

  mlir::Value tensor(size_t i) const { return values[i].tensor; }
  int64_t integer(size_t i) const;
  double number(size_t i) const { return values[i].constant->asDouble(); }
  bool flag(size_t i) const { return values[i].constant->b; }
};

using BuiltinFn = Val (*)(MLIRGenImpl &gen, const ast::CallExpr &call,
                          const BoundArgs &args);

struct Builtin {
  const char *name;
  std::vector<ParamSpec> params;
  BuiltinFn fn;
  bool createsParameters = false; // needs `as name`
  bool variadic = false;          // extra positional args go to `rest`
  bool restFirst = false; // every positional arg goes to `rest`; the named
                          // parameters are keyword-only (`param(2, 3, init =
                          // zeros)`)
};

/// The builtins that join, cut and pick from tensors (IndexBuiltins.cpp).
const std::vector<Builtin> &indexBuiltins();

/// The hint of an axis out of range for a tensor of `rank`: "an axis is in
/// [-rank, rank - 1]", or that a scalar has none.
inline std::string axisRangeHint(int64_t rank) {
  if (rank == 0)
    return "a tensor of rank 0 (a scalar) has no axis";
  return "an axis is in [" + std::to_string(-rank) + ", " +
         std::to_string(rank - 1) + "]";
}
/// The builtin named `name`, or null.
const Builtin *lookupBuiltin(llvm::StringRef name);
/// Every builtin's name (for "did you mean" hints).
std::vector<std::string> builtinNames();
/// Compile-time math functions evaluated by ConstEval (sqrt, exp, ...).
bool isConstFunction(llvm::StringRef name);

/// Checks the spec's `kind` and `@role`s against the generated entries,
/// infers a legacy seq2seq spec's, derives each entry's role, and records
/// them as `tx.kind` / `tx.kind_inferred` / `tx.role` attributes
/// (ModelRoles.cpp, TxRoles.h). Reports at the kind or the role.
void checkModelRoles(mlir::ModuleOp module, const ast::Module &ast,
                     DiagnosticEngine &diags);

/// Checks what the executable's driver needs of the generated `module`: the
/// config values it reads (`pad`, `src_vocab`, `tgt_vocab`, `vocab`) against
/// the embeddings they feed and the tokenizer of a seq2seq model
/// (ModelContract.cpp). Reports at the config item or the op.
void checkModelContract(mlir::ModuleOp module, const ast::Module &ast,
                        const ConfigEnv &env, DiagnosticEngine &diags);

class MLIRGenImpl {
public:
  MLIRGenImpl(mlir::MLIRContext &context, const ast::Module &module,
              const ConfigEnv &env, DiagnosticEngine &diags);

  mlir::OwningOpRef<mlir::ModuleOp> generate();

  //===--------------------------------------------------------------------===//
  // Services for builtins
  //===--------------------------------------------------------------------===//

  mlir::MLIRContext &getContext() { return context; }
  mlir::OpBuilder &getBuilder() { return builder; }
  DiagnosticEngine &getDiags() { return diags; }
  mlir::Location getLoc(SourceLoc loc);
  /// Whether the entry being generated is `train`.
  bool isInTrainEntry() const { return inTrainEntry; }

  /// Creates `OpTy` with inferred result types; reports a shape error at
  /// `loc` and returns null when inference fails.
  template <typename OpTy>
  mlir::Operation *create(SourceLoc loc, mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::Location location = getLoc(loc);
    mlir::DictionaryAttr dict = mlir::DictionaryAttr::get(&context, attrs);
    typename OpTy::Adaptor adaptor(operands, dict);
    llvm::SmallVector<mlir::Type> types;
    if (mlir::failed(
            OpTy::inferReturnTypes(&context, location, adaptor, types)) ||
        !checkSizes(loc, types, OpTy::getOperationName()))
      return nullptr;
    return builder.create<OpTy>(location, types, operands, attrs)
        .getOperation();
  }
  template <typename OpTy>
  Val createValue(SourceLoc loc, mlir::ValueRange operands,
                  llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::Operation *op = create<OpTy>(loc, operands, attrs);
    return op ? Val::of(op->getResult(0)) : Val{};
  }

  /// Checks the tensor types an op `opName` would produce against the size
  /// limits (TxShape.h); reports the first that exceeds them at `loc`.
  bool checkSizes(SourceLoc loc, mlir::TypeRange types, llvm::StringRef opName);
  /// Checks a size given as a builtin's argument (`linear(x, d_ff)`) against
  /// the dimension limit; reports at `loc`, naming `what`.
  bool checkDimSize(SourceLoc loc, int64_t size, llvm::StringRef what);

  /// Reads (declaring on first use) the parameter `<scope>.<as path>.<leaf>`
  /// (`<scope>.<as path>` for an empty leaf) of `shape`. A parameter
  /// declared twice must keep its shape. `std`: the normal initializer's.
  mlir::Value getParameter(const ast::CallExpr &call, llvm::StringRef leaf,
                           llvm::ArrayRef<int64_t> shape, mlir::tx::Init init,
                           std::optional<double> std = std::nullopt);

  /// A 0-d constant tensor of `elementType` holding `value`.
  mlir::Value materialize(SourceLoc loc, const ConstValue &value,
                          mlir::Type elementType);

  /// The static size of dimension `index` (negative from the end) of
  /// `value`, or reports that it is symbolic / out of range.
  std::optional<int64_t> staticDim(SourceLoc loc, mlir::Value value,
                                   int64_t index, llvm::StringRef what);

  /// The value of an expression a builtin reads itself (its variadic
  /// arguments): a tensor or a constant, never several tensors.
  Val genArgument(const ast::Expr &expr) { return genExpr(expr); }
  /// The compile-time value of `expr`, reporting why when it has none.
  std::optional<ConstValue> evalConstant(const ast::Expr &expr) {
    return evalConst(expr);
  }
  /// Whether `expr` is a compile-time value (no tensor in it).
  bool isConstant(const ast::Expr &expr) { return isConstExpr(expr); }
  /// Whether a local variable of any active frame (an entry's, or a def's
  /// being inlined) holds `value`: an op whose result has no use may still
  /// be read through its name, so it must not be erased.
  bool isNamed(mlir::Value value) const;
  /// The dim `expr` names (a bare name of a declared dim that no local
  /// variable shadows), else nullopt; reports nothing.
  std::optional<mlir::tx::Dim> namedDim(const ast::Expr &expr);
  /// Checks that a dim a builtin or a slice gives a tensor (`arange(T)`,
  /// `wpe[:T]`) is the size of an input of the entry being generated, so
  /// the executable knows its value; reports at `loc` otherwise.
  bool checkDimIsBound(SourceLoc loc, const mlir::tx::Dim &dim,
                       llvm::StringRef what);
  /// Checks at compile time that ids from `arange` (`wpe[arange(T)]`,
  /// `embedding(arange(T), ...)`) stay inside a dimension of `rows` rows,
  /// as a slice's range is checked (`wpe[:T]`): from -rows where negative
  /// ids wrap (a gather), else from 0. Other ids are checked when the
  /// entry runs. Reports at `loc`, naming `what`.
  bool checkArangeIds(SourceLoc loc, mlir::Value ids, const mlir::tx::Dim &rows,
                      bool negativeWrap, llvm::StringRef what);
  /// Indexes `x` with one DimIndex per dimension (Subscripts.cpp): checks
  /// every range against the shape, reports at the index's loc, and emits
  /// tx.slice, a tx.reshape dropping integer-indexed dimensions, and a
  /// tx.gather for a tensor index.
  Val indexTensor(SourceLoc loc, mlir::Value x,
                  llvm::ArrayRef<DimIndex> dimIndices);

  /// Refuses a def parameter named like a shape variable of the def's
  /// types or a config value they use as a size (`def f(x: [B, L, n], n)`).
  void checkDefParamNames(const ast::DefDecl &def);
  /// Resolves a dimension written in a type or a reshape: a declared dim
  /// (symbolic) or a constant integer. `bindings` (may be null) resolves
  /// other names as shape variables of a `def` parameter.
  std::optional<mlir::tx::Dim>
  resolveDim(const ast::Expr &expr,
             std::map<std::string, mlir::tx::Dim> *bindings,
             bool *isBindingVar = nullptr);

private:
  struct Frame {
    std::map<std::string, Val> vars;
    /// A def's shape variables bound to a symbolic dim (name -> the dim):
    /// they have no value, which an error about them says.
    std::map<std::string, std::string> symbolicShapeVars;
  };

  /// Counts the ops the builder creates (for kMaxGeneratedOps).
  struct OpCounter : mlir::OpBuilder::Listener {
    void notifyOperationInserted(mlir::Operation *,
                                 mlir::OpBuilder::InsertPoint) override {
      ++count;
    }
    int64_t count = 0;
  };

  /// Adds `size` to the unrolled size; false (after reporting, once) when
  /// that or the op count is over its limit. `loc` is where generation is.
  bool withinLimits(SourceLoc loc, int64_t size);
  /// The number of nodes of `expr` (cached: the AST does not change).
  int64_t sizeOf(const ast::Expr &expr);

  // Declarations.
  void declareEntry(const ast::EntryDecl &entry);
  bool checkEntryName(const ast::EntryDecl &entry);
  void declareOptimizer(const ast::OptimizerDecl &decl);
  void emitParameters();
  void setModuleAttributes();

  // Statements; return false after a `return`.
  void genBlock(const ast::Block &block, std::optional<Val> *returned);
  void genStmt(const ast::Stmt &stmt, std::optional<Val> *returned);

  // Expressions.
  Val genExpr(const ast::Expr &expr);
  Val genName(const ast::NameExpr &expr);
  Val genUnary(const ast::UnaryExpr &expr);
  Val genBinary(const ast::BinaryExpr &expr);
  Val genCall(const ast::CallExpr &call);
  Val genSubscript(const ast::SubscriptExpr &expr);
  /// Like genExpr, but a call may give several tensors (for a tuple
  /// assignment or a def's `return`).
  Val genValue(const ast::Expr &expr);
  void genAssign(const ast::AssignStmt &assign);
  /// The tensors of `return a, b, ...` as one tuple value (invalid after an
  /// error).
  Val genReturnTuple(const ast::ReturnStmt &ret);
  /// Whether a statement may bind `name` (an assignment's target, or a loop
  /// variable when `loopVariable`): config values and dims are constants of
  /// the whole spec, so binding one is reported at `loc`.
  bool checkBindable(const std::string &name, SourceLoc loc, bool loopVariable);
  Val genBuiltinCall(const Builtin &builtin, const ast::CallExpr &call);
  Val genDefCall(const ast::DefDecl &def, const ast::CallExpr &call);
  bool isConstExpr(const ast::Expr &expr);
  /// Whether a call of `def` with compile-time arguments gives a number:
  /// its body binds and returns only numbers (read from the syntax, so that
  /// a call stands in a constant expression without being generated twice).
  bool defGivesConstant(const ast::DefDecl &def);
  std::optional<ConstValue> evalConst(const ast::Expr &expr);
  std::optional<std::string> scopePath(const ast::CallExpr &call);

  std::optional<mlir::RankedTensorType>
  resolveType(const ast::TypeExpr &type,
              std::map<std::string, mlir::tx::Dim> *bindings);
  bool checkArgType(const ast::Param &param, const Val &arg, SourceLoc argLoc,
                    const std::string &defName,
                    std::map<std::string, mlir::tx::Dim> &bindings);
  std::vector<std::string> visibleNames();

  mlir::MLIRContext &context;
  const ast::Module &ast;
  const ConfigEnv &env;
  DiagnosticEngine &diags;
  mlir::OpBuilder builder;
  mlir::ModuleOp module;
  mlir::StringAttr fileName;
  /// Config items an entry input's shape names (`ids: i32[B, T]` with
  /// `config B = 8`), in order: sizes, like dims.
  std::vector<std::string> sizeConfigs;

  std::map<std::string, const ast::DefDecl *> defs;
  /// defGivesConstant's answers.
  std::map<const ast::DefDecl *, bool> constantDefs;
  /// The entries' names: a call of one is told it cannot be called.
  std::set<std::string> entryNames;
  /// The defs some entry calls (directly or through another def): the
  /// others are never checked, which a warning says.
  std::set<std::string> calledDefs;
  std::map<std::string, const ConfigEnv::Dim *> dims;
  std::vector<Frame> frames;
  std::vector<std::string> scope;  // `as` path of the defs being inlined
  /// The builtin call being generated and its `as` path (genBuiltinCall):
  /// its ops' locations end with it, and its parameters take it.
  std::pair<const ast::CallExpr *, std::string> builtinCall{nullptr, ""};
  std::vector<std::string> callStack; // defs being inlined (recursion check)
  bool inTrainEntry = false;
  /// The expression genValue is generating: a call there may give several
  /// tensors.
  const ast::Expr *tupleExpr = nullptr;
  /// The dims in the types of the inputs of the entry being generated.
  std::vector<mlir::StringAttr> entryDims;
  std::string entryName;

  // Limits on unrolling and inlining (MLIRGen.h).
  OpCounter opCounter;
  unsigned nesting = 0;      // genExpr frames active
  int64_t unrolledSize = 0;  // expression nodes generated so far
  std::vector<SourceLoc> unrollSites; // loops and def calls being generated
  std::map<const ast::Expr *, int64_t> exprSizes;
  /// Set when a limit was hit: generation stops (the error says why).
  bool abandoned = false;

  struct ParamInfo {
    std::string name;
    llvm::SmallVector<int64_t> shape;
    mlir::tx::Init init;
    std::optional<double> std;
    SourceLoc loc;
  };
  std::vector<ParamInfo> params;
  std::map<std::string, size_t> paramIndex;
  mlir::DictionaryAttr optimizer;
};

} // namespace txc::detail

#endif // TXC_FRONTEND_LIB_MLIRGENIMPL_H
