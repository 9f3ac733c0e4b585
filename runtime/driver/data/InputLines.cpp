//===- InputLines.cpp - the texts of translate, generate and predict ------===//
#include "data/InputLines.h"
#include "core/Error.h"
#include "data/TabbedLines.h"
#include "data/Tokenizer.h"

#include <cerrno>
#include <cstring>
#include <iostream>

#include <sys/stat.h>
#include <unistd.h>

namespace txrt::driver {

namespace {

/// Stdin redirected from a directory reads as empty (read fails with
/// EISDIR, which the stream takes for the end): say so instead.
void checkStdinReadable(std::istream &in) {
  if (&in != &std::cin)
    return;
  struct stat status;
  if (fstat(STDIN_FILENO, &status) == 0 && S_ISDIR(status.st_mode))
    throw InputError("cannot read <stdin>: it is a directory (give the texts "
                     "one a line, or as arguments)");
}

} // namespace

InputLines readInputLines(const std::vector<std::string> &arguments,
                          const std::string &label, std::istream &in) {
  InputLines input;
  if (!arguments.empty()) {
    input.lines = arguments;
    for (size_t i = 0; i < arguments.size(); ++i)
      input.where.push_back(label + " " + std::to_string(i + 1));
  } else {
    checkStdinReadable(in);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      // A UTF-8 byte order mark (Windows editors write one) is no text.
      if (input.lines.empty() &&
          line.compare(0, kUtf8ByteOrderMark.size(), kUtf8ByteOrderMark) == 0)
        line.erase(0, kUtf8ByteOrderMark.size());
      input.lines.push_back(std::move(line));
      input.where.push_back("<stdin>:" + std::to_string(input.lines.size()));
    }
    if (in.bad())
      throw InputError(std::string("cannot read <stdin>: ") +
                       std::strerror(errno));
  }
  // Every bad line, as train and eval list theirs.
  ProblemList problems;
  for (size_t i = 0; i < input.lines.size(); ++i)
    if (std::string problem =
            textProblem(input.lines[i], arguments.empty() && i == 0,
                        arguments.empty() ? "line" : "text");
        !problem.empty())
      problems.add(input.where[i] + ": " + problem + " (texts must be UTF-8)");
  problems.throwIfAny(label + "s that are not UTF-8 text");
  return input;
}

} // namespace txrt::driver
