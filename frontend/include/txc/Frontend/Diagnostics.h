//===- Diagnostics.h - spec-language diagnostics -----------------*- C++ -*-===//
//
// Errors in a spec are reported as
//
//   file.tx:12:7: error: unknown name 'd_modl'
//     x = linear(x, d_modl) as W_q
//                   ^
//   hint: did you mean 'd_model'?
//
// A `SourceFile` owns the text; a `DiagnosticEngine` collects every error of a
// run (it never stops at the first) and prints them to a stream.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_DIAGNOSTICS_H
#define TXC_FRONTEND_DIAGNOSTICS_H

#include "txc/Frontend/AST.h"

#include <ostream>
#include <string>
#include <vector>

namespace txc {

/// The text of one spec file and its name as given on the command line.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);
  const std::string &getName() const { return name; }
  const std::string &getText() const { return text; }
  /// The text of 1-based line `line`, without its newline ("" past the end).
  std::string getLine(uint32_t line) const;

private:
  std::string name;
  std::string text;
  std::vector<size_t> lineStarts;
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  SourceLoc loc;
  std::string message;
  std::string hint; // empty when none
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceFile &file) : file(file) {}

  void error(SourceLoc loc, std::string message, std::string hint = "");
  void warning(SourceLoc loc, std::string message, std::string hint = "");
  void note(SourceLoc loc, std::string message);

  unsigned getNumErrors() const { return numErrors; }
  bool hasErrors() const { return numErrors != 0; }
  const std::vector<Diagnostic> &getDiagnostics() const { return diags; }
  const SourceFile &getFile() const { return file; }

  /// Prints every diagnostic in the order reported, in the format above.
  void print(std::ostream &os) const;
  /// Formats one diagnostic (with its source line and caret).
  std::string format(const Diagnostic &diag) const;

private:
  const SourceFile &file;
  std::vector<Diagnostic> diags;
  unsigned numErrors = 0;
};

/// The closest of `candidates` to `name` by edit distance, or "" when none is
/// close enough to suggest.
std::string closestMatch(const std::string &name,
                         const std::vector<std::string> &candidates);

} // namespace txc

#endif // TXC_FRONTEND_DIAGNOSTICS_H
