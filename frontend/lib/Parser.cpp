//===- Parser.cpp - parser of the txc spec language -----------------------===//
//
// Recursive descent over the token vector, one function per production.
//
// Error recovery: the first error in a statement (or declaration) puts the
// parser in "panic" mode, which silences further errors until it has skipped
// to a point where parsing can sensibly resume:
//   - in a block: the next statement start (`name =` on a new line or outside
//     any bracket, `return`, `for`), the block's `}` or a declaration;
//   - at the top level: the next declaration (`model`/`config`/`dim`/`def`/
//     `entry`/`optimizer` followed by a name, or at the start of a line), or
//     a misspelled one (`confg a = 1` in column 1).
// A broken `def`/`entry`/`for` header skips ahead to its `{` so the errors in
// the body are still reported; a missing `{` is reported once and the body is
// parsed as if it were there. Errors after which the parse can go on as if
// the text were right (a duplicate name, an unknown element type, a keyword
// used as a name, a missing ',' between config items) are "soft": they are
// reported without entering panic mode. A statement (or declaration) with a
// lexical error in it reports nothing more: the lexer has pointed at it.
//
//===----------------------------------------------------------------------===//

#include "txc/Frontend/Parser.h"
#include "txc/Frontend/Lexer.h"

#include <algorithm>
#include <map>

namespace txc {

using namespace ast;

namespace {

std::string locString(SourceLoc loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

/// Tokens that can begin an operand; seeing one where an operator or a
/// separator belongs usually means one is missing.
bool startsOperand(const Token &t) {
  return t.is(TokenKind::Identifier) || t.is(TokenKind::Number) ||
         t.is(TokenKind::LParen) || t.is(TokenKind::KwTrue) ||
         t.is(TokenKind::KwFalse) || t.is(TokenKind::Bang);
}

/// Binding strength of binary operators, loosest first.
enum Level { OrLevel, AndLevel, CompareLevel, AddLevel, MulLevel, PrefixLevel };

std::optional<BinaryOp> binaryOpAt(const Token &t, int level) {
  switch (level) {
  case OrLevel:
    if (t.is(TokenKind::Pipe))
      return BinaryOp::Or;
    break;
  case AndLevel:
    if (t.is(TokenKind::Amp))
      return BinaryOp::And;
    break;
  case CompareLevel:
    switch (t.kind) {
    case TokenKind::EqualEqual:
      return BinaryOp::Eq;
    case TokenKind::BangEqual:
      return BinaryOp::Ne;
    case TokenKind::Less:
      return BinaryOp::Lt;
    case TokenKind::LessEqual:
      return BinaryOp::Le;
    case TokenKind::Greater:
      return BinaryOp::Gt;
    case TokenKind::GreaterEqual:
      return BinaryOp::Ge;
    default:
      break;
    }
    break;
  case AddLevel:
    if (t.is(TokenKind::Plus))
      return BinaryOp::Add;
    if (t.is(TokenKind::Minus))
      return BinaryOp::Sub;
    break;
  case MulLevel:
    if (t.is(TokenKind::Star))
      return BinaryOp::Mul;
    if (t.is(TokenKind::Slash))
      return BinaryOp::Div;
    if (t.is(TokenKind::SlashSlash))
      return BinaryOp::FloorDiv;
    if (t.is(TokenKind::Percent))
      return BinaryOp::Mod;
    break;
  default:
    break;
  }
  return std::nullopt;
}

/// True for tokens after which an expression must continue (so a `name =`
/// on the next line is not a new statement).
bool expectsOperand(const Token &t) {
  for (int level = OrLevel; level < PrefixLevel; ++level)
    if (binaryOpAt(t, level))
      return true;
  switch (t.kind) {
  case TokenKind::Comma:
  case TokenKind::LParen:
  case TokenKind::LBracket:
  case TokenKind::Equal:
  case TokenKind::Minus:
  case TokenKind::Bang:
  case TokenKind::StarStar:
  case TokenKind::Colon:
    return true;
  default:
    return false;
  }
}

const char *const kTooDeep = "expression is nested too deeply (the limit is "
                             "256 levels)";
const char *const kStatementHint =
    "a statement is 'name = expression', 'return expression' or "
    "'for i in lo..hi { ... }'";

class Parser {
public:
  Parser(const SourceFile &file, DiagnosticEngine &diags)
      : diags(diags), tokens(tokenize(file, diags)) {
    malformedBefore.assign(tokens.size() + 1, 0);
    for (size_t i = 0; i < tokens.size(); ++i)
      malformedBefore[i + 1] = malformedBefore[i] + tokens[i].malformed;
  }

  std::unique_ptr<Module> parseModule();
  ExprPtr parseWholeExpression();

private:
  //===--------------------------------------------------------------------===//
  // Tokens
  //===--------------------------------------------------------------------===//
  const Token &cur() const { return tokens[pos]; }
  const Token &peek(size_t n = 1) const {
    return tokens[std::min(pos + n, tokens.size() - 1)];
  }
  const Token &prev() const { return tokens[pos ? pos - 1 : 0]; }
  bool at(TokenKind kind) const { return cur().is(kind); }
  const Token &take() {
    const Token &t = tokens[pos];
    if (pos + 1 < tokens.size())
      ++pos;
    return t;
  }
  bool consumeIf(TokenKind kind) {
    if (!at(kind))
      return false;
    take();
    return true;
  }

  /// `model x`, `def f` ...: a declaration keyword followed by a name, or one
  /// at the start of a line (but never `dim = ...`, a misused keyword).
  bool atDeclStart() const {
    return isDeclKeyword(cur().kind) && !peek().is(TokenKind::Equal) &&
           (peek().is(TokenKind::Identifier) || cur().startsLine);
  }
  /// `name name` in column 1: most likely a misspelled declaration keyword
  /// (`confg a = 1`), worth an error of its own at the top level.
  bool atMisspelledDecl() const {
    return at(TokenKind::Identifier) && cur().startsLine &&
           cur().loc.col == 1 && peek().is(TokenKind::Identifier);
  }
  /// `name =` (or a keyword misused as a name).
  bool atAssignment() const {
    return (at(TokenKind::Identifier) || isKeyword(cur().kind)) &&
           peek().is(TokenKind::Equal);
  }
  /// `a, b, ... =`: the names a tuple assignment binds (keywords misused as
  /// names included), looking at most 64 names ahead.
  bool atTupleAssignment() const {
    auto isName = [&](const Token &t) {
      return t.is(TokenKind::Identifier) || isKeyword(t.kind);
    };
    if (!isName(cur()) || !peek().is(TokenKind::Comma))
      return false;
    for (size_t i = 2; i < 2 * 64; i += 2) {
      if (!isName(peek(i)))
        return false;
      if (peek(i + 1).is(TokenKind::Equal))
        return true;
      if (!peek(i + 1).is(TokenKind::Comma))
        return false;
    }
    return false;
  }
  /// A plain or tuple assignment at the start of a line.
  bool atLineStartStatement() const {
    return (atAssignment() || atTupleAssignment()) && cur().startsLine;
  }
  /// `name =` at the start of a line, after a token that ends an expression.
  bool atNewStatement() const {
    return atLineStartStatement() && !expectsOperand(prev());
  }
  /// `name =` at the start of a line: where an operand or a name is expected,
  /// this is the next statement, and what was expected is missing.
  bool atLineStartAssignment() const {
    return atAssignment() && cur().startsLine;
  }

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//
  /// Where a missing token is reported: at the current token, or just past
  /// the previous one when the current token is on a later line.
  SourceLoc expectedLoc() const {
    if (pos > 0 && (at(TokenKind::Eof) || cur().loc.line != prev().loc.line))
      return prev().endLoc();
    return cur().loc;
  }
  std::string found() const { return ", found " + describe(cur()); }

  /// True when the lexer reported an error about a token of the current
  /// statement or declaration (up to and including the current token).
  bool lexicalErrorInRegion() const {
    return malformedBefore[pos + 1] != malformedBefore[regionStart];
  }
  bool silenced() const { return panicking || lexicalErrorInRegion(); }

  /// An error that derails the statement or declaration: later errors are
  /// silenced until the parser has resynchronized.
  void error(SourceLoc loc, const std::string &message,
             const std::string &hint = "") {
    if (!silenced())
      diags.error(loc, message, hint);
    panicking = true;
  }
  /// "expected ..." at `expectedLoc()`.
  void errorExpected(const std::string &message, const std::string &hint = "") {
    error(expectedLoc(), message, hint);
  }
  /// An error after which parsing goes on as if the text were right.
  void softError(SourceLoc loc, const std::string &message,
                 const std::string &hint = "") {
    if (!silenced())
      diags.error(loc, message, hint);
  }
  /// A note for the error just reported (use right after `softError`).
  void note(SourceLoc loc, const std::string &message) {
    if (!silenced())
      diags.note(loc, message);
  }

  /// Counts recursion; past `kMaxNesting` it reports `message` once.
  struct NestingGuard {
    /// `counter`: the parser's `nesting` (expressions, blocks) or
    /// `loopNesting` ('for' loops, a limit of their own: 256 loops around
    /// one expression were "expression is nested too deeply", twice).
    NestingGuard(Parser &parser, const char *message,
                 unsigned Parser::*counter = &Parser::nesting)
        : parser(parser), counter(counter) {
      ok = ++(parser.*counter) <= kMaxNesting;
      if (!ok)
        parser.error(parser.cur().loc, message);
    }
    ~NestingGuard() { --(parser.*counter); }
    Parser &parser;
    unsigned Parser::*counter;
    bool ok;
  };

  /// Takes a name: an identifier, or a keyword misused as one (reported,
  /// then accepted). Otherwise reports "expected <what> <after>, found ...".
  bool takeName(const std::string &what, const std::string &after,
                const std::string &hint, std::string &name, SourceLoc &loc);

  //===--------------------------------------------------------------------===//
  // Recovery
  //===--------------------------------------------------------------------===//
  void syncStatement(size_t statementStart);
  void syncTopLevel();
  void skipBraces();
  /// At a `{` that opens a body: followed by a statement, a `}` or a newline
  /// (a stray `{` inside a broken header is not one).
  bool atBodyStart() const;
  /// A `}` with more of a statement or header after it on the same line
  /// (`f(a}b)`, `-> loss} {`): a stray rather than the end of a block.
  bool atStrayRBrace() const;
  /// Skips a broken header up to the `{` of its body; false (not moving past
  /// it) at a `}`, a statement or a declaration.
  bool skipToBody();

  //===--------------------------------------------------------------------===//
  // Grammar
  //===--------------------------------------------------------------------===//
  bool parseModel(Module &module);
  bool parseKind(Module &module);
  /// The declaration at a declaration keyword (model, config, dim, def,
  /// entry, optimizer) into `module`: whether it parsed, or none when the
  /// current token begins none.
  std::optional<bool> parseDeclaration(Module &module);
  bool parseConfig(Module &module);
  bool parseDims(Module &module);
  bool parseDef(Module &module);
  bool parseEntry(Module &module);
  bool parseOptimizer(Module &module);
  bool parseParams(std::vector<Param> &params, const std::string &owner);
  bool parseType(TypeExpr &type);
  void parseBlock(Block &body, const std::string &what);
  bool parseStatement(Block &block);
  bool parseTupleAssignment(Block &block);
  bool parseFor(Block &block);
  bool expectStatementEnd();

  ExprPtr parseExpr();
  ExprPtr parseBinary(int level);
  ExprPtr parsePrefix();
  ExprPtr parsePower();
  ExprPtr parsePostfix();
  /// A call, name, literal or parenthesized expression with subscripts.
  ExprPtr parsePostfixChain();
  ExprPtr parsePrimary();
  ExprPtr parseCall();
  ExprPtr parseSubscripts(ExprPtr base);
  bool parseIndex(Index &index, unsigned &height);
  bool parseArgs(std::vector<Arg> &args, const Token &open,
                 const std::string &what, unsigned &height);
  bool parseScope(std::vector<ScopePart> &scope, unsigned &height);
  /// Records `height` as the height of the expression just parsed; false
  /// (with an error at `loc`) when it is over the limit.
  bool setHeight(unsigned height, SourceLoc loc);

  DiagnosticEngine &diags;
  std::vector<Token> tokens;
  /// malformedBefore[i]: how many of tokens[0, i) are `malformed`.
  std::vector<unsigned> malformedBefore;
  size_t pos = 0;
  /// The first token of the statement or declaration being parsed.
  size_t regionStart = 0;
  bool panicking = false;
  unsigned nesting = 0;
  unsigned loopNesting = 0;
  /// Height of the expression tree last returned by a parse function; bounds
  /// long operator chains (`1 + 1 + ... + 1`) that need no recursion to parse
  /// but would need it to walk.
  unsigned lastHeight = 0;

  std::optional<SourceLoc> modelLoc, kindLoc, optimizerLoc;
  std::map<std::string, SourceLoc> defLocs, entryLocs;
};

//===----------------------------------------------------------------------===//
// Names and recovery
//===----------------------------------------------------------------------===//

bool Parser::takeName(const std::string &what, const std::string &after,
                      const std::string &hint, std::string &name,
                      SourceLoc &loc) {
  const Token &t = cur();
  bool misusedKeyword = isKeyword(t.kind) && !atDeclStart();
  if (!t.is(TokenKind::Identifier) && !misusedKeyword) {
    errorExpected("expected " + what + " " + after + found(), hint);
    return false;
  }
  if (misusedKeyword)
    softError(t.loc, "'" + t.text + "' is a keyword and cannot be " + what,
              "rename it, e.g. '" + t.text + "_'");
  name = t.text;
  loc = t.loc;
  take();
  return true;
}

void Parser::syncStatement(size_t statementStart) {
  // Brackets the broken statement opened and did not close: a `name =`
  // inside them is a keyword argument, not a statement. A closer that does
  // not match the innermost open bracket is stray and closes nothing.
  std::vector<TokenKind> closers;
  auto track = [&closers](const Token &t) {
    if (t.is(TokenKind::LParen))
      closers.push_back(TokenKind::RParen);
    else if (t.is(TokenKind::LBracket))
      closers.push_back(TokenKind::RBracket);
    else if (!closers.empty() && t.kind == closers.back())
      closers.pop_back();
  };
  for (size_t i = statementStart; i < pos; ++i)
    track(tokens[i]);
  while (!at(TokenKind::Eof)) {
    const Token &t = cur();
    if (t.is(TokenKind::KwReturn) || t.is(TokenKind::KwFor) || atDeclStart())
      return;
    if (t.is(TokenKind::RBrace) && !atStrayRBrace())
      return;
    // `name =` starts a statement unless it continues a list
    // (`f(a b, k = 1)`) or sits inside brackets on the same line.
    if (atAssignment() && !expectsOperand(prev()) &&
        (closers.empty() || t.startsLine))
      return;
    // `a, b =` on a line of its own (on one line, it is a list of arguments
    // `f(x, k = 1)` or continues a statement).
    if (atTupleAssignment() && t.startsLine && !expectsOperand(prev()))
      return;
    // A name starting a line outside brackets, after a complete operand:
    // the next statement, however broken (`relu(x)`, `x + 1` each on its
    // line: all but the first were swallowed, one error for three).
    if (pos != statementStart && t.is(TokenKind::Identifier) && t.startsLine &&
        closers.empty() && !expectsOperand(prev()))
      return;
    // The body of a construct whose header was garbled (`fr i in 0..n {`):
    // parse it, so its braces pair up and its errors are reported. Inside
    // brackets only a `{` that ends its line counts (not `f(a{b = 1)`).
    if (atBodyStart() && (closers.empty() || peek().startsLine)) {
      NestingGuard guard(*this, "blocks are nested too deeply (the limit is "
                                "256 levels)");
      if (!guard.ok) {
        skipBraces();
        return;
      }
      Block discarded;
      parseBlock(discarded, "the block");
      return;
    }
    track(t);
    take();
  }
}

void Parser::syncTopLevel() {
  while (!at(TokenKind::Eof) && !atDeclStart() && !atMisspelledDecl())
    take();
}

void Parser::skipBraces() {
  unsigned depth = 0;
  do {
    if (at(TokenKind::LBrace))
      ++depth;
    else if (at(TokenKind::RBrace) && depth > 0)
      --depth;
    take();
  } while (depth > 0 && !at(TokenKind::Eof) && !atDeclStart());
}

bool Parser::atBodyStart() const {
  if (!at(TokenKind::LBrace))
    return false;
  const Token &next = peek();
  return next.startsLine || next.is(TokenKind::RBrace) ||
         next.is(TokenKind::KwReturn) || next.is(TokenKind::KwFor) ||
         next.is(TokenKind::Eof) || next.is(TokenKind::Error) ||
         ((next.is(TokenKind::Identifier) || isKeyword(next.kind)) &&
          peek(2).is(TokenKind::Equal));
}

bool Parser::atStrayRBrace() const {
  if (!at(TokenKind::RBrace))
    return false;
  const Token &next = peek();
  return !next.startsLine && !next.is(TokenKind::Eof) &&
         !next.is(TokenKind::RBrace) && !next.is(TokenKind::KwReturn) &&
         !next.is(TokenKind::KwFor) && !isDeclKeyword(next.kind) &&
         !((next.is(TokenKind::Identifier) || isKeyword(next.kind)) &&
           peek(2).is(TokenKind::Equal));
}

bool Parser::skipToBody() {
  while (!atBodyStart()) {
    if (at(TokenKind::Eof) || (at(TokenKind::RBrace) && !atStrayRBrace()) ||
        atDeclStart() || at(TokenKind::KwReturn) || at(TokenKind::KwFor) ||
        atNewStatement())
      return false;
    take();
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

std::optional<bool> Parser::parseDeclaration(Module &module) {
  switch (cur().kind) {
  case TokenKind::KwModel:
    return parseModel(module);
  case TokenKind::KwConfig:
    return parseConfig(module);
  case TokenKind::KwDim:
    return parseDims(module);
  case TokenKind::KwDef:
    return parseDef(module);
  case TokenKind::KwEntry:
    return parseEntry(module);
  case TokenKind::KwOptimizer:
    return parseOptimizer(module);
  default:
    return std::nullopt;
  }
}

std::unique_ptr<Module> Parser::parseModule() {
  auto module = std::make_unique<Module>();
  while (!at(TokenKind::Eof)) {
    panicking = false;
    size_t start = regionStart = pos;
    const Token &t = cur();
    bool ok = false;
    if (std::optional<bool> parsed = parseDeclaration(*module)) {
      if (!*parsed)
        syncTopLevel();
      if (pos == start)
        take();
      continue;
    }
    switch (t.kind) {
    case TokenKind::RBrace:
      softError(t.loc, "unexpected '}' outside of any block",
                "remove it, or check the braces above");
      while (consumeIf(TokenKind::RBrace)) // one error for `}}}`
        ;
      ok = true;
      break;
    case TokenKind::Error:
      take();
      break;
    default: {
      // `kind` is a keyword only here, so specs may still name things kind.
      if (t.is(TokenKind::Identifier) && t.text == "kind" &&
          peek(1).is(TokenKind::Identifier) && !peek(1).startsLine) {
        ok = parseKind(*module);
        break;
      }
      if (atAssignment() || atTupleAssignment() ||
          t.is(TokenKind::KwReturn) || t.is(TokenKind::KwFor)) {
        error(t.loc, "statements must be inside the body of a 'def' or an "
                     "'entry'");
      } else {
        std::string hint;
        if (t.is(TokenKind::Identifier) && t.text == "kind") {
          hint = "a 'kind' declaration names the kind on the same line, e.g. "
                 "`kind language_model`";
        } else if (t.is(TokenKind::Identifier)) {
          std::string match =
              closestMatch(t.text, {"model", "kind", "config", "dim", "def",
                                    "entry", "optimizer"});
          if (!match.empty())
            hint = "did you mean '" + match + "'?";
        }
        error(t.loc,
              "expected a declaration (model, kind, config, dim, def, entry "
              "or optimizer), found " +
                  describe(t),
              hint);
      }
      take();
      break;
    }
    }
    if (!ok)
      syncTopLevel();
    if (pos == start)
      take();
  }
  return module;
}

bool Parser::parseModel(Module &module) {
  const Token &keyword = take();
  std::string name;
  SourceLoc nameLoc;
  // `model` alone on its line: the next line's first word (`kind`, which is
  // no keyword) is another declaration, not the name, and was read as one.
  if (cur().loc.line != keyword.loc.line && cur().is(TokenKind::Identifier)) {
    softError(keyword.loc, "expected a model name after 'model' on its line",
              "e.g. 'model transformer'");
    return true;
  }
  if (!takeName("a model name", "after 'model'", "e.g. 'model transformer'",
                name, nameLoc))
    return false;
  if (modelLoc) {
    softError(keyword.loc, "duplicate 'model' declaration",
              "a spec names its model once");
    note(*modelLoc, "the model is first declared here");
    return true;
  }
  modelLoc = keyword.loc;
  module.decls.push_back(std::make_unique<ModelDecl>(keyword.loc, name));
  return true;
}

bool Parser::parseKind(Module &module) {
  const Token &keyword = take();
  const Token &name = take();
  if (kindLoc) {
    softError(keyword.loc, "duplicate 'kind' declaration",
              "a spec declares one kind of model");
    note(*kindLoc, "the kind is first declared here");
    return true;
  }
  kindLoc = keyword.loc;
  module.decls.push_back(
      std::make_unique<KindDecl>(keyword.loc, name.text, name.loc));
  return true;
}

bool Parser::parseConfig(Module &module) {
  const Token &keyword = take();
  auto decl = std::make_unique<ConfigDecl>(keyword.loc);
  // Items parsed before an error are kept, so later uses of them do not
  // cascade into "unknown name" errors.
  auto keep = [&] {
    if (!decl->items.empty())
      module.decls.push_back(std::move(decl));
  };
  while (true) {
    ConfigItem item;
    if (!takeName("a config name",
                  decl->items.empty() ? "after 'config'" : "after ','",
                  "e.g. 'config d_model = 512'", item.name, item.loc)) {
      keep();
      return false;
    }
    if (!consumeIf(TokenKind::Equal)) {
      errorExpected("expected '=' after config name '" + item.name + "'",
                    at(TokenKind::LessEqual)
                        ? "'<=' bounds a dim; a config value is written '" +
                              item.name + " = 512'"
                        : "write '" + item.name + " = value'");
      keep();
      return false;
    }
    item.value = parseExpr();
    if (!item.value) {
      keep();
      return false;
    }
    decl->items.push_back(std::move(item));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (at(TokenKind::Eof) || atDeclStart() || atMisspelledDecl())
      break;
    if (at(TokenKind::Identifier) && peek().is(TokenKind::Equal)) {
      // `config a = 1 b = 2`: say so, and go on as if the ',' were there.
      softError(expectedLoc(), "expected ',' between config items",
                "separate config items with ','");
      continue;
    }
    error(cur().loc,
          "unexpected " + describe(cur()) + " after config value '" +
              decl->items.back().name + "'",
          startsOperand(cur()) ? "missing an operator?" : "");
    keep();
    return false;
  }
  keep();
  return true;
}

bool Parser::parseDims(Module &module) {
  const Token &keyword = take();
  auto decl = std::make_unique<DimDecl>(keyword.loc);
  auto keep = [&] {
    if (!decl->items.empty())
      module.decls.push_back(std::move(decl));
  };
  while (true) {
    DimItem item;
    if (!takeName("a dim name",
                  decl->items.empty() ? "after 'dim'" : "after ','",
                  "e.g. 'dim B <= 64'", item.name, item.loc)) {
      keep();
      return false;
    }
    if (!consumeIf(TokenKind::LessEqual)) {
      errorExpected("expected '<=' after dim name '" + item.name + "'",
                    "a dim declares an upper bound: write 'dim " + item.name +
                        " <= 64'");
      keep();
      return false;
    }
    item.bound = parseExpr();
    if (!item.bound) {
      keep();
      return false;
    }
    decl->items.push_back(std::move(item));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (at(TokenKind::Eof) || atDeclStart() || atMisspelledDecl())
      break;
    if (at(TokenKind::Identifier) && peek().is(TokenKind::LessEqual)) {
      softError(expectedLoc(), "expected ',' between dims",
                "separate dims with ','");
      continue;
    }
    error(cur().loc,
          "unexpected " + describe(cur()) + " after the bound of dim '" +
              decl->items.back().name + "'",
          startsOperand(cur()) ? "missing an operator?" : "");
    keep();
    return false;
  }
  keep();
  return true;
}

bool Parser::parseDef(Module &module) {
  const Token &keyword = take();
  auto def = std::make_unique<DefDecl>(keyword.loc, "");
  SourceLoc nameLoc;
  bool headerOk = takeName("a function name", "after 'def'",
                           "e.g. 'def ffn(x) { ... }'", def->name, nameLoc);
  if (headerOk) {
    auto [it, inserted] = defLocs.emplace(def->name, nameLoc);
    if (!inserted) {
      softError(nameLoc, "redefinition of '" + def->name + "'");
      note(it->second, "'" + def->name + "' is first defined here");
    }
    headerOk = parseParams(def->params, "'" + def->name + "'");
  }
  if (headerOk && at(TokenKind::Arrow)) {
    error(cur().loc, "only an 'entry' lists results with '->'",
          "a 'def' returns the value of its 'return' statement");
    if (!skipToBody())
      return false;
  }
  if (!headerOk && !skipToBody())
    return false;
  parseBlock(def->body, headerOk ? "the body of '" + def->name + "'"
                                 : std::string("the body"));
  if (headerOk)
    module.decls.push_back(std::move(def));
  return true;
}

bool Parser::parseEntry(Module &module) {
  const Token &keyword = take();
  auto entry = std::make_unique<EntryDecl>(keyword.loc, "");
  SourceLoc nameLoc;
  bool headerOk = takeName("an entry name", "after 'entry'",
                           "e.g. 'entry train(src: i32[B, S]) -> loss { ... }'",
                           entry->name, nameLoc);
  if (headerOk) {
    auto [it, inserted] = entryLocs.emplace(entry->name, nameLoc);
    if (!inserted) {
      softError(nameLoc, "redefinition of entry '" + entry->name + "'");
      note(it->second, "entry '" + entry->name + "' is first defined here");
    }
    headerOk = parseParams(entry->params, "entry '" + entry->name + "'");
  }
  if (headerOk && consumeIf(TokenKind::Arrow)) {
    // First index of each name: lists may be long, lookups stay O(log n).
    std::map<std::string, size_t> seen;
    do {
      ResultName result;
      if (!takeName("a result name",
                    entry->results.empty() ? "after '->'" : "after ','",
                    "name the values the entry returns, e.g. '-> loss'",
                    result.name, result.loc)) {
        headerOk = false;
        break;
      }
      auto [first, inserted] =
          seen.emplace(result.name, entry->results.size());
      if (!inserted) {
        const ResultName &other = entry->results[first->second];
        softError(result.loc, "duplicate result '" + result.name +
                                  "' in entry '" + entry->name + "'");
        note(other.loc, "'" + result.name + "' is first listed here");
      }
      entry->results.push_back(std::move(result));
    } while (consumeIf(TokenKind::Comma));
  }
  if (!headerOk && !skipToBody())
    return false;
  parseBlock(entry->body, headerOk ? "the body of entry '" + entry->name + "'"
                                   : std::string("the body"));
  if (headerOk)
    module.decls.push_back(std::move(entry));
  return true;
}

bool Parser::parseOptimizer(Module &module) {
  const Token &keyword = take();
  auto optimizer = std::make_unique<OptimizerDecl>(keyword.loc, "");
  SourceLoc nameLoc;
  if (!takeName("an optimizer name", "after 'optimizer'",
                "e.g. 'optimizer adam(lr = 1e-3)'", optimizer->name, nameLoc))
    return false;
  if (!at(TokenKind::LParen)) {
    errorExpected("expected '(' after optimizer name '" + optimizer->name + "'",
                  "write e.g. 'optimizer " + optimizer->name + "(lr = 1e-3)'");
    return false;
  }
  const Token &open = take();
  unsigned height = 0;
  if (!parseArgs(optimizer->args, open, "optimizer '" + optimizer->name + "'",
                 height))
    return false;
  if (optimizerLoc) {
    softError(keyword.loc, "duplicate 'optimizer' declaration",
              "a spec has one optimizer");
    note(*optimizerLoc, "the optimizer is first declared here");
    return true;
  }
  optimizerLoc = keyword.loc;
  module.decls.push_back(std::move(optimizer));
  return true;
}

bool Parser::parseParams(std::vector<Param> &params, const std::string &owner) {
  if (!at(TokenKind::LParen)) {
    errorExpected("expected '(' after the name of " + owner,
                  "write an empty list '()' if it takes no parameters");
    return false;
  }
  const Token &open = take();
  if (consumeIf(TokenKind::RParen))
    return true;
  std::map<std::string, size_t> seen; // first index of each name
  while (true) {
    Param param;
    if (consumeIf(TokenKind::RParen)) // `def f(x, y,)`: a trailing ','
      return true;
    if (!takeName("a parameter name",
                  params.empty() ? "after '('" : "after ','", "", param.name,
                  param.loc))
      return false;
    if (auto [first, inserted] = seen.emplace(param.name, params.size());
        !inserted) {
      softError(param.loc,
                "duplicate parameter '" + param.name + "' in " + owner);
      note(params[first->second].loc,
           "'" + param.name + "' is first declared here");
    }
    if (consumeIf(TokenKind::Colon)) {
      TypeExpr type;
      if (!parseType(type))
        return false;
      param.type = std::move(type);
    }
    if (at(TokenKind::At)) {
      SourceLoc atLoc = take().loc;
      if (!takeName("a role name", "after '@'", "e.g. 'ids: i32[B, T] @tokens'",
                    param.role, param.roleLoc))
        return false;
      param.roleLoc = atLoc;
    }
    params.push_back(std::move(param));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (consumeIf(TokenKind::RParen))
      return true;
    if (at(TokenKind::Equal))
      error(cur().loc, "parameters cannot have default values",
            "use a config value, or pass the value at every call");
    else if (at(TokenKind::Identifier))
      errorExpected("expected ',' between parameters");
    else
      errorExpected("expected ')' to close the parameter list of " + owner +
                    " opened at " + locString(open.loc));
    return false;
  }
}

bool Parser::parseType(TypeExpr &type) {
  type.loc = cur().loc;
  if (at(TokenKind::Identifier) && !peek().is(TokenKind::LBracket)) {
    const std::string &name = cur().text;
    if (name == "f32" || name == "i32" || name == "bool") {
      take();
      errorExpected("expected '[' after element type '" + name + "'",
                    "a type is written like '" + name + "[B, S]'");
    } else {
      errorExpected("expected a type after ':'" + found(),
                    "a shape is written in brackets, e.g. '[B, S, d_model]'");
    }
    return false;
  }
  if (at(TokenKind::Identifier)) {
    const Token &dtype = take();
    type.dtype = dtype.text;
    type.dtypeWritten = true;
    if (dtype.text != "f32" && dtype.text != "i32" && dtype.text != "bool") {
      std::string match = closestMatch(dtype.text, {"f32", "i32", "bool"});
      if (match.empty() && !dtype.text.empty()) // f16, f64, i64, u8, ...
        match = dtype.text[0] == 'f'                           ? "f32"
                : dtype.text[0] == 'b'                         ? "bool"
                : dtype.text[0] == 'i' || dtype.text[0] == 'u' ? "i32"
                                                               : "";
      softError(dtype.loc,
                "unknown element type '" + dtype.text +
                    "'; expected f32, i32 or bool",
                match.empty() ? "" : "did you mean '" + match + "'?");
    }
  } else if (!at(TokenKind::LBracket)) {
    errorExpected("expected a type after ':'" + found(),
                  "e.g. 'x: [B, S, d_model]' or 'ids: i32[B, S]'");
    return false;
  }
  const Token &open = take();
  if (consumeIf(TokenKind::RBracket)) {
    softError(open.loc, "empty shape '[]'",
              "a type needs at least one dimension: a scalar entry input is "
              "'f32[1]'");
    return true;
  }
  while (true) {
    if (!type.dims.empty() && consumeIf(TokenKind::RBracket))
      return true; // `[B, T,]`: a trailing ',' as in Python
    ExprPtr dim = parseExpr();
    if (!dim)
      return false;
    type.dims.push_back(std::move(dim));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (consumeIf(TokenKind::RBracket))
      return true;
    if (startsOperand(cur()))
      errorExpected("expected ',' between dimensions");
    else
      errorExpected("expected ']' to close the shape opened at " +
                    locString(open.loc));
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Parser::parseBlock(Block &body, const std::string &what) {
  SourceLoc openLoc;
  // Without a `{`, one error is enough: the body is parsed as if it had one,
  // and its end (a `}` or the next declaration) is not complained about.
  bool implicitOpen = false;
  if (at(TokenKind::LBrace)) {
    openLoc = take().loc;
  } else {
    errorExpected("expected '{' to begin " + what);
    if (skipToBody())
      openLoc = take().loc;
    else if (at(TokenKind::Eof) || atDeclStart())
      return;
    else
      implicitOpen = true;
  }
  while (true) {
    panicking = false;
    regionStart = pos;
    if (consumeIf(TokenKind::RBrace))
      return;
    // An indented declaration is one written inside the body (`config q =
    // 3` in an entry: three errors followed, none saying so), not the next
    // one after a missing '}', which begins a line at column 1.
    if (atDeclStart() && cur().loc.col > 1) {
      const Token &keyword = cur();
      error(keyword.loc,
            "'" + keyword.text + "' declares at the top level of the spec, "
            "not inside " + what,
            "move it out of the body, before the entry or def");
      Module discarded;
      size_t start = pos;
      if (!parseDeclaration(discarded).value_or(false))
        syncStatement(start);
      if (pos == start)
        take();
      continue;
    }
    if (at(TokenKind::Eof) || atDeclStart()) {
      if (!implicitOpen)
        error(expectedLoc(), "expected '}' to close " + what + " opened at " +
                                 locString(openLoc));
      return;
    }
    size_t start = pos;
    if (!parseStatement(body))
      syncStatement(start);
    if (pos == start)
      take();
  }
}

bool Parser::parseStatement(Block &block) {
  const Token &t = cur();
  if (atTupleAssignment())
    return parseTupleAssignment(block);
  if (atAssignment()) {
    if (!t.is(TokenKind::Identifier))
      softError(t.loc,
                "'" + t.text + "' is a keyword and cannot be assigned to",
                "rename the variable, e.g. '" + t.text + "_'");
    take();
    take();
    ExprPtr value = parseExpr();
    if (!value || !expectStatementEnd())
      return false;
    block.push_back(std::make_unique<AssignStmt>(
        t.loc, std::vector<AssignTarget>{{t.loc, t.text}}, std::move(value)));
    return true;
  }
  switch (t.kind) {
  case TokenKind::KwReturn: {
    take();
    ExprPtr value = parseExpr();
    if (!value)
      return false;
    std::vector<ExprPtr> rest;
    while (consumeIf(TokenKind::Comma)) {
      rest.push_back(parseExpr());
      if (!rest.back())
        return false;
    }
    if (!expectStatementEnd())
      return false;
    block.push_back(
        std::make_unique<ReturnStmt>(t.loc, std::move(value), std::move(rest)));
    return true;
  }
  case TokenKind::KwFor:
    return parseFor(block);
  case TokenKind::Identifier: {
    const Token &next = peek();
    if (next.is(TokenKind::LParen)) {
      error(t.loc, "the result of the call to '" + t.text + "' is not used",
            "assign it, e.g. 'y = " + t.text + "(...)', or return it");
    } else if (next.is(TokenKind::EqualEqual)) {
      error(next.loc, "expected '=' to assign to '" + t.text + "', found '=='",
            "'==' compares; '=' assigns");
    } else {
      take();
      errorExpected("expected '=' after '" + t.text + "'", kStatementHint);
    }
    return false;
  }
  case TokenKind::Error:
    take();
    panicking = true;
    return false;
  default:
    error(t.loc, "expected a statement" + found(), kStatementHint);
    return false;
  }
}

bool Parser::parseTupleAssignment(Block &block) {
  SourceLoc loc = cur().loc;
  std::vector<AssignTarget> targets;
  while (true) {
    const Token &name = take();
    if (!name.is(TokenKind::Identifier))
      softError(name.loc,
                "'" + name.text + "' is a keyword and cannot be assigned to",
                "rename the variable, e.g. '" + name.text + "_'");
    for (const AssignTarget &earlier : targets)
      if (earlier.name == name.text) {
        softError(name.loc, "'" + name.text +
                                "' is assigned twice in one statement",
                  "give each value its own name");
        break;
      }
    targets.push_back({name.loc, name.text});
    if (take().is(TokenKind::Equal)) // a ',' or the '=' (atTupleAssignment)
      break;
  }
  ExprPtr value = parseExpr();
  if (!value || !expectStatementEnd())
    return false;
  block.push_back(
      std::make_unique<AssignStmt>(loc, std::move(targets), std::move(value)));
  return true;
}

bool Parser::expectStatementEnd() {
  const Token &t = cur();
  if (t.is(TokenKind::RBrace) || t.is(TokenKind::Eof) ||
      t.is(TokenKind::KwReturn) || t.is(TokenKind::KwFor) ||
      t.is(TokenKind::Error) || atDeclStart() || atAssignment() ||
      (atTupleAssignment() && t.startsLine))
    return true;
  // A call on a line of its own starts the next statement, which says what
  // is wrong with it (`linear(x, d)` after `y = x` was "unexpected
  // identifier after the end of the statement", blaming the line above).
  if (t.is(TokenKind::Identifier) && t.startsLine &&
      peek().is(TokenKind::LParen))
    return true;
  // `y[0] = 1.0`: said as what it is (it was "missing an operator?", then
  // "expected '=' after 'y'").
  if (t.is(TokenKind::Identifier) && t.startsLine &&
      peek().is(TokenKind::LBracket)) {
    error(t.loc,
          "assigning into a subscript ('" + t.text +
              "[...] = ...') is not supported: tensors are values",
          "build the new tensor, e.g. with where(mask, new, old) or concat");
    // The whole line is the one problem (its `y[0]` read as a statement
    // said "expected '=' after 'y'" next).
    take();
    while (!at(TokenKind::Eof) && !at(TokenKind::RBrace) && !cur().startsLine)
      take();
    return false;
  }
  // Python's spellings of the operators the language writes otherwise.
  std::string hint = startsOperand(t) ? "missing an operator?" : "";
  if (t.text == "and" || t.text == "or")
    hint = "'" + t.text + "' is written '" + (t.text == "and" ? "&" : "|") +
           "' here";
  else if (t.text == "@")
    hint = "matrix products are written matmul(a, b)";
  else if (prev().text == "not")
    hint = "'not' is written '!' here ('!x')";
  error(t.loc, "unexpected " + describe(t) + " after the end of the statement",
        hint);
  return false;
}

bool Parser::parseFor(Block &block) {
  NestingGuard guard(*this,
                     "'for' loops are nested too deeply (the limit is 256 "
                     "levels)",
                     &Parser::loopNesting);
  const Token &keyword = take();
  if (!guard.ok) {
    // Skip the whole loop rather than parse its body at the wrong depth.
    if (skipToBody())
      skipBraces();
    return true;
  }
  auto loop = std::make_unique<ForStmt>(keyword.loc, "", nullptr, nullptr);
  bool headerOk = false;
  do {
    if (at(TokenKind::KwIn)) {
      errorExpected("expected a loop variable name after 'for'",
                    "write e.g. 'for i in 0..layers { ... }'");
      break;
    }
    if (!takeName("a loop variable name", "after 'for'",
                  "write e.g. 'for i in 0..layers { ... }'", loop->var,
                  loop->varLoc))
      break;
    if (!consumeIf(TokenKind::KwIn)) {
      errorExpected("expected 'in' after loop variable '" + loop->var + "'",
                    "write 'for " + loop->var + " in 0..n { ... }'");
      break;
    }
    loop->lo = parseExpr();
    if (!loop->lo)
      break;
    if (!consumeIf(TokenKind::DotDot)) {
      errorExpected("expected '..' between the bounds of the loop over '" +
                        loop->var + "'",
                    "write 'for " + loop->var + " in lo..hi { ... }'");
      break;
    }
    loop->hi = parseExpr();
    headerOk = loop->hi != nullptr;
  } while (false);
  if (!headerOk && !skipToBody())
    return false;
  parseBlock(loop->body, headerOk
                             ? "the body of the loop over '" + loop->var + "'"
                             : std::string("the loop body"));
  if (headerOk)
    block.push_back(std::move(loop));
  return true;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

bool Parser::setHeight(unsigned height, SourceLoc loc) {
  if (height > kMaxNesting) {
    error(loc, kTooDeep);
    return false;
  }
  lastHeight = height;
  return true;
}

ExprPtr Parser::parseExpr() {
  NestingGuard guard(*this, kTooDeep);
  if (!guard.ok)
    return nullptr;
  return parseBinary(OrLevel);
}

ExprPtr Parser::parseBinary(int level) {
  if (level == PrefixLevel)
    return parsePrefix();
  ExprPtr lhs = parseBinary(level + 1);
  if (!lhs)
    return nullptr;
  unsigned height = lastHeight;
  bool chained = false;
  unsigned chainLength = 0;
  while (std::optional<BinaryOp> op = binaryOpAt(cur(), level)) {
    if (level == CompareLevel && chained) {
      error(cur().loc, "comparisons cannot be chained",
            "combine them with '&', e.g. '(a < b) & (b < c)'");
    }
    chained = true;
    SourceLoc loc = take().loc;
    ExprPtr rhs = parseBinary(level + 1);
    if (!rhs)
      return nullptr;
    height = std::max(height, lastHeight) + 1;
    ++chainLength;
    if (height > kMaxNesting && 2 * chainLength > height) {
      // The chain itself is what grew too tall: `x + x + ... + x` is a
      // tree as deep as it has operators, and every later stage walks it
      // recursively.
      error(loc,
            "this chain of operators is too long: an expression may be at "
            "most " +
                std::to_string(kMaxNesting) +
                " operators deep, and each operator of a chain counts",
            "split it into named partial results (s1 = a + b + ...; "
            "s2 = s1 + ...) or accumulate in a 'for' loop");
      return nullptr;
    }
    if (!setHeight(height, loc))
      return nullptr;
    lhs =
        std::make_unique<BinaryExpr>(loc, *op, std::move(lhs), std::move(rhs));
  }
  lastHeight = height;
  return lhs;
}

ExprPtr Parser::parsePrefix() {
  if (!at(TokenKind::Minus) && !at(TokenKind::Bang))
    return parsePower();
  NestingGuard guard(*this, kTooDeep);
  if (!guard.ok)
    return nullptr;
  const Token &op = take();
  ExprPtr operand = parsePrefix();
  if (!operand || !setHeight(lastHeight + 1, op.loc))
    return nullptr;
  return std::make_unique<UnaryExpr>(
      op.loc, op.is(TokenKind::Minus) ? UnaryOp::Neg : UnaryOp::Not,
      std::move(operand));
}

ExprPtr Parser::parsePower() {
  ExprPtr base = parsePostfix();
  if (!base || !at(TokenKind::StarStar))
    return base;
  unsigned baseHeight = lastHeight;
  NestingGuard guard(*this, kTooDeep);
  if (!guard.ok)
    return nullptr;
  SourceLoc loc = take().loc;
  // Right-associative, and the exponent may carry a sign: 2 ** -x ** 2 is
  // 2 ** (-(x ** 2)), as in Python.
  ExprPtr exponent = parsePrefix();
  if (!exponent || !setHeight(std::max(baseHeight, lastHeight) + 1, loc))
    return nullptr;
  return std::make_unique<BinaryExpr>(loc, BinaryOp::Pow, std::move(base),
                                      std::move(exponent));
}

ExprPtr Parser::parsePostfix() {
  ExprPtr e = parsePostfixChain();
  // `x.transpose(-2, -1)`, `scores.masked_fill(...)`: PyTorch's methods.
  if (e && at(TokenKind::Dot) && peek().is(TokenKind::Identifier)) {
    const std::string &method = peek().text;
    const std::string equivalent = ast::torchEquivalent(method);
    error(cur().loc,
          "'." + method +
              "' after an expression: PyTorch's methods and attributes are "
              "not part of the spec language",
          equivalent.empty()
              ? "call a builtin with the tensor first where the language has "
                "one (docs/spec-language.md lists them)"
              : "write " + equivalent);
    return nullptr;
  }
  return e;
}

ExprPtr Parser::parsePostfixChain() {
  if (at(TokenKind::Identifier) && peek().is(TokenKind::LParen)) {
    ExprPtr call = parseCall();
    if (!call || !at(TokenKind::LBracket))
      return call;
    // `f(x) as s[i]` indexes the scope; `f(x) as s` then `[` would read as
    // a subscript of the scope name.
    if (!static_cast<CallExpr *>(call.get())->scope.empty()) {
      error(cur().loc, "a subscript cannot follow an 'as' scope",
            "put the call in parentheses: '(linear(x, 8) as proj)[..., :4]'");
      return nullptr;
    }
    return parseSubscripts(std::move(call));
  }
  ExprPtr e = parsePrimary();
  if (e && at(TokenKind::LBracket))
    e = parseSubscripts(std::move(e));
  if (e && at(TokenKind::KwAs)) {
    error(cur().loc, "'as' can only follow a call",
          "'as' names the scope of the parameters a call creates, e.g. "
          "'linear(x, 512) as W_q'");
    return nullptr;
  }
  return e;
}

ExprPtr Parser::parseSubscripts(ExprPtr base) {
  unsigned height = lastHeight;
  while (at(TokenKind::LBracket)) {
    const Token &open = take();
    auto subscript = std::make_unique<SubscriptExpr>(open.loc, std::move(base));
    if (at(TokenKind::RBracket)) {
      errorExpected("expected an index in '[...]'",
                    "e.g. 'x[0]', 'x[:, 1:5]' or 'x[..., :d // 2]'");
      return nullptr;
    }
    std::optional<SourceLoc> ellipsis;
    while (true) {
      Index index;
      if (!subscript->indices.empty() && consumeIf(TokenKind::RBracket))
        break; // `x[0, 1,]`: a trailing ',' as in Python
      if (!parseIndex(index, height))
        return nullptr;
      if (index.kind == Index::Kind::Ellipsis) {
        if (ellipsis) {
          softError(index.loc, "a subscript has at most one '...'");
          note(*ellipsis, "the first '...' is here");
        }
        ellipsis = index.loc;
      }
      subscript->indices.push_back(std::move(index));
      if (consumeIf(TokenKind::Comma))
        continue;
      if (consumeIf(TokenKind::RBracket))
        break;
      if (startsOperand(cur()) && cur().loc.line == prev().loc.line)
        errorExpected("expected ',' between indices");
      else
        errorExpected("expected ']' to close the subscript opened at " +
                      locString(open.loc));
      return nullptr;
    }
    base = std::move(subscript);
    if (!setHeight(++height, open.loc))
      return nullptr;
  }
  return base;
}

bool Parser::parseIndex(Index &index, unsigned &height) {
  index.loc = cur().loc;
  if (consumeIf(TokenKind::Ellipsis)) {
    index.kind = Index::Kind::Ellipsis;
    return true;
  }
  // A bound of a slice: absent before ':', ',' and ']'.
  auto bound = [&](ExprPtr &slot) {
    if (at(TokenKind::Colon) || at(TokenKind::Comma) ||
        at(TokenKind::RBracket))
      return true;
    slot = parseExpr();
    if (!slot)
      return false;
    height = std::max(height, lastHeight);
    return true;
  };
  ExprPtr first;
  if (at(TokenKind::Comma)) { // `x[, 1]`, `x[0, , 1]`
    errorExpected("expected an index before ','", "remove the extra ','");
    return false;
  }
  if (!at(TokenKind::Colon)) {
    if (!bound(first))
      return false;
    if (!at(TokenKind::Colon)) {
      index.kind = Index::Kind::Single;
      index.value = std::move(first);
      return true;
    }
  }
  index.kind = Index::Kind::Slice;
  index.start = std::move(first);
  take(); // ':'
  if (!bound(index.stop))
    return false;
  if (consumeIf(TokenKind::Colon) && !bound(index.step))
    return false;
  return true;
}

ExprPtr Parser::parsePrimary() {
  const Token &t = cur();
  switch (t.kind) {
  case TokenKind::Number:
    take();
    lastHeight = 1;
    return std::make_unique<NumberExpr>(t.loc, t.number, t.isInteger);
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    take();
    lastHeight = 1;
    return std::make_unique<BoolExpr>(t.loc, t.is(TokenKind::KwTrue));
  case TokenKind::Identifier:
    if (atLineStartAssignment())
      break; // `x = <newline> y = ...`: the value of `x` is missing
    take();
    lastHeight = 1;
    return std::make_unique<NameExpr>(t.loc, t.text);
  case TokenKind::LParen: {
    take();
    ExprPtr inner = parseExpr();
    if (!inner)
      return nullptr;
    if (!consumeIf(TokenKind::RParen)) {
      errorExpected("expected ')' to close '(' opened at " + locString(t.loc));
      return nullptr;
    }
    return inner;
  }
  default:
    break;
  }
  if (atLineStartAssignment()) {
    errorExpected("expected an expression after '" + prev().text + "'");
  } else {
    bool misusedKeyword = isKeyword(t.kind) && !t.is(TokenKind::KwReturn) &&
                          !t.is(TokenKind::KwFor) && !atDeclStart();
    errorExpected("expected an expression" + found(),
                  misusedKeyword ? "'" + t.text +
                                       "' is a keyword and cannot be used as "
                                       "a name"
                                 : "");
  }
  return nullptr;
}

ExprPtr Parser::parseCall() {
  const Token &name = take();
  const Token &open = take();
  auto call = std::make_unique<CallExpr>(name.loc, name.text);
  unsigned height = 1;
  if (!parseArgs(call->args, open, "call to '" + name.text + "'", height))
    return nullptr;
  if (consumeIf(TokenKind::KwAs)) {
    if (!parseScope(call->scope, height))
      return nullptr;
    if (at(TokenKind::KwAs)) {
      error(cur().loc, "a call has only one 'as' scope",
            "join the names with '.', e.g. 'as encoder.norm'");
      return nullptr;
    }
  }
  if (!setHeight(height, name.loc))
    return nullptr;
  return call;
}

bool Parser::parseArgs(std::vector<Arg> &args, const Token &open,
                       const std::string &what, unsigned &height) {
  if (consumeIf(TokenKind::RParen))
    return true;
  std::optional<size_t> firstKeyword;
  std::map<std::string, size_t> keywords; // first index of each keyword
  while (true) {
    Arg arg;
    arg.loc = cur().loc;
    if (consumeIf(TokenKind::RParen)) // `f(a, b,)`: a trailing ',' as in Python
      return true;
    if (atAssignment()) {
      if (!at(TokenKind::Identifier))
        softError(cur().loc,
                  "'" + cur().text +
                      "' is a keyword and cannot be an argument name",
                  cur().text == "dim"
                      ? "the axis argument is 'axis' here (PyTorch's dim): "
                        "write 'axis = ...'"
                      : "");
      arg.keyword = take().text;
      take();
    }
    arg.value = parseExpr();
    if (!arg.value)
      return false;
    height = std::max(height, lastHeight + 1);
    // Check the argument only once it is known to be complete: in
    // `f(a = 1, b c = 2)` the problem is the missing ',', not `b`.
    bool complete = at(TokenKind::Comma) || at(TokenKind::RParen);
    if (complete && !arg.keyword.empty()) {
      if (auto first = keywords.find(arg.keyword); first != keywords.end()) {
        softError(arg.loc, "argument '" + arg.keyword + "' is given twice");
        note(args[first->second].loc,
             "'" + arg.keyword + "' is first given here");
      }
      if (!firstKeyword)
        firstKeyword = args.size();
    } else if (complete && firstKeyword) {
      softError(arg.loc,
                "positional argument after keyword argument '" +
                    args[*firstKeyword].keyword + "'",
                "pass positional arguments first");
    }
    if (!arg.keyword.empty())
      keywords.emplace(arg.keyword, args.size());
    args.push_back(std::move(arg));
    if (consumeIf(TokenKind::Comma))
      continue;
    if (consumeIf(TokenKind::RParen))
      return true;
    if (startsOperand(cur()) && cur().loc.line == prev().loc.line)
      errorExpected("expected ',' between the arguments of " + what);
    else
      errorExpected("expected ')' to close " + what + " opened at " +
                    locString(open.loc));
    return false;
  }
}

bool Parser::parseScope(std::vector<ScopePart> &scope, unsigned &height) {
  while (true) {
    ScopePart part;
    const char *hint = "e.g. 'linear(x, 512) as W_q' or 'as layers[i]'";
    // A later line that starts with `for`, `return` or an assignment is the
    // next statement, not the name (`for` was "a keyword and cannot be a
    // scope name").
    if (atLineStartAssignment() ||
        (cur().loc.line != prev().loc.line &&
         (cur().is(TokenKind::KwFor) || cur().is(TokenKind::KwReturn)))) {
      errorExpected("expected a scope name after '" + prev().text + "'", hint);
      return false;
    }
    // A keyword on the line of `as` or `.` is a name part: Hugging Face's
    // `model.layers[i].self_attn` (its state_dict names every Llama, Mistral
    // and Gemma weight `model.layers.N...`) could not be written.
    if (isKeyword(cur().kind) && cur().loc.line == prev().loc.line) {
      part.name = cur().text;
      part.loc = cur().loc;
      take();
    } else if (!takeName("a scope name",
                         scope.empty() ? "after 'as'" : "after '.'", hint,
                         part.name, part.loc)) {
      return false;
    }
    if (at(TokenKind::LBracket)) {
      const Token &open = take();
      if (at(TokenKind::RBracket)) {
        errorExpected("expected an index in '" + part.name + "[...]'",
                      "e.g. 'as layers[i]'");
        return false;
      }
      // `as head[..., :4]`: a slice of the call's result, which the scope's
      // index cannot be (it said only "expected an expression, found
      // '...'").
      const char *sliceHint =
          "a scope's index is one number ('as layers[i]'); to slice the "
          "result, put the call in parentheses: '(linear(x, 8) as "
          "proj)[..., :4]'";
      if (at(TokenKind::Ellipsis) || at(TokenKind::Colon)) {
        error(cur().loc,
              "expected a scope index in '" + part.name + "[...]', found " +
                  describe(cur()),
              sliceHint);
        return false;
      }
      part.index = parseExpr();
      if (!part.index)
        return false;
      height = std::max(height, lastHeight + 1);
      if (at(TokenKind::Comma) || at(TokenKind::Colon)) {
        error(cur().loc,
              "a scope index is one expression, found " + describe(cur()) +
                  " in '" + part.name + "[...]'",
              sliceHint);
        return false;
      }
      if (!consumeIf(TokenKind::RBracket)) {
        errorExpected("expected ']' to close the index of '" + part.name +
                      "' opened at " + locString(open.loc));
        return false;
      }
    }
    scope.push_back(std::move(part));
    if (!consumeIf(TokenKind::Dot))
      return true;
  }
}

ExprPtr Parser::parseWholeExpression() {
  ExprPtr e = parseExpr();
  if (e && !at(TokenKind::Eof)) {
    error(cur().loc, "unexpected " + describe(cur()) + " after the expression",
          startsOperand(cur()) ? "missing an operator?" : "");
    return nullptr;
  }
  return e;
}

} // namespace

std::unique_ptr<Module> parseSpec(const SourceFile &file,
                                  DiagnosticEngine &diags) {
  return Parser(file, diags).parseModule();
}

ExprPtr parseExpression(const SourceFile &file, DiagnosticEngine &diags) {
  unsigned errorsBefore = diags.getNumErrorReports(); // lexical errors count too
  ExprPtr e = Parser(file, diags).parseWholeExpression();
  if (diags.getNumErrorReports() != errorsBefore)
    return nullptr;
  return e;
}

} // namespace txc
