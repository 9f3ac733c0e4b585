//===- TabbedLines.h - 'left<TAB>right' lines, checked, from text or a file -*- C++ -*-===//
//
// The line reading parallel text ('source<TAB>target', ParallelText.h) and
// labeled text ('label<TAB>text', LabeledText.h) share: lines end at '\n'
// (a trailing '\r' is dropped), and a line is bad when it is not UTF-8,
// blank with more data after it, has no tab or more than one (blank lines
// at the end of the file are skipped). Bad lines become problems naming
// FILE:LINE; the good ones go to the caller with their 1-based number.
// forEachTabbedLineInFile reads the file in blocks, so a corpus of any
// size passes through a fixed buffer; it returns the FNV-1a hash of the
// bytes (the same as fnv1a64 of the whole file).
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TABBEDLINES_H
#define TXRT_DRIVER_TABBEDLINES_H

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace txrt::driver {

/// Collects problems (at most kMaxReportedProblems are kept) and throws
/// them as one InputError.
class ProblemList {
public:
  void add(std::string problem);
  size_t count() const { return count_; }
  /// Throws when there were problems: the kept ones, one per line, and
  /// "... and N more `what`".
  void throwIfAny(const std::string &what) const;
  /// A line said after the problems, if there are any (once each).
  void note(const std::string &text);

private:
  std::vector<std::string> lines_;
  std::vector<std::string> notes_;
  size_t count_ = 0;
};

/// "FILE:LINE: ".
std::string fileLine(const std::string &path, int64_t line);

/// The names of the two columns, for the messages ("source", "target").
struct TabbedColumns {
  const char *left, *right;
};

/// One good line: its number and its two sides (views into the caller's
/// buffer, valid during the callback only).
struct TabbedLine {
  int64_t number = 0;
  std::string_view left, right;
};

using TabbedLineVisitor = std::function<void(const TabbedLine &)>;

/// Checks each line of `content` (see the file comment) and visits the
/// good ones; bad ones go to `problems` as "PATH:LINE: ...".
void forEachTabbedLine(std::string_view content, const std::string &path,
                       TabbedColumns columns, ProblemList &problems,
                       const TabbedLineVisitor &visit);

/// The same over the file `path`, read in blocks; returns the FNV-1a hash
/// of its bytes. InputError when it cannot be read.
uint64_t forEachTabbedLineInFile(const std::string &path,
                                 TabbedColumns columns, ProblemList &problems,
                                 const TabbedLineVisitor &visit);

} // namespace txrt::driver

#endif // TXRT_DRIVER_TABBEDLINES_H
