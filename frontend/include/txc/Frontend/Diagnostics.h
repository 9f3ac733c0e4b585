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
// run (it never stops at the first) and prints them to a stream. An error or
// warning identical to an earlier one (same place, message and hint: a `def`
// inlined by several entries reports the same problem once per call) is kept
// once, with the notes that follow it. Output stays proportionate to the
// problem: the first kMaxErrors errors are kept (the rest are counted), and a
// long source line is shown as a window around the caret.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_FRONTEND_DIAGNOSTICS_H
#define TXC_FRONTEND_DIAGNOSTICS_H

#include "txc/Frontend/AST.h"

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
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
  /// The same, without copying it.
  std::string_view getLineView(uint32_t line) const;

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

/// Errors kept (and printed) per run; later ones are only counted.
constexpr unsigned kMaxErrors = 100;
/// Source lines longer than this are shown as a window around the caret.
constexpr size_t kMaxShownLine = 160;
/// Calls of nested defs named under one error (the innermost ones).
constexpr size_t kMaxCallSiteNotes = 4;

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceFile &file) : file(file) {}

  void error(SourceLoc loc, std::string message, std::string hint = "");
  void warning(SourceLoc loc, std::string message, std::string hint = "");
  void note(SourceLoc loc, std::string message);

  /// While a `def` is inlined at the call `loc`: an error or warning
  /// reported inside gets a note naming the call (innermost first, at most
  /// kMaxCallSiteNotes), since a def called three times has three callers
  /// and its body's line alone does not say which one was wrong.
  void pushCallSite(SourceLoc loc, std::string what);
  void popCallSite();

  /// Distinct errors (`print` shows the first kMaxErrors of them).
  unsigned getNumErrors() const { return numErrors; }
  bool hasErrors() const { return numErrors != 0; }
  /// True once kMaxErrors errors are kept: later ones are not shown, so
  /// callers may skip costly hints ("did you mean") for them.
  bool isFull() const { return numErrors >= kMaxErrors; }
  /// Every call to `error`, duplicates included: compare the count before
  /// and after a piece of work to learn whether that work failed.
  unsigned getNumErrorReports() const { return numErrorReports; }
  const std::vector<Diagnostic> &getDiagnostics() const { return diags; }
  const SourceFile &getFile() const { return file; }

  /// After each error from index `first` on whose source line names a
  /// config value that a -D flag set (`flags`: name -> "-D name=value"), a
  /// note saying so, unless one is there: the line shows the spec's own
  /// value, not the one the error is about (`heads = 2` written, `-D
  /// heads=3` given). `derived` (may be null): config values computed from
  /// such flags (name -> the flags), noted as computed from them.
  void noteFlagsOnErrorLines(
      const std::map<std::string, std::string> &flags, size_t first = 0,
      const std::map<std::string, std::vector<std::string>> *derived = nullptr);

  /// Prints every diagnostic kept from index `first` on (those before it
  /// were printed already), in the order reported, in the format above, then
  /// how many errors past kMaxErrors were left out.
  void print(std::ostream &os, size_t first = 0) const;
  /// Formats one diagnostic (with its source line and caret).
  std::string format(const Diagnostic &diag) const;

private:
  /// Records `diag` unless an identical error or warning came before; a note
  /// is dropped when the diagnostic it belongs to was.
  bool add(Diagnostic diag);

  const SourceFile &file;
  std::vector<Diagnostic> diags;
  unsigned numErrors = 0;
  unsigned numErrorReports = 0;
  /// A 64-bit hash of (severity, line, column, message, hint) of each
  /// error and warning kept (the first kMaxErrors errors): the whole keys
  /// of every one of the millions of errors a 16 MiB file of bad lines
  /// makes took 2 GB.
  std::unordered_set<uint64_t> seen;
  bool droppingNotes = false;
  /// pushCallSite's stack: where each def being inlined was called.
  std::vector<Diagnostic> callSites;
  /// Adds the notes of `callSites` after a kept error or warning.
  void noteCallSites();
};

/// The closest of `candidates` to `name` by edit distance, or "" when none is
/// close enough to suggest.
std::string closestMatch(const std::string &name,
                         const std::vector<std::string> &candidates);

} // namespace txc

#endif // TXC_FRONTEND_DIAGNOSTICS_H
