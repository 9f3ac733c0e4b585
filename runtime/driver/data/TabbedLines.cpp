//===- TabbedLines.cpp - 'left<TAB>right' lines, checked -------------------===//
#include "data/TabbedLines.h"
#include "core/Error.h"
#include "core/Parameters.h"
#include "data/Tokenizer.h"
#include "formats/FileIO.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace txrt::driver {

void ProblemList::add(std::string problem) {
  ++count_;
  if (lines_.size() < kMaxReportedProblems)
    lines_.push_back(std::move(problem));
}

void ProblemList::throwIfAny(const std::string &what) const {
  if (count_ == 0)
    return;
  std::string message;
  for (size_t i = 0; i < lines_.size(); ++i)
    message += (i ? "\n" : "") + lines_[i];
  if (count_ > lines_.size())
    message += "\n... and " + std::to_string(count_ - lines_.size()) +
               " more " + what;
  for (const std::string &note : notes_)
    message += "\nnote: " + note;
  throw InputError(message);
}

void ProblemList::note(const std::string &text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end())
    notes_.push_back(text);
}

std::string fileLine(const std::string &path, int64_t line) {
  return path + ":" + std::to_string(line) + ": ";
}

namespace {

/// Checks lines (their '\n' removed) in order and visits the good ones.
/// Blank lines at the end of the file (an editor's or a script's trailing
/// newlines) are no data and are skipped; a blank line before more data, or
/// one holding a tab anywhere, is an error, reported when data or the end
/// comes.
class LineChecker {
public:
  LineChecker(const std::string &path, TabbedColumns columns,
              ProblemList &problems, const TabbedLineVisitor &visit)
      : path_(path), columns_(columns), problems_(problems), visit_(visit),
        expected_(std::string("(expected '") + columns.left + "<TAB>" +
                  columns.right + "')") {}

  void line(std::string_view line, int64_t number) {
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    // A UTF-8 byte order mark (Windows editors write one) is no text.
    if (number == 1 && line.substr(0, 3) == kUtf8ByteOrderMark)
      line.remove_prefix(3);
    // Words become JSON strings in the tokenizer: they must be UTF-8.
    if (std::string problem = textProblem(line, number == 1);
        !problem.empty()) {
      reportBlanks();
      problems_.add(fileLine(path_, number) + problem +
                    " (the data must be UTF-8 text)");
      return;
    }
    if (line.find_first_not_of(" \t\v\f") == std::string_view::npos) {
      blanks_.push_back(
          {number, line.find('\t') != std::string_view::npos, line.empty()});
      return;
    }
    reportBlanks();
    size_t tab = line.find('\t');
    ++(tab == std::string_view::npos ? untabbed_ : tabbed_);
    if (tab == std::string_view::npos) {
      problems_.add(fileLine(path_, number) + "no tab between " +
                    columns_.left + " and " + columns_.right + " " + expected_ +
                    carriageReturns(line));
      return;
    }
    if (line.find('\t', tab + 1) != std::string_view::npos) {
      problems_.add(fileLine(path_, number) + "more than one tab " + expected_ +
                    carriageReturns(line));
      return;
    }
    visit_(TabbedLine{number, line.substr(0, tab), line.substr(tab + 1)});
  }

  /// At the end of the file: blank lines there are no data, but one that
  /// holds a tab is a pair with both sides blank, an error as anywhere
  /// else (it was dropped without a word at the end only).
  void finish() {
    for (auto [number, tab, empty] : blanks_)
      if (tab)
        problems_.add(fileLine(path_, number) + "both sides are blank " +
                      expected_);
    blanks_.clear();
    // No line with a tab: one side of a corpus kept as two files (fairseq's
    // and Marian's train.en / train.es), or another format altogether.
    if (untabbed_ > 0 && tabbed_ == 0)
      problems_.note(
          std::string("no line of '") + path_ + "' holds a tab: the data is " +
          "one file of '" + columns_.left + "<TAB>" + columns_.right +
          "' lines; one kept as two files (one " + columns_.left +
          " a line, one " + columns_.right +
          " a line) becomes one with `paste FILE_OF_" + upper(columns_.left) +
          "S FILE_OF_" + upper(columns_.right) + "S > NEW_FILE.tsv`");
  }

private:
  static std::string upper(std::string text) {
    for (char &c : text)
      c = char(std::toupper(static_cast<unsigned char>(c)));
    return text;
  }

  /// A hint for a line with carriage returns inside: a file with old Mac
  /// line ends (CR alone) reads as one line, and its tabs as one too many.
  static std::string carriageReturns(std::string_view line) {
    size_t count = size_t(std::count(line.begin(), line.end(), '\r'));
    if (count == 0)
      return "";
    return "; the line holds " + std::to_string(count) +
           " carriage return(s) ('\\r'): a file with CR line ends (old Mac "
           "style) reads as one line; convert them to LF (tr '\\r' '\\n')";
  }

  /// The blank lines seen since the last line with text: data follows, so
  /// each is an error.
  void reportBlanks() {
    // A blank line with its tab ("   \t   ") is not empty: its sides are.
    // One of spaces is no "empty line" to the eye.
    for (auto [number, tab, empty] : blanks_)
      problems_.add(fileLine(path_, number) +
                    (tab     ? std::string("both sides are blank ")
                     : empty ? std::string("empty line ")
                             : std::string("a line of only blanks ")) +
                    expected_);
    blanks_.clear();
  }

  const std::string &path_;
  TabbedColumns columns_;
  ProblemList &problems_;
  const TabbedLineVisitor &visit_;
  std::string expected_;
  struct Blank {
    int64_t number;
    bool tab, empty; ///< holds a tab; has no character at all
  };
  std::vector<Blank> blanks_;
  int64_t tabbed_ = 0, untabbed_ = 0; ///< lines with text, with / without a tab
};

uint64_t continueFnv1a64(uint64_t hash, std::string_view bytes) {
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
  return hash;
}

} // namespace

void forEachTabbedLine(std::string_view content, const std::string &path,
                       TabbedColumns columns, ProblemList &problems,
                       const TabbedLineVisitor &visit) {
  LineChecker checker(path, columns, problems, visit);
  int64_t number = 0;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string_view::npos)
      end = content.size();
    checker.line(content.substr(start, end - start), ++number);
    start = end + 1;
  }
  checker.finish();
}

uint64_t forEachTabbedLineInFile(const std::string &path,
                                 TabbedColumns columns, ProblemList &problems,
                                 const TabbedLineVisitor &visit) {
  constexpr size_t kBlock = size_t(1) << 20;
  BinaryFile file(path);
  LineChecker checker(path, columns, problems, visit);
  uint64_t hash = 0xCBF29CE484222325ull; // fnv1a64's offset basis
  std::string buffer;                    // the unfinished line, then a block
  int64_t number = 0;
  for (uint64_t offset = 0; offset < file.size();) {
    size_t bytes = size_t(std::min<uint64_t>(kBlock, file.size() - offset));
    size_t kept = buffer.size();
    buffer.resize(kept + bytes);
    file.readAt(offset, buffer.data() + kept, bytes);
    offset += bytes;
    hash = continueFnv1a64(hash, std::string_view(buffer).substr(kept));
    std::string_view text(buffer);
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string_view::npos;
         start = end + 1)
      checker.line(text.substr(start, end - start), ++number);
    buffer.erase(0, start);
  }
  if (!buffer.empty())
    checker.line(buffer, ++number);
  checker.finish();
  return hash;
}

} // namespace txrt::driver
