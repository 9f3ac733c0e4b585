//===- Lexer.h - tokens of the txc spec language ----------------*- C++ -*-===//
//
// The lexer turns a `SourceFile` into tokens. The language is free-form:
// newlines are whitespace and `#` starts a comment that runs to the end of the
// line. Columns are 1-based byte offsets within the line (a tab counts as one
// column).
//
// Lexical errors (a character that belongs to no token, a malformed number,
// a string literal) are reported through the `DiagnosticEngine` and the lexer
// keeps going, so one run reports every error of a file:
//   - a malformed number still yields a `Number` token (with the value of its
//     longest valid prefix), so the parser sees a well-formed expression;
//   - digits running into letters (`2x`, `7label`) yield an `Identifier`, as
//     the writer most likely meant a name;
//   - stray characters yield one `Error` token per run of them; the parser
//     treats it as an error that has already been reported.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_LEXER_H
#define TXC_FRONTEND_LEXER_H

#include "txc/Frontend/AST.h"
#include "txc/Frontend/Diagnostics.h"

#include <string>
#include <vector>

namespace txc {

enum class TokenKind {
  Eof,
  Error, // stray characters; already diagnosed by the lexer
  Identifier,
  Number,
  // Keywords.
  KwModel,
  KwConfig,
  KwDim,
  KwDef,
  KwEntry,
  KwOptimizer,
  KwFor,
  KwIn,
  KwReturn,
  KwAs,
  KwTrue,
  KwFalse,
  // Punctuation.
  LParen,   // (
  RParen,   // )
  LBracket, // [
  RBracket, // ]
  LBrace,   // {
  RBrace,   // }
  Comma,    // ,
  Colon,    // :
  Dot,      // .
  DotDot,   // ..
  Ellipsis, // ...
  Equal,    // =
  Arrow,    // ->
  At,       // @ (an entry parameter's role: `ids: i32[B, T] @tokens`)
  // Operators.
  Plus,         // +
  Minus,        // -
  Star,         // *
  Slash,        // /
  SlashSlash,   // //
  Percent,      // %
  StarStar,     // **
  EqualEqual,   // ==
  BangEqual,    // !=
  Less,         // <
  LessEqual,    // <=
  Greater,      // >
  GreaterEqual, // >=
  Amp,          // &
  Pipe,         // |
  Bang,         // !
};

/// How a token kind is written: "(" for `LParen`, "model" for `KwModel`,
/// "identifier", "number", "end of file" for the kinds without one spelling.
const char *spelling(TokenKind kind);

/// True for `model`, `config`, ..., `false`.
bool isKeyword(TokenKind kind);

/// True for the keywords that start a top-level declaration: `model`,
/// `config`, `dim`, `def`, `entry`, `optimizer`.
bool isDeclKeyword(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  SourceLoc loc;
  std::string text;        // exactly as written ("" for Eof)
  double number = 0;       // Number: its value
  bool isInteger = false;  // Number: written without '.' and exponent
  bool startsLine = false; // the first token on its line
  bool malformed = false;  // the lexer reported an error about this token

  bool is(TokenKind k) const { return kind == k; }
  /// The column just past the token (tokens never span lines).
  SourceLoc endLoc() const {
    return {loc.line, loc.col + static_cast<uint32_t>(text.size())};
  }
};

/// A short description for messages: "identifier 'x'", "number '3'",
/// "keyword 'in'", "'('", "end of file".
std::string describe(const Token &token);

class Lexer {
public:
  Lexer(const SourceFile &file, DiagnosticEngine &diags);

  /// The next token; `Eof` (again and again) at the end of the text.
  Token next();

private:
  char peekChar(size_t ahead = 0) const;
  void advance(size_t count = 1);
  void skipWhitespaceAndComments();
  Token makeToken(TokenKind kind, size_t begin, SourceLoc loc);
  Token lexNumber(size_t begin, SourceLoc loc);
  Token lexIdentifierOrKeyword(size_t begin, SourceLoc loc);
  Token lexStray(size_t begin, SourceLoc loc);

  const std::string &text;
  DiagnosticEngine &diags;
  size_t pos = 0;
  uint32_t line = 1;
  uint32_t col = 1;
  bool sawNewline = true;
};

/// Lexes the whole file; the result always ends with one `Eof` token.
std::vector<Token> tokenize(const SourceFile &file, DiagnosticEngine &diags);

} // namespace txc

#endif // TXC_FRONTEND_LEXER_H
