//===- Lexer.cpp - tokens of the txc spec language ------------------------===//
//
// A hand-written lexer over the bytes of a `SourceFile`. It never stops at an
// error: malformed numbers become `Number` tokens, stray characters become
// one `Error` token per run, and each problem is reported exactly once.
//
//===----------------------------------------------------------------------===//

#include "txc/Frontend/Lexer.h"

#include <charconv>
#include <cstdio>
#include <system_error>

namespace txc {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
bool isWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

/// Characters that can begin a token (or a comment, or whitespace). Anything
/// else is a stray character.
bool canStartToken(char c) {
  if (isIdentChar(c) || isWhitespace(c))
    return true;
  switch (c) {
  case '(':
  case ')':
  case '[':
  case ']':
  case '{':
  case '}':
  case ',':
  case ':':
  case '@':
  case '.':
  case '=':
  case '-':
  case '+':
  case '*':
  case '/':
  case '%':
  case '<':
  case '>':
  case '!':
  case '&':
  case '|':
  case '#':
  case '"':
  case '\'':
    return true;
  default:
    return false;
  }
}

struct Keyword {
  const char *text;
  TokenKind kind;
};
const Keyword keywords[] = {
    {"model", TokenKind::KwModel},   {"config", TokenKind::KwConfig},
    {"dim", TokenKind::KwDim},       {"def", TokenKind::KwDef},
    {"entry", TokenKind::KwEntry},   {"optimizer", TokenKind::KwOptimizer},
    {"for", TokenKind::KwFor},       {"in", TokenKind::KwIn},
    {"return", TokenKind::KwReturn}, {"as", TokenKind::KwAs},
    {"true", TokenKind::KwTrue},     {"false", TokenKind::KwFalse},
};

/// Integers are stored as doubles in the AST; beyond 2^53 they would not be
/// exact.
constexpr uint64_t kMaxExactInteger = uint64_t(1) << 53;

/// Names the character that starts at `text[pos]` for a message:
/// "unexpected character '$'", "... 0x01", "... 'é' (U+00E9)", or
/// "invalid UTF-8 byte 0xFF".
std::string describeStray(const std::string &text, size_t pos) {
  unsigned char c = static_cast<unsigned char>(text[pos]);
  char buf[48];
  if (c >= 0x20 && c < 0x7f) {
    std::snprintf(buf, sizeof(buf), "unexpected character '%c'", c);
    return buf;
  }
  if (c < 0x80) {
    std::snprintf(buf, sizeof(buf), "unexpected character 0x%02X", c);
    return buf;
  }
  std::snprintf(buf, sizeof(buf), "invalid UTF-8 byte 0x%02X", c);
  std::string invalid = buf;
  // A UTF-8 sequence: decode it so the message can name the code point.
  size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (length == 0 || c >= 0xF8 || pos + length > text.size())
    return invalid;
  uint32_t codePoint = c & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    unsigned char cont = static_cast<unsigned char>(text[pos + i]);
    if ((cont & 0xC0) != 0x80)
      return invalid;
    codePoint = (codePoint << 6) | (cont & 0x3F);
  }
  std::snprintf(buf, sizeof(buf), " (U+%04X)", codePoint);
  return "unexpected character '" + text.substr(pos, length) + "'" + buf;
}

} // namespace

//===----------------------------------------------------------------------===//
// Token helpers
//===----------------------------------------------------------------------===//

const char *spelling(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Error:
    return "invalid character";
  case TokenKind::Identifier:
    return "identifier";
  case TokenKind::Number:
    return "number";
  case TokenKind::KwModel:
    return "model";
  case TokenKind::KwConfig:
    return "config";
  case TokenKind::KwDim:
    return "dim";
  case TokenKind::KwDef:
    return "def";
  case TokenKind::KwEntry:
    return "entry";
  case TokenKind::KwOptimizer:
    return "optimizer";
  case TokenKind::KwFor:
    return "for";
  case TokenKind::KwIn:
    return "in";
  case TokenKind::KwReturn:
    return "return";
  case TokenKind::KwAs:
    return "as";
  case TokenKind::KwTrue:
    return "true";
  case TokenKind::KwFalse:
    return "false";
  case TokenKind::LParen:
    return "(";
  case TokenKind::RParen:
    return ")";
  case TokenKind::LBracket:
    return "[";
  case TokenKind::RBracket:
    return "]";
  case TokenKind::LBrace:
    return "{";
  case TokenKind::RBrace:
    return "}";
  case TokenKind::Comma:
    return ",";
  case TokenKind::Colon:
    return ":";
  case TokenKind::Dot:
    return ".";
  case TokenKind::DotDot:
    return "..";
  case TokenKind::Ellipsis:
    return "...";
  case TokenKind::Equal:
    return "=";
  case TokenKind::Arrow:
    return "->";
  case TokenKind::Plus:
    return "+";
  case TokenKind::Minus:
    return "-";
  case TokenKind::Star:
    return "*";
  case TokenKind::Slash:
    return "/";
  case TokenKind::SlashSlash:
    return "//";
  case TokenKind::Percent:
    return "%";
  case TokenKind::StarStar:
    return "**";
  case TokenKind::EqualEqual:
    return "==";
  case TokenKind::BangEqual:
    return "!=";
  case TokenKind::Less:
    return "<";
  case TokenKind::LessEqual:
    return "<=";
  case TokenKind::Greater:
    return ">";
  case TokenKind::GreaterEqual:
    return ">=";
  case TokenKind::Amp:
    return "&";
  case TokenKind::Pipe:
    return "|";
  case TokenKind::Bang:
    return "!";
  case TokenKind::At:
    return "@";
  }
  return "token";
}

bool isKeyword(TokenKind kind) {
  return kind >= TokenKind::KwModel && kind <= TokenKind::KwFalse;
}

bool isDeclKeyword(TokenKind kind) {
  return kind >= TokenKind::KwModel && kind <= TokenKind::KwOptimizer;
}

std::string describe(const Token &token) {
  switch (token.kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Error:
    return "invalid character";
  case TokenKind::Identifier:
    return "identifier '" + token.text + "'";
  case TokenKind::Number:
    return "number '" + token.text + "'";
  default:
    if (isKeyword(token.kind))
      return "keyword '" + token.text + "'";
    return "'" + token.text + "'";
  }
}

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

Lexer::Lexer(const SourceFile &file, DiagnosticEngine &diags)
    : text(file.getText()), diags(diags) {
  // A UTF-8 byte order mark (Windows editors write one) starts no token:
  // skipped, as Python skips it, with the first line's columns unchanged.
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0)
    pos = 3;
}

char Lexer::peekChar(size_t ahead) const {
  return pos + ahead < text.size() ? text[pos + ahead] : '\0';
}

void Lexer::advance(size_t count) {
  for (size_t i = 0; i < count && pos < text.size(); ++i) {
    if (text[pos] == '\n') {
      ++line;
      col = 1;
      sawNewline = true;
    } else {
      ++col;
    }
    ++pos;
  }
}

void Lexer::skipWhitespaceAndComments() {
  while (pos < text.size()) {
    char c = text[pos];
    if (isWhitespace(c)) {
      advance();
    } else if (c == '#') {
      while (pos < text.size() && text[pos] != '\n')
        advance();
    } else {
      return;
    }
  }
}

Token Lexer::makeToken(TokenKind kind, size_t begin, SourceLoc loc) {
  Token token;
  token.kind = kind;
  token.loc = loc;
  token.text = text.substr(begin, pos - begin);
  return token;
}

Token Lexer::next() {
  skipWhitespaceAndComments();
  bool startsLine = sawNewline;
  sawNewline = false;
  SourceLoc loc{line, col};
  size_t begin = pos;
  Token token;
  if (pos >= text.size()) {
    token = makeToken(TokenKind::Eof, begin, loc);
    token.startsLine = startsLine;
    return token;
  }

  auto op = [&](TokenKind kind, size_t length) {
    advance(length);
    return makeToken(kind, begin, loc);
  };
  char c = text[pos];
  char c1 = peekChar(1);
  if (isIdentStart(c)) {
    token = lexIdentifierOrKeyword(begin, loc);
  } else if (isDigit(c) || (c == '.' && isDigit(c1))) {
    token = lexNumber(begin, loc);
  } else {
    switch (c) {
    case '(':
      token = op(TokenKind::LParen, 1);
      break;
    case ')':
      token = op(TokenKind::RParen, 1);
      break;
    case '[':
      token = op(TokenKind::LBracket, 1);
      break;
    case ']':
      token = op(TokenKind::RBracket, 1);
      break;
    case '{':
      token = op(TokenKind::LBrace, 1);
      break;
    case '}':
      token = op(TokenKind::RBrace, 1);
      break;
    case ',':
      token = op(TokenKind::Comma, 1);
      break;
    case ':':
      token = op(TokenKind::Colon, 1);
      break;
    case '@':
      token = op(TokenKind::At, 1);
      break;
    case '+':
      token = op(TokenKind::Plus, 1);
      break;
    case '%':
      token = op(TokenKind::Percent, 1);
      break;
    case '.':
      token = c1 != '.'            ? op(TokenKind::Dot, 1)
              : peekChar(2) == '.' ? op(TokenKind::Ellipsis, 3)
                                   : op(TokenKind::DotDot, 2);
      break;
    case '=':
      token =
          c1 == '=' ? op(TokenKind::EqualEqual, 2) : op(TokenKind::Equal, 1);
      break;
    case '-':
      token = c1 == '>' ? op(TokenKind::Arrow, 2) : op(TokenKind::Minus, 1);
      break;
    case '*':
      token = c1 == '*' ? op(TokenKind::StarStar, 2) : op(TokenKind::Star, 1);
      break;
    case '/':
      token =
          c1 == '/' ? op(TokenKind::SlashSlash, 2) : op(TokenKind::Slash, 1);
      break;
    case '<':
      token = c1 == '=' ? op(TokenKind::LessEqual, 2) : op(TokenKind::Less, 1);
      break;
    case '>':
      token = c1 == '=' ? op(TokenKind::GreaterEqual, 2)
                        : op(TokenKind::Greater, 1);
      break;
    case '!':
      token = c1 == '=' ? op(TokenKind::BangEqual, 2) : op(TokenKind::Bang, 1);
      break;
    case '&':
    case '|': {
      TokenKind kind = c == '&' ? TokenKind::Amp : TokenKind::Pipe;
      if (c1 == c) {
        // `&&` / `||`: say what to write and go on as if it were written.
        std::string single(1, c);
        diags.error(loc, "'" + single + single + "' is not an operator",
                    "use '" + single + "' (element-wise " +
                        (c == '&' ? "and" : "or") + ")");
        token = op(kind, 2);
        token.malformed = true;
      } else {
        token = op(kind, 1);
      }
      break;
    }
    default:
      token = lexStray(begin, loc);
      break;
    }
  }
  token.startsLine = startsLine;
  return token;
}

Token Lexer::lexIdentifierOrKeyword(size_t begin, SourceLoc loc) {
  while (isIdentChar(peekChar()))
    advance();
  Token token = makeToken(TokenKind::Identifier, begin, loc);
  for (const Keyword &keyword : keywords)
    if (token.text == keyword.text)
      token.kind = keyword.kind;
  return token;
}

Token Lexer::lexNumber(size_t begin, SourceLoc loc) {
  std::string problem, hint;
  std::optional<size_t> afterPoint; // where a point with no digit after it ends
  bool exponentWithoutDigits = false;
  bool isInteger = true;
  auto digits = [&] {
    while (isDigit(peekChar()))
      advance();
  };

  // Mantissa: digits [ '.' digits ], or the malformed forms `.5` and `3.`.
  if (peekChar() == '.') {
    isInteger = false;
    advance();
    digits();
    if (begin > 0 && (isIdentChar(text[begin - 1]) || text[begin - 1] == ']')) {
      // `h.0.ln_1`, a checkpoint's name written as a scope path.
      problem = "a part of a dotted name is a name, not a number";
      hint = "an index is written in brackets: `as layers[0].norm` names "
             "the parameters `info` lists as `layers.0.norm...`";
    } else {
      problem = "expected a digit before the decimal point";
      hint = "write '0" + text.substr(begin, pos - begin) + "'";
    }
  } else {
    digits();
    // Digits running into a name (`2x`, `7label`, but not an exponent like
    // `1e5` or `1e-`): most likely a mangled name, so it lexes as one.
    char next = peekChar(), after = peekChar(1);
    bool exponentAhead =
        (next == 'e' || next == 'E') &&
        (isDigit(after) || after == '+' || after == '-' || !isIdentChar(after));
    if (isIdentStart(next) && !exponentAhead) {
      while (isIdentChar(peekChar()))
        advance();
      Token token = makeToken(TokenKind::Identifier, begin, loc);
      token.malformed = true;
      diags.error(loc,
                  "invalid name '" + token.text +
                      "': a name cannot start with a digit",
                  "put an operator or a space between a number and a name, "
                  "e.g. '2 * x'");
      return token;
    }
    if (peekChar() == '.' && isDigit(peekChar(1))) {
      isInteger = false;
      advance();
      digits();
    } else if (peekChar() == '.' && peekChar(1) != '.') {
      isInteger = false;
      advance();
      problem = "expected a digit after the decimal point";
      afterPoint = pos;
    }
  }
  // Exponent: ('e'|'E') ['+'|'-'] digits.
  if (peekChar() == 'e' || peekChar() == 'E') {
    isInteger = false;
    size_t signLength = (peekChar(1) == '+' || peekChar(1) == '-') ? 1 : 0;
    if (isDigit(peekChar(1 + signLength))) {
      advance(1 + signLength);
      digits();
    } else {
      advance(1 + signLength);
      exponentWithoutDigits = true;
      if (problem.empty()) {
        problem = "the exponent has no digits";
        hint = "write e.g. '1e-9'";
      }
    }
  }
  size_t validEnd = pos;
  // `3.` and `1.e5`: the 0 goes after the point, before any exponent (the
  // hint said '1.0' of 1.e5).
  if (afterPoint)
    hint =
        exponentWithoutDigits
            ? "write e.g. '" + text.substr(begin, *afterPoint - begin) + "0e5'"
            : "write '" + text.substr(begin, *afterPoint - begin) + "0" +
                  text.substr(*afterPoint, validEnd - *afterPoint) + "'";
  // Whatever still sticks to the number belongs to the same malformed token:
  // `3.4.5`, `2x`, `1e5e`.
  if ((peekChar() == '.' && isIdentChar(peekChar(1))) ||
      isIdentChar(peekChar())) {
    if (problem.empty()) {
      if (peekChar() == '.') {
        problem = "a number has at most one decimal point";
      } else {
        problem = "a number cannot run into a letter or '_'";
        hint = "put an operator or a space between them, e.g. '2 * x'";
      }
    }
    while ((peekChar() == '.' && isIdentChar(peekChar(1))) ||
           isIdentChar(peekChar()))
      advance();
  }

  Token token = makeToken(TokenKind::Number, begin, loc);
  token.isInteger = isInteger;
  std::string valid = text.substr(begin, validEnd - begin);
  if (!problem.empty()) {
    token.malformed = true;
    diags.error(loc, "malformed number '" + token.text + "': " + problem, hint);
  }

  if (isInteger) {
    uint64_t value = 0;
    bool tooLarge = false;
    for (char d : valid) {
      value = value * 10 + static_cast<uint64_t>(d - '0');
      if (value > kMaxExactInteger) {
        tooLarge = true;
        break;
      }
    }
    if (tooLarge && problem.empty()) {
      token.malformed = true;
      diags.error(loc,
                  "integer literal '" + token.text +
                      "' is too large; integers are exact only up to 2**53 "
                      "= 9007199254740992",
                  "write a float literal, e.g. '" + token.text + ".0'");
    }
    token.number = tooLarge ? 0.0 : static_cast<double>(value);
    return token;
  }

  // `.5`, `3.` and `1e` parse as far as they are valid.
  std::string numeric = valid;
  if (!numeric.empty() && numeric.front() == '.')
    numeric.insert(numeric.begin(), '0');
  while (!numeric.empty() && !isDigit(numeric.back()))
    numeric.pop_back();
  double value = 0;
  auto result = std::from_chars(numeric.data(), numeric.data() + numeric.size(),
                                value, std::chars_format::general);
  if (result.ec == std::errc::result_out_of_range) {
    bool underflow = numeric.find("e-") != std::string::npos ||
                     numeric.find("E-") != std::string::npos;
    value = 0;
    if (!underflow && problem.empty()) {
      token.malformed = true;
      diags.error(loc, "float literal '" + token.text + "' is out of range",
                  "the largest float is about 1.8e308");
    }
  } else if (result.ec != std::errc()) {
    value = 0;
  }
  token.number = value;
  return token;
}

Token Lexer::lexStray(size_t begin, SourceLoc loc) {
  char c = text[pos];
  if (c == '"' || c == '\'') {
    // Quoted text: swallow it up to the closing quote on this line.
    advance();
    while (pos < text.size() && text[pos] != c && text[pos] != '\n')
      advance();
    bool terminated = pos < text.size() && text[pos] == c;
    if (terminated)
      advance();
    diags.error(loc,
                terminated ? "string literals are not part of the spec "
                             "language"
                           : "unterminated string literal; string literals "
                             "are not part of the spec language",
                "names are written without quotes");
    Token token = makeToken(TokenKind::Error, begin, loc);
    token.malformed = true;
    return token;
  }

  std::string message = describeStray(text, pos);
  std::string hint;
  switch (c) {
  case ';':
    hint = "statements need no ';'";
    break;
  case '^':
    hint = "write powers as 'x ** y'";
    break;
  case '~':
    hint = "write logical not as '!'";
    break;
  case '\\':
    hint = "a statement may span lines without '\\'";
    break;
  default:
    break;
  }
  // One diagnostic for a whole run of stray characters.
  size_t count = 0;
  while (pos < text.size() && !canStartToken(text[pos])) {
    ++count;
    advance();
  }
  if (count > 1 && static_cast<unsigned char>(c) < 0x80)
    message += " (and " + std::to_string(count - 1) + " more after it)";
  else if (static_cast<unsigned char>(c) >= 0x80)
    hint = "only ASCII characters are allowed outside comments";
  diags.error(loc, message, hint);
  Token token = makeToken(TokenKind::Error, begin, loc);
  token.malformed = true;
  return token;
}

std::vector<Token> tokenize(const SourceFile &file, DiagnosticEngine &diags) {
  Lexer lexer(file, diags);
  std::vector<Token> tokens;
  do {
    tokens.push_back(lexer.next());
  } while (!tokens.back().is(TokenKind::Eof));
  return tokens;
}

} // namespace txc
