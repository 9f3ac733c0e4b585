//===- Parser.h - parser of the txc spec language ---------------*- C++ -*-===//
//
// A recursive-descent parser from tokens to `ast::Module`. The grammar and
// the error-recovery rules are documented in docs/spec-language.md.
//
// The parser never stops at the first error: it reports the problem, skips to
// the next statement or declaration and goes on, so one run reports every
// error of a file, one diagnostic per problem. It never crashes or recurses
// without bound: nesting deeper than `kMaxNesting` is an error.
//
// Besides syntax, the parser checks what can be checked locally: duplicate
// parameter and result names, a second `model` or `optimizer` declaration,
// two `def`s (or two `entry`s) of the same name, keyword arguments given twice
// or before positional ones, element types other than f32/i32/bool and empty
// shapes. Semantic checks (names, shapes, builtins) are MLIRGen's.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_PARSER_H
#define TXC_FRONTEND_PARSER_H

#include "txc/Frontend/AST.h"
#include "txc/Frontend/Diagnostics.h"

#include <memory>

namespace txc {

/// The deepest nesting of expressions (or of `for` blocks) the parser accepts.
constexpr unsigned kMaxNesting = 256;

/// Parses a whole spec file. Always returns a module: on errors it holds the
/// declarations that parsed cleanly, and `diags.hasErrors()` is true. A
/// declaration with a broken header is left out; a `def` or `entry` whose
/// body has a broken statement keeps the statements that parsed.
std::unique_ptr<ast::Module> parseSpec(const SourceFile &file,
                                       DiagnosticEngine &diags);

/// Parses `file` as one expression (used for `-D name=value` and tests).
/// Returns null, with errors reported, unless the whole text is one valid
/// expression.
ast::ExprPtr parseExpression(const SourceFile &file, DiagnosticEngine &diags);

} // namespace txc

#endif // TXC_FRONTEND_PARSER_H
